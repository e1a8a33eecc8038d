"""Terminal tables that survive any width (`jobs.display.tables`) and every table of the CLI laid out by it.

At 80 columns (a pipe, a log, a CI job) rich's own tables cut cells with "…" and dropped columns;
here every table is rendered at 60, 80 and 200 columns and as piped (no TTY, no COLUMNS: rich's
80), and every identifier must appear whole, every header be there, no "…" anywhere, and every
number read as the data says. The csv and markdown forms must parse back to the same values.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from rich import box
from rich.console import Console
from rich.text import Text
from typer.testing import CliRunner

from evalcore.benchmark.validate import validate
from evalcore.config.models import VendorMode
from evalcore.cost.estimate import Estimate, VendorEstimate
from evalcore.grading.scoring import AuditMode
from evalcore.results.leaderboard import ALL_AREAS, Leaderboard
from evalcore.vendors.batch.journal import BatchRecord
from jobs.cli.app import app
from jobs.cli.grade_one import grade_one
from jobs.display.calibration import calibration_blocks, render_calibration
from jobs.display.comparison import comparison_blocks, render_comparison
from jobs.display.estimate import estimate_blocks, render_estimate
from jobs.display.grade import render_grade, score_text
from jobs.display.leaderboard import LEADERBOARD_COLUMNS, leaderboard_blocks, render_leaderboard
from jobs.display.status import render_status, status_blocks
from jobs.display.sweep_summary import print_summary
from jobs.display.tables import (
    Block,
    Cell,
    Column,
    TableSpec,
    WholeLine,
    emit,
    flatten_header,
    layout,
    print_prose,
    to_csv,
    to_markdown,
)
from jobs.display.validation import render as render_validation
from jobs.per_run.calibrate import calibrate_run
from jobs.per_run.compare import compare_runs
from jobs.per_run.reduce import reduce_run
from jobs.per_run.status import RunStatus
from jobs.sweep.options import SweepSummary
from tests.jobs.conftest import SAMPLE
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

WIDTHS = (60, 80, 200)
LONG_SYSTEM = "anthropic-claude-opus-4.5-thinking-2026-01-15"
"""A system name as long as real ones get: it must never be cut, whatever the width."""
RENAMES = {"gpt-strong": LONG_SYSTEM, "grok-weak": "gpt-5[beta]"}


def _consoles(monkeypatch: pytest.MonkeyPatch) -> Iterable[tuple[str, Console]]:
    """Consoles at 60, 80 and 200 columns, and one as when stdout is piped (no TTY, no COLUMNS)."""
    for width in WIDTHS:
        yield f"{width} columns", Console(record=True, width=width, force_terminal=False, file=io.StringIO())
    monkeypatch.delenv("COLUMNS", raising=False)
    piped = Console(record=True, file=io.StringIO())
    assert not piped.is_terminal and piped.width == 80
    yield "piped", piped


def assert_whole(text: str, *, identifiers: Iterable[str], headers: Iterable[str], numbers: Iterable[str]) -> None:
    """No "…"; every identifier and number as a whole substring; every header line present."""
    assert "…" not in text, text
    for ident in identifiers:
        assert ident in text, f"{ident!r} not whole in:\n{text}"
    for header in headers:
        for line in header.split("\n"):
            assert line in text, f"header {header!r} missing in:\n{text}"
    for number in numbers:
        assert number in text, f"{number!r} not whole in:\n{text}"


def assert_fits(text: str, width: int, whole: Iterable[str]) -> None:
    """No line is wider than the console, except by an item that must stay whole on its line."""
    items = list(whole)
    for line in text.splitlines():
        line = line.rstrip()
        assert len(line) <= width or any(a in line and len(line) - len(a) < width for a in items), line


def _parse_csv_sections(text: str) -> dict[str, list[dict[str, str]]]:
    sections: dict[str, list[dict[str, str]]] = {}
    for chunk in text.strip("\n").split("\n\n"):
        lines = chunk.split("\n")
        title = lines.pop(0)[2:] if lines[0].startswith("# ") else ""
        sections[title] = list(csv.DictReader(lines))
    return sections


def _parse_markdown_tables(text: str) -> list[list[list[str]]]:
    """Every pipe table of a markdown document as rows of cells (header row first), unescaped."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in text.split("\n"):
        if line.startswith("| "):
            cells = [c.strip().replace("\\|", "|").replace("\\\\", "\\")
                     for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
            if current is None:
                current = []
                tables.append(current)
            current.append(cells)
        elif line.startswith("|") and set(line) <= set("|-:"):
            continue
        else:
            current = None
    return tables


def _value(field: str) -> object:
    """A csv field as the value it was written from ("" is None)."""
    if field == "":
        return None
    for cast in (int, float):
        try:
            return cast(field)
        except ValueError:
            pass
    return {"True": True, "False": False}.get(field, field)


# --------------------------------------------------------------------------------------------
# jobs.display.tables
# --------------------------------------------------------------------------------------------


def _wide_spec() -> TableSpec:
    spec = TableSpec(
        [Column("#", "number", ("rank",)), Column("system", "id"), Column("HC pass\n[95% CI]", "number", ("hc", "low", "high")),
         Column("notes", "text"), Column("missing/\nincompl./\ntoo long", "number"), Column("cost", "number", ("cost_usd",))],
        title="Leaderboard — run run-0123456789ab (8 tasks)", caption="HC = hallucination-controlled", box=box.SIMPLE_HEAVY,
    )
    spec.add_row(Cell("1", 1), LONG_SYSTEM, Cell(Text.from_markup("25.0% [dim][0–63][/dim]"), (0.25, 0.0, 0.63)),
                 "a note long enough to wrap at spaces and only there", "0/1/0", Cell("$11,234.56", 11234.56))
    spec.add_row(Cell("2", 2), "gpt-5[beta]", Cell("0.0% [0–0]", (0.0, 0.0, 0.0)), "short", "0/0/0", Cell("$0.00", 0.0))
    return spec


def test_a_table_keeps_every_identifier_number_and_header_whole_at_any_width(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _wide_spec()
    for _, console in [*_consoles(monkeypatch), ("40 columns", Console(record=True, width=40, file=io.StringIO()))]:
        emit(console, [spec])
        text = console.export_text()
        numbers = ["25.0% [0–63]", "$11,234.56", "0.0% [0–0]", "$0.00", "0/1/0"]
        assert_whole(text, identifiers=[LONG_SYSTEM, "gpt-5[beta]"], headers=[c.header for c in spec.columns],
                     numbers=numbers)
        assert_fits(text, console.width, [LONG_SYSTEM, *numbers])


def test_the_layout_is_one_table_when_it_fits_else_bands_repeating_the_key_else_stacked() -> None:
    spec = _wide_spec()
    wide = layout(spec, Console(width=200))
    assert wide is not None and len(wide) == 1
    banded = layout(spec, Console(width=80))
    assert banded is not None and len(banded) > 1
    assert all(band.columns[band.key_index].name == "system" for band, _ in banded)
    shown = [c.name for band, _ in banded for c in band.columns if c.name != "system"]
    assert shown == [c.name for c in spec.columns if c.name != "system"]  # every column, once, in order
    assert layout(spec, Console(width=40)) is None
    single = TableSpec([Column("path", "id")])
    single.add_row("s3://bucket/a/very/long/prefix/runs/run-0123456789ab")
    assert layout(single, Console(width=20)) is None  # one column too wide for the console: stacked


def test_a_wrapped_prose_value_in_a_stacked_block_stays_under_its_value_column() -> None:
    console = Console(record=True, width=30, file=io.StringIO())
    print_prose(console, "label: first line of a value that goes on\nsecond line", indent=7)
    assert console.export_text().splitlines() == [
        "label: first line of a value", "       that goes on", "       second line"]


def test_the_stacked_layout_is_one_block_per_row_of_column_value_lines() -> None:
    console = Console(record=True, width=40, file=io.StringIO())
    emit(console, [_wide_spec()])
    text = console.export_text()
    assert f"system: {LONG_SYSTEM}" in text and "system: gpt-5[beta]" in text
    assert re.search(r"^  missing/incompl\./too long: +0/1/0$", text, re.M)
    assert re.search(r"^  cost: +\$11,234\.56$", text, re.M)


def test_prose_wraps_at_spaces_and_never_cuts_a_word_longer_than_the_line() -> None:
    console = Console(record=True, width=30, file=io.StringIO())
    path = "/runs/" + "x" * 40 + "/leaderboard.json"
    print_prose(console, f"written to {path} and more words after it")
    emit(console, [WholeLine("tasks/a b/task.json: invalid JSON at line 1, column 2 (one line)")])
    lines = console.export_text().splitlines()
    assert path in lines
    assert all(len(line) <= 30 for line in lines if path not in line and "invalid JSON" not in line)
    assert "tasks/a b/task.json: invalid JSON at line 1, column 2 (one line)" in lines


def test_headers_flatten_to_one_line_for_stacked_csv_and_markdown() -> None:
    assert flatten_header("rank\nrange") == "rank range"
    assert flatten_header("all-\npass") == "all-pass"
    assert flatten_header("material\n/task") == "material/task"
    assert flatten_header("missing/\nincompl./\ntoo long") == "missing/incompl./too long"
    assert Column("HC pass\n[95% CI]").keys == ("hc_pass_95_ci",)


def test_csv_carries_the_cells_values_and_parses_back_to_them() -> None:
    spec = _wide_spec()
    rows = list(csv.DictReader(io.StringIO(to_csv([spec, "prose is left out"]))))
    assert [{k: _value(v) for k, v in r.items()} for r in rows] == spec.records()
    assert spec.records()[0] == {"rank": 1, "system": LONG_SYSTEM, "hc": 0.25, "low": 0.0, "high": 0.63,
                                 "notes": "a note long enough to wrap at spaces and only there",
                                 "missing_incompl_too_long": "0/1/0", "cost_usd": 11234.56}


def test_csv_of_several_tables_is_one_titled_section_each() -> None:
    other = TableSpec([Column("vendor", "id"), Column("calls", "number")], title="per vendor")
    other.add_row("openai", Cell("1,234", 1234))
    sections = _parse_csv_sections(to_csv([_wide_spec(), other]))
    assert list(sections) == ["Leaderboard — run run-0123456789ab (8 tasks)", "per vendor"]
    assert sections["per vendor"] == [{"vendor": "openai", "calls": "1234"}]


def test_markdown_is_the_cells_texts_with_pipes_escaped_and_parses_back() -> None:
    spec = TableSpec([Column("system", "id"), Column("note", "text")], title="t")
    spec.add_row("a|b", "x \\ y")
    md = to_markdown([spec, Text("a note")])
    assert _parse_markdown_tables(md) == [[["system", "note"], ["a|b", "x \\ y"]]]
    assert "**t**" in md and "a note" in md


def test_a_cell_with_values_not_matching_its_columns_fields_is_refused() -> None:
    spec = TableSpec([Column("HC", "number", ("hc", "low", "high"))])
    spec.add_row(Cell("25%", 0.25))
    with pytest.raises(ValueError, match="1 value"):
        spec.records()
    with pytest.raises(ValueError, match="2 cell"):
        spec.add_row("a", "b")


# --------------------------------------------------------------------------------------------
# The leaderboard (reduce, sweep, demo)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    truth = synthetic_ground_truth(seed=5, n_tasks=6, n_criteria=3)
    for old, new in RENAMES.items():
        truth["verdicts"][new] = truth["verdicts"].pop(old)
        for h in truth["hallucinations"]:
            if h["system"] == old:
                h["system"] = new
    run = tmp_path_factory.mktemp("runs") / "run-tables"
    tasks = sorted(truth["verdicts"]["claude-average"])
    build_run(str(run), truth, RunSpec(run_id="run-tables", incomplete={("claude-average", tasks[0])}))
    return run


@pytest.fixture(scope="module")
def board(run_dir: Path) -> Leaderboard:
    """The run's leaderboard, with costs as a real run's (thousands of dollars)."""
    lb = reduce_run(str(run_dir), write=False)
    costs = [11234.5678, 987.654, 12.3, 0.004]
    return lb.model_copy(update={"systems": [s.model_copy(update={"cost_usd": c})
                                             for s, c in zip(lb.systems, costs, strict=True)]})


def _leaderboard_numbers(lb: Leaderboard) -> list[str]:
    out = []
    for r in lb.systems:
        out.append(f"${r.cost_usd:,.2f}")
        out.append(f"{r.missing}/{r.incomplete}/{r.too_long}")
        hc = r.hc_pass_rate
        if hc.value is not None and hc.low is not None and hc.high is not None:
            out.append(f"{100 * hc.value:.1f}% [{100 * hc.low:.0f}–{100 * hc.high:.0f}]")
        if r.criterion_pass_rate.value is not None:
            out.append(f"{100 * r.criterion_pass_rate.value:.1f}%")
        if r.material_per_task.value is not None:
            out.append(f"{r.material_per_task.value:.2f}")
    return out


def test_the_leaderboard_keeps_every_system_column_and_number_whole_at_any_width(
    board: Leaderboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert {LONG_SYSTEM, "gpt-5[beta]"} <= {r.system for r in board.systems}
    for name, console in _consoles(monkeypatch):
        render_leaderboard(board, console)
        text = console.export_text()
        assert_whole(text, identifiers=[r.system for r in board.systems] + [board.run_id],
                     headers=[c.header for c in LEADERBOARD_COLUMNS], numbers=_leaderboard_numbers(board))
        assert "$11,234.57" in text, name
        assert_fits(text, console.width, [LONG_SYSTEM])


def test_the_leaderboard_csv_holds_the_leaderboards_values(board: Leaderboard) -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv(leaderboard_blocks(board)))))
    assert [r["system"] for r in rows] == [s.system for s in board.systems]
    for row, s in zip(rows, board.systems, strict=True):
        assert _value(row["hc_pass_rate"]) == s.hc_pass_rate.value
        assert _value(row["hc_pass_rate_low"]) == s.hc_pass_rate.low
        assert _value(row["criterion_pass_rate"]) == s.criterion_pass_rate.value
        assert _value(row["cost_usd"]) == s.cost_usd
        assert (_value(row["rank"]), _value(row["tier"]), _value(row["incomplete"])) == (s.rank, s.tier, s.incomplete)


