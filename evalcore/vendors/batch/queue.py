"""Batch mode behind the ordinary `Vendor` protocol: queue, submit, journal, poll, collect, retry.

Why one module: queueing, submitting, polling, collecting and retrying one request share the
journal's state machine; split, the phases could disagree about a request's state.

Why a `Vendor`: the methodology (`grade_submission`: Stage A, the audit decision, Stage 1, Stage 2)
does not change in batch mode. Every submission in flight asks its judges as usual; a
`BatchingVendor` queues those requests and sends them as one batch when the next one would take it
over one of the vendor entry's `batch_limits` (requests, bytes, enqueued tokens: `split_cause`) or
`flush_interval_s` after the first one queued. Since Stage A of every submission in flight arrives
together, then their Stage 1 calls, then their Stage 2 calls, each stage is batched across
submissions without the panel or the audit knowing.

The vendor's batch queue (`BatchLimits.max_enqueued_tokens`; OpenAI limits the input tokens of a
model's batches that have not ended, per organisation): the estimated input tokens of this queue's
open batches never exceed the limit. A batch that does not fit is held, in order, until earlier
ones end (`_admit`); with --detach it is not sent (its requests are pending: the next run sends
them). A batch the vendor refuses anyway (another process on the same key filled the queue: OpenAI
accepts it, then fails it with `token_limit_exceeded`) is journalled with its requests `refused`
(nothing was processed or billed), logged, and its requests are sent again once there is room:
after one of this queue's batches ends or after a backoff that doubles from `poll_interval_s`,
whichever is first; a refusal is not an attempt of the request, up to `MAX_REFUSALS`. The limit
the refusal states (OpenAI's message: "Limit: N enqueued tokens") replaces this queue's when it is
lower or none was set (`_learn`), so no batch is larger than the vendor can ever accept; batches
already closed larger than it are not sent but split again (`_Resplit`).

Never paying twice:
* a batch's id and the request hashes in it are written to the journal (`evalcore.vendors.batch.journal`)
  before anything waits on it;
* a request whose hash is in a journalled batch that has not failed it waits on (or collects
  again) that batch instead of being submitted: a re-run after a crash polls the same batches;
* a request that comes back errored, expired, cancelled or unusable goes into a later batch (or
  online with `retry_online`) under the vendor's retry policy (attempt limits and bad-output
  limit; the policy's deadline is for online calls and does not apply to day-long batches); when
  the policy gives up, the call fails like an online call and the judge abstains.

With a cost cap (`--max-cost`, `spend_guard`), each batch reserves its requests' worst case at
batch prices before it is submitted; a batch that could cross the cap is not submitted and its
requests fail with kind `cost_cap` (see `evalcore.cost.cost_cap`).

Preflight calls always go online (they check keys and models before a run, in seconds).

Never failing forever on a damaged journal (`evalcore.vendors.batch.journal`): before anything is
submitted, the batches of records that could not be read (set aside when the journal was loaded,
a `damaged` record in their place), and in a run that ran before, every batch carrying one of the
run's labels that the journal does not know (a record lost, or the whole `_batches/` folder deleted
after a `--detach`), are found again in the vendor's batch list and journalled (`_rebuild`).
Labels are self-authenticating (`vendor_label`): the run recognises its own without a journal.
Anthropic batches carry no label: those created around a damaged record (or since the run began,
when its journal is gone) are journalled unconfirmed (`BatchRecord.confirmed`), their requests
read from their results, and a request of the run found in one is answered from it. A batch whose
requests are not known yet (xAI and Anthropic tell them only in the results) is waited on before
anything is submitted (`_settle_unknown`): a request might be in it. A batch whose id the vendor
does not know (a 404) is looked up by its label (a record whose id was damaged); if the vendor has
no such batch either, it is marked `lost` with the reason (log and `tribunal status`) and its
requests are sent again, once.

What the vendor keeps: every object a batch creates there (an OpenAI input file, the batch, its
output and error files) is journalled as soon as its id is known, the input file before the batch
is created; OpenAI files are created with the expiries of `BatchConfig.retention` (set from the
configuration's `data_governance`). Deleting them once the run's tables are written is the purge's
job (`evalcore.vendors.batch.purge`), not the queue's: a resumed run may need to collect again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import math
import random
import re
import secrets
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, NoReturn

from pydantic import BaseModel

from evalcore.call_accounting import AWAITING_MARK
from evalcore.config.models import BatchConfig, BatchLimits
from evalcore.cost.cost_cap import Ledger, refusal, worst_case_usd
from evalcore.errors import EarlierAttempt, ErrorKind, TribunalError, VendorError
from evalcore.vendors.adapters.common import BadOutput, validate_output
from evalcore.vendors.batch.journal import BatchJournal, BatchRecord, SplitCause, VendorObject
from evalcore.vendors.batch.protocol import BatchAPI, BatchItemResult, BatchStatus, ListedBatch, SubmitOptions
from evalcore.vendors.output_cap import retry_cap
from evalcore.vendors.protocol import JudgeReply, JudgeRequest, T, Usage, Vendor, complete_each
from evalcore.vendors.retry import Failure, RetryState, next_delay

log = logging.getLogger("evalcore.vendors.batch.queue")

MAX_POLL_FAILURES = 10
CLOCK_SKEW_S = 600.0
"""How much earlier than our clock says a vendor may date a batch: the margin of every batch-list search."""
UNNAMED_WINDOW_S = (60.0, 600.0)
"""An unlabelled (Anthropic) batch is a candidate for a damaged record written at t when the vendor
created it within t - 60 s .. t + 600 s (the record is written just before the submit call)."""
MAX_REFUSALS = 20
"""Refusals at the vendor's batch queue limit a request goes through before each further one counts
as a failed attempt under the retry policy (with the backoff, about eight hours at the default
poll interval): a queue that never has room fails the call instead of waiting forever."""
MAX_REFUSAL_BACKOFF_S = 1800.0
"""The longest wait before sending again after a refusal when none of this queue's batches is open."""
CHARS_PER_TOKEN = 4.0
"""Floor of a request's input-token estimate when it carries none (`input_tokens`)."""
_VENDOR_LIMIT = re.compile(r"Limit: ([\d,]+) enqueued tokens")
"""The limit in OpenAI's refusal ("Enqueued token limit reached for <model> in organization <org>.
Limit: 90,000 enqueued tokens. Please try again once some in_progress batches have been completed.")."""


class BatchPending(VendorError):
    """`--detach`: the request is in a submitted batch that has not ended; a later run collects it."""


class _SubmitFailed(Exception):
    def __init__(self, kind: ErrorKind, cause: str) -> None:
        super().__init__(cause)
        self.kind = kind
        self.cause = cause


class _CapRefused(Exception):
    """The cost cap refused the batch this request was queued in (nothing was submitted)."""


