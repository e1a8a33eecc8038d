"""`tribunal show RUN --system S --task T` prints the grading the run holds for one submission (its
latest), read, not graded again: verdicts with reasoning, flags with evidence and page, scores, calls
and their cost, with the experts' decisions in force marked and applied; a missing system or task
is named with what the run has."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from evalcore.results import adjudications as adj
from evalcore.results.reduce import current_gradings
from evalcore.storage.store import read_table
from jobs.cli.app import app
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth


@pytest.fixture(scope="module")
def raw_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    truth = synthetic_ground_truth(seed=5, n_tasks=8, n_criteria=4)
    run = tmp_path_factory.mktemp("runs") / "run-show"
    system, task = "fluent-hallucinator", sorted(truth["verdicts"]["fluent-hallucinator"])[0]
    build_run(str(run), truth, RunSpec(run_id="run-show", superseded={(system, task)}))
    return run


def _gated(run: Path) -> tuple[str, str, str, dict[str, object]]:
    """A gated submission with exactly one confirmed material flag: (system, task, grading id, flag row)."""
    cur = current_gradings(read_table(str(run), "submissions"))
    flags = read_table(str(run), "flags").to_pylist()
    for row in cur.filter(pc.equal(cur.column("gated"), True)).to_pylist():
        material = [f for f in flags if f["grading_id"] == row["grading_id"] and f["status"] == "confirmed"
                    and f["materiality"] != "minor"]
        if len(material) == 1:
            return row["system"], row["task_id"], row["grading_id"], material[0]
    raise AssertionError("the planted run has a gated submission with one material flag")


def test_show_prints_the_stored_grading_with_the_decision_in_force_marked_and_applied(raw_run: Path, tmp_path: Path) -> None:
    run = tmp_path / raw_run.name
    shutil.copytree(raw_run, run)
    system, task, gid, flag = _gated(run)
    adj.record(str(run), adj.Adjudication(run_id="run-show", kind="flag", system=system, task_id=task,
                                          flag_index=int(flag["flag_index"]), decision="overturned",  # type: ignore[call-overload]
                                          reviewer="Ada", reason="the term is in the lease, clause 4"))
    narrow = CliRunner().invoke(app, ["show", str(run), "--system", system, "--task", task], env={"COLUMNS": "80"})
    assert narrow.exit_code == 0, narrow.output
    assert "…" not in narrow.output and gid in narrow.output
    result = CliRunner().invoke(app, ["show", str(run), "--system", system, "--task", task, "--format", "markdown"])
    assert result.exit_code == 0, result.output
    out = result.output  # markdown: every cell on its line, unwrapped
    assert str(flag["span"]) in out and f"{flag['evidence_document']}, {flag['evidence_page']}" in out
    assert "EXPERT overturned: counts as nothing (Ada," in out and "the term is in the lease, clause 4" in out
    verdicts = [v for v in read_table(str(run), "verdicts").to_pylist() if v["grading_id"] == gid]
    assert verdicts and all(v["reasoning"] in out for v in verdicts if v["reasoning"])
    assert "Scores as graded" in out and "Scores with the decisions in force (EXPERT)" in out
    as_json = CliRunner().invoke(app, ["show", str(run), "-s", system, "-t", task, "--json"], env={"COLUMNS": "80"})
    shown = json.loads(as_json.output)
    assert shown["grading_id"] == gid and shown["scores"]["gated"] is True
    # the overturned flag lifts the gate: the score in force is the task score (the reduction's rule)
    assert shown["scores_in_force"]["gated"] is False
    assert shown["scores_in_force"]["hc_score"] == pytest.approx(shown["scores"]["task_score"])
    calls = [c for c in read_table(str(run), "calls").to_pylist() if c["grading_id"] == gid]
    assert len(shown["calls"]) == len(calls) > 0
    assert shown["paid_usd"] == pytest.approx(sum(c["cost_usd"] for c in calls if c["reused_from"] is None))
    raw = json.loads(CliRunner().invoke(app, ["show", str(run), "-s", system, "-t", task, "--json",
                                             "--no-adjudications"]).output)
    assert raw["scores_in_force"] is None and all(f["decision"] is None for f in raw["flags"])


def test_show_reads_the_latest_grading_of_a_regraded_submission(raw_run: Path) -> None:
    task = sorted({t for t in read_table(str(raw_run), "submissions").column("task_id").to_pylist()})[0]
    result = CliRunner().invoke(app, ["show", str(raw_run), "-s", "fluent-hallucinator", "-t", task, "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    cur = current_gradings(read_table(str(raw_run), "submissions"))
    [gid] = [r["grading_id"] for r in cur.to_pylist() if r["system"] == "fluent-hallucinator" and r["task_id"] == task]
    assert shown["gradings"] == 2 and shown["grading_id"] == gid


def test_show_names_the_run_and_what_exists_when_the_system_or_task_is_missing(raw_run: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["show", str(raw_run), "-s", "gpt-7", "-t", "x"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    out = " ".join(result.output.split())
    assert f"{raw_run}: run run-show has no system 'gpt-7' (its systems: claude-average, fluent-hallucinator, " in out
    result = runner.invoke(app, ["show", str(raw_run), "-s", "grok-weak", "-t", "nowhere/task"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    out = " ".join(result.output.split())
    assert "run run-show has no submission of grok-weak to task 'nowhere/task' (grok-weak's tasks: " in out
