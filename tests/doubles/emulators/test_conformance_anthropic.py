"""The Anthropic emulator's every kind of answer, and every request Tribunal sends to Anthropic,
conform to the installed `anthropic` SDK's generated types, validated strictly (no coercion, no key
the type does not define, at any depth): Anthropic publishes no OpenAPI document, and the SDK's
types are generated from its specification.

One emulator set for the module (as `tribunal emulate` configures it); answers are read raw through
the real SDK, requests as the emulator recorded them from Tribunal's adapters.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import pydantic
import pytest
from anthropic.types import ErrorResponse, Message
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from anthropic.types.messages import (
    BatchCreateParams,
    DeletedMessageBatch,
    MessageBatch,
    MessageBatchIndividualResponse,
)

from doubles.emulators import AuthError, EmulatorThread, RateLimited, ServerError, Truncated
from tests.doubles.emulators import _conformance_kit as kit
from tests.doubles.emulators.conformance import (
    anthropic_request_errors,
    anthropic_response_errors,
    closed_params_adapter,
)

MODEL = "claude-opus-5-5"  # the default judge's model
MESSAGES = [{"role": "user", "content": "the memo"}]


@pytest.fixture(scope="module")
def emus() -> Iterator[EmulatorThread]:
    yield from kit.emulators()


@pytest.fixture(scope="module")
def params() -> pydantic.TypeAdapter[Any]:
    return closed_params_adapter(MessageCreateParamsNonStreaming)


@pytest.fixture(scope="module")
def tribunal_sent(emus: EmulatorThread, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every body Tribunal's Anthropic adapters sent: online calls (every schema) and one batch per
    schema, as the emulator received them."""
    cfg = kit.tribunal_config(emus)
    [entry] = kit.entries(cfg, "anthropic")
    before = len(emus.received("anthropic"))

    async def run() -> None:
        await kit.call_every_schema(entry)
        await kit.batch_every_schema(entry, tmp_path_factory.mktemp("batch"))

    asyncio.run(run())
    received = emus.received("anthropic")[before:]
    return {
        "online": [e.body for e in received if e.api == "messages" and not e.batch_id],
        "batches": [e.body for e in received if e.api == "messages.batches.create"],
    }


@pytest.fixture
async def client(emus: EmulatorThread) -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with anthropic.AsyncAnthropic(api_key="k", base_url=emus.endpoints["anthropic"], max_retries=0) as c:
        yield c


def conforms(model: type[pydantic.BaseModel], raw: str | bytes) -> None:
    assert anthropic_response_errors(model, raw) == []


# -- requests Tribunal sends ------------------------------------------------------------------


def test_every_message_request_tribunal_sends_is_a_message_create_params(
    tribunal_sent: dict[str, Any], params: pydantic.TypeAdapter[Any]
) -> None:
    assert len(tribunal_sent["online"]) >= len(kit.SCHEMAS)
    for body in tribunal_sent["online"]:
        assert anthropic_request_errors(params, body) == []


def test_every_batch_tribunal_creates_is_a_batch_create_params(tribunal_sent: dict[str, Any]) -> None:
    batch = closed_params_adapter(BatchCreateParams)
    assert len(tribunal_sent["batches"]) == len(kit.SCHEMAS)
    for body in tribunal_sent["batches"]:
        assert anthropic_request_errors(batch, body) == []


# -- answers the emulator gives ------------------------------------------------------------------


async def test_a_message_is_a_message(client: anthropic.AsyncAnthropic) -> None:
    raw = await client.messages.with_raw_response.create(model=MODEL, max_tokens=256, messages=MESSAGES)  # type: ignore[arg-type]
    conforms(Message, raw.http_response.text)


async def test_a_message_whose_thinking_fills_max_tokens_stops_at_max_tokens(
    client: anthropic.AsyncAnthropic,
) -> None:
    raw = await client.messages.with_raw_response.create(
        model=MODEL, max_tokens=1030, messages=MESSAGES,  # type: ignore[arg-type]
        thinking={"type": "enabled", "budget_tokens": 1024}, output_config={"effort": "max"})
    conforms(Message, raw.http_response.text)
    body = json.loads(raw.http_response.text)
    assert body["stop_reason"] == "max_tokens"
    assert [block["type"] for block in body["content"]] == ["thinking", "text"]
    assert body["usage"]["output_tokens"] == 1030  # its whole thinking budget, then 6 tokens of answer


