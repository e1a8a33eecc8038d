"""The real openai SDK (retries off) against the OpenAI emulator: every scenario an adapter meets."""

from __future__ import annotations

import asyncio
import json
from typing import Literal

import openai
import pydantic
import pytest
from openai import AsyncOpenAI
from pydantic import BaseModel

from doubles.emulators import (
    AuthError,
    BrokenBody,
    EmulatedRequest,
    EmulatorConfig,
    FaultRates,
    FixedLatency,
    Hang,
    LognormalLatency,
    Malformed,
    OpenAIEmulator,
    Outcome,
    RateLimited,
    Reply,
    ScriptedResponder,
    ServerError,
    ServerLimits,
    StaticResponder,
    Truncated,
    UniformLatency,
)


class Verdict(BaseModel):
    verdict: Literal["met", "not_met"]
    reason: str


ANSWER = {"verdict": "met", "reason": "The memo quotes clause 4.2 verbatim."}
KEY = "sk-SENTINEL-never-print-me-0123456789"


_open_clients: list[AsyncOpenAI] = []


@pytest.fixture(autouse=True)
async def _close_clients():
    """Close every SDK client a test made, inside the test's own event loop."""
    yield
    while _open_clients:
        await _open_clients.pop().close()


def emulator(**cfg: object) -> OpenAIEmulator:
    return OpenAIEmulator(EmulatorConfig.model_validate(cfg), responder=StaticResponder(ANSWER))


def client(emu: OpenAIEmulator, timeout: float = 5.0, key: str = KEY) -> AsyncOpenAI:
    c = AsyncOpenAI(
        api_key=key, base_url=emu.base_url, max_retries=0, timeout=timeout, _strict_response_validation=True
    )
    _open_clients.append(c)
    return c


