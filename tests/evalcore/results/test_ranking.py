"""Ranks with their uncertainty (evalcore.results.ranking), on planted systems with known rates."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.results.ranking import rank_systems
from evalcore.results.stats import resample_counts, rng_for


def _planted(rates: dict[str, float], n_tasks: int, seed: int) -> dict[str, dict[str, float]]:
    """Pass/fail scores per task: a shared task difficulty plus each system's own chance."""
    gen = np.random.default_rng(seed)
    difficulty = gen.normal(0.0, 0.1, n_tasks)
    return {
        name: {f"t{k:04d}": float(gen.random() < min(1.0, max(0.0, rate - difficulty[k]))) for k in range(n_tasks)}
        for name, rate in rates.items()
    }


def _rank(scores: dict[str, dict[str, float]], seed: int = 0, b: int = 1000):
    return rank_systems(scores, rng=rng_for(seed, "test"), n_resamples=b)


def test_systems_with_equal_true_rates_share_a_tier_in_at_least_90_percent_of_seeds() -> None:
    shared = 0
    seeds = range(60)
    for seed in seeds:
        ranking = _rank(_planted({"a": 0.55, "b": 0.55}, 150, seed), seed)
        tiers = ranking.tiers()
        shared += tiers["a"] == tiers["b"]
    assert shared >= 0.9 * len(seeds)


def test_clearly_different_systems_never_share_a_tier() -> None:
    for seed in range(30):
        tiers = _rank(_planted({"top": 0.85, "mid": 0.5, "low": 0.15}, 120, seed), seed).tiers()
        assert tiers == {"top": 1, "mid": 2, "low": 3}


def test_rank_intervals_cover_the_true_rank_at_the_stated_rate() -> None:
    rates = {"s1": 0.75, "s2": 0.65, "s3": 0.55, "s4": 0.45, "s5": 0.35}
    true_rank = {name: k + 1 for k, name in enumerate(rates)}
    covered = total = 0
    for seed in range(40):
        ranking = _rank(_planted(rates, 100, seed), seed)
        for name in rates:
            low, high = ranking.rank_interval(name)
            covered += low <= true_rank[name] <= high
            total += 1
    assert covered / total >= 0.95


def test_pairwise_probabilities_favour_the_better_system_and_sum_to_one() -> None:
    ranking = _rank(_planted({"good": 0.8, "poor": 0.3}, 100, 1))
    i, j = ranking.systems.index("good"), ranking.systems.index("poor")
    assert ranking.beats[i, j] > 0.99 and abs(ranking.beats[i, j] + ranking.beats[j, i] - 1.0) < 1e-12
    assert ranking.separable[i, j] and not ranking.separable[j, i]


def test_systems_scored_on_different_tasks_are_compared_on_the_tasks_they_share() -> None:
    # b looks worse overall only because it was also scored on hard tasks a never saw; on the
    # tasks both did, they are identical: nothing separates them
    common = {f"t{k}": float(k % 2) for k in range(40)}
    hard = {f"h{k}": 0.0 for k in range(40)}
    ranking = _rank({"a": dict(common), "b": {**common, **hard}})
    assert not ranking.separable.any()
    i, j = ranking.systems.index("a"), ranking.systems.index("b")
    assert ranking.beats[i, j] == 0.5
    assert ranking.tiers() == {"a": 1, "b": 1}


def test_the_same_seed_gives_the_same_ranking() -> None:
    scores = _planted({"a": 0.6, "b": 0.5, "c": 0.4}, 60, 3)
    r1, r2 = _rank(scores, 7), _rank(scores, 7)
    assert r1.systems == r2.systems and np.array_equal(r1.beats, r2.beats)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=8, max_size=8), min_size=1, max_size=6),
       st.integers(0, 2**32 - 1))
def test_rank_intervals_and_tiers_are_consistent_for_any_scores(rows: list[list[float]], seed: int) -> None:
    scores = {f"s{i}": {f"t{k}": v for k, v in enumerate(row)} for i, row in enumerate(rows)}
    ranking = rank_systems(scores, rng=rng_for(seed, "prop"), n_resamples=200)
    tiers = [ranking.tiers()[s] for s in ranking.systems]
    assert tiers == sorted(tiers) and tiers[0] == 1
    assert np.allclose(ranking.beats + ranking.beats.T, 1.0)
    for k, system in enumerate(ranking.systems):
        low, high = ranking.rank_interval(system)
        assert 1 <= low <= k + 1 <= high <= len(rows)  # the point-estimate position lies inside


