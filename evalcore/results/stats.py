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
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field
from scipy import stats as sps

CONFIDENCE = 0.95
"""Confidence level of every interval on the leaderboard."""

_RESAMPLE_CELLS = 8_000_000
"""Cap on B × n counts materialised at once (64 MB of int64): bounds memory for huge populations."""


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


def resample_counts(rng: np.random.Generator, n: int, n_resamples: int) -> npt.NDArray[np.float64]:
    """Per-unit multiplicities of `n_resamples` bootstrap resamples of `n` units (rows sum to n).

    The indices are drawn exactly as scipy.stats.bootstrap draws them, chunked over resamples only
    when B × n is too large to hold at once.
    """
    out = np.empty((n_resamples, n), dtype=np.float64)
    step = max(1, min(n_resamples, _RESAMPLE_CELLS // max(n, 1)))
    for start in range(0, n_resamples, step):
        b = min(step, n_resamples - start)
        idx = rng.integers(0, n, (b, n))
        flat = (idx + (np.arange(b, dtype=np.int64) * n)[:, None]).ravel()
        out[start : start + b] = np.bincount(flat, minlength=b * n).reshape(b, n)
    return out


def _percentile_bounds(boot: npt.NDArray[np.float64], alpha: float) -> tuple[float, float]:
    """The alpha and 1-alpha percentiles of the bootstrap values, ordered and within their range.

    Interpolating between two equal values can round one ulp outside them (a one-task sample of
    2.06e-25 gave low > high, CI 2026-12-01); a percentile never leaves the sample's range.
    """
    lo, hi = np.clip(sps.quantile(boot, [alpha, 1.0 - alpha]), boot.min(), boot.max())
    return float(min(lo, hi)), float(max(lo, hi))


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
    counts = resample_counts(rng, n, n_resamples)
    with np.errstate(invalid="ignore", divide="ignore"):
        # einsum, not `@`: a fixed summation order (identical figures on every machine) and no
        # BLAS thread pool, which costs more than it gains on these skinny products
        boot_num = np.einsum("bi,ki->bk", counts, num)  # (B, k)
        boot = boot_num / np.einsum("bi,ki->bk", counts, den) if den is not None else boot_num / n
    alpha = (1.0 - confidence) / 2.0
    out: list[Interval] = []
    for j in range(k):
        col = boot[:, j]
        col = col[np.isfinite(col)]
        if not np.isfinite(point[j]) or col.size == 0:
            out.append(Interval(value=None, n=n))
            continue
        lo, hi = _percentile_bounds(col, alpha)
        out.append(Interval(value=float(point[j]), low=lo, high=hi, n=n))
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
    counts = resample_counts(rng, n, n_resamples)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = np.asarray(statistic(np.einsum("bi,ki->bk", counts, x)), dtype=np.float64)
    boot = boot[np.isfinite(boot)]
    if boot.size == 0:
        return Interval(value=point, n=n)
    lo, hi = _percentile_bounds(boot, (1.0 - confidence) / 2.0)
    return Interval(value=point, low=lo, high=hi, n=n)


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