async def eventually(predicate, deadline_s: float = 3.0) -> bool:
    """Poll a condition another task makes true (server-side cancellation), with a deadline."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline_s
    while not predicate():
        if loop.time() > end:
            return False
        await asyncio.sleep(0.01)
    return True


async def parse(c: AsyncOpenAI, user: str = "Grade the memo.", **kw: object):
    return await c.responses.parse(
        model="gpt-test", instructions="You are a judge.", input=user, text_format=Verdict, **kw
    )


async def test_responses_parse_returns_the_model_usage_ids_and_rate_headers() -> None:
    async with emulator(reasoning_tokens={"medium": 512}) as emu:  # a fixed count: usage checked exactly
        c = client(emu)
        raw = await c.responses.with_raw_response.parse(
            model="gpt-test",
            instructions="You are a judge.",
            input="Grade the memo.",
            text_format=Verdict,
            reasoning={"effort": "medium"},
        )
        resp = raw.parse()
        assert resp.output_parsed == Verdict.model_validate(ANSWER)
        assert resp.status == "completed"
        assert resp.id.startswith("resp_")
        assert raw.headers["x-request-id"] == resp._request_id == emu.requests[0].request_id
        assert raw.headers["x-ratelimit-limit-requests"].isdigit()
        assert raw.headers["x-ratelimit-remaining-tokens"].isdigit()
        assert raw.headers["x-ratelimit-reset-requests"].endswith("s")
        u = resp.usage
        assert u is not None
        assert u.input_tokens == -(-len("You are a judge." + "Grade the memo.") // 4)
        assert u.output_tokens_details.reasoning_tokens == 512
        assert u.output_tokens == 512 + -(-len(json.dumps(ANSWER)) // 4)
        rec = emu.requests[0]
        assert (rec.path, rec.system, rec.user, rec.schema_name) == (
            "/v1/responses",
            "You are a judge.",
            "Grade the memo.",
            "Verdict",
        )
        assert rec.body["reasoning"] == {"effort": "medium"}
        assert rec.outcome == Outcome.OK and emu.stats.ok == 1


async def test_responses_input_message_list_joins_system_and_user_roles() -> None:
    seen: list[EmulatedRequest] = []

    def respond(req: EmulatedRequest) -> dict[str, str]:
        seen.append(req)
        return ANSWER

    async with OpenAIEmulator(responder=ScriptedResponder(respond)) as emu:
        resp = await client(emu).responses.parse(
            model="gpt-test",
            input=[
                {"role": "developer", "content": "Be strict."},
                {"role": "user", "content": [{"type": "input_text", "text": "Part one."}]},
                {"role": "user", "content": "Part two."},
            ],
            text_format=Verdict,
        )
    assert resp.output_parsed is not None
    assert seen[0].system == "Be strict."
    assert seen[0].user == "Part one.\n\nPart two."
    assert seen[0].json_schema is not None and seen[0].json_schema["properties"].keys() == {
        "verdict",
        "reason",
    }
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(seen[0]) and KEY not in repr(emu.requests[0])


async def test_chat_completions_parse_with_json_schema_response_format() -> None:
    async with emulator() as emu:
        c = client(emu)
        done = await c.chat.completions.parse(
            model="gpt-test",
            messages=[{"role": "system", "content": "Judge."}, {"role": "user", "content": "Memo text."}],
            response_format=Verdict,
        )
    msg = done.choices[0].message
    assert msg.parsed == Verdict.model_validate(ANSWER)
    assert done.choices[0].finish_reason == "stop"
    assert done.usage is not None and done.usage.prompt_tokens == 4  # ceil(len("Judge.Memo text.") / 4)
    assert emu.requests[0].schema_name == "Verdict" and emu.requests[0].path == "/v1/chat/completions"


async def test_scripted_429_carries_retry_after_and_rate_headers_then_next_call_succeeds() -> None:
    async with emulator(script=[RateLimited(retry_after=0.05)]) as emu:
        c = client(emu)
        with pytest.raises(openai.RateLimitError) as err:
            await parse(c)
        h = err.value.response.headers
        # whole seconds, at least 1, as the OpenAPI document types Retry-After; the exact wait in ms
        assert h["retry-after"] == "1" and h["retry-after-ms"] == "50"
        for name in ("limit", "remaining", "reset"):
            assert f"x-ratelimit-{name}-requests" in h and f"x-ratelimit-{name}-tokens" in h
        assert err.value.code == "rate_limit_exceeded" and err.value.type == "requests"
        assert err.value.request_id == emu.requests[0].request_id
        assert (await parse(c)).output_parsed is not None
    assert [r.outcome for r in emu.requests] == [Outcome.RATE_LIMITED, Outcome.OK]
    assert emu.stats.rate_limited == 1 and emu.stats.limit_rejections == 0


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_error_is_internal_server_error_with_server_error_type(status: int) -> None:
    async with emulator(script=[ServerError(status)]) as emu:
        c = client(emu)
        with pytest.raises(openai.InternalServerError) as err:
            await parse(c)
        assert err.value.status_code == status and err.value.type == "server_error"
        assert (await parse(c)).output_parsed is not None
    assert emu.stats.server_errors == 1 and emu.stats.ok == 1


async def test_malformed_output_raises_pydantic_validation_error_from_parse() -> None:
    async with emulator(script=[Malformed(), Reply({"verdict": "maybe", "reason": 3})]) as emu:
        c = client(emu)
        with pytest.raises(pydantic.ValidationError):
            await parse(c)
        with pytest.raises(pydantic.ValidationError):
            await parse(c)
    assert emu.stats.malformed == 1


async def test_truncated_output_is_length_error_in_chat_and_incomplete_in_responses() -> None:
    async with emulator(script=[Truncated(), Truncated()]) as emu:
        c = client(emu)
        with pytest.raises(openai.LengthFinishReasonError):
            await c.chat.completions.parse(
                model="gpt-test", messages=[{"role": "user", "content": "x"}], response_format=Verdict
            )
        raw = await c.responses.create(model="gpt-test", input="x")
        assert raw.status == "incomplete" and raw.incomplete_details is not None
        with pytest.raises(json.JSONDecodeError):
            json.loads(raw.output_text)
    assert emu.stats.truncated == 2


async def test_answer_longer_than_max_output_tokens_is_cut_at_the_limit() -> None:
    async with OpenAIEmulator(responder=StaticResponder("word " * 100)) as emu:
        resp = await client(emu).responses.create(model="gpt-test", input="x", max_output_tokens=16)
    assert resp.status == "incomplete" and len(resp.output_text) == 64
    assert emu.requests[0].outcome == Outcome.TRUNCATED


async def test_hang_times_the_client_out_and_the_handler_is_cancelled() -> None:
    async with emulator(script=[Hang(5)]) as emu:
        with pytest.raises(openai.APITimeoutError):
            await parse(client(emu, timeout=0.2))
        assert await eventually(lambda: emu.requests[0].cancelled)
        assert emu.stats.hangs == 1 and emu.stats.cancelled == 1


async def test_wrong_or_missing_key_is_authentication_error_without_the_key_in_it() -> None:
    async with emulator(api_key=KEY) as emu:
        with pytest.raises(openai.AuthenticationError) as err:
            await parse(client(emu, key="sk-wrong-key"))
        assert "sk-wrong-key" not in str(err.value) and KEY not in str(err.value)
        assert err.value.code == "invalid_api_key"
        assert (await parse(client(emu))).output_parsed is not None
    assert emu.stats.auth_errors == 1 and emu.stats.ok == 1


async def test_scripted_auth_error_is_401_even_with_the_right_key() -> None:
    async with emulator(script=[AuthError()]) as emu:
        with pytest.raises(openai.AuthenticationError):
            await parse(client(emu))


async def test_repeated_prefix_reports_cached_tokens() -> None:
    shared = "Source document. " * 800  # 13,600 chars: whole 128-token (512-char) steps of the prefix
    cached = (len("You are a judge.") + 1 + len(shared)) // 512 * 128  # instructions, separator, shared
    async with emulator() as emu:
        c = client(emu)
        first = await parse(c, user=shared + "Criterion A")
        second = await parse(c, user=shared + "Criterion B")
        other = await parse(c, user="Unrelated. " * 500)
    assert first.usage is not None and second.usage is not None and other.usage is not None
    assert first.usage.input_tokens_details.cached_tokens == 0
    assert second.usage.input_tokens_details.cached_tokens == cached == 3328
    assert other.usage.input_tokens_details.cached_tokens == 0
    assert emu.stats.cached_tokens == cached


async def test_server_rpm_limit_rejects_exactly_the_excess_of_a_burst() -> None:
    limit, extra = 5, 3
    async with emulator(limits=ServerLimits(requests_per_minute=limit)) as emu:
        c = client(emu)
        results = await asyncio.gather(*(parse(c) for _ in range(limit + extra)), return_exceptions=True)
    limited = [r for r in results if isinstance(r, openai.RateLimitError)]
    assert len(limited) == extra
    assert sum(isinstance(r, openai.types.responses.ParsedResponse) for r in results) == limit
    assert emu.stats.limit_rejections == extra
    h = limited[0].response.headers
    assert h["x-ratelimit-limit-requests"] == str(limit) and h["x-ratelimit-remaining-requests"] == "0"
    assert 0 < float(h["retry-after"]) <= 60 / limit


async def test_server_tpm_limit_rejects_a_request_with_tokens_scope() -> None:
    async with emulator(limits=ServerLimits(tokens_per_minute=1000)) as emu:
        c = client(emu)
        await parse(c, user="x" * 3600)  # ~900 input tokens + output
        with pytest.raises(openai.RateLimitError) as err:
            await parse(c, user="x" * 400)
    assert err.value.type == "tokens"


async def test_fault_injection_is_reproducible_for_a_seed() -> None:
    faults = FaultRates(rate_limit=0.2, server_error=0.2, malformed=0.2)

    async def outcomes(seed: int) -> list[Outcome]:
        async with emulator(faults=faults, seed=seed) as emu:
            c = client(emu)
            for _ in range(20):
                try:
                    await parse(c)
                except (openai.APIStatusError, pydantic.ValidationError):
                    pass
            return [r.outcome for r in emu.requests]

    first, again, other = await outcomes(7), await outcomes(7), await outcomes(8)
    assert first == again
    assert first != other
    assert {Outcome.OK, Outcome.RATE_LIMITED, Outcome.SERVER_ERROR, Outcome.MALFORMED} <= set(first)


async def test_broken_body_makes_the_sdk_fail_to_decode() -> None:
    async with emulator(script=[BrokenBody()]) as emu:
        with pytest.raises(json.JSONDecodeError):
            await client(emu).responses.create(model="gpt-test", input="x")


async def test_non_json_request_body_is_a_400_bad_request() -> None:
    async with emulator() as emu:
        c = client(emu)
        with pytest.raises(openai.BadRequestError):
            await c.post("/responses", body="not json", cast_to=dict)  # type: ignore[arg-type]
    assert emu.stats.bad_requests == 1


async def test_max_recorded_bounds_the_request_log_but_stats_count_everything() -> None:
    async with emulator(max_recorded=2) as emu:
        c = client(emu)
        for i in range(5):
            await parse(c, user=f"call {i}")
    assert emu.stats.requests == 5
    assert 2 <= len(emu.requests) < 4 and emu.requests[-1].user == "call 4"


@pytest.mark.parametrize(
    ("latency", "lo", "hi"),
    [
        (UniformLatency(0.1, 0.3), 0.1, 0.3),
        (LognormalLatency(median=0.2, sigma=1.0, cap=0.5), 0.0, 0.5),
        (FixedLatency(0.25), 0.25, 0.25),
    ],
)
def test_latency_samples_are_reproducible_for_a_seed_and_within_their_bounds(latency, lo, hi) -> None:
    def draws(seed: int) -> list[float]:
        emu = OpenAIEmulator(EmulatorConfig(latency=latency, seed=seed))
        return [emu.engine._sample_latency() for _ in range(50)]

    first = draws(1)
    assert first == draws(1)
    assert all(lo <= x <= hi for x in first)
    if not isinstance(latency, FixedLatency):
        assert first != draws(2) and len(set(first)) > 25