async def test_a_forced_tool_answer_and_a_truncated_one_are_messages(
    client: anthropic.AsyncAnthropic, emus: EmulatorThread
) -> None:
    tool = {"name": "RubricAnswer", "input_schema": {"type": "object", "properties": {"verdict": {"type": "string"}}}}
    raw = await client.messages.with_raw_response.create(
        model=MODEL, max_tokens=256, messages=MESSAGES, tools=[tool],  # type: ignore[arg-type,list-item]
        tool_choice={"type": "tool", "name": "RubricAnswer"})
    conforms(Message, raw.http_response.text)
    emus.push("anthropic", Truncated())
    cut = await client.messages.with_raw_response.create(model=MODEL, max_tokens=256, messages=MESSAGES)  # type: ignore[arg-type]
    conforms(Message, cut.http_response.text)
    assert json.loads(cut.http_response.text)["stop_reason"] == "max_tokens"


async def test_an_unknown_model_is_anthropics_404_not_found_error(client: anthropic.AsyncAnthropic) -> None:
    with pytest.raises(anthropic.NotFoundError) as info:
        await client.messages.create(model="claude-opus-5.5", max_tokens=16, messages=MESSAGES)  # type: ignore[arg-type]
    conforms(ErrorResponse, info.value.response.text)
    body = info.value.response.json()
    assert body["error"] == {"type": "not_found_error", "message": "model: claude-opus-5.5"}
    assert body["request_id"] == info.value.request_id


@pytest.mark.parametrize(
    ("behaviour", "error", "should_retry"),
    [
        (RateLimited(retry_after=0.2), anthropic.RateLimitError, None),
        (ServerError(500, should_retry=False), anthropic.InternalServerError, "false"),
        (ServerError(529, should_retry=True), anthropic.OverloadedError, "true"),
        (AuthError(), anthropic.AuthenticationError, None),
    ],
)
async def test_every_error_is_an_error_response(
    client: anthropic.AsyncAnthropic, emus: EmulatorThread, behaviour: Any, error: type[Exception],
    should_retry: str | None,
) -> None:
    emus.push("anthropic", behaviour)
    with pytest.raises(error) as info:
        await client.messages.create(model=MODEL, max_tokens=16, messages=MESSAGES)  # type: ignore[arg-type]
    response = info.value.response  # type: ignore[attr-defined]
    conforms(ErrorResponse, response.text)
    assert response.headers.get("x-should-retry") == should_retry


async def test_batches_their_results_and_their_deletion_conform(
    client: anthropic.AsyncAnthropic, emus: EmulatorThread
) -> None:
    requests = [{"custom_id": f"c{i}", "params": {"model": MODEL, "max_tokens": 64, "messages": MESSAGES}}
                for i in range(2)]
    requests.append({"custom_id": "lost", "params": {"model": "claude-opus-5.5", "max_tokens": 64,
                                                      "messages": MESSAGES}})
    created = await client.messages.batches.with_raw_response.create(requests=requests)  # type: ignore[arg-type]
    conforms(MessageBatch, created.http_response.text)
    batch_id = json.loads(created.http_response.text)["id"]
    ended = await client.messages.batches.with_raw_response.retrieve(batch_id)
    conforms(MessageBatch, ended.http_response.text)
    results_url = json.loads(ended.http_response.text)["results_url"]
    http = client._client  # the SDK's own HTTP client: the results file as the SDK reads it
    lines = (await http.get(results_url, headers={"authorization": "Bearer k"})).text.splitlines()
    for line in lines:
        conforms(MessageBatchIndividualResponse, line)
    lost = next(json.loads(line) for line in lines if json.loads(line)["custom_id"] == "lost")
    assert lost["result"]["error"]["error"]["type"] == "not_found_error"
    deleted = await client.messages.batches.with_raw_response.delete(batch_id)
    conforms(DeletedMessageBatch, deleted.http_response.text)


# -- the suite fails when a field breaks ---------------------------------------------------------


async def test_the_validator_catches_one_field_broken_in_an_answer_or_a_request(
    client: anthropic.AsyncAnthropic, tribunal_sent: dict[str, Any], params: pydantic.TypeAdapter[Any]
) -> None:
    """Each check above can fail: a stop reason Anthropic never sends, a count as a string, a key its
    type does not define (at the top and deep inside), a request parameter it does not take."""
    good = json.loads((await client.messages.with_raw_response.create(
        model=MODEL, max_tokens=256, messages=MESSAGES)).http_response.text)  # type: ignore[arg-type]
    conforms(Message, json.dumps(good))
    for change in ({"stop_reason": "length"}, {"usage": {**good["usage"], "output_tokens": "12"}},
                   {"surprise": 1}, {"content": [{**good["content"][0], "surprise": 1}]}):
        assert anthropic_response_errors(Message, json.dumps({**good, **change})), change
    body = tribunal_sent["online"][0]
    assert anthropic_request_errors(params, {**body, "max_output_tokens": 100})
    assert anthropic_request_errors(params, {**body, "output_config": {**body["output_config"], "effort": "extreme"}})
    deep = {**body, "messages": [{**body["messages"][0], "content": [
        {**body["messages"][0]["content"][0], "surprise": 1}]}]}
    assert anthropic_request_errors(params, deep)
