"""Leaderboard statistics: bootstrap intervals as scipy computes them, κ on known tables."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from evalcore.results.stats import (
    Interval,
    bootstrap_mean,
    bootstrap_ratio,
    bootstrap_statistic,
    cohen_kappa,
    cohen_kappa_from_table,
    fleiss_kappa,
    kappa_from_cells,
    resample_counts,
    rng_for,
)

# --------------------------------------------------------------------------------------------
# Cohen's κ
# --------------------------------------------------------------------------------------------


def test_cohen_kappa_of_the_textbook_table_is_0_4() -> None:
    # 50 items: both "yes" 20, A yes/B no 5, A no/B yes 10, both "no" 15.
    # p_o = 35/50 = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5; κ = (0.7 - 0.5) / (1 - 0.5) = 0.4
    assert cohen_kappa_from_table([[20, 5], [10, 15]]) == pytest.approx(0.4)


def test_cohen_kappa_from_labels_equals_the_table_form() -> None:
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_kappa_aligns_categories_one_rater_never_used() -> None:
    # A uses {pass, fail}, B only "pass": table [[2, 0], [1, 0]] over (pass, fail)
    a, b = ["pass", "pass", "fail"], ["pass", "pass", "pass"]
    # p_o = 2/3; p_e = (2/3)(1) + (1/3)(0) = 2/3 -> κ = 0
    assert cohen_kappa(a, b) == pytest.approx(0.0)


def test_cohen_kappa_of_systematic_disagreement_is_negative() -> None:
    assert cohen_kappa_from_table([[0, 10], [10, 0]]) == pytest.approx(-1.0)


def test_cohen_kappa_of_no_items_is_undefined() -> None:
    assert cohen_kappa([], []) is None
    assert cohen_kappa_from_table([[0, 0], [0, 0]]) is None


def test_cohen_kappa_rejects_raters_of_different_lengths() -> None:
    with pytest.raises(ValueError, match="different numbers"):
        cohen_kappa(["pass"], ["pass", "fail"])


labels = st.lists(st.sampled_from(["pass", "fail"]), min_size=1, max_size=60)


@given(labels)
def test_cohen_kappa_of_identical_raters_is_1(ratings: list[str]) -> None:
    assert cohen_kappa(ratings, ratings) == 1.0


@given(st.lists(st.tuples(st.sampled_from("pf"), st.sampled_from("pf")), min_size=1, max_size=80))
def test_cohen_kappa_is_symmetric_and_at_most_1(pairs: list[tuple[str, str]]) -> None:
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    k_ab, k_ba = cohen_kappa(a, b), cohen_kappa(b, a)
    assert k_ab is not None and k_ba is not None
    assert k_ab == pytest.approx(k_ba)
    assert k_ab <= 1.0 + 1e-12


# --------------------------------------------------------------------------------------------
# Fleiss' κ
# --------------------------------------------------------------------------------------------

FLEISS_1971 = [  # 10 items, 14 raters, 5 categories (Fleiss 1971 worked example)
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_of_the_worked_example_is_0_210() -> None:
    assert fleiss_kappa(FLEISS_1971) == pytest.approx(0.2099, abs=1e-4)


def test_fleiss_kappa_of_two_raters_is_scotts_pi() -> None:
    # Same 50 items as the Cohen example. Scott's π pools the two raters' marginals:
    # p(yes) = (25 + 30) / 100 = 0.55, p_e = 0.55² + 0.45² = 0.505, p_o = 0.7
    pi = (0.7 - 0.505) / (1 - 0.505)
    rows = [[2, 0]] * 20 + [[1, 1]] * 15 + [[0, 2]] * 15
    assert fleiss_kappa(rows) == pytest.approx(pi)


def test_fleiss_kappa_with_pattern_weights_equals_the_expanded_items() -> None:
    patterns = [[3, 0], [2, 1], [1, 2], [0, 3]]
    weights = [40, 7, 5, 12]
    expanded = [p for p, w in zip(patterns, weights, strict=True) for _ in range(w)]
    assert fleiss_kappa(patterns, weights=weights) == pytest.approx(fleiss_kappa(expanded))


def test_fleiss_kappa_rejects_items_with_different_numbers_of_raters() -> None:
    with pytest.raises(ValueError, match="same number of raters"):
        fleiss_kappa([[3, 0], [1, 1]])


@given(st.lists(st.sampled_from([[3, 0], [0, 3]]), min_size=1, max_size=40))
def test_fleiss_kappa_of_a_unanimous_panel_is_1(rows: list[list[int]]) -> None:
    assert fleiss_kappa(rows) == 1.0


# --------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 7, 40, 301])
def test_bootstrap_mean_equals_scipy_percentile_bootstrap_with_the_same_generator(n: int) -> None:
    values = np.random.default_rng(n).choice([0.0, 1 / 3, 2 / 3, 1.0], size=n)
    ours = bootstrap_mean(values, rng=rng_for(5, "sys", str(n)), n_resamples=999)
    ref = sps.bootstrap(
        (values,), np.mean, method="percentile", n_resamples=999, vectorized=True, rng=rng_for(5, "sys", str(n))
    )
    assert ours.value == pytest.approx(values.mean())
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)
    assert ours.n == n


def test_bootstrap_of_a_single_task_is_that_task() -> None:
    est = bootstrap_mean([2 / 3], rng=rng_for(1))
    assert (est.value, est.low, est.high, est.n) == (2 / 3, 2 / 3, 2 / 3, 1)


def test_bootstrap_ratio_equals_scipy_paired_percentile_bootstrap() -> None:
    rng = np.random.default_rng(3)
    num = rng.integers(0, 40, 150).astype(float)
    den = num + rng.integers(1, 20, 150)

    def ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return a.sum(axis=axis) / b.sum(axis=axis)

    ours = bootstrap_ratio(num, den, rng=rng_for(9, "judge"), n_resamples=500)[0]
    ref = sps.bootstrap((num, den), ratio, paired=True, vectorized=True, method="percentile",
                        n_resamples=500, rng=rng_for(9, "judge"))
    assert ours.value == pytest.approx(num.sum() / den.sum())
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)


def test_bootstrap_statistics_of_one_population_share_their_resamples() -> None:
    # two identical rows must get identical intervals (same resamples for every statistic)
    x = np.random.default_rng(1).random(50)
    a, b = bootstrap_ratio(np.vstack([x, x]), None, rng=rng_for(1, "s"), n_resamples=200)
    assert (a.low, a.high) == (b.low, b.high)


def test_bootstrap_is_reproducible_from_the_seed_and_names() -> None:
    x = np.random.default_rng(2).random(80)
    first = bootstrap_mean(x, rng=rng_for(20261130, "gpt-strong", "ALL"))
    again = bootstrap_mean(x, rng=rng_for(20261130, "gpt-strong", "ALL"))
    other_seed = bootstrap_mean(x, rng=rng_for(20261131, "gpt-strong", "ALL"))
    other_name = bootstrap_mean(x, rng=rng_for(20261130, "grok-weak", "ALL"))
    assert first == again
    assert (first.low, first.high) != (other_seed.low, other_seed.high)
    assert (first.low, first.high) != (other_name.low, other_name.high)


def test_generator_keys_are_not_ambiguous_concatenations() -> None:
    a = rng_for(1, "ab", "c").integers(0, 1 << 62)
    b = rng_for(1, "a", "bc").integers(0, 1 << 62)
    assert a != b


def test_bootstrap_of_an_empty_population_is_undefined() -> None:
    est = bootstrap_mean([], rng=rng_for(1))
    assert (est.value, est.low, est.high, est.n) == (None, None, None, 0)


def test_bootstrap_ratio_with_zero_denominator_overall_is_undefined() -> None:
    est = bootstrap_ratio([0.0, 0.0], [0.0, 0.0], rng=rng_for(1))[0]
    assert est.value is None and est.n == 2


def test_bootstrap_ratio_ignores_resamples_with_an_empty_subpopulation() -> None:
    # one unit in the sub-population out of 10: many resamples miss it; the rest give exactly 1.0
    num = np.array([1.0] + [0.0] * 9)
    den = np.array([1.0] + [0.0] * 9)
    est = bootstrap_ratio(num, den, rng=rng_for(1), n_resamples=300)[0]
    assert (est.value, est.low, est.high) == (1.0, 1.0, 1.0)


def test_bootstrap_with_many_units_is_computed_in_chunks_identically(monkeypatch: pytest.MonkeyPatch) -> None:
    import evalcore.results.stats as stats_mod

    x = np.random.default_rng(4).random(500)
    whole = bootstrap_mean(x, rng=rng_for(3, "x"), n_resamples=400)
    monkeypatch.setattr(stats_mod, "_RESAMPLE_CELLS", 500 * 50)  # 50 resamples per chunk (even sizes)
    chunked = bootstrap_mean(x, rng=rng_for(3, "x"), n_resamples=400)
    assert chunked.low == pytest.approx(whole.low) and chunked.high == pytest.approx(whole.high)


def _bootstrap_by_definition(num: np.ndarray, den: np.ndarray, rng: np.random.Generator, b: int,
                             alpha: float = (1 - 0.95) / 2) -> list[tuple[float, float] | None]:
    """Every resample's counts held at once, one einsum, one scipy quantile per statistic."""
    counts = resample_counts(rng, num.shape[1], b)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = np.einsum("bi,ki->bk", counts, num) / np.einsum("bi,ki->bk", counts, den)
    out: list[tuple[float, float] | None] = []
    for col in boot.T:
        col = col[np.isfinite(col)]
        if not col.size:
            out.append(None)
            continue
        lo, hi = np.clip(sps.quantile(col, [alpha, 1 - alpha]), col.min(), col.max())
        out.append((float(min(lo, hi)), float(max(lo, hi))))
    return out


