"""The vendor-neutral heart of every emulator: auth, limits, script/faults, answer, usage, record.

Why one engine: the three wire protocols differ only in how a request is parsed and how the
outcome is rendered. Deciding the outcome (and counting it) in one place makes the emulators agree
with each other, so an adapter bug cannot hide behind an emulator quirk.

Why one module: admission against the limits, the scripted or random behaviour, the latency a
request sleeps out and the counters all act on one request's state in one order, which the stats
must reflect exactly (each request counted once, by how it was answered, and open until then).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import math
import random
import secrets
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from doubles.emulators._config import (
    AuthError,
    Behaviour,
    BrokenBody,
    EmulatorConfig,
    FixedLatency,
    Hang,
    Malformed,
    RateLimited,
    Reply,
    ServerError,
    Truncated,
    UniformLatency,
)
from doubles.emulators._limits import Clock, RateLimiter, RateSnapshot
from doubles.emulators._models import ModelCatalog
from doubles.emulators.responders import (
    Answer,
    EmulatedRequest,
    OfflineResponder,
    Responder,
    without_boundaries,
)
from evalcore.cost.prompt_cache import CachePlan, PrefixCache


class Outcome(StrEnum):
    """How the emulator answered one request (recorded and counted)."""

    OK = "ok"
    RATE_LIMITED = "rate_limited"
    SERVER_ERROR = "server_error"
    MALFORMED = "malformed"
    TRUNCATED = "truncated"
    HANG = "hang"
    AUTH_ERROR = "auth_error"
    BROKEN_BODY = "broken_body"
    BAD_REQUEST = "bad_request"
    NOT_FOUND = "not_found"
    RESPONDER_ERROR = "responder_error"
    PENDING = "pending"


class UsageCounts(BaseModel):
    """Token usage as the emulator bills it (vendors render it in their own field names).

    `input_tokens` is the whole prompt; `cached_tokens` the part served from the prefix cache and
    `cache_write_tokens` the part newly written to it (both subsets of `input_tokens`);
    `output_tokens` includes `reasoning_tokens`.
    """

    input_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0


class RecordedRequest(BaseModel):
    """One request as received and how it was answered. Headers are kept (tests check auth was
    sent) but never shown in repr."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    vendor: str
    method: str
    path: str
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    body: dict[str, Any] = Field(default_factory=dict, repr=False)
    model: str = ""
    system: str = Field(default="", repr=False)
    user: str = Field(default="", repr=False)
    schema_name: str | None = None
    request_id: str = ""
    outcome: Outcome = Outcome.PENDING
    status: int | str = 0
    retry_after_s: float | None = None
    usage: UsageCounts = Field(default_factory=UsageCounts)
    received_at: float = Field(description="Wall clock (time.time()) at arrival.")
    received_monotonic: float
    finished_monotonic: float | None = None
    cancelled: bool = Field(default=False, description="The client hung up before the answer.")


class EmulatorStats(BaseModel):
    """Counters over the emulator's lifetime."""

    requests: int = 0
    ok: int = 0
    rate_limited: int = Field(default=0, description="All 429 / RESOURCE_EXHAUSTED answers.")
    limit_rejections: int = Field(default=0, description="429s caused by the configured server limits.")
    server_errors: int = 0
    malformed: int = 0
    truncated: int = 0
    hangs: int = 0
    cancelled: int = 0
    auth_errors: int = 0
    broken_bodies: int = 0
    bad_requests: int = 0
    not_found: int = Field(default=0, description="Requests for a model the emulator does not serve (404).")
    responder_errors: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    open_requests: int = Field(
        default=0, description="Online requests received and not yet answered (held, e.g. for their latency)."
    )
    peak_open_requests: int = Field(default=0, description="The most online requests ever open at once.")


_STAT_FOR: dict[Outcome, str] = {
    Outcome.OK: "ok",
    Outcome.RATE_LIMITED: "rate_limited",
    Outcome.SERVER_ERROR: "server_errors",
    Outcome.MALFORMED: "malformed",
    Outcome.TRUNCATED: "truncated",
    Outcome.AUTH_ERROR: "auth_errors",
    Outcome.BROKEN_BODY: "broken_bodies",
    Outcome.BAD_REQUEST: "bad_requests",
    Outcome.NOT_FOUND: "not_found",
    Outcome.RESPONDER_ERROR: "responder_errors",
}


