"""OpenAI's batch queue limit in the emulator, read through the real SDK: a batch that would take a
model's enqueued input tokens over the limit is accepted (validating), then reads failed with
`token_limit_exceeded` and is never processed or billed; the limit is per model, counts only
batches that have not ended, and the emulator keeps its own record of the most it held."""

from __future__ import annotations

import json
from typing import Any, Literal

import openai
import pytest
from openai.lib._parsing._responses import type_to_text_format_param
from pydantic import BaseModel, SecretStr, ValidationError

from doubles.emulators import BatchSettings, EmulatorConfig, OpenAIEmulator, StaticResponder


class Verdict(BaseModel):
    verdict: Literal["met", "not_met"]
    reason: str


ANSWER = {"verdict": "met", "reason": "quoted"}
KEY = "queue-limit-key-0123456789"
TEXT = "x" * 396  # with the 4-character instructions: 400 characters, 100 tokens at 4 per token


def line(custom_id: str, model: str = "gpt-test") -> dict[str, Any]:
    return {"custom_id": custom_id, "method": "POST", "url": "/v1/responses",
            "body": {"model": model, "instructions": "Gr: ", "input": TEXT,
                     "text": {"format": type_to_text_format_param(Verdict)}, "max_output_tokens": 64}}


async def create(client: openai.AsyncOpenAI, ids: list[str], model: str = "gpt-test") -> Any:
    data = "\n".join(json.dumps(line(i, model)) for i in ids).encode()
    upload = await client.files.create(file=("in.jsonl", data), purpose="batch")
    return await client.batches.create(input_file_id=upload.id, endpoint="/v1/responses", completion_window="24h")


def emulator(**batch: Any) -> OpenAIEmulator:
    return OpenAIEmulator(EmulatorConfig(api_key=SecretStr(KEY), batch=BatchSettings(**batch)), responder=StaticResponder(ANSWER))


def sdk(emu: OpenAIEmulator) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key=KEY, base_url=emu.base_url, max_retries=0, _strict_response_validation=True)


async def test_a_batch_over_the_enqueued_token_limit_is_accepted_then_fails_with_token_limit_exceeded() -> None:
    async with emulator(completion_s=600, max_enqueued_tokens=500) as emu:
        client = sdk(emu)
        try:
            first = await create(client, [f"a{i}" for i in range(3)])  # 300 tokens: fits
            assert first.status == "in_progress"
            over = await create(client, [f"b{i}" for i in range(3)])  # 300 more would make 600 > 500
            assert over.status == "validating" and over.errors is None  # accepted, as the vendor does
            failed = await client.batches.retrieve(over.id)
            assert failed.status == "failed" and failed.failed_at is not None
            assert failed.errors is not None and failed.errors.data is not None
            [error] = failed.errors.data
            assert error.code == "token_limit_exceeded"
            assert error.message == ("Enqueued token limit reached for gpt-test in organization org-emulated. "
                                     "Limit: 500 enqueued tokens. Please try again once some in_progress batches "
                                     "have been completed.")
            assert failed.output_file_id is None and failed.error_file_id is None
            assert failed.request_counts is not None and failed.request_counts.total == 0
            emu.advance(600)  # the first batch ends; the refused one is never processed
            assert (await client.batches.retrieve(first.id)).status == "completed"
            assert (await client.batches.retrieve(over.id)).status == "failed"
            listed = {b.id: b.status async for b in client.batches.list()}
            assert listed == {first.id: "completed", over.id: "failed"}
        finally:
            await client.close()
        store = emu.batches
        assert store.refusals == [over.id]
        assert store.max_enqueued["gpt-test"] == 300
        assert set(store.billed) == {"a0", "a1", "a2"} and set(store.submitted) == {f"{p}{i}" for p in "ab" for i in range(3)}
        assert {r.path for r in emu.requests} == {"batch:/v1/responses"} and len(emu.requests) == 3


async def test_the_limit_counts_only_batches_that_have_not_ended_and_only_of_the_same_model() -> None:
    async with emulator(completion_s=60, max_enqueued_tokens=500, max_enqueued_tokens_by_model={"gpt-big": 1000}) as emu:
        client = sdk(emu)
        try:
            await create(client, [f"a{i}" for i in range(5)])  # 500: exactly the limit
            other = await create(client, [f"m{i}" for i in range(8)], model="gpt-big")  # its own queue, limit 1000
            assert (await client.batches.retrieve(other.id)).status == "in_progress"
            emu.advance(60)  # every batch so far is due: it ends on its own, giving its room back
            again = await create(client, [f"c{i}" for i in range(5)])
            assert (await client.batches.retrieve(again.id)).status == "in_progress"
        finally:
            await client.close()
        assert emu.batches.refusals == []
        assert emu.batches.max_enqueued == {"gpt-test": 500, "gpt-big": 800}


async def test_without_a_limit_nothing_is_refused() -> None:
    async with emulator(completion_s=600) as emu:
        client = sdk(emu)
        try:
            for n in range(3):
                batch = await create(client, [f"{n}-{i}" for i in range(20)])
                assert (await client.batches.retrieve(batch.id)).status == "in_progress"
        finally:
            await client.close()
        assert emu.batches.refusals == [] and emu.batches.max_enqueued["gpt-test"] == 6000


def test_a_limit_must_be_positive() -> None:
    with pytest.raises(ValidationError):
        BatchSettings(max_enqueued_tokens=0)
    with pytest.raises(ValidationError):
        BatchSettings(max_enqueued_tokens_by_model={"m": 0})
