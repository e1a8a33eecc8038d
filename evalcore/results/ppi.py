"""Prediction-powered inference of a mean: a judges' rate corrected by expert labels on a random sample.

Why: the leaderboard's rates are the judges' rates. A lenient judge raises every system's pass rate,
and the bootstrap over tasks cannot see it: its interval is centred on the judges' mean, however
many tasks there are. Expert labels on a uniform random sample of submissions fix the centre;
prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, *Science* 382, 2023)
uses the judges' scores on every other submission to make the interval narrower than the labels
alone would give, and stays valid however wrong the judges are.

The estimator of a mean θ = E[Y] (the paper's, and `ppi_py.ppi_mean_ci` with ``lam=1``):

* ``f``: the judges' score of a submission (the prediction), known everywhere;
* ``Y``: the expert's score, known on the n labelled submissions, a uniform random sample;
* the N unlabelled submissions are the rest;

    θ̂ = mean(f over the N unlabelled) + mean(Y − f over the n labelled)        (the rectifier)
    σ̂² = var(f over the unlabelled) / N + var(Y − f over the labelled) / n
    interval = θ̂ ± z_(1−α/2) · σ̂                                              (normal, the CLT)

The two terms are independent (different submissions), so their variances add. We use the
sample variance (``ddof=1``) where ppi_py uses the population one (``np.std``): the same for large
n, a little wider (more careful) for the few dozen labels a system typically gets. The estimate
is unbiased whatever the judges do; when they agree with the experts, var(Y − f) is small and the
interval is narrower than `labels_only`'s (var(Y) / n).

ppi_py itself is not a dependency: it pulls numba, statsmodels and scikit-learn for these few lines.

Rates are bounded (a pass rate lies in [0, 1], a count per task is ≥ 0): an estimate and its
interval are clipped to the bounds given, as the bootstrap's percentiles never leave them.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from evalcore.results.stats import CONFIDENCE, Interval

Bounds = tuple[float | None, float | None]
"""The range a rate cannot leave (None: unbounded on that side)."""
RATE: Bounds = (0.0, 1.0)
"""A share (pass rates)."""
COUNT: Bounds = (0.0, None)
"""A non-negative mean (hallucinations per task)."""


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    return float(sps.norm.ppf(1.0 - (1.0 - confidence) / 2.0))


def _clip(x: float, bounds: Bounds) -> float:
    low, high = bounds
    if low is not None:
        x = max(low, x)
    if high is not None:
        x = min(high, x)
    return x


def _var_of_mean(x: npt.NDArray[np.float64]) -> float:
    """The estimated variance of the mean of `x` (sample variance / size); 0 for a single value."""
    return float(np.var(x, ddof=1) / x.size) if x.size > 1 else 0.0


def labels_only(y: npt.ArrayLike, *, confidence: float = CONFIDENCE, bounds: Bounds = RATE) -> Interval:
    """The classical estimate from the labels alone: their mean ± z · sd / √n (the CLT interval).

    What an evaluation without judges would publish from the same labels; the corrected interval is
    compared with it. No interval from fewer than two labels (no variance to speak of).
    """
    values = np.asarray(y, dtype=np.float64).ravel()
    if values.size == 0:
        return Interval(value=None)
    mean = float(values.mean())
    if values.size < 2:
        return Interval(value=_clip(mean, bounds), n=int(values.size))
    half = _z(confidence) * math.sqrt(_var_of_mean(values))
    return Interval(value=_clip(mean, bounds), low=_clip(mean - half, bounds), high=_clip(mean + half, bounds),
                    n=int(values.size))


def ppi_mean(
    y_labelled: npt.ArrayLike,
    f_labelled: npt.ArrayLike,
    f_unlabelled: npt.ArrayLike,
    *,
    confidence: float = CONFIDENCE,
    bounds: Bounds = RATE,
) -> Interval:
    """The prediction-powered estimate of E[Y] and its interval (module docstring); `n` = the labels.

    `y_labelled[i]` and `f_labelled[i]` are the expert's and the judges' scores of the same labelled
    submission; `f_unlabelled` the judges' scores of the others. With no unlabelled submission the
    labels are the whole population and the estimate is theirs (`labels_only`); with no label there
    is nothing to correct with (value None). Fewer than two labels give an estimate without interval.
    """
    y = np.asarray(y_labelled, dtype=np.float64).ravel()
    f = np.asarray(f_labelled, dtype=np.float64).ravel()
    fu = np.asarray(f_unlabelled, dtype=np.float64).ravel()
    if y.shape != f.shape:
        raise ValueError(f"{y.size} expert scores but {f.size} judges' scores of the labelled submissions")
    if y.size == 0:
        return Interval(value=None)
    if fu.size == 0:
        return labels_only(y, confidence=confidence, bounds=bounds)
    rectifier = y - f
    estimate = float(fu.mean() + rectifier.mean())
    if y.size < 2:
        return Interval(value=_clip(estimate, bounds), n=int(y.size))
    half = _z(confidence) * math.sqrt(_var_of_mean(fu) + _var_of_mean(rectifier))
    return Interval(value=_clip(estimate, bounds), low=_clip(estimate - half, bounds),
                    high=_clip(estimate + half, bounds), n=int(y.size))
