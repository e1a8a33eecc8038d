"""The vendor-neutral half of the emulated batch APIs: batches, their clock, their outcomes.

Why one store for three protocols: OpenAI (files + batches over HTTP), Anthropic (message
batches) and xAI (BatchMgmt over gRPC) differ only in how a batch is submitted and how its state
and results are rendered. When a batch ends, which of its requests succeed, error or expire, and
what each success answers, are decided here, by the same engine (and so the same responder and
usage) that answers online calls: batch and online modes can be compared answer for answer.

OpenAI's batch queue limit (`BatchSettings.max_enqueued_tokens`): the input tokens of a model's
batches that have not ended are counted when a batch is created (`queue_refusal`); one that would
go over the limit is kept, ended and refused (`EmulatedBatch.refused`), nothing in it processed,
and the front end renders it as OpenAI does (status failed, `token_limit_exceeded`). The store
records the most it ever held per model (`max_enqueued`) and every refusal, so a test asserts from
the emulator's own record that a client never had more enqueued than the limit.

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
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from doubles.emulators._config import BatchOutcome, BatchSettings
from doubles.emulators._engine import Decision, Engine, Outcome
from doubles.emulators.responders import EmulatedRequest

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
    model: str = ""  # the model of its requests (OpenAI: one per input file)
    input_tokens: int = 0  # what it counts against its model's batch queue limit while it runs
    refused: str | None = None  # why the vendor refused it whole (its queue limit): nothing processed

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
        self.billed: Counter[str] = Counter()  # custom_id -> times answered (succeeded: what is billed)
        self.creates = 0
        self.max_enqueued: Counter[str] = Counter()  # model -> most input tokens ever enqueued at once
        self.refusals: list[str] = []  # ids of the batches refused at the queue limit, in order
        self._stubs: dict[tuple[str, str, str], EmulatedRequest] = {}
        self.forget_at_end = True
        """Forget a batch's request text when it ends (`BatchSettings.keep_request_text` False); the
        OpenAI front end renders its result files from the text first, then forgets it itself."""
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
        self,
        prefix: str,
        endpoint: str,
        items: list[BatchItem],
        metadata: dict[str, str] | None = None,
        *,
        model: str = "",
        input_tokens: int = 0,
        refused: str | None = None,
    ) -> EmulatedBatch:
        """A new batch holding `items` (in progress until it ends); with `refused`, one the vendor
        accepted and refused at once (its queue limit: `queue_refusal`), nothing in it processed."""
        batch = EmulatedBatch(
            id=prefix + secrets.token_hex(12),
            endpoint=endpoint,
            created_at=time.time(),
            created_clock=self.now(),
            window_s=self.settings.window_s,
            metadata=dict(metadata or {}),
            model=model,
            input_tokens=input_tokens,
        )
        self.batches[batch.id] = batch
        self.creates += 1
        if refused is not None:
            batch.refused, batch.state, batch.ended_at = refused, "ended", time.time()
            self.refusals.append(batch.id)
        self.add(batch, items)
        if refused is not None:
            self.forget_text(batch)
        if refused is None and model:
            self.max_enqueued[model] = max(self.max_enqueued[model], self.enqueued_tokens(model))
        return batch

    # -- OpenAI's batch queue limit ---------------------------------------------------------------

    def enqueued_tokens(self, model: str) -> int:
        """Input tokens of `model`'s batches that have not ended (a refused one never counts)."""
        return sum(b.input_tokens for b in self.batches.values()
                   if b.model == model and b.state != "ended" and b.refused is None)

    async def queue_refusal(self, model: str, tokens: int) -> str | None:
        """OpenAI's message refusing a new batch of `tokens` input tokens of `model`, or None if
        its batch queue has room. Batches due by the clock are ended first (the vendor's end on
        their own; the emulator's at their next look): the caller creates the batch right after,
        with no await in between, so no other create slips between the count and the batch."""
        limit = self.settings.enqueued_token_limit(model)
        if limit is None:
            return None
        for batch in [b for b in self.batches.values() if b.model == model and b.state != "ended"]:
            await self.refresh(batch, poll=False)
        if self.enqueued_tokens(model) + tokens <= limit:
            return None
        return (f"Enqueued token limit reached for {model} in organization org-emulated. Limit: {limit:,} "
                "enqueued tokens. Please try again once some in_progress batches have been completed.")

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

    def forget_text(
        self, batch: EmulatedBatch, keep_keys: tuple[str, ...] = ("tools", "tool_choice"), *, answers: bool = False
    ) -> None:
        """With `keep_request_text` False: drop the text of an ended batch's requests (bodies but
        `keep_keys`, prompts), keeping ids, outcomes and answers (see `BatchSettings`); `answers`:
        the answers too (OpenAI, once they are in the batch's result files)."""
        if self.settings.keep_request_text:
            return
        for item in batch.items.values():
            item.body = {k: v for k, v in item.body.items() if k in keep_keys}
            key = (item.request.vendor, item.request.api, item.request.model)
            stub = self._stubs.get(key)
            if stub is None:  # one frozen stand-in per model, shared: the stripped items weigh nothing
                stub = self._stubs[key] = EmulatedRequest(vendor=key[0], api=key[1], model=key[2], system="", user="")
            item.request = stub
            if answers:
                item.decision = None
            elif item.decision is not None:  # its record holds the request whole: keep the answer, not that
                light = item.decision.record.model_copy(update={"body": {}, "headers": {}, "system": "", "user": ""})
                item.decision = replace(item.decision, record=light)

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
                elif d.outcome == Outcome.NOT_FOUND:  # kept: the front end renders the vendor's 404
                    item.outcome, item.error, item.decision = "errored", d.message, d
                else:
                    item.outcome, item.decision = "succeeded", d
                    self.billed[item.custom_id] += 1
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
        if self.forget_at_end:
            self.forget_text(batch)

    def _end(self, batch: EmulatedBatch, outcome: BatchOutcome) -> None:
        for item in batch.items.values():
            if item.outcome is None:
                item.outcome = outcome
                item.error = f"request {outcome} before it was processed"
        batch.state = "ended"
        batch.ended_at = time.time()
        if self.forget_at_end:
            self.forget_text(batch)

    def _next_outcome(self) -> BatchOutcome:
        if self.script:
            return self.script.popleft()
        if self._rng.random() < self.settings.error_rate:
            return "errored"
        return "succeeded"
