"""The command-line bad-input cases (``cli_cases.py``): exit code, exact message, nothing left behind."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobs.cli.app import app
from tests.badinputs.cli_cases import CLI_CASES, REPO, CliCase, dead_endpoint


@pytest.fixture(autouse=True)
def _restore_the_s3_endpoint_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """`sweep --endpoint-url` sets AWS_ENDPOINT_URL_S3 for the whole process (so Ray workers inherit
    it); in-process CLI runs must not leave it to the tests that follow."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "restored-after-the-test")
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3")


@pytest.mark.parametrize("case", CLI_CASES, ids=[c.id for c in CLI_CASES])
def test_a_bad_command_input_gives_its_exit_code_and_file_reason_and_leaves_nothing(
    case: CliCase, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    endpoint, sock = dead_endpoint()
    case.breaks(tmp_path)
    kept = {name: (tmp_path / name).read_bytes() for name in case.keeps}
    env = {k: v.format(root=tmp_path) if v is not None else None for k, v in case.env.items()}
    try:
        with caplog.at_level(logging.WARNING):
            result = CliRunner().invoke(app, case.args(tmp_path, endpoint), env={"COLUMNS": "250", **env})
    finally:
        case.cleanup(tmp_path)
        sock.close()
    # what the user's stderr shows of the log: the CLI configures no logging, so Python prints
    # each WARNING record as its message (pytest's handlers take them here instead)
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    text = " ".join("\n".join([result.output, *logged]).split())
    assert result.exit_code == case.exit_code, text[-3000:]
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    for fragment in case.output:
        assert " ".join(fragment.format(root=tmp_path, endpoint=endpoint).split()) in text, text[-3000:]
    for fragment in case.once:
        assert text.count(" ".join(fragment.format(root=tmp_path, endpoint=endpoint).split())) == 1, text[-3000:]
    for fragment in case.absent:
        assert fragment not in text
    if case.leaves_nothing:
        assert not list(tmp_path.glob(case.leaves_nothing))
    assert {name: (tmp_path / name).read_bytes() for name in case.keeps} == kept


def test_every_cli_case_is_listed_in_docs_reliability_md() -> None:
    listed = (REPO / "docs" / "RELIABILITY.md").read_text(encoding="utf-8")
    assert [c.id for c in CLI_CASES if f"`{c.id}`" not in listed] == []


def test_with_the_loader_cases_the_corpus_has_at_least_40_cases_covering_the_command_line_items() -> None:
    from tests.badinputs.build import CASES

    ids = [c.id for c in CASES] + [c.id for c in CLI_CASES]
    assert len(ids) >= 40 and len(set(ids)) == len(ids)
    assert {c.item for c in CLI_CASES} >= {"8", "9", "15", "24"}
