"""doubles.synth.ground_truth: loading with actionable errors, queries, and the independent expected scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doubles.synth.ground_truth import (
    GroundTruth,
    expected_leaderboard,
    expected_scores,
    load_ground_truth,
    span_problems,
)
from evalcore.errors import BenchmarkError

SAMPLE_TRUTH = Path(__file__).resolve().parents[3] / "examples" / "sample" / "ground_truth.json"


def _truth(verdicts: dict, hallucinations: list | None = None, **extra) -> GroundTruth:
    return GroundTruth.model_validate(
        {"benchmark": "t", "verdicts": verdicts, "hallucinations": hallucinations or [], **extra}
    )


def _hall(system: str, task: str, materiality: str, span: str = "x") -> dict:
    return {
        "system": system,
        "task_id": task,
        "deliverable": "memo",
        "span": span,
        "category": "contradiction",
        "materiality": materiality,
        "kind": "date",
    }


# ------------------------------------------------------------------ loading


def test_the_sample_ground_truth_loads_and_lists_its_submissions() -> None:
    gt = load_ground_truth(SAMPLE_TRUTH)
    assert gt.benchmark == "sample"
    assert len(gt.submissions()) == len(gt.systems) * len(gt.task_ids())


def test_a_missing_file_is_reported_by_name(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkError, match="not found") as err:
        load_ground_truth(tmp_path / "nope.json")
    assert err.value.file.endswith("nope.json")


def test_invalid_json_is_reported_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "gt.json"
    path.write_text('{"benchmark": "x",\n "verdicts": {,}}')
    with pytest.raises(BenchmarkError, match="line 2 column"):
        load_ground_truth(path)


def test_a_verdict_other_than_pass_or_fail_names_its_location(tmp_path: Path) -> None:
    path = tmp_path / "gt.json"
    path.write_text(json.dumps({"benchmark": "x", "verdicts": {"s": {"t": {"C-001": "maybe"}}}}))
    with pytest.raises(BenchmarkError, match=r"verdicts\.s\.t\.C-001"):
        load_ground_truth(path)


def test_a_hallucination_of_a_submission_without_verdicts_is_rejected() -> None:
    with pytest.raises(ValueError, match="other::t"):
        _truth({"s": {"t": {"C-001": "pass"}}}, [_hall("other", "t", "minor")])


def test_dump_then_load_round_trips(tmp_path: Path) -> None:
    gt = load_ground_truth(SAMPLE_TRUTH)
    gt.dump(tmp_path / "copy.json")
    assert load_ground_truth(tmp_path / "copy.json") == gt


# ------------------------------------------------------------------ queries


def test_verdict_lookup_and_its_error_name_the_submission() -> None:
    gt = _truth({"s": {"t": {"C-001": "fail"}}})
    assert gt.verdict("s", "t", "C-001") == "fail"
    with pytest.raises(KeyError, match="s::t C-009"):
        gt.verdict("s", "t", "C-009")


def test_hallucinations_for_returns_only_that_submission() -> None:
    gt = _truth(
        {"a": {"t": {"C-001": "pass"}, "u": {"C-001": "pass"}}, "b": {"t": {"C-001": "pass"}}},
        [_hall("a", "t", "minor", "one"), _hall("a", "u", "minor", "two"), _hall("b", "t", "minor", "three")],
    )
    assert [h.span for h in gt.hallucinations_for("a", "t")] == ["one"]


def test_span_problems_names_a_span_missing_from_its_deliverable() -> None:
    gt = _truth({"s": {"t": {"C-001": "pass"}}}, [_hall("s", "t", "minor", "March 3, 2026")])
    assert span_problems(gt, {("s", "t", "memo"): "dated March 3, 2026."}) == []
    problems = span_problems(gt, {("s", "t", "memo"): "dated 3 March 2026."})
    assert len(problems) == 1 and "March 3, 2026" in problems[0]


# ------------------------------------------------------------------ expected scores (the rules)


def test_all_criteria_passing_scores_one_and_a_minor_hallucination_is_reported_not_gated() -> None:
    gt = _truth({"s": {"t": {"C-001": "pass", "C-002": "pass"}}}, [_hall("s", "t", "minor")])
    score = expected_scores(gt)[("s", "t")]
    assert (score.task_score, score.all_pass_judges, score.hc_score) == (1.0, 3, 1.0)
    assert (score.audited, score.minor_flags, score.material_flags, score.gated) == (True, 1, 0, False)


def test_a_material_hallucination_gates_a_passing_submission_to_zero() -> None:
    gt = _truth({"s": {"t": {"C-001": "pass"}}}, [_hall("s", "t", "material")])
    score = expected_scores(gt)[("s", "t")]
    assert score.gated and score.hc_score == 0.0 and score.task_score == 1.0


def test_a_failing_submission_is_not_audited_and_its_hallucinations_are_not_counted() -> None:
    gt = _truth({"s": {"t": {"C-001": "pass", "C-002": "fail"}}}, [_hall("s", "t", "material")])
    score = expected_scores(gt)[("s", "t")]
    assert (score.task_score, score.audited, score.material_flags, score.gated) == (0.0, False, 0, False)


def test_near_pass_counts_failed_criteria_against_one_and_two() -> None:
    def near(fails: int) -> tuple[float, float]:
        verdicts = {f"C-{i:03d}": ("fail" if i <= fails else "pass") for i in range(1, 6)}
        s = expected_scores(_truth({"s": {"t": verdicts}}))[("s", "t")]
        return s.near_pass_1, s.near_pass_2

    assert [near(k) for k in range(4)] == [(1.0, 1.0), (1.0, 1.0), (0.0, 1.0), (0.0, 0.0)]


def test_the_sample_leaderboard_matches_its_design() -> None:
    board = expected_leaderboard(load_ground_truth(SAMPLE_TRUTH))
    assert board["gpt-strong"].hc_pass_rate == 0.75
    assert board["claude-average"].hc_pass_rate == 0.375
    assert board["fluent-hallucinator"].hc_pass_rate == 0.25
    assert board["fluent-hallucinator"].all_pass_rate == 0.875
    assert board["grok-weak"].hc_pass_rate == 0.125


verdict_lists = st.lists(st.sampled_from(["pass", "fail"]), min_size=1, max_size=25)


@given(verdict_lists, st.lists(st.sampled_from(["material", "minor"]), max_size=4))
def test_scores_respect_the_methodology_properties(verdicts: list[str], materialities: list[str]) -> None:
    vmap = {f"C-{i:03d}": v for i, v in enumerate(verdicts, 1)}
    halls = [_hall("s", "t", m, f"span{i}") for i, m in enumerate(materialities)]
    score = expected_scores(_truth({"s": {"t": vmap}}, halls))[("s", "t")]
    assert score.task_score in (0.0, 1.0)
    assert score.hc_score <= score.task_score
    assert 0.0 <= score.criterion_pass_rate <= 1.0
    if not score.audited:
        assert score.material_flags == score.minor_flags == 0 and not score.gated
    assert score.near_pass_1 <= score.near_pass_2


@given(verdict_lists, st.data())
def test_turning_a_fail_into_a_pass_never_lowers_a_score(verdicts: list[str], data: st.DataObject) -> None:
    fails = [i for i, v in enumerate(verdicts) if v == "fail"]
    if not fails:
        return
    flip = data.draw(st.sampled_from(fails))
    after = list(verdicts)
    after[flip] = "pass"

    def score(vs: list[str]):
        return expected_scores(_truth({"s": {"t": {f"C-{i:03d}": v for i, v in enumerate(vs)}}}))[("s", "t")]

    before_s, after_s = score(verdicts), score(after)
    for field in ("task_score", "criterion_pass_rate", "near_pass_1", "near_pass_2", "hc_score"):
        assert getattr(after_s, field) >= getattr(before_s, field), field
