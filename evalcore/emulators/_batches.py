"""The vendor-neutral half of the emulated batch APIs: batches, their clock, their outcomes.

Why one store for three protocols: OpenAI (files + batches over HTTP), Anthropic (message
batches) and xAI (BatchMgmt over gRPC) differ only in how a batch is submitted and how its state
and results are rendered. When a batch ends, which of its requests succeed, error or expire, and
what each success answers, are decided here, by the same engine (and so the same responder and
usage) that answers online calls: batch and online modes can be compared answer for answer.

Time is the store's clock: wall time plus an offset a test moves with `advance`, so completion
delays, expiry and retention (OpenAI file expiry, Anthropic's archiving of old batches) are tested
without sleeping; it is the emulator's one clock. Tests in another thread can wait on `wait_for`
(a condition variable notified on every change) instead of polling.
"""

from __future__ import annotations

import random
import secrets
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evalcore.emulators._config import BatchOutcome, BatchSettings
from evalcore.emulators._engine import Decision, Engine, Outcome
from evalcore.emulators.responders import EmulatedRequest

BatchState = Literal["in_progress", "cancelling", "ended"]


@dataclass
class BatchItem:
    """One request of a batch and, once the batch has ended, its outcome (and answer)."""

    custom_id: str
    request: EmulatedRequest
    body: dict[str, Any]
    cache_breakpoints: Sequence[int] | None = None  # Anthropic's cache_control ends; None = automatic
    outcome: BatchOutcome | None = None
    decision: Decision | None = None
    error: str = ""


@dataclass
class EmulatedBatch:
    """A batch as the emulator keeps it (each front end renders it in its vendor's shape)."""

    id: str
    endpoint: str
    created_at: float  # wall clock (unix time), for the rendered timestamps
    created_clock: float  # the store's clock, for completion and expiry
    window_s: float
    metadata: dict[str, str] = field(default_factory=dict)
    items: dict[str, BatchItem] = field(default_factory=dict)
    state: BatchState = "in_progress"
    ended_at: float | None = None
    cancelled: bool = False
    expired: bool = False
    polls: int = 0
    archived_at: float | None = None  # wall clock; set when the vendor deleted its results

    @property
    def expires_at(self) -> float:
        """Unix time at which an unfinished batch expires."""
        return self.created_at + self.window_s

    def counts(self) -> Counter[str]:
        """Requests by outcome ("processing" until the batch ends)."""
        return Counter(item.outcome or "processing" for item in self.items.values())


