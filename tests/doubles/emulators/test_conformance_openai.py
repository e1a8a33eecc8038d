"""The OpenAI emulator's every kind of answer, and every request Tribunal sends to OpenAI, conform
to OpenAI's own OpenAPI document (`specs/`, closed: an undefined field is an error).

One emulator set for the module (as `tribunal emulate` configures it); answers are read raw through
the real `openai` SDK, requests as the emulator recorded them from Tribunal's adapters.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai
import pytest

from doubles.emulators import AuthError, EmulatorThread, RateLimited, ServerError, Truncated
from tests.doubles.emulators import _conformance_kit as kit
from tests.doubles.emulators.conformance import header_errors, openai_errors

MODEL = "gpt-6-sol"  # the default judge's and auditor's model


@pytest.fixture(scope="module")
def emus() -> Iterator[EmulatorThread]:
    yield from kit.emulators()


@pytest.fixture(scope="module")
def tribunal_sent(emus: EmulatorThread, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every body Tribunal's OpenAI adapters sent: online calls of the judge and the auditor, and one
    batch per schema (file upload, batch create), as the emulator received them."""
    import asyncio

    cfg = kit.tribunal_config(emus)
    before = len(emus.requests("openai"))
    received_before = len(emus.received("openai"))

    async def run() -> None:
        for entry in kit.entries(cfg, "openai"):
            await kit.call_every_schema(entry)
        await kit.batch_every_schema(kit.entries(cfg, "openai")[0], tmp_path_factory.mktemp("batch"))

    asyncio.run(run())
    received = emus.received("openai")[received_before:]
    return {
        "online": [r.body for r in emus.requests("openai")[before:] if r.path == "/v1/responses"],
        "uploads": [e.body for e in received if e.api == "files.create"],
        "batches": [e.body for e in received if e.api == "batches.create"],
        "lines": [e.body for e in received if e.api == "responses" and e.batch_id],
    }


@pytest.fixture
async def client(emus: EmulatorThread) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(api_key="k", base_url=emus.endpoints["openai"], max_retries=0) as c:
        yield c


def conforms(schema: str, instance: Any) -> None:
    assert openai_errors(schema, instance) == []


def structured(**extra: Any) -> dict[str, Any]:
    """A Responses request shaped like the adapter's: instructions, input, a strict JSON schema."""
    schema = {"type": "object", "properties": {"verdict": {"type": "string"}}, "required": ["verdict"],
              "additionalProperties": False}
    return {"model": MODEL, "instructions": "You grade.", "input": "the memo",
            "text": {"format": {"type": "json_schema", "name": "RubricAnswer", "strict": True, "schema": schema}},
            **extra}


# -- requests Tribunal sends ------------------------------------------------------------------


def test_every_responses_request_tribunal_sends_is_a_create_response(tribunal_sent: dict[str, Any]) -> None:
    assert len(tribunal_sent["online"]) >= 2 * len(kit.SCHEMAS)  # judge and auditor, every schema
    for body in tribunal_sent["online"]:
        conforms("CreateResponse", body)


def test_every_batched_request_body_tribunal_sends_is_a_create_response(tribunal_sent: dict[str, Any]) -> None:
    assert len(tribunal_sent["lines"]) == 2 * len(kit.SCHEMAS)
    for body in tribunal_sent["lines"]:
        conforms("CreateResponse", body)


def test_every_batch_tribunal_creates_is_a_create_batch_request(tribunal_sent: dict[str, Any]) -> None:
    assert len(tribunal_sent["batches"]) == len(kit.SCHEMAS)
    for body in tribunal_sent["batches"]:
        conforms("CreateBatchRequest", body)


def test_every_file_tribunal_uploads_is_a_create_file_request(tribunal_sent: dict[str, Any]) -> None:
    assert len(tribunal_sent["uploads"]) == len(kit.SCHEMAS)
    for form in tribunal_sent["uploads"]:
        conforms("CreateFileRequest", form)


# -- answers the emulator gives ------------------------------------------------------------------


async def test_a_completed_response_with_reasoning_is_a_response(client: openai.AsyncOpenAI) -> None:
    raw = await client.responses.with_raw_response.create(**structured(reasoning={"effort": "low"}))
    body = json.loads(raw.text)
    conforms("Response", body)
    assert body["status"] == "completed" and body["output"][0]["type"] == "reasoning"


async def test_a_response_whose_reasoning_fills_its_cap_is_incomplete_for_max_output_tokens(
    client: openai.AsyncOpenAI,
) -> None:
    raw = await client.responses.with_raw_response.create(
        **structured(reasoning={"effort": "xhigh"}, max_output_tokens=16))
    body = json.loads(raw.text)
    conforms("Response", body)
    assert (body["status"], body["incomplete_details"]) == ("incomplete", {"reason": "max_output_tokens"})
    assert body["usage"]["output_tokens"] == body["usage"]["output_tokens_details"]["reasoning_tokens"] == 16
    assert [item["type"] for item in body["output"]] == ["reasoning"]  # no answer at all


async def test_a_truncated_answer_is_an_incomplete_response(client: openai.AsyncOpenAI, emus: EmulatorThread) -> None:
    emus.push("openai", Truncated())
    raw = await client.responses.with_raw_response.create(**structured())
    body = json.loads(raw.text)
    conforms("Response", body)
    assert body["status"] == "incomplete" and body["output"][0]["status"] == "incomplete"


async def test_a_chat_completion_is_a_create_chat_completion_response(client: openai.AsyncOpenAI) -> None:
    raw = await client.chat.completions.with_raw_response.create(
        model=MODEL, messages=[{"role": "user", "content": "the memo"}], max_completion_tokens=256)
    conforms("CreateChatCompletionResponse", json.loads(raw.text))


