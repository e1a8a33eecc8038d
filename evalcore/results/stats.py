"""The statistics behind the leaderboard: bootstrap intervals, agreement (κ), self-family preference.

Pure functions over numpy arrays, and the `Interval` they return (the one interval type of the
results, with its one text formatter); nothing here knows about tables or files.

Bootstrap. The rates of a leaderboard are means (or ratios of sums) over tasks, and their 95%
intervals are *percentile bootstrap* intervals over those tasks, exactly as
``scipy.stats.bootstrap(method="percentile")`` computes them: the same resampling indices
(``rng.integers(0, n, (B, n))``), the same quantile rule (``scipy.stats.quantile``). What differs is
how a resample's statistic is evaluated: scipy materialises every resample (B × n × k floats; 0.34 s
for one system with 2,000 tasks and eight rates), we turn each resample's indices into per-task
counts and evaluate every statistic of that resample with one product (0.05 s). On a 50-system,
2,000-task sweep with per-area rows that is ~35 s against ~5 s of CPU. `tests/evalcore/results/test_stats.py`
checks the two agree. The percentile interval (not BCa) is used because leaderboard rates are
bounded and often degenerate (a system passing nothing, or everything), where BCa is undefined.

Reproducibility. Every interval draws from its own generator seeded from the run's seed plus the
names of what it estimates (system and area; judge for self-preference), so a figure does not change when another
system is added to the run or the systems are processed in a different order.

Agreement. Cohen's κ (two raters) and Fleiss' κ (a panel with a fixed number of raters per item)
from their textbook definitions; scipy has neither. Perfect observed agreement gives κ = 1 even in
the degenerate case where chance agreement is also 1 (both raters always said the same category),
where the formula is 0/0: a panel that never disagrees is reported as agreeing, not as undefined.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field
from scipy import stats as sps

CONFIDENCE = 0.95
"""Confidence level of every interval on the leaderboard."""

_RESAMPLE_CELLS = 8_000_000
"""Cap on B × n counts materialised at once (64 MB of int64): bounds memory for huge populations."""

_ROW_BINCOUNT = 1_000
"""From this many units on, a resample's counts are taken row by row (below, the Python loop costs more)."""


class Interval(BaseModel):
    """A point estimate with its percentile-bootstrap confidence interval over `n` units.

    The one interval type: the bootstrap returns it, the leaderboard, comparison and calibration
    models hold it, and their JSON and Parquet forms spell it `value`, `low`, `high`, `n`.
    """

    model_config = ConfigDict(frozen=True)

    value: float | None = Field(description="Point estimate; None when the population is empty.")
    low: float | None = None
    high: float | None = None
    n: int = Field(default=0, description="Units (tasks, submissions) it is computed over.")

    def text(
        self,
        *,
        percent: bool = True,
        digits: int = 1,
        unit: str | None = None,
        signed: bool = False,
        ci: str | None = None,
        ci_only: bool = False,
        missing: str = "—",
    ) -> str:
        """The interval as text: the one formatter of the terminal tables and the report page.

        `percent` shows a rate ×100 followed by `unit` ("%" unless given; "" or " pts" for a
        difference in points), with `digits` decimals; `signed` puts + on a positive value. `ci` is
        a format pattern of the bounds, scaled like the value (e.g. " [{low:.0f}–{high:.0f}]"),
        appended when both are known; `ci_only` gives that part alone ("" without bounds).
        No value: `missing`.
        """
        scale = 100.0 if percent else 1.0
        interval = ""
        if ci is not None and self.low is not None and self.high is not None:
            interval = ci.format(low=scale * self.low, high=scale * self.high)
        if ci_only:
            return interval
        if self.value is None:
            return missing
        suffix = ("%" if percent else "") if unit is None else unit
        return f"{scale * self.value:{'+' if signed else ''}.{digits}f}{suffix}{interval}"

    def columns(self, name: str) -> dict[str, float | int | None]:
        """The interval as the flat columns of a table: `<name>`, `<name>_low`, `_high`, `_n`."""
        return {name: self.value, f"{name}_low": self.low, f"{name}_high": self.high, f"{name}_n": self.n}


