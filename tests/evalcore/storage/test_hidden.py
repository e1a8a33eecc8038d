"""The hidden-file rule (`fs.is_hidden`): which names every listing of a run or input folder skips."""

from __future__ import annotations

import pytest

from evalcore.storage import fs


@pytest.mark.parametrize("name", [".part-0001.parquet.1a2b.tmp", "_SUCCESS", "_metadata", ".DS_Store"])
def test_dot_and_underscore_names_in_a_run_folder_are_not_data(name: str) -> None:
    assert fs.is_hidden(name, "run")


def test_an_ordinary_shard_or_journal_entry_is_data() -> None:
    assert not fs.is_hidden("part-000001-ab12.parquet", "run")
    assert not fs.is_hidden("0001712345678901-openai-1.json", "run")


@pytest.mark.parametrize("rel", [".git/config", "acme/.DS_Store", "acme/employment/task-01/~$memo.docx", ".hidden/t/memo.md"])
def test_dot_names_and_office_lock_files_anywhere_in_an_input_path_are_ignored(rel: str) -> None:
    assert fs.is_hidden(rel, "input")


def test_an_underscore_is_a_legal_name_in_an_input_folder_but_not_in_a_run_folder() -> None:
    assert not fs.is_hidden("acme/employment/task-01/_appendix.md", "input")
    assert fs.is_hidden("_appendix.md", "run")
    assert not fs.is_hidden("~$lock.docx", "run")
