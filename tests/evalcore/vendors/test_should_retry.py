"""The server's `x-should-retry` header is obeyed: `true` retries even a status Tribunal would not
retry, `false` stops even a 429 or a 5xx. The official SDKs obey it over their own rules; the
adapters run them with their retries off, so the one retry policy must. Through the real openai
and anthropic SDKs against the emulators (loopback only)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import SecretStr

from doubles.emulators import (
    AnthropicEmulator,
    EmulatorConfig,
    OpenAIEmulator,
    RateLimited,
    ServerError,
    StaticResponder,
)
from evalcore.config.models import VendorConfig
from evalcore.errors import ErrorKind, VendorError
from evalcore.schema import RubricAnswer
from evalcore.vendors.registry import create_vendor
from tests.evalcore.vendors._vendor_contract import ANSWER, KEY, PRICE, judge_request

KEY_ENV = "TRIBUNAL_TEST_SHOULD_RETRY_KEY"


@pytest.fixture(params=["openai", "anthropic"])
async def served(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[str, Any]]:
    monkeypatch.setenv(KEY_ENV, KEY)
    emulator = {"openai": OpenAIEmulator, "anthropic": AnthropicEmulator}[request.param]
    async with emulator(EmulatorConfig(api_key=SecretStr(KEY)), responder=StaticResponder(ANSWER)) as emu:
        yield request.param, emu


async def _complete(adapter: str, emu: Any) -> Any:
    cfg = VendorConfig.model_validate({
        "adapter": adapter, "name": adapter, "family": adapter, "model": f"{adapter}-test-model",
        "endpoint": str(emu.base_url), "api_key_env": KEY_ENV, "timeout_s": 5.0, "max_output_tokens": 400,
        "limits": {"requests_per_minute": 60_000, "tokens_per_minute": 100_000_000}, "price": PRICE,
        "retry": {"max_attempts": 4, "deadline_s": 30.0, "base_delay_s": 0.01, "max_delay_s": 0.05},
    })
    vendor = create_vendor(cfg)
    try:
        return await vendor.complete(judge_request(), RubricAnswer)
    finally:
        await vendor.aclose()


@pytest.mark.parametrize(
    ("behaviour", "kind"),
    [
        (ServerError(503, should_retry=False), ErrorKind.TRANSIENT),
        (ServerError(500, should_retry=False), ErrorKind.TRANSIENT),
        (RateLimited(retry_after=0.05, should_retry=False), ErrorKind.RATE_LIMITED),
    ],
    ids=["503", "500", "429"],
)
async def test_should_retry_false_stops_after_one_attempt_even_on_a_status_we_retry(
    served: tuple[str, Any], behaviour: Any, kind: ErrorKind
) -> None:
    adapter, emu = served
    emu.push(behaviour)
    with pytest.raises(VendorError) as info:
        await _complete(adapter, emu)
    assert info.value.kind is kind and info.value.attempts == 1
    assert len(emu.requests) == 1  # neither we nor the SDK sent another


@pytest.mark.parametrize("status", [400, 422])
async def test_should_retry_true_retries_a_status_we_would_not_and_the_retry_answers(
    served: tuple[str, Any], status: int
) -> None:
    adapter, emu = served
    emu.push(ServerError(status, should_retry=True))
    reply = await _complete(adapter, emu)
    assert reply.attempts == 2 and reply.output == RubricAnswer.model_validate(ANSWER)
    # our policy retried, not the SDK's (its retries are off: every request is its attempt 0)
    assert [r.headers.get("x-stainless-retry-count") for r in emu.requests] == ["0", "0"]


async def test_without_the_header_the_same_status_is_fatal_after_one_attempt(served: tuple[str, Any]) -> None:
    adapter, emu = served
    emu.push(ServerError(400))
    with pytest.raises(VendorError) as info:
        await _complete(adapter, emu)
    assert info.value.kind is ErrorKind.FATAL and len(emu.requests) == 1


async def test_should_retry_true_is_still_bounded_by_max_attempts(served: tuple[str, Any]) -> None:
    adapter, emu = served
    emu.push(*[ServerError(400, should_retry=True)] * 5)
    with pytest.raises(VendorError) as info:
        await _complete(adapter, emu)
    assert info.value.kind is ErrorKind.FATAL and info.value.attempts == 4 and len(emu.requests) == 4