def rng_for(seed: int, *keys: str) -> np.random.Generator:
    """A generator seeded from the run's seed and the names of what is being estimated.

    Hash-derived keys (not call order) make every interval independent of which other systems,
    areas or metrics were computed in the same run.
    """
    words = [int(seed) & 0xFFFFFFFF, (int(seed) >> 32) & 0xFFFFFFFF]
    for key in keys:
        digest = hashlib.sha256(key.encode("utf-8")).digest()
        words.extend(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    return np.random.default_rng(np.random.SeedSequence(words))


def resample_chunks(
    rng: np.random.Generator, n: int, n_resamples: int
) -> Iterator[tuple[int, npt.NDArray[np.float64]]]:
    """The rows of `resample_counts`, a block of consecutive resamples at a time: (first row, block).

    Why: a statistic of each resample needs only its own row, so callers reduce each block as it
    comes and never hold the whole B × n matrix (12 GB for 750,000 submissions × 2,000 resamples).
    The blocks are the chunks the indices are drawn in, so the draws, and every figure, are those
    of `resample_counts`.
    """
    for start, idx in resample_indices(rng, n, n_resamples):
        b = idx.shape[0]
        if n >= _ROW_BINCOUNT:  # one row at a time: its counts stay in cache (3-6× faster)
            block = np.empty((b, n), dtype=np.float64)
            for r in range(b):
                block[r] = np.bincount(idx[r], minlength=n)
            yield start, block
        else:
            idx += (np.arange(b, dtype=np.int64) * n)[:, None]
            yield start, np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(np.float64)


def resample_indices(
    rng: np.random.Generator, n: int, n_resamples: int
) -> Iterator[tuple[int, npt.NDArray[np.int64]]]:
    """The resampled units themselves, a block of resamples at a time: (first row, (b, n) indices).

    The draws `resample_chunks` counts (scipy's `rng.integers(0, n, (B, n))`, in the same blocks),
    for a statistic that needs each drawn copy apart (`bootstrap_two_level`: a grading per copy)."""
    step = max(1, min(n_resamples, _RESAMPLE_CELLS // max(n, 1)))
    for start in range(0, n_resamples, step):
        yield start, rng.integers(0, n, (min(step, n_resamples - start), n))


def resample_counts(rng: np.random.Generator, n: int, n_resamples: int) -> npt.NDArray[np.float64]:
    """Per-unit multiplicities of `n_resamples` bootstrap resamples of `n` units (rows sum to n).

    The indices are drawn exactly as scipy.stats.bootstrap draws them, chunked over resamples only
    when B × n is too large to hold at once (`resample_chunks`).
    """
    out = np.empty((n_resamples, n), dtype=np.float64)
    for start, block in resample_chunks(rng, n, n_resamples):
        out[start : start + block.shape[0]] = block
    return out


def row_products(
    a: npt.NDArray[np.float64], x: npt.NDArray[np.float64], *, whole: tuple[int, int] | None = None
) -> npt.NDArray[np.float64]:
    """``np.einsum("bi,ki->bk", a, x)``, each element as it comes out of the `whole` (B, K) product
    this block of rows is part of (default: the block itself).

    einsum, not `@`: a fixed summation order (identical figures on every machine) and no BLAS
    thread pool, which costs more than it gains on these skinny products. einsum sums each element
    along its row in one order whatever the other rows, so a product can be computed a block of
    rows at a time, except a 1 × 1 product: that one einsum sums in buffered chunks of 8,192, in
    another order. A lone row of a larger product is therefore computed twice over and kept once.
    """
    if a.shape[0] == 1 and x.shape[0] == 1 and (whole or (1, 1)) != (1, 1):
        return np.asarray(np.einsum("bi,ki->bk", np.repeat(a, 2, axis=0), x)[:1], dtype=np.float64)
    return np.asarray(np.einsum("bi,ki->bk", a, x), dtype=np.float64)


def distinct_rows(rows: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """The distinct rows of a 2-D array (bit for bit, first occurrence first) and each row's index among them.

    By their bytes, not `np.unique(axis=0)`: that sorts rows as opaque items, 0.3 s for two rows
    of 75,000 values, holding the GIL.
    """
    index: dict[bytes, int] = {}
    which = np.empty(rows.shape[0], dtype=np.int64)
    keep: list[int] = []
    for i, row in enumerate(np.ascontiguousarray(rows)):
        which[i] = index.setdefault(row.tobytes(), len(index))
        if which[i] == len(keep):
            keep.append(i)
    return rows[keep], which


def _products(
    rng: np.random.Generator, n: int, n_resamples: int, *operands: npt.NDArray[np.float64]
) -> list[npt.NDArray[np.float64]]:
    """For each (k, n) operand, its (B, k) resampled totals `counts @ operand.T`, block by block.

    Equal rows are summed once (a leaderboard row's eight denominators are five rows of ones and
    the audited mask twice): the cost is in the rows, and equal rows give equal sums. A single
    resample is one einsum per operand, as ever (`row_products`: a 1 × 1 product sums differently).
    """
    if n_resamples == 1:
        ((_, block),) = resample_chunks(rng, n, n_resamples)
        return [row_products(block, x, whole=(1, x.shape[0])) for x in operands]
    rows = np.concatenate(operands, axis=0)
    distinct, which = distinct_rows(rows)
    totals = np.empty((n_resamples, distinct.shape[0]), dtype=np.float64)
    for start, block in resample_chunks(rng, n, n_resamples):
        totals[start : start + block.shape[0]] = row_products(block, distinct, whole=(n_resamples, rows.shape[0]))
    bounds = np.cumsum([0] + [x.shape[0] for x in operands])
    return [totals[:, which[bounds[i] : bounds[i + 1]]] for i in range(len(operands))]


def _percentile_bounds(boot: npt.NDArray[np.float64], alpha: float) -> list[tuple[float, float] | None]:
    """Per column of `boot` (B, k): the alpha and 1-alpha percentiles of its finite values,
    ordered and within their range; None for a column with no finite value.

    The percentiles are ``scipy.stats.quantile``'s default (linear interpolation, Hyndman & Fan
    type 7) in scipy's own arithmetic, for all k columns with one sort: scipy costs 0.8 ms a call,
    which at 500 systems × 11 areas × 8 rates is 35 s (`tests/evalcore/results/test_stats.py`
    checks the two agree exactly). Interpolating between two equal values can round one ulp outside
    them (a one-task sample of 2.06e-25 gave low > high, CI 2026-12-01); a percentile never leaves
    the sample's range.
    """
    if not boot.shape[0]:  # no resample (bootstrap_samples 0): no interval
        return [None] * boot.shape[1]
    finite = np.isfinite(boot)
    n = np.count_nonzero(finite, axis=0)
    y = np.sort(np.where(finite, boot, np.inf), axis=0)  # each column's finite values first, in order
    p = np.asarray([alpha, 1.0 - alpha])[:, None]
    count = n.astype(np.float64)[None, :]
    jg = p * count + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    g[j < 0] = 0
    j, jp1 = np.clip(j, 0.0, count - 1), np.clip(jp1, 0.0, count - 1)
    cols = np.arange(boot.shape[1])
    with np.errstate(invalid="ignore"):  # a column with no finite value: inf · 0, never read
        q = (1 - g) * y[j.astype(np.int64), cols] + g * y[jp1.astype(np.int64), cols]
    out: list[tuple[float, float] | None] = []
    for c in cols:
        if not n[c]:
            out.append(None)
            continue
        lo, hi = np.clip(q[:, c], y[0, c], y[n[c] - 1, c])
        out.append((float(min(lo, hi)), float(max(lo, hi))))
    return out


def bootstrap_ratio(
    numerators: npt.ArrayLike,
    denominators: npt.ArrayLike | None,
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    confidence: float = CONFIDENCE,
) -> list[Interval]:
    """Point estimates and percentile-bootstrap intervals of Σnum / Σden over resampled units.

    `numerators` is (k, n) or (n,): k statistics sharing the same n resampled units (tasks,
    submissions); `denominators` has the same shape, or None for plain means (Σx / n). All k
    statistics use the same resamples (a paired bootstrap), which keeps them mutually consistent.
    Returns one Interval per statistic; an empty population gives value/low/high None.
    """
    num = np.atleast_2d(np.asarray(numerators, dtype=np.float64))
    k, n = num.shape
    den = None if denominators is None else np.atleast_2d(np.asarray(denominators, dtype=np.float64))
    if den is not None and den.shape != num.shape:
        raise ValueError(f"denominators shape {den.shape} differs from numerators shape {num.shape}")
    if n == 0:
        return [Interval(value=None) for _ in range(k)]
    den_total = den.sum(axis=1) if den is not None else np.full(k, float(n))
    point = np.divide(num.sum(axis=1), den_total, out=np.full(k, np.nan), where=den_total != 0)
    totals = _products(rng, n, n_resamples, num) if den is None else _products(rng, n, n_resamples, num, den)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = totals[0] / n if den is None else totals[0] / totals[1]  # (B, k)
    out: list[Interval] = []
    for j, bounds in enumerate(_percentile_bounds(boot, (1.0 - confidence) / 2.0)):
        if not np.isfinite(point[j]) or bounds is None:
            out.append(Interval(value=None, n=n))
            continue
        out.append(Interval(value=float(point[j]), low=bounds[0], high=bounds[1], n=n))
    return out


def bootstrap_mean(
    values: npt.ArrayLike,
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    confidence: float = CONFIDENCE,
) -> Interval:
    """Mean of one sample with its percentile-bootstrap interval (units = the sample's elements)."""
    return bootstrap_ratio(values, None, rng=rng, n_resamples=n_resamples, confidence=confidence)[0]


def bootstrap_statistic(
    per_unit: npt.ArrayLike,
    statistic: Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]],
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    confidence: float = CONFIDENCE,
) -> Interval:
    """A statistic of summed per-unit counts, with its percentile-bootstrap interval.

    `per_unit` is (k, n): k additive quantities of each of n units (e.g. a submission's four cells
    of a judge-vs-expert 2×2 table); `statistic` maps resampled totals (B, k) to B values (NaN
    where undefined). The same resampling as `bootstrap_ratio` (and scipy), for statistics that are
    not a ratio of two sums: Cohen's κ against experts, a difference of two error rates.
    """
    x = np.atleast_2d(np.asarray(per_unit, dtype=np.float64))
    k, n = x.shape
    if n == 0:
        return Interval(value=None)
    point = float(statistic(x.sum(axis=1)[None, :])[0])
    if not np.isfinite(point):
        return Interval(value=None, n=n)
    (totals,) = _products(rng, n, n_resamples, x)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = np.asarray(statistic(totals), dtype=np.float64)
    (bounds,) = _percentile_bounds(boot.reshape(-1, 1), (1.0 - confidence) / 2.0)
    if bounds is None:
        return Interval(value=point, n=n)
    return Interval(value=point, low=bounds[0], high=bounds[1], n=n)


def kappa_from_cells(cells: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Cohen's κ of many 2×2 tables at once: `cells` is (B, 4) = (pp, pf, fp, ff) counts.

    Vectorised `cohen_kappa_from_table` (same degenerate-case rule: perfect agreement is 1).
    """
    c = np.asarray(cells, dtype=np.float64)
    total = c.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o = (c[:, 0] + c[:, 3]) / total
        a_pass, b_pass = (c[:, 0] + c[:, 1]) / total, (c[:, 0] + c[:, 2]) / total
        p_e = a_pass * b_pass + (1 - a_pass) * (1 - b_pass)
        kappa = (p_o - p_e) / (1 - p_e)
    return np.where(p_o == 1.0, 1.0, kappa)


# --------------------------------------------------------------------------------------------
# Agreement
# --------------------------------------------------------------------------------------------


def cohen_kappa_from_table(table: npt.ArrayLike) -> float | None:
    """Cohen's κ from a square contingency table (rows: rater A's category, columns: rater B's).

    κ = (p_o − p_e) / (1 − p_e). None for an empty table; 1.0 for perfect observed agreement
    (see the module docstring for the degenerate case).
    """
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] != t.shape[1]:
        raise ValueError(f"a Cohen contingency table must be square, got shape {t.shape}")
    total = t.sum()
    if total == 0:
        return None
    p_o = np.trace(t) / total
    if p_o == 1.0:
        return 1.0
    p_e = float((t.sum(axis=1) * t.sum(axis=0)).sum() / total**2)
    return float((p_o - p_e) / (1.0 - p_e))


def cohen_kappa(rater_a: Sequence[object], rater_b: Sequence[object]) -> float | None:
    """Cohen's κ of two raters' labels on the same items (any hashable categories)."""
    if len(rater_a) != len(rater_b):
        raise ValueError(f"raters labelled different numbers of items: {len(rater_a)} vs {len(rater_b)}")
    if not rater_a:
        return None
    labels = sorted({*map(str, rater_a), *map(str, rater_b)})
    res = sps.contingency.crosstab(
        np.asarray([str(x) for x in rater_a]), np.asarray([str(x) for x in rater_b]), levels=(labels, labels)
    )
    square = res.count
    return cohen_kappa_from_table(square)


def fleiss_kappa(counts: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> float | None:
    """Fleiss' κ from an items × categories matrix of rater counts (every row sums to m raters).

    `weights` (optional, one per row) counts how many items share that row, so a panel's verdicts
    can be passed as a handful of distinct patterns with their frequencies instead of millions of
    rows. None when there are no items; 1.0 for perfect agreement.
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 2:
        raise ValueError(f"Fleiss counts must be 2-D (items × categories), got shape {c.shape}")
    w = np.ones(c.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    keep = w > 0
    c, w = c[keep], w[keep]
    n_items = w.sum()
    if n_items == 0:
        return None
    m = c.sum(axis=1)
    if not np.all(m == m[0]):
        raise ValueError("every item needs the same number of raters for Fleiss' κ")
    m0 = float(m[0])
    if m0 < 2:
        raise ValueError("Fleiss' κ needs at least 2 raters per item")
    p_item = ((c * c).sum(axis=1) - m0) / (m0 * (m0 - 1.0))
    p_bar = float((w * p_item).sum() / n_items)
    if p_bar == 1.0:
        return 1.0
    p_cat = (w[:, None] * c).sum(axis=0) / (n_items * m0)
    p_e = float((p_cat**2).sum())
    return float((p_bar - p_e) / (1.0 - p_e))


# --------------------------------------------------------------------------------------------
# Two levels: tasks, then the gradings of a task (a retest's repeats)
# --------------------------------------------------------------------------------------------


def grading_picks(
    picker: np.random.Generator, gradings: npt.NDArray[np.float64], counts: npt.NDArray[np.int64],
    units: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    """For every drawn copy of a unit (`units`, any shape of unit indices), one of that unit's
    gradings drawn uniformly among its own: `gradings[u, :counts[u]]` (the original first, then its
    repeats; padding after). Each copy draws on its own, as a second-level resample of size one.

    Why one grading per copy and not the mean of a resample of them: the leaderboard scores each
    task by one grading (the original), so its judge noise is that of one grading, which drawing
    one of its observed gradings reproduces.
    """
    c = np.maximum(np.asarray(counts, dtype=np.int64), 1)[units]
    pick = np.minimum((picker.random(units.shape) * c).astype(np.int64), c - 1)
    return np.asarray(gradings[units, pick], dtype=np.float64)


def bootstrap_two_level(
    gradings: npt.ArrayLike,
    counts: npt.ArrayLike,
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    confidence: float = CONFIDENCE,
) -> Interval:
    """The mean of the units' first gradings, with a two-level percentile-bootstrap interval.

    Level one resamples the n units (tasks) exactly as `bootstrap_ratio` does (the same draws from
    `rng`); level two draws, for each copy of a unit in a replicate, one of its `counts[u]`
    gradings (`grading_picks`, from a generator spawned off `rng`, so the first level's draws are
    untouched). With one grading per unit it is the task-only interval. `gradings` is (n, G),
    `counts` (n,); the point estimate is the mean of the first gradings (the leaderboard's value).
    """
    g = np.atleast_2d(np.asarray(gradings, dtype=np.float64))
    c = np.asarray(counts, dtype=np.int64)
    n = g.shape[0]
    if n == 0:
        return Interval(value=None)
    point = float(g[:, 0].mean())
    if not n_resamples:
        return Interval(value=point, n=n)
    picker = rng.spawn(1)[0]
    boot = np.empty(n_resamples, dtype=np.float64)
    for start, idx in resample_indices(rng, n, n_resamples):
        boot[start : start + idx.shape[0]] = grading_picks(picker, g, c, idx).sum(axis=1) / n
    (bounds,) = _percentile_bounds(boot.reshape(-1, 1), (1.0 - confidence) / 2.0)
    if bounds is None:
        return Interval(value=point, n=n)
    return Interval(value=point, low=bounds[0], high=bounds[1], n=n)
