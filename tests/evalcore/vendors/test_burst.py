"""A burst of 2,000 calls through the rate budget, against an emulator enforcing the same limits,
gets no 429 (counted on the server, no timing assertions).

The emulator enforces its limits as token buckets that start full (capacity = the per-minute
limit, refilled continuously). To keep the test short, the emulator's clock runs 60/WINDOW_S
times faster (its "minute" lasts WINDOW_S real seconds) and the budget's window is WINDOW_S: the
same limits, on the same time scale. The limits are set below what the client can push, so the
budget (not the client's speed) is what keeps the server happy; the control shows that a budget
believing in 3x the limits does get 429s from a server with the same limits (its clock frozen, so
the control does not depend on how fast this machine is).

Neither outcome depends on how loaded the machine is. The budget charges a call when it can first
have reached the server; in production that is at the latest `ARRIVAL_S` (0.5 s) after the grant,
an assumption about the machine that a loaded one breaks here (client and server share one event
loop, and a call can wait longer than that for the loop to send or serve it while the budget has
already counted it as arrived). This test gives the budget no such bound (`arrival_s=inf`): each
call is charged at its completion, always after the server received it, so the server's bucket is
never emptier than the budget's under any scheduling and 0 429s is exact. The arrival bound
itself is tested with arrivals placed anywhere in it, in `test_budget.py`
(`test_the_vendors_token_bucket_never_refuses_a_request_whenever_it_arrives_in_flight`).
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from doubles.emulators import EmulatorConfig, ServerLimits, StaticResponder, XAIEmulator
from doubles.emulators._limits import RateLimiter
from evalcore.config.models import VendorConfig
from evalcore.errors import VendorError
from evalcore.prompts import render_rubric
from evalcore.schema import Criterion, Deliverable, RubricAnswer
from evalcore.vendors.budget import RateBudget
from evalcore.vendors.protocol import JudgeRequest
from evalcore.vendors.registry import create_vendor

CALLS = 2000
WINDOW_S = 0.1  # the emulator's "minute", in real seconds
RPM = 120  # per WINDOW_S: 1,200 requests/s nominal; charged at completion (below), the budget holds
# the burst to ~150/s here (2,000 calls in ~13 s, waiting), below the ~400/s one process pushes
# through the xAI SDK (client and server's CPU, cProfile of this test): the budget binds, not the client
TPM = 120 * 600  # tokens per WINDOW_S: binding about as much as the request limit
ENV = "TRIBUNAL_TEST_BURST_KEY"


def cfg(endpoint: str, *, max_attempts: int = 6) -> VendorConfig:
    return VendorConfig.model_validate(
        dict(
            adapter="xai",
            name="xai",
            family="xai",
            model="grok-test",
            endpoint=endpoint,
            api_key_env=ENV,
            max_output_tokens=300,
            limits={"requests_per_minute": RPM, "tokens_per_minute": TPM},
            retry={"max_attempts": max_attempts, "base_delay_s": 0.001, "max_delay_s": 0.01},
        )
    )


def requests(vendor_cfg: VendorConfig, n: int) -> list[JudgeRequest]:
    out = []
    for i in range(n):
        prompt = render_rubric(
            task_id="t",
            instructions="Assess the memo.",
            criterion=Criterion(id=f"C-{i:04d}", title="Cure period", match_criteria="PASS if 30 days."),
            deliverables=[Deliverable(name="memo", text="The cure period is 30 days.")],
            boundary="cd" * 8,
        )
        out.append(prompt.request_for(vendor_cfg))
    return out


def _emulator(clock_speed: float) -> XAIEmulator:
    limits = ServerLimits(requests_per_minute=RPM, tokens_per_minute=TPM)
    emulator = XAIEmulator(
        EmulatorConfig(limits=limits, max_recorded=10),
        responder=StaticResponder({"verdict": "pass", "reasoning": "ok"}),
    )
    start = time.monotonic()
    emulator.engine.limiter = RateLimiter(limits, clock=lambda: start + (time.monotonic() - start) * clock_speed)
    return emulator


@pytest.fixture
async def emu(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[XAIEmulator]:
    monkeypatch.setenv(ENV, "burst-key")
    async with _emulator(60 / WINDOW_S) as emulator:
        yield emulator


@pytest.fixture
async def frozen_emu(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[XAIEmulator]:
    """The same limits on a server clock that never advances: its buckets never refill, so the
    outcome does not depend on how fast this machine pushes requests."""
    monkeypatch.setenv(ENV, "burst-key")
    async with _emulator(0.0) as emulator:
        yield emulator


async def burst(emu: XAIEmulator, budget: RateBudget, n: int, max_attempts: int = 6) -> list[Any]:
    c = cfg(f"http://{emu.host}", max_attempts=max_attempts)
    vendor = create_vendor(c, budget=budget)
    try:
        return await vendor.complete_many(requests(c, n), RubricAnswer)
    finally:
        await vendor.aclose()


async def test_a_burst_of_2000_calls_within_the_budget_gets_no_429(emu: XAIEmulator) -> None:
    budget = RateBudget(RPM, TPM, window_s=WINDOW_S, arrival_s=math.inf)  # charged at completion (module doc)
    out = await burst(emu, budget, CALLS)
    assert [o for o in out if isinstance(o, VendorError)] == []
    assert emu.stats.rate_limited == 0 and emu.stats.limit_rejections == 0
    assert emu.stats.ok == CALLS and emu.stats.requests == CALLS
    assert budget.stats.granted == CALLS and budget.stats.rate_limited == 0
    assert budget.stats.waited > 0  # the budget, not luck, held the burst back


async def test_control_a_budget_above_the_servers_limits_does_get_429s(frozen_emu: XAIEmulator) -> None:
    # A budget believing in 3x the limits grants RPM + 20 requests at once; the server admits at
    # most RPM before its (frozen) bucket is empty, so at least 20 are refused, however fast they come.
    budget = RateBudget(3 * RPM, 3 * TPM, window_s=WINDOW_S, safety=1.0)
    out = await burst(frozen_emu, budget, RPM + 20, max_attempts=1)
    assert frozen_emu.stats.limit_rejections >= 20
    assert sum(isinstance(o, VendorError) for o in out) == frozen_emu.stats.limit_rejections
