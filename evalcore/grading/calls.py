"""Turning judge replies and failures into call rows: the audit trail behind every number."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, cast

from pydantic import BaseModel, Field

from evalcore.call_accounting import PAID_SQL
from evalcore.config.models import VendorConfig
from evalcore.errors import EarlierAttempt, VendorError
from evalcore.schema import CallOutcome, CallRow
from evalcore.vendors.output_cap import retry_cap
from evalcore.vendors.protocol import JudgeReply, JudgeRequest, Usage


class CallIds(TypedDict):
    """The identity columns of a `calls` row (`schema.RowIdentity`)."""

    run_id: str
    grading_id: str
    submission_id: str
    system: str
    task_id: str


class RequestIds(TypedDict):
    """What a `calls` row says of its request: which call of which entry (`call_identity`)."""

    request_hash: str
    vendor: str
    family: str
    model: str
    purpose: Literal["rubric", "detect", "verify", "preflight"]
    criterion_id: str | None


def call_identity(cfg: VendorConfig, request: JudgeRequest, criterion_id: str | None) -> RequestIds:
    """The request's columns of every row of a call (its truncated attempts' and its own)."""
    return RequestIds(request_hash=request.request_hash, vendor=cfg.name, family=cfg.family, model=cfg.model,
                      purpose=request.purpose, criterion_id=criterion_id)


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


def _capped_usage(capped: Iterable[EarlierAttempt]) -> Usage:
    """The tokens of the earlier attempts, summed (they are in the call's totals too)."""
    total = Usage()
    for attempt in capped:
        total += Usage(**attempt.usage)
    return total


def _last_cap(request: JudgeRequest, capped: list[EarlierAttempt]) -> int | None:
    """The cap the row's own attempts went out with: the request's, or after a truncation the retry's."""
    truncated = [a for a in capped if a.outcome == "truncated"]
    if not truncated:
        return request.max_output_tokens
    return retry_cap(truncated[-1].max_output_tokens)


def earlier_row(ctx: GradingContext, cfg: VendorConfig, request: JudgeRequest, attempt: EarlierAttempt,
                criterion_id: str | None = None) -> CallRow:
    """The row of one earlier attempt (`EarlierAttempt.outcome`): `truncated` (paid, its answer cut
    at its cap, retried) or `lost` (its batch is gone at the vendor, the request sent again; what
    the vendor billed for it there, if anything, is not known: 0 tokens, 0 USD, the batch named)."""
    usage = Usage(**attempt.usage)
    return CallRow(
        **ctx.call_ids(),
        **call_identity(cfg, request, criterion_id),
        started_at=attempt.started_at,
        ended_at=attempt.ended_at,
        outcome=attempt.outcome,
        error=attempt.reason,
        batch_id=attempt.batch_id,
        attempts=1,
        request_id=attempt.request_id,
        input_tokens=usage.input_tokens,
        cached_input_tokens=usage.cached_input_tokens,
        output_tokens=usage.output_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        max_output_tokens=attempt.max_output_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        cache_write_usd=cfg.price.bill(usage.billed()).cache_write_usd if usage.cache_write_tokens else 0.0,
        cost_usd=attempt.cost_usd,
        latency_s=attempt.ended_at - attempt.started_at,
        offline=False,
        response_json=None,
    )


def _minus(total: Usage, part: Usage) -> Usage:
    """`total` without `part` (a call's usage without its truncated attempts')."""
    return Usage(**{name: getattr(total, name) - getattr(part, name) for name in Usage.model_fields})


def call_rows(
    ctx: GradingContext,
    cfg: VendorConfig,
    request: JudgeRequest,
    result: JudgeReply[Any] | VendorError,
    *,
    criterion_id: str | None = None,
    started_at: float | None = None,
) -> list[CallRow]:
    """Every `calls` row of one logical call: a row per earlier attempt (`earlier_row`: truncated at
    its output cap and retried, outcome `truncated`; or sent in a batch the vendor lost and sent
    again, outcome `lost`), then the call's own row (`call_row`).

    Why apart: each truncated attempt was paid and stopped for a reason the operator tunes (the
    cap), so it is shown as what it was, not folded into the answer's row; the rows together carry
    exactly the call's totals (the reply's or the error's usage, cost and attempts)."""
    rows = [earlier_row(ctx, cfg, request, a, criterion_id) for a in result.earlier]
    rows.append(call_row(ctx, cfg, request, result, criterion_id=criterion_id, started_at=started_at))
    return rows


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

    Attempts truncated at their output cap and retried (`result.earlier`) are left out of it: they
    are rows of their own (`call_rows`), and this row starts after the last of them.
    """
    capped = list(result.earlier)
    before = _capped_usage(capped)
    before_usd = math.fsum(a.cost_usd for a in capped)
    if isinstance(result, VendorError):
        ended = time.time()
        started = min(started_at, ended) if started_at is not None else ended
        if capped:
            started = min(max(started, capped[-1].ended_at), ended)
        tokens_in, cached, tokens_out, reasoning = result.billed_tokens
        return CallRow(
            **ctx.call_ids(),
            **call_identity(cfg, request, criterion_id),
            started_at=started,
            ended_at=ended,
            outcome=cast(CallOutcome, result.kind.value),
            error=str(result),
            attempts=result.attempts - len(capped),
            rate_limited=result.rate_limited,
            request_id=result.request_id,
            input_tokens=tokens_in - before.input_tokens,
            cached_input_tokens=cached - before.cached_input_tokens,
            output_tokens=tokens_out - before.output_tokens,
            reasoning_tokens=reasoning - before.reasoning_tokens,
            max_output_tokens=_last_cap(request, capped) if result.attempts else None,
            cost_usd=max(result.cost_usd - before_usd, 0.0),  # bad outputs that were answered were paid for
            latency_s=ended - started,
            reused_from=None,
            batch_id=None,
            offline=cfg.adapter == "offline",
            response_json=None,
        )
    own = _minus(result.usage, before)
    started = max(result.started_at, capped[-1].ended_at) if capped else result.started_at
    started = min(started, result.ended_at)
    return CallRow(
        **ctx.call_ids(),
        **call_identity(cfg, request, criterion_id),
        started_at=started,
        ended_at=result.ended_at,
        outcome="ok",
        error=None,
        attempts=result.attempts - len(capped),
        rate_limited=result.rate_limited,
        request_id=result.request_id,
        input_tokens=own.input_tokens,
        cached_input_tokens=own.cached_input_tokens,
        output_tokens=own.output_tokens,
        reasoning_tokens=own.reasoning_tokens,
        max_output_tokens=_last_cap(request, capped) if result.reused_from is None else None,
        cache_write_tokens=own.cache_write_tokens,
        cache_write_usd=cache_write_usd(cfg, result.model_copy(update={"usage": own})),
        cost_usd=max(result.cost_usd - before_usd, 0.0),
        latency_s=result.ended_at - started,
        reused_from=result.reused_from,
        batch_id=result.batch_id if result.reused_from is None else None,
        offline=result.offline,
        response_json=result.output.model_dump_json(),
    )


class TruncationRate(BaseModel):
    """How often one vendor entry's answers for one purpose stopped at their output-token cap in a run.

    Why here: the calls table is where truncations are recorded (`call_rows`), and both the estimate
    (`OutputModel.from_run`, to count the retries a sweep will pay) and `tribunal calibrate` (to show
    an operator which judge needs a larger `max_output_tokens`) read it with this one rule."""

    vendor: str
    purpose: str
    calls: int = Field(description="Calls this run sent (rows not reused, sent, and not themselves a truncated attempt).")
    truncated: int = Field(description="Attempts that stopped at their cap and were retried (rows with outcome truncated).")
    rate: float = Field(description="truncated / calls: the share of calls that paid a truncation retry.")
    truncated_output_tokens: float = Field(description="Mean output tokens billed per truncated attempt (about its cap).")
    truncated_usd: float = Field(description="USD paid for the truncated attempts.")


def truncation_rates(calls: Any) -> list[TruncationRate]:
    """Per vendor entry and purpose, the truncation rate of a run's `calls` table (an Arrow table or
    anything DuckDB reads; a table from before the `truncated` outcome simply has none)."""
    import duckdb

    con = duckdb.connect()
    try:
        con.register("calls_in", calls)
        rows = con.execute(
            "SELECT vendor, purpose, "
            "count(*) FILTER (WHERE outcome NOT IN ('truncated', 'lost')) AS calls, "
            "count(*) FILTER (WHERE outcome = 'truncated') AS truncated, "
            "coalesce(avg(output_tokens) FILTER (WHERE outcome = 'truncated'), 0) AS out_tokens, "
            "coalesce(sum(cost_usd) FILTER (WHERE outcome = 'truncated'), 0) AS usd "
            f"FROM calls_in WHERE {PAID_SQL} AND attempts > 0 AND purpose <> 'preflight' "
            "GROUP BY vendor, purpose ORDER BY vendor, purpose"
        ).fetchall()
    finally:
        con.close()
    return [
        TruncationRate(vendor=str(v), purpose=str(p), calls=int(n), truncated=int(t), rate=t / n if n else 0.0,
                       truncated_output_tokens=float(out), truncated_usd=float(usd))
        for v, p, n, t, out, usd in rows
    ]
