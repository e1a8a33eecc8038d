"""The emulators keep and delete data as the vendors do, driven by the real SDKs: OpenAI `store`
(responses and chat completions), files (list, delete, `expires_after`, a batch's
`output_expires_after`), Anthropic message batches (delete once ended, list, 29-day archiving), xAI
`store_messages` and its batches (listed, never deletable); and each emulator logs the retention
settings of every body it received. Expiry runs on the emulator's clock (`advance`): no sleeps."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import anthropic
import grpc
import openai
import pytest
import xai_sdk
from xai_sdk.chat import user
from xai_sdk.proto import batch_pb2

from doubles.emulators import (
    AnthropicEmulator,
    BatchSettings,
    EmulatorConfig,
    OpenAIEmulator,
    StaticResponder,
    XAIEmulator,
    start_in_thread,
)

ANSWER = {"verdict": "met", "reason": "clause 4.2 is quoted verbatim"}
KEY = "retention-SENTINEL-key-0123456789"
DAY = 86_400.0


def config(**batch: Any) -> EmulatorConfig:
    return EmulatorConfig(api_key=KEY, batch=BatchSettings(**batch))


def openai_client(emu: OpenAIEmulator) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key=KEY, base_url=emu.base_url, max_retries=0, _strict_response_validation=True)


def anthropic_client(emu: AnthropicEmulator) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key=KEY, base_url=emu.base_url, max_retries=0,
                                    _strict_response_validation=True)


def xai_client(host: str) -> xai_sdk.AsyncClient:
    return xai_sdk.AsyncClient(api_key=KEY, api_host=host, use_insecure_channel=True, timeout=5,
                               channel_options=[("grpc.enable_retries", 0)])


def batch_line(custom_id: str, text: str, **extra: Any) -> str:
    body = {"model": "gpt-test", "instructions": "You grade.", "input": text, **extra}
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": "/v1/responses", "body": body})


async def upload(client: openai.AsyncOpenAI, *lines: str, **kw: Any) -> openai.types.FileObject:
    return await client.files.create(file=("in.jsonl", ("\n".join(lines) + "\n").encode()), purpose="batch", **kw)


# -- OpenAI: store ---------------------------------------------------------------------------------


async def test_openai_response_is_stored_by_default_and_retrievable_but_not_with_store_false() -> None:
    async with OpenAIEmulator(config(), responder=StaticResponder(ANSWER)) as emu:
        async with openai_client(emu) as client:
            kept = await client.responses.create(model="gpt-test", input="the confidential memo")
            unkept = await client.responses.create(model="gpt-test", input="another memo", store=False)
            # not echoed: OpenAI's Response object (its OpenAPI document, the SDK's type) has no `store`
            assert "store" not in kept.to_dict() and "store" not in unkept.to_dict()

            again = await client.responses.retrieve(kept.id)
            assert again.id == kept.id and again.output_text == kept.output_text
            items = [item async for item in client.responses.input_items.list(kept.id)]
            assert [(i.type, i.to_dict()["content"][0]["text"]) for i in items] == [("message", "the confidential memo")]
            with pytest.raises(openai.NotFoundError):
                await client.responses.retrieve(unkept.id)
            with pytest.raises(openai.NotFoundError):
                await client.responses.input_items.list(unkept.id)
            assert emu.retained()["responses"] == [kept.id]


async def test_openai_deleted_response_can_no_longer_be_retrieved_or_deleted_again() -> None:
    async with OpenAIEmulator(config(), responder=StaticResponder(ANSWER)) as emu:
        async with openai_client(emu) as client:
            kept = await client.responses.create(model="gpt-test", input="memo", store=True)
            await client.responses.delete(kept.id)
            with pytest.raises(openai.NotFoundError):
                await client.responses.retrieve(kept.id)
            with pytest.raises(openai.NotFoundError):
                await client.responses.delete(kept.id)
            assert emu.retained()["responses"] == []
            assert [r.api for r in emu.received] == [
                "responses", "responses.delete", "responses.retrieve", "responses.delete"]


async def test_openai_chat_completion_is_stored_only_when_store_is_true() -> None:
    async with OpenAIEmulator(config(), responder=StaticResponder(ANSWER)) as emu:
        async with openai_client(emu) as client:
            messages: Any = [{"role": "user", "content": "memo"}]
            unkept = await client.chat.completions.create(model="gpt-test", messages=messages)
            kept = await client.chat.completions.create(model="gpt-test", messages=messages, store=True)
            with pytest.raises(openai.NotFoundError):
                await client.chat.completions.retrieve(unkept.id)
            assert (await client.chat.completions.retrieve(kept.id)).id == kept.id
            deleted = await client.chat.completions.delete(kept.id)
            assert deleted.deleted and deleted.id == kept.id
            with pytest.raises(openai.NotFoundError):
                await client.chat.completions.retrieve(kept.id)
            assert [r.settings["store"] for r in emu.received if r.api == "chat.completions"] == [False, True]


async def test_openai_log_records_store_and_prompt_cache_retention_of_online_and_batch_bodies() -> None:
    async with OpenAIEmulator(config(completion_s=60), responder=StaticResponder(ANSWER)) as emu:
        async with openai_client(emu) as client:
            await client.responses.create(model="gpt-test", input="memo", store=False,
                                          prompt_cache_retention="in_memory")
            f = await upload(client, batch_line("off", "memo 1", store=False), batch_line("on", "memo 2"))
            batch = await client.batches.create(input_file_id=f.id, endpoint="/v1/responses",
                                                completion_window="24h")
            online, lines = emu.received[0], [r for r in emu.received if r.batch_id == batch.id]
            assert online.settings == {"store": False, "prompt_cache_retention": "in_memory", "prompt_cache_ttl": None}
            # every batch line is logged when the batch is submitted, before any of it is answered
            assert not emu.requests[1:]
            assert {r.custom_id: r.settings["store"] for r in lines} == {"off": False, "on": True}
            assert all(r.api == "responses" and r.model == "gpt-test" for r in lines)

            emu.advance(60)
            done = await client.batches.retrieve(batch.id)
            out = {x["custom_id"]: x["response"]["body"]
                   for x in map(json.loads, (await client.files.content(done.output_file_id or "")).text.splitlines())}
            # a batched response is kept like an online one: only the line without store: false
            assert (await client.responses.retrieve(out["on"]["id"])).id == out["on"]["id"]
            with pytest.raises(openai.NotFoundError):
                await client.responses.retrieve(out["off"]["id"])


# -- OpenAI: files ---------------------------------------------------------------------------------


async def test_openai_files_are_listed_newest_first_and_a_deleted_file_is_gone() -> None:
    async with OpenAIEmulator(config(), responder=StaticResponder(ANSWER)) as emu:
        async with openai_client(emu) as client:
            first, second, third = [await upload(client, batch_line(str(i), "memo")) for i in range(3)]
            listed = [f.id async for f in client.files.list(limit=2)]  # two pages, followed by the SDK
            assert listed == [third.id, second.id, first.id]
            assert [f.id async for f in client.files.list(order="asc")] == [first.id, second.id, third.id]

            deleted = await client.files.delete(second.id)
            assert deleted.deleted and deleted.id == second.id
            assert [f.id async for f in client.files.list()] == [third.id, first.id]
            for read in (client.files.retrieve, client.files.content, client.files.delete):
                with pytest.raises(openai.NotFoundError):
                    await read(second.id)
            assert emu.retained()["files"] == [first.id, third.id]


async def test_openai_file_disappears_once_the_emulator_clock_passes_its_expires_after() -> None:
    async with OpenAIEmulator(config(), responder=StaticResponder(ANSWER)) as emu:
        async with openai_client(emu) as client:
            short = await upload(client, batch_line("a", "memo"),
                                 expires_after={"anchor": "created_at", "seconds": 3_600})
            default = await upload(client, batch_line("b", "memo"))
            assert short.expires_at == short.created_at + 3_600
            assert default.expires_at == default.created_at + 30 * 86_400  # purpose=batch default
            emu.advance(3_599)
            assert (await client.files.retrieve(short.id)).id == short.id
            emu.advance(1)
            with pytest.raises(openai.NotFoundError):
                await client.files.content(short.id)
            assert [f.id async for f in client.files.list()] == [default.id]
            emu.advance(30 * DAY)
            assert [f.id async for f in client.files.list()] == []
            assert [r.settings["expires_after_s"] for r in emu.received if r.api == "files.create"] == [
                3_600, 30 * 86_400]


async def test_openai_expires_after_outside_the_vendors_range_is_refused() -> None:
    async with OpenAIEmulator(config(), responder=StaticResponder(ANSWER)) as emu:
        async with openai_client(emu) as client:
            with pytest.raises(openai.BadRequestError, match="between 3600 and 2592000"):
                await upload(client, batch_line("a", "memo"), expires_after={"anchor": "created_at", "seconds": 60})
            f = await upload(client, batch_line("a", "memo"))
            with pytest.raises(openai.BadRequestError, match="output_expires_after"):
                await client.batches.create(input_file_id=f.id, endpoint="/v1/responses", completion_window="24h",
                                            output_expires_after={"anchor": "created_at", "seconds": 10})


async def test_openai_batch_output_files_expire_by_output_expires_after_and_are_kept_without_it() -> None:
    async with OpenAIEmulator(config(completion_s=60, script=["succeeded", "errored"]),
                              responder=StaticResponder(ANSWER)) as emu:
        async with openai_client(emu) as client:
            f = await upload(client, batch_line("a", "memo", store=False), batch_line("b", "memo", store=False))
            expiring = await client.batches.create(
                input_file_id=f.id, endpoint="/v1/responses", completion_window="24h",
                output_expires_after={"anchor": "created_at", "seconds": 7_200},
            )
            kept = await client.batches.create(input_file_id=f.id, endpoint="/v1/responses", completion_window="24h")
            emu.advance(60)
            done = await client.batches.retrieve(expiring.id)
            assert done.output_file_id and done.error_file_id
            out = await client.files.retrieve(done.output_file_id)
            assert out.expires_at == out.created_at + 7_200
            other = await client.batches.retrieve(kept.id)
            assert other.output_file_id and (await client.files.retrieve(other.output_file_id)).expires_at is None

            emu.advance(7_200)
            for file_id in (done.output_file_id, done.error_file_id):
                with pytest.raises(openai.NotFoundError):
                    await client.files.content(file_id)
            assert (await client.batches.retrieve(expiring.id)).status == "completed"  # a batch is never deleted
            emu.advance(40 * DAY)  # the input file's 30 days pass; the unexpiring output stays
            assert emu.retained()["files"] == [other.output_file_id]
            assert emu.retained()["batches"] == [expiring.id, kept.id]


# -- Anthropic: message batches --------------------------------------------------------------------


def anthropic_requests(n: int) -> Any:
    params = {
        "model": "claude-test",
        "max_tokens": 64,
        "system": [{"type": "text", "text": "You grade.", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "memo"}],
    }
    return [{"custom_id": f"r-{i}", "params": params} for i in range(n)]


async def test_anthropic_batch_can_be_deleted_only_once_ended_and_is_then_gone() -> None:
    async with AnthropicEmulator(config(completion_s=60), responder=StaticResponder(ANSWER)) as emu:
        async with anthropic_client(emu) as client:
            batch = await client.messages.batches.create(requests=anthropic_requests(2))
            with pytest.raises(anthropic.BadRequestError, match="cancel it first"):
                await client.messages.batches.delete(batch.id)
            emu.advance(60)
            deleted = await client.messages.batches.delete(batch.id)
            assert (deleted.id, deleted.type) == (batch.id, "message_batch_deleted")
            with pytest.raises(anthropic.NotFoundError):
                await client.messages.batches.retrieve(batch.id)
            with pytest.raises(anthropic.NotFoundError):
                await client.messages.batches.results(batch.id)
            assert [b.id async for b in client.messages.batches.list()] == []
            assert emu.retained() == {"batches": [], "archived_batches": []}


async def test_anthropic_cancelled_batch_can_be_deleted_once_its_cancellation_ends() -> None:
    async with AnthropicEmulator(config(completion_s=60), responder=StaticResponder(ANSWER)) as emu:
        async with anthropic_client(emu) as client:
            batch = await client.messages.batches.create(requests=anthropic_requests(1))
            await client.messages.batches.cancel(batch.id)
            assert (await client.messages.batches.delete(batch.id)).id == batch.id
            assert emu.retained()["batches"] == []


async def test_anthropic_batches_are_listed_newest_first_across_pages() -> None:
    async with AnthropicEmulator(config(completion_s=60), responder=StaticResponder(ANSWER)) as emu:
        async with anthropic_client(emu) as client:
            ids = [(await client.messages.batches.create(requests=anthropic_requests(1))).id for _ in range(3)]
            first = await client.messages.batches.list(limit=2)
            assert [b.id for b in first.data] == ids[:0:-1] and first.has_more
            assert [b.id async for b in client.messages.batches.list(limit=2)] == ids[::-1]
            assert [b.id for b in (await client.messages.batches.list(before_id=ids[0])).data] == [ids[2], ids[1]]


async def test_anthropic_batch_results_are_deleted_29_days_after_creation_but_the_batch_is_listed() -> None:
    async with AnthropicEmulator(config(completion_s=60), responder=StaticResponder(ANSWER)) as emu:
        async with anthropic_client(emu) as client:
            batch = await client.messages.batches.create(requests=anthropic_requests(1))
            emu.advance(29 * DAY - 1)
            assert [i.custom_id async for i in await client.messages.batches.results(batch.id)] == ["r-0"]
            emu.advance(1)
            archived = await client.messages.batches.retrieve(batch.id)
            assert archived.archived_at is not None and archived.request_counts.succeeded == 1
            with pytest.raises(anthropic.NotFoundError, match="no longer available"):
                await client.messages.batches.results(batch.id)
            assert emu.retained() == {"batches": [], "archived_batches": [batch.id]}
            assert not emu.batches.batches[batch.id].items["r-0"].request.user  # the memo is gone


async def test_anthropic_log_records_each_batched_request_at_submission_with_its_cache_ttls() -> None:
    async with AnthropicEmulator(config(completion_s=60), responder=StaticResponder(ANSWER)) as emu:
        async with anthropic_client(emu) as client:
            batch = await client.messages.batches.create(requests=anthropic_requests(2))
            await client.messages.create(model="claude-test", max_tokens=64,
                                         messages=[{"role": "user", "content": "memo"}])
            apis = [(r.api, r.custom_id, r.settings.get("cache_control_ttls")) for r in emu.received]
            assert apis == [("messages.batches.create", None, None), ("messages", "r-0", ["5m"]),
                            ("messages", "r-1", ["5m"]), ("messages", None, [])]
            assert emu.received[0].object_id == batch.id
            assert [r.batch_id for r in emu.received[1:]] == [batch.id, batch.id, None]


# -- xAI -------------------------------------------------------------------------------------------


async def test_xai_completion_is_stored_only_with_store_messages_and_can_be_deleted() -> None:
    async with XAIEmulator(config(), responder=StaticResponder(ANSWER)) as emu:
        client = xai_client(emu.host)
        try:
            kept = await client.chat.create(model="grok-test", messages=[user("memo")], store_messages=True).sample()
            unkept = await client.chat.create(model="grok-test", messages=[user("memo")]).sample()
            [again] = await client.chat.get_stored_completion(kept.id)
            assert again.content == kept.content
            with pytest.raises(grpc.aio.AioRpcError) as missing:
                await client.chat.get_stored_completion(unkept.id)
            assert missing.value.code() == grpc.StatusCode.NOT_FOUND
            assert await client.chat.delete_stored_completion(kept.id) == kept.id
            with pytest.raises(grpc.aio.AioRpcError) as gone:
                await client.chat.get_stored_completion(kept.id)
            assert gone.value.code() == grpc.StatusCode.NOT_FOUND
            assert [r.settings for r in emu.received if r.api == "chat.GetCompletion"] == [
                {"store_messages": True}, {"store_messages": False}]
            assert emu.retained()["stored_completions"] == []
        finally:
            await client.close()


async def test_xai_batches_are_listed_with_their_requests_logged_and_batchmgmt_has_no_delete() -> None:
    # the installed xai-sdk: BatchMgmt has no delete RPC and the client no delete method
    assert not any("delete" in m.name.lower() for m in batch_pb2.DESCRIPTOR.services_by_name["BatchMgmt"].methods)
    async with XAIEmulator(config(completion_s=60), responder=StaticResponder(ANSWER)) as emu:
        client = xai_client(emu.host)
        try:
            assert not any("delete" in name.lower() for name in dir(client.batch))
            batch = await client.batch.create(batch_name="run-1")
            chat = client.chat.create(model="grok-test", batch_request_id="x0", store_messages=False)
            chat.append(user("memo"))
            await client.batch.add(batch_id=batch.batch_id, batch_requests=[chat])
            listed = await client.batch.list(limit=10)
            assert [b.batch_id for b in listed.batches] == [batch.batch_id]
            [line] = [r for r in emu.received if r.batch_id == batch.batch_id and r.custom_id]
            assert (line.custom_id, line.settings) == ("x0", {"store_messages": False})
            assert emu.retained() == {"stored_completions": [], "batches": [batch.batch_id]}
        finally:
            await client.close()


# -- in-process and operator access ----------------------------------------------------------------


def test_start_in_thread_reports_what_each_emulator_received_and_still_keeps() -> None:
    with start_in_thread(EmulatorConfig(api_key=KEY), responder=StaticResponder(ANSWER)) as emus:

        async def drive() -> tuple[str, str]:
            async with openai.AsyncOpenAI(api_key=KEY, base_url=emus.endpoints["openai"], max_retries=0) as oc:
                kept = await oc.responses.create(model="gpt-test", input="memo")
                await oc.responses.create(model="gpt-test", input="memo", store=False)
                f = await oc.files.create(file=("in.jsonl", b"{}\n"), purpose="batch",
                                          expires_after={"anchor": "created_at", "seconds": 3_600})
            xc = xai_client(emus.endpoints["xai"])
            try:
                await xc.chat.create(model="grok-test", messages=[user("memo")]).sample()
            finally:
                await xc.close()
            return kept.id, f.id

        kept_id, file_id = asyncio.run(drive())
        assert [r.settings["store"] for r in emus.received("openai") if r.api == "responses"] == [True, False]
        assert [r.settings for r in emus.received("xai")] == [{"store_messages": False}]
        assert emus.retained("openai")["responses"] == [kept_id]
        assert emus.retained("openai")["files"] == [file_id]
        emus.advance(3_600)
        assert emus.retained("openai")["files"] == []
        assert emus.retained("xai")["stored_completions"] == []


async def test_http_emulators_show_their_received_log_without_bodies_to_the_key_holder_only() -> None:
    async with OpenAIEmulator(config(), responder=StaticResponder(ANSWER)) as emu:
        async with openai_client(emu) as client:
            kept = await client.responses.create(model="gpt-test", input="the confidential memo")
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{emu.origin}/_emulator/received", headers={"Authorization": f"Bearer {KEY}"}) as r:
                assert r.status == 200
                text = await r.text()
            async with http.get(f"{emu.origin}/_emulator/received", headers={"Authorization": "Bearer wrong"}) as r:
                assert r.status == 401
    shown = json.loads(text)
    assert shown["retained"]["responses"] == [kept.id]
    [entry] = shown["received"]
    assert (entry["api"], entry["settings"]["store"], entry["object_id"]) == ("responses", True, kept.id)
    assert "confidential" not in text
