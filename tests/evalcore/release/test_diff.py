"""What `release diff` reports: systems added or removed, ranks, intervals and tiers, what changed in
how the runs were graded, and the decisions added or withdrawn."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.release.diff import diff_releases
from evalcore.release.model import Release
from evalcore.results.leaderboard import ALL_AREAS, AuditorStats, JudgeAnalysis, Leaderboard, SystemScores
from evalcore.results.stats import Interval
from evalcore.storage.store import ModelRef

SYSTEMS = ["a", "b", "c", "d", "e"]


def _release(name: str, systems: list[str], judges: str = "x") -> Release:
    return Release(name=name, created_at=1.0, runs=[], systems={s: "run" for s in systems}, facts={"judges": judges},
                   benchmark_name=None, benchmark_version=None, benchmark_hash="h", judges=[],
                   auditor=ModelRef(name="a", model="m"), protocol_version="1.1")


def _board(rates: dict[str, float]) -> Leaderboard:
    order = sorted(rates, key=lambda s: -rates[s])
    iv = Interval(value=0.0, n=0)
    rows = [SystemScores(rank=k + 1, rank_low=k + 1, rank_high=k + 1, tier=k + 1, system=s, family=None, area=ALL_AREAS,
                         n_tasks=3, scored=3, missing=0, incomplete=0, too_long=0, rejected=0,
                         hc_pass_rate=Interval(value=rates[s], low=0.0, high=1.0, n=3), all_pass_rate=iv,
                         criterion_pass_rate=iv, near_pass_1=iv, near_pass_2=iv, audited=0, material_per_task=iv,
                         minor_per_task=iv, passing=0, gated=0, lost_to_gate=iv) for k, s in enumerate(order)]
    return Leaderboard(run_id="r", n_tasks=3, areas=[], seed=1, bootstrap_samples=10, systems=rows, by_area=[],
                       judges=JudgeAnalysis(judges=[], n_items=0, n_items_partial=0, cohen=[], fleiss_kappa=None,
                                            self_preference=[]),
                       auditor=AuditorStats(audited_submissions=0, flags_raised=0, by_origin={}, by_status={},
                                            confirmed_by_category={}, confirmed_by_system={}, counts=[]),
                       cost_by_vendor=[], cost_usd=0.0)


RATES = st.dictionaries(st.sampled_from(SYSTEMS), st.floats(0, 1), min_size=1)


@settings(max_examples=60)
@given(old=RATES, new=RATES)
def test_every_system_of_either_release_is_listed_once_added_removed_or_kept(old: dict[str, float], new: dict[str, float]) -> None:
    d = diff_releases(_release("v1", list(old)), _board(old), [], _release("v2", list(new)), _board(new), [])
    assert sorted(s.system for s in d.systems) == sorted(set(old) | set(new))
    assert d.added == sorted(set(new) - set(old)) and d.removed == sorted(set(old) - set(new))
    for s in d.systems:
        assert (s.rank_before is None) == (s.system not in old) and (s.rank_after is None) == (s.system not in new)
        if s.change == "kept":
            assert s.rate_change == new[s.system] - old[s.system]
    same = diff_releases(_release("v1", list(old)), _board(old), [], _release("v1", list(old)), _board(old), [])
    assert not any(s.moved for s in same.systems) and same.graded_with == {}


def test_a_replaced_judge_shows_as_what_the_runs_were_graded_with() -> None:
    rates = {"a": 0.5, "b": 0.4}
    d = diff_releases(_release("v1", ["a", "b"], "xai=grok-4"), _board(rates), [],
                      _release("v2", ["a", "b"], "xai=grok-5"), _board({"a": 0.3, "b": 0.4}), [])
    assert d.graded_with == {"judges": ("xai=grok-4", "xai=grok-5")}
    assert [(s.system, s.rank_before, s.rank_after) for s in d.systems] == [("b", 2, 1), ("a", 1, 2)]
