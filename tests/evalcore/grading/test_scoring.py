"""Every scoring rule of METHODOLOGY.md, tested under its own name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.grading.scoring import (
    AuditDone,
    AuditFailed,
    AuditMode,
    AuditNotRun,
    FlagOutcome,
    StageA,
    SubmissionScores,
    abstention_reason,
    all_pass,
    count_confirmed,
    counted_materiality,
    criterion_pass_rate,
    gate,
    is_passing,
    near_pass,
    score_panel,
    should_audit,
    task_score,
)
from evalcore.grading.scoring import score_submission as _score_submission
from evalcore.schema import FlagRow

verdict = st.sampled_from(["pass", "fail"])
JUDGES = ("openai", "xai", "anthropic")


@st.composite
def panels(draw: st.DrawFn, n_min: int = 1) -> dict[str, list[tuple[str, str, None]]]:
    n = draw(st.integers(min_value=n_min, max_value=12))
    return {
        j: [(f"C-{i:03d}", draw(verdict), None) for i in range(n)]
        for j in JUDGES
    }


def _flag(status: str, materiality: str | None, index: int = 0) -> FlagRow:
    return FlagRow(
        run_id="r", grading_id="g", submission_id="s::t", system="s", task_id="t", area="a", flag_index=index,
        deliverable="memo", span="x", location="l", category="contradiction", status=status,  # type: ignore[arg-type]
        materiality=materiality, auditor="auditor", auditor_model="m",  # type: ignore[arg-type]
    )


def score_submission(panel, flags):
    """The rules as the grading path applies them: a bare flag list is a finished audit, None no audit."""
    return _score_submission(score_panel(panel), AuditNotRun() if flags is None else AuditDone(flags))


flag = st.builds(
    _flag,
    status=st.sampled_from(["confirmed", "rejected", "merged"]),
    materiality=st.sampled_from(["material", "minor", None]),
)


def test_all_pass_requires_every_criterion_passed() -> None:
    assert all_pass(["pass", "pass"])
    assert not all_pass(["pass", "fail"])


def test_task_score_sums_judges_instead_of_majority_voting_criteria() -> None:
    # Judge 1 fails C1, judge 2 fails C2, judge 3 passes both: every criterion has a
    # 2-of-3 pass majority, yet only one judge passed everything.
    panel = {
        "a": [("C1", "fail", None), ("C2", "pass", None)],
        "b": [("C1", "pass", None), ("C2", "fail", None)],
        "c": [("C1", "pass", None), ("C2", "pass", None)],
    }
    s = score_submission(panel, None)
    assert s.task_score == pytest.approx(1 / 3)


def test_task_score_refuses_a_two_judge_panel() -> None:
    with pytest.raises(ValueError, match="exactly 3"):
        task_score([True, True])


def test_abstention_marks_submission_incomplete_with_reason_never_two_judge_panel() -> None:
    panel = {
        "openai": [("C1", "pass", None)],
        "xai": [("C1", "abstain", "timeout after 6 attempts")],
        "anthropic": [("C1", "pass", None)],
    }
    s = score_submission(panel, None)
    assert not s.complete and s.task_score is None and s.hc_score is None
    assert "xai abstained on C1: timeout after 6 attempts" in (s.reason or "")


def test_missing_judge_is_an_abstention() -> None:
    assert "1 judge(s) missing" in (abstention_reason({"a": [], "b": []}) or "")


def test_criterion_pass_rate_is_mean_of_all_judge_verdicts() -> None:
    assert criterion_pass_rate({"a": ["pass", "fail"], "b": ["pass", "pass"], "c": ["fail", "fail"]}) == 0.5


def test_near_pass_counts_judges_failing_at_most_k_criteria() -> None:
    v = {"a": ["fail", "pass", "pass"], "b": ["fail", "fail", "pass"], "c": ["fail"] * 3}
    assert near_pass(v, 1) == pytest.approx(1 / 3)
    assert near_pass(v, 2) == pytest.approx(2 / 3)


def test_only_submissions_with_positive_score_are_audited() -> None:
    assert not should_audit(StageA(None, task_score=0.0))
    assert should_audit(StageA(None, task_score=1 / 3))
    assert should_audit(StageA(None, task_score=0.0), AuditMode.ALWAYS)


def test_an_incomplete_panel_is_never_audited_even_in_always_mode() -> None:
    incomplete = StageA("xai abstained on C1: timeout")
    assert not should_audit(incomplete) and not should_audit(incomplete, AuditMode.ALWAYS)


def test_a_failed_audit_makes_the_submission_incomplete_with_a_null_hc_score() -> None:
    stage_a = score_panel({j: [("C1", "pass", None)] for j in JUDGES})
    s = _score_submission(stage_a, AuditFailed("audit stage 1: timeout"))
    assert s.status == "incomplete" and s.reason == "audit stage 1: timeout"
    assert s.task_score == 1.0 and s.hc_score is None and not s.audited and not s.gated


def test_a_complete_audit_with_no_flags_keeps_the_score_and_counts_as_audited() -> None:
    s = _score_submission(score_panel({j: [("C1", "pass", None)] for j in JUDGES}), AuditDone([]))
    assert s.status == "complete" and s.audited and s.hc_score == 1.0


def test_too_long_is_a_status_with_no_score() -> None:
    s = SubmissionScores.too_long("rubric prompt needs ~200,000 tokens")
    assert s.status == "too_long" and s.task_score is None and s.hc_score is None and not s.complete


def test_gate_zeroes_score_on_confirmed_material_hallucination() -> None:
    assert gate(1.0, 1) == 0.0
    assert gate(2 / 3, 0) == 2 / 3


def test_minor_hallucinations_never_change_a_score() -> None:
    panel = {j: [("C1", "pass", None)] for j in JUDGES}
    s = score_submission(panel, [_flag("confirmed", "minor", i) for i in range(3)])
    assert s.hc_score == 1.0 and s.minor == 3 and s.material == 0 and not s.gated


def test_rejected_and_merged_flags_never_count() -> None:
    assert count_confirmed([FlagOutcome("rejected", "material"), FlagOutcome("merged", "material")]) == (0, 0)


def test_confirmed_flag_without_materiality_counts_as_material() -> None:
    assert count_confirmed([FlagOutcome("confirmed", None)]) == (1, 0)


@given(panels(), st.lists(flag, max_size=6))
def test_property_gated_score_never_exceeds_ungated(panel, flags) -> None:
    s = score_submission(panel, flags)
    assert s.hc_score is not None and s.task_score is not None
    assert s.hc_score <= s.task_score


@given(panels(), st.one_of(st.none(), st.lists(flag, max_size=6)))
def test_property_score_is_a_third_multiple(panel, flags) -> None:
    s = score_submission(panel, flags)
    assert s.task_score in (0.0, 1 / 3, 2 / 3, 1.0)
    assert s.hc_score in (0.0, 1 / 3, 2 / 3, 1.0)


@given(panels(), st.data())
def test_property_turning_a_fail_into_a_pass_never_lowers_a_score(panel, data) -> None:
    fails = [(j, i) for j, vs in panel.items() for i, (_, v, _) in enumerate(vs) if v == "fail"]
    if not fails:
        return
    j, i = data.draw(st.sampled_from(fails))
    better = {k: list(vs) for k, vs in panel.items()}
    cid, _, r = better[j][i]
    better[j][i] = (cid, "pass", r)
    before, after = score_submission(panel, None), score_submission(better, None)
    assert after.task_score >= before.task_score  # type: ignore[operator]
    assert after.criterion_pass_rate > before.criterion_pass_rate  # type: ignore[operator]
    assert after.near_pass_1 >= before.near_pass_1  # type: ignore[operator]


@given(panels())
def test_property_unaudited_submission_never_has_flags(panel) -> None:
    s = score_submission(panel, None)
    assert not s.audited and s.material == 0 and s.minor == 0 and not s.gated


def test_passing_means_a_positive_task_score_for_one_score_or_an_array() -> None:
    import numpy as np

    assert not is_passing(0.0) and is_passing(1 / 3)
    assert is_passing(np.array([0.0, 1 / 3, 1.0])).tolist() == [False, True, True]


def test_counted_materiality_is_the_gate_rule_the_reduction_reads() -> None:
    assert counted_materiality("confirmed", None) == "material"
    assert counted_materiality("confirmed", "minor") == "minor"
    assert counted_materiality("rejected", "material") is None and counted_materiality("merged", "minor") is None
