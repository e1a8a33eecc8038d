"""The leaderboard with judge noise: intervals, rank intervals and tiers from a two-level bootstrap.

Why: the leaderboard scores each task by one grading, and a judge asked again can answer
otherwise (`evalcore.results.repeatability` measures how often). When a run has repeats
(`tribunal retest`), each system's headline interval, rank interval and tier also come from a
bootstrap in two levels: the tasks resampled as the task-only bootstrap resamples them (the same
draws), then, for each task drawn, one of its gradings (the original or a repeat) drawn uniformly
(`stats.bootstrap_two_level`, `ranking.rank_two_level`). The point estimates stay the originals'.
The task-only figures are kept beside them (`SystemScores.*_tasks_only`), so a reader sees how much
the judges' noise widens what the tasks alone allow.

What it can and cannot show (docs/METHODOLOGY.md): with tasks drawn independently, one grading per
task already carries its judge's noise, so the task-only interval is not wrong; the two-level one
uses every grading of a repeated task instead of the one that happened, so a task on which the
judges are unstable widens it as much as they really are. Only repeated tasks add a second level:
with a retest of a sample, the rest stay at their one grading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalcore.results import stats
from evalcore.results.leaderboard import SystemScores
from evalcore.results.ranking import rank_two_level


@dataclass(frozen=True)
class Gradings:
    """Every grading of each cell of the headline matrix: (systems, tasks, G) scores, the current
    original first, and (systems, tasks) how many each cell has (1: never repeated)."""

    gradings: npt.NDArray[np.float64]
    counts: npt.NDArray[np.int64]

    def area(self, rows: npt.NDArray[np.int64], in_area: npt.NDArray[np.bool_], used: npt.NDArray[np.bool_]) -> Gradings:
        """The ranked systems' rows, on the area's tasks some of them were scored on."""
        return Gradings(self.gradings[rows][:, in_area][:, used], self.counts[rows][:, in_area][:, used])


def cells(repeats: Mapping[str, Sequence[float]], submission_ids: Sequence[str], scored: npt.NDArray[np.int64],
          sys_of_row: npt.NDArray[np.int64], task_code: npt.NDArray[np.int64],
          hc: npt.NDArray[np.float64]) -> Gradings | None:
    """The headline matrix `hc` with each scored cell's repeats (`repeats`: submission id -> its
    repeats' headline scores) behind its original; None when no scored cell has a repeat."""
    found = [(int(sys_of_row[r]), int(task_code[r]), repeats[submission_ids[r]]) for r in scored
             if submission_ids[r] in repeats]
    if not found:
        return None
    width = 1 + max(len(extra) for _, _, extra in found)
    gradings = np.repeat(hc[:, :, None], width, axis=2)
    counts = np.ones(hc.shape, dtype=np.int64)
    for i, t, extra in found:
        gradings[i, t, 1 : 1 + len(extra)] = extra
        counts[i, t] = 1 + len(extra)
    return Gradings(gradings, counts)


def with_judge_noise(rows: list[SystemScores], ranked: list[str], noise: Gradings, mask: npt.NDArray[np.float64], *,
                     seed: int, area: str, samples: int) -> list[SystemScores]:
    """An area's rows with the two-level interval, rank interval and tier; the task-only rank
    interval and tier kept in `*_tasks_only`. `ranked` are the systems of `noise` and `mask`
    (systems × tasks scored), sorted, as `rank_matrix` takes them."""
    ranking = rank_two_level(ranked, noise.gradings, noise.counts, mask,
                             rng=stats.rng_for(seed, "ranking-two-level", area), n_resamples=samples)
    tiers = ranking.tiers()
    row_of = {s: i for i, s in enumerate(ranked)}
    out = []
    for r in rows:
        i = row_of.get(r.system)
        if i is None:
            out.append(r)
            continue
        on = mask[i] > 0
        est = stats.bootstrap_two_level(noise.gradings[i][on], noise.counts[i][on],
                                        rng=stats.rng_for(seed, "two-level", r.system, area), n_resamples=samples)
        low, high = ranking.rank_interval(r.system)
        out.append(r.model_copy(update={
            "repeated_tasks": int((noise.counts[i][on] > 1).sum()), "hc_with_judge_noise_low": est.low,
            "hc_with_judge_noise_high": est.high, "rank_low_tasks_only": r.rank_low,
            "rank_high_tasks_only": r.rank_high, "tier_tasks_only": r.tier, "rank_low": low, "rank_high": high,
            "tier": tiers.get(r.system)}))
    return out