@pytest.mark.parametrize(("n", "cells"), [
    (40, 8_000_000),      # one block
    (2000, 8_000_000),    # counts row by row (n >= 1,000), one block
    (9001, 9001 * 333),   # blocks of 333 resamples, the last one a single row: a 1 × 1 einsum sums otherwise
    (700, 700 * 7 + 3),   # blocks of 7
])
@pytest.mark.parametrize("k", [1, 3])
def test_a_bootstrap_taken_block_by_block_is_the_whole_matrix_bit_for_bit(
    n: int, cells: int, k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalcore.results.stats as stats_mod

    monkeypatch.setattr(stats_mod, "_RESAMPLE_CELLS", cells)
    gen = np.random.default_rng(n + k)
    den = (gen.random((k, n)) < 0.7).astype(float)
    den[0] = 1.0
    num = gen.choice([0.0, 1 / 3, 2 / 3, 1.0], size=(k, n)) * den
    num = np.vstack([num, num[:1]])  # a repeated row is summed once
    den = np.vstack([den, den[:1]])
    ours = bootstrap_ratio(num, den, rng=rng_for(n, "blocks"), n_resamples=1000)
    ref = _bootstrap_by_definition(num, den, rng_for(n, "blocks"), 1000)
    assert [(e.low, e.high) for e in ours] == ref
    mean = bootstrap_mean(num[0], rng=rng_for(n, "mean"), n_resamples=1000)  # one row: a lone block row is 1 × 1
    assert [(mean.low, mean.high)] == _bootstrap_by_definition(num[:1], np.full((1, n), 1.0), rng_for(n, "mean"), 1000)


@pytest.mark.parametrize("rows", [1, 2, 5])
def test_resampled_totals_taken_block_by_block_are_the_whole_products_bit_for_bit(
    rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # blocks of 333 resamples, the last a single row; 9,001 units: a 1 × 1 einsum of more than
    # 8,192 values sums in buffered chunks, in another order than the rows of a larger product
    import evalcore.results.stats as stats_mod

    monkeypatch.setattr(stats_mod, "_RESAMPLE_CELLS", 9001 * 333)
    x = np.random.default_rng(rows).random((rows, 9001))
    (totals,) = stats_mod._products(rng_for(rows, "t"), 9001, 1000, x)
    assert np.array_equal(totals, np.einsum("bi,ki->bk", resample_counts(rng_for(rows, "t"), 9001, 1000), x))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1 / 3, 2 / 3, 1.0, 1e-300, -0.5]) | st.floats(-1e6, 1e6), min_size=1,
                max_size=60),
       st.sampled_from([0.95, 0.9, 0.5, 0.999]))
