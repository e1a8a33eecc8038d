"""The shared half of every adapter: budget, retries, accounting, secrets, client lifetime.

Why one module: the attempt template, the in-flight limiter's use, retries, accounting and client lifetime are one call's life, which every adapter shares.

Why a base class: what differs between vendors is small (how to send one attempt, how to read
usage, what each SDK exception means). Everything else — waiting on the rate budget, the single
retry policy, counting attempts and 429s, summing billed usage and cost, keeping the key out of
every message, creating the client inside the running event loop — is written once here, so the
three adapters cannot drift apart. An adapter implements `_make_client`, `_attempt` and
`classify`; `complete` and `complete_many` come from here. The adapters over a vendor SDK
(`SDKAdapter`) do not even write `_attempt`: they build the request (`params`), send it (`_send`)
and read the answer (`_read`), and the attempt around those steps is the template method here.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import math
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar, cast

import pydantic

from evalcore.config.models import VendorConfig
from evalcore.cost.cost_cap import Ledger, refusal, worst_case_usd
from evalcore.errors import EarlierAttempt, ErrorKind, VendorError
from evalcore.vendors.adapters._headers import RateInfo
from evalcore.vendors.budget import RateBudget, Reservation
from evalcore.vendors.in_flight import PRIOR_LATENCY_S, InFlightLimiter
from evalcore.vendors.output_cap import retry_cap
from evalcore.vendors.protocol import JudgeReply, JudgeRequest, T, Usage
from evalcore.vendors.retry import Failure, RetryState, next_delay

log = logging.getLogger("evalcore.vendors")

C = TypeVar("C")
R = TypeVar("R")
M = TypeVar("M", bound=pydantic.BaseModel)

MAX_CAUSE_CHARS = 400
MIN_SECRET_CHARS = 6


_SENT: contextvars.ContextVar[Reservation | None] = contextvars.ContextVar("tribunal_sent", default=None)
"""The budget slot of the attempt running in this task (set around `_attempt`): `request_written`
reports to it."""


def request_written() -> None:
    """The current attempt's request has been written out: its last byte handed to the network.

    Called by an adapter's transport (`_stainless.pooled_http_client`'s trace hook); the rate
    budget may then count the call as arrived at the vendor sooner (`Reservation.sent`). Outside
    an attempt, or for an attempt with no budget, it does nothing."""
    reservation = _SENT.get()
    if reservation is not None:
        reservation.sent()


class Classified(NamedTuple):
    """`classify(exc)`'s answer: the kind of failure, the server's retry-after and its
    `x-should-retry` verdict (`evalcore.vendors.retry`), if any."""

    kind: ErrorKind
    retry_after_s: float | None = None
    should_retry: bool | None = None


class BadOutput(Exception):
    """The vendor answered (and billed), but not with a valid object of the requested schema."""

    def __init__(
        self,
        reason: str,
        *,
        usage: Usage | None = None,
        cost_usd: float | None = None,
        request_id: str | None = None,
        rate: RateInfo | None = None,
        output_text: str | None = None,
        capped: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.output_text = output_text
        self.capped = capped
        """The answer stopped at its output-token cap (retried once with a larger one)."""
        self.usage = usage
        self.cost_usd = cost_usd
        self.request_id = request_id
        self.rate = rate


class NonModelBody(Exception):
    """A 200 whose body is not the vendor's response object (an HTML page, a proxy error)."""


@dataclass
class Attempt(Generic[M]):
    """One successful attempt as an adapter reports it."""

    output: M
    usage: Usage
    request_id: str | None = None
    cost_usd: float | None = None
    rate: RateInfo | None = None


@dataclass
class Answer:
    """A vendor's answer to one attempt as its adapter reads it, before the schema is checked."""

    usage: Usage
    text: str
    problem: str | None = None
    """Why the answer is unusable although billed (truncated, refused), or None."""
    request_id: str | None = None
    cost_usd: float | None = None
    """The vendor's own figure for the attempt (xAI), or None: priced from the configured table."""
    rate: RateInfo | None = None
    capped: bool = False
    """The answer stopped at its output-token cap (`problem` says so too): OpenAI `incomplete` for
    `max_output_tokens`, Anthropic `stop_reason` `max_tokens`, xAI `REASON_MAX_LEN`."""


