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
    decisions = [adj.Adjudication(run_id="run-test", kind="verdict", system=v["system"], task_id=v["task_id"],
                                  criterion_id=v["criterion_id"], judge=v["judge"], decision="pass",
                                  reviewer="Ada", reason="met", queue="sample") for v in verdicts[:3]]
    decisions += [adj.Adjudication(run_id="run-test", kind="flag", system=f["system"], task_id=f["task_id"],
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


def _flag_decision(flag: dict[str, object], decision: str, materiality: str | None = None) -> adj.Adjudication:
    return adj.Adjudication(run_id="run-test", kind="flag", system=str(flag["system"]), task_id=str(flag["task_id"]),
                            flag_index=int(str(flag["flag_index"])), decision=decision,  # type: ignore[arg-type]
                            materiality=materiality, reviewer="Ada", reason="checked", queue="material")  # type: ignore[arg-type]


def test_from_decisions_an_overturned_flag_is_a_false_positive_and_an_unreviewed_flag_is_never_scored(
    run: Path,
) -> None:
    """Three decisions on three submissions: one flag overturned (the auditor's false positive,
    counted in precision), one material flag made minor (a materiality label), one verdict. The
    other confirmed flags of those submissions were never reviewed: they are neither right nor wrong."""
    flags = read_table(str(run), "flags").to_pylist()
    confirmed = [f for f in flags if f["status"] == "confirmed"]
    per_sub: dict[tuple[str, str], list[dict[str, object]]] = {}
    for f in confirmed:
        per_sub.setdefault((f["system"], f["task_id"]), []).append(f)
    overturned = next(fs[0] for fs in per_sub.values() if len(fs) >= 2)  # its submission keeps an unreviewed flag
    made_minor = next(f for f in confirmed if f["materiality"] == "material"
                      and (f["system"], f["task_id"]) != (overturned["system"], overturned["task_id"]))
    covered = {(overturned["system"], overturned["task_id"]), (made_minor["system"], made_minor["task_id"])}
    verdict = next(v for v in read_table(str(run), "verdicts").to_pylist() if (v["system"], v["task_id"]) not in covered)
    adj.record_all(str(run), [
        _flag_decision(overturned, "overturned"), _flag_decision(made_minor, "materiality", "minor"),
        adj.Adjudication(run_id="run-test", kind="verdict", system=verdict["system"], task_id=verdict["task_id"],
                         criterion_id=verdict["criterion_id"], judge=verdict["judge"], decision=verdict["verdict"],
                         reviewer="Ada", reason="right", queue="sample"),
    ])
    cal = calibrate_run(str(run), None)
    assert cal.labelled_submissions == cal.matched_submissions == 3  # 3 decisions on 3 submissions
    a = cal.auditor
    assert (a.confirmed, a.true_confirmed, a.stage2_confirmed_not_real) == (2, 1, 1)  # precision 1 of 2
    assert a.precision.value == 0.5
    assert a.materiality["minor"]["material"] == 1  # the expert said minor, the auditor material
    assert sum(a.materiality["not real"].values()) == 1
    verdict_sub = (verdict["system"], verdict["task_id"])
    unreviewed = sum(len(per_sub.get(k, [])) for k in (*covered, verdict_sub)) - 2
    assert unreviewed >= 1 and a.not_reviewed == unreviewed
    assert any(f"{unreviewed} confirmed flag(s)" in n and "not scored" in n for n in cal.notes)
    assert any("on 3 submission(s)" in n for n in cal.notes)
    # an upheld flag is its own label: a recall over review labels would be 100 % by construction
    assert not a.recall_measured and a.recall.value == 1.0
    out = CliRunner().invoke(app, ["calibrate", str(run)], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "Stage 1 recall not measured" in out.output and "100.0%" not in out.output.split("Auditor on")[1]
