"""Calibration: a run built from a known truth, with planted judge and auditor errors, is
calibrated against labels, and every figure is checked against a count made here from the truth."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.results.calibrate import Calibration, calibrate_tables, judges_table
from evalcore.results.labels import Labels, labels_from_rows, load_labels
from evalcore.results.leaderboard import ALL_AREAS
from evalcore.storage.store import RunRecord, read_table
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

LENIENT = {"xai": "anthropic"}  # the xAI judge passes every criterion of claude-* systems


def _labels(truth: dict[str, Any]) -> Labels:
    rows: list[tuple[str, dict[str, Any]]] = []
    for system, tasks in truth["verdicts"].items():
        for task_id, crits in tasks.items():
            for cid, v in crits.items():
                rows.append(("t", {"type": "verdict", "system": system, "task_id": task_id, "criterion_id": cid,
                                   "verdict": v}))
    rows += [("t", {"type": "hallucination", **h}) for h in truth["hallucinations"]]
    return labels_from_rows("truth", rows)


def _calibrate(run: Path, labels: Labels) -> Calibration:
    tables = {n: read_table(str(run), n) for n in ("submissions", "verdicts", "flags")}
    return calibrate_tables(RunRecord.read(str(run)), labels, **tables)


def _audited(truth: dict[str, Any], system: str, task_id: str) -> bool:
    """Audited iff some judge passes everything: the truth does, or the lenient xAI judge on claude."""
    return system.startswith("claude") or all(v == "pass" for v in truth["verdicts"][system][task_id].values())


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Calibration, dict[str, Any], dict[str, Any]]:
    truth = synthetic_ground_truth(seed=11, n_tasks=12, n_criteria=5)
    labels_truth = copy.deepcopy(truth)
    run_truth = copy.deepcopy(truth)
    # the run's auditor misses one real hallucination of an audited submission, and confirms one unreal one
    missed = next(h for h in truth["hallucinations"] if _audited(truth, h["system"], h["task_id"]))
    run_truth["hallucinations"].remove(missed)
    run_truth["hallucinations"].append({**missed, "span": "The rent is payable in gold bullion.",
                                        "category": "fabricated_source", "materiality": "minor"})
    run = tmp_path_factory.mktemp("cal") / "run"
    build_run(str(run), run_truth, RunSpec(lenient=LENIENT, bootstrap_samples=300))
    return _calibrate(run, _labels(labels_truth)), truth, missed


def test_judges_that_follow_the_experts_have_accuracy_1_kappa_1_and_no_false_verdicts(planted: Any) -> None:
    cal, _, _ = planted
    for r in cal.judges:
        if r.judge != "xai":
            assert (r.accuracy.value, r.kappa.value, r.false_pass_rate.value or 0.0, r.false_fail_rate.value) == (
                1.0, 1.0, 0.0, 0.0), (r.judge, r.area)


def test_a_lenient_judge_has_false_passes_exactly_on_the_family_it_favours(planted: Any) -> None:
    cal, truth, _ = planted
    items = [(s, t, v) for s, ts in truth["verdicts"].items() for t, cs in ts.items() for v in cs.values()]
    fails = [(s, t) for s, t, v in items if v == "fail"]
    favoured = [(s, t) for s, t in fails if s.startswith("claude")]
    xai = next(r for r in cal.judges if r.judge == "xai" and r.area == ALL_AREAS)
    assert xai.items == len(items)
    assert xai.expert_fails == len(fails)
    assert xai.false_pass_rate.value == pytest.approx(len(favoured) / len(fails))
    assert xai.false_fail_rate.value == 0.0
    assert xai.accuracy.value == pytest.approx(1 - len(favoured) / len(items))
    assert xai.kappa.value is not None and xai.kappa.value < 1.0
    assert xai.kappa.low is not None and xai.kappa.high is not None and xai.kappa.low <= xai.kappa.value <= xai.kappa.high
    by_area = {r.area: r for r in cal.judges if r.judge == "xai" and r.area != ALL_AREAS}
    assert sum(r.items for r in by_area.values()) == len(items)
    for area, r in by_area.items():
        area_fails = [(s, t) for s, t in fails if t.startswith(area + "/")]
        expected = sum(s.startswith("claude") for s, _ in area_fails) / len(area_fails) if area_fails else None
        assert r.false_pass_rate.value == (pytest.approx(expected) if expected is not None else None)


def test_panel_error_is_the_lenient_judges_third_on_the_submissions_it_wrongly_passes(planted: Any) -> None:
    cal, truth, _ = planted
    subs = [(s, t) for s, ts in truth["verdicts"].items() for t in ts]
    expert_fail = {k: any(v == "fail" for v in truth["verdicts"][k[0]][k[1]].values()) for k in subs}
    wrong = [k for k in subs if k[0].startswith("claude") and expert_fail[k]]
    assert cal.panel.submissions == len(subs)
    assert cal.panel.expert_all_pass == sum(not f for f in expert_fail.values())
    assert cal.panel.task_score_error.value == pytest.approx(len(wrong) / 3 / len(subs))
    assert cal.panel.judge_error["xai"].value == pytest.approx(len(wrong) / len(subs))
    assert cal.panel.judge_error["openai"].value == 0.0
    # the lenient judge is outvoted: the panel's majority all-pass is the experts'
    assert cal.panel.majority_error.value == 0.0
    # two perfect judges: the panel's sum is worse than the best single judge here
    assert cal.panel.panel_minus_best_judge.value == pytest.approx(len(wrong) / 3 / len(subs))


def test_auditor_precision_and_recall_count_the_missed_and_the_unreal_flag(planted: Any) -> None:
    cal, truth, missed = planted
    audited_labels = [h for h in truth["hallucinations"] if _audited(truth, h["system"], h["task_id"])]
    a = cal.auditor
    assert a.labelled == len(audited_labels)
    assert a.found == len(audited_labels) - 1
    assert a.recall.value == pytest.approx((len(audited_labels) - 1) / len(audited_labels))
    assert a.confirmed == len(audited_labels)  # one missed, one unreal added
    assert a.precision.value == pytest.approx((len(audited_labels) - 1) / len(audited_labels))
    assert a.not_audited == len(truth["hallucinations"]) - len(audited_labels)
    assert a.materiality[missed["materiality"]]["missed"] == 1
    assert a.materiality["not real"] == {"material": 0, "minor": 1}
    assert a.stage2_confirmed_not_real == 1
    # the builder's auditor rejects one unreal "general law" flag per audited submission
    assert a.stage2_rejected_not_real == a.audited_submissions and a.stage2_rejected_real == 0
    fab = next(c for c in a.by_category if c.category == "fabricated_source")
    assert fab.true == fab.confirmed - 1


def test_judge_rows_flatten_to_a_parquet_table_with_intervals(planted: Any) -> None:
    cal, _, _ = planted
    table = judges_table(cal.judges)
    assert table.num_rows == len(cal.judges)
    assert {"accuracy", "accuracy_low", "kappa_high", "false_pass_rate_n"} <= set(table.column_names)


def test_the_sample_ground_truth_calibrates_a_run_built_from_it_perfectly(tmp_path: Path) -> None:
    sample = Path(__file__).resolve().parents[3] / "examples" / "sample" / "ground_truth.json"
    import json

    truth = json.loads(sample.read_text())
    build_run(str(tmp_path / "run"), truth, RunSpec(bootstrap_samples=200))
    cal = _calibrate(tmp_path / "run", load_labels(str(sample)))
    assert cal.labelled_submissions == cal.matched_submissions == 32
    assert all(r.accuracy.value == 1.0 for r in cal.judges)
    assert cal.auditor.recall.value == 1.0 and cal.auditor.precision.value == 1.0


_STATUSES = ("confirmed", "rejected", "merged")


@settings(max_examples=40, deadline=None)
@given(flags=st.lists(st.tuples(st.sampled_from(_STATUSES), st.sampled_from(("none", "upheld", "overturned"))),
                      min_size=1, max_size=8))
def test_review_labels_score_exactly_the_reviewed_confirmed_flags_an_overturn_being_a_false_positive(
    flags: list[tuple[str, str]],
) -> None:
    """Labels from review decisions are not exhaustive: a confirmed flag is true when upheld, a false
    positive when overturned, and not scored at all when nobody reviewed it — whatever the spans say
    (every flag here has the same span, so span matching would call them all one claim)."""
    from evalcore.config.load import load_config
    from evalcore.results.labels import FalseFlagLabel, HallucinationLabel, VerdictLabel
    from tests.runfolder import test_record

    record = test_record("r", load_config(vendors="offline", overrides={"bootstrap_samples": 50}))
    submissions = pa.Table.from_pylist([{
        "grading_id": "g", "submission_id": "s::t", "system": "s", "task_id": "t", "area": "a", "status": "complete",
        "n_criteria": 1, "task_score": 1.0, "audited": True, "graded_at": 1.0}])
    rows = [{"grading_id": "g", "flag_index": i, "deliverable": "memo", "span": "The term is 5 years.",
             "category": "contradiction", "status": status, "materiality": "material" if status == "confirmed" else None}
            for i, (status, _) in enumerate(flags)]
    halls = [HallucinationLabel(system="s", task_id="t", deliverable="memo", span="The term is 5 years.",
                                category="contradiction", materiality="material", flag_index=i)
             for i, (status, review) in enumerate(flags) if review == "upheld" and status != "merged"]
    false = [FalseFlagLabel(system="s", task_id="t", flag_index=i)
             for i, (status, review) in enumerate(flags) if review == "overturned" and status != "merged"]
    reviewed_verdict = VerdictLabel(system="s", task_id="t", criterion_id="C-1", verdict="pass")  # labelled anyway
    labels = Labels(source="review", verdicts=[reviewed_verdict], hallucinations=halls, false_flags=false,
                    exhaustive=False)
    a = calibrate_tables(record, labels, submissions=submissions, flags=pa.Table.from_pylist(rows)).auditor
    confirmed = [review for status, review in flags if status == "confirmed"]
    assert a.confirmed == sum(r != "none" for r in confirmed)
    assert a.true_confirmed == confirmed.count("upheld")
    assert a.stage2_confirmed_not_real == confirmed.count("overturned")
    assert a.not_reviewed == confirmed.count("none")
    assert a.found == confirmed.count("upheld") and a.labelled == len(halls)