class _Gone(Exception):
    """The vendor answered 404 for a batch (`polling`) or for its results."""

    def __init__(self, batch_id: str, cause: str, *, polling: bool) -> None:
        super().__init__(cause)
        self.batch_id, self.cause, self.polling = batch_id, cause, polling


class _Moved(Exception):
    """The batch's id was unknown to the vendor, but its label found it under another id (journalled):
    the request waits on that one."""


class _Lost(Exception):
    """The vendor does not have the batch (nor one with its label): its requests are sent again."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


class _Refused(Exception):
    """The vendor refused the whole batch at its batch queue limit: its requests are sent again."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


class _Held(Exception):
    """--detach: the batch does not fit in the vendor's batch queue now, and nothing here will wait."""


class _Final(Exception):
    """A failure no retry can help (a second stop at the output cap): `error` is the call's end."""

    def __init__(self, error: VendorError) -> None:
        super().__init__(str(error))
        self.error = error


class _Resplit(Exception):
    """The batch was closed before the vendor's lower queue limit was learned and exceeds it: not
    sent; its requests are queued again (split at that limit)."""


@dataclass
class _Queued:
    request: JudgeRequest
    schema: type[BaseModel]
    size: int
    tokens: int
    batch: asyncio.Future[str] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


# ---------------------------------------------------------------------------------------------- splitting
class Held(NamedTuple):
    """What the open (not yet sent) batch holds."""

    requests: int
    bytes: int
    tokens: int


def input_tokens(request: JudgeRequest) -> int:
    """A request's input tokens as the queue counts them against the enqueued-token limit: its own
    estimate (`RenderedPrompt.estimated_tokens`, never below what the vendors count), and never less
    than its text at `CHARS_PER_TOKEN` (a request built without an estimate)."""
    chars = len(request.system_prompt) + len(request.shared_prefix) + len(request.varying_suffix)
    return max(request.estimated_input_tokens, math.ceil(chars / CHARS_PER_TOKEN))


def split_cause(held: Held, size: int, tokens: int, limits: BatchLimits) -> SplitCause | None:
    """Why the open batch must be sent before a request of `size` bytes and `tokens` input tokens
    joins it (the first limit it would cross: requests, bytes, enqueued tokens), or None if it fits.

    An empty batch takes any request: one over the byte limit alone is sent alone (the vendor says
    what is wrong with it); one over the enqueued-token limit alone never reaches here (`_enqueue`
    fails it: no batch could hold it).
    """
    if held.requests == 0:
        return None
    if held.requests + 1 > limits.max_requests:
        return "requests"
    if held.bytes + size > limits.max_bytes:
        return "bytes"
    if limits.max_enqueued_tokens is not None and held.tokens + tokens > limits.max_enqueued_tokens:
        return "tokens"
    return None


def plan_batches(items: list[tuple[int, int]], limits: BatchLimits) -> list[tuple[list[int], SplitCause | None]]:
    """The batches a queue sends for requests of (bytes, tokens) arriving in this order, with no
    timer: each batch (indices into `items`) and why it was closed (None: the last, still open).
    The rule `BatchingVendor._enqueue` applies one request at a time."""
    out: list[tuple[list[int], SplitCause | None]] = []
    current: list[int] = []
    held = Held(0, 0, 0)
    for i, (size, tokens) in enumerate(items):
        cause = split_cause(held, size, tokens, limits)
        if cause is not None:
            out.append((current, cause))
            current, held = [], Held(0, 0, 0)
        current.append(i)
        held = Held(held.requests + 1, held.bytes + size, held.tokens + tokens)
        if held.requests >= limits.max_requests:
            out.append((current, "requests"))
            current, held = [], Held(0, 0, 0)
    if current:
        out.append((current, None))
    return out


def vendor_label(run_label: str, vendor: str) -> str:
    """The name a new batch has at the vendor: a hash, unique per batch, that says nothing of the run.

    Why opaque: the label is shown in the vendor's dashboard and kept with the batch (OpenAI
    metadata, xAI batch name, the OpenAI input file's name), and a run id can name the benchmark or
    the client. The journal records the label with the batch, which is all a later run needs to find
    it (`BatchAPI.find`).

    Why self-authenticating (a random half, then a hash of the run label, the vendor entry and that
    half): a run recognises its own batches in the vendor's list without its journal
    (`is_own_label`), when a record is damaged or the journal folder deleted; without the run
    label it is 32 random-looking hex characters.
    """
    nonce = secrets.token_hex(8)
    return nonce + _label_tag(run_label, vendor, nonce)


def _label_tag(run_label: str, vendor: str, nonce: str) -> str:
    return hashlib.sha256(f"{run_label}\0{vendor}\0{nonce}".encode()).hexdigest()[:16]


def is_own_label(label: str, run_label: str, vendor: str) -> bool:
    """The label was made by `vendor_label` for this run and vendor entry."""
    return len(label) == 32 and hmac.compare_digest(label[16:], _label_tag(run_label, vendor, label[:16]))


def custom_id(request: JudgeRequest) -> str:
    """The id a request has inside a batch: its request hash (64 hex chars, valid for all three; the
    journal relies on the two being the same)."""
    return request.request_hash


