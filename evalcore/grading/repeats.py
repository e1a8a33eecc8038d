"""Repeats of a grading (`tribunal retest`): which submissions are graded again, how many times.

Why a repeat is a grading of its own: a judge asked the same question again can answer
differently, and the only way to see it is to ask again and pay for it. A repeat is therefore a
fresh grading of the same submission (its own grading id, its own fence boundary, its own rows
with `repeat` = k) whose requests have their own identity (`RenderedPrompt.request_for`: the
repeat index is part of the request hash for k > 0, and absent for the original, so an original's
hashes are what they always were). The reuse cache keeps each repeat's answers like any other
paid call, so running the same retest again pays nothing twice, and a retest killed midway
resumes like a sweep.

Why a seeded uniform sample of complete submissions: the test-retest figures estimate how often a
judge changes its mind over the run's items, so every complete submission must have the same
chance of being repeated (a sample chosen by score or disagreement would over-represent disputed
items), and the same command must choose the same submissions so that it resumes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalcore.schema import Submission


def choose_sample(complete: Sequence[str], n: int, seed: int) -> list[str]:
    """A uniform random sample of `n` of the `complete` submission ids, fixed by `seed`.

    Independent of the order `complete` is given in (sorted first), so the same run and seed
    always choose the same submissions; `n` at least the population takes them all.
    """
    population = sorted(set(complete))
    if n >= len(population):
        return population
    rng = np.random.default_rng([seed, 39])
    picked = rng.choice(len(population), size=n, replace=False)
    return sorted(population[int(i)] for i in picked)


class RetestPlan(BaseModel):
    """What a retest grades: each sampled submission `repeats` more times (repeats 1..K).

    `sampled` maps each sampled submission id to the content hash its original grading read: a
    submission whose content changed since (the results folder was edited) is not repeated, since
    its repeats would grade another text than the original (`skipped`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    repeats: int = Field(ge=1, description="K: how many more gradings of each sampled submission.")
    sampled: dict[str, str] = Field(description="Sampled submission id -> the content hash its original graded.")
    seed: int = 0
    judges: list[str] = Field(default_factory=list, description="The judges repeated (names); all when empty.")
    audit: bool = Field(default=False, description="The repeats audit (both stages) by the rule, as a sweep does.")

    def gradings(self, submission: Submission, skipped: list[str] | None = None) -> Iterator[Submission]:
        """The repeats to grade of one submission read from the run's source: none unless sampled;
        a sampled one whose content changed since its original is noted in `skipped`."""
        expected = self.sampled.get(submission.id)
        if expected is None:
            return
        if expected != submission.content_hash():
            if skipped is not None:
                skipped.append(submission.id)
            return
        for k in range(1, self.repeats + 1):
            yield submission.model_copy(update={"repeat": k, "repeat_judges": tuple(self.judges)})

    @property
    def total(self) -> int:
        """Gradings the retest asks for (sampled × K)."""
        return len(self.sampled) * self.repeats


def sample_plan(complete: Mapping[str, str], *, n: int, repeats: int, seed: int,
                judges: Sequence[str] = (), audit: bool = False) -> RetestPlan:
    """The plan of a retest over a run whose complete originals are `complete` (id -> content hash)."""
    chosen = choose_sample(list(complete), n, seed)
    return RetestPlan(repeats=repeats, sampled={sid: complete[sid] for sid in chosen}, seed=seed,
                      judges=list(judges), audit=audit)
