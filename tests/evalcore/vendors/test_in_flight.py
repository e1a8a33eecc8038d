"""The in-flight cap (`evalcore.vendors.in_flight`): Little's law bounded by `max_in_flight`, and
clients whose connection pools and channels never cap below it.

The rule and the limiter run on a fake clock (nothing sleeps). The wire tests send through the
real SDKs to the emulators, whose responder holds every request until the number held reaches
the bound: it can only be reached if that many are on the wire at once, and no more can arrive
(the rest wait for a slot, which the test sees before releasing anything).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import anthropic
import grpc
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from doubles.emulators import (
    AnthropicEmulator,
    EmulatedRequest,
    EmulatorConfig,
    OpenAIEmulator,
    ScriptedResponder,
    XAIEmulator,
)
from evalcore.config.models import VendorConfig
from evalcore.errors import VendorError
from evalcore.schema import RubricAnswer
from evalcore.vendors.adapters.common import CALLS_PER_CLIENT, Attempt, M, clients_for
from evalcore.vendors.budget import RateBudget
from evalcore.vendors.in_flight import FLOOR, HEADROOM, InFlightLimiter, in_flight_cap
from evalcore.vendors.protocol import JudgeRequest
from evalcore.vendors.registry import create_vendor
from tests.evalcore.vendors._vendor_contract import ANSWER, KEY, burst_config, judge_request
from tests.evalcore.vendors._vendor_testkit import FakeTime, ScriptedVendor, Verdict, make_cfg, request

rpms = st.floats(min_value=0, max_value=1e7, allow_nan=False)
latencies = st.floats(min_value=0, max_value=3_600, allow_nan=False)
bounds = st.integers(min_value=1, max_value=100_000)


# ------------------------------------------------------------------------------------ the rule


def test_the_cap_is_the_rate_per_second_times_the_latency_times_the_headroom() -> None:
    # a frontier account: 10,000/min at 30 s needs 5,000 in flight; with the headroom 10,000
    assert in_flight_cap(10_000, 30.0, 50_000, headroom=2.0) == 10_000
    assert in_flight_cap(600, 30.0, 50_000, headroom=1.0) == 300
    assert in_flight_cap(601, 30.0, 50_000, headroom=1.0) == 301  # rounded up (300.5)


def test_the_configured_bound_caps_the_rule_and_the_floor_holds_it_up() -> None:
    assert in_flight_cap(10_000, 30.0, 512) == 512
    assert in_flight_cap(60, 0.01, 512) == FLOOR
    assert in_flight_cap(60, 0.01, 4) == 4  # the bound wins over the floor too
    assert in_flight_cap(float("inf"), 30.0, 512) == 512


@pytest.mark.parametrize(
    "args", [(-1.0, 1.0, 10), (1.0, -1.0, 10), (float("nan"), 1.0, 10), (1.0, float("nan"), 10), (1.0, 1.0, 0)]
)
def test_a_negative_or_nan_input_or_a_bound_below_one_is_refused(args: tuple[float, float, int]) -> None:
    with pytest.raises(ValueError):
        in_flight_cap(*args)


@given(rpm=rpms, more=rpms, latency=latencies, bound=bounds)
def test_the_cap_never_falls_when_the_rate_rises(rpm: float, more: float, latency: float, bound: int) -> None:
    assert in_flight_cap(rpm, latency, bound) <= in_flight_cap(rpm + more, latency, bound)


@given(rpm=rpms, latency=latencies, more=latencies, bound=bounds)
def test_the_cap_never_falls_when_the_latency_rises(rpm: float, latency: float, more: float, bound: int) -> None:
    assert in_flight_cap(rpm, latency, bound) <= in_flight_cap(rpm, latency + more, bound)


@given(
    rpm=rpms,
    latency=latencies,
    bound=bounds,
    headroom=st.floats(min_value=0, max_value=10, allow_nan=False),
    floor=st.integers(min_value=1, max_value=1_000),
)
def test_the_cap_is_never_above_the_bound_nor_below_the_floor(
    rpm: float, latency: float, bound: int, headroom: float, floor: int
) -> None:
    cap = in_flight_cap(rpm, latency, bound, headroom, floor)
    assert min(floor, bound) <= cap <= bound
    need = rpm / 60 * latency * headroom
    assert cap >= min(need, bound)  # never below what Little's law asks, unless the bound says so


# ------------------------------------------------------------------------------------ the limiter


def test_before_any_latency_is_seen_the_cap_comes_from_the_prior() -> None:
    t = FakeTime()
    wire = InFlightLimiter(50_000, 10_000, prior_latency_s=30.0, clock=t.clock)
    assert wire.latency_s == 30.0 and wire.observed == 0
    assert wire.cap == in_flight_cap(10_000, 30.0, 50_000) == 10_000
    assert InFlightLimiter(512, None, clock=t.clock).cap == 512  # no rate budget: the bound


def test_the_cap_grows_when_latency_rises_and_shrinks_when_it_falls() -> None:
    t = FakeTime()
    wire = InFlightLimiter(100_000, 6_000, prior_latency_s=1.0, clock=t.clock)  # 100/s
    start = wire.cap
    for _ in range(200):
        wire.observe(40.0)
    risen = wire.cap
    for _ in range(200):
        wire.observe(2.0)
    fallen = wire.cap
    assert start < fallen < risen
    assert risen == pytest.approx(100 * 40 * HEADROOM, rel=0.01)
    assert fallen == pytest.approx(100 * 2 * HEADROOM, rel=0.05)


@settings(max_examples=60, deadline=None)
@given(
    bound=st.integers(min_value=1, max_value=5_000),
    rpm=rpms,
    prior=latencies,
    seen=st.lists(st.floats(min_value=0, max_value=3_600, allow_nan=False), max_size=50),
)
def test_whatever_latencies_are_seen_the_cap_stays_within_floor_and_bound(
    bound: int, rpm: float, prior: float, seen: list[float]
) -> None:
    t = FakeTime()
    wire = InFlightLimiter(bound, rpm, prior_latency_s=prior, clock=t.clock)
    for latency in seen:
        wire.observe(latency)
        assert min(FLOOR, bound) <= wire.cap <= bound
        assert wire.cap == in_flight_cap(rpm, wire.latency_s, bound)


async def test_calls_past_the_cap_wait_in_order_and_a_grown_cap_lets_them_in_at_once() -> None:
    t = FakeTime()
    wire = InFlightLimiter(1_000, 60, prior_latency_s=1.0, floor=2, clock=t.clock)  # 1/s x 1 s x 2 = 2
    assert wire.cap == 2
    await wire.acquire()
    await wire.acquire()
    order: list[int] = []

    async def waiter(i: int) -> None:
        await wire.acquire()
        order.append(i)

    tasks = [asyncio.create_task(waiter(i)) for i in range(4)]
    await asyncio.sleep(0)  # let them queue (a scheduling turn, no time passes)
    assert (wire.in_flight, wire.waiting, order) == (2, 4, [])
    t.now += 5.0
    wire.release(1.0)  # same latency: the cap stays 2, one slot frees
    await asyncio.sleep(0)
    assert order == [0]
    wire.observe(100.0)  # much slower: the cap grows past everyone waiting
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3] and wire.in_flight == 5 and wire.waiting == 0
    assert wire.stats.cap_waits == 4 and wire.stats.peak_in_flight == 5
    assert wire.stats.cap_bound_s == pytest.approx(5.0)  # waited for a slot, nobody at the budget


async def test_a_shrunk_cap_interrupts_nothing_and_admits_again_below_it() -> None:
    t = FakeTime()
    wire = InFlightLimiter(1_000, 600, prior_latency_s=30.0, floor=1, smoothing=1.0, clock=t.clock)
    for _ in range(10):
        await wire.acquire()
    wire.observe(0.25)  # 10/s x 0.25 s x 2 = 5
    assert (wire.cap, wire.in_flight) == (5, 10)
    late = asyncio.create_task(wire.acquire())
    await asyncio.sleep(0)
    assert not late.done()
    for _ in range(5):
        wire.release()
    await asyncio.sleep(0)
    assert not late.done()  # 5 in flight: still at the cap
    wire.release()
    await late
    assert wire.in_flight == 5


async def test_a_waiter_cancelled_before_or_after_its_turn_leaks_no_slot() -> None:
    t = FakeTime()
    wire = InFlightLimiter(1, None, clock=t.clock)
    await wire.acquire()
    first = asyncio.create_task(wire.acquire())
    second = asyncio.create_task(wire.acquire())
    await asyncio.sleep(0)
    first.cancel()  # before its turn
    await asyncio.sleep(0)
    assert wire.waiting == 1
    wire.release()  # hands the slot to `second` ...
    second.cancel()  # ... which is cancelled before it runs: the slot must come back
    with pytest.raises(asyncio.CancelledError):
        await second
    assert (wire.in_flight, wire.waiting) == (0, 0)
    await wire.acquire()
    assert wire.in_flight == 1


async def test_waiting_on_the_budget_is_counted_apart_from_the_cap_binding() -> None:
    t = FakeTime()
    wire = InFlightLimiter(1, None, clock=t.clock)
    await wire.acquire()
    queued = asyncio.create_task(wire.acquire())
    await asyncio.sleep(0)
    with wire.waiting_on_budget() as at_budget:  # the slot's holder waits on the budget: the budget binds
        assert not wire.cap_bound
        t.now += 3.0
        at_budget.waited = True
    with wire.waiting_on_budget():  # granted at once (not held back): not counted as a wait
        pass
    assert wire.cap_bound  # now the slot's holder is on the wire and a call waits for a slot
    t.now += 2.0
    snap = wire.snapshot()
    assert (snap["budget_bound_s"], snap["cap_bound_s"], snap["budget_waits"], snap["budget_wait_s"]) == (
        3.0, 2.0, 1.0, 3.0,
    )
    assert (snap["cap_bound"], snap["cap_waiting"], snap["in_flight"], snap["in_flight_cap"]) == (1.0, 1.0, 1.0, 1.0)
    wire.release()
    await queued
    assert not wire.cap_bound and wire.stats.cap_waits == 1 and wire.stats.cap_wait_s == 5.0


# ------------------------------------------------------------------------------------ the adapter


class SlowScripted(ScriptedVendor):
    """Each attempt takes `latency_s` of the fake clock."""

    def __init__(self, cfg: VendorConfig, t: FakeTime, latency_s: float, **kwargs: Any) -> None:
        super().__init__(cfg, [], clock=t.clock, sleep=t.sleep, rng=random.Random(1), **kwargs)
        self.t = t
        self.latency_s = latency_s

    async def _attempt(self, client: None, request: JudgeRequest, schema: type[M], timeout_s: float) -> Attempt[M]:
        self.t.now += self.latency_s
        return await super()._attempt(client, request, schema, timeout_s)


async def test_the_adapters_cap_follows_its_budgets_rate_and_the_latency_its_attempts_take() -> None:
    t = FakeTime()
    cfg = make_cfg(limits={"requests_per_minute": 6_000, "tokens_per_minute": 10**9}, max_in_flight=5_000)
    budget = RateBudget.from_limits(cfg.limits, clock=t.clock, sleep=t.budget_sleep)
    vendor = SlowScripted(cfg, t, 12.0, budget=budget)
    assert vendor.wire_stats()["in_flight_cap"] == in_flight_cap(6_000, 30.0, 5_000)  # the prior: 30 s
    for i in range(300):
        await vendor.complete(request(i), Verdict)
    stats = vendor.wire_stats()
    assert stats["in_flight_cap"] == pytest.approx(100 * 12.0 * HEADROOM, rel=0.01)  # 100/s x 12 s x 2
    assert (stats["in_flight_bound"], stats["in_flight"], stats["cap_bound"]) == (5_000, 0, 0)


async def test_an_adapter_without_a_rate_budget_is_capped_at_its_bound() -> None:
    t = FakeTime()
    vendor = SlowScripted(make_cfg(max_in_flight=77), t, 0.0)
    vendor.budget = None
    vendor._wire = vendor._new_wire()
    assert vendor.wire_stats()["in_flight_cap"] == 77


# ------------------------------------------------------------------------------------ on the wire


class HoldUntil:
    """A responder holding every request until `target` are held at once, then answering all.

    When it opens it records `probe()` (the client's slots: held, waiting, cap) — taken while no
    request has been answered yet."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.held = 0
        self.peak = 0
        self.opened = asyncio.Event()
        self.probe: Callable[[], tuple[int, int, int]] = lambda: (0, 0, 0)
        self.at_open: tuple[int, int, int] | None = None

    async def __call__(self, request: EmulatedRequest) -> dict[str, Any]:
        self.held += 1
        self.peak = max(self.peak, self.held)
        if self.held >= self.target and not self.opened.is_set():
            self.at_open = self.probe()
            self.opened.set()
        try:
            await self.opened.wait()
        finally:
            self.held -= 1
        return ANSWER


def _cfg(adapter: str, endpoint: str, key_env: str, bound: int) -> VendorConfig:
    return burst_config(adapter, endpoint, key_env, bound, timeout_s=600.0)


async def _hold_on_the_wire(
    emulator: Any, adapter: str, endpoint: Callable[[Any], str], bound: int, sent: int,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[HoldUntil, dict[str, float], int]:
    """Send `sent` calls through the real SDK with `max_in_flight=bound`; the emulator holds them
    until `bound` are held at once. Returns the responder, the adapter's wire stats and its peak."""
    key_env = f"TRIBUNAL_TEST_{adapter.upper()}_KEY"
    monkeypatch.setenv(key_env, KEY)
    hold = HoldUntil(bound)
    async with emulator(EmulatorConfig(api_key=SecretStr(KEY)), responder=ScriptedResponder(hold)) as emu:
        vendor = create_vendor(_cfg(adapter, endpoint(emu), key_env, bound))
        def probe() -> tuple[int, int, int]:
            w = vendor._wire  # type: ignore[attr-defined]
            return w.in_flight, w.waiting, w.cap

        hold.probe = probe
        try:
            # a client capped below `bound` never lets the emulator open: fail instead of hanging
            replies = await asyncio.wait_for(
                vendor.complete_many([judge_request(i) for i in range(sent)], RubricAnswer), 600
            )
        finally:
            await vendor.aclose()
    failed = [r for r in replies if isinstance(r, VendorError)]
    assert not failed, failed[:3]
    return hold, vendor.wire_stats(), vendor._wire.stats.peak_in_flight  # type: ignore[attr-defined]


@pytest.mark.timeout(900)  # a few seconds on an idle machine; both ends of 1,100 calls share its cores
@pytest.mark.parametrize(("emulator", "adapter", "sdk"), [
    (OpenAIEmulator, "openai", openai), (AnthropicEmulator, "anthropic", anthropic),
])
async def test_more_calls_than_the_sdks_own_pool_holds_are_on_the_wire_at_once_and_never_more_than_the_bound(
    emulator: Any, adapter: str, sdk: Any, monkeypatch: pytest.MonkeyPatch, enough_files: None
) -> None:
    bound, sent = 1_050, 1_100
    assert bound > sdk.DEFAULT_CONNECTION_LIMITS.max_connections  # 1,000: what the SDK's own pool holds
    hold, stats, peak = await _hold_on_the_wire(emulator, adapter, lambda e: str(e.base_url), bound, sent, monkeypatch)
    assert hold.at_open == (bound, sent - bound, bound)  # all the bound on the wire, the rest waiting for a slot
    assert hold.peak == bound and peak == bound
    assert stats["in_flight_cap"] == bound and stats["cap_waits"] == sent - bound
    assert stats["cap_bound_s"] > 0 and stats["budget_waits"] == 0  # the cap held them, not the budget


async def test_xai_opens_enough_channels_that_a_servers_stream_limit_does_not_cap_below_the_bound(
    monkeypatch: pytest.MonkeyPatch, enough_files: None
) -> None:
    """The emulator's gRPC server advertises HTTP/2 `max_concurrent_streams` 100 (what RFC 9113
    recommends at least; one channel then carries 100 calls at once)."""
    real_server = grpc.aio.server

    def stream_capped(*args: Any, options: Any = None, **kwargs: Any) -> Any:
        return real_server(*args, options=[*(options or []), ("grpc.max_concurrent_streams", CALLS_PER_CLIENT)], **kwargs)

    monkeypatch.setattr(grpc.aio, "server", stream_capped)
    bound, sent = 3 * CALLS_PER_CLIENT, 3 * CALLS_PER_CLIENT + 80
    assert clients_for(bound) == 3
    hold, stats, peak = await _hold_on_the_wire(XAIEmulator, "xai", lambda e: f"http://{e.host}", bound, sent, monkeypatch)
    assert hold.at_open == (bound, sent - bound, bound)
    assert hold.peak == bound and peak == bound and stats["cap_waits"] == sent - bound


def test_the_channels_cover_the_bound_at_the_streams_one_carries() -> None:
    assert [clients_for(n) for n in (1, 100, 101, 512, 10_000)] == [1, 1, 2, 6, 100]
