"""One submission's plan: the too_long decision and the prompts grading would send, decided once.

Why this module: grading (`evalcore.grading.grade.grade_submission`) and the bill
(`evalcore.cost.estimate.estimate`) must agree on which submissions are too long and on the
exact prompts sent, or the estimate prices traffic the sweep never sends. Both used to restate
the same sequence of rules and they drifted (the estimate rendered Stage 2 against
`task.documents` where the audit reads its audit sources, so a task without documents was priced
as audited against no source at all). Now both call `plan_submission`, the one place that
computes the decision and renders the rubric and Stage 1 prompts; Stage 2 is rendered by
`evalcore.grading.audit.verify_prompt` from the plan's boundary, on either side.

The order of the too_long rule, cheapest first, and why:

1. `panel.too_long_before_rendering` — from text lengths alone, so a huge deliverable is refused
   before it is copied into one rubric prompt per criterion;
2. the rendered rubric prompts against `prompt_budget.rubric_tokens`;
3. the Stage 1 prompt *without* candidates against `prompt_budget.audit_tokens`, before any
   grounding work (the checks' cost grows with the deliverable);
4. the Stage 1 prompt with the grounding candidates (`audit.grounding_candidates`) against the
   same budget: the candidates are part of what the auditor reads, so they count.

Nothing is truncated: a submission over a budget is not graded, with the numbers in its reason.
The plan is decided before Stage A, whether or not the submission will be audited, because the
too_long status must not depend on the panel's answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalcore.config.models import TribunalConfig
from evalcore.grading.audit import detect_prompt, grounding_candidates
from evalcore.grading.panel import rubric_prompts, too_long_before_rendering, too_long_reason
from evalcore.grounding import SourceIndex
from evalcore.prompts import RenderedPrompt, new_boundary
from evalcore.schema import Criterion, Submission, Task


@dataclass(frozen=True)
class TooLong:
    """The submission is over a prompt budget: it is not graded and nothing is sent or paid."""

    reason: str


@dataclass(frozen=True)
class GradingPlan:
    """What grading a submission sends before the answers decide the rest.

    `boundary` fences every prompt of this grading (Stage 2's too, so its prefix is Stage 1's and
    the cache hits); `rubric` holds one prompt per criterion (each judge gets all of them);
    `candidates` are the grounding findings given to Stage 1 (empty when the configuration turns
    them off, or the plan was made without grounding); `detect` is the Stage 1 prompt, sent when
    the submission is audited.
    """

    boundary: str
    rubric: tuple[tuple[Criterion, RenderedPrompt], ...]
    candidates: tuple[dict[str, Any], ...]
    detect: RenderedPrompt


def plan_submission(
    task: Task,
    submission: Submission,
    config: TribunalConfig,
    *,
    grounding: bool = True,
    boundary: str | None = None,
    source_index: SourceIndex | None = None,
) -> GradingPlan | TooLong:
    """Decide too_long for `submission` of `task` under `config` and render what grading sends.

    `grounding=False` skips the grounding checks (the estimate's fast mode, to show a bill at
    once): the Stage 1 prompt then lacks the candidates, so it is a lower bound of grading's and
    step 4 of the too_long rule is skipped. Grading always plans with grounding. `boundary` is a
    fresh random one unless given (a test's fixed fences). `source_index`: the task's source index
when the caller built it (a sweep, once per task), else the grounding checks build it.
    """
    boundary = boundary or new_boundary()
    budget = config.prompt_budget
    too_long = too_long_before_rendering(task, submission, budget)
    if too_long:
        return TooLong(too_long)
    rubric = rubric_prompts(task, submission, boundary)
    too_long = too_long_reason([p for _, p in rubric], budget.rubric_tokens, budget)
    if too_long:
        return TooLong(too_long)
    candidates: list[dict[str, Any]] = []
    if grounding and config.audit.grounding_candidates:
        too_long = too_long_reason([detect_prompt(task, submission, [], boundary)], budget.audit_tokens, budget)
        if too_long:
            return TooLong(too_long)
        candidates = grounding_candidates(task, submission, source_index)
    detect = detect_prompt(task, submission, candidates, boundary)
    too_long = too_long_reason([detect], budget.audit_tokens, budget)
    if too_long:
        return TooLong(too_long)
    return GradingPlan(boundary=boundary, rubric=tuple(rubric), candidates=tuple(candidates), detect=detect)
