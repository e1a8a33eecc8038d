"""The three emulated batch APIs driven by the real SDKs: OpenAI files + batches on /v1/responses,
Anthropic message batches (absolute results_url), xAI BatchMgmt over gRPC. A batch ends only when
the emulator's clock says so (tests `advance` it: no sleeps), and partial failures and expiry
come back in each vendor's own shape."""

from __future__ import annotations

import json
from typing import Any, Literal

import anthropic
import openai
import pytest
import xai_sdk
from openai.lib._parsing._responses import type_to_text_format_param
from pydantic import BaseModel

from doubles.emulators import (
    AnthropicEmulator,
    BatchSettings,
    EmulatorConfig,
    OpenAIEmulator,
    StaticResponder,
    XAIEmulator,
)


class Verdict(BaseModel):
    verdict: Literal["met", "not_met"]
    reason: str


ANSWER = {"verdict": "met", "reason": "clause 4.2 is quoted verbatim"}
KEY = "batch-SENTINEL-key-0123456789"


def config(**batch: Any) -> EmulatorConfig:
    return EmulatorConfig(api_key=KEY, batch=BatchSettings(**batch))


def openai_line(custom_id: str, text: str) -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "method": "POST",
        "url": "/v1/responses",
        "body": {
            "model": "gpt-test",
            "instructions": "You grade.",
            "input": text,
            "text": {"format": type_to_text_format_param(Verdict)},
            "max_output_tokens": 512,
        },
    }


async def test_openai_batch_ends_only_when_the_clock_passes_its_completion_delay_and_joins_on_custom_id() -> None:
    async with OpenAIEmulator(config(completion_s=600, script=["succeeded", "errored"]),
                              responder=StaticResponder(ANSWER)) as emu:
        client = openai.AsyncOpenAI(api_key=KEY, base_url=emu.base_url, max_retries=0, _strict_response_validation=True)
        try:
            data = "\n".join(json.dumps(openai_line(f"c{i}", f"memo {i}")) for i in range(3)).encode()
            f = await client.files.create(file=("in.jsonl", data), purpose="batch")
            batch = await client.batches.create(
                input_file_id=f.id, endpoint="/v1/responses", completion_window="24h", metadata={"run": "r1"}
            )
            assert (await client.batches.retrieve(batch.id)).status == "in_progress"
            assert not emu.requests  # nothing answered before the batch ends
            emu.advance(600)
            done = await client.batches.retrieve(batch.id)
            assert done.status == "completed"
            assert done.request_counts is not None
            assert (done.request_counts.total, done.request_counts.completed, done.request_counts.failed) == (3, 2, 1)
            assert done.output_file_id and done.error_file_id
            out = [json.loads(x) for x in (await client.files.content(done.output_file_id)).text.splitlines()]
            err = [json.loads(x) for x in (await client.files.content(done.error_file_id)).text.splitlines()]
            assert sorted(x["custom_id"] for x in out) == ["c0", "c2"]
            body = out[0]["response"]["body"]
            assert Verdict.model_validate_json(body["output"][-1]["content"][0]["text"]).verdict == "met"
            assert body["usage"]["input_tokens"] > 0
            assert err[0]["custom_id"] == "c1" and err[0]["response"]["status_code"] == 500
            assert {r.path for r in emu.requests} == {"batch:/v1/responses"}  # answered by the same engine
            assert "memo 0" in emu.requests[0].user
        finally:
            await client.close()


async def test_openai_batch_past_its_window_expires_with_batch_expired_lines() -> None:
    async with OpenAIEmulator(config(completion_s=10_000, window_s=3_600), responder=StaticResponder(ANSWER)) as emu:
        client = openai.AsyncOpenAI(api_key=KEY, base_url=emu.base_url, max_retries=0, _strict_response_validation=True)
        try:
            f = await client.files.create(file=("in.jsonl", json.dumps(openai_line("a", "x")).encode()), purpose="batch")
            batch = await client.batches.create(input_file_id=f.id, endpoint="/v1/responses", completion_window="24h")
            emu.advance(3_600)
            done = await client.batches.retrieve(batch.id)
            assert done.status == "expired" and done.output_file_id is None
            [line] = [json.loads(x) for x in (await client.files.content(done.error_file_id or "")).text.splitlines()]
            assert line["response"] is None and line["error"]["code"] == "batch_expired"
        finally:
            await client.close()


async def test_openai_batch_endpoints_refuse_a_wrong_key() -> None:
    async with OpenAIEmulator(config(), responder=StaticResponder(ANSWER)) as emu:
        client = openai.AsyncOpenAI(api_key="wrong-key-000", base_url=emu.base_url, max_retries=0)
        try:
            with pytest.raises(openai.AuthenticationError):
                await client.files.create(file=("in.jsonl", b"{}"), purpose="batch")
        finally:
            await client.close()


