"""Stage B — the two-stage hallucination audit: detect, then verify and classify.

Stage 1 gives the auditor every source document and deliverable, plus the deterministic
grounding findings as *candidates* (the auditor decides; they are neither binding nor
exhaustive); a task without documents is audited against its instructions
(`evalcore.benchmark.instructions_only`). Each flag carries the page its evidence is on. Stage 2 re-checks each Stage 1 flag with the source passages most relevant to it and
confirms (material or minor), rejects or merges it. Which submissions are audited, and what a
confirmed flag does to the score, are rules in `evalcore.grading.scoring`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalcore import grounding
from evalcore.benchmark.instructions_only import audit_sources, in_scope
from evalcore.benchmark.pages import locate_page
from evalcore.config.models import PromptBudget, VendorConfig
from evalcore.errors import ErrorKind, VendorError
from evalcore.grading.calls import GradingContext, call_rows
from evalcore.grading.scoring import AuditDone, AuditFailed
from evalcore.prompts import RenderedPrompt, render_detect, render_verify
from evalcore.schema import (
    CallRow,
    DetectedFlag,
    DetectionAnswer,
    FlagRow,
    Submission,
    Task,
    VerificationAnswer,
)
from evalcore.vendors.protocol import Vendor


def _deliverable_texts(submission: Submission) -> dict[str, str]:
    return {n: d.text for n, d in submission.deliverables.items() if not d.missing}


def grounding_candidates(
    task: Task, submission: Submission, index: grounding.SourceIndex | None = None
) -> list[dict[str, Any]]:
    """The deterministic findings, as JSON-able candidate flags for the Stage 1 prompt.

    For a task without documents only findings with evidence in its instructions are candidates
    (`evalcore.benchmark.instructions_only`). `index`: the task's source index when the caller
    built it (`grounding.check`)."""
    findings = grounding.check(audit_sources(task), _deliverable_texts(submission), index)
    if not task.documents:
        findings = in_scope(findings)
    return grounding.as_candidates(findings)


def detect_prompt(task: Task, submission: Submission, candidates: list[dict[str, Any]], boundary: str) -> RenderedPrompt:
    """The Stage 1 prompt (its shared prefix is also Stage 2's, so the cache hits)."""
    return render_detect(
        task_id=task.id,
        instructions=task.instructions,
        sources=audit_sources(task),
        deliverables=list(submission.deliverables.values()),
        candidates=candidates,
        boundary=boundary,
    )


def verify_prompt(task: Task, submission: Submission, flags: list[dict[str, Any]], boundary: str) -> RenderedPrompt:
    """The Stage 2 prompt: Stage 1's shared prefix (same sources, deliverables and `boundary`), then
    `flags` (`flags_for_verification`). The estimate renders it too, without flags, to price the
    prefix a Stage 2 call reads from the cache."""
    return render_verify(
        task_id=task.id,
        instructions=task.instructions,
        sources=audit_sources(task),
        deliverables=list(submission.deliverables.values()),
        flags=flags,
        boundary=boundary,
    )


def flags_for_verification(
    task: Task, flags: Sequence[DetectedFlag], index: grounding.SourceIndex | None = None
) -> list[dict[str, Any]]:
    """Each Stage 1 flag with the source passages most relevant to it (Stage 2 input)."""
    sources = audit_sources(task)
    texts = {d.name: d.text for d in sources}
    out = []
    for i, f in enumerate(flags):
        passages = grounding.relevant_passages(sources, f.span, k=2, index=index)
        out.append(
            {
                "index": i,
                **f.model_dump(),
                "relevant_passages": [
                    {"document": d, "page": locate_page(texts.get(d, ""), p), "passage": p} for d, p in passages
                ],
            }
        )
    return out


def evidence_page(task: Task, flag: DetectedFlag) -> str | None:
    """The page a flag's evidence is on: as the auditor cites it, else where its passage is found."""
    if flag.evidence_page:
        return flag.evidence_page
    texts = {d.name: d.text for d in audit_sources(task)}
    if flag.evidence_document not in texts:
        return None
    return locate_page(texts[flag.evidence_document], flag.evidence_passage)


def check_decisions(answer: VerificationAnswer, n_flags: int) -> str | None:
    """Stage 2 must decide every flag exactly once, and a merge must point at a confirmed flag.

    Why the second rule: merged flags are not counted by the gate, so a merge into a rejected
    flag, or two flags merged into each other, would silently drop a confirmed hallucination.
    """
    seen = [d.flag_index for d in answer.decisions]
    if sorted(seen) != list(range(n_flags)):
        return f"verification decided flags {sorted(seen)}, expected each of 0..{n_flags - 1} once"
    by_index = {d.flag_index: d for d in answer.decisions}
    for d in answer.decisions:
        if d.status != "merged":
            continue
        target = by_index.get(d.merged_into) if d.merged_into is not None else None
        if target is None or target.flag_index == d.flag_index or target.status != "confirmed":
            return f"flag {d.flag_index} merged into {d.merged_into}, which is not another confirmed flag"
    return None


async def run_audit(
    task: Task,
    submission: Submission,
    cfg: VendorConfig,
    auditor: Vendor,
    ctx: GradingContext,
    budget: PromptBudget,
    *,
    boundary: str,
    candidates: Sequence[dict[str, Any]],
    detect: RenderedPrompt,
    source_index: grounding.SourceIndex | None = None,
) -> AuditDone | AuditFailed:
    """Stage 1 then Stage 2 for one submission: done with its flags, or failed with the reason.

    Either outcome carries the call rows it paid for. `detect` is the Stage 1 prompt built from
    `candidates` with `boundary` (`evalcore.grading.plan.plan_submission`): the caller has it
    already, having checked its size against the budget before paying for anything.
    """
    calls: list[CallRow] = []
    request = detect.request_for(cfg, budget.chars_per_token, ctx.request_repeat(cfg.name, judge=False))
    [reply] = await auditor.complete_many([request], DetectionAnswer)
    calls.extend(call_rows(ctx, cfg, request, reply))
    if isinstance(reply, VendorError):
        return AuditFailed(f"audit stage 1: {reply}", calls)
    detected = reply.output
    assert isinstance(detected, DetectionAnswer)
    flags = list(detected.flags)
    if not flags:
        return AuditDone([], calls)

    verify = verify_prompt(task, submission, flags_for_verification(task, flags, source_index), boundary)
    vrequest = verify.request_for(cfg, budget.chars_per_token, ctx.request_repeat(cfg.name, judge=False))
    [vreply] = await auditor.complete_many([vrequest], VerificationAnswer)
    if not isinstance(vreply, VendorError):
        assert isinstance(vreply.output, VerificationAnswer)
        problem = check_decisions(vreply.output, len(flags))
        if problem:  # paid for, but unusable: recorded as a bad output with what it cost
            u = vreply.usage
            vreply = VendorError(
                cfg.name, cfg.model, ErrorKind.BAD_OUTPUT, problem, attempts=vreply.attempts,
                rate_limited=vreply.rate_limited, request_id=vreply.request_id,
                billed_tokens=u.as_error_tokens(),
                cost_usd=vreply.cost_usd, earlier=tuple(vreply.earlier),
            )
    calls.extend(call_rows(ctx, cfg, vrequest, vreply))
    if isinstance(vreply, VendorError):
        return AuditFailed(f"audit stage 2: {vreply}", calls)
    assert isinstance(vreply.output, VerificationAnswer)
    decisions = {d.flag_index: d for d in vreply.output.decisions}
    candidate_spans = {c.get("span") for c in candidates}
    rows = []
    for i, f in enumerate(flags):
        d = decisions[i]
        rows.append(
            FlagRow(
                **ctx.ids(),
                flag_index=i,
                deliverable=f.deliverable,
                span=f.span,
                location=f.location,
                category=d.category or f.category,
                evidence_document=f.evidence_document,
                evidence_passage=f.evidence_passage,
                evidence_page=evidence_page(task, f),
                explanation=f.explanation,
                origin="grounding" if f.span in candidate_spans else "auditor",
                status=d.status,
                merged_into=d.merged_into,
                materiality=d.materiality if d.status == "confirmed" else None,
                rationale=d.rationale,
                auditor=cfg.name,
                auditor_model=cfg.model,
            )
        )
    return AuditDone(rows, calls)