def test_the_leaderboard_markdown_shows_what_the_table_shows(board: Leaderboard) -> None:
    [table] = _parse_markdown_tables(to_markdown(leaderboard_blocks(board)))
    assert table[0] == [flatten_header(c.header) for c in LEADERBOARD_COLUMNS]
    assert [row[3] for row in table[1:]] == [s.system for s in board.systems]
    assert [row[-1] for row in table[1:]] == [f"${s.cost_usd:,.2f}" for s in board.systems]


def test_cli_reduce_piped_at_80_columns_shows_every_system_and_header(run_dir: Path) -> None:
    result = CliRunner().invoke(app, ["reduce", str(run_dir)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lb = reduce_run(str(run_dir), write=False)
    assert_whole(result.output, identifiers=[r.system for r in lb.systems], headers=[c.header for c in LEADERBOARD_COLUMNS],
                 numbers=_leaderboard_numbers(lb))


def test_cli_reduce_formats_parse_back_to_the_leaderboard_and_json_is_the_alias(run_dir: Path) -> None:
    runner = CliRunner()
    lb = reduce_run(str(run_dir), write=False)
    as_json = runner.invoke(app, ["reduce", str(run_dir), "--format", "json"], env={"COLUMNS": "80"})
    alias = runner.invoke(app, ["reduce", str(run_dir), "--json"], env={"COLUMNS": "80"})
    assert as_json.exit_code == alias.exit_code == 0
    assert Leaderboard.model_validate_json(as_json.output) == lb == Leaderboard.model_validate_json(alias.output)
    as_csv = runner.invoke(app, ["reduce", str(run_dir), "--format", "csv"], env={"COLUMNS": "60"})
    rows = list(csv.DictReader(io.StringIO(as_csv.output)))
    assert [(r["system"], _value(r["hc_pass_rate"]), _value(r["cost_usd"])) for r in rows] == [
        (s.system, s.hc_pass_rate.value, s.cost_usd) for s in lb.systems]
    md = runner.invoke(app, ["reduce", str(run_dir), "--format", "markdown"], env={"COLUMNS": "60"})
    [table] = _parse_markdown_tables(md.output)
    assert [row[3] for row in table[1:]] == [s.system for s in lb.systems]


def test_cli_json_together_with_another_format_is_a_usage_error(run_dir: Path) -> None:
    result = CliRunner().invoke(app, ["reduce", str(run_dir), "--json", "--format", "csv"], env={"COLUMNS": "200"})
    assert result.exit_code == 2 and "--json is --format json" in result.output


# --------------------------------------------------------------------------------------------
# estimate
# --------------------------------------------------------------------------------------------


def _estimate() -> Estimate:
    vendors = [
        VendorEstimate(vendor="openai", model="gpt-6-pro-2026-05-12-preview", calls=123456.0, input_tokens=8066712345.0,
                       cached_input_tokens=4033356172.0, output_tokens=98765432.0,
                       cost_usd={"standard": 11234.56, "flex": 5617.28}, min_wall_s=7300.0),
        VendorEstimate(vendor="anthropic-secondary-account", model="claude-opus-4-5-20260101", calls=9.0,
                       input_tokens=1000.0, output_tokens=10.0, cost_usd={"standard": 0.01, "flex": 0.01}, min_wall_s=3.0),
    ]
    return Estimate(submissions=1234567, too_long=3, vendors=vendors)


def test_the_estimate_keeps_vendors_models_and_token_counts_whole_at_any_width(monkeypatch: pytest.MonkeyPatch) -> None:
    est = _estimate()
    for _, console in _consoles(monkeypatch):
        render_estimate(est, console)
        text = console.export_text()
        assert_whole(text, identifiers=[v.vendor for v in est.vendors] + [v.model for v in est.vendors],
                     headers=["vendor", "model", "calls", "input tokens", "cached", "output tokens", "USD standard",
                              "USD flex", "min wall"],
                     numbers=["8,066,712,345", "8,066,713,345", "98,765,432", "123,456", "$11,234.56", "$5,617.28",
                              "$5,617.29", "50.0%", "2.0 h", "1,234,567 submissions"])


def test_the_estimate_csv_holds_the_estimates_values() -> None:
    est = _estimate()
    rows = [{k: _value(v) for k, v in r.items()} for r in csv.DictReader(io.StringIO(to_csv(estimate_blocks(est))))]
    assert rows[0]["model"] == "gpt-6-pro-2026-05-12-preview" and rows[0]["input_tokens"] == 8066712345.0
    assert rows[0]["usd_standard"] == 11234.56 and rows[0]["cached_share"] == 4033356172.0 / 8066712345.0
    assert rows[-1]["vendor"] == "total" and rows[-1]["usd_flex"] == est.cost_usd["flex"]
    assert rows[-1]["min_wall_s"] == est.min_wall_s


def test_cli_estimate_csv_parses_back_to_the_json_figures() -> None:
    runner = CliRunner()
    args = ["estimate", str(SAMPLE), "-s", str(SAMPLE / "submissions"), "--fast"]
    data = json.loads(runner.invoke(app, [*args, "--json"], env={"COLUMNS": "80"}).output)
    result = runner.invoke(app, [*args, "--format", "csv"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert [(r["vendor"], r["model"], _value(r["input_tokens"])) for r in rows[:-1]] == [
        (v["vendor"], v["model"], v["input_tokens"]) for v in data["vendors"]]
    table = runner.invoke(app, args, env={"COLUMNS": "80"}).output
    assert "…" not in table and all(v["model"] in table for v in data["vendors"])


# --------------------------------------------------------------------------------------------
# validate
# --------------------------------------------------------------------------------------------


def test_validate_keeps_system_areas_and_documents_whole_at_any_width(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    subs = tmp_path / "submissions"
    shutil.copytree(SAMPLE / "submissions" / "gpt-strong", subs / LONG_SYSTEM)
    shutil.copytree(SAMPLE / "submissions" / "grok-weak", subs / "gpt-5[beta]")
    report = validate(str(SAMPLE), str(subs))
    for _, console in _consoles(monkeypatch):
        render_validation(report, console)
        text = console.export_text()
        assert_whole(
            text, identifiers=[LONG_SYSTEM, "gpt-5[beta]", *report.tasks_by_area,
                               *(d.document for d in report.paged_documents), *(d.task_id for d in report.paged_documents)],
            headers=["area", "type", "system", "count", "task", "document", "pages", "OCR'd", "mean confidence", "below 70"],
            numbers=[str(report.n_submissions), str(report.n_tasks)],
        )


def test_cli_validate_csv_and_markdown_hold_the_reports_counts() -> None:
    runner = CliRunner()
    args = ["validate", str(SAMPLE), "-s", str(SAMPLE / "submissions")]
    report = validate(str(SAMPLE), str(SAMPLE / "submissions"))
    sections = _parse_csv_sections(runner.invoke(app, [*args, "--format", "csv"], env={"COLUMNS": "80"}).output)
    by_system = {r["system"]: int(r["count"]) for r in sections["Submissions by system"]}
    assert by_system == {**report.submissions_by_system, "total": report.n_submissions}
    paged = sections["Paged documents (PDF, images)"]
    assert [(r["task_id"], r["document"], int(r["pages"])) for r in paged] == [
        (d.task_id, d.document, d.pages) for d in sorted(report.paged_documents, key=lambda d: (-d.ocr_pages, d.task_id, d.document))]
    md = runner.invoke(app, [*args, "--format", "markdown"], env={"COLUMNS": "80"})
    assert md.exit_code == 0
    areas = next(t for t in _parse_markdown_tables(md.output) if t[0] == ["area", "count"])
    assert {r[0]: int(r[1]) for r in areas[1:]} == {**report.tasks_by_area, "total": report.n_tasks}


# --------------------------------------------------------------------------------------------
# status
# --------------------------------------------------------------------------------------------


def _status() -> RunStatus:
    records = [
        BatchRecord(vendor="openai", model="gpt-6", label="tribunal-7f3a9c2e41d0b5a6", batch_id="batch_68a1f0c2e9d84c7fa1b2c3d4e5f60718",
                    submitted_at=1767225600.0, requests=[f"r{i}" for i in range(1200)], phase="collected",
                    vendor_status="completed", expires_at=1767312000.0, succeeded=1198, failed=2),
        BatchRecord(vendor="openai", model="gpt-6", label="tribunal-0b5a6", batch_id="batch_0000ffff",
                    submitted_at=1767225660.0, requests=["a", "b"], phase="submitted", vendor_status="in_progress"),
    ]
    return RunStatus(run_uri="s3://bucket/runs/run-2f1c0a9b3d4e", run_id="run-2f1c0a9b3d4e", batch_mode=True,
                     finished=False, submissions={"complete": 10, "incomplete": 2}, batches={"openai": records})


def test_status_keeps_batch_ids_and_counts_whole_at_any_width(monkeypatch: pytest.MonkeyPatch) -> None:
    status = _status()
    for _, console in _consoles(monkeypatch):
        render_status(status, console)
        text = console.export_text()
        assert_whole(text, identifiers=["batch_68a1f0c2e9d84c7fa1b2c3d4e5f60718", "batch_0000ffff", "completed",
                                        "in_progress", "s3://bucket/runs/run-2f1c0a9b3d4e"],
                     headers=["batch", "state", "vendor status", "requests", "succeeded", "failed", "submitted", "expires at"],
                     numbers=["1200", "1198", "2026-01-01 00:00:00Z", "2026-01-02 00:00:00Z"])


def test_status_prints_each_batch_id_once_at_80_columns_one_block_per_batch() -> None:
    """Split in bands, a vendor's table printed three pieces each repeating the batch id."""
    console = Console(record=True, width=80, file=io.StringIO())
    render_status(_status(), console)
    text = console.export_text()
    assert text.count("batch_68a1f0c2e9d84c7fa1b2c3d4e5f60718") == 1, text
    assert text.count("batch_0000ffff") == 1, text
    assert "expires at:    2026-01-02 00:00:00Z" in text


def test_status_csv_holds_every_batch() -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv(status_blocks(_status())))))
    assert [(r["batch"], int(r["requests"]), int(r["succeeded"]), int(r["failed"])) for r in rows] == [
        ("batch_68a1f0c2e9d84c7fa1b2c3d4e5f60718", 1200, 1198, 2), ("batch_0000ffff", 2, 0, 0)]


# --------------------------------------------------------------------------------------------
# calibrate, compare
# --------------------------------------------------------------------------------------------


def _texts(blocks: list[Block]) -> list[str]:
    return [b.plain if isinstance(b, Text) else b for b in blocks if isinstance(b, str | Text)]


def test_calibrate_keeps_judges_and_figures_whole_at_any_width(run_dir: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    labels = tmp_path / "labels.jsonl"
    lines = [json.dumps({"type": "verdict", "system": LONG_SYSTEM, "task_id": t, "criterion_id": "C-001", "verdict": "pass"})
             for t in sorted(synthetic_ground_truth(seed=5, n_tasks=6, n_criteria=3)["verdicts"]["gpt-strong"])]
    labels.write_text("\n".join(lines))
    cal = calibrate_run(str(run_dir), str(labels), write=False)
    judges = [r for r in cal.judges if r.area == ALL_AREAS]
    assert judges
    for _, console in _consoles(monkeypatch):
        render_calibration(cal, console)
        text = console.export_text()
        assert_whole(text, identifiers=[r.judge for r in judges] + [str(labels)],
                     headers=["judge", "area", "items", "accuracy", "Cohen κ", "false pass", "false fail", "category",
                              "labelled", "found", "recall", "confirmed", "true", "precision"],
                     numbers=[r.accuracy.text() for r in judges] + [str(r.items) for r in judges])
    sections = _parse_csv_sections(to_csv(calibration_blocks(cal)))
    rows = sections["Judges against the experts"]
    assert [(r["judge"], int(r["items"]), _value(r["accuracy"])) for r in rows] == [
        (r.judge, r.items, r.accuracy.value) for r in judges]


def test_compare_keeps_judges_models_and_systems_whole_at_any_width(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cmp = compare_runs(str(run_dir), str(run_dir))
    for _, console in _consoles(monkeypatch):
        render_comparison(cmp, console)
        text = console.export_text()
        assert_whole(text, identifiers=[j.judge for j in cmp.judges] + [str(j.model_a) for j in cmp.judges]
                     + [s.system for s in cmp.systems],
                     headers=["judge", "model A → B", "compared", "changed", "pass→fail", "fail→pass", "κ(A,B)",
                              "system", "rank A", "rank B", "HC A", "HC B", "Δ HC", "Δ all-pass"],
                     numbers=[f"{100 * s.hc_pass_rate_a:.1f}%" for s in cmp.systems if s.hc_pass_rate_a is not None])
    sections = _parse_csv_sections(to_csv(comparison_blocks(cmp)))
    scores = next(v for k, v in sections.items() if k.startswith("Scores"))
    assert [(r["system"], _value(r["rank_a"]), _value(r["hc_pass_rate_a"])) for r in scores] == [
        (s.system, s.rank_a, s.hc_pass_rate_a) for s in cmp.systems]
    assert any("Kendall τ" in t for t in _texts(comparison_blocks(cmp)))


def test_cli_calibrate_and_compare_take_format(run_dir: Path) -> None:
    runner = CliRunner()
    md = runner.invoke(app, ["compare", str(run_dir), str(run_dir), "--format", "markdown"], env={"COLUMNS": "80"})
    assert md.exit_code == 0, md.output
    verdicts = _parse_markdown_tables(md.output)[0]
    assert verdicts[0][:2] == ["judge", "model A → B"]
    as_json = runner.invoke(app, ["compare", str(run_dir), str(run_dir), "--json"], env={"COLUMNS": "80"})
    assert [j["judge"] for j in json.loads(as_json.output)["judges"]] == [r[0] for r in verdicts[1:]]


# --------------------------------------------------------------------------------------------
# The sweep summary and grade
# --------------------------------------------------------------------------------------------


def test_the_sweep_summary_keeps_the_run_uri_and_counts_whole_at_any_width(monkeypatch: pytest.MonkeyPatch) -> None:
    uri = "s3://tribunal-results-bucket/benchmarks/legal-2026/runs/run-2fedb751c74b"
    summary = SweepSummary(run_id="run-2fedb751c74b", run_uri=uri, submissions_total=1234567, graded=1234567,
                           paid_calls=98765432, cost_usd=11234.5678, wall_s=86400.25)
    for _, console in _consoles(monkeypatch):
        print_summary(summary, console)
        text = console.export_text()
        assert_whole(text, identifiers=[uri, "run-2fedb751c74b", "submissions_total", "estimated_cost_usd"], headers=[],
                     numbers=["1,234,567", "98,765,432", "11,234.5678", "86,400.2500"])


def test_the_sweep_summary_keeps_each_purge_count_whole_on_the_line_of_what_it_counts_at_80_columns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`purged_at_vendors` was one prose cell (`0 deleted, 0 failed, 2 in use, undeletable: xai 12345`):
    at 80 columns it wrapped and left `xai` at a line's end, its count on the next."""
    summary = SweepSummary(run_id="run-2fedb751c74b", run_uri="s3://tribunal-results-bucket/runs/run-2fedb751c74b",
                           batches={"openai": {"open": 0}},
                           purge={"enabled": True, "deleted": 1200, "gone": 34, "failed": 12, "in_use": 3,
                                  "by_vendor": {"xai": {"undeletable": 12345}, "anthropic": {"undeletable": 0}}})
    for name, console in _consoles(monkeypatch):
        print_summary(summary, console)
        text = console.export_text()
        assert "…" not in text, text
        lines = text.splitlines()
        for key, number in [("purged_at_vendors", "1,234"), ("purge_failed", "12"), ("purge_in_use", "3"),
                            ("undeletable_at_xai", "12,345")]:
            assert any(key in line and f" {number} " in f"{line} " for line in lines), f"{name}: {key} {number}\n{text}"
        assert "undeletable_at_anthropic" not in text


def test_the_sweep_summary_says_nothing_of_ocr_when_no_page_needed_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lab benchmark's PDFs all have a text layer: the summary said `ocr_pages 0 recognised, 0 cached
    (0.8 s)` of a step that did nothing (issue 43: say nothing when nothing needs OCR)."""
    quiet = SweepSummary(run_id="r", run_uri="/runs/r", ocr={"documents": 12, "pages_ocred": 0, "pages_cached": 0,
                                                              "wall_s": 0.8, "failed": []})
    scanned = dataclasses.replace(quiet, ocr={**quiet.ocr, "pages_ocred": 7, "pages_cached": 2})
    for name, console in _consoles(monkeypatch):
        print_summary(quiet, console)
        assert "ocr" not in console.export_text(), name
        print_summary(scanned, console)
        assert "7 recognised, 2 cached" in console.export_text(), name


def test_grade_keeps_criteria_judges_and_categories_whole_at_any_width(monkeypatch: pytest.MonkeyPatch) -> None:
    task = SAMPLE / "tasks" / "real-estate" / "psa-key-terms" / "scenario-01"
    memo = SAMPLE / "submissions" / "fluent-hallucinator" / "real-estate" / "psa-key-terms" / "scenario-01" / "memo.md"
    result = grade_one(str(task), [str(memo)], VendorMode.OFFLINE, AuditMode.ALWAYS, None)
    assert result.flags
    for _, console in _consoles(monkeypatch):
        render_grade(result, console)
        text = console.export_text()
        assert_whole(text, identifiers=sorted({v.criterion_id for v in result.verdicts} | {v.judge for v in result.verdicts}
                                              | {f.category for f in result.flags}),
                     headers=["criterion", "judge", "verdict", "reasoning", "span", "category", "evidence", "stage 2",
                              "rationale"],
                     numbers=[score_text(result.submission.task_score or 0.0), score_text(result.submission.hc_score or 0.0)])
