"""Issue 4's acceptance: with the emulators answering from the sample's ground truth (a scripted
responder), grading the whole sample through the real SDK clients reproduces exactly the scores
computed independently from the ground truth, and so does the leaderboard reduced from the rows."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from doubles.emulators._set import EmulatorSet
from doubles.emulators.ground_truth import ground_truth_responder
from doubles.emulators.serve import point_at_emulators
from doubles.synth.ground_truth import GroundTruth, expected_leaderboard, expected_scores, load_ground_truth
from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.results.reduce import reduce_tables
from evalcore.storage.store import TABLE_MODELS, RunRecord, read_table, write_shard
from evalcore.submissions.loader import load_submissions
from evalcore.vendors.registry import create_vendor
from tests.runfolder import test_record

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample"


@pytest.fixture(scope="module")
def graded() -> tuple[GroundTruth, list[GradeResult], Any]:
    gt = load_ground_truth(SAMPLE / "ground_truth.json")
    bench = load_benchmark(str(SAMPLE))
    tasks = bench.task_map()
    subs = load_submissions(str(SAMPLE / "submissions"), tasks).submissions
    owner = {d.text: (s.system, s.task_id) for s in subs for d in s.deliverables.values() if not d.missing}

    async def run() -> list[GradeResult]:
        async with EmulatorSet(responder=ground_truth_responder(gt, owner)) as emus:
            cfg = point_at_emulators(load_config(vendors="real"), emus.endpoints())
            vendors = {v.name: create_vendor(v) for v in cfg.vendors()}
            try:
                return await asyncio.gather(*(
                    grade_submission(tasks[s.task_id], s, cfg, vendors, run_id="gt") for s in subs
                ))
            finally:
                for v in vendors.values():
                    await v.aclose()

    return gt, asyncio.run(run()), bench


def test_grading_the_sample_reproduces_every_ground_truth_score(graded) -> None:
    gt, results, _ = graded
    expected = expected_scores(gt)
    assert len(results) == len(expected) == 32
    for r in results:
        row = r.row
        exp = expected[(row.system, row.task_id)]
        assert row.status == "complete", row.status_reason
        got = (row.task_score, row.all_pass_judges, row.criterion_pass_rate, row.near_pass_1, row.near_pass_2,
               row.audited, row.material_flags, row.minor_flags, row.gated, row.hc_score)
        want = (exp.task_score, exp.all_pass_judges, pytest.approx(exp.criterion_pass_rate), exp.near_pass_1,
                exp.near_pass_2, exp.audited, exp.material_flags, exp.minor_flags, exp.gated, exp.hc_score)
        assert got == want, row.submission_id


def test_unaudited_submissions_sent_no_audit_call_and_have_no_flags(graded) -> None:
    _, results, _ = graded
    for r in results:
        purposes = {c.purpose for c in r.calls}
        if r.row.audited:
            assert "detect" in purposes
        else:
            assert purposes == {"rubric"} and r.flags == []


def test_leaderboard_reduced_from_the_rows_matches_ground_truth(graded, tmp_path) -> None:
    gt, results, bench = graded
    run = str(tmp_path / "gt")
    test_record("gt", load_config(), [{"id": t.id, "area": t.area, "n_criteria": len(t.criteria)} for t in bench.tasks],
                uri=str(SAMPLE)).write(run)
    write_shard(run, "part-000000-all", {
        "submissions": [r.submission for r in results],
        "verdicts": [v for r in results for v in r.verdicts],
        "flags": [f for r in results for f in r.flags],
        "calls": [c for r in results for c in r.calls],
    })
    lb = reduce_tables(RunRecord.read(run), **{t: read_table(run, t) for t in TABLE_MODELS})
    expected = expected_leaderboard(gt)
    assert {s.system for s in lb.systems} == set(expected)
    for s in lb.systems:
        e = expected[s.system]
        assert s.scored == e.n_tasks and s.missing == 0 and s.incomplete == 0
        assert s.hc_pass_rate.value == pytest.approx(e.hc_pass_rate)
        assert s.all_pass_rate.value == pytest.approx(e.all_pass_rate)
        assert s.criterion_pass_rate.value == pytest.approx(e.criterion_pass_rate)
        assert s.near_pass_1.value == pytest.approx(e.near_pass_1)
        assert s.near_pass_2.value == pytest.approx(e.near_pass_2)
        assert s.audited == e.audited_tasks
        assert (s.material_per_task.value or 0.0) == pytest.approx(e.material_per_audited_task)
        assert (s.minor_per_task.value or 0.0) == pytest.approx(e.minor_per_audited_task)
        assert (s.lost_to_gate.value or 0.0) == pytest.approx(e.passing_lost_to_gate)
    assert lb.judges.fleiss_kappa == pytest.approx(1.0)  # the scripted judges agree perfectly