def test_the_percentiles_of_an_interval_are_scipys_bit_for_bit(values: list[float], confidence: float) -> None:
    from evalcore.results.stats import _percentile_bounds

    boot = np.asarray(values)
    alpha = (1 - confidence) / 2
    lo, hi = np.clip(sps.quantile(boot, [alpha, 1 - alpha]), boot.min(), boot.max())
    assert _percentile_bounds(boot.reshape(-1, 1), alpha) == [(float(min(lo, hi)), float(max(lo, hi)))]


def test_the_percentiles_of_several_columns_skip_each_columns_undefined_resamples() -> None:
    from evalcore.results.stats import _percentile_bounds

    boot = np.array([[0.1, np.nan, np.inf], [0.3, 0.2, np.nan], [0.2, np.nan, np.nan]])
    first, second, third = _percentile_bounds(boot, 0.25)
    assert first == tuple(float(v) for v in sps.quantile(np.array([0.1, 0.3, 0.2]), [0.25, 0.75]))
    assert second == (0.2, 0.2) and third is None


rates = st.lists(st.sampled_from([0.0, 1 / 3, 2 / 3, 1.0]) | st.floats(0, 1), min_size=1, max_size=120)


@settings(max_examples=60, deadline=None)
@given(rates, st.integers(0, 2**32 - 1))
@example([2.0611006984411657e-25], 0)  # interpolation rounded low one ulp above high (CI, 2026-12-01)
@example([0.1] * 7, 5)
def test_bootstrap_interval_contains_the_point_estimate(values: list[float], seed: int) -> None:
    est = bootstrap_mean(values, rng=rng_for(seed, "p"), n_resamples=300)
    assert est.low is not None and est.high is not None and est.value is not None
    assert est.low - 1e-12 <= est.value <= est.high + 1e-12
    assert 0.0 - 1e-12 <= est.low <= est.high <= 1.0 + 1e-12


