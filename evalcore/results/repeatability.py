"""Test-retest figures of a run with repeats (`tribunal retest`): how often the judges change their minds.

Why: every figure of the leaderboard rests on one grading per submission, and a judge asked again
can answer differently. A retest grades a uniform random sample of complete submissions K more
times (`evalcore.grading.repeats`); this module compares each repeat with its original grading.

The rules, each a function below:

* **Which gradings.** For each submission and repeat index, its latest grading counts (the
  reduction's rule, per repeat); only complete gradings are compared, and only repeats of a
  submission whose original (repeat 0) is complete and has the same content hash (`pairs_of`).
* **A pair.** One judge's verdict on one criterion in the original and in a repeat, both pass or
  fail. A verdict the repeat did not ask afresh (`retest --judges` held that judge: its request
  hash is the original's, served from the original's stored call) is no draw and never counted.
* **Flip rate** = flipped pairs / pairs: the probability that asking again changes a verdict.
  **Test-retest κ** = Cohen's κ of the (original, repeat) verdicts, the agreement beyond what the
  judge's pass rate alone would give. Both with a percentile-bootstrap interval over the repeated
  submissions (a submission's pairs are resampled together: its criteria are not independent),
  per judge and for the whole panel (`judge_figures`).
* **Per criterion** (the rubric's weak spots): its pairs over every judge, the flip rate with a
  Wilson interval (scipy's `binomtest`); listed by flip rate (`criterion_figures`).
* **Per submission**: how many of its repeats changed its task score, and its gate (a repeat's
  hallucination-controlled score by `scoring.repeat_hc_score`: its own audit, else the
  original's); the shares of repeats that did, with intervals over submissions (`submission_figures`).
* **The auditor**: of the original's counted-material flags, the share that recur as material in
  an audited repeat (same deliverable, the same claim: one span within the other after
  normalising spacing and case), over submissions (`flag_recurrence`). Only with `retest --audit`.

Pure: arrow tables in, a `Repeatability` out (`jobs/per_run/calibrate.py` reads the run).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from pydantic import BaseModel, Field
from scipy import stats as sps

from evalcore.grading.scoring import counted_materiality, repeat_hc_score
from evalcore.results import stats
from evalcore.results.stats import CONFIDENCE, Interval

SUBMISSION_COLUMNS = ["grading_id", "submission_id", "system", "task_id", "status", "content_hash", "task_score",
                      "audited", "material_flags", "gated", "hc_score", "graded_at", "repeat"]
VERDICT_COLUMNS = ["grading_id", "judge", "criterion_id", "verdict", "request_hash"]
FLAG_COLUMNS = ["grading_id", "deliverable", "span", "status", "materiality"]


class JudgeRepeatability(BaseModel):
    """One judge (or the whole panel: `judge` = "panel") against its own original verdicts."""

    judge: str
    pairs: int = Field(description="(original, repeat) verdict pairs, both pass or fail, asked afresh.")
    flips: int = Field(description="Pairs whose verdicts differ.")
    flip_rate: Interval = Field(description="flips / pairs, 95 % bootstrap interval over repeated submissions.")
    kappa: Interval = Field(description="Test-retest Cohen's κ of the pairs, same bootstrap.")


class CriterionRepeatability(BaseModel):
    """One criterion of one task: its pairs over every judge."""

    task_id: str
    criterion_id: str
    pairs: int
    flips: int
    flip_rate: Interval = Field(description="flips / pairs with a 95 % Wilson interval.")
    flips_by_judge: dict[str, int] = Field(default_factory=dict)


class SubmissionRepeatability(BaseModel):
    """One repeated submission: its original scores and each repeat's."""

    submission_id: str
    system: str
    task_id: str
    task_score: float = Field(description="The original's task score.")
    repeat_task_scores: list[float]
    gated: bool = Field(description="The original's gate.")
    repeat_gated: list[bool]
    task_score_changes: int = Field(description="Repeats whose task score differs from the original's.")
    gate_changes: int = Field(description="Repeats whose gate differs from the original's.")


class FlagRecurrence(BaseModel):
    """How often the auditor's material findings come back when it audits the same deliverable again."""

    flags: int = Field(description="Counted-material flags of originals with at least one audited repeat.")
    pairs: int = Field(description="(flag, audited repeat) pairs.")
    recurred: int = Field(description="Pairs where the repeat confirmed the same claim as material.")
    rate: Interval = Field(description="recurred / pairs, 95 % bootstrap interval over submissions.")


