"""The adjudication rules of evalcore.grading.scoring: an expert's decision replaces a judge's or the audit's."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.grading.scoring import (
    FlagOutcome,
    adjudicated_flag,
    adjudicated_panel,
    adjudicated_scores,
    adjudicated_verdict,
    count_confirmed,
    score_panel,
)

JUDGES = ("openai", "xai", "anthropic")


def _panel(verdicts: dict[str, list[str]]):
    return {j: [(f"c{k}", v, None) for k, v in enumerate(vs)] for j, vs in verdicts.items()}


def test_an_overturned_material_flag_lifts_the_gate() -> None:
    panel = _panel({j: ["pass", "pass"] for j in JUDGES})
    flags = [FlagOutcome("confirmed", "material")]
    assert adjudicated_scores(panel, flags, audited=True).hc_score == 0.0
    lifted = [adjudicated_flag(flags[0], "overturned")]
    scores = adjudicated_scores(panel, lifted, audited=True)
    assert scores.hc_score == 1.0 and not scores.gated and scores.material == 0


def test_an_upheld_flag_stage2_rejected_counts_as_material_unless_the_expert_says_minor() -> None:
    rejected = FlagOutcome("rejected", None)
    assert adjudicated_flag(rejected, "upheld") == FlagOutcome("confirmed", None)
    assert count_confirmed([adjudicated_flag(rejected, "upheld")]) == (1, 0)  # fail-safe: material
    assert count_confirmed([adjudicated_flag(rejected, "upheld", "minor")]) == (0, 1)


def test_a_materiality_decision_sets_the_materiality_and_needs_one() -> None:
    minor = adjudicated_flag(FlagOutcome("confirmed", "material"), "materiality", "minor")
    assert minor == FlagOutcome("confirmed", "minor")
    with pytest.raises(ValueError, match="needs the materiality"):
        adjudicated_flag(FlagOutcome("confirmed", "material"), "materiality", None)


def test_an_overridden_criterion_changes_every_judges_all_pass() -> None:
    panel = _panel({"openai": ["pass", "fail"], "xai": ["pass", "fail"], "anthropic": ["pass", "pass"]})
    assert score_panel(panel).task_score == pytest.approx(1 / 3)
    decided = adjudicated_panel(panel, {}, {"c1": "pass"})
    assert score_panel(decided).task_score == 1.0
    failed = adjudicated_panel(panel, {}, {"c0": "fail"})
    assert score_panel(failed).task_score == 0.0


def test_a_verdict_decision_replaces_only_that_judges_verdict() -> None:
    panel = _panel({"openai": ["pass", "fail"], "xai": ["pass", "pass"], "anthropic": ["pass", "pass"]})
    decided = adjudicated_panel(panel, {("openai", "c1"): "pass"}, {})
    assert score_panel(decided).task_score == 1.0
    assert decided["xai"] == panel["xai"]


def test_a_decided_abstention_completes_the_panel() -> None:
    panel = _panel({"openai": ["abstain"], "xai": ["pass"], "anthropic": ["pass"]})
    assert not score_panel(panel).complete
    assert score_panel(adjudicated_panel(panel, {("openai", "c0"): "pass"}, {})).task_score == 1.0


def test_an_unaudited_submission_keeps_no_flags_whatever_is_decided() -> None:
    panel = _panel({j: ["pass"] for j in JUDGES})
    scores = adjudicated_scores(panel, [FlagOutcome("confirmed", "material")], audited=False)
    assert scores.hc_score == 1.0 and scores.material == 0 and not scores.audited


@given(st.sampled_from(["pass", "fail", "abstain"]), st.sampled_from([None, "pass", "fail"]))
def test_no_decision_leaves_a_verdict_and_a_decision_always_wins(raw: str, decision: str | None) -> None:
    out = adjudicated_verdict(raw, decision)  # type: ignore[arg-type]
    assert out == (raw if decision is None else decision)


@given(st.sampled_from(["confirmed", "rejected", "merged"]), st.sampled_from([None, "material", "minor"]))
def test_no_flag_decision_changes_nothing(status: str, materiality: str | None) -> None:
    assert adjudicated_flag(FlagOutcome(status, materiality), None) == FlagOutcome(status, materiality)
