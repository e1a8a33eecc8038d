"""Stage A — the rubric panel: three judges from three vendors grade every criterion independently.

The panel only asks and records; the rules that turn verdicts into scores live in
`evalcore.grading.scoring`. A judge that gives up on a criterion abstains (a verdict row with the
reason), which `scoring.abstention_reason` turns into an incomplete submission.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from evalcore.config.models import PromptBudget, VendorConfig
from evalcore.errors import VendorError
from evalcore.grading.calls import GradingContext, call_rows
from evalcore.grading.scoring import PanelVerdicts, Verdict
from evalcore.prompts import RenderedPrompt, render_rubric, rubric_prefix
from evalcore.schema import CallRow, Criterion, RubricAnswer, Submission, Task, VerdictRow
from evalcore.vendors.protocol import Vendor
from evalcore.vendors.warming import complete_warmed


@dataclass
class PanelResult:
    """Verdict and call rows of one submission's Stage A."""

    verdicts: list[VerdictRow] = field(default_factory=list)
    calls: list[CallRow] = field(default_factory=list)


def rubric_prompts(task: Task, submission: Submission, boundary: str) -> list[tuple[Criterion, RenderedPrompt]]:
    """One prompt per criterion; a criterion reads only the deliverables it names (all if none).

    Prompts are ordered so the shared prefix (instructions + deliverables) is identical across
    criteria that read the same deliverables: the vendors' prompt caches hit. That prefix is made
    once per set of deliverables (`rubric_prefix`), not once per criterion.
    """
    prefixes: dict[tuple[str, ...], str] = {}
    out = []
    for criterion in task.criteria:
        names = tuple(n for n in task.criterion_deliverables(criterion) if n in submission.deliverables)
        deliverables = [submission.deliverables[n] for n in names]
        if names not in prefixes:
            prefixes[names] = rubric_prefix(task.instructions, deliverables, boundary)
        out.append(
            (
                criterion,
                render_rubric(
                    task_id=task.id,
                    instructions=task.instructions,
                    criterion=criterion,
                    deliverables=deliverables,
                    boundary=boundary,
                    prefix=prefixes[names],
                ),
            )
        )
    return out


def too_long_reason(prompts: Sequence[RenderedPrompt], limit_tokens: int, budget: PromptBudget) -> str | None:
    """No silent truncation: the first prompt over the token budget, with the numbers, or None."""
    for p in prompts:
        est = p.estimated_tokens(budget.chars_per_token)
        if est > limit_tokens:
            return (
                f"{p.purpose} prompt needs ~{est:,} tokens (estimated at {budget.chars_per_token:g} "
                f"chars/token), over the budget of {limit_tokens:,}"
            )
    return None


def too_long_before_rendering(task: Task, submission: Submission, budget: PromptBudget) -> str | None:
    """``too_long`` decided from the text lengths alone, before any prompt is rendered.

    Why: a rubric prompt is rendered per criterion and each holds the deliverables it reads, so a
    50 MB deliverable would be copied once per criterion before ``too_long_reason`` could refuse
    it. The deliverables (and, for the audit, the sources) are a lower bound of a prompt's length:
    when they alone are over the budget, no rendering is needed to know.
    """
    cpt = budget.chars_per_token
    texts = {name: len(d.text or "") for name, d in submission.deliverables.items()}
    for criterion in task.criteria:
        chars = sum(texts.get(n, 0) for n in task.criterion_deliverables(criterion))
        if chars / cpt > budget.rubric_tokens:
            return (
                f"rubric prompt needs ~{int(chars / cpt):,}+ tokens for its deliverables alone (estimated at "
                f"{cpt:g} chars/token), over the budget of {budget.rubric_tokens:,}"
            )
    chars = sum(texts.values()) + sum(len(d.text) for d in task.documents)
    if chars / cpt > budget.audit_tokens:
        return (
            f"detect prompt needs ~{int(chars / cpt):,}+ tokens for its sources and deliverables alone "
            f"(estimated at {cpt:g} chars/token), over the budget of {budget.audit_tokens:,}"
        )
    return None


async def run_panel(
    task: Task,
    submission: Submission,
    prompts: Sequence[tuple[Criterion, RenderedPrompt]],
    judges: Sequence[tuple[VendorConfig, Vendor]],
    ctx: GradingContext,
    budget: PromptBudget,
) -> PanelResult:
    """Send every criterion to every judge (one coarse `complete_many` per judge), record rows."""

    async def one_judge(cfg: VendorConfig, vendor: Vendor) -> PanelResult:
        requests = [p.request_for(cfg, budget.chars_per_token, ctx.request_repeat(cfg.name)) for _, p in prompts]
        replies = await complete_warmed(
            vendor, requests, RubricAnswer, enabled=cfg.prompt_caching and cfg.warm_prompt_cache,
            chars_per_token=budget.chars_per_token,
        )
        res = PanelResult()
        for (criterion, _), request, reply in zip(prompts, requests, replies, strict=True):
            res.calls.extend(call_rows(ctx, cfg, request, reply, criterion_id=criterion.id))
            verdict: Verdict
            if isinstance(reply, VendorError):
                verdict, reasoning, abstain_reason = "abstain", "", str(reply)
            else:
                answer = reply.output
                assert isinstance(answer, RubricAnswer)
                verdict, reasoning, abstain_reason = answer.verdict, answer.reasoning, None
            res.verdicts.append(
                VerdictRow(
                    **ctx.ids(),
                    criterion_id=criterion.id,
                    judge=cfg.name,
                    judge_family=cfg.family,
                    judge_model=cfg.model,
                    verdict=verdict,
                    reasoning=reasoning,
                    abstain_reason=abstain_reason,
                    request_hash=request.request_hash,
                )
            )
        return res

    parts = await asyncio.gather(*(one_judge(cfg, v) for cfg, v in judges))
    out = PanelResult()
    for p in parts:
        out.verdicts.extend(p.verdicts)
        out.calls.extend(p.calls)
    return out


def verdicts_by_judge(verdict_rows: Sequence[VerdictRow]) -> PanelVerdicts:
    """Group verdict rows as `scoring` reads them: judge -> [(criterion_id, verdict, abstain_reason)]."""
    out: dict[str, list[tuple[str, Verdict, str | None]]] = {}
    for r in verdict_rows:
        out.setdefault(r.judge, []).append((r.criterion_id, r.verdict, r.abstain_reason))
    return out
