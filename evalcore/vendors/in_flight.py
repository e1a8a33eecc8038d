"""How many attempts one vendor client may have on the wire: Little's law, bounded by the configuration.

Why: the rate budget (`evalcore.vendors.budget`) sets how fast calls go out; how many are out at
once then follows from how long each takes. By Little's law a client sending `rpm / 60` calls per
second that each take `latency` seconds has `rpm / 60 × latency` of them in flight on average —
10,000 requests a minute at 30 s is 5,000. A fixed `max_in_flight` sized by hand is either below
that (the budget's rate is then never reached: the cap binds) or far above it at a low latency
(nothing then holds back a burst of thousands of connections when a full bucket lets them go).

**The rule** (`in_flight_cap`): `cap = ceil(rpm / 60 × latency × headroom)`, at least `floor`
and **never above `configured`** (the entry's `max_in_flight`, which is also what each client's
connection pool is sized to, so the pool can never be what caps). `latency` is a smoothed estimate
of the attempts' time on the wire (`InFlightLimiter`: an exponentially weighted mean of every
finished attempt, started from a prior before any has finished); `headroom` (2) covers the
estimate's lag behind a latency that rises and the spread of the latencies around their mean.
The cap follows the estimate both ways: it grows when the attempts get slower and shrinks when
they get faster; attempts already out are never interrupted, new ones just wait until the count
is below the new cap.

**Which of the two binds** is counted (`WireStats`): a call waits first for a wire slot, then for
the budget (the budget's arrival bound needs a call it lets through to go out at once:
`evalcore.vendors.adapters.common`). The slots are therefore also held by calls waiting on the
budget; time during which calls wait for a slot while none waits on the budget is time the cap,
not the budget, held the client back (`cap_bound_s`; `cap_bound` now) — raise `max_in_flight`
(when the cap is at it) or the headroom.

Everything takes time from an injected clock and nothing here sleeps, so tests drive it with a
fake clock.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass

HEADROOM = 2.0
"""In-flight slots per call that Little's law says is out on average (see the module doc)."""

FLOOR = 16
"""The fewest slots the rule gives (a tiny rate or latency must not serialise a client)."""

PRIOR_LATENCY_S = 30.0
"""The latency assumed before any attempt has finished (judges answer in 20-60 s); never above
the entry's timeout (no attempt is on the wire longer)."""

SMOOTHING = 0.05
"""Weight of each finished attempt in the latency estimate (about the last 20 attempts count)."""


def in_flight_cap(
    rpm: float, latency_s: float, configured: int, headroom: float = HEADROOM, floor: int = FLOOR
) -> int:
    """Attempts one client may have on the wire: `ceil(rpm / 60 × latency_s × headroom)` (Little's law
    with headroom), at least `floor`, never above `configured`.

    Monotone (non-decreasing) in `rpm`, `latency_s` and `headroom`; always within
    `[min(floor, configured), configured]`. Raises ValueError on a negative or NaN input or a
    `configured` below 1 (a client that may send nothing would wait forever).
    """
    if configured < 1:
        raise ValueError(f"configured in-flight bound must be at least 1, got {configured}")
    if any(math.isnan(v) or v < 0 for v in (rpm, latency_s, headroom)) or floor < 1:
        raise ValueError(
            f"in_flight_cap needs non-negative numbers and a floor of at least 1: rpm={rpm}, "
            f"latency_s={latency_s}, headroom={headroom}, floor={floor}"
        )
    need = rpm / 60.0 * latency_s * headroom
    if need >= configured:  # also an infinite product (and never inf x 0: NaN is excluded above)
        return configured
    return min(configured, max(floor, math.ceil(need)))


@dataclass
class WireStats:
    """Counters of one client's wire slots (reported in a vendor actor's `stats`)."""

    cap_waits: int = 0
    """Calls that waited for a wire slot (whichever of cap and budget held them back)."""
    cap_wait_s: float = 0.0
    budget_waits: int = 0
    """Calls that waited on the rate budget after taking their slot."""
    budget_wait_s: float = 0.0
    cap_bound_s: float = 0.0
    """Time during which calls waited for a slot while none waited on the budget: the cap bound."""
    budget_bound_s: float = 0.0
    """Time during which calls waited on the budget: the budget bound."""
    peak_in_flight: int = 0


@dataclass
class BudgetWait:
    """Whether the budget held one call back (set by the caller of `waiting_on_budget`)."""

    waited: bool = False