class Repeatability(BaseModel):
    """The test-retest section of `tribunal calibrate` (JSON, terminal, report)."""

    submissions: int = Field(description="Repeated submissions (complete original and ≥ 1 complete repeat).")
    repeats: int = Field(description="Complete repeat gradings compared with their originals.")
    judges: list[JudgeRepeatability]
    panel: JudgeRepeatability | None
    criteria: list[CriterionRepeatability] = Field(description="Every criterion with a pair, most flips first.")
    per_submission: list[SubmissionRepeatability]
    task_score_change_rate: Interval = Field(description="Share of repeats whose task score changed.")
    gate_change_rate: Interval = Field(description="Share of repeats whose gate changed.")
    auditor: FlagRecurrence | None = Field(description="None when no repeat was audited (retest without --audit).")
    noise_free: bool = Field(description="No verdict flipped, no score and no gate changed: the repeats found no noise.")

    def weak_spots(self, limit: int = 10) -> list[CriterionRepeatability]:
        """The criteria that flip most (at least one flip), for the task author."""
        return [c for c in self.criteria if c.flips][:limit]


@dataclass(frozen=True)
class Grading:
    """What the figures read of one submission row."""

    grading_id: str
    submission_id: str
    system: str
    task_id: str
    status: str
    content_hash: str
    task_score: float
    audited: bool
    material_flags: int
    gated: bool
    hc_score: float
    graded_at: float
    repeat: int

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Grading:
        return cls(grading_id=str(row["grading_id"]), submission_id=str(row["submission_id"]), system=str(row["system"]),
                   task_id=str(row["task_id"]), status=str(row["status"]), content_hash=str(row["content_hash"]),
                   task_score=float(row["task_score"] or 0.0), audited=bool(row["audited"]),
                   material_flags=int(row["material_flags"] or 0), gated=bool(row["gated"]),
                   hc_score=float(row["hc_score"] or 0.0), graded_at=float(row["graded_at"] or 0.0),
                   repeat=int(row["repeat"] or 0))


@dataclass(frozen=True)
class Pairs:
    """The complete gradings a retest compares: originals and the repeats of each."""

    original: dict[str, Grading]
    """submission id -> its original grading."""
    repeats: dict[str, list[Grading]]
    """submission id -> its complete repeats, by repeat index."""


def pairs_of(submissions: pa.Table) -> Pairs:
    """The originals with at least one comparable repeat, and those repeats (module docstring)."""
    latest: dict[tuple[str, int], Grading] = {}
    for row in submissions.select(SUBMISSION_COLUMNS).to_pylist():
        g = Grading.of(row)
        held = latest.get((g.submission_id, g.repeat))
        if held is None or (g.graded_at, g.grading_id) >= (held.graded_at, held.grading_id):
            latest[(g.submission_id, g.repeat)] = g
    original = {sid: g for (sid, k), g in latest.items() if k == 0 and g.status == "complete"}
    repeats: dict[str, list[Grading]] = defaultdict(list)
    for (sid, k), g in sorted(latest.items()):
        o = original.get(sid)
        if k > 0 and o is not None and g.status == "complete" and g.content_hash == o.content_hash:
            repeats[sid].append(g)
    return Pairs({sid: original[sid] for sid in repeats}, dict(repeats))


def repeat_hc(repeat: Grading, original: Grading) -> float:
    """A repeat's hallucination-controlled score (`scoring.repeat_hc_score`)."""
    return repeat_hc_score(repeat.task_score, repeat.audited, repeat.material_flags, original.audited,
                           original.material_flags)


def _cells(v0: str, vk: str) -> int:
    """The cell of a (original, repeat) pair in (pp, pf, fp, ff)."""
    return (0 if v0 == "pass" else 2) + (0 if vk == "pass" else 1)


