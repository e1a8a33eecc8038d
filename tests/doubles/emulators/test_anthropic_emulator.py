"""The real anthropic SDK (retries off) against the Anthropic emulator."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Literal

import anthropic
import pydantic
import pytest
from anthropic import AsyncAnthropic
from pydantic import BaseModel

from doubles.emulators import (
    AnthropicEmulator,
    EmulatorConfig,
    Hang,
    Malformed,
    Outcome,
    RateLimited,
    ServerError,
    ServerLimits,
    StaticResponder,
    Truncated,
)


class Verdict(BaseModel):
    verdict: Literal["met", "not_met"]
    reason: str


ANSWER = {"verdict": "met", "reason": "The memo quotes clause 4.2 verbatim."}
KEY = "sk-ant-SENTINEL-never-print-me-0123456789"
MSGS = [{"role": "user", "content": "Grade the memo."}]


_open_clients: list[AsyncAnthropic] = []


@pytest.fixture(autouse=True)
async def _close_clients():
    """Close every SDK client a test made, inside the test's own event loop."""
    yield
    while _open_clients:
        await _open_clients.pop().close()


def emulator(**cfg: object) -> AnthropicEmulator:
    return AnthropicEmulator(EmulatorConfig.model_validate(cfg), responder=StaticResponder(ANSWER))


def client(emu: AnthropicEmulator, timeout: float = 5.0, key: str = KEY) -> AsyncAnthropic:
    c = AsyncAnthropic(
        api_key=key, base_url=emu.base_url, max_retries=0, timeout=timeout, _strict_response_validation=True
    )
    _open_clients.append(c)
    return c


async def parse(c: AsyncAnthropic, **kw: object):
    args: dict[str, object] = {
        "model": "claude-test",
        "max_tokens": 1024,
        "messages": MSGS,
        "system": "Judge.",
    }
    args.update(kw)
    return await c.messages.parse(output_format=Verdict, **args)  # type: ignore[arg-type]


async def test_messages_parse_returns_the_model_with_bearer_auth_and_schema_title() -> None:
    async with emulator(api_key=KEY) as emu:
        msg = await parse(client(emu))
    assert msg.parsed_output == Verdict.model_validate(ANSWER)
    assert msg.stop_reason == "end_turn" and msg.id.startswith("msg_")
    assert msg._request_id == emu.requests[0].request_id
    rec = emu.requests[0]
    assert rec.headers["authorization"] == f"Bearer {KEY}" and "x-api-key" not in rec.headers
    assert (rec.system, rec.user, rec.schema_name) == ("Judge.", "Grade the memo.", "Verdict")
    assert rec.body["output_config"]["format"]["type"] == "json_schema"
    assert msg.usage.input_tokens == 6 and msg.usage.cache_read_input_tokens == 0


async def test_raw_create_has_request_id_and_anthropic_ratelimit_headers() -> None:
    async with emulator(limits=ServerLimits(requests_per_minute=50, tokens_per_minute=40_000)) as emu:
        raw = await client(emu).messages.with_raw_response.create(
            model="claude-test",
            max_tokens=256,
            messages=MSGS,  # type: ignore[arg-type]
            output_config={"format": {"type": "json_schema", "schema": Verdict.model_json_schema()}},
        )
        msg = await raw.parse()
    assert json.loads(msg.content[0].text) == ANSWER  # type: ignore[union-attr]
    h = raw.headers
    assert h["request-id"] == emu.requests[0].request_id
    assert (
        h["anthropic-ratelimit-requests-limit"] == "50"
        and h["anthropic-ratelimit-requests-remaining"] == "49"
    )
    assert h["anthropic-ratelimit-tokens-limit"] == "40000"
    for kind in ("requests", "tokens", "input-tokens", "output-tokens"):
        datetime.fromisoformat(h[f"anthropic-ratelimit-{kind}-reset"])  # RFC 3339


async def test_forced_tool_style_returns_a_tool_use_block_with_the_answer_as_input() -> None:
    tool = {"name": "record_verdict", "input_schema": Verdict.model_json_schema()}
    async with emulator() as emu:
        msg = await client(emu).messages.create(
            model="claude-test",
            max_tokens=256,
            messages=MSGS,  # type: ignore[arg-type]
            tools=[tool],  # type: ignore[list-item]
            tool_choice={"type": "tool", "name": "record_verdict"},
        )
    block = msg.content[0]
    assert block.type == "tool_use" and block.name == "record_verdict" and block.input == ANSWER
    assert msg.stop_reason == "tool_use"
    assert emu.requests[0].schema_name == "Verdict"


