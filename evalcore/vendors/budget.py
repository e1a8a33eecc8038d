"""A per-vendor rate budget (requests and tokens per minute) shared by every caller in a process.

Why one module: both limit models, the header adaptation and the 429 pause act on one bucket state, which must be read and changed under one lock.

Two models of a vendor's limit, chosen per vendor entry (`RateLimits.algorithm`):

* **Token bucket** (the default; how OpenAI and Anthropic describe their limits): a bucket of
  capacity `burst_s` seconds' worth of the rate, starting full, refilled continuously at limit/60
  per second. Anthropic's bucket holds the whole minute; OpenAI enforces a per-minute limit in
  per-second slices, so its bucket holds one second (`VENDOR_BURST_S`). The budget keeps the same
  buckets, but charges a call to them at the latest moment it can have reached the vendor — its
  completion, or `arrival_s` after it was let through, or `sent_arrival_s` after its adapter saw
  its last byte written, whichever is earliest — and counts the calls not charged yet as charged
  already: a call may go when `level - pending >= 1` (tokens alike).
  Whenever the vendor actually received each call within that span, its bucket is never emptier
  than ours, so no call is refused (exact, not a hopeful margin), and the steady state runs at
  the full rate whatever the latency (slow reasoning models included). The initial allowance (a
  full bucket) is used.
  Headers are the truth when present: a reported `remaining` below what the model expects (some
  other client on the same key, a previous run) lowers the model to it; a 429 empties it and
  pauses everyone until its retry-after.
* **Sliding window** (`algorithm: sliding_window`), for a vendor that counts a strict window: a
  request *occupies* the budget from its grant until one window after its completion; any server
  window then only contains requests that were all occupying the budget at the moment the last of
  them was granted, so the server never counts more than the cap, whatever the latency. A small
  pacing bucket (one second's worth of the rate) spreads bursts out. A 429 pauses everyone and
  halves the rate for a window; headers saying a limit is exhausted pause until its reset.

Entries sharing one account (same adapter, endpoint and key; the OpenAI judge and the auditor)
get a fraction of the account's limits each (`VendorConfig.account_fraction`, computed by the
configuration from `budget_share`): the sum of token-bucket-constrained flows is constrained by
the sum of the buckets, so together they stay within the account's limit.

Waiting is on an event with a timeout (no busy wait), one call at a time through a queue of turns
(`_Turns`) so a large request is not starved by small ones. Turns go by the call's purpose
(`PURPOSE_ORDER`: a preflight, then a submission's audit calls, then the rubric calls that warm a
prompt cache, then the other rubric calls), first come first served within one purpose: an audit call never waits behind rubric calls queued after the
rubric answers it follows, so a sweep does not end with its binding account idle while the last
submissions' audits wait their turn. The pure bookkeeping (`_BucketLedger`, `_Ledger`) takes `now`
explicitly, so tests drive it with a fake clock.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from evalcore.config.models import RateLimits, VendorConfig

INF = math.inf
_MARGIN_S = 1e-6  # keeps "one window after" strictly after, whatever float rounding does
_EPS = 1e-9  # a bucket level this close to what is needed is enough (float rounding of refills)
_MIN_WAIT_S = 1e-6  # a positive wait always moves the clock (a float step of zero would spin)
_HEADER_LAG_S = 0.05  # how old a `remaining` header may be when we read it

#: Seconds of refill a vendor's bucket holds, as each vendor enforces its limits (used when a
#: vendor entry does not set `limits.burst_s`): OpenAI slices a per-minute limit per second;
#: Anthropic documents a bucket holding the whole minute; xAI is taken to do the same.
VENDOR_BURST_S: dict[str, float] = {"openai": 1.0, "anthropic": 60.0, "xai": 60.0}

#: Seconds within which a call let through has reached the vendor (connecting and uploading the
#: prompt; the model's thinking comes after): the token-bucket model's assumption about the network.
ARRIVAL_S = 0.5

#: Seconds within which a request whose last byte the HTTP client has written reaches the vendor
#: (the network's one-way time and the socket buffer's drain): when the adapter reports the write
#: (`Reservation.sent`), the call is charged then, if that is earlier than `ARRIVAL_S` after its
#: grant. The default of a vendor entry's own (`RateLimits.sent_arrival_s`).
SENT_ARRIVAL_S: float = RateLimits.model_fields["sent_arrival_s"].default

Algorithm = Literal["token_bucket", "sliding_window"]

#: The order in which calls waiting on one budget get their turn (lowest first; `JudgeRequest.purpose`).
#: A preflight gates the whole sweep. Then the audit: a verify call finishes its submission, a
#: detect call opens its verify calls, and both only exist once a submission's rubric answers are
#: in, so sending them first keeps each submission's chain short and leaves the rubric calls (none
#: of which waits on another call) to fill the account to the end of the run.
PURPOSE_ORDER: dict[str, int] = {"preflight": 0, "verify": 1, "detect": 2, "warming": 3, "rubric": 4}
"""Turn order of the calls waiting on one budget (lowest first). `warming` is a rubric call that
writes a prefix other calls wait to read from the vendor's cache (`JudgeRequest.warms`): each
answer it gets early lets a submission's other criteria join the queue early."""


