"""The scoring rules of docs/METHODOLOGY.md, each a pure function named after its rule.

Nothing here does I/O or calls a vendor: every score is derived from raw verdict and flag rows,
so a rule change re-scores a run without paying for a single judge call. Every rule that decides
a score, a status or what is audited lives here and nowhere else: `evalcore.grading.grade` only
orchestrates (ask the panel, ask `should_audit`, run the audit, ask `score_submission`), and the
reduction imports `counted_materiality` and `is_passing` instead of restating them.

The order of the rules for one submission:

1. `score_panel` — the Stage A result: the abstention rule (any abstention, or a missing judge,
   makes the submission incomplete), then the task score, criterion pass rate and near-pass.
2. `should_audit` — the audit scope: only a complete panel with a passing task score is audited
   (`AuditMode.ALWAYS` audits every complete panel, for debugging).
3. The audit's outcome (`AuditNotRun`, `AuditFailed`, `AuditDone`) goes with the Stage A result
   into `score_submission`, which applies the gate and derives every column of the submission
   row: status, reason, counts and the hallucination-controlled score (null unless complete).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, Protocol, overload

import numpy as np
import numpy.typing as npt

from evalcore.schema import CallRow, FlagRow, SubmissionStatus

Verdict = Literal["pass", "fail", "abstain"]

PANEL_SIZE = 3
"""The panel always has three judges; a two-judge panel is never scored (abstention rule)."""

PanelVerdicts = Mapping[str, Sequence[tuple[str, Verdict, str | None]]]
"""judge -> [(criterion_id, verdict, abstain_reason)]: what the rules read of the verdict rows."""


class AuditMode(StrEnum):
    """Which submissions Stage B audits."""

    SCORED = "scored"
    """The rule: only submissions with a passing task score (> 0) are audited."""
    ALWAYS = "always"
    """Debugging: every submission whose panel is complete is audited, score 0 included."""
    NEVER = "never"
    """The panel only: `tribunal retest` without `--audit` (its repeats measure the judges; the
    gate of a repeat is then the original grading's, `evalcore.results.repeatability`)."""


def all_pass(verdicts: Iterable[Verdict]) -> bool:
    """Per judge: `all_pass_j` is true when the judge passed every criterion.

    A judge with no criteria to grade passes vacuously (a task with zero criteria is rejected
    by the loader, so this only matters to keep the function total).
    """
    return all(v == "pass" for v in verdicts)


def task_score(all_pass_by_judge: Sequence[bool]) -> float:
    """Task score = (Σ_j all_pass_j) / 3 — summed over judges, never majority-voted per criterion."""
    if len(all_pass_by_judge) != PANEL_SIZE:
        raise ValueError(f"a task score needs exactly {PANEL_SIZE} judges, got {len(all_pass_by_judge)}")
    return sum(1 for ok in all_pass_by_judge if ok) / PANEL_SIZE


@overload
def is_passing(score: float) -> bool: ...
@overload
def is_passing(score: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]: ...
def is_passing(score: float | npt.NDArray[np.float64]) -> bool | npt.NDArray[np.bool_]:
    """A passing task: task score > 0 (at least one judge passed every criterion).

    The audit scope and the reduction's "lost to the gate" population both read this rule; it
    takes one score or a numpy array of scores (element-wise) so the reduction need not restate it.
    """
    if isinstance(score, np.ndarray):
        return np.greater(score, 0.0)
    return score > 0


def criterion_pass_rate(verdicts_by_judge: Mapping[str, Sequence[Verdict]]) -> float:
    """Mean of the 3 × N verdicts (pass = 1)."""
    flat = [v for vs in verdicts_by_judge.values() for v in vs]
    return sum(1 for v in flat if v == "pass") / len(flat) if flat else 0.0


def near_pass(verdicts_by_judge: Mapping[str, Sequence[Verdict]], k: int) -> float:
    """near-pass@k: share of judges that failed at most k criteria (averaged like the task score)."""
    if k < 0:
        raise ValueError("k must be >= 0")
    judges = list(verdicts_by_judge.values())
    if len(judges) != PANEL_SIZE:
        raise ValueError(f"near-pass needs exactly {PANEL_SIZE} judges, got {len(judges)}")
    return sum(1 for vs in judges if sum(1 for v in vs if v == "fail") <= k) / PANEL_SIZE


def abstention_reason(verdicts_by_judge: PanelVerdicts) -> str | None:
    """Abstention rule: any abstained verdict makes the whole submission incomplete.

    Returns a readable reason naming every abstention (judge, criterion, cause), or None when
    the panel is complete. Never drops a judge to score with two.
    """
    missing_judges = PANEL_SIZE - len(verdicts_by_judge)
    parts = [f"{missing_judges} judge(s) missing from the panel"] if missing_judges > 0 else []
    for judge in sorted(verdicts_by_judge):
        for cid, verdict, reason in verdicts_by_judge[judge]:
            if verdict == "abstain":
                parts.append(f"{judge} abstained on {cid}: {reason or 'no reason given'}")
    return "; ".join(parts) if parts else None


@dataclass(frozen=True)
class StageA:
    """The panel's result for one submission: its abstentions, or its Stage A scores.

    `reason` is None exactly when the panel is complete; the scores are None otherwise.
    """

    reason: str | None
    task_score: float | None = None
    all_pass_judges: int | None = None
    criterion_pass_rate: float | None = None
    near_pass_1: float | None = None
    near_pass_2: float | None = None

    @property
    def complete(self) -> bool:
        """Every judge gave a verdict on every criterion."""
        return self.reason is None


def score_panel(verdicts_by_judge: PanelVerdicts) -> StageA:
    """Stage A: the abstention rule first, then the task score, pass rate and near-pass."""
    reason = abstention_reason(verdicts_by_judge)
    if reason is not None:
        return StageA(reason)
    plain = {j: [v for _, v, _ in vs] for j, vs in verdicts_by_judge.items()}
    per_judge = [all_pass(vs) for vs in plain.values()]
    return StageA(
        reason=None,
        task_score=task_score(per_judge),
        all_pass_judges=sum(per_judge),
        criterion_pass_rate=criterion_pass_rate(plain),
        near_pass_1=near_pass(plain, 1),
        near_pass_2=near_pass(plain, 2),
    )


def should_audit(stage_a: StageA, mode: AuditMode = AuditMode.SCORED) -> bool:
    """Audit scope: only a complete panel is audited, and (the rule) only with a passing score.

    An incomplete panel is never audited: the submission is regraded on resume, and paying for an
    audit of a grading that will be replaced would be waste.
    """
    if not stage_a.complete or stage_a.task_score is None:
        return False
    if mode == AuditMode.NEVER:
        return False
    return mode == AuditMode.ALWAYS or is_passing(stage_a.task_score)


class Decided(Protocol):
    """The part of a flag the gate reads (a `FlagRow`, or anything with its two fields)."""

    @property
    def status(self) -> str: ...  # confirmed | rejected | merged

    @property
    def materiality(self) -> str | None: ...  # material | minor | None


@dataclass(frozen=True)
class FlagOutcome:
    """A bare flag decision (status, materiality): what the gate reads, without the rest of a row."""

    status: str
    materiality: str | None


def counted_materiality(status: str, materiality: str | None) -> Literal["material", "minor"] | None:
    """How a flag counts: None unless confirmed; a confirmed flag with no materiality is material.

    Why material: a confirmed hallucination whose materiality the auditor left out must not slip
    past the gate (fail safe). The reduction's per-category counts read this same rule.
    """
    if status != "confirmed":
        return None
    return "minor" if materiality == "minor" else "material"


def count_confirmed(flags: Iterable[Decided]) -> tuple[int, int]:
    """(material, minor) counts of confirmed hallucinations; rejected and merged never count."""
    material = minor = 0
    for f in flags:
        kind = counted_materiality(f.status, f.materiality)
        if kind == "material":
            material += 1
        elif kind == "minor":
            minor += 1
    return material, minor


def gate(score: float, material_hallucinations: int) -> float:
    """Gate: hallucination-controlled score = 0 with ≥1 confirmed material hallucination.

    Minor hallucinations never change a score.
    """
    return 0.0 if material_hallucinations > 0 else score


def repeat_hc_score(task_score: float, audited: bool, material: int, original_audited: bool,
                    original_material: int) -> float:
    """The hallucination-controlled score of a retest's repeat.

    A repeat audited itself (`retest --audit`) is gated by its own audit, by `gate`. A repeat of
    the panel only is gated by its original grading's audit: the deliverable is the same text, so
    what the auditor confirmed there still stands. A repeat whose original was not audited (its
    score was 0) and that passes now stands ungated: an audit is never invented, as for an expert
    decision that lifts an unaudited score (`adjudicated_scores`).
    """
    if audited:
        return gate(task_score, material)
    if original_audited:
        return gate(task_score, original_material)
    return task_score


# --------------------------------------------------------------------------------------------
# What the audit hands to the rules: one of three outcomes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditNotRun:
    """Stage B did not run (`should_audit` said no, or the panel was incomplete)."""

    calls: Sequence[CallRow] = ()


@dataclass(frozen=True)
class AuditFailed:
    """Stage B started but could not finish: the submission is incomplete and regraded on resume."""

    reason: str
    calls: Sequence[CallRow] = ()


@dataclass(frozen=True)
class AuditDone:
    """Stage B finished: every Stage 1 flag with its Stage 2 decision (possibly none)."""

    flags: Sequence[FlagRow] = ()
    calls: Sequence[CallRow] = ()


AuditOutcome = AuditNotRun | AuditFailed | AuditDone


@dataclass(frozen=True)
class SubmissionScores:
    """Every derived column of one submission row: status, reason and scores."""

    status: SubmissionStatus
    reason: str | None
    task_score: float | None = None
    all_pass_judges: int | None = None
    criterion_pass_rate: float | None = None
    near_pass_1: float | None = None
    near_pass_2: float | None = None
    audited: bool = False
    material: int = 0
    minor: int = 0
    gated: bool = False
    hc_score: float | None = None

    @property
    def complete(self) -> bool:
        """The submission is scored (it counts on the leaderboard)."""
        return self.status == "complete"

    @classmethod
    def too_long(cls, reason: str) -> SubmissionScores:
        """No silent truncation: a prompt over its budget is never sent, and never scored."""
        return cls(status="too_long", reason=reason)


def score_submission(stage_a: StageA, audit: AuditOutcome) -> SubmissionScores:
    """Apply every rule in order: abstention → task score → audit outcome → gate.

    An incomplete panel or a failed audit makes the submission incomplete, with the reason and a
    null hallucination-controlled score (a failed audit keeps the Stage A scores, for debugging);
    an unaudited submission never has flags counted; a score-0 submission has
    hallucination-controlled score 0.
    """
    if not stage_a.complete or stage_a.task_score is None:
        return SubmissionScores(status="incomplete", reason=stage_a.reason)
    if isinstance(audit, AuditFailed):
        status: SubmissionStatus = "incomplete"
        material, minor, audited = 0, 0, False
    else:
        status = "complete"
        audited = isinstance(audit, AuditDone)
        material, minor = count_confirmed(audit.flags) if isinstance(audit, AuditDone) else (0, 0)
    hc = gate(stage_a.task_score, material)
    return SubmissionScores(
        status=status,
        reason=audit.reason if isinstance(audit, AuditFailed) else None,
        task_score=stage_a.task_score,
        all_pass_judges=stage_a.all_pass_judges,
        criterion_pass_rate=stage_a.criterion_pass_rate,
        near_pass_1=stage_a.near_pass_1,
        near_pass_2=stage_a.near_pass_2,
        audited=audited,
        material=material,
        minor=minor,
        gated=hc < stage_a.task_score,
        hc_score=hc if status == "complete" else None,
    )


# --------------------------------------------------------------------------------------------
# Adjudication: an expert's recorded decision replaces a judge's verdict or the audit's decision
# --------------------------------------------------------------------------------------------

FlagDecision = Literal["upheld", "overturned", "materiality"]
"""upheld: the flag is a hallucination (confirmed); overturned: it is not (rejected);
materiality: it is one, with the materiality the expert gives."""

VerdictDecision = Literal["pass", "fail"]


def adjudicated_verdict(raw: Verdict, decision: VerdictDecision | None) -> Verdict:
    """An expert's verdict replaces the judge's, an abstention included (the item is then decided)."""
    return raw if decision is None else decision


def adjudicated_flag(
    raw: Decided, decision: FlagDecision | None, materiality: Literal["material", "minor"] | None = None
) -> FlagOutcome:
    """What a flag counts as after an expert's decision (`counted_materiality` then reads it).

    Overturned: rejected, whatever Stage 2 said. Upheld: confirmed, keeping Stage 2's materiality
    (or the expert's, when given; a flag Stage 2 rejected has none, and counts as material — the
    same fail-safe as `counted_materiality`). Materiality: confirmed with the expert's materiality.
    """
    if decision is None:
        return FlagOutcome(raw.status, raw.materiality)
    if decision == "overturned":
        return FlagOutcome("rejected", None)
    if decision == "materiality" and materiality is None:
        raise ValueError("a materiality decision needs the materiality (material or minor)")
    kept = raw.materiality if raw.status == "confirmed" else None
    return FlagOutcome("confirmed", materiality or kept)


def adjudicated_panel(
    verdicts_by_judge: PanelVerdicts,
    verdict_decisions: Mapping[tuple[str, str], VerdictDecision],
    criterion_decisions: Mapping[str, VerdictDecision],
) -> PanelVerdicts:
    """The panel's verdicts with the experts' decisions in place.

    A decision on one judge's verdict (keyed by judge and criterion) replaces that verdict; a
    decision on a whole criterion's outcome replaces every judge's verdict on it, so the criterion
    passes or fails for the whole panel (and the all-pass of each judge follows).
    """
    out: dict[str, list[tuple[str, Verdict, str | None]]] = {}
    for judge, rows in verdicts_by_judge.items():
        out[judge] = [
            (cid, adjudicated_verdict(v, criterion_decisions.get(cid) or verdict_decisions.get((judge, cid))), reason)
            for cid, v, reason in rows
        ]
    return out


def adjudicated_scores(
    verdicts_by_judge: PanelVerdicts,
    flags: Sequence[Decided],
    audited: bool,
) -> SubmissionScores:
    """Re-apply every rule to a submission whose verdicts and flags carry the experts' decisions.

    The same order as grading (`score_submission`): abstention, task score, the audit's confirmed
    flags, the gate. A submission the audit never ran on keeps no flags (the audit is not invented:
    if a decision lifts an unaudited score above zero, the score stands ungated, and the reduction
    reports it as needing an audit).
    """
    stage_a = score_panel(verdicts_by_judge)
    outcome: AuditOutcome = AuditDone(flags=flags) if audited else AuditNotRun()  # type: ignore[arg-type]
    return score_submission(stage_a, outcome)