def _flip_rate(cells: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    total = cells.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray((cells[:, 1] + cells[:, 2]) / total, dtype=np.float64)


def judge_figures(pairs: Pairs, verdicts: pa.Table, *, seed: int, samples: int
                  ) -> tuple[list[JudgeRepeatability], JudgeRepeatability | None, list[CriterionRepeatability]]:
    """Flip rate and test-retest κ per judge and for the panel; the per-criterion flip rates."""
    grading_of: dict[str, tuple[str, int]] = {}
    for sid, o in pairs.original.items():
        grading_of[o.grading_id] = (sid, 0)
    for sid, gradings in pairs.repeats.items():
        for g in gradings:
            grading_of[g.grading_id] = (sid, g.repeat)
    answers: dict[tuple[str, str, str], dict[int, tuple[str, str]]] = defaultdict(dict)
    for row in verdicts.select(VERDICT_COLUMNS).to_pylist():
        where = grading_of.get(str(row["grading_id"]))
        if where is not None and row["verdict"] in ("pass", "fail"):
            sid, k = where
            answers[(sid, str(row["judge"]), str(row["criterion_id"]))][k] = (str(row["verdict"]), str(row["request_hash"]))
    subs = sorted(pairs.original)
    col = {sid: i for i, sid in enumerate(subs)}
    judges = sorted({j for (_, j, _) in answers})
    cells = {j: np.zeros((4, len(subs))) for j in judges}
    by_criterion: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    by_criterion_judge: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for (sid, judge, cid), by_repeat in answers.items():
        first = by_repeat.get(0)
        if first is None:
            continue
        task = pairs.original[sid].task_id
        for k, (verdict, request_hash) in by_repeat.items():
            if k == 0 or request_hash == first[1]:  # the original itself, or a held judge's reused answer
                continue
            cells[judge][_cells(first[0], verdict), col[sid]] += 1
            flipped = verdict != first[0]
            by_criterion[(task, cid)][0] += 1
            by_criterion[(task, cid)][1] += int(flipped)
            if flipped:
                by_criterion_judge[(task, cid)][judge] = by_criterion_judge[(task, cid)].get(judge, 0) + 1

    def figure(name: str, c: npt.NDArray[np.float64]) -> JudgeRepeatability:
        used = c.sum(axis=0) > 0
        c = c[:, used]
        total = int(c.sum())
        flips = int(c[1].sum() + c[2].sum())
        return JudgeRepeatability(
            judge=name, pairs=total, flips=flips,
            flip_rate=stats.bootstrap_statistic(c, _flip_rate, rng=stats.rng_for(seed, "retest", name, "flip"),
                                                n_resamples=samples),
            kappa=stats.bootstrap_statistic(c, stats.kappa_from_cells, rng=stats.rng_for(seed, "retest", name, "kappa"),
                                            n_resamples=samples),
        )

    per_judge = [figure(j, cells[j]) for j in judges if cells[j].sum()]
    panel = figure("panel", sum(cells.values())) if per_judge else None  # type: ignore[arg-type]
    criteria = []
    for (task, cid), (n, flips) in by_criterion.items():
        ci = sps.binomtest(flips, n).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
        criteria.append(CriterionRepeatability(
            task_id=task, criterion_id=cid, pairs=n, flips=flips,
            flip_rate=Interval(value=flips / n, low=float(ci.low), high=float(ci.high), n=n),
            flips_by_judge=dict(sorted(by_criterion_judge.get((task, cid), {}).items())),
        ))
    criteria.sort(key=lambda c: (-(c.flip_rate.value or 0.0), -c.pairs, c.task_id, c.criterion_id))
    return per_judge, panel, criteria


def submission_figures(pairs: Pairs, *, seed: int, samples: int
                       ) -> tuple[list[SubmissionRepeatability], Interval, Interval]:
    """Per repeated submission: task score and gate against each repeat's; the shares that changed."""
    out = []
    for sid in sorted(pairs.original):
        o = pairs.original[sid]
        rows = pairs.repeats[sid]
        t0, gated0 = o.task_score, o.gated
        scores = [r.task_score for r in rows]
        gated = [repeat_hc(r, o) < r.task_score for r in rows]
        out.append(SubmissionRepeatability(
            submission_id=sid, system=o.system, task_id=o.task_id, task_score=t0,
            repeat_task_scores=scores, gated=gated0, repeat_gated=gated,
            task_score_changes=sum(1 for s in scores if s != t0), gate_changes=sum(1 for g in gated if g != gated0),
        ))
    n_rep = np.asarray([len(s.repeat_task_scores) for s in out], dtype=np.float64)
    score_changes = np.asarray([s.task_score_changes for s in out], dtype=np.float64)
    gate_changes = np.asarray([s.gate_changes for s in out], dtype=np.float64)
    score_rate, gate_rate = stats.bootstrap_ratio(
        np.vstack([score_changes, gate_changes]), np.vstack([n_rep, n_rep]),
        rng=stats.rng_for(seed, "retest", "submissions"), n_resamples=samples) if out else (Interval(value=None),) * 2
    return out, score_rate, gate_rate


_SPACE = re.compile(r"\s+")


def _claim(span: object) -> str:
    return _SPACE.sub(" ", str(span or "")).strip().lower()


def flag_recurrence(pairs: Pairs, flags: pa.Table, *, seed: int, samples: int) -> FlagRecurrence | None:
    """Of each original's counted-material flags, the share confirmed as material again in an
    audited repeat of the same submission (the claim matched by `_claim` containment)."""
    material: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for row in flags.select(FLAG_COLUMNS).to_pylist():
        if counted_materiality(str(row["status"]), row["materiality"]) == "material":
            material[str(row["grading_id"])].append((str(row["deliverable"]), _claim(row["span"])))
    audited = {sid: [r for r in rows if r.audited] for sid, rows in pairs.repeats.items()}
    if not any(audited.values()):
        return None
    subs, pair_counts, recurred_counts = [], [], []
    total_flags = 0
    for sid in sorted(pairs.original):
        found = material.get(pairs.original[sid].grading_id, [])
        again = audited.get(sid, [])
        if not found or not again or not pairs.original[sid].audited:
            continue
        total_flags += len(found)
        n = hits = 0
        for r in again:
            theirs = material.get(r.grading_id, [])
            for deliverable, claim in found:
                n += 1
                hits += any(d == deliverable and (claim in c or c in claim) for d, c in theirs)
        subs.append(sid)
        pair_counts.append(n)
        recurred_counts.append(hits)
    if not subs:
        return FlagRecurrence(flags=0, pairs=0, recurred=0, rate=Interval(value=None))
    rate = stats.bootstrap_ratio(np.asarray(recurred_counts, dtype=np.float64), np.asarray(pair_counts, dtype=np.float64),
                                 rng=stats.rng_for(seed, "retest", "auditor"), n_resamples=samples)[0]
    return FlagRecurrence(flags=total_flags, pairs=int(sum(pair_counts)), recurred=int(sum(recurred_counts)), rate=rate)


def repeatability(submissions: pa.Table, verdicts: pa.Table, flags: pa.Table, *, seed: int,
                  samples: int) -> Repeatability | None:
    """The test-retest figures of a run, or None when it has no comparable repeat."""
    pairs = pairs_of(submissions)
    if not pairs.repeats:
        return None
    judges, panel, criteria = judge_figures(pairs, verdicts, seed=seed, samples=samples)
    per_submission, score_rate, gate_rate = submission_figures(pairs, seed=seed, samples=samples)
    auditor = flag_recurrence(pairs, flags, seed=seed, samples=samples)
    quiet = ((panel is None or panel.flips == 0) and not any(s.task_score_changes or s.gate_changes
                                                              for s in per_submission)
             and (auditor is None or auditor.recurred == auditor.pairs))
    return Repeatability(
        submissions=len(pairs.repeats), repeats=sum(len(r) for r in pairs.repeats.values()), judges=judges,
        panel=panel, criteria=criteria, per_submission=per_submission, task_score_change_rate=score_rate,
        gate_change_rate=gate_rate, auditor=auditor, noise_free=quiet,
    )


def grading_scores(submissions: pa.Table) -> dict[str, list[float]]:
    """Submission id -> its hallucination-controlled scores: the original's first, then each
    comparable repeat's (`repeat_hc`). What the two-level bootstrap draws from
    (`stats.bootstrap_two_level`, `ranking.rank_two_level`)."""
    pairs = pairs_of(submissions)
    return {sid: [pairs.original[sid].hc_score, *(repeat_hc(r, pairs.original[sid]) for r in rows)]
            for sid, rows in pairs.repeats.items()}


def padded(scores: Sequence[Sequence[float]]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Lists of gradings as the (n, G) array and (n,) counts `stats.bootstrap_two_level` takes."""
    width = max((len(s) for s in scores), default=1)
    out = np.zeros((len(scores), width), dtype=np.float64)
    for i, s in enumerate(scores):
        out[i, : len(s)] = s
    return out, np.asarray([len(s) for s in scores], dtype=np.int64)
