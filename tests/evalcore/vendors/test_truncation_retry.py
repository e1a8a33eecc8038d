"""A verdict is never lost to the output-token cap: an answer that stops at its cap is retried once
with a doubled cap, and the truncated attempt is its own paid row. Through the real SDKs (openai
Responses, anthropic Messages, xai-sdk gRPC) against the emulators, loopback only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import SecretStr

from doubles.emulators import (
    AnthropicEmulator,
    EmulatorConfig,
    OpenAIEmulator,
    ServerError,
    StaticResponder,
    Truncated,
    XAIEmulator,
)
from evalcore.config.models import VendorConfig
from evalcore.errors import ErrorKind, VendorError
from evalcore.grading.calls import GradingContext, call_rows
from evalcore.schema import RubricAnswer
from evalcore.vendors.registry import create_vendor
from tests.evalcore.vendors._vendor_contract import ANSWER, KEY, PRICE, judge_request

CTX = GradingContext("run-1", "g-1", "sys::area/task", "sys", "area/task", "area")
CAP_FIELD = {"openai": "max_output_tokens", "anthropic": "max_tokens", "xai": "max_tokens"}
"""Where each vendor's request carries the output cap."""
EMULATORS: dict[str, Any] = {"openai": OpenAIEmulator, "anthropic": AnthropicEmulator, "xai": XAIEmulator}
KEY_ENV = "TRIBUNAL_TEST_TRUNCATION_KEY"


def _config(adapter: str, emu: Any, **overrides: Any) -> VendorConfig:
    endpoint = f"http://{emu.host}" if adapter == "xai" else str(emu.base_url)
    data: dict[str, Any] = {
        "adapter": adapter, "name": adapter, "family": adapter, "model": f"{adapter}-test-model",
        "endpoint": endpoint, "api_key_env": KEY_ENV, "timeout_s": 5.0, "max_output_tokens": 400,
        "limits": {"requests_per_minute": 60_000, "tokens_per_minute": 100_000_000}, "price": PRICE,
        "retry": {"max_attempts": 4, "deadline_s": 30.0, "base_delay_s": 0.01, "max_delay_s": 0.05,
                  "bad_output_retries": 0},
    }
    data.update(overrides)
    return VendorConfig.model_validate(data)


@pytest.fixture(params=["openai", "anthropic", "xai"])
async def served(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[str, Any]]:
    monkeypatch.setenv(KEY_ENV, KEY)
    adapter: str = request.param
    async with EMULATORS[adapter](EmulatorConfig(api_key=SecretStr(KEY)), responder=StaticResponder(ANSWER)) as emu:
        yield adapter, emu


async def _complete(cfg: VendorConfig) -> Any:
    vendor = create_vendor(cfg)
    try:
        return await vendor.complete(judge_request(), RubricAnswer)
    finally:
        await vendor.aclose()


async def test_an_answer_stopped_at_its_cap_is_retried_once_with_a_doubled_cap_and_its_answer_is_the_verdict(
    served: tuple[str, Any],
) -> None:
    adapter, emu = served
    emu.push(Truncated())
    cfg = _config(adapter, emu)
    reply = await _complete(cfg)
    assert reply.output == RubricAnswer.model_validate(ANSWER)
    assert [r.body[CAP_FIELD[adapter]] for r in emu.requests] == [400, 800]
    assert reply.attempts == 2 and len(reply.earlier) == 1
    # the truncated attempt was billed: the reply's totals hold both attempts
    assert reply.usage.input_tokens == sum(r.usage.input_tokens for r in emu.requests)


async def test_the_truncated_attempt_is_its_own_paid_row_and_the_rows_add_up_to_the_call(
    served: tuple[str, Any],
) -> None:
    adapter, emu = served
    emu.push(Truncated())
    cfg = _config(adapter, emu)
    request = judge_request()
    reply = await _complete(cfg)
    truncated, answered = call_rows(CTX, cfg, request, reply, criterion_id="C-1")
    assert (truncated.outcome, truncated.max_output_tokens, truncated.attempts) == ("truncated", 400, 1)
    assert truncated.cost_usd > 0 and truncated.response_json is None
    assert "800-token cap" in (truncated.error or "")
    assert (answered.outcome, answered.max_output_tokens, answered.attempts) == ("ok", 800, 1)
    assert truncated.request_hash == answered.request_hash == request.request_hash
    assert truncated.cost_usd + answered.cost_usd == pytest.approx(reply.cost_usd)
    first, second = emu.requests
    assert (truncated.input_tokens, answered.input_tokens) == (first.usage.input_tokens, second.usage.input_tokens)
    assert truncated.output_tokens + answered.output_tokens == reply.usage.output_tokens
    assert truncated.ended_at <= answered.started_at <= answered.ended_at


async def test_a_second_stop_at_the_cap_is_a_final_bad_output_and_the_first_keeps_its_own_row(
    served: tuple[str, Any],
) -> None:
    adapter, emu = served
    emu.push(Truncated(), Truncated())
    cfg = _config(adapter, emu, retry={"max_attempts": 6, "deadline_s": 30.0, "base_delay_s": 0.01,
                                      "max_delay_s": 0.05, "bad_output_retries": 3})
    with pytest.raises(VendorError) as info:
        await _complete(cfg)
    err = info.value
    # retried once only, whatever the bad-output allowance: a second cap would be a runaway
    assert err.kind is ErrorKind.BAD_OUTPUT and err.attempts == 2 and len(emu.requests) == 2
    rows = call_rows(CTX, cfg, judge_request(), err)
    assert [(r.outcome, r.max_output_tokens) for r in rows] == [("truncated", 400), ("bad_output", 800)]
    assert sum(r.cost_usd for r in rows) == pytest.approx(err.cost_usd) and rows[1].cost_usd > 0


async def test_the_larger_cap_is_kept_for_retries_of_other_failures_after_a_truncation(
    served: tuple[str, Any],
) -> None:
    adapter, emu = served
    emu.push(Truncated(), ServerError(503))
    reply = await _complete(_config(adapter, emu))
    assert [r.body[CAP_FIELD[adapter]] for r in emu.requests] == [400, 800, 800]
    assert reply.attempts == 3 and len(reply.earlier) == 1


async def test_an_openai_answer_whose_reasoning_fills_max_output_tokens_is_retried_and_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not scripted: the emulator counts reasoning inside `max_output_tokens`, as OpenAI does, and a
    call that reasons 600 tokens under a 400-token cap ends `incomplete` (max_output_tokens)."""
    monkeypatch.setenv(KEY_ENV, KEY)
    config = EmulatorConfig.model_validate({"api_key": KEY, "reasoning_tokens": {"high": 600}})
    async with OpenAIEmulator(config, responder=StaticResponder(ANSWER)) as emu:
        reply = await _complete(_config("openai", emu, reasoning_effort="high"))
        caps = [r.body["max_output_tokens"] for r in emu.requests]
    assert caps == [400, 800]
    assert reply.output == RubricAnswer.model_validate(ANSWER)
    assert reply.earlier[0].usage["output_tokens"] == 400  # the whole cap was spent, and billed