def validate_output(schema: type[M], text: str, **billing: Any) -> M:
    """Parse the model's text as the schema; anything else is a (billed) bad output."""
    try:
        return schema.model_validate_json(text)
    except pydantic.ValidationError as exc:
        errors = exc.errors()
        msg = errors[0]["msg"] if errors else "invalid"
        where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
        raise BadOutput(
            f"output is not a valid {schema.__name__}: {msg} at {where or '(root)'}",
            output_text=text,
            **billing,
        ) from None


class AdapterBase(ABC, Generic[C]):
    """Implements the `Vendor` protocol on top of `_attempt` + `classify` (see module doc)."""

    adapter: ClassVar[str] = "base"
    needs_key: ClassVar[bool] = True
    is_offline: ClassVar[bool] = False

    def __init__(
        self,
        cfg: VendorConfig,
        *,
        budget: RateBudget | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.cfg = cfg
        self.name = cfg.name
        self.family = cfg.family
        self.model = cfg.model
        self.budget = budget if budget is not None or self.is_offline else RateBudget.for_vendor(cfg)
        self._clock = clock
        # Unix seconds at the clock's zero: a reply's span is read on `clock` (monotonic, so no
        # wall-clock step can bend a latency) and stated in unix seconds, so rows of every process line up.
        self._epoch = time.time() - clock()
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._client: C | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._secret: pydantic.SecretStr | None = None
        # Caps attempts on the wire at once: the budget paces the rate, and this many are needed
        # at its rate and the observed latency (Little's law, `evalcore.vendors.in_flight`), never
        # more than `max_in_flight`, which the SDK clients' pools together hold (`SDKAdapter`).
        self._wire = self._new_wire()
        self.spend_guard: Ledger | None = None
        """Set by a sweep with --max-cost: each attempt reserves its worst case from it (cost_cap.py)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model={self.model!r}, adapter={self.adapter!r})"

    # ---------------------------------------------------------------- wire slots
    def _rate_per_minute(self) -> float | None:
        """Requests per (real) minute this client's budget lets through (None: no budget, no rate).

        A budget's limits are per `window_s` (a minute, shorter when a test or benchmark
        compresses time)."""
        budget = self.budget
        if budget is None:
            return None
        return budget.requests_per_minute * budget.safety * 60.0 / budget.window_s

    def _new_wire(self) -> InFlightLimiter:
        """The wire slots for the running loop, at the current budget's rate (the budget may have
        been replaced since construction: an account's shared one, an actor's share), carrying
        the latency estimate and the counters over from the previous loop's."""
        old: InFlightLimiter | None = getattr(self, "_wire", None)
        return InFlightLimiter(
            self.cfg.max_in_flight,
            self._rate_per_minute(),
            prior_latency_s=old.latency_s if old is not None else min(PRIOR_LATENCY_S, self.cfg.timeout_s),
            clock=self._clock,
            stats=old.stats if old is not None else None,
        )

    def wire_stats(self) -> dict[str, float]:
        """The in-flight cap, the slots held and waited for, and whether the cap or the budget binds
        (`InFlightLimiter.snapshot`; a vendor actor adds them to its statistics)."""
        return self._wire.snapshot()

    # ---------------------------------------------------------------- to implement per vendor
    @abstractmethod
    def _make_client(self, api_key: str) -> C:
        """Build the SDK client (SDK retries off). Called inside the running event loop."""

    @abstractmethod
    async def _attempt(
        self, client: C, request: JudgeRequest, schema: type[M], timeout_s: float
    ) -> Attempt[M]:
        """Send one attempt; raise the SDK's exception, `BadOutput` or `NonModelBody` on failure."""

    async def _close_client(self, client: C) -> None:
        """Release the client's connections (override when the SDK has a close method)."""

    def rate_info(self, exc: BaseException) -> RateInfo | None:
        """Rate-limit facts carried by a failed attempt (headers, gRPC metadata)."""
        return exc.rate if isinstance(exc, BadOutput) else None

    def describe(self, exc: BaseException) -> str:
        """A short, human cause for `exc` (sanitised afterwards); never include headers."""
        if isinstance(exc, BadOutput) and exc.output_text is not None:
            # redact before cutting: a key cut in half would escape redaction afterwards
            head = self.redact(exc.output_text)[:80]
            return f"{exc.reason} (got {len(exc.output_text)} chars: {head!r})"
        text = str(exc).strip()
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

    def classify(self, exc: BaseException) -> Classified:
        """Vendor-neutral classification; adapters handle their SDK's errors, then call this."""
        if isinstance(exc, BadOutput | pydantic.ValidationError):
            return Classified(ErrorKind.BAD_OUTPUT)
        if isinstance(exc, TimeoutError):
            return Classified(ErrorKind.TIMEOUT)
        if isinstance(exc, NonModelBody | json.JSONDecodeError | ConnectionError):
            return Classified(ErrorKind.TRANSIENT)
        return Classified(ErrorKind.FATAL)

    # ---------------------------------------------------------------- secrets
    def redact(self, text: str) -> str:
        """Remove the API key from any text (defensive: SDK messages may echo what was sent)."""
        if self._secret is not None:
            key = self._secret.get_secret_value()
            if len(key) >= MIN_SECRET_CHARS:  # a 1-letter test key would blank every such letter
                text = text.replace(key, "***")
        return text

    def _cause(self, exc: BaseException) -> str:
        cause = self.redact(self.describe(exc)).replace("\n", " ")
        return cause if len(cause) <= MAX_CAUSE_CHARS else cause[: MAX_CAUSE_CHARS - 1] + "…"

    # ---------------------------------------------------------------- client lifetime
    def _ensure_client(self) -> C:
        """The client for the running loop, created on first use (SDK clients are loop-bound).

        Made once per loop whatever it is: an adapter with no client (offline, zero-work) gets
        `None` once too, so its wire slots (`_new_wire`) are one limiter for the loop, whose cap
        holds and whose counts the progress shows, not a fresh one per call."""
        loop = asyncio.get_running_loop()
        if self._client_loop is loop:
            return cast(C, self._client)
        key = ""
        if self.needs_key:
            secret = self.cfg.api_key()
            if secret is None:
                where = self.cfg.api_key_env or "api_key_env"
                raise VendorError(
                    self.name,
                    self.model,
                    ErrorKind.FATAL,
                    f"no API key: set the environment variable {where}"
                    if self.cfg.api_key_env
                    else "no API key: set api_key_env in the vendor's configuration",
                    attempts=0,
                )
            self._secret = secret
            key = secret.get_secret_value()
        self._client = self._make_client(key)
        self._client_loop = loop
        self._wire = self._new_wire()
        return self._client

    async def aclose(self) -> None:
        """Close the client if it belongs to this loop (a client of a dead loop is just dropped)."""
        client, loop = self._client, self._client_loop
        self._client, self._client_loop = None, None
        if client is not None and loop is asyncio.get_running_loop():
            try:
                await self._close_client(client)
            except Exception as exc:  # closing must never fail a run
                log.debug("%s: closing the client failed: %s", self.name, self.redact(str(exc)))

    # ---------------------------------------------------------------- the protocol
    def estimate_tokens(self, request: JudgeRequest) -> int:
        """What the budget reserves: prompt estimate plus the output allowance (OpenAI-style)."""
        return request.estimated_input_tokens + (request.max_output_tokens or self.cfg.max_output_tokens)

    async def complete(self, request: JudgeRequest, schema: type[T]) -> JudgeReply[T]:
        """One logical call with the retry policy; raises `VendorError` when it gives up."""
        outcome = await self._run(request, schema)
        if isinstance(outcome, VendorError):
            raise outcome
        return outcome

    async def complete_many(
        self, requests: list[JudgeRequest], schema: type[T]
    ) -> list[JudgeReply[T] | VendorError]:
        """All calls concurrently (the budget paces them); failures are returned in place."""
        return list(await asyncio.gather(*(self._run_safe(r, schema) for r in requests)))

    async def _run_safe(self, request: JudgeRequest, schema: type[T]) -> JudgeReply[T] | VendorError:
        try:
            return await self._run(request, schema)
        except Exception as exc:  # a bug must not sink the other calls of the batch
            cause = "internal error: " + self._cause(exc)
        return self._error(ErrorKind.FATAL, cause, RetryState(), None)

    def _error(
        self,
        kind: ErrorKind,
        cause: str,
        state: RetryState,
        request_id: str | None,
        billed: Usage | None = None,
        cost: float = 0.0,
        earlier: tuple[EarlierAttempt, ...] = (),
    ) -> VendorError:
        b = billed or Usage()
        return VendorError(
            self.name,
            self.model,
            kind,
            cause,
            attempts=state.attempts,
            rate_limited=state.rate_limited,
            request_id=request_id,
            billed_tokens=b.as_error_tokens(),
            cost_usd=cost,
            earlier=earlier,
        )

    async def _run(self, request: JudgeRequest, schema: type[T]) -> JudgeReply[T] | VendorError:
        state = RetryState()
        try:
            client = self._ensure_client()
        except VendorError as err:
            return err
        except Exception as exc:  # a client that cannot be built is a configuration problem
            cause = "cannot create the client: " + self._cause(exc)
        else:
            return await self._loop(client, request, schema, state)
        return self._error(ErrorKind.FATAL, cause, state, None)

    async def _loop(
        self, client: C, request: JudgeRequest, schema: type[T], state: RetryState
    ) -> JudgeReply[T] | VendorError:
        """Attempts until success or the policy gives up.

        Each attempt takes a budget slot (a retry is a request the vendor counts). The reply's span
        (`started_at` to `ended_at`, hence `latency_s`) runs from the first send to the answer,
        retries and waits included; the time queued in the budget before the first send is not the
        vendor's latency and is left out. Each
        attempt's own time on the wire (send to answer or failure) feeds the in-flight cap's
        latency estimate; a cancelled attempt, whose latency is unknown, does not.

        An answer that stopped at its output-token cap is retried once, at once, with a larger cap
        (`evalcore.vendors.output_cap.retry_cap`; the policy's rule): the request is sent from then on
        with that cap (its hash unchanged: it is the same call), the budget and the cost cap reserve
        for it, and the truncated attempt goes into the reply (or the final error) as a
        `EarlierAttempt`, its own row in the calls table.
        """
        billed = Usage()
        cost = 0.0
        request_id: str | None = None
        capped: list[EarlierAttempt] = []
        estimate = self.estimate_tokens(request)
        started: float | None = None
        while True:
            # The wire slot first, then the budget: a call let through by the budget goes out at
            # once (the budget's model bounds how long it takes to reach the vendor).
            wire = self._wire  # released on the instance it was taken from (a new loop makes a new one)
            await wire.acquire()
            try:
                if self.budget is not None:
                    with wire.waiting_on_budget() as at_budget:
                        turn = "warming" if request.warms else request.purpose
                        reservation: Reservation | None = await self.budget.acquire(estimate, turn)
                        at_budget.waited = reservation is not None and reservation.waited
                else:
                    reservation = None
            except BaseException:
                wire.release()
                raise
            sent: float | None = None  # when the attempt went out (None: never sent, or cancelled)
            now = self._clock()
            started = now if started is None else started
            state.attempts += 1
            timeout_s = max(min(self.cfg.timeout_s, self.cfg.retry.deadline_s - (now - started)), 0.001)
            failure: Failure | None = None
            rate: RateInfo | None = None
            counted: int | None = None  # tokens the vendor counted for a failed attempt, if known
            worst = worst_case_usd(self.cfg, request) if self.spend_guard is not None else 0.0
            attempt_usage: Usage | None = None  # what a billed bad answer of this attempt used
            attempt_cost = 0.0
            try:
                if self.spend_guard is not None and not (await self.spend_guard.reserve([worst]))[0]:
                    if reservation is not None:
                        reservation.settle(0)  # never sent
                    return refusal(self.name, self.model, state.attempts - 1)
                try:
                    sent = self._clock()
                    # `asyncio.timeout`, not `wait_for`: on Python 3.11 `wait_for` returns the result of
                    # an attempt that finished as the call was cancelled and loses the cancellation
                    # (CPython gh-86296, fixed in 3.12); it also runs the attempt as a task of its own.
                    writing = _SENT.set(reservation)
                    try:
                        async with asyncio.timeout(timeout_s):
                            result = await self._attempt(client, request, schema, timeout_s)
                    finally:
                        _SENT.reset(writing)
                    attempt_cost = result.cost_usd if result.cost_usd is not None else self._price(result.usage)
                except BadOutput as exc:
                    if exc.usage is not None:
                        attempt_cost = exc.cost_usd if exc.cost_usd is not None else self._price(exc.usage)
                    raise
                finally:
                    if self.spend_guard is not None:
                        await asyncio.shield(self.spend_guard.settle(worst, attempt_cost))
            except asyncio.CancelledError:
                sent = None  # its latency is unknown: not fed to the estimate
                if reservation is not None:
                    reservation.settle(None)
                raise
            except Exception as exc:
                verdict = self.classify(exc)
                failure = Failure(verdict.kind, verdict.retry_after_s, self._cause(exc), verdict.should_retry,
                                  truncated=isinstance(exc, BadOutput) and exc.capped)
                rate = self.rate_info(exc)
                if isinstance(exc, BadOutput):
                    request_id = exc.request_id or request_id
                    if exc.usage is not None:
                        attempt_usage = exc.usage
                        counted = exc.usage.input_tokens + exc.usage.output_tokens
                        billed += exc.usage
                        cost += exc.cost_usd if exc.cost_usd is not None else self._price(exc.usage)
            finally:
                wire.release(None if sent is None else self._clock() - sent)
            if failure is None:
                if reservation is not None:
                    reservation.settle(result.usage.input_tokens + result.usage.output_tokens)
                self._observe(result.rate)
                billed += result.usage
                cost += result.cost_usd if result.cost_usd is not None else self._price(result.usage)
                ended = self._clock()
                return JudgeReply(
                    output=result.output,
                    usage=billed,
                    cost_usd=cost,
                    started_at=self._epoch + started,
                    ended_at=self._epoch + ended,
                    attempts=state.attempts,
                    rate_limited=state.rate_limited,
                    request_id=result.request_id or request_id,
                    vendor=self.name,
                    model=self.model,
                    offline=self.is_offline,
                    earlier=capped,
                )
            if reservation is not None:
                reservation.settle(counted)  # None keeps the estimate (e.g. a timeout: unknown)
            state.record(failure)
            if failure.kind is ErrorKind.RATE_LIMITED and self.budget is not None:
                self.budget.on_rate_limited(failure.retry_after_s)
            self._observe(rate)
            delay = self._next_delay(failure, state, self._clock() - started)
            cap = request.max_output_tokens or self.cfg.max_output_tokens
            larger = retry_cap(cap) if failure.truncated else None
            if failure.truncated and delay is not None and larger is None:
                delay = None  # the cap cannot grow: a retry would stop at it again
            if delay is not None and larger is not None:
                ended_at = self._epoch + self._clock()
                capped.append(EarlierAttempt(
                    max_output_tokens=cap,
                    reason=f"{failure.cause}; retried at a {larger:,}-token cap",
                    usage=(attempt_usage or Usage()).model_dump(),
                    cost_usd=attempt_cost,
                    request_id=request_id,
                    started_at=ended_at if sent is None else min(self._epoch + sent, ended_at),
                    ended_at=ended_at,
                ))
                request = request.model_copy(update={"max_output_tokens": larger})
                estimate = self.estimate_tokens(request)
            if delay is None:
                log.warning(
                    "%s (%s): giving up after %d attempt(s): %s: %s",
                    self.name,
                    self.model,
                    state.attempts,
                    failure.kind.value,
                    failure.cause,
                )
                return self._error(failure.kind, failure.cause, state, request_id, billed, cost, tuple(capped))
            log.info(
                "%s (%s): attempt %d failed (%s), retrying in %.2fs: %s",
                self.name,
                self.model,
                state.attempts,
                failure.kind.value,
                delay,
                failure.cause,
            )
            await self._sleep(delay)

    def _next_delay(self, failure: Failure, state: RetryState, elapsed_s: float) -> float | None:
        """The retry policy's answer (an adapter whose failures are deterministic says never)."""
        return next_delay(self.cfg.retry, failure, state, elapsed_s, self._rng)

    def _observe(self, rate: RateInfo | None) -> None:
        if rate is None or self.budget is None or rate.empty:
            return
        self.budget.observe_headers(
            rate.remaining_requests,
            rate.remaining_tokens,
            rate.reset_requests_s,
            reset_tokens_s=rate.reset_tokens_s,
            limit_requests=rate.limit_requests,
            limit_tokens=rate.limit_tokens,
        )

    def _price(self, usage: Usage) -> float:
        """What the vendor bills for `usage`: the one pricing rule (`Price.bill`), cache writes included."""
        return self.cfg.price.bill(usage.billed()).usd