async def test_anthropic_message_batch_results_follow_the_absolute_results_url_with_every_outcome() -> None:
    async with AnthropicEmulator(config(completion_s=60, script=["succeeded", "errored", "expired"]),
                                 responder=StaticResponder(ANSWER)) as emu:
        client = anthropic.AsyncAnthropic(api_key=KEY, base_url=emu.base_url, max_retries=0,
                                          _strict_response_validation=True)
        try:
            params = {
                "model": "claude-test",
                "max_tokens": 512,
                "system": "You grade.",
                "messages": [{"role": "user", "content": "memo"}],
                "output_config": {"format": {"type": "json_schema", "schema": anthropic.transform_schema(Verdict)}},
            }
            batch = await client.messages.batches.create(
                requests=[{"custom_id": f"r-{i}", "params": params} for i in range(3)]  # type: ignore[misc]
            )
            assert batch.processing_status == "in_progress" and batch.results_url is None
            emu.advance(60)
            ended = await client.messages.batches.retrieve(batch.id)
            assert ended.processing_status == "ended"
            assert ended.results_url == f"{emu.origin}/v1/messages/batches/{batch.id}/results"
            counts = ended.request_counts
            assert (counts.succeeded, counts.errored, counts.expired, counts.processing) == (1, 1, 1, 0)
            results = {item.custom_id: item.result async for item in await client.messages.batches.results(batch.id)}
            assert results["r-1"].type == "errored" and results["r-2"].type == "expired"
            ok = results["r-0"]
            assert ok.type == "succeeded"
            text = "".join(b.text for b in ok.message.content if b.type == "text")
            assert Verdict.model_validate_json(text).verdict == "met"
            assert ok.message.usage.input_tokens > 0
        finally:
            await client.close()


async def test_xai_batchmgmt_over_grpc_reports_state_results_and_half_price_cost() -> None:
    emu_cfg = config(completion_s=5, script=["succeeded", "errored"])
    async with XAIEmulator(emu_cfg, responder=StaticResponder(ANSWER)) as emu:
        client = xai_sdk.AsyncClient(api_key=KEY, api_host=emu.host, use_insecure_channel=True, timeout=5,
                                     channel_options=[("grpc.enable_retries", 0)])
        try:
            batch = await client.batch.create(batch_name="run-1")
            chats = []
            for i in range(2):
                chat = client.chat.create(model="grok-test", response_format=Verdict, batch_request_id=f"x{i}",
                                          max_tokens=512)
                chat.append(xai_sdk.chat.user(f"memo {i}"))
                chats.append(chat)
            await client.batch.add(batch_id=batch.batch_id, batch_requests=chats)
            state = (await client.batch.get(batch.batch_id)).state
            assert (state.num_requests, state.num_pending) == (2, 2)
            emu.advance(5)
            got = await client.batch.get(batch.batch_id)
            assert (got.state.num_pending, got.state.num_success, got.state.num_error) == (0, 1, 1)
            page = await client.batch.list_batch_results(batch.batch_id, limit=10)
            [ok] = page.succeeded
            [bad] = page.failed
            assert ok.batch_request_id == "x0" and bad.batch_request_id == "x1"
            assert Verdict.model_validate_json(ok.response.content).verdict == "met"
            u = ok.response.usage
            online = emu_cfg.price.cost(u.prompt_tokens, u.cached_prompt_text_tokens,
                                        u.completion_tokens + u.reasoning_tokens)
            assert ok.response.cost_usd == pytest.approx(online * 0.5, rel=1e-6)
            assert got.cost_breakdown.total_cost_usd_ticks > 0
        finally:
            await client.close()


async def test_a_cancelled_batch_ends_with_its_unprocessed_requests_cancelled_in_each_protocol() -> None:
    async with OpenAIEmulator(config(completion_s=600), responder=StaticResponder(ANSWER)) as emu:
        client = openai.AsyncOpenAI(api_key=KEY, base_url=emu.base_url, max_retries=0, _strict_response_validation=True)
        try:
            f = await client.files.create(file=("in.jsonl", json.dumps(openai_line("a", "x")).encode()), purpose="batch")
            batch = await client.batches.create(input_file_id=f.id, endpoint="/v1/responses", completion_window="24h")
            assert (await client.batches.cancel(batch.id)).status == "cancelling"
            done = await client.batches.retrieve(batch.id)
            assert done.status == "cancelled"
            [line] = [json.loads(x) for x in (await client.files.content(done.error_file_id or "")).text.splitlines()]
            assert line["error"]["code"] == "batch_cancelled"
        finally:
            await client.close()
    async with XAIEmulator(config(completion_s=600), responder=StaticResponder(ANSWER)) as emu:
        xclient = xai_sdk.AsyncClient(api_key=KEY, api_host=emu.host, use_insecure_channel=True, timeout=5,
                                      channel_options=[("grpc.enable_retries", 0)])
        try:
            b = await xclient.batch.create(batch_name="c")
            chat = xclient.chat.create(model="grok-test", response_format=Verdict, batch_request_id="only")
            chat.append(xai_sdk.chat.user("memo"))
            await xclient.batch.add(batch_id=b.batch_id, batch_requests=[chat])
            cancelled = await xclient.batch.cancel(b.batch_id)
            assert (cancelled.state.num_cancelled, cancelled.state.num_pending) == (1, 0)
            [failed] = (await xclient.batch.list_batch_results(b.batch_id)).failed
            assert failed.batch_request_id == "only" and not emu.requests
        finally:
            await xclient.close()
