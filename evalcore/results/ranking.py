"""Ranks with their uncertainty: paired comparisons of systems, rank intervals and tiers.

Why: a leaderboard ranks by point estimates, but with dozens of systems most neighbours cannot be
told apart on the tasks at hand. Ranking by the point estimate alone invites readers (and the
systems' makers) to read noise as order. Every rule below comes from one decision,
`Ranking.separable`: system A is *separably better* than B when the paired-bootstrap interval of
their headline-rate difference, over the tasks both were scored on, lies above zero.

* **Paired bootstrap.** Tasks are resampled once per replicate and the same draw applies to every
  system (a task that is hard is hard for all): the difference A − B in a replicate is the mean of
  A's scores minus the mean of B's over the tasks *both* were scored on, weighted by the draw. The
  replicate draws are those of `stats.resample_counts`, seeded from the run's seed and the area
  (`stats.rng_for`), so figures do not depend on which other systems are in the run.
* **P(A beats B)** is the share of replicates where A's difference is positive (ties count half):
  the report's pairwise matrix.
* **Rank interval.** A's best possible rank is 1 + the number of systems separably better than A;
  its worst is the number of systems minus those A is separably better than. Rank 1 is the best.
* **Tiers.** Systems in point-estimate order; a tier starts with its leader and takes every next
  system the leader is not separably better than; the first system the leader is separably better
  than starts the next tier. Systems in one tier cannot be told apart from their tier's leader.

Pure numpy; `tests/evalcore/results/test_ranking.py` checks each rule on planted systems.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalcore.results.stats import (
    CONFIDENCE,
    distinct_rows,
    grading_picks,
    resample_counts,
    resample_indices,
    row_products,
)

_CELLS = 4_000_000
"""Cap on B × S × (block of systems) comparisons held at once in the pairwise counts (4 MB each)."""


@dataclass(frozen=True)
class Ranking:
    """The pairwise comparisons of one area's systems and what follows from them.

    `systems` is in point-estimate order (best first, ties by name); the matrices are indexed in
    that order. `beats[i, j]` = P(system i beats system j); `separable[i, j]` = i is separably
    better than j at the configured confidence.
    """

    systems: list[str]
    point: list[float]
    beats: npt.NDArray[np.float64]
    separable: npt.NDArray[np.bool_]
    confidence: float

    def rank_interval(self, system: str) -> tuple[int, int]:
        """(best rank, worst rank) the data allow this system: see the module docstring."""
        i = self.systems.index(system)
        better = int(self.separable[:, i].sum())
        worse = int(self.separable[i, :].sum())
        return 1 + better, len(self.systems) - worse

    def tiers(self) -> dict[str, int]:
        """Tier of every system (1 = top): systems in one tier cannot be told from its leader."""
        out: dict[str, int] = {}
        tier, leader = 0, -1
        for i, system in enumerate(self.systems):
            if leader < 0 or self.separable[leader, i]:
                tier, leader = tier + 1, i
            out[system] = tier
        return out


def rank_systems(
    scores: Mapping[str, Mapping[str, float]],
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    confidence: float = CONFIDENCE,
) -> Ranking:
    """Compare every pair of systems on their shared tasks with one paired bootstrap.

    `scores[system][task_id]` is the system's headline score on a task it was scored on (tasks it
    was not scored on are absent). Systems with no scored task are ranked last and separable from
    nobody.
    """
    names = sorted(scores)
    tasks = sorted({t for by_task in scores.values() for t in by_task})
    col = {t: k for k, t in enumerate(tasks)}
    s, n = len(names), len(tasks)
    x = np.zeros((s, n), dtype=np.float64)
    m = np.zeros((s, n), dtype=np.float64)
    for i, name in enumerate(names):
        for task, value in scores[name].items():
            x[i, col[task]] = float(value)
            m[i, col[task]] = 1.0
    return rank_matrix(names, x, m, rng=rng, n_resamples=n_resamples, confidence=confidence)


def rank_matrix(
    names: Sequence[str],
    x: npt.NDArray[np.float64],
    m: npt.NDArray[np.float64],
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    confidence: float = CONFIDENCE,
) -> Ranking:
    """`rank_systems` from aligned arrays, for callers that hold the scores as a matrix already.

    `names` sorted; `x` / `m` (systems × tasks): the score and 1.0 where the system was scored on
    the task (0.0 in both elsewhere). The columns are the tasks some system was scored on, sorted
    by task id: the replicate draws are indexed by them, so any other columns change the figures.
    (Taken in C order: numpy sums a row pairwise only along contiguous memory, and the point
    estimates must not change with the caller's memory layout.)
    """
    s, n = x.shape
    x, m = np.ascontiguousarray(x, dtype=np.float64), np.ascontiguousarray(m, dtype=np.float64)
    counts_m = m.sum(axis=1)
    point = np.divide((x * m).sum(axis=1), counts_m, out=np.full(s, -np.inf), where=counts_m > 0)
    order = sorted(range(s), key=lambda i: (-point[i], names[i]))
    x, m, point = x[order], m[order], point[order]
    ordered = [names[i] for i in order]
    beats = np.full((s, s), 0.5)
    separable = np.zeros((s, s), dtype=bool)
    if s and n:
        counts = resample_counts(rng, n, n_resamples)  # (B, T): one draw of tasks for every system
        alpha = (1.0 - confidence) / 2.0
        if np.all(m == m[:1]):
            _compare_common(counts, x, m[0], alpha, beats, separable)
        else:
            _compare_shared(counts, x, m, alpha, beats, separable)
    np.fill_diagonal(beats, 0.5)
    np.fill_diagonal(separable, False)
    return Ranking(systems=ordered, point=[float(p) if np.isfinite(p) else float("nan") for p in point],
                   beats=beats, separable=separable, confidence=confidence)


def _record(i: int, diff: npt.NDArray[np.float64], alpha: float, beats: npt.NDArray[np.float64],
            separable: npt.NDArray[np.bool_]) -> None:
    """Fill row i from its (B, S) replicate differences i − j (NaN where no task is shared).

    P(i beats j) counts the positive differences (ties half) among the defined ones; i is separably
    better than j when the `alpha` quantile of the defined differences is above zero. That quantile
    is taken (`np.quantile`, linear interpolation, as `np.nanquantile` takes it) only for the pairs
    whose count of differences ≤ 0 puts zero within reach of the two order statistics it
    interpolates (`_undecided`); for every other pair the count alone gives its sign.
    """
    if np.isinf(diff).any():  # never from finite scores; kept exact all the same
        _record_nanquantile(i, diff, alpha, beats, separable)
        return
    n_valid = np.count_nonzero(~np.isnan(diff), axis=0)
    above = np.count_nonzero(diff > 0, axis=0)
    ties = np.count_nonzero(diff == 0, axis=0)
    has = n_valid > 0
    beats[i, has] = (above + 0.5 * ties)[has] / n_valid[has]
    sure, undecided = _undecided(n_valid - above, n_valid, alpha)
    row = sure & has
    for j in np.flatnonzero(undecided & has):
        col = diff[:, j]
        row[j] = float(np.quantile(col[~np.isnan(col)], alpha)) > 0
    separable[i] = row


def _record_nanquantile(i: int, diff: npt.NDArray[np.float64], alpha: float, beats: npt.NDArray[np.float64],
                        separable: npt.NDArray[np.bool_]) -> None:
    """`_record` by its definition: every pair's quantile taken (the reference for the shortcut)."""
    valid = np.isfinite(diff)
    n_valid = valid.sum(axis=0)
    wins = np.where(valid, (diff > 0) + 0.5 * (diff == 0), 0.0).sum(axis=0)
    has = n_valid > 0
    beats[i, has] = wins[has] / n_valid[has]
    low = np.full(diff.shape[1], np.nan)
    if has.any():
        low[has] = np.nanquantile(diff[:, has], alpha, axis=0)
    separable[i] = np.nan_to_num(low, nan=0.0) > 0


def _undecided(
    at_most_zero: npt.NDArray[np.int64], n: npt.NDArray[np.int64] | int, alpha: float
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """From how many of n differences are ≤ 0: (quantile surely > 0, sign not decided by the count).

    The linear `alpha` quantile of n sorted values interpolates the two at positions ⌊h⌋ and
    ⌊h⌋ + 1, h = alpha·(n − 1) (up to rounding of h: one position of margin each way). When at
    most ⌊h⌋ − 1 values are ≤ 0 both are positive, and numpy's interpolation of two positive values
    is positive; when at least ⌊h⌋ + 3 are, both are ≤ 0, and so is the interpolation. In between,
    the caller takes the quantile itself.
    """
    h = np.floor(alpha * (np.asarray(n, dtype=np.float64) - 1.0)).astype(np.int64)
    sure = at_most_zero <= h - 1
    return sure, ~sure & (at_most_zero < h + 3)


def _compare_common(counts: npt.NDArray[np.float64], x: npt.NDArray[np.float64], mask: npt.NDArray[np.float64],
                    alpha: float, beats: npt.NDArray[np.float64], separable: npt.NDArray[np.bool_]) -> None:
    """Every system scored on the same tasks (the usual case): one mean per system per replicate.

    The difference of i and j in a replicate is means[i] − means[j], whose sign is that of the
    comparison means[i] vs means[j] (an IEEE difference is 0 only between equal values). So every
    pair is decided by counting comparisons, in blocks of systems (B × S² comparisons, bounded
    memory), and the quantile is taken only for the undecided pairs (`_record`).
    """
    den = counts @ mask  # (B,)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.einsum("bt,st->bs", counts, x * mask) / den[:, None]  # (B, S)
    if not (np.isfinite(means).all() and np.abs(means).max(initial=0.0) <= 1e300):  # i − j could overflow
        for i in range(x.shape[0]):
            _record(i, means[:, [i]] - means, alpha, beats, separable)
        return
    b, s = means.shape
    if not b:  # no replicate: no pair is compared (P = 0.5, nothing separable)
        return
    by_system = np.ascontiguousarray(means.T)  # (S, B)
    above = np.empty((s, s), dtype=np.int64)
    ties = np.empty((s, s), dtype=np.int64)
    step = max(1, _CELLS // max(s * b, 1))
    for i0 in range(0, s, step):
        i1 = min(s, i0 + step)
        rows, cols = by_system[i0:i1, None, :], by_system[None, i0:, :]
        above[i0:i1, i0:] = np.count_nonzero(rows > cols, axis=2)
        ties[i0:i1, i0:] = np.count_nonzero(rows == cols, axis=2)
        # j beats i where i does not beat or tie j: the lower triangle without comparing again
        above[i0:, i0:i1] = b - above[i0:i1, i0:].T - ties[i0:i1, i0:].T
        ties[i0:, i0:i1] = ties[i0:i1, i0:].T
    beats[:] = (above + 0.5 * ties) / b
    sure, undecided = _undecided(b - above, b, alpha)
    separable[:] = sure
    for i, j in zip(*np.nonzero(undecided), strict=True):
        separable[i, j] = float(np.quantile(means[:, i] - means[:, j], alpha)) > 0


def _compare_shared(counts: npt.NDArray[np.float64], x: npt.NDArray[np.float64], m: npt.NDArray[np.float64],
                    alpha: float, beats: npt.NDArray[np.float64], separable: npt.NDArray[np.bool_]) -> None:
    """Systems scored on different tasks: each pair's difference over the tasks both were scored on.

    For system i and every j: den = Σ counts·shared, a = Σ counts·shared·x_i, b = Σ counts·shared·x_j,
    shared = m_i·m_j, difference (a − b) / den. Each is a row of one einsum, and a row's sums do not
    depend on the other rows, so rows that are equal are summed once: den and a depend on j only
    through its shared mask (one per distinct mask), and where m_j ⊆ m_i, shared = m_j and b is j's
    own total (computed once for all i). With most systems scored on the same tasks this is a few
    rows per system instead of 3·S; with every system's tasks different it is 3·S as before.
    Everything but a depends on i only through its own mask m_i, so it is computed once for all
    the systems scored on the same tasks (a synthetic 20,000-submission leaderboard: 2,500
    systems over 8 tasks, 57 % of them missing one or more, in 88 groups).
    """
    s = x.shape[0]
    whole = (counts.shape[0], s)

    def rows(y: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return row_products(counts, y, whole=whole)

    own = rows(m * x)  # b where m_j ⊆ m_i
    masks, group = distinct_rows(m)
    for g, mask in enumerate(masks):
        # what depends on i only through its mask, once for every system scored on these tasks
        shared = m * mask  # (S, T): tasks these systems share with each system
        distinct, which = distinct_rows(shared)
        other = np.flatnonzero(~np.all(shared == m, axis=1))  # m_j ⊄ m_i
        den = rows(distinct)[:, which]
        theirs = own.copy()
        if other.size:
            theirs[:, other] = rows(shared[other] * x[other])
        for i in np.flatnonzero(group == g):
            a = rows(distinct * x[i])[:, which]
            with np.errstate(invalid="ignore", divide="ignore"):
                diff = (a - theirs) / den
            _record(int(i), diff, alpha, beats, separable)


def rank_two_level(
    names: Sequence[str],
    gradings: npt.NDArray[np.float64],
    counts: npt.NDArray[np.int64],
    m: npt.NDArray[np.float64],
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    confidence: float = CONFIDENCE,
    block: int = 50,
) -> Ranking:
    """`rank_matrix` with judge noise: tasks resampled, then one grading of each drawn cell.

    `gradings` (systems × tasks × G) holds each scored cell's gradings, the original first (its
    headline score: the point estimates are the originals'), `counts` how many each has (1 for a
    cell never repeated), `m` the scored mask as in `rank_matrix`. In each replicate the tasks are
    drawn once for every system (paired: the same draws as `rank_matrix`), then, for every copy of
    a drawn task, each system's grading of it is drawn among its own (`stats.grading_picks`),
    independently per system and per copy: two systems' judge noise is not shared. A difference is
    over the tasks both systems were scored on; differences within 1e-12 of zero are ties (sums of
    the same scores in another order). Cost: B × S² × T products (blocks of `block` replicates),
    against B × S × T for the task-only path.
    """
    s, n = m.shape
    x0 = np.ascontiguousarray(gradings[:, :, 0], dtype=np.float64)
    counts_m = m.sum(axis=1)
    point = np.divide((x0 * m).sum(axis=1), counts_m, out=np.full(s, -np.inf), where=counts_m > 0)
    order = sorted(range(s), key=lambda i: (-point[i], names[i]))
    g, c, m, point = gradings[order], counts[order], np.ascontiguousarray(m[order], dtype=np.float64), point[order]
    ordered = [names[i] for i in order]
    beats = np.full((s, s), 0.5)
    separable = np.zeros((s, s), dtype=bool)
    if s and n and n_resamples:
        alpha = (1.0 - confidence) / 2.0
        picker = rng.spawn(1)[0]
        diff = np.empty((s, n_resamples, s), dtype=np.float64)  # diff[i, b, j] = i − j in replicate b
        for start, idx in resample_indices(rng, n, n_resamples):  # the same first level as rank_matrix
            for b0 in range(0, idx.shape[0], block):
                drawn = idx[b0 : b0 + block]  # (B', T): the tasks of each replicate, copy by copy
                mask = m[:, drawn]  # (S, B', T)
                x = np.stack([grading_picks(picker, g[i], c[i], drawn) for i in range(s)])  # (S, B', T)
                den = np.einsum("ibt,jbt->bij", mask, mask)
                own = np.einsum("ibt,jbt->bij", mask * x, mask)  # i's sum over the copies it shares with j
                with np.errstate(invalid="ignore", divide="ignore"):
                    d = (own - own.transpose(0, 2, 1)) / den
                d[np.abs(d) < 1e-12] = 0.0
                diff[:, start + b0 : start + b0 + drawn.shape[0], :] = d.transpose(1, 0, 2)
        for i in range(s):
            _record(i, diff[i], alpha, beats, separable)
    np.fill_diagonal(beats, 0.5)
    np.fill_diagonal(separable, False)
    return Ranking(systems=ordered, point=[float(p) if np.isfinite(p) else float("nan") for p in point],
                   beats=beats, separable=separable, confidence=confidence)
