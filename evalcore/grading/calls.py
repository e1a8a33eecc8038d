"""Turning judge replies and failures into call rows: the audit trail behind every number."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypedDict, cast

from evalcore.config.models import VendorConfig
from evalcore.errors import VendorError
from evalcore.schema import CallOutcome, CallRow
from evalcore.vendors.protocol import JudgeReply, JudgeRequest


class CallIds(TypedDict):
    """The identity columns of a `calls` row (`schema.RowIdentity`)."""

    run_id: str
    grading_id: str
    submission_id: str
    system: str
    task_id: str


class GradingIds(CallIds):
    """The identity columns of a verdict, flag or submission row (`schema.GradingRow`)."""

    area: str


@dataclass(frozen=True)
class GradingContext:
    """Who is being graded, in which run: stamped on every row a grading produces."""

    run_id: str
    grading_id: str
    submission_id: str
    system: str
    task_id: str
    area: str

    def call_ids(self) -> CallIds:
        """The identity columns every call row starts with.

        Typed: a row is built as `CallRow(**ctx.call_ids(), ...)`, so the type checker sees every
        keyword, and the row model (extra="forbid") refuses a misspelled one at run time.
        """
        return CallIds(
            run_id=self.run_id,
            grading_id=self.grading_id,
            submission_id=self.submission_id,
            system=self.system,
            task_id=self.task_id,
        )

    def ids(self) -> GradingIds:
        """The identity columns every verdict, flag and submission row starts with."""
        return GradingIds(**self.call_ids(), area=self.area)


def total_cost(calls: Iterable[CallRow]) -> float:
    """USD paid for a list of call rows (reused calls cost 0)."""
    return sum(c.cost_usd for c in calls)


def cache_write_usd(cfg: VendorConfig, reply: JudgeReply[Any]) -> float:
    """The part of a reply's cost paid for writing the vendor's prompt cache.

    Priced by `Price.bill`, the rule the adapter priced the whole reply with (batch prices for a
    batched call); 0 for a call reused from an earlier run (paid there) and for a reply whose cost
    the vendor reported itself (xAI, which reports no cache writes).
    """
    if reply.reused_from is not None or not reply.usage.cache_write_tokens:
        return 0.0
    price = cfg.price.for_batch() if reply.batch_id is not None else cfg.price
    return price.bill(reply.usage.billed()).cache_write_usd


def call_row(
    ctx: GradingContext,
    cfg: VendorConfig,
    request: JudgeRequest,
    result: JudgeReply[Any] | VendorError,
    *,
    criterion_id: str | None = None,
    started_at: float | None = None,
) -> CallRow:
    """One `calls` row for a reply or a final failure (calls are per vendor request: no area).

    A reply's times are its own (`JudgeReply.started_at`/`ended_at`: set by the adapter, the batch
    journal or the reuse store), never when the row is built: a submission's calls are built together
    once all have answered, so the build time would stamp all of them alike. `latency_s` is always
    `ended_at - started_at`. A failure (`VendorError`) carries no span: it ends when its row is
    built, and starts at `started_at` when the caller knows when it began (preflight), else then too.
    """
    if isinstance(result, VendorError):
        ended = time.time()
        started = min(started_at, ended) if started_at is not None else ended
        tokens_in, cached, tokens_out, reasoning = result.billed_tokens
        return CallRow(
            **ctx.call_ids(),
            request_hash=request.request_hash,
            vendor=cfg.name,
            family=cfg.family,
            model=cfg.model,
            purpose=request.purpose,
            criterion_id=criterion_id,
            started_at=started,
            ended_at=ended,
            outcome=cast(CallOutcome, result.kind.value),
            error=str(result),
            attempts=result.attempts,
            rate_limited=result.rate_limited,
            request_id=result.request_id,
            input_tokens=tokens_in,
            cached_input_tokens=cached,
            output_tokens=tokens_out,
            reasoning_tokens=reasoning,
            cost_usd=result.cost_usd,  # bad outputs that were answered were paid for
            latency_s=ended - started,
            reused_from=None,
            batch_id=None,
            offline=cfg.adapter == "offline",
            response_json=None,
        )
    return CallRow(
        **ctx.call_ids(),
        request_hash=request.request_hash,
        vendor=cfg.name,
        family=cfg.family,
        model=cfg.model,
        purpose=request.purpose,
        criterion_id=criterion_id,
        started_at=result.started_at,
        ended_at=result.ended_at,
        outcome="ok",
        error=None,
        attempts=result.attempts,
        rate_limited=result.rate_limited,
        request_id=result.request_id,
        input_tokens=result.usage.input_tokens,
        cached_input_tokens=result.usage.cached_input_tokens,
        output_tokens=result.usage.output_tokens,
        reasoning_tokens=result.usage.reasoning_tokens,
        cache_write_tokens=result.usage.cache_write_tokens,
        cache_write_usd=cache_write_usd(cfg, result),
        cost_usd=result.cost_usd,
        latency_s=result.latency_s,
        reused_from=result.reused_from,
        batch_id=result.batch_id if result.reused_from is None else None,
        offline=result.offline,
        response_json=result.output.model_dump_json(),
    )