@dataclass
class Decision:
    """What the vendor front end must render for one request."""

    outcome: Outcome
    record: RecordedRequest
    rate: RateSnapshot
    answer: Answer | None = None  # the structured answer (anthropic tool_use needs the dict)
    content: str = ""  # the answer as text
    finish: Literal["stop", "length"] = "stop"
    usage: UsageCounts | None = None
    retry_after_s: float = 0.0
    scope: str = "requests"
    status: int = 200
    message: str = ""
    should_retry: bool | None = None  # x-should-retry on an HTTP error (None: no header)

    @property
    def request_id(self) -> str:
        """The id sent back in `x-request-id` / `request-id` / the gRPC response."""
        return self.record.request_id


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Engine:
    """Decides the outcome of each request for one emulator (one per vendor server)."""

    def __init__(
        self,
        vendor: str,
        config: EmulatorConfig,
        responder: Responder | None,
        id_prefix: str,
        limits_clock: Clock = time.monotonic,
    ) -> None:
        self.vendor = vendor
        self.config = config
        self.responder: Responder = responder if responder is not None else OfflineResponder()
        self.id_prefix = id_prefix
        self.script: deque[Behaviour] = deque(config.script)
        self.requests: list[RecordedRequest] = []
        self.stats = EmulatorStats()
        self.limiter = RateLimiter(config.limits, limits_clock)
        self.models = ModelCatalog(vendor, config)
        self.cache = PrefixCache(
            block_tokens=config.cache_block_tokens,
            min_tokens=config.cache_min_tokens,
            chars_per_token=config.chars_per_token,
            ttl_s=config.cache_ttl_s,
            capacity=config.cache_capacity,
        )
        self._fault_rng = random.Random(f"{config.seed}:faults")
        self._latency_rng = random.Random(f"{config.seed}:latency")
        # Requests sleeping out their latency (or a hang), woken at once when the server closes;
        # None until the serving loop opens the engine. A set, not an `asyncio.Event`: an event's
        # waiter that times out is removed from its queue by a scan, O(requests open) per request.
        self._sleepers: set[asyncio.Future[None]] | None = None
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------------

    def open(self) -> None:
        """Called from the serving loop when the server starts."""
        self._sleepers = set()
        self._closed = False

    def close(self) -> None:
        """Wake every sleeping or hanging request so shutdown is prompt (from the serving loop)."""
        self._closed = True
        for fut in list(self._sleepers or ()):
            _wake(fut)

    def push(self, *behaviours: Behaviour) -> None:
        """Append behaviours to the script (consumed in order before fault injection)."""
        self.script.extend(behaviours)

    # -- helpers --------------------------------------------------------------------------------

    def _remember(self, rec: RecordedRequest) -> None:
        """Record a request; with `max_recorded`, drop the oldest in amortised batches."""
        self.requests.append(rec)
        cap = self.config.max_recorded
        if cap is not None and len(self.requests) >= 2 * cap:
            del self.requests[: len(self.requests) - cap]

    def tokens(self, text: str) -> int:
        """The emulator's token estimate: ceil(chars / chars_per_token)."""
        return math.ceil(len(text) / self.config.chars_per_token)

    def new_id(self) -> str:
        return self.id_prefix + secrets.token_hex(12)

    def _next_behaviour(self) -> Behaviour:
        if self.script:
            return self.script.popleft()
        f = self.config.faults
        u = self._fault_rng.random()
        for rate, make in (
            (f.rate_limit, lambda: RateLimited(retry_after=f.rate_limit_retry_after_s, should_retry=f.should_retry)),
            (
                f.server_error,
                lambda: ServerError(self._fault_rng.choice(f.server_error_statuses), should_retry=f.should_retry),
            ),
            (f.malformed, lambda: Malformed()),
            (f.truncated, lambda: Truncated()),
            (f.hang, lambda: Hang(f.hang_s)),
        ):
            if u < rate:
                b: Behaviour = make()
                return b
            u -= rate
        return Reply()

    def _sample_latency(self) -> float:
        lat = self.config.latency
        if isinstance(lat, FixedLatency):
            return lat.seconds
        if isinstance(lat, UniformLatency):
            return self._latency_rng.uniform(lat.lo, lat.hi)
        return min(self._latency_rng.lognormvariate(math.log(max(lat.median, 1e-9)), lat.sigma), lat.cap)

    async def _wait(self, seconds: float) -> None:
        """Sleep, but wake early when the emulator shuts down; cancellable by a hung-up client.

        O(1) whatever the number of requests sleeping (thousands at a top-tier rate and a 30 s
        latency): one future and one timer each, no task."""
        if seconds <= 0 or self._closed:
            return
        sleepers = self._sleepers
        if sleepers is None:
            await asyncio.sleep(seconds)
            return
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        timer = loop.call_later(seconds, _wake, fut)
        sleepers.add(fut)
        try:
            await fut
        finally:
            timer.cancel()
            sleepers.discard(fut)

    def _finish(self, decision: Decision) -> Decision:
        rec = decision.record
        rec.outcome = decision.outcome
        rec.finished_monotonic = time.monotonic()
        if decision.usage is not None:
            rec.usage = decision.usage
        if decision.outcome == Outcome.RATE_LIMITED:
            rec.retry_after_s = decision.retry_after_s
        name = _STAT_FOR.get(decision.outcome)
        if name:
            setattr(self.stats, name, getattr(self.stats, name) + 1)
        return decision

    def bad_request(self, *, method: str, path: str, headers: Mapping[str, str], message: str) -> Decision:
        """A request the front end could not parse (answered 400 / INVALID_ARGUMENT)."""
        rec = self._record(method, path, headers, {}, None)
        self.stats.requests += 1
        self._remember(rec)
        d = Decision(Outcome.BAD_REQUEST, rec, self.limiter.snapshot(), status=400, message=message)
        return self._finish(d)

    def _record(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: dict[str, Any],
        req: EmulatedRequest | None,
    ) -> RecordedRequest:
        return RecordedRequest(
            vendor=self.vendor,
            method=method,
            path=path,
            headers=dict(headers),
            body=body,
            model=req.model if req else "",
            system=req.system if req else "",
            user=req.user if req else "",
            schema_name=req.schema_name if req else None,
            request_id=self.new_id(),
            received_at=time.time(),
            received_monotonic=time.monotonic(),
        )

    # -- the pipeline ---------------------------------------------------------------------------

    async def handle(
        self,
        req: EmulatedRequest,
        *,
        method: str,
        path: str,
        body: dict[str, Any],
        presented_key: str | None,
        cache_breakpoints: Sequence[int] | None = None,
    ) -> Decision:
        """Auth, then server limits, then the next scripted/injected behaviour, then the answer.

        `cache_breakpoints` are offsets in `req.user` where an explicit cache breakpoint ends a
        cacheable prefix (Anthropic's `cache_control`; an empty list caches nothing); None means
        automatic prefix caching (OpenAI, xAI). See `PrefixCache`.
        """
        rec = self._record(method, path, req.headers, body, req)
        self._remember(rec)
        stats = self.stats
        stats.requests += 1
        stats.open_requests += 1
        if stats.open_requests > stats.peak_open_requests:
            stats.peak_open_requests = stats.open_requests
        try:
            return await self._decide(req, rec, presented_key, cache_breakpoints)
        except asyncio.CancelledError:
            rec.cancelled = True
            rec.finished_monotonic = time.monotonic()
            stats.cancelled += 1
            if rec.outcome == Outcome.PENDING:
                rec.outcome = Outcome.HANG
            raise
        finally:
            stats.open_requests -= 1

    async def _decide(
        self,
        req: EmulatedRequest,
        rec: RecordedRequest,
        presented_key: str | None,
        cache_breakpoints: Sequence[int] | None,
    ) -> Decision:
        expected = self.config.api_key
        if expected is not None and presented_key != expected.get_secret_value():
            msg = "missing API key" if not presented_key else "invalid API key"
            return self._finish(
                Decision(Outcome.AUTH_ERROR, rec, self.limiter.snapshot(), status=401, message=msg)
            )

        if not self.models.serves(req.model):  # before the limits: the vendor resolves the model first
            return self._finish(self.not_found(req, rec))

        input_tokens = self.tokens(req.system + req.user)  # never above RenderedPrompt.estimated_tokens
        admission = self.limiter.admit(input_tokens)
        if not admission.admitted:
            self.stats.limit_rejections += 1
            scope = admission.scope or "requests"
            return self._finish(
                Decision(
                    Outcome.RATE_LIMITED,
                    rec,
                    self.limiter.snapshot(),
                    retry_after_s=admission.retry_after_s,
                    scope=scope,
                    status=429,
                    message=f"Rate limit reached for {scope} per minute on {req.model}",
                )
            )

        behaviour = self._next_behaviour()
        if isinstance(behaviour, AuthError):
            return self._finish(
                Decision(
                    Outcome.AUTH_ERROR, rec, self.limiter.snapshot(), status=401, message="invalid API key"
                )
            )
        if isinstance(behaviour, RateLimited):
            return self._finish(
                Decision(
                    Outcome.RATE_LIMITED,
                    rec,
                    self.limiter.snapshot(),
                    retry_after_s=behaviour.retry_after,
                    scope=behaviour.scope,
                    status=429,
                    message=f"Rate limit reached for {behaviour.scope} per minute on {req.model}",
                    should_retry=behaviour.should_retry,
                )
            )
        if isinstance(behaviour, ServerError):
            if behaviour.status == 404:  # scripted: the vendor's unknown-model answer
                return self._finish(
                    replace(self.not_found(req, rec), should_retry=behaviour.should_retry, outcome=Outcome.SERVER_ERROR)
                )
            return self._finish(
                Decision(
                    Outcome.SERVER_ERROR,
                    rec,
                    self.limiter.snapshot(),
                    status=behaviour.status,
                    message="The server had an error while processing your request.",
                    should_retry=behaviour.should_retry,
                )
            )
        if isinstance(behaviour, BrokenBody):
            return self._finish(Decision(Outcome.BROKEN_BODY, rec, self.limiter.snapshot(), status=200))

        # Looked up on arrival, written when answering: a prefix is readable only once the
        # request that wrote it has started answering (simultaneous requests all miss).
        plan = self.cache.lookup(req.model, req.system, req.user, cache_breakpoints)
        return await self._reply(req, rec, behaviour, plan)

    def not_found(self, req: EmulatedRequest, rec: RecordedRequest) -> Decision:
        """The answer to a request for a model this emulator does not serve (404 / NOT_FOUND); each
        front end renders it in its vendor's words."""
        return Decision(Outcome.NOT_FOUND, rec, self.limiter.snapshot(), status=404,
                        message=f"model {req.model!r} is not served")

    def reasoning_tokens(self, req: EmulatedRequest) -> int:
        """The reasoning tokens `req` spends: drawn from its effort's distribution
        (`EmulatorConfig.reasoning_tokens`) by a generator seeded with the emulator's seed and the
        request's model, effort and prompt (the same request always reasons alike), within the
        distribution's cap and the request's own thinking budget.

        The prompt without its fence boundaries: each grading draws new ones, and a draw keyed on
        them made a run's truncations change from one run of the same requests to the next (an
        exact call count in a test failed by chance: about 2 in 10,000 medium-effort calls draw past
        a 4,352-token cap)."""
        dist = self.config.reasoning_tokens.get(req.reasoning_effort or "")
        if dist is None or dist.median == 0:
            return 0
        drawn = dist.median
        if dist.sigma > 0:
            prompt = without_boundaries(req.system + "\0" + req.user)
            key = "\0".join((str(self.config.seed), req.model, req.reasoning_effort or "", prompt))
            seed = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big")
            drawn = round(random.Random(seed).lognormvariate(math.log(dist.median), dist.sigma))
        drawn = min(drawn, dist.cap)
        return drawn if req.reasoning_budget is None else min(drawn, req.reasoning_budget)

    async def answer_batched(
        self,
        req: EmulatedRequest,
        *,
        path: str,
        body: dict[str, Any],
        cache_breakpoints: Sequence[int] | None = None,
    ) -> Decision:
        """One request of a batch: the responder's answer with realistic usage, like an online call.

        Why separate from `handle`: batch requests neither count toward the server's rate limits
        nor take scripted online behaviours (a batch has its own script of per-request outcomes);
        the answer, truncation, prompt caching and usage are the same code as online, so both
        modes agree.
        """
        rec = self._record("POST", path, req.headers, body, req)
        self._remember(rec)
        self.stats.requests += 1
        if not self.models.serves(req.model):
            return self._finish(self.not_found(req, rec))
        plan = self.cache.lookup(req.model, req.system, req.user, cache_breakpoints)
        return await self._reply(req, rec, Reply(latency=0.0), plan, batched=True)

    async def _reply(
        self,
        req: EmulatedRequest,
        rec: RecordedRequest,
        behaviour: Behaviour,
        plan: CachePlan,
        *,
        batched: bool = False,
    ) -> Decision:
        """The answer (responder, malformed/truncated behaviours, max tokens) and its usage."""
        input_tokens = self.tokens(req.system + req.user)
        outcome = Outcome.OK
        latency = self._sample_latency()
        if isinstance(behaviour, Hang):
            rec.outcome = Outcome.HANG
            outcome = Outcome.HANG
            self.stats.hangs += 1
            await self._wait(behaviour.seconds)
            latency = 0.0
        elif isinstance(behaviour, Reply) and behaviour.latency is not None:
            latency = behaviour.latency

        finish: Literal["stop", "length"] = "stop"
        answer: Answer
        if isinstance(behaviour, Malformed):
            answer, outcome = behaviour.content, Outcome.MALFORMED
        elif isinstance(behaviour, Reply) and behaviour.content is not None:
            answer, finish = behaviour.content, behaviour.finish
        else:
            try:
                produced = self.responder(req)
                answer = await produced if inspect.isawaitable(produced) else produced
            except Exception as exc:  # a responder bug must surface as a visible 500, not kill the server
                return self._finish(
                    Decision(
                        Outcome.RESPONDER_ERROR,
                        rec,
                        self.limiter.snapshot(),
                        status=500,
                        message=f"emulator responder failed: {type(exc).__name__}: {exc}",
                    )
                )
            if isinstance(behaviour, Reply):
                finish = behaviour.finish
        content = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)

        # Reasoning comes first and, where the vendor counts it inside the output cap, leaves only
        # the rest of the cap for the answer: a call that reasons past its cap ends with no answer.
        reasoning = self.reasoning_tokens(req)
        cap = req.max_output_tokens
        answer_cap = None if cap is None else cap - (reasoning if req.reasoning_in_cap else 0)
        if isinstance(behaviour, Truncated):
            content = content[: max(len(content) // 2, 0)] if len(content) > 1 else ""
            finish, outcome = "length", Outcome.TRUNCATED
        elif cap is not None and answer_cap is not None and answer_cap <= 0:
            reasoning, content = cap, ""
            finish, outcome = "length", Outcome.TRUNCATED
        elif answer_cap is not None and self.tokens(content) > answer_cap:
            # Realistic: an answer longer than what the cap leaves it is cut at that limit.
            content = content[: int(answer_cap * self.config.chars_per_token)]
            finish, outcome = "length", Outcome.TRUNCATED
        elif finish == "length" and outcome == Outcome.OK:
            outcome = Outcome.TRUNCATED

        await self._wait(latency)

        cached, written = plan.hit_tokens, self.cache.store(plan)
        usage = UsageCounts(
            input_tokens=input_tokens,
            cached_tokens=min(cached, input_tokens),
            cache_write_tokens=min(written, input_tokens - min(cached, input_tokens)),
            output_tokens=self.tokens(content) + reasoning,
            reasoning_tokens=reasoning,
        )
        if not batched:  # batch requests do not count toward the rate limits
            self.limiter.charge_output(usage.output_tokens)
        self.stats.input_tokens += usage.input_tokens
        self.stats.cached_tokens += usage.cached_tokens
        self.stats.output_tokens += usage.output_tokens
        return self._finish(
            Decision(
                outcome,
                rec,
                self.limiter.snapshot(),
                answer=answer,
                content=content,
                finish=finish,
                usage=usage,
            )
        )