class BatchStore:
    """Every batch of one emulator, with its clock, script of outcomes and counters."""

    def __init__(self, engine: Engine, settings: BatchSettings) -> None:
        self.engine = engine
        self.settings = settings
        self.batches: dict[str, EmulatedBatch] = {}
        self.script: deque[BatchOutcome] = deque(settings.script)
        self.offset_s = 0.0
        self.submitted: Counter[str] = Counter()  # custom_id -> times submitted in any batch
        self.creates = 0
        self.changed = threading.Condition()
        self._rng = random.Random(f"{engine.config.seed}:batch")

    # -- time and waiting -----------------------------------------------------------------------

    def now(self) -> float:
        """The store's clock: monotonic time plus what tests advanced it by."""
        return time.monotonic() + self.offset_s

    def advance(self, seconds: float) -> None:
        """Move the clock forward (batches due by then end at their next look)."""
        self.offset_s += seconds
        self._notify()

    def wait_for(self, predicate: Callable[[BatchStore], bool], timeout_s: float) -> bool:
        """Block the calling thread until `predicate(store)` holds (True) or the timeout (False)."""
        with self.changed:
            return self.changed.wait_for(lambda: predicate(self), timeout_s)

    def _notify(self) -> None:
        with self.changed:
            self.changed.notify_all()

    # -- lifecycle ------------------------------------------------------------------------------

    def authorized(self, presented_key: str | None) -> bool:
        """The batch endpoints take the same key as the online ones."""
        expected = self.engine.config.api_key
        return expected is None or presented_key == expected.get_secret_value()

    def create(
        self, prefix: str, endpoint: str, items: list[BatchItem], metadata: dict[str, str] | None = None
    ) -> EmulatedBatch:
        """A new batch holding `items` (in progress until it ends)."""
        batch = EmulatedBatch(
            id=prefix + secrets.token_hex(12),
            endpoint=endpoint,
            created_at=time.time(),
            created_clock=self.now(),
            window_s=self.settings.window_s,
            metadata=dict(metadata or {}),
        )
        self.batches[batch.id] = batch
        self.creates += 1
        self.add(batch, items)
        return batch

    def add(self, batch: EmulatedBatch, items: list[BatchItem]) -> None:
        """Append requests to a batch (xAI batches are filled after creation)."""
        for item in items:
            batch.items[item.custom_id] = item
            self.submitted[item.custom_id] += 1
        self._notify()

    def get(self, batch_id: str) -> EmulatedBatch | None:
        """The batch, or None for an unknown id."""
        return self.batches.get(batch_id)

    def delete(self, batch: EmulatedBatch) -> None:
        """Forget a batch and everything in it (the vendor's delete; callers check it has ended)."""
        self.batches.pop(batch.id, None)
        self._notify()

    def archive_due(self, kept_s: float) -> None:
        """Delete the requests and answers of every ended batch created `kept_s` or more ago.

        Why keep the batch itself: Anthropic still shows an archived batch (with `archived_at`)
        but its results are gone; the outcomes stay, so its counts are still right.
        """
        now = self.now()
        for batch in self.batches.values():
            if batch.archived_at is None and batch.state == "ended" and now - batch.created_clock >= kept_s:
                batch.archived_at = batch.created_at + kept_s
                for item in batch.items.values():
                    item.decision, item.body = None, {}
                    item.request = EmulatedRequest(
                        vendor=item.request.vendor, api=item.request.api, model=item.request.model,
                        system="", user="",
                    )

    def cancel(self, batch: EmulatedBatch) -> None:
        """Stop a batch: its unfinished requests end as canceled at its next look."""
        if batch.state == "in_progress":
            batch.state = "cancelling"
            batch.cancelled = True
        self._notify()

    async def refresh(self, batch: EmulatedBatch, *, poll: bool = True) -> EmulatedBatch:
        """Bring a batch up to the clock: end it (answering its requests) when it is due."""
        if poll:
            batch.polls += 1
        if batch.state != "ended":
            elapsed = self.now() - batch.created_clock
            if batch.cancelled:
                self._end(batch, "canceled")
            elif self.settings.completion_s <= batch.window_s and elapsed >= self.settings.completion_s:
                await self._complete(batch)
            elif elapsed >= batch.window_s:
                batch.expired = True
                self._end(batch, "expired")
        self._notify()
        return batch

    async def _complete(self, batch: EmulatedBatch) -> None:
        for item in batch.items.values():
            if item.outcome is not None:
                continue
            outcome = self._next_outcome()
            if outcome == "succeeded":
                d = await self.engine.answer_batched(
                    item.request, path=f"batch:{batch.endpoint}", body=item.body,
                    cache_breakpoints=item.cache_breakpoints,
                )
                if d.outcome == Outcome.RESPONDER_ERROR:
                    item.outcome, item.error = "errored", d.message
                else:
                    item.outcome, item.decision = "succeeded", d
            else:
                item.outcome = outcome
                item.error = {
                    "errored": "The server had an error while processing this request.",
                    "expired": "The batch expired before this request was processed.",
                    "canceled": "The batch was cancelled before this request was processed.",
                }.get(outcome, "")
                batch.expired = batch.expired or outcome == "expired"
        batch.state = "ended"
        batch.ended_at = time.time()

    def _end(self, batch: EmulatedBatch, outcome: BatchOutcome) -> None:
        for item in batch.items.values():
            if item.outcome is None:
                item.outcome = outcome
                item.error = f"request {outcome} before it was processed"
        batch.state = "ended"
        batch.ended_at = time.time()

    def _next_outcome(self) -> BatchOutcome:
        if self.script:
            return self.script.popleft()
        if self._rng.random() < self.settings.error_rate:
            return "errored"
        return "succeeded"
