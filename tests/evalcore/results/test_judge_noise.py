"""The leaderboard with judge noise (issue 39): the two-level bootstrap (tasks, then a grading of each
task), its coverage, its reduction to the task-only bootstrap, and a reduced run with repeats."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.results import stats
from evalcore.results.leaderboard import Leaderboard
from evalcore.results.ranking import rank_matrix, rank_two_level
from evalcore.results.reduce import reduce_tables
from evalcore.storage.store import RunRecord, read_table
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

SCORES = st.sampled_from([0.0, 1 / 3, 2 / 3, 1.0])


@settings(max_examples=40, deadline=None)
@given(st.lists(SCORES, min_size=1, max_size=30), st.integers(0, 2**32))
def test_with_one_grading_per_task_the_two_level_interval_is_the_task_only_one(scores: list[float], seed: int) -> None:
    x = np.asarray(scores)
    two = stats.bootstrap_two_level(x[:, None], np.ones(len(x), dtype=np.int64), rng=stats.rng_for(seed, "s"),
                                    n_resamples=300)
    one = stats.bootstrap_mean(x, rng=stats.rng_for(seed, "s"), n_resamples=300)
    assert two.value == pytest.approx(one.value)
    assert two.low == pytest.approx(one.low) and two.high == pytest.approx(one.high)


DYADIC = st.sampled_from([0.0, 0.25, 0.5, 1.0])
"""Scores whose sums are exact in binary: a tie is a tie in both paths (the two-level path also
reads differences within 1e-12 as ties, which thirds summed in two orders can leave)."""


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(DYADIC, min_size=6, max_size=6), min_size=2, max_size=5), st.integers(0, 2**32))
def test_with_one_grading_per_cell_the_two_level_ranking_is_the_task_only_one(rows: list[list[float]],
                                                                              seed: int) -> None:
    x = np.asarray(rows)
    names = [f"s{i}" for i in range(len(rows))]
    m = np.ones_like(x)
    task_only = rank_matrix(names, x, m, rng=stats.rng_for(seed, "r"), n_resamples=300)
    two = rank_two_level(names, x[:, :, None], np.ones(x.shape, dtype=np.int64), m, rng=stats.rng_for(seed, "r"),
                         n_resamples=300)
    assert two.systems == task_only.systems
    assert np.array_equal(two.separable, task_only.separable)
    assert np.allclose(two.beats, task_only.beats)


def _noisy_system(rng: np.random.Generator, n_tasks: int, repeats: int, flip: float) -> tuple[np.ndarray, float]:
    """A system's gradings on `n_tasks` tasks: each task's true pass share, then `1 + repeats`
    gradings, each a draw of the task (pass with its share) seen through a judge that flips the
    outcome with `flip`. Returns the gradings and the true rate (tasks and judges both random)."""
    share = rng.beta(2, 2, n_tasks)
    passes = share * (1 - flip) + (1 - share) * flip
    return (rng.random((n_tasks, 1 + repeats)) < passes[:, None]).astype(float), 0.5 * (1 - flip) + 0.5 * flip


def test_the_two_level_interval_covers_the_true_rate_in_at_least_90_percent_of_seeds_under_heavy_judge_noise() -> None:
    covered_two = covered_tasks = 0
    widths = []
    seeds = range(200)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        g, truth = _noisy_system(rng, 40, 2, 0.25)
        two = stats.bootstrap_two_level(g, np.full(40, 3), rng=stats.rng_for(seed, "two"), n_resamples=400)
        tasks = stats.bootstrap_mean(g[:, 0], rng=stats.rng_for(seed, "tasks"), n_resamples=400)
        assert two.low is not None and two.high is not None and tasks.low is not None and tasks.high is not None
        covered_two += two.low <= truth <= two.high
        covered_tasks += tasks.low <= truth <= tasks.high
        widths.append((two.high - two.low, tasks.high - tasks.low))
    w = np.asarray(widths).mean(axis=0)
    print(f"coverage of the true rate: two-level {covered_two}/{len(seeds)}, task-only {covered_tasks}/{len(seeds)}; "
          f"mean widths {w[0]:.3f} vs {w[1]:.3f}")
    assert covered_two >= 0.9 * len(seeds)


def _reduce(run: Path) -> Leaderboard:
    tables = {n: read_table(str(run), n) for n in ("submissions", "verdicts", "flags", "calls", "rejected")}
    return reduce_tables(RunRecord.read(str(run)), **tables)


@pytest.fixture(scope="module")
def boards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Leaderboard, Leaderboard, dict]:
    truth = synthetic_ground_truth(seed=3, n_tasks=9, n_criteria=3)
    plain = tmp_path_factory.mktemp("plain")
    build_run(str(plain), truth)
    # repeats of every gpt-strong submission: the first all fail, the second as the original
    verdicts = truth["verdicts"]["gpt-strong"]
    repeats = {("gpt-strong", t): [{c: "fail" for c in crits}, dict(crits)] for t, crits in verdicts.items()}
    noisy = tmp_path_factory.mktemp("noisy")
    build_run(str(noisy), truth, RunSpec(repeats=repeats))
    return _reduce(plain), _reduce(noisy), repeats


def test_a_run_without_repeats_has_no_judge_noise_figures(boards: tuple[Leaderboard, Leaderboard, dict]) -> None:
    plain, _, _ = boards
    for r in plain.systems:
        assert r.repeated_tasks == 0 and r.hc_with_judge_noise_low is None and r.tier_tasks_only is None


def test_repeats_never_replace_the_original_and_widen_the_interval_and_rank_of_the_repeated_system(
        boards: tuple[Leaderboard, Leaderboard, dict]) -> None:
    plain, noisy, repeats = boards
    before = {r.system: r for r in plain.systems}
    after = {r.system: r for r in noisy.systems}
    for system, r in after.items():
        # the headline, its task-only interval and every rate are the originals'
        assert r.hc_pass_rate == before[system].hc_pass_rate and r.rank == before[system].rank
        assert (r.rank_low_tasks_only, r.rank_high_tasks_only, r.tier_tasks_only) == (
            before[system].rank_low, before[system].rank_high, before[system].tier)
    strong = after["gpt-strong"]
    assert strong.repeated_tasks == len(repeats)
    assert strong.hc_with_judge_noise_low is not None and strong.hc_with_judge_noise_high is not None
    assert strong.hc_with_judge_noise_low < strong.hc_pass_rate.low  # type: ignore[operator]
    assert strong.rank_high is not None and before["gpt-strong"].rank_high is not None
    assert strong.rank_high >= before["gpt-strong"].rank_high
    assert after["grok-weak"].repeated_tasks == 0