def test_bootstrap_statistic_of_kappa_equals_scipy_paired_percentile_bootstrap() -> None:
    rng = np.random.default_rng(4)
    cells = rng.integers(0, 6, (4, 120)).astype(float)  # per-submission (pp, pf, fp, ff) counts

    def kappa(pp: np.ndarray, pf: np.ndarray, fp: np.ndarray, ff: np.ndarray, axis: int = -1) -> np.ndarray:
        return kappa_from_cells(np.stack([x.sum(axis=axis) for x in (pp, pf, fp, ff)], axis=-1))

    ours = bootstrap_statistic(cells, kappa_from_cells, rng=rng_for(2, "kappa"), n_resamples=400)
    ref = sps.bootstrap(tuple(cells), kappa, paired=True, vectorized=True, method="percentile",
                        n_resamples=400, rng=rng_for(2, "kappa"))
    assert ours.value == pytest.approx(cohen_kappa_from_table(cells.sum(axis=1).reshape(2, 2)))
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)


@given(st.lists(st.tuples(*[st.integers(0, 50)] * 4), min_size=1, max_size=20))
def test_vectorised_kappa_equals_the_table_form(tables: list[tuple[int, int, int, int]]) -> None:
    got = kappa_from_cells(np.asarray(tables, dtype=float))
    for (pp, pf, fp, ff), k in zip(tables, got, strict=True):
        ref = cohen_kappa_from_table([[pp, pf], [fp, ff]])
        if ref is None:  # no items: undefined
            assert not np.isfinite(k)
        else:
            assert k == pytest.approx(ref)


# --------------------------------------------------------------------------------------------
# The interval's text (the one formatter of terminal tables and the report)
# --------------------------------------------------------------------------------------------


def test_a_rate_reads_as_a_percentage_with_its_bounds_in_the_callers_pattern() -> None:
    rate = Interval(value=0.4567, low=0.25, high=0.791, n=12)
    assert rate.text() == "45.7%"
    assert rate.text(digits=0) == "46%"
    assert rate.text(ci=" [{low:.0f}–{high:.0f}]") == "45.7% [25–79]"
    assert rate.text(ci="{low:.1f}–{high:.1f}", ci_only=True) == "25.0–79.1"
    assert rate.text(percent=False, digits=2, ci=" [{low:.2f}–{high:.2f}]") == "0.46 [0.25–0.79]"


def test_a_difference_in_points_carries_its_sign_and_no_percent_sign() -> None:
    delta = Interval(value=-0.182, low=-0.27, high=0.0, n=11)
    assert delta.text(unit="", signed=True, ci=" [{low:+.0f}, {high:+.0f}]") == "-18.2 [-27, +0]"
    assert Interval(value=0.031, n=3).text(unit=" pts", signed=True) == "+3.1 pts"


def test_an_interval_without_value_or_bounds_reads_as_a_dash_and_shows_no_brackets() -> None:
    assert Interval(value=None, n=0).text(ci=" [{low}–{high}]") == "—"
    assert Interval(value=None).text(ci="{low}–{high}", ci_only=True) == ""
    assert Interval(value=0.5, n=4).text(ci=" [{low:.0f}–{high:.0f}]") == "50.0%"  # no bounds: value alone


def test_an_interval_flattens_to_four_columns_named_after_it() -> None:
    assert Interval(value=0.5, low=0.25, high=0.75, n=8).columns("accuracy") == {
        "accuracy": 0.5, "accuracy_low": 0.25, "accuracy_high": 0.75, "accuracy_n": 8,
    }
