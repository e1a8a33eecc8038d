"""Entries on one account share one budget: an idle auditor leaves the judge the whole account,
and both busy never exceed it (real OpenAI SDK against the emulator; counted, never timed).

The entries carry the static split the configuration computes (`account_fraction` 2/3 and 1/3):
the shared budget of `create_account_vendors` ignores it. In the first test both clocks are
frozen, so neither bucket refills: the judge alone must be let through the account's whole
allowance without a wait (with a 2/3 share its 41st call would wait for ever: the guard fails the
test). In the second both clocks run 60/WINDOW_S times faster (as in `test_burst.py`) and the
two entries together ask for four times the allowance: the server's own counts show every call
admitted and no 429. As in `test_burst.py` (whose module doc says why), that budget charges each
call at its completion (`arrival_s=inf`), always after the server received it: with the
production bound (a call counted as arrived 0.5 s after its grant), a client and server sharing
one event loop on a loaded machine got a 429 in a clean-clone CI run, the loop having sent or
served a call later than that.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable

import pytest

from doubles.emulators import EmulatorConfig, OpenAIEmulator, ServerLimits, StaticResponder
from doubles.emulators._limits import RateLimiter
from evalcore.config.models import VendorConfig
from evalcore.errors import VendorError
from evalcore.prompts import render_rubric
from evalcore.schema import Criterion, Deliverable, RubricAnswer
from evalcore.vendors.adapters.openai import OpenAIVendor
from evalcore.vendors.budget import RateBudget
from evalcore.vendors.protocol import JudgeRequest, Vendor
from evalcore.vendors.sharding import create_account_vendors

RPM = 60  # the account's allowance: a bucket of a whole minute (burst_s 60) holds 60 calls
WINDOW_S = 0.25  # the sped-up "minute" of the second test, in real seconds
ENV = "TRIBUNAL_TEST_ACCOUNT_KEY"
HANG_GUARD_S = 120.0  # not a timing assertion: fails the test instead of hanging if a call waits for ever


def entries(endpoint: str) -> list[VendorConfig]:
    """The OpenAI judge and the auditor on one key, with the configuration's static 2:1 split."""
    common = dict(adapter="openai", family="openai", endpoint=endpoint, api_key_env=ENV, max_output_tokens=64,
                  limits={"requests_per_minute": RPM, "tokens_per_minute": 10**9, "burst_s": 60},
                  retry={"max_attempts": 1})
    return [
        VendorConfig.model_validate({**common, "name": "openai", "model": "gpt-judge", "account_fraction": 2 / 3}),
        VendorConfig.model_validate({**common, "name": "auditor", "model": "gpt-audit", "account_fraction": 1 / 3}),
    ]


def requests(cfg: VendorConfig, n: int) -> list[JudgeRequest]:
    out = []
    for i in range(n):
        prompt = render_rubric(
            task_id="t", instructions="Assess the memo.",
            criterion=Criterion(id=f"{cfg.name}-{i:04d}", title="Cure period", match_criteria="PASS if 30 days."),
            deliverables=[Deliverable(name="memo", text="The cure period is 30 days.")], boundary="cd" * 8,
        )
        out.append(prompt.request_for(cfg))
    return out


def budget_of(vendor: Vendor) -> RateBudget:
    assert isinstance(vendor, OpenAIVendor) and vendor.budget is not None
    return vendor.budget


def _emulator(clock: Callable[[], float]) -> OpenAIEmulator:
    limits = ServerLimits(requests_per_minute=RPM, tokens_per_minute=10**9, burst_s=60)
    emulator = OpenAIEmulator(EmulatorConfig(limits=limits, max_recorded=10),
                              responder=StaticResponder({"verdict": "pass", "reasoning": "ok"}))
    emulator.engine.limiter = RateLimiter(limits, clock=clock)
    return emulator


@pytest.fixture
async def frozen_emu(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[OpenAIEmulator]:
    monkeypatch.setenv(ENV, "account-key")
    async with _emulator(lambda: 0.0) as emulator:
        yield emulator


@pytest.fixture
async def fast_emu(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[OpenAIEmulator]:
    monkeypatch.setenv(ENV, "account-key")
    start = time.monotonic()
    async with _emulator(lambda: start + (time.monotonic() - start) * 60 / WINDOW_S) as emulator:
        yield emulator


async def test_an_idle_auditor_leaves_the_judge_the_whole_account(frozen_emu: OpenAIEmulator) -> None:
    judge, auditor = entries(frozen_emu.base_url)
    vendors = create_account_vendors([judge, auditor], budget_kwargs={"clock": lambda: 0.0})
    budget = budget_of(vendors["openai"])
    assert budget_of(vendors["auditor"]) is budget
    try:
        out = await asyncio.wait_for(vendors["openai"].complete_many(requests(judge, RPM), RubricAnswer), HANG_GUARD_S)
    finally:
        for v in vendors.values():
            await v.aclose()
    assert [o for o in out if isinstance(o, VendorError)] == []
    # the judge was admitted the account's whole allowance (1.0 of it, not its 2/3 share), at once
    assert frozen_emu.stats.ok == frozen_emu.stats.requests == RPM
    assert frozen_emu.stats.rate_limited == 0
    assert budget.stats.granted == RPM and budget.stats.waited == 0


async def test_judge_and_auditor_both_busy_never_exceed_the_account(fast_emu: OpenAIEmulator) -> None:
    judge, auditor = entries(fast_emu.base_url)
    vendors = create_account_vendors([judge, auditor], budget_kwargs={"window_s": WINDOW_S, "arrival_s": math.inf})
    budget = budget_of(vendors["openai"])
    n = 2 * RPM  # each: twice the account's allowance, four times together
    try:
        outs = await asyncio.gather(
            vendors["openai"].complete_many(requests(judge, n), RubricAnswer),
            vendors["auditor"].complete_many(requests(auditor, n), RubricAnswer),
        )
    finally:
        for v in vendors.values():
            await v.aclose()
    assert [o for out in outs for o in out if isinstance(o, VendorError)] == []
    # the server's own record: every call of both entries admitted, none refused
    assert fast_emu.stats.ok == fast_emu.stats.requests == 2 * n
    assert fast_emu.stats.rate_limited == 0 and fast_emu.stats.limit_rejections == 0
    assert budget.stats.granted == 2 * n and budget.stats.waited > 0  # the one budget held them back