async def test_an_unknown_model_is_openais_404_model_not_found(client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as info:
        await client.responses.create(**{**structured(), "model": "gpt-6.5-sol"})
    body = info.value.response.json()
    conforms("ErrorResponse", body)
    assert {k: body["error"][k] for k in ("type", "param", "code")} == {
        "type": "invalid_request_error", "param": "model", "code": "model_not_found"}


@pytest.mark.parametrize(
    ("behaviour", "error"),
    [
        (RateLimited(retry_after=0.2), openai.RateLimitError),
        (RateLimited(retry_after=2.5, should_retry=False), openai.RateLimitError),
        (ServerError(500), openai.InternalServerError),
        (ServerError(503, should_retry=True), openai.InternalServerError),
        (AuthError(), openai.AuthenticationError),
    ],
)
async def test_every_error_is_an_error_response_with_the_documented_headers(
    client: openai.AsyncOpenAI, emus: EmulatorThread, behaviour: Any, error: type[Exception]
) -> None:
    emus.push("openai", behaviour)
    with pytest.raises(error) as info:
        await client.responses.create(**structured())
    response = info.value.response  # type: ignore[attr-defined]
    conforms("ErrorResponse", response.json())
    headers = {k.lower(): v for k, v in response.headers.items()}
    assert header_errors("/responses", "post", str(response.status_code), headers) == []
    if isinstance(behaviour, RateLimited):  # OpenAPI: Retry-After an integer >= 1, rounded up
        assert int(headers["retry-after"]) == max(1, -(-behaviour.retry_after // 1))
    expected = getattr(behaviour, "should_retry", None)
    assert headers.get("x-should-retry") == (None if expected is None else str(expected).lower())


async def test_a_bad_body_is_an_error_response(emus: EmulatorThread) -> None:
    import httpx2

    async with httpx2.AsyncClient() as http:
        response = await http.post(emus.endpoints["openai"] + "/responses", content=b"[]",
                                   headers={"authorization": "Bearer k"})
    assert response.status_code == 400
    conforms("ErrorResponse", response.json())


async def test_files_and_batches_in_every_state_conform(client: openai.AsyncOpenAI, emus: EmulatorThread) -> None:
    lines = [{"custom_id": f"c{i}", "method": "POST", "url": "/v1/responses", "body": structured()}
             for i in range(3)]
    lines.append({"custom_id": "lost", "method": "POST", "url": "/v1/responses",
                  "body": {**structured(), "model": "gpt-6.5-sol"}})  # errors: a model OpenAI lacks
    data = "\n".join(json.dumps(line) for line in lines).encode()
    upload = await client.files.with_raw_response.create(file=("in.jsonl", data), purpose="batch")
    conforms("OpenAIFile", json.loads(upload.text))
    file_id = json.loads(upload.text)["id"]
    created = await client.batches.with_raw_response.create(
        input_file_id=file_id, endpoint="/v1/responses", completion_window="24h", metadata={"run": "x"})
    conforms("Batch", json.loads(created.text))
    batch = json.loads((await client.batches.with_raw_response.retrieve(json.loads(created.text)["id"])).text)
    conforms("Batch", batch)
    assert batch["status"] == "completed"
    out = (await client.files.content(batch["output_file_id"])).text.splitlines()
    err = (await client.files.content(batch["error_file_id"])).text.splitlines()
    for line in map(json.loads, out):
        conforms("Response", line["response"]["body"])
    [lost] = map(json.loads, err)
    conforms("ErrorResponse", lost["response"]["body"])
    assert (lost["response"]["status_code"], lost["response"]["body"]["error"]["code"]) == (404, "model_not_found")
    cancelled = await client.batches.with_raw_response.cancel(batch["id"])
    conforms("Batch", json.loads(cancelled.text))
    conforms("ListBatchesResponse", json.loads((await client.batches.with_raw_response.list()).text))
    conforms("ListFilesResponse", json.loads((await client.files.with_raw_response.list()).text))
    conforms("OpenAIFile", json.loads((await client.files.with_raw_response.retrieve(file_id)).text))
    conforms("DeleteFileResponse", json.loads((await client.files.with_raw_response.delete(file_id)).text))


# -- the suite fails when a field breaks ---------------------------------------------------------


async def test_the_validator_catches_one_field_broken_in_an_answer_or_a_request(
    client: openai.AsyncOpenAI, tribunal_sent: dict[str, Any]
) -> None:
    """Each check above can fail: the same documents with one field broken, or one added, do not
    conform (a status OpenAI never sends, a usage count of the wrong type, a request parameter
    OpenAI does not define, a batch window it does not offer)."""
    good = json.loads((await client.responses.with_raw_response.create(**structured())).text)
    broken: list[tuple[str, dict[str, Any]]] = []
    for path, value in ((("status",), "done"), (("usage", "output_tokens"), "12"),
                        (("output", 0, "content", 0, "type"), "text"), (("surprise",), 1)):
        doc = copy.deepcopy(good)
        node: Any = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        broken.append(("Response", doc))
    broken.append(("CreateResponse", {**tribunal_sent["online"][0], "max_output_token": 100}))
    broken.append(("CreateResponse", {**tribunal_sent["online"][0], "max_output_tokens": 8}))  # minimum 16
    broken.append(("CreateBatchRequest", {**tribunal_sent["batches"][0], "completion_window": "48h"}))
    conforms("Response", good)
    for schema, doc in broken:
        assert openai_errors(schema, doc), f"{schema} accepted a broken document"