class _Turns:
    """Like `asyncio.Lock`, but a released turn goes to the waiter with the lowest (order, arrival).

    One instance per event loop (its futures belong to it). A cancelled waiter leaves the queue;
    a waiter cancelled just after it was given the turn passes it on."""

    def __init__(self) -> None:
        self._held = False
        self._queue: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    def locked(self) -> bool:
        return self._held

    async def acquire(self, order: int) -> None:
        if not self._held:
            self._held = True
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._queue, (order, next(self._arrivals), fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # the turn was handed over: pass it on
                self.release()
            raise

    def release(self) -> None:
        while self._queue:
            fut = heapq.heappop(self._queue)[2]
            if not fut.done():  # skip the cancelled
                fut.set_result(None)
                return
        self._held = False


class _LedgerLike(Protocol):
    inflight: dict[int, int]

    def advance(self, now: float) -> None: ...
    def wait_s(self, now: float, tokens: int) -> float: ...
    def grant(self, tokens: int) -> int: ...
    def settle(self, rid: int, now: float, tokens: int | None) -> None: ...
    def sent(self, rid: int, now: float) -> None: ...
    def rate_limited(self, now: float, retry_after_s: float | None) -> None: ...


class _BucketLedger:
    """The vendor's token buckets; a call is charged when it can first have reached the vendor.

    A granted call reaches the vendor at the latest when it completes, and — the assumptions —
    no later than `arrival_s` after its grant (the time to connect and upload; the model's
    thinking time comes after), nor `sent_arrival_s` after its request was written out (`sent`,
    when the adapter's transport reports it: the network's one-way time and the socket buffer's
    drain). It is charged to the buckets at the earliest of these; until
    then it is *pending* and counted as if charged already: a call may go when
    `level - pending >= 1` (tokens alike, with the estimate; usage above it is charged when the
    call settles). Why this is exact: the vendor's bucket at time t holds the minimum over s of
    `C + r (t - s) - arrivals in (s, t]`; every call that can arrive in (s, t] was granted before
    t and is charged after s, so it is either pending now or charged after s — both counted here,
    in the same minimum.
    """

    def __init__(
        self,
        requests_cap: float,
        tokens_cap: float,
        window_s: float,
        burst_s: float,
        now: float,
        arrival_s: float = INF,
        sent_arrival_s: float = INF,
    ) -> None:
        self.req_rate = requests_cap / window_s
        self.tok_rate = tokens_cap / window_s
        self.req_capacity = max(1.0, self.req_rate * burst_s)
        self.tok_capacity = max(1.0, self.tok_rate * burst_s)
        self.window_s = window_s
        self.arrival_s = arrival_s
        self.sent_arrival_s = sent_arrival_s
        self.req_level = self.req_capacity  # a vendor's bucket starts full: use the initial allowance
        self.tok_level = self.tok_capacity
        self.inflight: dict[int, int] = {}  # every call not settled yet: rid -> estimated tokens
        self.pending: dict[int, float] = {}  # not charged yet: rid -> its arrival bound (INF: none)
        self.pending_tokens = 0
        self._bounds: list[tuple[float, int]] = []  # heap of (bound, rid); stale when `pending` moved on
        self.paused_until = -INF
        self._at = now
        self._next_id = 0

    def _refill(self, now: float) -> None:
        dt = max(now - self._at, 0.0)
        self._at = max(now, self._at)
        self.req_level = min(self.req_capacity, self.req_level + dt * self.req_rate)
        self.tok_level = min(self.tok_capacity, self.tok_level + dt * self.tok_rate)

    def _charge(self, rid: int) -> None:
        del self.pending[rid]
        estimate = self.inflight[rid]
        self.pending_tokens -= estimate
        self.req_level -= 1.0
        self.tok_level -= estimate

    def advance(self, now: float) -> None:
        """Refill up to `now`, then charge the calls whose arrival bound has passed.

        They are charged *now*, not at their bound: the bound holds only while the process is
        running, and a call granted just before its event loop stalled (busy sending a burst, a
        loaded machine) is sent after the stall — while the vendor's bucket, full, lost the
        refill of the stall. Charging when the budget next runs (after that refill was capped)
        is never earlier than the bound, so never less safe, and in a running process `now` is
        within a wake-up of the bound.
        """
        self._refill(now)
        while self._bounds and self._bounds[0][0] <= now:
            bound, rid = heapq.heappop(self._bounds)
            if self.pending.get(rid) == bound:
                self._charge(rid)

    def wait_s(self, now: float, tokens: int) -> float:
        """Seconds until a request of `tokens` may go (0 = now; INF = after some call settles)."""
        self.advance(now)
        if now < self.paused_until:
            return self.paused_until - now
        waits = [0.0]
        need = len(self.pending) + 1.0
        if need > self.req_capacity + _EPS:
            waits.append(self._until_charged(now))
        elif self.req_level < need - _EPS:
            waits.append(max((need - self.req_level) / self.req_rate, _MIN_WAIT_S))
        # a request larger than the whole bucket goes alone, once the bucket is full (the server's rule)
        need_tokens = self.pending_tokens + min(float(tokens), self.tok_capacity)
        if need_tokens > self.tok_capacity + _EPS:
            waits.append(self._until_charged(now))
        elif self.tok_level < need_tokens - _EPS:
            waits.append(max((need_tokens - self.tok_level) / self.tok_rate, _MIN_WAIT_S))
        return max(waits)

    def _until_charged(self, now: float) -> float:
        """More is pending than the bucket holds: wait for the first to be charged (or settle)."""
        while self._bounds and self.pending.get(self._bounds[0][1]) != self._bounds[0][0]:
            heapq.heappop(self._bounds)  # settled, or its bound moved earlier
        if not self._bounds:
            return INF
        return max(self._bounds[0][0] - now, _MIN_WAIT_S)

    def grant(self, tokens: int) -> int:
        """Take the slot (call only right after `wait_s` returned 0 for the same `now`)."""
        self._next_id += 1
        self.inflight[self._next_id] = tokens
        self._bound(self._next_id, self._at + self.arrival_s)
        self.pending_tokens += tokens
        return self._next_id

    def _bound(self, rid: int, bound: float) -> None:
        self.pending[rid] = bound
        if bound != INF:
            heapq.heappush(self._bounds, (bound, rid))

    def sent(self, rid: int, now: float) -> None:
        """The call's request has been handed to the network (its last byte written): it reaches the
        vendor within `sent_arrival_s` of now, which may be earlier than its bound from the grant."""
        bound = self.pending.get(rid)
        if bound is not None and now + self.sent_arrival_s < bound:
            self._bound(rid, now + self.sent_arrival_s)

    def settle(self, rid: int, now: float, tokens: int | None) -> None:
        """The call ended: charge it now if it was still pending, and reconcile its tokens."""
        if rid not in self.inflight:
            return
        self.advance(now)
        if rid in self.pending:
            self._charge(rid)
        estimate = self.inflight.pop(rid)
        # More than estimated is charged too; less is not given back: the vendor may have had a
        # full bucket meanwhile (refill it could not hold), and OpenAI counts the estimate itself.
        if tokens is not None and tokens > estimate:
            self.tok_level -= tokens - estimate

    def rate_limited(self, now: float, retry_after_s: float | None) -> None:
        """A 429: the server's bucket is empty (our model was wrong); wait out its retry-after."""
        self.advance(now)
        pause = retry_after_s if retry_after_s is not None else self.window_s / 60.0
        self.paused_until = max(self.paused_until, now + pause)
        self.req_level = min(self.req_level, float(len(self.pending)))

    def observe(self, now: float, remaining_requests: int | None, remaining_tokens: int | None) -> None:
        """The server's count is the truth: never believe in more than it says is left.

        Within a tolerance: `remaining` is rounded down and read when the answer left the server
        (refill has gone on since), so a model that is right sits up to one unit plus a moment's
        refill above it; clamping that away on every answer would leak capacity. Below the
        tolerance, someone else is using the account (or it was not full when we started).
        """
        self.advance(now)
        if remaining_requests is not None:
            slack = 1.0 + self.req_rate * _HEADER_LAG_S
            self.req_level = min(self.req_level, remaining_requests + float(len(self.pending)) + slack)
        if remaining_tokens is not None:
            slack = 1.0 + self.tok_rate * _HEADER_LAG_S
            self.tok_level = min(self.tok_level, remaining_tokens + float(self.pending_tokens) + slack)


class _Ledger:
    """The sliding-window budget's state and arithmetic, with time passed in (no asyncio, no clock)."""

    def __init__(
        self,
        requests_cap: float,
        tokens_cap: float,
        window_s: float,
        burst_s: float,
        now: float,
    ) -> None:
        self.requests_cap = requests_cap
        self.tokens_cap = tokens_cap
        self.window_s = window_s
        self.burst_s = burst_s
        self.inflight: dict[int, int] = {}
        self.inflight_tokens = 0
        self.done: deque[tuple[float, int]] = deque()  # (expiry, tokens), expiry non-decreasing
        self.done_tokens = 0
        self._next_id = 0
        self.factor = 1.0
        self.slow_until = -INF
        self.paused_until = -INF
        self._paced_at = now
        self.req_level = self._req_capacity()
        self.tok_level = self._tok_capacity()

    # -- derived limits ------------------------------------------------------------------
    def _req_cap(self) -> int:
        return max(1, math.floor(self.requests_cap * self.factor))

    def _tok_cap(self) -> float:
        return max(1.0, self.tokens_cap * self.factor)

    def _req_rate(self) -> float:
        return self.requests_cap * self.factor / self.window_s

    def _tok_rate(self) -> float:
        return self.tokens_cap * self.factor / self.window_s

    def _req_capacity(self) -> float:
        return max(1.0, self._req_rate() * self.burst_s)

    def _tok_capacity(self) -> float:
        return max(1.0, self._tok_rate() * self.burst_s)

    # -- time passing --------------------------------------------------------------------
    def advance(self, now: float) -> None:
        """Expire finished requests older than a window, refill the pacing bucket, recover."""
        while self.done and self.done[0][0] <= now:
            _, tokens = self.done.popleft()
            self.done_tokens -= tokens
        if self.factor < 1.0 and now >= self.slow_until:
            self.factor = 1.0
        dt = max(now - self._paced_at, 0.0)
        self._paced_at = max(now, self._paced_at)
        self.req_level = min(self._req_capacity(), self.req_level + dt * self._req_rate())
        self.tok_level = min(self._tok_capacity(), self.tok_level + dt * self._tok_rate())

    def wait_s(self, now: float, tokens: int) -> float:
        """Seconds until a request of `tokens` may go (0 = now; INF = after some call settles)."""
        self.advance(now)
        if now < self.paused_until:
            return self.paused_until - now
        waits = [0.0]
        used = len(self.inflight) + len(self.done)
        over = used + 1 - self._req_cap()
        if over > 0:
            waits.append(self.done[over - 1][0] - now if over <= len(self.done) else INF)
        used_tokens = self.inflight_tokens + self.done_tokens
        if used_tokens > 0 and used_tokens + tokens > self._tok_cap():
            # free enough tokens; a request larger than the whole cap waits for an empty window
            need = min(used_tokens + tokens - self._tok_cap(), used_tokens)
            freed, until = 0, INF
            for expiry, t in self.done:
                freed += t
                if freed >= need:
                    until = expiry
                    break
            waits.append(until - now)
        if self.req_level < 1.0:
            waits.append((1.0 - self.req_level) / self._req_rate())
        tok_need = min(float(tokens), self._tok_capacity())
        if self.tok_level < tok_need:
            waits.append((tok_need - self.tok_level) / self._tok_rate())
        return max(waits)

    def grant(self, tokens: int) -> int:
        """Take the slot (call only right after `wait_s` returned 0 for the same `now`)."""
        self._next_id += 1
        self.inflight[self._next_id] = tokens
        self.inflight_tokens += tokens
        self.req_level -= 1.0
        self.tok_level -= tokens
        return self._next_id

    def sent(self, rid: int, now: float) -> None:
        """Nothing to do: a request occupies this budget from its grant, whenever it reached the vendor."""

    def settle(self, rid: int, now: float, tokens: int | None) -> None:
        """The call ended: it keeps occupying the window for one window from now."""
        estimate = self.inflight.pop(rid, None)
        if estimate is None:
            return
        self.inflight_tokens -= estimate
        actual = estimate if tokens is None else max(tokens, 0)
        self.tok_level = min(self._tok_capacity(), self.tok_level + estimate - actual)
        expiry = now + self.window_s + _MARGIN_S
        if self.done and self.done[-1][0] > expiry:  # a clock that went backwards: keep order
            expiry = self.done[-1][0]
        self.done.append((expiry, actual))
        self.done_tokens += actual

    def rate_limited(self, now: float, retry_after_s: float | None) -> None:
        """A 429: pause everyone, and (once per pause) halve the rate for one window."""
        pause = retry_after_s if retry_after_s is not None else self.window_s / 60.0
        if now >= self.paused_until:
            self.factor = max(self.factor * 0.5, 0.05)
            self.req_level = min(self.req_level, 0.0)
        self.slow_until = max(self.slow_until, now + pause + self.window_s)
        self.paused_until = max(self.paused_until, now + pause)

    def exhausted(self, now: float, reset_s: float | None) -> None:
        """The server said a limit has nothing left: pause until it resets (at most a window)."""
        pause = min(reset_s if reset_s is not None else self.window_s / 60.0, self.window_s)
        self.paused_until = max(self.paused_until, now + pause)


@dataclass
class BudgetStats:
    """Counters for progress displays and benchmarks."""

    granted: int = 0
    rate_limited: int = 0
    exhausted: int = 0
    waited: int = 0


class Reservation:
    """One granted slot; `settle` it exactly once when the call ends (extra calls are ignored).

    `waited`: the budget held the call back (it queued behind another or waited for the
    buckets) rather than granting it at once; the adapter counts it (`evalcore.vendors.in_flight`)."""

    __slots__ = ("_budget", "_rid", "estimated_tokens", "settled", "waited")

    def __init__(self, budget: RateBudget, rid: int, estimated_tokens: int, waited: bool = False) -> None:
        self._budget = budget
        self._rid = rid
        self.estimated_tokens = estimated_tokens
        self.settled = False
        self.waited = waited

    def settle(self, actual_tokens: int | None = None) -> None:
        """Reconcile the estimate with what the vendor counted (None = keep the estimate)."""
        if self.settled:
            return
        self.settled = True
        self._budget._settle(self._rid, actual_tokens)

    def sent(self) -> None:
        """The request's last byte was handed to the network now (the adapter's transport says so):
        the budget may count it as arrived sooner than its grant's bound."""
        if not self.settled:
            self._budget._sent(self._rid)


class RateBudget:
    """Requests and tokens per window (a minute) for one vendor, shared by all its callers.

    `algorithm` picks the model of the vendor's limit (module doc); `burst_s` is the bucket's
    capacity in seconds of refill (token bucket; default the whole window) or the pacing
    bucket's (sliding window; default a sixtieth of the window); `arrival_s` bounds the time a
    call takes to reach the vendor after it is let through, and `sent_arrival_s` after its
    adapter reported it sent (`Reservation.sent`; token bucket; real seconds). `safety` < 1 keeps the budget
    under the published limits for a key shared with clients we cannot see. Use one instance per
    vendor account per process, shared by the entries on it (`sharding.create_account_vendors`;
    the Ray layer: one per vendor actor). `clock` (and `sleep`, which
    must advance that clock) are injectable for tests; by default waits are on an event with a
    timeout, so a settling call wakes the head of the queue early.
    """

    shards: int = 1
    """This budget is one of `shards` equal shares of the account (`sharding.ShardBudget`): the
    account-wide `remaining` and `limit` headers are read at 1/N of what they say."""

    def __init__(
        self,
        requests_per_minute: float,
        tokens_per_minute: float,
        *,
        safety: float = 1.0,
        window_s: float = 60.0,
        burst_s: float | None = None,
        algorithm: Algorithm = "token_bucket",
        arrival_s: float = ARRIVAL_S,
        sent_arrival_s: float = SENT_ARRIVAL_S,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        if requests_per_minute <= 0 or tokens_per_minute <= 0 or window_s <= 0:
            raise ValueError("rate limits and the window must be positive")
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self.safety = safety
        self.window_s = window_s
        self.algorithm = algorithm
        self._clock = clock
        self._sleep = sleep
        rpm, tpm = requests_per_minute * safety, tokens_per_minute * safety
        self._ledger: _LedgerLike
        if algorithm == "token_bucket":
            burst = window_s if burst_s is None else burst_s
            self._ledger = _BucketLedger(rpm, tpm, window_s, burst, clock(), arrival_s=arrival_s,
                                         sent_arrival_s=sent_arrival_s)
        else:
            # the pacing bucket holds one second's worth of a minute (scaled with a shorter window)
            pace = window_s / 60.0 if burst_s is None else burst_s
            self._ledger = _Ledger(rpm, tpm, window_s, pace, clock())
        self.stats = BudgetStats()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._turns = _Turns()
        self._changed = asyncio.Event()
        self._last_waited = -INF  # when a call last went out after waiting (`waited_within`)

    @classmethod
    def from_limits(
        cls, limits: RateLimits, *, adapter: str | None = None, fraction: float = 1.0, **kwargs: Any
    ) -> RateBudget:
        """The budget for a vendor's configured limits (`fraction` of them: a shared account).

        The bucket's capacity is `limits.burst_s`, else the vendor's (`VENDOR_BURST_S`), in
        seconds of a minute, scaled to `window_s` when a test or benchmark shortens the minute.
        """
        window_s = float(kwargs.get("window_s", 60.0))
        if "burst_s" not in kwargs and limits.algorithm == "token_bucket":
            burst = limits.burst_s or VENDOR_BURST_S.get(adapter or "", 60.0)
            kwargs["burst_s"] = burst / 60.0 * window_s
        kwargs.setdefault("sent_arrival_s", limits.sent_arrival_s)
        return cls(
            limits.requests_per_minute * fraction,
            limits.tokens_per_minute * fraction,
            algorithm=limits.algorithm,
            **kwargs,
        )

    @classmethod
    def for_vendor(cls, cfg: VendorConfig, **kwargs: Any) -> RateBudget:
        """The budget of one vendor entry: its share of its account's limits, its vendor's bucket."""
        return cls.from_limits(cfg.limits, adapter=cfg.adapter, fraction=cfg.account_fraction, **kwargs)

    def __repr__(self) -> str:
        return (
            f"RateBudget(rpm={self.requests_per_minute}, tpm={self.tokens_per_minute}, "
            f"safety={self.safety}, window_s={self.window_s}, algorithm={self.algorithm})"
        )

    @property
    def waiting(self) -> bool:
        """A call is waiting for its turn or its slot now: the budget, not the caller, sets the pace."""
        return self._turns.locked()

    def waited_within(self, seconds: float) -> bool:
        """A call is waiting now, or one was let through after waiting in the last `seconds`."""
        return self.waiting or self._clock() - self._last_waited <= seconds

    def _primitives(self) -> tuple[_Turns, asyncio.Event]:
        # asyncio primitives belong to one loop; a budget reused under a new asyncio.run() gets
        # fresh ones (its bookkeeping carries over, which is what a vendor's server sees too).
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop = loop
            self._turns = _Turns()
            self._changed = asyncio.Event()
        return self._turns, self._changed

    async def acquire(self, estimated_tokens: int, purpose: str = "rubric") -> Reservation:
        """Wait (no busy wait) until a request of this size fits, and take its slot; calls waiting
        get their turns by `purpose` (`PURPOSE_ORDER`), in arrival order within one purpose."""
        tokens = max(int(estimated_tokens), 0)
        turns, changed = self._primitives()
        queued = turns.locked()  # another call is being served first: this one waits its turn
        await turns.acquire(PURPOSE_ORDER.get(purpose, PURPOSE_ORDER["rubric"]))
        try:
            first = True
            while True:
                wait = self._ledger.wait_s(self._clock(), tokens)
                if wait <= 0:
                    rid = self._ledger.grant(tokens)
                    self.stats.granted += 1
                    if queued or not first:
                        self._last_waited = self._clock()
                    return Reservation(self, rid, tokens, waited=queued or not first)
                if first:
                    self.stats.waited += 1
                    first = False
                changed.clear()
                if wait != INF and self._sleep is not None:  # an injected (test) clock and sleep
                    await self._sleep(wait)
                    continue
                try:  # `asyncio.timeout`: no task per wait, and a cancellation is never lost (gh-86296)
                    async with asyncio.timeout(None if wait == INF else wait):
                        await changed.wait()
                except TimeoutError:
                    pass
        finally:
            turns.release()

    def _settle(self, rid: int, actual_tokens: int | None) -> None:
        self._ledger.settle(rid, self._clock(), actual_tokens)
        self._changed.set()

    def _sent(self, rid: int) -> None:
        self._ledger.sent(rid, self._clock())
        self._changed.set()  # a call waiting for this one's charge may go sooner

    def on_rate_limited(self, retry_after_s: float | None = None) -> None:
        """A 429 / RESOURCE_EXHAUSTED came back: pause everyone, slow down for a while."""
        self.stats.rate_limited += 1
        self._ledger.rate_limited(self._clock(), retry_after_s)

    def observe_headers(
        self,
        remaining_requests: int | None = None,
        remaining_tokens: int | None = None,
        reset_s: float | None = None,
        *,
        reset_tokens_s: float | None = None,
        limit_requests: int | None = None,
        limit_tokens: int | None = None,
    ) -> None:
        """Respect the server's own count.

        Token bucket: `remaining` is the server's bucket after this answer; the model never
        believes in more than that (plus what is still in flight, which the server may not have
        counted yet). Sliding window: an exhausted limit pauses everyone for the time one unit
        takes to come back ("reset" is the time until the limit is *fully* replenished; pausing
        for the full reset would stall a budget that runs close to its limit). Either way, a 429
        and its retry-after remain the ground truth if a hint was wrong. One of N shares of the
        account reads the account's counts at 1/N (`shards`): N budgets each believing in all of
        it would together believe in N times what is left.
        """
        if self.shards > 1:
            remaining_requests, remaining_tokens, limit_requests, limit_tokens = (
                scale_header(v, self.shards) for v in (remaining_requests, remaining_tokens, limit_requests, limit_tokens)
            )
        now = self._clock()
        if any(r is not None and r <= 0 for r in (remaining_requests, remaining_tokens)):
            self.stats.exhausted += 1
        ledger = self._ledger
        if isinstance(ledger, _BucketLedger):
            ledger.observe(now, remaining_requests, remaining_tokens)
            return
        if not isinstance(ledger, _Ledger):
            return
        for remaining, limit, reset in (
            (remaining_requests, limit_requests, reset_s),
            (remaining_tokens, limit_tokens, reset_tokens_s if reset_tokens_s is not None else reset_s),
        ):
            if remaining is None or remaining > 0:
                continue
            if reset is not None and limit is not None and limit > 0:
                reset = reset / max(limit - remaining, 1)
            ledger.exhausted(now, reset)

    @property
    def in_flight(self) -> int:
        """Requests granted and not yet settled."""
        return len(self._ledger.inflight)


def scale_header(value: int | None, n: int) -> int | None:
    """An account-wide count as one of `n` equal shares sees it (rounded down; None stays None)."""
    if value is None or n <= 1:
        return value
    return value // n
