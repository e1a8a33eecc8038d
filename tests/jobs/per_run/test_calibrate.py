"""`tribunal calibrate`: adjudications are labels, labels that match nothing are refused, and no
calibration is ever overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from evalcore.errors import InputError
from evalcore.results import adjudications as adj
from evalcore.storage.store import read_table
from jobs.cli.app import app
from jobs.per_run.calibrate import calibrate_run, load_calibration
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth


@pytest.fixture()
def run(tmp_path: Path) -> Path:
    truth = synthetic_ground_truth(seed=3, n_tasks=9, n_criteria=3)
    out = tmp_path / "run-cal"
    build_run(str(out), truth, RunSpec())
    return out


def _decide(run: Path) -> None:
    verdicts = read_table(str(run), "verdicts").slice(0, 6).to_pylist()
    flags = read_table(str(run), "flags")
    confirmed = flags.filter(pc.equal(flags.column("status"), "confirmed")).slice(0, 2).to_pylist()
    decisions = [adj.Adjudication(run_id="r", kind="verdict", system=v["system"], task_id=v["task_id"],
                                  criterion_id=v["criterion_id"], judge=v["judge"], decision="pass",
                                  reviewer="Ada", reason="met", queue="sample") for v in verdicts[:3]]
    decisions += [adj.Adjudication(run_id="r", kind="flag", system=f["system"], task_id=f["task_id"],
                                   flag_index=f["flag_index"], decision=d, reviewer="Ada", reason="checked",
                                   queue="material")
                  for f, d in zip(confirmed, ("upheld", "overturned"), strict=False)]
    adj.record_all(str(run), decisions)


def test_the_runs_adjudications_are_the_labels_when_no_file_is_given(run: Path) -> None:
    _decide(run)
    cal = calibrate_run(str(run), None)
    assert cal.matched_submissions >= 1 and cal.labels.endswith("adjudications")
    assert any("seeded random sample" in n and "not unbiased" in n for n in cal.notes)
    assert any(j.items > 0 for j in cal.judges)
    only_sample = calibrate_run(str(run), None, sample_only=True)
    assert only_sample.auditor.labelled == 0  # the flag decisions came from the material-first queue


def test_calibrating_without_labels_or_adjudications_says_how_to_get_some(run: Path) -> None:
    with pytest.raises(InputError, match="no adjudications to calibrate against"):
        calibrate_run(str(run), None)


def test_labels_that_match_nothing_are_refused_and_nothing_is_written(run: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"type": "verdict", "system": "nobody", "task_id": "none/x", "criterion_id": "C-001",
                                  "verdict": "pass"}) + "\n")
    result = CliRunner().invoke(app, ["calibrate", str(run), "--labels", str(labels)], env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    assert "no label matches a complete grading" in result.output
    assert not list(run.glob("calibration*"))


def test_a_second_calibration_never_overwrites_the_first(run: Path) -> None:
    _decide(run)
    first = calibrate_run(str(run), None)
    body = (run / "calibration.json").read_bytes()
    second = calibrate_run(str(run), None, sample_only=True)
    assert (run / "calibration.json").read_bytes() == body
    assert (run / "calibration-0002.json").exists() and (run / "calibration-0002.parquet").exists()
    assert load_calibration(str(run)) == second != first


def test_calibrate_reports_each_entrys_truncation_rate_from_the_calls_table(run: Path) -> None:
    """A truncated attempt (its own paid row, retried once at a larger cap) is counted per vendor
    entry and purpose, and `tribunal calibrate` prints the rate with what those attempts cost."""
    from evalcore.storage.store import write_table_file

    calls = read_table(str(run), "calls").to_pylist()
    rubric = [c for c in calls if c["purpose"] == "rubric" and c["vendor"] == "anthropic" and not c["reused_from"]]
    truncated = [{**c, "outcome": "truncated", "error": "truncated output (stop_reason max_tokens)",
                  "grading_id": c["grading_id"], "cost_usd": 0.02} for c in rubric[:3]]
    write_table_file(str(run), "calls", "part-truncated-a0001", truncated)
    _decide(run)
    cal = calibrate_run(str(run), None)
    [rate] = [r for r in cal.truncation if r.vendor == "anthropic" and r.purpose == "rubric"]
    assert (rate.truncated, rate.calls) == (3, len(rubric)) and abs(rate.truncated_usd - 0.06) < 1e-9
    out = CliRunner().invoke(app, ["calibrate", str(run)], env={"COLUMNS": "160"})
    assert out.exit_code == 0, out.output
    assert "Answers stopped at their output-token cap" in out.output
    assert f"{100 * 3 / len(rubric):.1f}%" in out.output
