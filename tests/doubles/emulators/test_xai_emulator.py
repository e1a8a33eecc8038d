"""The real xai-sdk (gRPC retries off) against the xAI emulator."""

from __future__ import annotations

import asyncio
import json
from typing import Literal

import grpc
import pydantic
import pytest
import xai_sdk
from pydantic import BaseModel
from xai_sdk.chat import system, user

from doubles.emulators import (
    EmulatorConfig,
    Hang,
    Malformed,
    Outcome,
    RateLimited,
    ServerError,
    ServerLimits,
    StaticResponder,
    Truncated,
    XAIEmulator,
)
from evalcore.config.models import Price


class Verdict(BaseModel):
    verdict: Literal["met", "not_met"]
    reason: str


ANSWER = {"verdict": "met", "reason": "The memo quotes clause 4.2 verbatim."}
KEY = "xai-SENTINEL-never-print-me-0123456789"
_open_clients: list[xai_sdk.AsyncClient] = []


@pytest.fixture(autouse=True)
async def _close_clients():
    """Close every SDK client a test made, inside the test's own event loop."""
    yield
    while _open_clients:
        await _open_clients.pop().close()


def emulator(**cfg: object) -> XAIEmulator:
    return XAIEmulator(EmulatorConfig.model_validate(cfg), responder=StaticResponder(ANSWER))


def client(emu: XAIEmulator, key: str = KEY, timeout: float = 5) -> xai_sdk.AsyncClient:
    c = xai_sdk.AsyncClient(
        api_key=key,
        api_host=emu.host,
        use_insecure_channel=True,
        timeout=timeout,
        channel_options=[("grpc.enable_retries", 0)],
    )
    _open_clients.append(c)
    return c


async def parse(c: xai_sdk.AsyncClient, prompt: str = "Grade the memo.", **kw: object):
    chat = c.chat.create(model="grok-test", messages=[system("Judge."), user(prompt)], **kw)  # type: ignore[arg-type]
    return await chat.parse(Verdict)


async def test_parse_returns_the_model_usage_cost_and_assistant_output() -> None:
    price = Price(input=3.0, cached_input=0.75, output=15.0)
    async with emulator(api_key=KEY, price=price, reasoning_tokens={"high": 2048}) as emu:  # a fixed count
        resp, obj = await parse(client(emu), reasoning_effort="high")
    assert obj == Verdict.model_validate(ANSWER)
    assert resp.finish_reason == "REASON_STOP" and resp.id == emu.requests[0].request_id
    u = resp.usage
    assert u.prompt_tokens == 6 and u.cached_prompt_text_tokens == 0
    assert u.reasoning_tokens == 2048 and u.completion_tokens == -(-len(json.dumps(ANSWER)) // 4)
    expected_usd = price.cost(u.prompt_tokens, 0, u.completion_tokens + u.reasoning_tokens)
    assert resp.cost_usd == pytest.approx(expected_usd, abs=1e-9)
    rec = emu.requests[0]
    assert rec.headers["authorization"] == f"Bearer {KEY}" and KEY not in repr(rec)
    assert (rec.path, rec.system, rec.user, rec.schema_name) == (
        "/xai_api.Chat/GetCompletion",
        "Judge.",
        "Grade the memo.",
        "Verdict",
    )
    assert rec.body["model"] == "grok-test"


async def test_rate_limit_is_resource_exhausted_with_trailing_retry_after_then_ok() -> None:
    async with emulator(script=[RateLimited(retry_after=0.05)]) as emu:
        c = client(emu)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await parse(c)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        trailing = dict(err.value.trailing_metadata() or ())
        assert trailing["retry-after"] == "0.05"
        assert "x-ratelimit-remaining-requests" in trailing
        _, obj = await parse(c)
        assert obj.verdict == "met"
    assert [r.outcome for r in emu.requests] == [Outcome.RATE_LIMITED, Outcome.OK]


@pytest.mark.parametrize(
    ("status", "code"),
    [(503, grpc.StatusCode.UNAVAILABLE), (529, grpc.StatusCode.UNAVAILABLE), (500, grpc.StatusCode.INTERNAL)],
)
async def test_server_errors_are_unavailable_or_internal(status: int, code: grpc.StatusCode) -> None:
    async with emulator(script=[ServerError(status)]) as emu:
        c = client(emu)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await parse(c)
        assert err.value.code() == code
        assert (await parse(c))[1].verdict == "met"
    assert len(emu.requests) == 2  # gRPC retries really are off


async def test_malformed_output_raises_validation_error_from_parse() -> None:
    async with emulator(script=[Malformed()]) as emu:
        with pytest.raises(pydantic.ValidationError):
            await parse(client(emu))


async def test_truncated_output_is_reason_max_len() -> None:
    async with emulator(script=[Truncated()]) as emu:
        chat = client(emu).chat.create(model="grok-test", messages=[user("x")])
        resp = await chat.sample()
    assert resp.finish_reason == "REASON_MAX_LEN"
    assert json.dumps(ANSWER).startswith(resp.content) and resp.content != json.dumps(ANSWER)


async def test_hang_is_cut_by_the_caller_timeout_and_the_rpc_cancelled() -> None:
    async with emulator(script=[Hang(5)]) as emu:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(parse(client(emu)), 0.2)
        loop = asyncio.get_running_loop()
        end = loop.time() + 60.0  # a hang guard: the loop ends as soon as the server sees the cancel
        while not emu.requests[0].cancelled and loop.time() < end:
            await asyncio.sleep(0.01)  # polling the server-side cancellation, with a deadline
        assert emu.requests[0].cancelled and emu.stats.hangs == 1


async def test_wrong_key_is_unauthenticated_without_the_key_in_details() -> None:
    async with emulator(api_key=KEY) as emu:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await parse(client(emu, key="xai-wrong-key"))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "xai-wrong-key" not in str(err.value) and KEY not in str(err.value)


async def test_repeated_prefix_reports_cached_prompt_text_tokens() -> None:
    shared = "Source document. " * 800
    async with emulator() as emu:
        c = client(emu)
        first, _ = await parse(c, shared + "Criterion A")
        second, _ = await parse(c, shared + "Criterion B")
    assert first.usage.cached_prompt_text_tokens == 0
    assert second.usage.cached_prompt_text_tokens == (len("Judge.") + 1 + len(shared)) // 512 * 128
    assert second.cost_usd is not None and first.cost_usd is not None and second.cost_usd < first.cost_usd


async def test_server_rpm_limit_rejects_exactly_the_excess_of_a_burst() -> None:
    async with emulator(limits=ServerLimits(requests_per_minute=6)) as emu:
        c = client(emu)
        results = await asyncio.gather(*(parse(c) for _ in range(10)), return_exceptions=True)
    errors = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert len(errors) == 4 and all(e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED for e in errors)
    assert emu.stats.limit_rejections == 4 and emu.stats.ok == 6


async def test_a_burst_of_1200_concurrent_calls_is_served_without_cancellations() -> None:
    async with emulator() as emu:
        # the claim is that the emulator cancels none of them, not how fast both ends (in this one
        # process) get through 1,200 calls: beside two CPU burners that took over 5 s, and the gRPC
        # deadline cut 447 of them. The deadline is a hang guard here.
        c = client(emu, timeout=600)
        results = await asyncio.gather(*(parse(c) for _ in range(1200)), return_exceptions=True)
    assert [r for r in results if isinstance(r, BaseException)] == []
    assert emu.stats.ok == 1200
