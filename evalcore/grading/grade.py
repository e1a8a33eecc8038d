"""Grade one submission end to end in plain asyncio: Stage A, the audit decision, Stage B, scores.

This is the whole methodology for one submission, with no Ray: the sweep's Ray layer calls this
same function, so a unit test and a cluster run grade identically.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from evalcore.config.models import TribunalConfig
from evalcore.grading.audit import detect_prompt, grounding_candidates, run_audit
from evalcore.grading.calls import GradingContext, total_cost
from evalcore.grading.panel import (
    rubric_prompts,
    run_panel,
    too_long_before_rendering,
    too_long_reason,
    verdicts_by_judge,
)
from evalcore.grading.scoring import (
    AuditDone,
    AuditMode,
    AuditNotRun,
    AuditOutcome,
    SubmissionScores,
    score_panel,
    score_submission,
    should_audit,
)
from evalcore.prompts import new_boundary
from evalcore.schema import CallRow, FlagRow, Submission, SubmissionRow, Task, VerdictRow
from evalcore.vendors.protocol import Vendor


@dataclass
class GradeResult:
    """Every row one grading produced; `submission` holds the scores derived from the others."""

    submission: SubmissionRow
    verdicts: list[VerdictRow] = field(default_factory=list)
    flags: list[FlagRow] = field(default_factory=list)
    calls: list[CallRow] = field(default_factory=list)

    @property
    def row(self) -> SubmissionRow:
        """The submission row (kept for callers written against the earlier name)."""
        return self.submission


def submission_row(
    ctx: GradingContext, submission: Submission, task: Task, scores: SubmissionScores, calls: list[CallRow]
) -> SubmissionRow:
    """The submission row: identity, content hash, and every column `scoring` derived."""
    return SubmissionRow(
        **ctx.ids(),
        content_hash=submission.content_hash(),
        n_criteria=len(task.criteria),
        status=scores.status,
        status_reason=scores.reason,
        task_score=scores.task_score,
        all_pass_judges=scores.all_pass_judges,
        criterion_pass_rate=scores.criterion_pass_rate,
        near_pass_1=scores.near_pass_1,
        near_pass_2=scores.near_pass_2,
        audited=scores.audited,
        material_flags=scores.material,
        minor_flags=scores.minor,
        gated=scores.gated,
        hc_score=scores.hc_score,
        cost_usd=total_cost(calls),
        graded_at=time.time(),
    )


async def grade_submission(
    task: Task,
    submission: Submission,
    config: TribunalConfig,
    vendors: Mapping[str, Vendor] | None = None,
    *,
    run_id: str = "adhoc",
    audit_mode: AuditMode | None = None,
) -> GradeResult:
    """Grade `submission` of `task` with the panel and auditor named in `config`.

    `vendors` maps vendor config names (judges and auditor) to live vendors; when omitted they
    are created from `config` for this call and closed after it. Returns verdict, flag and call
    rows plus the submission row; never raises for judge failures (they become abstentions and
    an incomplete submission, retried on resume). Orchestration only: every decision (too long,
    audit or not, status, scores) is a rule of `evalcore.grading.scoring` or `panel.too_long_reason`.
    """
    if vendors is None:
        from evalcore.vendors.sharding import create_account_vendors

        own = create_account_vendors(config.vendors())  # entries on one account: one budget
        try:
            return await grade_submission(task, submission, config, own, run_id=run_id, audit_mode=audit_mode)
        finally:
            for v in own.values():
                await v.aclose()
    mode = audit_mode or config.audit.mode
    ctx = GradingContext(
        run_id=run_id,
        grading_id=uuid.uuid4().hex,
        submission_id=submission.id,
        system=submission.system,
        task_id=task.id,
        area=task.area,
    )
    boundary = new_boundary()
    budget = config.prompt_budget

    # too_long is decided before any grounding work (the checks' cost grows with the deliverable)
    # and, for a deliverable far over the budget, before any prompt is rendered.
    too_long = too_long_before_rendering(task, submission, budget)
    prompts = [] if too_long else rubric_prompts(task, submission, boundary)
    too_long = too_long or too_long_reason([p for _, p in prompts], budget.rubric_tokens, budget)
    candidates: list[dict[str, object]] = []
    if not too_long and config.audit.grounding_candidates:
        too_long = too_long_reason([detect_prompt(task, submission, [], boundary)], budget.audit_tokens, budget)
        candidates = [] if too_long else grounding_candidates(task, submission)
    detect = None if too_long else detect_prompt(task, submission, candidates, boundary)
    if detect is not None:
        too_long = too_long_reason([detect], budget.audit_tokens, budget)
    if too_long:
        return GradeResult(submission_row(ctx, submission, task, SubmissionScores.too_long(too_long), []))
    assert detect is not None

    judges = [(cfg, vendors[cfg.name]) for cfg in config.judges]
    panel = await run_panel(task, submission, prompts, judges, ctx, budget)
    stage_a = score_panel(verdicts_by_judge(panel.verdicts))

    audit: AuditOutcome = AuditNotRun()
    if should_audit(stage_a, mode):
        audit = await run_audit(
            task,
            submission,
            config.auditor,
            vendors[config.auditor.name],
            ctx,
            budget,
            boundary=boundary,
            candidates=candidates,
            detect=detect,
        )
    calls = [*panel.calls, *audit.calls]
    scores = score_submission(stage_a, audit)
    return GradeResult(
        submission=submission_row(ctx, submission, task, scores, calls),
        verdicts=panel.verdicts,
        flags=list(audit.flags) if isinstance(audit, AuditDone) else [],
        calls=calls,
    )
