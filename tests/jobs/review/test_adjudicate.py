"""`tribunal adjudicate RUN`: decisions from the command line or a CSV/JSONL file, recorded one object
each under RUN/adjudications/; every decision must name an item of the run, and a bad file records
nothing and names each bad row."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalcore.results import adjudications as adj
from evalcore.results import decision_files
from jobs.cli.app import app
from tests.conftest import create_bucket, upload_tree
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

runner = CliRunner()
TRUTH = synthetic_ground_truth(seed=3, n_tasks=6, n_criteria=3)
TASKS = sorted(TRUTH["verdicts"]["gpt-strong"])
INCOMPLETE = ("claude-average", TASKS[0])


@pytest.fixture
def run(tmp_path: Path) -> str:
    uri = str(tmp_path / "run")
    build_run(uri, TRUTH, RunSpec(incomplete={INCOMPLETE}))
    return uri


def _flagged() -> tuple[str, str]:
    """A (system, task) with a confirmed hallucination in a complete, audited grading."""
    for h in TRUTH["hallucinations"]:
        key = (h["system"], h["task_id"])
        if key != INCOMPLETE and all(v == "pass" for v in TRUTH["verdicts"][key[0]][key[1]].values()):
            return key
    raise AssertionError("the synthetic truth has no flagged passing submission")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _invoke(*args: str) -> Any:
    result = runner.invoke(app, ["adjudicate", *args])
    assert "Traceback" not in result.output, result.output
    return result


def test_a_flag_overturned_on_the_command_line_is_recorded_as_one_object_and_printed(run: str) -> None:
    system, task = _flagged()
    result = _invoke(run, "--kind", "flag", "--system", system, "--task", task, "--flag-index", "0",
                     "--decision", "overturned", "--reviewer", "Ada", "--reason", "the term is in the lease")
    assert result.exit_code == 0, result.output
    assert f"recorded flag {system}/{task}/0: overturned by Ada" in _flat(result.output)
    files = sorted((Path(run) / "adjudications").glob("*.json"))
    assert len(files) == 1 and files[0].name in result.output.replace("\n", "")
    (d,) = adj.load(run).decisions
    assert (d.kind, d.system, d.task_id, d.flag_index, d.decision, d.reviewer, d.reason) == (
        "flag", system, task, 0, "overturned", "Ada", "the term is in the lease")
    assert d.run_id == "run-test"


def test_verdict_criterion_and_materiality_forms_are_recorded(run: str) -> None:
    system, task = _flagged()
    forms = [
        ["--kind", "verdict", "--criterion", "C-002", "--judge", "xai", "--decision", "fail"],
        ["--kind", "criterion", "--criterion", "C-001", "--decision", "pass"],
        ["--kind", "flag", "--flag-index", "0", "--decision", "materiality", "--materiality", "minor"],
    ]
    for form in forms:
        result = _invoke(run, "--system", system, "--task", task, *form, "--reviewer", "Bo", "--reason", "checked")
        assert result.exit_code == 0, result.output
    items = {d.item: d for d in adj.load(run).decisions}
    assert set(items) == {("verdict", system, task, "C-002", "xai"), ("criterion", system, task, "C-001"),
                          ("flag", system, task, "0")}
    assert items[("flag", system, task, "0")].materiality == "minor"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--flag-index", "99", "--decision", "upheld"], "no such flag in the current grading (its flags: 0"),
        (["--flag-index", "0", "--decision", "pass"], "a flag decision is one of materiality, overturned, upheld"),
        (["--flag-index", "0", "--decision", "materiality"], "needs materiality (material or minor)"),
    ],
)
def test_a_decision_that_names_no_item_or_breaks_a_rule_is_refused_and_nothing_is_recorded(
    run: str, args: list[str], message: str
) -> None:
    system, task = _flagged()
    result = _invoke(run, "--kind", "flag", "--system", system, "--task", task, *args, "--reviewer", "Ada",
                     "--reason", "x")
    assert result.exit_code == 1
    assert message in _flat(result.output)
    assert adj.load(run).decisions == []


def test_a_decision_on_an_incomplete_grading_is_refused_because_it_is_regraded_not_adjudicated(run: str) -> None:
    system, task = INCOMPLETE
    result = _invoke(run, "--kind", "criterion", "--system", system, "--task", task, "--criterion", "C-001",
                     "--decision", "pass", "--reviewer", "Ada", "--reason", "x")
    assert result.exit_code == 1
    assert "is incomplete (an incomplete grading is regraded, not adjudicated)" in _flat(result.output)


def test_a_missing_reviewer_or_reason_is_refused_naming_the_option(run: str) -> None:
    system, task = _flagged()
    result = _invoke(run, "--kind", "flag", "--system", system, "--task", task, "--flag-index", "0",
                     "--decision", "upheld", "--reason", "x")
    assert result.exit_code == 1
    assert "--reviewer: Field required" in _flat(result.output)


def test_file_and_single_decision_options_together_are_a_usage_error(run: str, tmp_path: Path) -> None:
    result = _invoke(run, "--file", str(tmp_path / "d.csv"), "--kind", "flag")
    assert result.exit_code == 2
    assert "--kind cannot be given with it" in _flat(result.output.replace("│", " "))


def _rows() -> list[dict[str, Any]]:
    system, task = _flagged()
    return [
        {"kind": "flag", "system": system, "task_id": task, "flag_index": 0, "decision": "overturned",
         "reviewer": "Ada", "reason": "in the lease, page 4"},
        {"kind": "verdict", "system": system, "task_id": task, "criterion_id": "C-003", "judge": "openai",
         "decision": "fail", "reviewer": "Bo", "reason": "misses the cap"},
        {"kind": "criterion", "system": "grok-weak", "task_id": TASKS[1], "criterion_id": "C-001",
         "decision": "pass", "reviewer": "Bo", "reason": "states the price", "decided_at": "2026-11-30T10:00:00Z"},
    ]


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    fields = ["kind", "system", "task_id", "flag_index", "criterion_id", "judge", "decision", "materiality",
              "reviewer", "reason", "decided_at"]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_an_imported_file_records_every_row_and_prints_each(run: str, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"decisions.{suffix}"
    if suffix == "csv":
        _write_csv(path, _rows())
    else:
        path.write_text("\n".join(json.dumps(r) for r in _rows()) + "\n", encoding="utf-8")
    result = _invoke(run, "--file", str(path))
    assert result.exit_code == 0, result.output
    out = _flat(result.output)
    assert result.output.count("\nrecorded ") + result.output.startswith("recorded ") == 3
    assert "3 decision(s) recorded in run-test" in out
    loaded = adj.load(run)
    assert loaded.problems == []
    assert sorted((d.kind, d.reviewer) for d in loaded.decisions) == [("criterion", "Bo"), ("flag", "Ada"),
                                                                       ("verdict", "Bo")]
    kept_time = next(d for d in loaded.decisions if d.kind == "criterion")
    assert kept_time.decided_at.isoformat() == "2026-11-30T10:00:00+00:00"


def test_bad_rows_of_an_import_are_each_named_by_file_and_row_and_nothing_is_recorded(run: str, tmp_path: Path) -> None:
    rows = _rows()
    rows[1] = {**rows[1], "decision": "upheld"}  # a verdict is pass or fail
    rows[2] = {**rows[2], "reviewer": ""}
    path = tmp_path / "decisions.csv"
    _write_csv(path, rows)
    result = _invoke(run, "--file", str(path))
    assert result.exit_code == 1
    out = _flat(result.output)
    assert f"{path}: row 2: " in out and "a verdict decision is one of fail, pass" in out
    assert "row 3: reviewer: Field required" in out
    assert "row 1" not in out
    assert adj.load(run).decisions == []


def test_rows_naming_no_item_of_the_run_are_named_and_nothing_is_recorded(run: str, tmp_path: Path) -> None:
    rows = _rows()
    rows[0] = {**rows[0], "flag_index": 42}
    rows[2] = {**rows[2], "system": "no-such-system"}
    path = tmp_path / "decisions.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    result = _invoke(run, "--file", str(path))
    assert result.exit_code == 1
    out = _flat(result.output)
    assert f"{path}: row 1: flag" in out and "no such flag in the current grading" in out
    assert "row 3: criterion no-such-system/" in out and "has no submission no-such-system::" in out
    assert "row 2" not in out
    assert adj.load(run).decisions == []


def test_a_jsonl_line_that_is_not_json_is_named_by_line(run: str, tmp_path: Path) -> None:
    path = tmp_path / "decisions.jsonl"
    path.write_text(json.dumps(_rows()[0]) + "\n{not json\n", encoding="utf-8")
    result = _invoke(run, "--file", str(path))
    assert result.exit_code == 1
    assert f"{path}: line 2: not JSON" in _flat(result.output)


def test_a_missing_decisions_file_is_named(run: str, tmp_path: Path) -> None:
    result = _invoke(run, "--file", str(tmp_path / "nope.csv"))
    assert result.exit_code == 1
    assert f"{tmp_path / 'nope.csv'}: decisions file not found" in _flat(result.output)


@pytest.mark.s3
def test_decisions_are_recorded_into_an_s3_run(s3_server: str, tmp_path: Path) -> None:
    local = tmp_path / "run"
    build_run(str(local), TRUTH, RunSpec())
    bucket = create_bucket(s3_server)
    upload_tree(s3_server, local, bucket, "runs/run-test")
    uri = f"s3://{bucket}/runs/run-test"
    path = tmp_path / "decisions.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _rows()), encoding="utf-8")
    result = _invoke(uri, "--file", str(path), "--endpoint-url", s3_server)
    assert result.exit_code == 0, result.output
    assert f"-> s3://{bucket}/runs/run-test/adjudications/" in result.output.replace("\n", "")
    loaded = adj.load(uri, s3_server)
    assert len(loaded.decisions) == 3 and loaded.problems == []


# -- a decisions file as strict about identity as a sweep is about its inputs (issue 43) -------------

FIELDS = ["kind", "system", "task_id", "flag_index", "criterion_id", "judge", "decision", "materiality",
          "reviewer", "reason", "decided_at"]


def _spreadsheet_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """What a spreadsheet in a `;` locale saves: a byte-order mark, `;` between fields, CRLF."""
    lines = [";".join(FIELDS)] + [";".join(str(r.get(f, "")) for f in FIELDS) for r in rows]
    path.write_bytes("\ufeff".encode() + "\r\n".join(lines).encode() + b"\r\n")


def test_a_csv_saved_by_a_spreadsheet_with_bom_crlf_and_semicolons_is_imported(run: str, tmp_path: Path) -> None:
    path = tmp_path / "decisions.csv"
    _spreadsheet_csv(path, _rows())
    result = _invoke(run, "--file", str(path))
    assert result.exit_code == 0, result.output
    assert "3 decision(s) recorded in run-test" in _flat(result.output)
    assert sorted(d.reason for d in adj.load(run).decisions) == ["in the lease, page 4", "misses the cap",
                                                                 "states the price"]


def test_a_csv_whose_header_names_no_field_is_refused_naming_the_header_not_a_missing_kind(
    run: str, tmp_path: Path
) -> None:
    path = tmp_path / "decisions.csv"
    path.write_text("Kind|System|Task\nflag|s|t\n", encoding="utf-8")
    result = _invoke(run, "--file", str(path))
    assert result.exit_code == 1
    out = _flat(result.output)
    assert f"{path}: the header row names no decision field ('Kind|System|Task')" in out
    assert "Field required" not in out


def test_a_csv_reason_longer_than_csv_allows_is_a_clean_file_reason_not_a_traceback(run: str, tmp_path: Path) -> None:
    rows = _rows()
    rows[1] = {**rows[1], "reason": "y" * 200_000}
    path = tmp_path / "decisions.csv"
    _write_csv(path, rows)
    result = _invoke(run, "--file", str(path))
    assert result.exit_code == 1 and result.exception is None or isinstance(result.exception, SystemExit)
    assert (f"{path}: row 2: not readable as CSV (a field is longer than {decision_files.MAX_CSV_FIELD_CHARS:,} characters "
            f"(a reason may have {adj.MAX_REASON_CHARS:,}))") in _flat(result.output)
    assert adj.load(run).decisions == []


def test_a_folder_named_like_a_decisions_file_is_a_clean_file_reason(run: str, tmp_path: Path) -> None:
    folder = tmp_path / "somedir.csv"
    folder.mkdir()
    result = _invoke(run, "--file", str(folder))
    assert result.exit_code == 1
    assert f"{folder}: a folder, not a decisions file" in _flat(result.output)


def test_a_decision_id_with_a_path_in_it_is_refused_and_nothing_is_written_anywhere(run: str, tmp_path: Path) -> None:
    rows = _rows()
    rows[2] = {**rows[2], "decision_id": "../../escaped"}
    path = tmp_path / "decisions.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    before = sorted(p for p in tmp_path.rglob("*"))
    result = _invoke(run, "--file", str(path))
    assert result.exit_code == 1
    assert f"{path}: row 3: decision_id: '../../escaped' may hold only letters, digits, '-' and '_'" in _flat(result.output)
    assert sorted(p for p in tmp_path.rglob("*")) == before  # no folder made, no file outside (or inside) the run


def test_a_row_whose_id_is_taken_leaves_no_earlier_row_written(run: str, tmp_path: Path) -> None:
    first = tmp_path / "first.jsonl"
    first.write_text(json.dumps({**_rows()[0], "decision_id": "d-1"}), encoding="utf-8")
    assert _invoke(run, "--file", str(first)).exit_code == 0
    second = tmp_path / "second.jsonl"
    second.write_text("\n".join(json.dumps(r) for r in [_rows()[1], {**_rows()[2], "decision_id": "d-1"}]),
                      encoding="utf-8")
    result = _invoke(run, "--file", str(second))
    assert result.exit_code == 1
    assert "a decision with id 'd-1' already exists" in _flat(result.output)
    assert [d.decision_id for d in adj.load(run).decisions] == ["d-1"]


def test_a_row_dated_in_the_future_is_refused(run: str, tmp_path: Path) -> None:
    rows = _rows()
    rows[2] = {**rows[2], "decided_at": "2099-01-01T00:00:00Z"}
    path = tmp_path / "decisions.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    result = _invoke(run, "--file", str(path))
    assert result.exit_code == 1
    assert f"{path}: row 3: decided_at 2099-01-01T00:00:00+00:00 is in the future" in _flat(result.output)
    assert adj.load(run).decisions == []


def test_a_row_of_another_run_or_of_a_replaced_grading_is_refused(run: str, tmp_path: Path) -> None:
    for k, change, message in [(0, {"run_id": "run-other"}, "row 1: recorded for run run-other, not run-test"),
                               (1, {"grading_id": "g-replaced"}, "row 2: verdict ")]:
        rows = _rows()
        rows[k] = {**rows[k], **change}
        path = tmp_path / "decisions.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
        result = _invoke(run, "--file", str(path))
        assert result.exit_code == 1
        out = _flat(result.output)
        assert f"{path}: {message}" in out
        assert k == 0 or "made on grading g-replaced, but the current grading of" in out
        assert adj.load(run).decisions == []


def test_a_recorded_decision_names_the_grading_and_the_claim_it_was_made_on(run: str) -> None:
    from jobs.review.queue import RunData

    system, task = _flagged()
    result = _invoke(run, "--kind", "flag", "--system", system, "--task", task, "--flag-index", "0",
                     "--decision", "overturned", "--reviewer", "Ada", "--reason", "checked")
    assert result.exit_code == 0, result.output
    [d] = adj.load(run).decisions
    data = RunData(run)
    gid = data.grading_of(system, task)
    assert d.grading_id == gid is not None and d.recorded_at is not None
    spans = dict(zip(*(data.grading_rows(gid).flags.column(c).to_pylist() for c in ("flag_index", "span")), strict=True))
    assert d.claim_hash == adj.claim_hash(spans[0])
