"""The xAI emulator's answers, and every request Tribunal sends to xAI, are exactly the messages of
`xai-sdk`'s own protos: wire bytes parse with no field the proto does not define and re-serialise
to the same bytes; recorded request bodies parse back with no unknown key. Errors carry the gRPC
status the vendor uses (NOT_FOUND for a model it does not serve).

One emulator set for the module (as `tribunal emulate` configures it); answers are read as raw
bytes over a plain gRPC channel, requests as the emulator recorded them from Tribunal's adapters.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from xai_sdk.proto import batch_pb2, chat_pb2

from doubles.emulators import EmulatorThread
from tests.doubles.emulators import _conformance_kit as kit
from tests.doubles.emulators.conformance import proto_bytes_errors, proto_dict_errors

MODEL = "grok-4.7"  # the default judge's model: newer than xai-sdk's list, accepted as known_newer_models


@pytest.fixture(scope="module")
def emus() -> Iterator[EmulatorThread]:
    yield from kit.emulators()


@pytest.fixture(scope="module")
def tribunal_sent(emus: EmulatorThread, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Every completion request Tribunal's xAI adapters sent, online and batched."""
    [entry] = kit.entries(kit.tribunal_config(emus), "xai")
    before = len(emus.received("xai"))

    async def run() -> None:
        await kit.call_every_schema(entry)
        await kit.batch_every_schema(entry, tmp_path_factory.mktemp("batch"))

    asyncio.run(run())
    return [e.body for e in emus.received("xai")[before:] if e.api == "chat.GetCompletion"]


async def raw_call(emus: EmulatorThread, method: str, request: Any) -> bytes:
    """The answer's wire bytes, undecoded (what any client's proto parses)."""
    async with grpc.aio.insecure_channel(emus.endpoints["xai"]) as channel:
        call = channel.unary_unary(method, request_serializer=type(request).SerializeToString,
                                   response_deserializer=None)
        answer: bytes = await call(request, metadata=(("authorization", "Bearer k"),))
        return answer


def completion(model: str = MODEL, **extra: Any) -> chat_pb2.GetCompletionsRequest:
    return chat_pb2.GetCompletionsRequest(
        model=model, max_tokens=256,
        messages=[chat_pb2.Message(role=chat_pb2.ROLE_USER, content=[chat_pb2.Content(text="the memo")])], **extra)


def test_every_completion_request_tribunal_sends_is_a_get_completions_request(
    tribunal_sent: list[dict[str, Any]],
) -> None:
    assert len(tribunal_sent) == 3 * len(kit.SCHEMAS)  # one online and two batched per schema
    for body in tribunal_sent:
        assert proto_dict_errors(chat_pb2.GetCompletionsRequest, body) == []


async def test_a_completion_is_a_get_chat_completion_response(emus: EmulatorThread) -> None:
    raw = await raw_call(emus, "/xai_api.Chat/GetCompletion",
                         completion(reasoning_effort=chat_pb2.EFFORT_HIGH))
    assert proto_bytes_errors(chat_pb2.GetChatCompletionResponse, raw) == []
    answer = chat_pb2.GetChatCompletionResponse.FromString(raw)
    assert answer.outputs[0].message.role == chat_pb2.ROLE_ASSISTANT and answer.usage.reasoning_tokens > 0


async def test_an_unknown_model_is_not_found(emus: EmulatorThread) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await raw_call(emus, "/xai_api.Chat/GetCompletion", completion("grok-4.8"))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND and "grok-4.8" in (info.value.details() or "")


async def test_a_batch_and_its_results_are_batchmgmt_messages(emus: EmulatorThread) -> None:
    created = batch_pb2.Batch.FromString(await raw_call(
        emus, "/xai_api.BatchMgmt/CreateBatch", batch_pb2.CreateBatchRequest(name="conformance")))
    requests = [batch_pb2.BatchRequest(batch_request_id=f"r{i}", completion_request=completion(model))
                for i, model in enumerate([MODEL, "grok-4.8"])]
    await raw_call(emus, "/xai_api.BatchMgmt/AddBatchRequests",
                   batch_pb2.AddBatchRequestsRequest(batch_id=created.batch_id, batch_requests=requests))
    got = await raw_call(emus, "/xai_api.BatchMgmt/GetBatch", batch_pb2.GetBatchRequest(batch_id=created.batch_id))
    assert proto_bytes_errors(batch_pb2.Batch, got) == []
    results = await raw_call(emus, "/xai_api.BatchMgmt/ListBatchResults",
                             batch_pb2.ListBatchResultsRequest(batch_id=created.batch_id))
    assert proto_bytes_errors(batch_pb2.ListBatchResultsResponse, results) == []
    by_id = {r.batch_request_id: r for r in batch_pb2.ListBatchResultsResponse.FromString(results).results}
    assert by_id["r0"].HasField("response") and by_id["r1"].error.code == grpc.StatusCode.NOT_FOUND.value[0]


def test_the_validator_catches_a_field_the_proto_does_not_define(tribunal_sent: list[dict[str, Any]]) -> None:
    """Each check above can fail: a request key the proto lacks, a value of the wrong type, and
    wire bytes carrying a field number the proto does not define."""
    body = tribunal_sent[0]
    assert proto_dict_errors(chat_pb2.GetCompletionsRequest, {**body, "max_output_tokens": 100})
    assert proto_dict_errors(chat_pb2.GetCompletionsRequest, {**body, "max_tokens": "many"})
    good = completion().SerializeToString()
    unknown_field_999 = b"\xb8\x3e\x01"  # field 999, varint 1
    assert proto_bytes_errors(chat_pb2.GetCompletionsRequest, good) == []
    assert proto_bytes_errors(chat_pb2.GetCompletionsRequest, good + unknown_field_999)