def _pairs_by_definition(scores: dict[str, dict[str, float]], seed: int, b: int,
                         confidence: float) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The rules taken literally: for each system i, every j's replicate differences (the difference
    of means when all share their tasks, else over the tasks the two share), P(i beats j) from their
    signs and the `alpha` quantile of each column with np.nanquantile (the same sums as the ranking)."""
    names = sorted(scores)
    tasks = sorted({t for by_task in scores.values() for t in by_task})
    x = np.array([[scores[s].get(t, 0.0) for t in tasks] for s in names])
    m = np.array([[float(t in scores[s]) for t in tasks] for s in names])
    point = (x * m).sum(axis=1) / m.sum(axis=1)
    order = sorted(range(len(names)), key=lambda i: (-point[i], names[i]))
    x, m, names = x[order], m[order], [names[i] for i in order]
    counts = resample_counts(rng_for(seed, "def"), len(tasks), b)
    alpha = (1.0 - confidence) / 2.0
    s = len(names)
    beats, separable = np.full((s, s), 0.5), np.zeros((s, s), dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.einsum("bt,st->bs", counts, x * m[0]) / (counts @ m[0])[:, None]
        for i in range(s):
            if np.all(m == m[:1]):
                diff = means[:, [i]] - means
            else:
                shared = m * m[i]
                diff = (np.einsum("bt,st->bs", counts, shared * x[i]) - np.einsum("bt,st->bs", counts, shared * x)) \
                    / np.einsum("bt,st->bs", counts, shared)
            for j in range(s):
                valid = np.isfinite(diff[:, j])
                if i != j and valid.any():
                    beats[i, j] = ((diff[valid, j] > 0).sum() + 0.5 * (diff[valid, j] == 0).sum()) / valid.sum()
                    separable[i, j] = np.nanquantile(diff[:, j], alpha) > 0
    return names, beats, separable


@settings(max_examples=120, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 1 / 3, 2 / 3, 1.0, None]), min_size=12, max_size=12),
                min_size=2, max_size=9),
       st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 20, 200]), st.sampled_from([0.95, 0.5]))
def test_every_pair_is_decided_as_its_replicate_differences_and_their_quantile_say(
    rows: list[list[float | None]], seed: int, b: int, confidence: float
) -> None:
    # the comparisons are counted for all pairs at once and the quantile taken only where the
    # count leaves its sign open: each pair must come out as the rule says, taken pair by pair
    # (None: the system was not scored on the task, so pairs share only some tasks)
    scores = {f"s{i}": {f"t{k:02d}": v for k, v in enumerate(row) if v is not None} for i, row in enumerate(rows)}
    scores = {s: by_task for s, by_task in scores.items() if by_task}
    if len(scores) < 2:
        return
    ranking = rank_systems(scores, rng=rng_for(seed, "def"), n_resamples=b, confidence=confidence)
    names, beats, separable = _pairs_by_definition(scores, seed, b, confidence)
    assert ranking.systems == names
    assert np.array_equal(ranking.beats, beats) and np.array_equal(ranking.separable, separable)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=6, max_size=6), min_size=1, max_size=3),
       st.lists(st.tuples(st.integers(0, 2), st.lists(st.sampled_from([0.0, 1 / 3, 2 / 3, 1.0]), min_size=6,
                                                      max_size=6)), min_size=2, max_size=12),
       st.integers(0, 2**32 - 1), st.sampled_from([2, 20, 200]))
def test_systems_scored_on_the_same_tasks_as_others_are_decided_as_the_definition_says(
    masks: list[list[bool]], systems: list[tuple[int, list[float]]], seed: int, b: int
) -> None:
    # systems scored on the same tasks share every sum that depends only on those tasks (computed
    # once per group): each pair must still come out exactly as the rule says, taken pair by pair
    scores = {
        f"s{i:02d}": {f"t{k}": v for k, (v, on) in enumerate(zip(values, masks[pick % len(masks)], strict=True)) if on}
        for i, (pick, values) in enumerate(systems)
    }
    scores = {s: by_task for s, by_task in scores.items() if by_task}
    if len(scores) < 2:
        return
    ranking = rank_systems(scores, rng=rng_for(seed, "def"), n_resamples=b)
    names, beats, separable = _pairs_by_definition(scores, seed, b, 0.95)
    assert ranking.systems == names
    assert np.array_equal(ranking.beats, beats) and np.array_equal(ranking.separable, separable)
