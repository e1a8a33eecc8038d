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

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalcore.results.stats import CONFIDENCE, resample_counts

_CELLS = 4_000_000
"""Cap on B × S (or B × T) values held per block of the pairwise computation (32 MB of float64)."""


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
    counts_m = m.sum(axis=1)
    point = np.divide((x * m).sum(axis=1), counts_m, out=np.full(s, -np.inf), where=counts_m > 0)
    order = sorted(range(s), key=lambda i: (-point[i], names[i]))
    x, m, point = x[order], m[order], point[order]
    names = [names[i] for i in order]
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
    return Ranking(systems=names, point=[float(p) if np.isfinite(p) else float("nan") for p in point],
                   beats=beats, separable=separable, confidence=confidence)


def _record(i: int, diff: npt.NDArray[np.float64], alpha: float, beats: npt.NDArray[np.float64],
            separable: npt.NDArray[np.bool_]) -> None:
    """Fill row i from its (B, S) replicate differences i − j (NaN where no task is shared)."""
    valid = np.isfinite(diff)
    n_valid = valid.sum(axis=0)
    wins = np.where(valid, (diff > 0) + 0.5 * (diff == 0), 0.0).sum(axis=0)
    has = n_valid > 0
    beats[i, has] = wins[has] / n_valid[has]
    low = np.full(diff.shape[1], np.nan)
    if has.any():
        low[has] = np.nanquantile(diff[:, has], alpha, axis=0)
    separable[i] = np.nan_to_num(low, nan=0.0) > 0


def _compare_common(counts: npt.NDArray[np.float64], x: npt.NDArray[np.float64], mask: npt.NDArray[np.float64],
                    alpha: float, beats: npt.NDArray[np.float64], separable: npt.NDArray[np.bool_]) -> None:
    """Every system scored on the same tasks (the usual case): one mean per system per replicate."""
    den = counts @ mask  # (B,)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.einsum("bt,st->bs", counts, x * mask) / den[:, None]  # (B, S)
    for i in range(x.shape[0]):
        _record(i, means[:, [i]] - means, alpha, beats, separable)


def _compare_shared(counts: npt.NDArray[np.float64], x: npt.NDArray[np.float64], m: npt.NDArray[np.float64],
                    alpha: float, beats: npt.NDArray[np.float64], separable: npt.NDArray[np.bool_]) -> None:
    """Systems scored on different tasks: each pair's difference over the tasks both were scored on."""
    for i in range(x.shape[0]):
        shared = m * m[i]  # (S, T): tasks system i shares with each system
        with np.errstate(invalid="ignore", divide="ignore"):
            den = np.einsum("bt,st->bs", counts, shared)
            diff = (np.einsum("bt,st->bs", counts, shared * x[i]) - np.einsum("bt,st->bs", counts, shared * x)) / den
        _record(i, diff, alpha, beats, separable)
