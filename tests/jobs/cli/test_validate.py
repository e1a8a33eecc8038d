"""`tribunal validate` exits 0 when clean, 1 naming every problem as `file: reason`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobs.cli.app import app
from tests.conftest import upload_tree
from tests.evalcore.benchmark.test_validate import _results, clean_bench
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


def test_cli_validate_reports_pages_ocr_and_low_confidence_pages_as_warnings_not_problems(tmp_path, bench, docs):
    from examples.sample_gen.scans import DEPOSITION_PAGES, pdf_of, render_page

    tasks = tmp_path / "bench" / "tasks"
    mixed = pdf_of(["SUPPLY AGREEMENT dated January 8, 2021 between Kestrel Biotech Inc. and the Buyer.",
                    render_page(DEPOSITION_PAGES[1], seed=5)])
    bench.write(tasks, "litigation/deposition", documents={"exhibits/mixed.pdf": mixed})
    bench.write(tasks, "litigation/no-docs", documents={})
    config = tmp_path / "strict.yaml"
    config.write_text("ocr: {low_confidence: 99}\n")  # every OCR'd page is under 99

    result = runner.invoke(app, ["validate", str(tmp_path / "bench"), "--config", str(config), "--json"])
    assert result.exit_code == 0, result.output  # warnings do not fail validation
    report = json.loads(result.output)
    [paged] = report["paged_documents"]
    assert (paged["task_id"], paged["document"], paged["pages"], paged["ocr_pages"]) == (
        "litigation/deposition", "exhibits/mixed.pdf", 2, 1)
    assert 70 < paged["mean_confidence"] < 99 and paged["low_confidence_pages"] == [2]
    assert report["tasks_without_documents"] == ["litigation/no-docs"]
    [warning] = report["warnings"]
    assert warning["file"] == f"{tasks}/litigation/deposition/documents/exhibits/mixed.pdf"
    assert warning["reason"].startswith("page 2: OCR confidence ") and "below 99" in warning["reason"]
    assert report["problems"] == []

    text = runner.invoke(app, ["validate", str(tmp_path / "bench"), "--config", str(config)]).output
    assert "Paged documents" in text and "exhibits/mixed.pdf" in text
    assert "1 warning(s)" in text and "Tasks without source documents: 1" in text
    # with the default threshold (70) the same scan is clean
    assert "warning" not in runner.invoke(app, ["validate", str(tmp_path / "bench")]).output
