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
from evalcore.grading.audit import run_audit
from evalcore.grading.calls import GradingContext, total_cost
from evalcore.grading.panel import run_panel, verdicts_by_judge
from evalcore.grading.plan import TooLong, plan_submission
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
from evalcore.grounding import SourceIndex
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
    source_index: SourceIndex | None = None,
) -> GradeResult:
    """Grade `submission` of `task` with the panel and auditor named in `config`.

    `vendors` maps vendor config names (judges and auditor) to live vendors; when omitted they
    are created from `config` for this call and closed after it. Returns verdict, flag and call
    rows plus the submission row; never raises for judge failures (they become abstentions and
    an incomplete submission, retried on resume). Orchestration only: every decision is made
    elsewhere: too long and the prompts by `evalcore.grading.plan.plan_submission` (shared with the
    estimate), audit or not, status and scores by the rules of `evalcore.grading.scoring`.
    `source_index` is the task's source index when the caller built it (a sweep builds one per
    task, `jobs.sweep.shard_work.SourceIndexes`); else the grounding checks build it.
    """
    if vendors is None:
        from evalcore.vendors.stack import build_stacks

        stacks = build_stacks(config.vendors(), run_id=run_id)  # the sweep's stack: one budget per account
        try:
            return await grade_submission(task, submission, config, {n: s.vendor for n, s in stacks.items()},
                                          run_id=run_id, audit_mode=audit_mode, source_index=source_index)
        finally:
            for s in stacks.values():
                await s.vendor.aclose()
    mode = audit_mode or config.audit.mode
    ctx = GradingContext(
        run_id=run_id,
        grading_id=uuid.uuid4().hex,
        submission_id=submission.id,
        system=submission.system,
        task_id=task.id,
        area=task.area,
        repeat=submission.repeat,  # a retest's repeat: part of every request's identity and of every row
        repeat_judges=submission.repeat_judges,
    )
    # too_long and every prompt sent before the answers come back: decided in one place, which
    # the estimate also calls (evalcore.grading.plan), so the bill prices what is sent here
    plan = plan_submission(task, submission, config, source_index=source_index)
    if isinstance(plan, TooLong):
        return GradeResult(submission_row(ctx, submission, task, SubmissionScores.too_long(plan.reason), []))
    budget = config.prompt_budget

    judges = [(cfg, vendors[cfg.name]) for cfg in config.judges]
    panel = await run_panel(task, submission, plan.rubric, judges, ctx, budget)
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
            boundary=plan.boundary,
            candidates=plan.candidates,
            detect=plan.detect,
            source_index=source_index,
        )
    calls = [*panel.calls, *audit.calls]
    scores = score_submission(stage_a, audit)
    return GradeResult(
        submission=submission_row(ctx, submission, task, scores, calls),
        verdicts=panel.verdicts,
        flags=list(audit.flags) if isinstance(audit, AuditDone) else [],
        calls=calls,
    )
