"""Stop before a call would cross a spending cap (`tribunal sweep --max-cost USD`).

Why reserve the worst case: a call's cost is known only after it answers, and many calls are in
flight at once, so checking "spent so far < cap" lets the calls in flight cross it. Instead every
attempt reserves the most it can cost just before it goes on the wire — its input tokens at the
uncached price, or at the cache-write price where a write costs more (Anthropic: 1.25x; a miss on a
cacheable prefix writes it), plus `max_output_tokens` at the output price (`Price.worst_case`, priced
by the one pricing rule `Price.bill`) — and gives back the unused part when
it answers (the adapter does this inside its in-flight gate, so at most `max_in_flight` worst cases
per vendor are reserved at once, and a retried bad output reserves again). An attempt is sent only
if spent + reserved + its worst case stays within the cap, so the cap is never crossed whatever
the concurrency; the price is stopping up to the in-flight worst cases early.

The first refusal closes the ledger: every later call is refused too, so a sweep stops cleanly
instead of trickling on with the cheap calls that still fit. A refused call is a `VendorError` of
kind `cost_cap`, so the judge abstains and the submission is incomplete: the next run of the same
command grades exactly those again (calls already paid are served from the run's calls table).
Calls served from stored runs cost nothing and never reach the ledger (they never reach an adapter).

Batch mode (`evalcore.vendors.batch.queue`) reserves per batch instead of per attempt: before a batch is
submitted (before its journal record, so a refused batch leaves no trace), the worst case of all
its requests at the vendor's batch prices is reserved at once; the batch is sent only if that fits,
and its reservation is settled with what its results were billed when it is collected. A refused
batch refuses all its requests (kind `cost_cap`, never retried online) and closes the ledger like
any refusal. Batches submitted by an earlier run and resumed by this one were reserved under that
run's cap: they are collected without reaching this run's ledger, like stored calls.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel

from evalcore.config.models import Price, VendorConfig
from evalcore.errors import ErrorKind, VendorError
from evalcore.vendors.protocol import JudgeRequest


class CapState(BaseModel):
    """Where a ledger stands."""

    cap_usd: float
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    stopped: bool = False
    refused_calls: int = 0

    @property
    def left_usd(self) -> float:
        """What remains under the cap."""
        return max(self.cap_usd - self.spent_usd, 0.0)


class CostLedger:
    """Spent and reserved money against one cap (one per sweep: in a Ray actor, or in-process)."""

    def __init__(self, cap_usd: float) -> None:
        if cap_usd < 0:
            raise ValueError("the cost cap must be at least 0")
        self.state = CapState(cap_usd=cap_usd)

    def reserve(self, worst_usd: list[float]) -> list[bool]:
        """Grant each call its worst case in order while it fits; after a refusal, refuse all."""
        s = self.state
        granted = []
        for worst in worst_usd:
            if s.stopped or s.spent_usd + s.reserved_usd + worst > s.cap_usd:
                s.stopped = True
                s.refused_calls += 1
                granted.append(False)
            else:
                s.reserved_usd += worst
                granted.append(True)
        return granted

    def settle(self, reserved_usd: float, paid_usd: float) -> None:
        """A granted batch answered: release its reservation and book what it cost."""
        self.state.reserved_usd = max(self.state.reserved_usd - reserved_usd, 0.0)
        self.state.spent_usd += paid_usd


class Ledger(Protocol):
    """A `CostLedger` seen from a vendor, possibly across a process boundary (a Ray actor)."""

    async def reserve(self, worst_usd: list[float]) -> list[bool]: ...

    async def settle(self, reserved_usd: float, paid_usd: float) -> None: ...


class LocalLedger:
    """A `CostLedger` in this process (plain asyncio grading)."""

    def __init__(self, ledger: CostLedger) -> None:
        self.ledger = ledger

    async def reserve(self, worst_usd: list[float]) -> list[bool]:
        return self.ledger.reserve(worst_usd)

    async def settle(self, reserved_usd: float, paid_usd: float) -> None:
        self.ledger.settle(reserved_usd, paid_usd)


def worst_case_usd(cfg: VendorConfig, request: JudgeRequest, price: Price | None = None) -> float:
    """The most one attempt can cost: all input uncached (written to the cache where that costs
    more), the full output allowance (`Price.worst_case`; at `price`, by default the vendor's online
    prices; batch mode passes its batch prices)."""
    price = price or cfg.price
    output = request.max_output_tokens or cfg.max_output_tokens
    return price.worst_case(request.estimated_input_tokens, output)


def refusal(vendor: str, model: str, attempts: int) -> VendorError:
    """The error of a call the ledger did not let through (never sent; retried by the next run)."""
    return VendorError(
        vendor, model, ErrorKind.COST_CAP,
        "not sent: the run's cost cap (--max-cost) could have been crossed; run again to continue",
        attempts=attempts,
    )
