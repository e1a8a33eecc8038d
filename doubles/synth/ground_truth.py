"""Ground truth of a benchmark with known answers (the sample, or a synthetic scale-up of it).

A ground-truth file says, for every submission, the correct verdict on every criterion, every
planted hallucination (exact span, category, materiality) and the passages that rely on general
legal knowledge (which must never be flagged). It is the yardstick for three things: measuring
the offline judges and the grounding checks, scripting the emulators' answers, and checking that
a full sweep reproduces the scores.

`expected_scores` recomputes each submission's scores from the ground truth alone. It is
deliberately independent of `evalcore.grading.scoring` (simpler, no shared code), so that a test comparing
the two catches a bug in either. In ground truth the three judges agree, so a task score is 1.0
when every criterion passes and 0.0 otherwise.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evalcore.errors import BenchmarkError
from evalcore.schema import Category, Materiality, VerdictValue

Kind = Literal["quote", "number", "date", "amount", "party", "reference", "other"]
SubmissionKey = tuple[str, str]
"""(system, task_id)."""


class _Span(BaseModel):
    """A span of one deliverable of one submission."""

    model_config = ConfigDict(frozen=True)

    system: str
    task_id: str
    deliverable: str = Field(description="Deliverable name (the key of the task's deliverables map).")
    span: str = Field(min_length=1, description="Exact substring of the deliverable text.")


class Hallucination(_Span):
    """A planted hallucination: what a correct audit confirms."""

    category: Category
    materiality: Materiality
    kind: Kind
    source_document: str | None = Field(default=None, description="Document holding the true text, if any.")
    source_passage: str | None = Field(default=None, description="The true text, or None when nothing supports it.")
    note: str = ""


class GeneralKnowledge(_Span):
    """A passage relying on law outside the sources: never a hallucination."""

    note: str = ""


class SupportedSpan(_Span):
    """A statement grounded in the sources (possibly reformatted or derived): must not be flagged."""

    kind: Kind
    source_document: str
    source_passage: str
    note: str = ""
    if_altered: Materiality = Field(default="material", description="Materiality if a perturbation alters it.")
    derived: bool = Field(default=False, description="Computed from the sources rather than copied.")
    criteria: list[str] = Field(default_factory=list, description="Criteria whose verdict may depend on it.")


class GroundTruth(BaseModel):
    """Everything known to be true about a set of submissions."""

    model_config = ConfigDict(extra="allow")

    benchmark: str
    systems: list[str] = Field(default_factory=list)
    verdicts: dict[str, dict[str, dict[str, VerdictValue]]] = Field(
        description="system -> task_id -> criterion_id -> pass|fail, for every submission and criterion."
    )
    hallucinations: list[Hallucination] = Field(default_factory=list)
    general_knowledge: list[GeneralKnowledge] = Field(default_factory=list)
    supported: list[SupportedSpan] = Field(default_factory=list)
    distractors: dict[str, list[str]] = Field(default_factory=dict, description="task_id -> distractor documents.")

    @model_validator(mode="after")
    def _spans_belong_to_submissions(self) -> GroundTruth:
        known = set(self.submissions())
        for group, items in (
            ("hallucinations", self.hallucinations),
            ("general_knowledge", self.general_knowledge),
            ("supported", self.supported),
        ):
            for i, item in enumerate(items):
                if (item.system, item.task_id) not in known:
                    raise ValueError(
                        f"{group}[{i}] refers to {item.system}::{item.task_id}, which has no verdicts"
                    )
        if not self.systems:
            self.systems = sorted(self.verdicts)
        return self

    # ---------------------------------------------------------------- queries

    def submissions(self) -> list[SubmissionKey]:
        """Every (system, task_id) with verdicts, sorted."""
        return sorted((s, t) for s, tasks in self.verdicts.items() for t in tasks)

    def task_ids(self) -> list[str]:
        """Every task id that has at least one submission, sorted."""
        return sorted({t for _, t in self.submissions()})

    def verdict(self, system: str, task_id: str, criterion_id: str) -> VerdictValue:
        """The correct verdict; KeyError names what is missing."""
        try:
            return self.verdicts[system][task_id][criterion_id]
        except KeyError:
            raise KeyError(f"no ground-truth verdict for {system}::{task_id} {criterion_id}") from None

    def hallucinations_for(self, system: str, task_id: str) -> list[Hallucination]:
        """Planted hallucinations of one submission, in file order."""
        return [h for h in self.hallucinations if h.system == system and h.task_id == task_id]

    def general_knowledge_for(self, system: str, task_id: str) -> list[GeneralKnowledge]:
        """General-knowledge passages of one submission."""
        return [g for g in self.general_knowledge if g.system == system and g.task_id == task_id]

    def supported_for(self, system: str, task_id: str) -> list[SupportedSpan]:
        """Grounded spans of one submission."""
        return [s for s in self.supported if s.system == system and s.task_id == task_id]

    def dump(self, path: str | Path) -> None:
        """Write as JSON (stable key order, UTF-8)."""
        data = self.model_dump(mode="json")
        Path(path).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def load_ground_truth(path: str | Path) -> GroundTruth:
    """Read and validate a ground_truth.json; errors name the file and the problem."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchmarkError(str(p), "ground truth file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(str(p), f"cannot read ground truth: {exc}") from None
    except json.JSONDecodeError as exc:
        raise BenchmarkError(str(p), f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    try:
        return GroundTruth.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "(top level)"
        raise BenchmarkError(str(p), f"invalid ground truth at {where}: {first['msg']}") from None


def span_problems(gt: GroundTruth, texts: Mapping[tuple[str, str, str], str]) -> list[str]:
    """Spans that are not exact substrings of their deliverable.

    `texts` maps (system, task_id, deliverable name) to the deliverable's text. Returns one message
    per problem (empty list = consistent); used by tests and by the synthetic generator's self-check.
    """
    problems: list[str] = []
    spans: list[_Span] = [*gt.hallucinations, *gt.general_knowledge, *gt.supported]
    for item in spans:
        key = (item.system, item.task_id, item.deliverable)
        if key not in texts:
            problems.append(f"{item.system}::{item.task_id}: no text for deliverable {item.deliverable!r}")
        elif item.span not in texts[key]:
            problems.append(f"{item.system}::{item.task_id}/{item.deliverable}: span not found: {item.span[:60]!r}")
    return problems


# -------------------------------------------------------------------- expected scores


class ExpectedScore(BaseModel):
    """The scores a correct sweep must produce for one submission, derived from ground truth only."""

    model_config = ConfigDict(frozen=True)

    system: str
    task_id: str
    n_criteria: int
    n_failed: int
    all_pass_judges: int = Field(description="3 when every criterion passes (judges agree), else 0.")
    task_score: float
    criterion_pass_rate: float
    near_pass_1: float
    near_pass_2: float
    audited: bool = Field(description="Only submissions with task score > 0 are audited.")
    material_flags: int
    minor_flags: int
    gated: bool
    hc_score: float


def expected_scores(gt: GroundTruth) -> dict[SubmissionKey, ExpectedScore]:
    """Per submission: task score, pass rates, near-pass, audit counts and the gated score."""
    halls: dict[SubmissionKey, list[Hallucination]] = defaultdict(list)
    for h in gt.hallucinations:
        halls[(h.system, h.task_id)].append(h)
    out: dict[SubmissionKey, ExpectedScore] = {}
    for system, task_id in gt.submissions():
        verdicts = gt.verdicts[system][task_id]
        n = len(verdicts)
        failed = sum(1 for v in verdicts.values() if v == "fail")
        all_pass = failed == 0
        task_score = 1.0 if all_pass else 0.0
        audited = task_score > 0
        material = sum(1 for h in halls[(system, task_id)] if h.materiality == "material") if audited else 0
        minor = sum(1 for h in halls[(system, task_id)] if h.materiality == "minor") if audited else 0
        gated = audited and material > 0
        out[(system, task_id)] = ExpectedScore(
            system=system,
            task_id=task_id,
            n_criteria=n,
            n_failed=failed,
            all_pass_judges=3 if all_pass else 0,
            task_score=task_score,
            criterion_pass_rate=(n - failed) / n if n else 0.0,
            near_pass_1=1.0 if failed <= 1 else 0.0,
            near_pass_2=1.0 if failed <= 2 else 0.0,
            audited=audited,
            material_flags=material,
            minor_flags=minor,
            gated=gated,
            hc_score=0.0 if gated else task_score,
        )
    return out


class ExpectedSystemScore(BaseModel):
    """One leaderboard row as ground truth predicts it (means over the system's tasks)."""

    model_config = ConfigDict(frozen=True)

    system: str
    n_tasks: int
    hc_pass_rate: float
    all_pass_rate: float
    criterion_pass_rate: float
    near_pass_1: float
    near_pass_2: float
    audited_tasks: int
    material_per_audited_task: float
    minor_per_audited_task: float
    passing_lost_to_gate: float = Field(description="Share of passing tasks zeroed by the gate.")


def expected_leaderboard(gt: GroundTruth) -> dict[str, ExpectedSystemScore]:
    """Per system, the point estimates of the leaderboard (no confidence intervals)."""
    by_system: dict[str, list[ExpectedScore]] = defaultdict(list)
    for score in expected_scores(gt).values():
        by_system[score.system].append(score)
    rows: dict[str, ExpectedSystemScore] = {}
    for system, scores in sorted(by_system.items()):
        n = len(scores)
        audited = [s for s in scores if s.audited]
        passing = sum(1 for s in scores if s.task_score > 0)
        rows[system] = ExpectedSystemScore(
            system=system,
            n_tasks=n,
            hc_pass_rate=sum(s.hc_score for s in scores) / n,
            all_pass_rate=sum(s.task_score for s in scores) / n,
            criterion_pass_rate=sum(s.criterion_pass_rate for s in scores) / n,
            near_pass_1=sum(s.near_pass_1 for s in scores) / n,
            near_pass_2=sum(s.near_pass_2 for s in scores) / n,
            audited_tasks=len(audited),
            material_per_audited_task=(sum(s.material_flags for s in audited) / len(audited)) if audited else 0.0,
            minor_per_audited_task=(sum(s.minor_flags for s in audited) / len(audited)) if audited else 0.0,
            passing_lost_to_gate=(sum(1 for s in scores if s.gated) / passing) if passing else 0.0,
        )
    return rows