class BatchingVendor:
    """A `Vendor` whose calls go through a vendor's batch API, durably (see the module doc)."""

    def __init__(
        self,
        api: BatchAPI,
        journal: BatchJournal,
        settings: BatchConfig,
        *,
        online: Vendor | None = None,
        detach: bool = False,
        label: str = "tribunal",
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self.api = api
        self.cfg = api.cfg
        self.name = api.cfg.name
        self.family = api.cfg.family
        self.model = api.cfg.model
        self.journal = journal
        self.settings = settings
        self.online = online
        self.detach = detach
        self.label = label
        self._sleep = sleep
        self._clock = clock
        self._rng = rng or random.Random()
        self._queue: dict[str, _Queued] = {}
        self._queue_bytes = 0
        self._queue_tokens = 0
        self._enqueued = 0  # estimated input tokens of this queue's batches at the vendor not ended (and being sent)
        self._open: dict[str, int] = {}  # batch id -> its tokens counted in _enqueued
        self._room = asyncio.Event()  # set whenever _enqueued falls or the gate opens
        self._admission = asyncio.Lock()  # batches waiting for room go in the order they were closed
        self._gate_closed = False  # after a refusal: nothing is sent until a batch ends or the backoff passes
        self._refusal_streak = 0
        self._limits = api.cfg.batch_limits  # with the vendor's queue limit once a refusal told it (`_learn`)
        self._reopen: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._flush_timer: asyncio.Task[None] | None = None
        self._flushing: set[asyncio.Task[None]] = set()
        self._watchers: dict[str, asyncio.Future[dict[str, BatchItemResult]]] = {}
        self._waiters: Counter[str] = Counter()
        self.stats: Counter[str] = Counter()
        self._recovered = False
        self._recover_lock = asyncio.Lock()
        self.spend_guard: Ledger | None = None
        """Set by a sweep with --max-cost: each batch reserves its worst case before submission."""
        self._reserved: dict[str, float] = {}  # batch id -> worst case reserved by this process

    # ------------------------------------------------------------------ the Vendor protocol
    async def complete(self, request: JudgeRequest, schema: type[T]) -> JudgeReply[T]:
        """One logical call through batches (retried in later batches); raises `VendorError`."""
        if request.purpose == "preflight" and self.online is not None:
            return await self.online.complete(request, schema)
        state = RetryState()
        billed = Usage()
        cost = 0.0
        request_id: str | None = None
        tried: list[str] = []
        cid = custom_id(request)
        resent = False  # its batch was lost (404) and it was sent again: not a second time
        refusals = 0  # batches of it refused at the vendor's batch queue limit
        capped: list[EarlierAttempt] = []  # attempts that stopped at their output cap (retried once, larger)
        while True:
            state.attempts += 1
            try:
                await self._recover()
                record = await self._usable(request.request_hash, tried)
                batch_id = record.batch_id if record is not None else None
                if batch_id is None:
                    batch_id = await self._enqueue(request, schema)
                else:
                    self.stats["resumed_requests"] += 1
                tried.append(batch_id)
                item = await self._result_of(batch_id, cid)
                if item is not None:
                    self._confirm(batch_id)
                if item is None:
                    raise _SubmitFailed(ErrorKind.TRANSIENT, f"batch {batch_id} returned no result for the request")
                truncated_before = any(a.outcome == "truncated" for a in capped)
                larger = self._larger_cap(item, request) if not truncated_before else None
                if larger is not None:  # stopped at its cap: its own paid row, and once more at a larger cap
                    capped.append(self._capped_attempt(item, request, larger, tried))
                    # in the call's totals too, as online: its rows add up to what the call was billed
                    billed += item.usage
                    cost += self._billed(item)
                    self._mark(batch_id, cid, "bad_output")
                    request = request.model_copy(update={"max_output_tokens": larger})
                    state.attempts -= 1  # not a failure of the request's: it was answered, too short
                    self.stats["truncated_retries"] += 1
                    continue
                reply = self._reply(item, schema, tried, state, billed, cost, [*self._lost_attempts(request), *capped])
                if isinstance(reply, JudgeReply):
                    self.stats["succeeded"] += 1
                    return reply
                billed, cost, request_id = reply
                failure = Failure(ErrorKind.BAD_OUTPUT, None, self.api.redact(item.problem or item.error or ""))
                self._mark(batch_id, cid, "bad_output")
                if truncated_before and item.capped:  # a second stop at the cap is final, as online:
                    raise _Final(self._failed(request, failure, state, request_id, billed, cost, capped))
            except BatchPending:
                raise
            except _Final as final:  # retrying it (in a batch or online) would be a runaway
                self.stats["failed"] += 1
                raise final.error from None
            except _Moved:  # the same batch under the id the vendor knows: wait on that one
                tried.pop()
                state.attempts -= 1
                continue
            except _Lost as exc:
                tried.pop()
                if not resent:  # the vendor never answered it: not an attempt of the request's
                    resent = True
                    state.attempts -= 1
                    self.stats["resent_after_loss"] += 1
                    continue
                failure = Failure(ErrorKind.FATAL, None, f"{exc.cause}; it was sent again once already")
            except _Refused as exc:
                tried.pop()
                refusals += 1
                if refusals <= MAX_REFUSALS:  # the vendor processed nothing: not an attempt of the request's
                    state.attempts -= 1
                    self.stats["resent_after_refusal"] += 1
                    continue
                failure = Failure(ErrorKind.TRANSIENT, None, f"{exc.cause} (refused {refusals} times)")
            except _Resplit:
                state.attempts -= 1  # nothing was sent
                continue
            except _CapRefused:
                self.stats["cap_refused"] += 1
                raise refusal(self.name, self.model, state.attempts - 1) from None
            except _SubmitFailed as exc:
                failure = Failure(exc.kind, None, self.api.redact(exc.cause))
            except Exception as exc:  # a bug must fail this call, not the submission's other calls
                failure = Failure(ErrorKind.FATAL, None,
                                  f"internal error: {type(exc).__name__}: {self.api.redact(str(exc))[:300]}")
            state.record(failure)
            self.stats["failed_attempts"] += 1
            if next_delay(self.cfg.retry, failure, state, 0.0, self._rng) is None:
                self.stats["failed"] += 1
                raise self._failed(request, failure, state, request_id, billed, cost, capped)
            log.info("%s: batch attempt %d failed (%s), retrying: %s", self.name, state.attempts,
                     failure.kind.value, failure.cause)
            if self.settings.retry_online and self.online is not None:
                self.stats["online_retries"] += 1
                earlier = [*self._lost_attempts(request), *capped]
                try:
                    reply = await self.online.complete(request, schema)
                except VendorError as exc:  # what the batch attempts were billed stays on the call
                    raise VendorError(
                        exc.vendor, exc.model, exc.kind, exc.cause,
                        attempts=state.attempts + len(earlier) + exc.attempts, rate_limited=exc.rate_limited,
                        request_id=exc.request_id or request_id,
                        billed_tokens=(billed + Usage.of_error(exc)).as_error_tokens(),
                        cost_usd=cost + exc.cost_usd, earlier=(*earlier, *exc.earlier),
                    ) from exc
                return reply.model_copy(update={  # what the batch attempts were billed stays on the call
                    "earlier": [*earlier, *reply.earlier],
                    "usage": billed + reply.usage,
                    "cost_usd": cost + reply.cost_usd,
                    "attempts": state.attempts + len(earlier) + reply.attempts,
                    # the span too: from the first batch's submission to the online answer
                    "started_at": min(self._span(tried, reply.started_at)[0], reply.started_at),
                })

    def _failed(self, request: JudgeRequest, failure: Failure, state: RetryState, request_id: str | None,
                billed: Usage, cost: float, capped: list[EarlierAttempt]) -> VendorError:
        """The call's final failure, carrying everything it was billed: its batches' answers that were
        unusable and its truncated attempts (each also its own row: `EarlierAttempt`), and the attempts
        lost with their batches; `attempts` counts them all, as online."""
        earlier = (*self._lost_attempts(request), *capped)
        return VendorError(
            self.name, self.model, failure.kind, f"batch: {failure.cause}", attempts=state.attempts + len(earlier),
            request_id=request_id, billed_tokens=billed.as_error_tokens(), cost_usd=cost, earlier=earlier,
        )

    async def complete_many(
        self, requests: list[JudgeRequest], schema: type[T]
    ) -> list[JudgeReply[T] | VendorError]:
        """Concurrent `complete`; failures returned in place (they all land in the same batch)."""
        return await complete_each(self, requests, schema)

    async def aclose(self) -> None:
        """Stop the timers and watchers of this process (the batches go on at the vendor)."""
        for watcher in self._watchers.values():
            watcher.cancel()
        for task in (*self._flushing, *self._background):
            task.cancel()
        for timer in (self._flush_timer, self._reopen):
            if timer is not None:
                timer.cancel()
        await self.api.aclose()
        if self.online is not None:
            await self.online.aclose()

    # ------------------------------------------------------------------ answers
    def _larger_cap(self, item: BatchItemResult, request: JudgeRequest) -> int | None:
        """The cap of the one retry of an answer that stopped at its cap, or None (not capped, or the
        cap cannot grow): the online rule (`evalcore.vendors.output_cap.retry_cap`)."""
        if item.status != "succeeded" or not item.capped:
            return None
        return retry_cap(request.max_output_tokens or self.cfg.max_output_tokens)

    def _capped_attempt(self, item: BatchItemResult, request: JudgeRequest, larger: int,
                        tried: list[str]) -> EarlierAttempt:
        """The truncated answer as its own paid attempt (a `truncated` row of the calls table)."""
        started_at, ended_at = self._span(tried[-1:], time.time())
        return EarlierAttempt(
            max_output_tokens=request.max_output_tokens or self.cfg.max_output_tokens,
            reason=f"{self.api.redact(item.problem or 'truncated output')}; retried at a {larger:,}-token cap",
            usage=item.usage.model_dump(), cost_usd=self._billed(item), request_id=item.request_id,
            started_at=started_at, ended_at=ended_at, batch_id=tried[-1],
        )

    def _lost_attempts(self, request: JudgeRequest) -> list[EarlierAttempt]:
        """The request's attempts in batches the vendor lost (`lost` rows of the calls table), from
        the journal, so a later command that collects the request again still writes them.

        Why rows: if the vendor processed such a batch before it was lost, the request was paid
        there too, at a cost nobody can read back (its answer and usage went with it); the row names
        the batch so the operator can find it on the vendor's bill."""
        attempts = []
        for record in sorted(self.journal.records.values(), key=lambda r: r.submitted_at):
            if record.phase != "lost" or not record.batch_id or request.request_hash not in record.requests:
                continue
            started_at, ended_at = self._span([record.batch_id], record.submitted_at)
            attempts.append(EarlierAttempt(
                max_output_tokens=request.max_output_tokens or self.cfg.max_output_tokens,
                reason=(f"{self.api.redact(record.note)}; if the vendor processed batch {record.batch_id} before "
                        "it was lost, this request was paid there too (its cost is on the vendor's bill, not known "
                        "here)"),
                usage={}, cost_usd=0.0, request_id=None, started_at=started_at, ended_at=ended_at,
                outcome="lost", batch_id=record.batch_id,
            ))
        return attempts

    def _reply(
        self,
        item: BatchItemResult,
        schema: type[T],
        tried: list[str],
        state: RetryState,
        billed: Usage,
        cost: float,
        earlier: list[EarlierAttempt] | None = None,
    ) -> JudgeReply[T] | tuple[Usage, float, str | None]:
        """The reply, or (billed usage, cost, request id) so far when the answer is unusable.

        `tried`: the batches the request went into, this one (`tried[-1]`) last; the call's span runs
        from the first one's submission to this one's end (`_span`)."""
        batch_id = tried[-1]
        if item.status != "succeeded":
            raise _SubmitFailed(ErrorKind.TRANSIENT, f"request {item.status} in batch {batch_id}: {item.error or ''}")
        usage = item.usage
        billed += usage
        cost += self._billed(item)
        if item.problem is not None:
            return billed, cost, item.request_id
        try:
            output = validate_output(schema, item.text)
        except BadOutput as exc:
            item.problem = exc.reason
            return billed, cost, item.request_id
        started_at, ended_at = self._span(tried, time.time())
        return JudgeReply[schema](  # type: ignore[valid-type]
            output=output,
            usage=billed,
            cost_usd=cost,
            started_at=started_at,
            ended_at=ended_at,
            attempts=state.attempts + len(earlier or []),  # as online: the earlier attempts are attempts too
            request_id=item.request_id,
            vendor=self.name,
            model=self.model,
            batch_id=batch_id,
            earlier=list(earlier or []),
        )

    def _span(self, tried: list[str], now: float) -> tuple[float, float]:
        """(first batch submitted, last batch ended) in unix seconds, from the journal.

        Why the journal's times and not this process's clock: a batch may have been submitted by an
        earlier driver (a re-run collects it), and its records say when it went to the vendor and
        when its end was first seen. `now` stands in for a time the journal does not have (a record
        that could not be written; a batch collected before its end was recorded)."""
        first = self.journal.by_batch_id(tried[0]) if tried else None
        last = self.journal.by_batch_id(tried[-1]) if tried else None
        ended = (last.ended_at or last.collected_at or now) if last is not None else now
        started = first.submitted_at if first is not None else ended
        return min(started, ended), ended

    # ------------------------------------------------------------------ queue and submit
    async def _enqueue(self, request: JudgeRequest, schema: type[BaseModel]) -> str:
        """Queue the request; returns the id of the batch it was submitted in.

        The open batch is sent first if this request would take it over a limit (`split_cause`),
        and at once when it is full; the same rule as `plan_batches`."""
        cid = custom_id(request)
        queued = self._queue.get(cid)
        if queued is None:
            limits = self._limits
            queued = _Queued(request, schema, self.api.request_bytes(request, schema), input_tokens(request))
            if limits.max_enqueued_tokens is not None and queued.tokens > limits.max_enqueued_tokens:
                whose = ("the vendor's batch queue limit" if self.stats["vendor_enqueued_token_limit"]
                         else f"{self.name}'s batch_limits.max_enqueued_tokens")
                raise _SubmitFailed(ErrorKind.FATAL, f"the request's ~{queued.tokens:,} input tokens exceed {whose} "
                                    f"({limits.max_enqueued_tokens:,} enqueued tokens): no batch can hold it")
            cause = split_cause(Held(len(self._queue), self._queue_bytes, self._queue_tokens),
                                queued.size, queued.tokens, limits)
            if cause is not None:
                self._flush_now(cause)
            self._queue[cid] = queued
            self._queue_bytes += queued.size
            self._queue_tokens += queued.tokens
            if len(self._queue) >= limits.max_requests:
                self._flush_now("requests")
            elif self._flush_timer is None:
                self._flush_timer = asyncio.create_task(self._flush_later())
        return await asyncio.shield(queued.batch)

    async def _flush_later(self) -> None:
        await self._sleep(self.settings.flush_interval_s)
        self._flush_timer = None
        self._flush_now("interval")

    def _flush_now(self, cause: SplitCause) -> None:
        if self._flush_timer is not None and self._flush_timer is not asyncio.current_task():
            self._flush_timer.cancel()
        self._flush_timer = None
        items, self._queue, self._queue_bytes, self._queue_tokens = self._queue, {}, 0, 0
        if items:
            self.stats[f"closed_by_{cause}"] += 1
            task = asyncio.create_task(self._submit(items, cause))
            self._flushing.add(task)
            task.add_done_callback(self._flushing.discard)

    async def flush(self) -> None:
        """Send whatever is queued now and wait until it is submitted (used by --detach)."""
        self._flush_now("flush")
        if self._flushing:
            await asyncio.gather(*self._flushing, return_exceptions=True)

    # ------------------------------------------------------------------ the vendor's batch queue
    def _fits(self, tokens: int) -> bool:
        limit = self._limits.max_enqueued_tokens
        return not self._gate_closed and (limit is None or self._enqueued + tokens <= limit)

    def _too_big(self, tokens: int) -> bool:
        """Larger than the limit (the vendor's, learned while the batch waited, may be lower)."""
        limit = self._limits.max_enqueued_tokens
        return limit is not None and tokens > limit

    async def _admit(self, tokens: int) -> None:
        """Wait (in the order batches were closed) until a batch of `tokens` fits in the vendor's
        batch queue next to this queue's open batches, then count it; `_Held` with --detach;
        `_Resplit` when the limit fell below the batch meanwhile (it would block the line forever)."""
        async with self._admission:
            if not self._fits(tokens):
                if self.detach:
                    raise _Held()
                self.stats["batches_held"] += 1
            while not self._fits(tokens):
                if self._too_big(tokens):
                    raise _Resplit()
                self._room.clear()
                await self._room.wait()
            self._enqueued += tokens
            self.stats["max_enqueued_tokens"] = max(self.stats["max_enqueued_tokens"], self._enqueued)

    def _unadmit(self, tokens: int) -> None:
        """A batch counted by `_admit` was not submitted after all."""
        self._enqueued -= tokens
        self._room.set()

    def _track(self, batch_id: str, tokens: int) -> None:
        """Count a batch at the vendor that has not ended (found in the journal or again at the vendor)."""
        if batch_id and batch_id not in self._open:
            self._open[batch_id] = tokens
            self._enqueued += tokens

    def _release(self, batch_id: str) -> None:
        """The batch has ended (or is gone): its tokens leave the vendor's queue, and a batch held
        after a refusal may go."""
        tokens = self._open.pop(batch_id, None)
        if tokens is None:
            return
        self._enqueued -= tokens
        self._gate_closed = False
        self._room.set()

    def _close_gate(self) -> None:
        """After a refusal: send nothing until one of this queue's batches ends or a backoff passes
        (doubling from the poll interval with each refusal in a row), whichever is first."""
        self._refusal_streak += 1
        self._gate_closed = True
        if self._reopen is not None and not self._reopen.done():
            return
        delay = min(self.settings.poll_interval_s * 2 ** (self._refusal_streak - 1), MAX_REFUSAL_BACKOFF_S)
        self._reopen = asyncio.ensure_future(self._reopen_after(delay))

    async def _reopen_after(self, delay: float) -> None:
        await self._sleep(delay)
        self._gate_closed = False
        self._room.set()

    def _learn(self, reason: str) -> None:
        """Take the vendor's batch queue limit from its refusal when it is below this queue's: no
        batch is then larger than the vendor can ever accept (one configured too high, or none)."""
        found = _VENDOR_LIMIT.search(reason)
        if found is None:
            return
        vendor = int(found.group(1).replace(",", ""))
        ours = self._limits.max_enqueued_tokens
        if vendor <= 0 or (ours is not None and ours <= vendor):
            return
        self._limits = self._limits.model_copy(update={"max_enqueued_tokens": vendor})
        self.stats["vendor_enqueued_token_limit"] = vendor
        self._room.set()  # a batch waiting for room may now be too big: it is split again (`_admit`)
        log.warning("%s: the vendor's batch queue limit is %s enqueued tokens (its refusal says so), below this "
                    "queue's %s: batches now hold at most that", self.name, f"{vendor:,}",
                    "(none)" if ours is None else f"{ours:,}")

    async def _submit(self, items: dict[str, _Queued], closed_by: SplitCause) -> None:
        tokens = sum(q.tokens for q in items.values())
        try:
            if self._too_big(tokens):  # closed before the vendor's lower limit was learned
                raise _Resplit()
            await self._admit(tokens)
        except _Resplit:
            self.stats["batches_split_again"] += 1
            for q in items.values():
                if not q.batch.done():
                    q.batch.set_exception(_Resplit())
                    q.batch.exception()
            return
        except _Held:
            limit = self._limits.max_enqueued_tokens
            why = ("the vendor refused a batch at its batch queue limit just now" if self._gate_closed or limit is None
                   else f"this queue's open batches hold ~{self._enqueued:,} of the {limit:,} enqueued tokens allowed")
            self.stats["batches_held_detached"] += 1
            for q in items.values():
                if not q.batch.done():
                    q.batch.set_exception(BatchPending(
                        self.name, self.model, ErrorKind.TRANSIENT,
                        f"not sent: {why}; --detach: run the same command again to send it", attempts=0))
                    q.batch.exception()
            return
        record = BatchRecord(
            vendor=self.name,
            model=self.model,
            label=vendor_label(self.label, self.name),
            requests=[q.request.request_hash for q in items.values()],
            purposes=dict(Counter(q.request.purpose for q in items.values())),
            input_tokens=tokens,
            closed_by=closed_by,
        )
        batch = [(cid, q.request, q.schema) for cid, q in items.items()]
        worst = 0.0
        if self.spend_guard is not None:
            price = self.cfg.price.for_batch()
            worst = sum(worst_case_usd(self.cfg, q.request, price) for q in items.values())
            try:
                [granted] = await self.spend_guard.reserve([worst])
            except Exception as exc:  # the ledger is unreachable: send nothing that could cross the cap
                granted = False
                log.error("%s: the cost cap's ledger did not answer (%s); batch not submitted", self.name, exc)
            if not granted:
                log.warning("%s: a batch of %d request(s) (worst case $%.4f) could cross the cost cap; not submitted",
                            self.name, len(items), worst)
                self._unadmit(tokens)
                for q in items.values():
                    if not q.batch.done():
                        q.batch.set_exception(_CapRefused())
                        q.batch.exception()
                return
        def created(obj: VendorObject) -> None:  # e.g. OpenAI's input file, before the batch exists
            if record.add_objects([obj]):
                self.journal.save(record)

        retention = self.settings.retention
        options = SubmitOptions(input_expires_after_s=retention.input_file_expires_after_s,
                                output_expires_after_s=retention.output_files_expire_after_s, created=created)
        try:
            self.journal.save(record)  # the intent, before the vendor hears of it (see evalcore.vendors.batch.journal)
            status = await self.api.submit(batch, record.label, options)
        except Exception as exc:
            kind = self.api.classify(exc).kind
            cause = f"submitting a batch of {len(items)} failed: {self.api.redact(str(exc))[:300]}"
            log.warning("%s: %s", self.name, cause)
            record.phase = record.vendor_status = "abandoned"
            self._unadmit(tokens)
            with contextlib.suppress(OSError):
                self.journal.save(record)
            if self.spend_guard is not None:
                await asyncio.shield(self.spend_guard.settle(worst, 0.0))
            for q in items.values():
                if not q.batch.done():
                    q.batch.set_exception(_SubmitFailed(kind, cause))
                    q.batch.exception()
            return
        self._enqueued -= tokens  # counted again by `_adopt` under the batch's id
        self._room.set()
        try:
            self._adopt(record, status)  # saved before anyone waits on the batch
        except OSError as exc:  # paid for: wait on it in this process all the same
            log.error("%s: batch %s was submitted but its journal record could not be written (%s); "
                      "a re-run will look it up by its label %s", self.name, status.batch_id, exc, record.label)
        if self.spend_guard is not None:
            self._reserved[status.batch_id] = worst
        self.stats["batches_submitted"] += 1
        self.stats["requests_submitted"] += len(items)
        for q in items.values():
            if not q.batch.done():
                q.batch.set_result(status.batch_id)

    def _adopt(self, record: BatchRecord, status: BatchStatus) -> None:
        """The record is the vendor's batch `status` (submitted, adopted, found again): journalled,
        and counted in the vendor's batch queue until it ends."""
        if record.batch_id and record.batch_id != status.batch_id:  # found again under another id
            self._release(record.batch_id)
        record.batch_id = status.batch_id
        record.phase = "submitted"
        record.vendor_status = status.vendor_status
        record.expires_at = status.expires_at
        record.add_objects(status.objects)
        if not status.ended:
            self._track(status.batch_id, record.input_tokens)
        self.journal.save(record)

    async def _recover(self) -> None:
        """Resolve records a crashed driver wrote before a submit call whose answer it never saved:
        the vendor's batch with that label is adopted; none means the submit never arrived."""
        if self._recovered:
            return
        async with self._recover_lock:
            if self._recovered:
                return
            for record in self.journal.unresolved():
                try:
                    found = await self.api.find(record.label, record.submitted_at, record.requests,
                                                self.journal.known_ids())
                except Exception as exc:
                    raise _SubmitFailed(self.api.classify(exc).kind,
                                        f"looking up batch {record.label} failed: {self.api.redact(str(exc))[:300]}"
                                        ) from None
                if found is not None:
                    log.warning("%s: adopted batch %s submitted by an earlier driver", self.name, found.batch_id)
                    self._adopt(record, found)
                    self.stats["batches_adopted"] += 1
                else:
                    record.phase = record.vendor_status = "abandoned"
                    self.journal.save(record)
            await self._rebuild()
            self._count_open()
            self._recovered = True

    def _count_open(self) -> None:
        """Count the journal's batches that have not ended (an earlier driver's) in the vendor's batch
        queue, and watch each until it ends, so their room is given back even if no request of this
        run waits on them (with --detach, one look)."""
        for record in self.journal.records.values():
            if record.phase == "submitted" and record.batch_id and record.batch_id not in self._open:
                self._track(record.batch_id, record.input_tokens)  # (a limit may be learned later)
                task = asyncio.ensure_future(self._result_of(record.batch_id, ""))
                self._background.add(task)
                task.add_done_callback(self._quietly_done)

    def _quietly_done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled():
            task.exception()  # its outcome is journalled; the requests that wait on it see it themselves

    async def _rebuild(self) -> None:
        """Journal the run's batches the vendor has and the journal does not know (see the module doc).

        Searched: the vendor's batches created from the run's start (or the earliest damaged record)
        up to when this journal was read (later ones are this attempt's, possibly a sibling actor's).
        When: a record was damaged; the run ran before and the vendor labels batches (any of the
        run's labels the journal lacks is adopted); or the run ran before and this vendor's journal
        is empty (deleted). Anthropic: the batches created around a damaged record (or since the
        run began, for a deleted journal) are journalled unconfirmed."""
        j = self.journal
        named = self.api.labels_batches
        lookups = j.to_look_up()
        folder_gone = j.resumed and not j.records
        if not lookups and not folder_gone and not (named and j.resumed):
            return
        times = [r.submitted_at for r in lookups if r.submitted_at > 0]
        if j.started_at is not None:
            times.append(j.started_at)
        since = min(times) - CLOCK_SKEW_S if times else 0.0
        try:
            listed = await self.api.listing(since)
        except Exception as exc:
            raise _SubmitFailed(self.api.classify(exc).kind, "listing the vendor's batches to find the run's "
                                f"again failed: {self.api.redact(str(exc))[:300]}") from None
        known = j.known_ids()
        by_label = {r.label: r for r in lookups}
        windows: list[tuple[float, float, BatchRecord | None]] = []
        if not named:
            for r in lookups:
                lo, hi = (r.submitted_at - UNNAMED_WINDOW_S[0], r.submitted_at + UNNAMED_WINDOW_S[1]) \
                    if r.submitted_at > 0 else (since, j.loaded_at)
                windows.append((lo, hi, r))
            if folder_gone:
                windows.append((since, j.loaded_at, None))
        unconfirmed: Counter[str] = Counter()  # per damaged record, the unlabelled batches taken for it
        for b in sorted(listed, key=lambda b: b.created_at):
            if b.status.batch_id in known or b.created_at > j.loaded_at:
                continue
            if named:
                existing = j.records.get(b.label) if b.label else None
                if existing is not None and existing.live:  # a second batch of one label (an SDK retry of
                    continue  # the create call): paid, and its requests are answered by the journalled one
                if b.label and (b.label in by_label or is_own_label(b.label, self.label, self.name)):
                    await self._take(b, existing)
                continue
            hits = [r for lo, hi, r in windows if lo <= b.created_at <= hi]
            if hits:
                why = "; ".join(f"near the set-aside record {r.label}" if r else "the vendor's journal was missing"
                                for r in hits)
                self._take_unlabelled(b, why)
                unconfirmed.update(r.label for r in hits if r is not None)
        for r in lookups:
            if r.phase != "damaged":  # adopted: found by its label
                continue
            if named:
                r.phase, r.vendor_status = "lost", "not found"
                r.note += f"; the vendor has no batch labelled {r.label} (never created, or deleted): nothing to collect"
            elif unconfirmed[r.label]:
                r.phase, r.vendor_status = "replaced", "looked up"
                r.note += (f"; batches carry no label here: {unconfirmed[r.label]} batch(es) created around then are "
                           "journalled unconfirmed and answer the run's requests they hold")
            else:
                r.phase, r.vendor_status = "lost", "not found"
                r.note += "; the vendor has no batch created around then that the journal does not know"
            log.warning("%s: %s", self.name, r.note)
            j.save(r)

    async def _take(self, listed: ListedBatch, existing: BatchRecord | None) -> None:
        """Journal a batch found by its label (its requests read from the vendor where it tells)."""
        status = listed.status
        assert listed.label is not None
        if existing is not None and existing.requests_known:  # its submit failed, or it was lost: here after all
            existing.note = f"found again at the vendor by its label (the record said {existing.phase})"
            self._adopt(existing, status)
        else:
            try:
                ids = await self.api.request_ids(status.batch_id)
            except Exception as exc:
                raise _SubmitFailed(self.api.classify(exc).kind, f"reading the requests of batch {status.batch_id} "
                                    f"failed: {self.api.redact(str(exc))[:300]}") from None
            if existing is not None:  # a damaged record: the vendor has its batch
                record = existing
                record.note = f"{existing.note}; found again at the vendor by its label"
            else:
                record = BatchRecord(vendor=self.name, model=self.model, label=listed.label, submitted_at=listed.created_at,
                                     requests=[], note="found again at the vendor by its label (its journal record "
                                     "was missing)")
            record.model = self.model
            record.requests, record.requests_known = sorted(ids or []), ids is not None
            self._adopt(record, status)
            self.journal.learned(record)
        log.warning("%s: batch %s: %s", self.name, status.batch_id, (existing or record).note)
        self.stats["batches_found_again"] += 1

    def _take_unlabelled(self, listed: ListedBatch, why: str) -> None:
        """Journal, unconfirmed, an unlabelled batch that may be the run's (read once it ends)."""
        status = listed.status
        record = BatchRecord(
            vendor=self.name, model=self.model, label=f"found-{status.batch_id}", submitted_at=listed.created_at,
            requests=[], requests_known=False, confirmed=False,
            note=f"found at the vendor among its unlabelled batches ({why}); the run's requests it holds are "
                 "answered from it",
        )
        self._adopt(record, status)
        self.stats["batches_found_unconfirmed"] += 1

    # ------------------------------------------------------------------ batches whose requests are not known
    async def _usable(self, request_hash: str, tried: list[str]) -> BatchRecord | None:
        """The batch to wait on for this request (`BatchJournal.usable_batch`); batches found at the
        vendor whose requests are not known yet are settled first: the request may be in one of
        them, so nothing is submitted before."""
        record = self.journal.usable_batch(request_hash, skip=tried)
        if record is None and self._unsettled():
            await self._settle_unknown()
            record = self.journal.usable_batch(request_hash, skip=tried)
        return record

    def _unsettled(self) -> list[str]:
        return [r.batch_id for r in self.journal.records.values()
                if r.live and not r.requests_known and not self.journal.answers_purged(r)]

    async def _settle_unknown(self) -> None:
        """Wait until every batch whose requests are unknown has ended and been read (or is gone);
        --detach: `BatchPending` while one is still running."""
        while batch_ids := self._unsettled():
            results = await asyncio.gather(*(self._result_of(b, "") for b in batch_ids), return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException) and not isinstance(result, _Moved | _Lost | _Refused):
                    raise result

    def _confirm(self, batch_id: str) -> None:
        """A request of the run is in this batch: it is the run's (a purge may delete it)."""
        record = self.journal.by_batch_id(batch_id)
        if record is not None and not record.confirmed:
            record.confirmed = True
            record.note += "; confirmed: it holds requests of the run"
            with contextlib.suppress(OSError, TribunalError):
                self.journal.save(record)

    # ------------------------------------------------------------------ poll and collect
    async def _result_of(self, batch_id: str, cid: str) -> BatchItemResult | None:
        """One request's result; the batch is polled and collected once for all its waiters, and
        its results are dropped when the last waiter has its answer (memory stays flat)."""
        watcher = self._watchers.get(batch_id)
        if watcher is None:
            watcher = asyncio.ensure_future(self._watch(batch_id))
            self._watchers[batch_id] = watcher
        self._waiters[batch_id] += 1
        try:
            return (await asyncio.shield(watcher)).get(cid)
        finally:
            self._waiters[batch_id] -= 1
            if self._waiters[batch_id] <= 0:
                del self._waiters[batch_id]
                if watcher.done() and self._watchers.get(batch_id) is watcher:
                    del self._watchers[batch_id]

    async def _watch(self, batch_id: str) -> dict[str, BatchItemResult]:
        """Poll until the batch ends, collect it once, record every outcome in the journal."""
        record = self.journal.by_batch_id(batch_id)
        assert record is not None, f"batch {batch_id} is not in the journal"
        try:
            try:
                ended = await self._until_ended(batch_id, lambda status: self._update(record, status))
                if ended.refused is not None:
                    await self._refused(record, ended.refused)
                items = await self._collect(batch_id)
            except _Gone as gone:
                await self._gone(record, gone)
        except BaseException:
            self._watchers.pop(batch_id, None)  # the next caller polls (and collects) again
            raise
        if not record.requests_known:  # found at the vendor: its results say what it held
            record.requests = sorted({item.custom_id for item in items})
            record.requests_known = True
            self.journal.learned(record)
        by_id = {item.custom_id: item for item in items}
        self._refusal_streak = 0  # the vendor's queue took one of ours
        reserved = self._reserved.pop(batch_id, None)
        if reserved is not None and self.spend_guard is not None:
            await asyncio.shield(self.spend_guard.settle(reserved, sum(self._billed(item) for item in items)))
        wanted = set(record.requests)
        record.outcomes = {
            cid: ("bad_output" if item.status == "succeeded" and item.problem else item.status)
            for cid, item in by_id.items()
            if cid in wanted
        }
        record.phase = "collected"
        record.collected_at = time.time()
        self.journal.save(record)
        self.stats["batches_collected"] += 1
        return by_id

    async def _until_ended(self, batch_id: str, seen: Callable[[BatchStatus], None]) -> BatchStatus:
        """Poll until the batch has ended (`seen` each state); `BatchPending` with --detach while it
        runs; `_Gone` for a 404."""
        failures = 0
        while True:
            try:
                status = await self.api.poll(batch_id)
                failures = 0
            except Exception as exc:
                if self.api.missing(exc):
                    raise _Gone(batch_id, f"the vendor does not know batch {batch_id} (404)", polling=True) from None
                kind = self.api.classify(exc).kind
                failures += 1
                cause = f"polling batch {batch_id} failed: {self.api.redact(str(exc))[:300]}"
                if kind is ErrorKind.FATAL or failures >= MAX_POLL_FAILURES:
                    raise _SubmitFailed(kind, cause) from None
                log.warning("%s: %s (will poll again)", self.name, cause)
                await self._sleep(self.settings.poll_interval_s)
                continue
            self.stats["polls"] += 1
            seen(status)
            if status.ended:
                return status
            if self.detach:
                raise BatchPending(
                    self.name, self.model, ErrorKind.TRANSIENT,
                    f"in batch {batch_id} ({status.vendor_status}); {AWAITING_MARK}",
                    attempts=0,
                )
            await self._sleep(self.settings.poll_interval_s)

    async def _collect(self, batch_id: str) -> list[BatchItemResult]:
        try:
            return await self.api.collect(batch_id)
        except Exception as exc:
            if self.api.missing(exc):
                raise _Gone(batch_id, f"the vendor no longer has the results of batch {batch_id} (404)",
                            polling=False) from None
            raise _SubmitFailed(self.api.classify(exc).kind,
                                f"collecting batch {batch_id} failed: {self.api.redact(str(exc))[:300]}") from None

    async def _gone(self, record: BatchRecord, gone: _Gone) -> NoReturn:
        """A 404: the batch under another id (its label found it: `_Moved`), or lost (`_Lost`)."""
        if gone.polling:  # a damaged id? the vendor may know the batch by its label
            try:
                found = await self.api.find(record.label, record.submitted_at, record.requests,
                                            self.journal.known_ids())
            except Exception as exc:
                raise _SubmitFailed(self.api.classify(exc).kind, f"{gone.cause}; looking it up by its label failed: "
                                    f"{self.api.redact(str(exc))[:300]}") from None
            if found is not None:
                how = "its label" if self.api.labels_batches else "the custom ids of its requests"
                record.note = f"{gone.cause}; found again by {how} as {found.batch_id}"
                log.warning("%s: %s", self.name, record.note)
                self._adopt(record, found)
                self.stats["batches_found_again"] += 1
                raise _Moved(gone.batch_id)
            if not self.api.labels_batches and await self._wait_on_running(record, gone):
                raise _Moved(gone.batch_id)
        what = ("no batch at the vendor carries its label" if self.api.labels_batches
                else "no batch at the vendor holds its requests") if gone.polling else "its answers are gone"
        self._release(record.batch_id)
        record.phase, record.vendor_status = "lost", "not found"
        record.note = f"{gone.cause}; {what}: its {len(record.requests)} request(s) are sent again"
        log.warning("%s: %s", self.name, record.note)
        self.journal.save(record)
        self.stats["batches_lost"] += 1
        raise _Lost(record.note)

    async def _wait_on_running(self, record: BatchRecord, gone: _Gone) -> bool:
        """An unlabelled batch's id is unknown to the vendor and no ended batch holds its requests:
        the batches still running since the record was written (less the clock skew) that the
        journal does not know may hold them, and cannot tell until they end. Each is journalled
        unconfirmed (its results say what it held); the record is marked replaced. True when there
        was one: its requests then wait on those batches instead of being paid again."""
        try:
            listed = await self.api.listing(record.submitted_at - CLOCK_SKEW_S)
        except Exception as exc:
            raise _SubmitFailed(self.api.classify(exc).kind, f"{gone.cause}; listing the vendor's batches failed: "
                                f"{self.api.redact(str(exc))[:300]}") from None
        known = self.journal.known_ids()
        running = [b for b in listed if not b.status.ended and b.status.batch_id not in known]
        for b in running:
            self._take_unlabelled(b, f"the vendor did not know batch {record.batch_id} of record {record.label}")
        if not running:
            return False
        self._release(record.batch_id)
        record.phase, record.vendor_status = "replaced", "looked up"
        record.note = (f"{gone.cause}; no ended batch at the vendor holds its requests: {len(running)} running "
                       "batch(es) it does not know are journalled unconfirmed and answer the run's requests they hold")
        log.warning("%s: %s", self.name, record.note)
        self.journal.save(record)
        return True

    async def _refused(self, record: BatchRecord, reason: str) -> NoReturn:
        """The vendor refused the batch at its batch queue limit: nothing processed or billed. Its
        requests are marked `refused` (no waiter takes an answer from it, in this run or the next),
        and sent again once there is room (`_close_gate`, first: nothing is sent meanwhile)."""
        self._close_gate()
        self._learn(reason)
        record.outcomes = dict.fromkeys(record.requests, "refused")
        record.phase = "collected"
        record.collected_at = time.time()
        record.note = (f"refused by the vendor's batch queue limit ({self.api.redact(reason)[:300]}); nothing was "
                       f"processed or billed: its {len(record.requests)} request(s) are sent again once there is room")
        log.warning("%s: batch %s: %s", self.name, record.batch_id, record.note)
        with contextlib.suppress(OSError):  # the requests are sent again anyway; the record only says why
            self.journal.save(record)
        reserved = self._reserved.pop(record.batch_id, None)
        if reserved is not None and self.spend_guard is not None:
            await asyncio.shield(self.spend_guard.settle(reserved, 0.0))
        self.stats["batches_refused"] += 1
        raise _Refused(record.note)

    def _billed(self, item: BatchItemResult) -> float:
        """What one result of a batch cost (the vendor's figure if it gives one, else batch prices)."""
        if item.cost_usd is not None:
            return item.cost_usd
        return self.cfg.price.for_batch().bill(item.usage.billed()).usd

    def _update(self, record: BatchRecord, status: BatchStatus) -> None:
        """Save the record when what `tribunal status` shows has changed."""
        before = (record.vendor_status, record.succeeded, record.failed, record.phase)
        record.vendor_status = status.vendor_status
        record.succeeded, record.failed = status.succeeded, status.failed
        record.expires_at = status.expires_at or record.expires_at
        if status.ended:
            self._release(record.batch_id)
        if status.ended and record.phase == "submitted":
            record.phase = "ended"
            record.ended_at = time.time()
        added = record.add_objects(status.objects)  # output and error files, once the batch has them
        if added or (record.vendor_status, record.succeeded, record.failed, record.phase) != before:
            self.journal.save(record)

    def _mark(self, batch_id: str, cid: str, outcome: Any) -> None:
        record = self.journal.by_batch_id(batch_id)
        if record is not None and record.outcomes.get(cid) != outcome:
            record.outcomes[cid] = outcome
            with contextlib.suppress(OSError):  # the attempt is retried anyway; the mark only saves a re-collect
                self.journal.save(record)

    def snapshot(self) -> dict[str, Any]:
        """Counters and queue state (for progress and --detach)."""
        base = dict.fromkeys(("batches_submitted", "requests_submitted", "batches_collected", "resumed_requests",
                              "succeeded", "failed", "failed_attempts", "online_retries", "polls"), 0)
        return {**base, **self.stats, "queued": len(self._queue), "flushing": len(self._flushing),
                "watching": len(self._watchers), "enqueued_tokens": self._enqueued}
