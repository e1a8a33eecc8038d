"""An emulator holds thousands of requests open at once, as a top-tier account has them on the wire.

At 10,000 requests a minute and a 30 s latency a vendor has ~5,000 requests open (Little's law).
Each emulator serves them from one event loop: a request sleeping out its latency costs one future
and one timer (no task, no scan of the others), its counters say how many are open
(`EmulatorStats.open_requests`, `peak_open_requests`), shutting down wakes them all at once, and a
client that hangs up leaves nothing behind.

The wire test sends through the real SDK (its connection pools or gRPC channels as the adapter
builds them) with a latency of an hour: the responder sees the last request arrive while all the
others sleep, so the counts are read with every request open, and closing the engine then answers
them all. Nothing waits on a clock.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import SecretStr

from doubles.emulators import (
    EmulatedRequest,
    EmulatorConfig,
    FixedLatency,
    OpenAIEmulator,
    Outcome,
    ScriptedResponder,
    XAIEmulator,
)
from doubles.emulators._engine import Engine
from evalcore.config.models import VendorConfig
from evalcore.errors import VendorError
from evalcore.schema import RubricAnswer
from evalcore.vendors.registry import create_vendor
from tests.evalcore.vendors._vendor_contract import ANSWER, KEY, burst_config, judge_request

HOUR = 3_600.0


class CountTo:
    """A responder that sets `reached` when the `n`-th request reaches it (each then sleeps its latency)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.seen = 0
        self.reached = asyncio.Event()

    def __call__(self, request: EmulatedRequest) -> dict[str, Any]:
        self.seen += 1
        if self.seen >= self.n:
            self.reached.set()
        return ANSWER


def _vendor_cfg(adapter: str, endpoint: str, key_env: str, bound: int) -> VendorConfig:
    return burst_config(adapter, endpoint, key_env, bound, timeout_s=7_200.0)


@pytest.mark.timeout(900)  # a few seconds of CPU; both ends of 2,000 calls share the machine's cores
@pytest.mark.parametrize(("emulator_cls", "adapter", "endpoint"), [
    (OpenAIEmulator, "openai", lambda e: str(e.base_url)),  # aiohttp (the Anthropic emulator's server too)
    (XAIEmulator, "xai", lambda e: f"http://{e.host}"),  # gRPC
], ids=["http", "grpc"])
async def test_an_emulator_holds_two_thousand_requests_open_through_the_real_sdk_and_answers_every_one(
    emulator_cls: Any, adapter: str, endpoint: Any, monkeypatch: pytest.MonkeyPatch, enough_files: None
) -> None:
    n = 2_000
    key_env = f"TRIBUNAL_TEST_MANY_OPEN_{adapter.upper()}_KEY"
    monkeypatch.setenv(key_env, KEY)
    count = CountTo(n)
    config = EmulatorConfig(api_key=SecretStr(KEY), latency=FixedLatency(HOUR), max_recorded=100)
    async with emulator_cls(config, responder=ScriptedResponder(count)) as emu:
        vendor = create_vendor(_vendor_cfg(adapter, endpoint(emu), key_env, n))
        try:
            calls = asyncio.ensure_future(
                vendor.complete_many([judge_request(i) for i in range(n)], RubricAnswer)
            )
            # a guard, not a measurement: a client or server capped below n never gets there
            await asyncio.wait_for(count.reached.wait(), 600)
            held = emu.stats.model_copy()
            asleep = len(emu.engine._sleepers or ())
            emu.engine.close()  # wakes every sleeping request at once: each is then answered
            replies = await asyncio.wait_for(calls, 600)
        finally:
            await vendor.aclose()
    assert (held.requests, held.open_requests, held.peak_open_requests, asleep) == (n, n, n, n)
    failed = [r for r in replies if isinstance(r, VendorError)]
    assert not failed, failed[:3]  # no connect, pool or channel error on any of them
    assert all(r.attempts == 1 for r in replies if not isinstance(r, VendorError))
    stats = emu.stats
    assert (stats.requests, stats.ok, stats.cancelled, stats.open_requests) == (n, n, 0, 0)
    assert stats.peak_open_requests == n


def _request(i: int) -> EmulatedRequest:
    return EmulatedRequest(vendor="openai", api="responses", model="m", system="Grade.", user=f"memo {i}")


async def test_a_request_whose_client_hangs_up_is_no_longer_open_nor_left_asleep_and_closing_wakes_the_rest() -> None:
    count = CountTo(3)
    engine = Engine("openai", EmulatorConfig(latency=FixedLatency(HOUR)), ScriptedResponder(count), "resp_")
    engine.open()
    tasks = [
        asyncio.ensure_future(engine.handle(_request(i), method="POST", path="/v1/responses", body={}, presented_key=None))
        for i in range(3)
    ]
    await asyncio.wait_for(count.reached.wait(), 60)
    assert (engine.stats.open_requests, len(engine._sleepers or ())) == (3, 3)

    tasks[0].cancel()  # what aiohttp / gRPC do to a handler whose client hung up
    with pytest.raises(asyncio.CancelledError):
        await tasks[0]
    assert (engine.stats.open_requests, len(engine._sleepers or ()), engine.stats.cancelled) == (2, 2, 1)
    assert engine.requests[0].cancelled

    engine.close()  # shutting down: the others wake at once and are answered
    decisions = await asyncio.wait_for(asyncio.gather(*tasks[1:]), 60)
    assert [d.outcome for d in decisions] == [Outcome.OK, Outcome.OK]
    assert (engine.stats.open_requests, engine.stats.peak_open_requests, len(engine._sleepers or ())) == (0, 3, 0)

    # once closed, a request no longer sleeps its latency (it would hang here for an hour)
    late = await asyncio.wait_for(
        engine.handle(_request(3), method="POST", path="/v1/responses", body={}, presented_key=None), 60
    )
    assert late.outcome is Outcome.OK and engine.stats.open_requests == 0