async def test_scripted_429_is_rate_limit_error_with_retry_after_and_body_shape() -> None:
    async with emulator(script=[RateLimited(retry_after=0.05)]) as emu:
        c = client(emu)
        with pytest.raises(anthropic.RateLimitError) as err:
            await parse(c)
        assert err.value.response.headers["retry-after"] == "0.05"
        assert "anthropic-ratelimit-requests-remaining" in err.value.response.headers
        assert err.value.type == "rate_limit_error"
        assert err.value.body == {
            "type": "error",
            "error": {"type": "rate_limit_error", "message": err.value.body["error"]["message"]},  # type: ignore[index]
            "request_id": emu.requests[0].request_id,
        }
        assert err.value.request_id == emu.requests[0].request_id
        assert (await parse(c)).parsed_output is not None
    assert [r.outcome for r in emu.requests] == [Outcome.RATE_LIMITED, Outcome.OK]


@pytest.mark.parametrize(
    ("status", "exc", "type_"),
    [
        (500, anthropic.InternalServerError, "api_error"),
        (504, anthropic.InternalServerError, "timeout_error"),
        (529, anthropic.OverloadedError, "overloaded_error"),
    ],
)
async def test_server_errors_map_to_the_sdk_classes_and_error_types(
    status: int, exc: type, type_: str
) -> None:
    async with emulator(script=[ServerError(status)]) as emu:
        c = client(emu)
        with pytest.raises(exc) as err:
            await parse(c)
        assert err.value.status_code == status and err.value.type == type_
        assert (await parse(c)).parsed_output is not None


async def test_malformed_output_raises_validation_error_from_parse() -> None:
    async with emulator(script=[Malformed()]) as emu:
        with pytest.raises(pydantic.ValidationError):
            await parse(client(emu))


async def test_truncated_output_stops_with_max_tokens_and_fails_validation() -> None:
    async with emulator(script=[Truncated()]) as emu:
        c = client(emu)
        raw = await c.messages.create(model="claude-test", max_tokens=256, messages=MSGS)  # type: ignore[arg-type]
        assert raw.stop_reason == "max_tokens"
        assert json.dumps(ANSWER).startswith(raw.content[0].text)  # type: ignore[union-attr]
        assert emu.stats.truncated == 1


async def test_hang_times_the_client_out() -> None:
    async with emulator(script=[Hang(5)]) as emu:
        with pytest.raises(anthropic.APITimeoutError):
            await parse(client(emu, timeout=0.2))
        assert emu.stats.hangs == 1


async def test_wrong_key_is_authentication_error_naming_no_key() -> None:
    async with emulator(api_key=KEY) as emu:
        with pytest.raises(anthropic.AuthenticationError) as err:
            await parse(client(emu, key="sk-ant-wrong"))
    assert "sk-ant-wrong" not in str(err.value) and KEY not in str(err.value)
    assert err.value.type == "authentication_error"


async def test_cache_control_prefix_is_written_then_read_and_input_tokens_exclude_it() -> None:
    shared = "Source document. " * 800  # 3,400 tokens up to the breakpoint, all cacheable

    def msgs(criterion: str) -> list[dict[str, object]]:
        return [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": shared, "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": criterion},
                ],
            }
        ]

    async with emulator() as emu:
        c = client(emu)
        first = await parse(c, messages=msgs("Criterion A"), system="")
        second = await parse(c, messages=msgs("Criterion B"), system="")
    total = -(-len(shared + "Criterion A") // 4)  # text parts are joined without a separator
    prefix = -(-len(shared) // 4)  # exactly the prefix up to the breakpoint, not the criterion after it
    assert first.usage.cache_creation_input_tokens == prefix and first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == prefix and second.usage.cache_creation_input_tokens == 0
    for m in (first, second):
        u = m.usage
        assert (
            u.input_tokens + (u.cache_read_input_tokens or 0) + (u.cache_creation_input_tokens or 0) == total
        )


async def test_without_cache_control_nothing_is_cached() -> None:
    shared = "Source document. " * 800
    async with emulator() as emu:
        c = client(emu)
        await parse(c, messages=[{"role": "user", "content": shared + "A"}])
        second = await parse(c, messages=[{"role": "user", "content": shared + "B"}])
    assert second.usage.cache_read_input_tokens == 0


async def test_server_rpm_limit_rejects_exactly_the_excess_of_a_burst() -> None:
    import asyncio

    async with emulator(limits=ServerLimits(requests_per_minute=4)) as emu:
        c = client(emu)
        results = await asyncio.gather(*(parse(c) for _ in range(7)), return_exceptions=True)
    assert sum(isinstance(r, anthropic.RateLimitError) for r in results) == 3
    assert emu.stats.limit_rejections == 3 and emu.stats.ok == 4
