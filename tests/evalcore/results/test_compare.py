"""Comparing runs: a run against itself changes nothing; a run with one judge made lenient and one
hallucination no longer upheld shows exactly those changes, counted here from the truth."""

from __future__ import annotations

import copy
from collections import defaultdict
from pathlib import Path
from statistics import mean
from typing import Any

import pytest

from evalcore.results.compare import Comparison, compare_tables
from evalcore.results.leaderboard import Leaderboard
from evalcore.results.reduce import reduce_tables
from evalcore.storage.store import RunRecord, read_table
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

NAMES = ("submissions", "verdicts", "flags", "calls", "rejected")


def _load(run: Path) -> tuple[RunRecord, dict[str, Any], Leaderboard]:
    record = RunRecord.read(str(run))
    tables = {n: read_table(str(run), n) for n in NAMES}
    return record, tables, reduce_tables(record, **tables)


def _compare(a: Path, b: Path) -> Comparison:
    ra, ta, la = _load(a)
    rb, tb, lb = _load(b)
    return compare_tables(ra, rb, ta, tb, la, lb)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any], dict[str, Any]]:
    truth = synthetic_ground_truth(seed=5, n_tasks=12, n_criteria=5)
    root = tmp_path_factory.mktemp("cmp")
    build_run(str(root / "a"), truth, RunSpec(run_id="run-a", bootstrap_samples=300))
    dropped = next(h for h in truth["hallucinations"]
                   if all(v == "pass" for v in truth["verdicts"][h["system"]][h["task_id"]].values()))
    truth_b = copy.deepcopy(truth)
    truth_b["hallucinations"].remove(dropped)
    build_run(str(root / "b"), truth_b, RunSpec(run_id="run-b", bootstrap_samples=300, lenient={"xai": "anthropic"}))
    return root / "a", root / "b", truth, dropped


@pytest.fixture(scope="module")
def cmp_ab(runs: Any) -> Comparison:
    return _compare(runs[0], runs[1])


def test_a_run_compared_with_itself_changes_nothing(runs: Any) -> None:
    a, _, truth, _ = runs
    cmp = _compare(a, a)
    assert all(j.changed == 0 and j.kappa == 1.0 for j in cmp.judges)
    assert cmp.flags.only_a == cmp.flags.only_b == 0 and cmp.flags.upheld_both == cmp.flags.confirmed_a
    assert all(s.delta.value == 0.0 and s.delta.low == s.delta.high == 0.0 for s in cmp.systems)
    assert cmp.kendall_tau == pytest.approx(1.0) and cmp.rank_changed == []
    assert cmp.shared == sum(len(t) for t in truth["verdicts"].values())


def test_only_the_swapped_judges_verdicts_change_and_only_on_the_family_it_favours(runs: Any, cmp_ab: Comparison) -> None:
    a, b, truth, _ = runs
    cmp = cmp_ab
    favoured_fails = sum(v == "fail" for s, ts in truth["verdicts"].items() if s.startswith("claude")
                         for cs in ts.values() for v in cs.values())
    by_judge = {j.judge: j for j in cmp.judges}
    assert (by_judge["xai"].changed, by_judge["xai"].fail_to_pass, by_judge["xai"].pass_to_fail) == (
        favoured_fails, favoured_fails, 0)
    assert by_judge["openai"].changed == by_judge["anthropic"].changed == 0


def test_a_hallucination_no_longer_confirmed_is_upheld_by_a_only(runs: Any, cmp_ab: Comparison) -> None:
    a, b, truth, dropped = runs
    cmp = cmp_ab
    assert (cmp.flags.only_a, cmp.flags.only_b) == (1, 0)
    [diff] = cmp.flags.examples
    assert (diff.upheld_by, diff.span, diff.submission_id) == ("a", dropped["span"],
                                                              f"{dropped['system']}::{dropped['task_id']}")
    claude_failing = sum(any(v == "fail" for v in cs.values()) for s, ts in truth["verdicts"].items()
                         if s.startswith("claude") for cs in ts.values())
    assert cmp.flags.audited_b_only == claude_failing and cmp.flags.audited_a_only == 0


def test_score_changes_are_the_paired_mean_differences_with_intervals(runs: Any, cmp_ab: Comparison) -> None:
    a, b, _, _ = runs
    cmp = cmp_ab
    hc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in (a, b):  # one grading per submission in these runs: A's score, then B's
        for row in read_table(str(run), "submissions").to_pylist():
            hc[row["system"]][row["submission_id"]].append(row["hc_score"])
    for s in cmp.systems:
        pairs = [v for v in hc[s.system].values() if len(v) == 2]
        assert s.delta.value == pytest.approx(mean(v[1] - v[0] for v in pairs))
        assert s.delta.low is not None and s.delta.high is not None and s.delta.low <= s.delta.value <= s.delta.high
    claude = next(s for s in cmp.systems if s.system.startswith("claude"))
    assert claude.all_pass_delta.value is not None and claude.all_pass_delta.low is not None
    assert claude.all_pass_delta.value > 0 and claude.all_pass_delta.low > 0
    assert all(s.all_pass_delta.value == 0.0 for s in cmp.systems if not s.system.startswith("claude"))
    ranks_differ = sorted(s.system for s in cmp.systems if s.rank_a != s.rank_b)
    assert cmp.rank_changed == ranks_differ
    assert cmp.kendall_tau is not None and -1.0 <= cmp.kendall_tau <= 1.0