CALLS_PER_CLIENT = 100
"""Calls one SDK client is given at once at most (`SDKAdapter`): its pool's connections (HTTP/1.1)
or its channel's streams (gRPC; the least a server should advertise, RFC 9113 6.5.2)."""


def clients_for(bound: int, per_client: int = CALLS_PER_CLIENT) -> int:
    """SDK clients an adapter builds for an in-flight bound of `bound` calls (at least one)."""
    return max(1, math.ceil(bound / per_client))


class SDKAdapter(AdapterBase[C], Generic[C, R]):
    """An adapter over a vendor's SDK: an attempt is build, send, read, then what every vendor does.

    Why a template method: the vendors differ in how a request is built (`params`, which is also
    the body of a batched request), how it is sent (`_send`) and how the answer is read (`_read`:
    usage, text, ids, rate headers). What follows is the same for all and written once in
    `_attempt`: an unusable answer is a billed `BadOutput`, the text is validated against the
    schema with its billing attached, and the attempt is reported with its usage, id, cost and rate.

    **Several clients, none carrying more than `calls_per_client` calls**: the adapter builds
    `clients_for(max_in_flight)` SDK clients (`_new_client`) and sends each attempt on the least
    loaded, so together they carry the whole in-flight bound (`evalcore.vendors.in_flight`) and
    none is what caps it. Why not one client sized to the bound: over HTTP/1.1 every call on the
    wire holds one connection of its client's pool, and the pool (httpcore) re-scans all its
    connections whenever a request starts or ends — O(connections) per call: with one pool of
    1,050 connections, half the CPU of 1,100 calls went there (profiled). Over gRPC a client's
    calls are streams of one HTTP/2 connection, which the server caps (`xai.py`). The first client
    is the one `_ensure_client` returns (the batch APIs use it).
    """

    calls_per_client: ClassVar[int] = CALLS_PER_CLIENT
    _clients: list[C]
    _load: list[int]

    @abstractmethod
    def _new_client(self, api_key: str, capacity: int) -> C:
        """One SDK client (SDK retries off) able to carry `capacity` calls at once."""

    async def _close_one(self, client: C) -> None:
        """Release one client's connections (override when the SDK has a close method)."""

    def _make_client(self, api_key: str) -> C:
        bound = self.cfg.max_in_flight
        capacity = min(bound, self.calls_per_client)
        self._clients = [self._new_client(api_key, capacity) for _ in range(clients_for(bound, self.calls_per_client))]
        self._load = [0] * len(self._clients)
        return self._clients[0]

    async def _close_client(self, client: C) -> None:
        clients: list[C] = getattr(self, "_clients", [])
        for one in clients if clients and clients[0] is client else [client]:
            await self._close_one(one)

    async def _send_on_least_loaded(self, client: C, params: dict[str, Any], timeout_s: float) -> R:
        """`_send` on the least loaded of this loop's clients (`client`: the first of them)."""
        clients: list[C] = getattr(self, "_clients", [])
        if not clients or clients[0] is not client:  # a client of another loop, or built elsewhere
            return await self._send(client, params, timeout_s)
        load = self._load  # this loop's (a client built for a new loop gets new lists)
        i = min(range(len(load)), key=load.__getitem__)
        load[i] += 1
        try:
            return await self._send(clients[i], params, timeout_s)
        finally:
            load[i] -= 1

    @abstractmethod
    def params(self, request: JudgeRequest, schema: type[M]) -> dict[str, Any]:
        """The vendor's request for `request` (the same online and in a batch)."""

    @abstractmethod
    async def _send(self, client: C, params: dict[str, Any], timeout_s: float) -> R:
        """Send one request; raise the SDK's exception when it fails."""

    @abstractmethod
    async def _read(self, raw: R) -> Answer:
        """Read what `_send` got back; raise `NonModelBody` when it is not the vendor's response."""

    async def _attempt(self, client: C, request: JudgeRequest, schema: type[M], timeout_s: float) -> Attempt[M]:
        answer = await self._read(await self._send_on_least_loaded(client, self.params(request, schema), timeout_s))
        billing: dict[str, Any] = {
            "usage": answer.usage,
            "cost_usd": answer.cost_usd,
            "request_id": answer.request_id,
            "rate": answer.rate,
        }
        if answer.problem is not None:
            raise BadOutput(answer.problem, capped=answer.capped, **billing)
        output = validate_output(schema, answer.text, **billing)
        return Attempt(output, answer.usage, answer.request_id, answer.cost_usd, answer.rate)
