"""`tribunal validate` in the terminal (`jobs.display.validation`): the summary tables, then every
problem as one `file: reason` line, whatever the console's width."""

from __future__ import annotations

import shutil
from pathlib import Path

from rich.console import Console

from evalcore.benchmark.validate import validate
from jobs.display.validation import render
from tests.jobs.conftest import SAMPLE


def test_render_prints_tables_and_every_problem_as_file_colon_reason(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE / "tasks", bench / "tasks")
    task_file = bench / "tasks" / "employment" / "termination-risk" / "task.json"
    task_file.write_text("{")
    console = Console(record=True, width=60)
    render(validate(str(bench)), console)
    out = console.export_text()
    assert "Tasks by area" in out and "Documents by type" in out
    assert f"{task_file}: invalid JSON at line 1, column 2" in out  # one line despite the narrow console
    assert "1 problem(s)" in out
