"""Who paid for each call: the one accounting of the calls table (paid, failed, collected, reused,
awaiting), used by the sweep's counts, the reduction, the report and the metrics.

A call row (`evalcore.schema.CallRow`) is exactly one of:

* **reused**: served from stored calls (`reused_from` names the run that paid): free here;
* **awaiting**: a placeholder for a call still in a batch that had not ended (`--detach`): nothing
  paid yet, a later command collects it;
* **collected**: a batch result whose batch an earlier command submitted (paid then);
* **paid**: sent by this command and answered (online now, or in a batch it submitted);
* **truncated**: an attempt of this command whose answer stopped at its output-token cap: paid,
  and sent again once at a larger cap (the answer is the next row of the same request);
* **failed**: sent by this command, failed for good; its billed attempts are in its cost;
* **lost**: an attempt of this command in a batch the vendor no longer has, sent again: paid twice
  if the vendor had processed the batch, at a cost Tribunal cannot know (the row says 0 USD and
  names the batch; the vendor's bill has it).

Seen from the run (not one command), collected rows are paid rows too: every row that is not
reused carries what it cost, so the run's bill is the sum of `cost_usd` over the rows not reused
(`PAID_SQL`). Why one module: the same rule was written in the shard counts, the reduction's SQL,
the report's SQL and the actors' metrics; a fifth copy could disagree with the other four.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Final, Literal

from evalcore.schema import CallRow

CallKind = Literal["paid", "truncated", "lost", "failed", "collected", "reused", "awaiting"]

AWAITING_MARK: Final = "--detach: run the same command again to collect"
"""The end of an awaiting placeholder's `error` (written by the batching queue)."""

PAID_SQL: Final = "reused_from IS NULL"
"""SQL over the calls table: the rows this run paid for (everything not served from stored calls)."""


def paid_sum(column: str, alias: str | None = None, *, fsum: bool = False) -> str:
    """SQL summing `column` over the paid rows (`fsum`: DuckDB's compensated sum, for money)."""
    agg = "fsum" if fsum else "sum"
    return f"{agg}(CASE WHEN {PAID_SQL} THEN coalesce({column}, 0) ELSE 0 END) AS {alias or column}"


def is_reused(reused_from: str | None) -> bool:
    """A call answered from stored calls: free in this run (its cost is in the run that paid)."""
    return reused_from is not None


def awaiting_batch(call: CallRow) -> bool:
    """The call is not answered yet: it waits in a batch that had not ended (`--detach`); a later
    run collects it. Its row is a placeholder (transient, 0 attempts, nothing paid), not a failure."""
    return call.outcome == "transient" and call.attempts == 0 and AWAITING_MARK in (call.error or "")


def awaits_batch(status: str, status_reason: str | None) -> bool:
    """A submission row written while its calls waited in batches (a `--detach` pass): incomplete
    only because an answer is not in yet, not because a call failed (its reason names the batch)."""
    return status == "incomplete" and AWAITING_MARK in (status_reason or "")


def call_kind(call: CallRow, since: float = 0.0) -> CallKind:
    """What `call` is for the command that started at `since` (unix s; 0: every row is its own)."""
    if is_reused(call.reused_from):
        return "reused"
    if awaiting_batch(call):
        return "awaiting"
    if call.outcome == "ok" and call.batch_id is not None and call.started_at < since:
        return "collected"
    if call.outcome in ("truncated", "lost"):
        return call.outcome
    return "paid" if call.outcome == "ok" else "failed"


@dataclass(frozen=True)
class CallCounts:
    """Call rows by who paid for them, from the point of view of one command (one sweep attempt).

    Why not the actors' statistics: they count every reply as paid, so a run collecting batches an
    earlier `--detach` run submitted reported what it collected as what it paid. Every row is
    exactly one kind (`call_kind`), so the counts of a run's commands add up to its calls table
    (rows, and USD of the rows not reused)."""

    paid: int = 0
    paid_usd: float = 0.0
    """What this command paid: its answered calls, its truncated attempts and its failed calls' billed attempts."""
    truncated: int = 0
    failed: int = 0
    lost: int = 0
    """Attempts in batches the vendor lost, sent again (their cost, if the vendor billed them, is not known here)."""
    collected: int = 0
    collected_usd: float = 0.0
    reused: int = 0
    awaiting: int = 0

    @classmethod
    def of(cls, calls: Iterable[CallRow], since: float = 0.0) -> CallCounts:
        """Count `calls` for the command that started at `since` (unix s; 0: everything is its own)."""
        n: dict[CallKind, int] = {"paid": 0, "truncated": 0, "lost": 0, "failed": 0, "collected": 0, "reused": 0,
                                  "awaiting": 0}
        paid_usd: list[float] = []
        collected_usd: list[float] = []
        for c in calls:
            kind = call_kind(c, since)
            n[kind] += 1
            if kind in ("paid", "truncated", "lost", "failed"):
                paid_usd.append(c.cost_usd)
            elif kind == "collected":
                collected_usd.append(c.cost_usd)
        return cls(paid=n["paid"], paid_usd=math.fsum(paid_usd), truncated=n["truncated"], failed=n["failed"],
                   lost=n["lost"], collected=n["collected"], collected_usd=math.fsum(collected_usd),
                   reused=n["reused"], awaiting=n["awaiting"])

    def __add__(self, other: CallCounts) -> CallCounts:
        return CallCounts(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})
