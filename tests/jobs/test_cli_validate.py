"""`tribunal validate` exits 0 when clean, 1 naming every problem as `file: reason`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobs.cli import app
from tests.conftest import upload_tree
from tests.evalcore.test_validate import _results, clean_bench
from tests.jobs.conftest import SAMPLE

runner = CliRunner()
__all__ = ["clean_bench"]  # the fixture, shared with the library's tests


def test_cli_validate_exits_0_on_a_clean_benchmark(clean_bench):
    result = runner.invoke(app, ["validate", str(clean_bench)])
    assert result.exit_code == 0, result.output
    assert "No problems found." in result.output


def test_cli_validate_exits_1_naming_each_problem_of_a_corrupted_copy(clean_bench, bench, docs, tmp_path):
    tasks = clean_bench / "tasks"
    (tasks / "real-estate/psa/scenario-01/task.json").write_text('{"title": "x",')
    for doc in (tasks / "real-estate/psa/scenario-02/documents").iterdir():
        doc.unlink()
    (tasks / "real-estate/psa/scenario-02/documents").rmdir()
    dup = bench.task_json()
    dup["criteria"][1]["id"] = "C-001"
    bench.write(tasks, "employment/dup", dup)
    bench.write(tasks, "employment/escape", bench.task_json(deliverables={"../x": "x.md"}))
    bench.write(tasks, "tax/scan", documents={"scan.pdf": docs.scanned_pdf()})
    results = _results(tmp_path / "results", {"sys/tax/unknown/memo.md": "m"})

    result = runner.invoke(app, ["validate", str(clean_bench), "--submissions", str(results)])

    assert result.exit_code == 1
    out = result.output
    expected = [
        f"{tasks}/real-estate/psa/scenario-01/task.json: invalid JSON at line 1, column 15",
        f"{tasks}/employment/dup/task.json: duplicate criterion id 'C-001'",
        f"{tasks}/employment/escape/task.json: deliverable name '../x' is not a plain name",
        f"{tasks}/tax/scan/documents/scan.pdf: no text could be read from any page",
        f"{results}/sys/tax/unknown: unknown task id 'tax/unknown'",
    ]
    for line in expected:
        assert line in out, line
    assert "5 problem(s)" in out


def test_cli_validate_json_output_is_the_full_report(clean_bench):
    result = runner.invoke(app, ["validate", str(clean_bench), "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["n_tasks"] == 3 and data["problems"] == []


def test_cli_without_arguments_shows_help_and_validate_help_teaches():
    bare = runner.invoke(app, [])
    assert "validate" in bare.output
    help_text = runner.invoke(app, ["validate", "--help"]).output
    assert "Exit code" in help_text and "--submissions" in help_text


@pytest.mark.s3
def test_cli_validates_a_benchmark_on_s3(clean_bench, s3_server, s3_bucket):
    upload_tree(s3_server, clean_bench, s3_bucket, "bench")
    result = runner.invoke(app, ["validate", f"s3://{s3_bucket}/bench", "--endpoint-url", s3_server])
    assert result.exit_code == 0, result.output
    assert "(3 tasks)" in result.output


def test_cli_validate_applies_the_configs_input_limits_and_names_the_limit_to_raise(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE / "tasks", bench / "tasks")
    config = tmp_path / "limits.yaml"
    config.write_text("input_limits: {max_sheet_rows: 3}\n")
    result = CliRunner().invoke(app, ["validate", str(bench), "--config", str(config)], terminal_width=400)
    assert result.exit_code == 1
    assert "Uptime_and_Invoices_2025.xlsx: workbook has more than 3 rows" in result.output
    assert "input_limits.max_sheet_rows = 3" in result.output and "raise it in --config" in result.output
    assert CliRunner().invoke(app, ["validate", str(bench)]).exit_code == 0  # the defaults accept the sample


def test_cli_validate_with_an_unknown_limit_in_the_config_exits_1_naming_it(tmp_path: Path) -> None:
    config = tmp_path / "limits.yaml"
    config.write_text("input_limits: {max_rows: 3}\n")
    result = CliRunner().invoke(app, ["validate", str(SAMPLE), "--config", str(config)], terminal_width=400)
    assert result.exit_code == 1 and "max_rows" in result.output