class InFlightLimiter:
    """An asyncio semaphore (FIFO) whose size is `in_flight_cap(rpm, latency estimate, configured)`.

    `rpm` None (no rate budget: the offline and zero-work adapters) means the cap is `configured`.
    `release(latency_s)` both frees the slot and feeds the estimate; a cap that grew lets waiters
    in at once. One instance per client and event loop (`asyncio` futures belong to one loop);
    `prior_latency_s` and `stats` carry the estimate and the counters over to the next instance.
    """

    def __init__(
        self,
        configured: int,
        rpm: float | None,
        *,
        prior_latency_s: float = PRIOR_LATENCY_S,
        headroom: float = HEADROOM,
        floor: int = FLOOR,
        smoothing: float = SMOOTHING,
        clock: Callable[[], float] = time.monotonic,
        stats: WireStats | None = None,
    ) -> None:
        if not 0 < smoothing <= 1:
            raise ValueError(f"smoothing must be in (0, 1], got {smoothing}")
        self.configured = configured
        self.rpm = rpm
        self.headroom = headroom
        self.floor = floor
        self.smoothing = smoothing
        self._clock = clock
        self._latency = max(float(prior_latency_s), 0.0)
        self.observed = 0
        """Finished attempts the estimate has seen."""
        self.stats = stats if stats is not None else WireStats()
        self._in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._waiting = 0  # waiters not cancelled (the deque may still hold cancelled ones)
        self._at_budget = 0
        self._since = clock()
        self._cap = self._compute_cap()

    # ---------------------------------------------------------------- what it says
    @property
    def cap(self) -> int:
        """The current cap (never above `configured`)."""
        return self._cap

    @property
    def latency_s(self) -> float:
        """The latency estimate: the prior until attempts finish, then their smoothed mean."""
        return self._latency

    @property
    def in_flight(self) -> int:
        """Slots held now (calls on the wire or waiting on the budget)."""
        return self._in_flight

    @property
    def waiting(self) -> int:
        """Calls waiting for a slot now."""
        return self._waiting

    @property
    def at_budget(self) -> int:
        """Calls holding a slot and waiting on the budget now."""
        return self._at_budget

    @property
    def cap_bound(self) -> bool:
        """Calls wait for a slot while none waits on the budget: the cap, not the budget, binds."""
        return self._waiting > 0 and self._at_budget == 0

    def snapshot(self) -> dict[str, float]:
        """The cap, the counts now and the counters, as a vendor actor reports them."""
        self._account()
        return {
            "in_flight_cap": float(self._cap),
            "in_flight_bound": float(self.configured),
            "in_flight": float(self._in_flight),
            "cap_waiting": float(self._waiting),
            "cap_bound": 1.0 if self.cap_bound else 0.0,
            **{k: float(v) for k, v in asdict(self.stats).items() if k != "peak_in_flight"},
        }

    # ---------------------------------------------------------------- the semaphore
    async def acquire(self) -> None:
        """Take a slot, waiting (FIFO) while the cap is reached."""
        if not self._waiting and self._in_flight < self._cap:
            self._take()  # no waiter before or after: the state timed by `_account` is unchanged
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        started = self._clock()
        self._account()
        self._waiters.append(fut)
        self._waiting += 1
        try:
            await fut
        except asyncio.CancelledError:
            self._account()
            if fut.done() and not fut.cancelled():  # a slot was handed over: give it back
                self._in_flight -= 1
                self._wake()
            else:
                self._waiting -= 1
            raise
        self.stats.cap_waits += 1
        self.stats.cap_wait_s += max(self._clock() - started, 0.0)

    def release(self, latency_s: float | None = None) -> None:
        """Free a slot; `latency_s`, when given, is the attempt's time on the wire (fed to the estimate)."""
        self._account()
        self._in_flight = max(self._in_flight - 1, 0)
        if latency_s is not None:
            self._learn(latency_s)
        self._wake()

    def observe(self, latency_s: float) -> None:
        """Feed one finished attempt's time on the wire to the estimate (the cap follows)."""
        self._account()
        self._learn(latency_s)
        self._wake()

    @contextmanager
    def waiting_on_budget(self) -> Iterator[BudgetWait]:
        """Wrap the budget's `acquire`; set the yielded `BudgetWait.waited` to whether the budget
        held the call back (`Reservation.waited`): such calls and their time are counted."""
        self._account()
        self._at_budget += 1
        started = self._clock()
        wait = BudgetWait()
        try:
            yield wait
        finally:
            self._account()
            self._at_budget -= 1
            if wait.waited:
                self.stats.budget_waits += 1
                self.stats.budget_wait_s += max(self._clock() - started, 0.0)

    # ---------------------------------------------------------------- inside
    def _compute_cap(self) -> int:
        if self.rpm is None:
            return self.configured
        return in_flight_cap(self.rpm, self._latency, self.configured, self.headroom, self.floor)

    def _learn(self, latency_s: float) -> None:
        if math.isnan(latency_s) or latency_s < 0:
            return
        self._latency += self.smoothing * (latency_s - self._latency)
        self.observed += 1
        self._cap = self._compute_cap()

    def _take(self) -> None:
        self._in_flight += 1
        if self._in_flight > self.stats.peak_in_flight:
            self.stats.peak_in_flight = self._in_flight

    def _wake(self) -> None:
        """Hand free slots to the oldest waiters (skipping the cancelled ones)."""
        while self._waiters and self._in_flight < self._cap:
            fut = self._waiters.popleft()
            if fut.done():  # cancelled while waiting (already uncounted)
                continue
            self._waiting -= 1
            self._take()
            fut.set_result(None)

    def _account(self) -> None:
        """Add the time since the last change to the state it was spent in (call before a change)."""
        now = self._clock()
        dt = now - self._since
        self._since = now
        if dt <= 0:
            return
        if self._at_budget > 0:
            self.stats.budget_bound_s += dt
        elif self._waiting > 0:
            self.stats.cap_bound_s += dt
