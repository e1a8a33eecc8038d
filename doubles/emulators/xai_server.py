"""xAI emulator: the gRPC service `xai_api.Chat/GetCompletion`, as `xai-sdk` 1.21 calls it.

Why gRPC and not an HTTP imitation: the xAI SDK only speaks gRPC, so the adapter's error handling
must meet real `grpc.aio.AioRpcError`s: RESOURCE_EXHAUSTED with a trailing `retry-after` for rate
limits, UNAVAILABLE for 502/503/529 (INTERNAL otherwise), UNAUTHENTICATED for a bad key and a
DEADLINE/cancellation when the client gives up on a hang.

Data is kept as the vendor keeps it: a completion asked with `store_messages` (false unless the
client sets it) is stored and can be read back (`chat.get_stored_completion`) until deleted
(`chat.delete_stored_completion`); otherwise it is NOT_FOUND. Batches are listed
(`batch.list`) but, as in xai-sdk 1.21's BatchMgmt, there is no way to delete one; whether the
vendor stores batched completions is not published, so the emulator stores none.
"""

from __future__ import annotations

import json
from typing import Any

import grpc
from google.protobuf.empty_pb2 import Empty
from google.protobuf.json_format import MessageToDict
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import status_pb2
from xai_sdk.proto import batch_pb2, batch_pb2_grpc, chat_pb2, chat_pb2_grpc, sample_pb2, usage_pb2

from doubles.emulators._base import EmulatorBase
from doubles.emulators._batches import BatchItem, BatchStore, EmulatedBatch
from doubles.emulators._engine import Decision, Engine, Outcome
from doubles.emulators._limits import RateSnapshot, openai_duration, seconds_text
from doubles.emulators._retention import ReceivedLog, keep
from doubles.emulators.responders import EmulatedRequest

_METHOD = "/xai_api.Chat/GetCompletion"
_UNAVAILABLE_STATUSES = {502, 503, 529}
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
USD_TICKS = 10_000_000_000  # xAI reports cost in 1e-10 USD


def _rate_metadata(rate: RateSnapshot) -> list[tuple[str, str]]:
    return [
        ("x-ratelimit-limit-requests", str(rate.requests_limit)),
        ("x-ratelimit-remaining-requests", str(rate.requests_remaining)),
        ("x-ratelimit-reset-requests", openai_duration(rate.requests_reset_s)),
        ("x-ratelimit-limit-tokens", str(rate.tokens_limit)),
        ("x-ratelimit-remaining-tokens", str(rate.tokens_remaining)),
        ("x-ratelimit-reset-tokens", openai_duration(rate.tokens_reset_s)),
    ]


def not_found_message(model: str) -> str:
    """What the emulator says with NOT_FOUND for a model xAI does not serve (xAI's REST API words
    it so; its gRPC detail text could not be checked offline: clients should read the status code)."""
    return f"The model {model} does not exist or your team does not have access to it."


def retention_settings(request: chat_pb2.GetCompletionsRequest) -> dict[str, Any]:
    """What decides what xAI keeps of one request: `store_messages` (a proto bool: unset = false)."""
    return {"store_messages": request.store_messages}


def _parse(request: chat_pb2.GetCompletionsRequest, headers: dict[str, str]) -> EmulatedRequest:
    system: list[str] = []
    user: list[str] = []
    for msg in request.messages:
        text = "".join(part.text for part in msg.content)
        if msg.role in (chat_pb2.ROLE_SYSTEM, chat_pb2.ROLE_DEVELOPER):
            system.append(text)
        elif msg.role == chat_pb2.ROLE_USER:
            user.append(text)
    schema: dict[str, Any] | None = None
    if request.HasField("response_format") and request.response_format.schema:
        try:
            loaded = json.loads(request.response_format.schema)
        except ValueError:
            loaded = None
        schema = loaded if isinstance(loaded, dict) else None
    effort = None
    if request.HasField("reasoning_effort"):
        effort = chat_pb2.ReasoningEffort.Name(request.reasoning_effort).removeprefix("EFFORT_").lower()
    return EmulatedRequest(
        vendor="xai",
        api="chat.GetCompletion",
        model=request.model,
        system="\n\n".join(s for s in system if s),
        user="\n\n".join(u for u in user if u),
        json_schema=schema,
        schema_name=schema.get("title") if schema and isinstance(schema.get("title"), str) else None,
        reasoning_effort=effort,
        reasoning_in_cap=False,  # xAI does not document reasoning inside max_tokens: billed beside it
        max_output_tokens=request.max_tokens if request.HasField("max_tokens") else None,
        headers=headers,
    )


class _ChatServicer(chat_pb2_grpc.ChatServicer):
    """Implements GetCompletion and the stored-completion RPCs; the others stay UNIMPLEMENTED."""

    def __init__(
        self, engine: Engine, log: ReceivedLog, stored: dict[str, chat_pb2.GetChatCompletionResponse]
    ) -> None:
        self.engine = engine
        self.log = log
        self.stored = stored

    async def _authorized(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        headers = {
            k.lower(): (v if isinstance(v, str) else v.hex()) for k, v in context.invocation_metadata() or ()
        }
        auth = headers.get("authorization", "")
        key = auth[7:].strip() if auth.lower().startswith("bearer ") else None
        expected = self.engine.config.api_key
        if expected is not None and key != expected.get_secret_value():
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "Invalid or missing API key.")

    async def GetStoredCompletion(  # noqa: N802 - the gRPC method name
        self, request: chat_pb2.GetStoredCompletionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> chat_pb2.GetChatCompletionResponse:
        await self._authorized(context)
        self.log.add("chat.GetStoredCompletion", object_id=request.response_id)
        found = self.stored.get(request.response_id)
        if found is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"response {request.response_id} not found")
        assert found is not None
        return found

    async def DeleteStoredCompletion(  # noqa: N802
        self, request: chat_pb2.DeleteStoredCompletionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> chat_pb2.DeleteStoredCompletionResponse:
        await self._authorized(context)
        self.log.add("chat.DeleteStoredCompletion", object_id=request.response_id)
        if self.stored.pop(request.response_id, None) is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"response {request.response_id} not found")
        return chat_pb2.DeleteStoredCompletionResponse(response_id=request.response_id)

    async def GetCompletion(  # noqa: N802 - the gRPC method name
        self, request: chat_pb2.GetCompletionsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> chat_pb2.GetChatCompletionResponse:
        headers = {
            k.lower(): (v if isinstance(v, str) else v.hex()) for k, v in context.invocation_metadata() or ()
        }
        body = MessageToDict(request, preserving_proto_field_name=True)
        if not request.model:
            d = self.engine.bad_request(
                method="POST", path=_METHOD, headers=headers, message="model is required"
            )
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, d.message)
        auth = headers.get("authorization", "")
        key = auth[7:].strip() if auth.lower().startswith("bearer ") else None
        req = _parse(request, headers)
        settings = retention_settings(request)
        entry = self.log.add("chat.GetCompletion", settings, body, model=req.model)
        d = await self.engine.handle(req, method="POST", path=_METHOD, body=body, presented_key=key or None)
        trailing = [("x-request-id", d.request_id), *_rate_metadata(d.rate)]
        if d.status == 404:
            await context.abort(grpc.StatusCode.NOT_FOUND, not_found_message(req.model), tuple(trailing))
        if d.outcome == Outcome.AUTH_ERROR:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, f"Invalid or missing API key ({d.message}).")
        if d.outcome == Outcome.RATE_LIMITED:
            trailing.append(("retry-after", seconds_text(d.retry_after_s)))
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, d.message, tuple(trailing))
        if d.outcome in (Outcome.SERVER_ERROR, Outcome.RESPONDER_ERROR):
            code = (
                grpc.StatusCode.UNAVAILABLE if d.status in _UNAVAILABLE_STATUSES else grpc.StatusCode.INTERNAL
            )
            await context.abort(code, d.message, tuple(trailing))
        if d.outcome == Outcome.BROKEN_BODY:
            await context.abort(grpc.StatusCode.UNKNOWN, "emulated broken response", tuple(trailing))
        context.set_trailing_metadata(tuple(trailing))
        response = self._render(d, req)
        if settings["store_messages"]:
            keep(self.stored, response.id, response, self.engine.config.max_recorded)
            entry.object_id = response.id
        return response

    def _render(self, d: Decision, req: EmulatedRequest) -> chat_pb2.GetChatCompletionResponse:
        return render_completion(d, req, self.engine.config.price.cost)


def render_completion(
    d: Decision, req: EmulatedRequest, cost_of: Any, factor: float = 1.0
) -> chat_pb2.GetChatCompletionResponse:
    """The GetCompletion answer for a decision; `factor` scales the reported cost (batch price)."""
    u = d.usage
    assert u is not None
    cost = cost_of(u.input_tokens, u.cached_tokens, u.output_tokens) * factor
    created = Timestamp()
    created.GetCurrentTime()
    finish = sample_pb2.REASON_MAX_LEN if d.finish == "length" else sample_pb2.REASON_STOP
    return chat_pb2.GetChatCompletionResponse(
        id=d.request_id,
        outputs=[
            chat_pb2.CompletionOutput(
                index=0,
                finish_reason=finish,
                message=chat_pb2.CompletionMessage(role=chat_pb2.ROLE_ASSISTANT, content=d.content),
            )
        ],
        created=created,
        model=req.model,
        system_fingerprint="fp_emulated",
        usage=usage_pb2.SamplingUsage(
            prompt_tokens=u.input_tokens,
            prompt_text_tokens=u.input_tokens,
            cached_prompt_text_tokens=u.cached_tokens,
            completion_tokens=u.output_tokens - u.reasoning_tokens,
            reasoning_tokens=u.reasoning_tokens,
            total_tokens=u.input_tokens + u.output_tokens,
            cost_in_usd_ticks=round(cost * USD_TICKS),
        ),
    )


def _timestamp(unix: float) -> Timestamp:
    ts = Timestamp()
    ts.FromNanoseconds(int(unix * 1e9))
    return ts


_GRPC_ERROR = {"errored": grpc.StatusCode.INTERNAL, "expired": grpc.StatusCode.DEADLINE_EXCEEDED,
               "canceled": grpc.StatusCode.CANCELLED}


class _BatchServicer(batch_pb2_grpc.BatchMgmtServicer):
    """xAI's BatchMgmt: create a batch, add requests to it, read its state and its results."""

    def __init__(self, store: BatchStore, log: ReceivedLog) -> None:
        self.store = store
        self.log = log

    async def _auth(self, context: grpc.aio.ServicerContext[Any, Any]) -> dict[str, str]:
        headers = {
            k.lower(): (v if isinstance(v, str) else v.hex()) for k, v in context.invocation_metadata() or ()
        }
        auth = headers.get("authorization", "")
        key = auth[7:].strip() if auth.lower().startswith("bearer ") else None
        if not self.store.authorized(key or None):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "Invalid or missing API key.")
        return headers

    async def _batch(self, batch_id: str, context: grpc.aio.ServicerContext[Any, Any]) -> EmulatedBatch:
        batch = self.store.get(batch_id)
        if batch is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"batch {batch_id} not found")
        assert batch is not None
        return batch

    def _render(self, batch: EmulatedBatch) -> batch_pb2.Batch:
        counts = batch.counts()
        price = self.store.engine.config.price
        ticks = 0
        for item in batch.items.values():
            d = item.decision
            if d is not None and d.usage is not None:
                u = d.usage
                cost = price.cost(u.input_tokens, u.cached_tokens, u.output_tokens) * self.store.settings.price_factor
                ticks += round(cost * USD_TICKS)
        out = batch_pb2.Batch(
            batch_id=batch.id,
            name=batch.metadata.get("name", ""),
            create_time=_timestamp(batch.created_at),
            expire_time=_timestamp(batch.expires_at),
            state=batch_pb2.BatchState(
                num_requests=len(batch.items),
                num_pending=counts["processing"],
                num_success=counts["succeeded"],
                num_error=counts["errored"] + counts["expired"],
                num_cancelled=counts["canceled"],
            ),
            cost_breakdown=batch_pb2.BatchCostBreakdown(total_cost_usd_ticks=ticks),
        )
        if batch.cancelled:
            out.cancel_time.CopyFrom(_timestamp(batch.ended_at or batch.created_at))
        return out

    async def CreateBatch(  # noqa: N802 - the gRPC method name
        self, request: batch_pb2.CreateBatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> batch_pb2.Batch:
        await self._auth(context)
        batch = self.store.create("batch_", _METHOD, [], {"name": request.name})
        self.log.add("batch.CreateBatch", {}, {"name": request.name}, object_id=batch.id)
        return self._render(batch)

    async def ListBatches(  # noqa: N802
        self, request: batch_pb2.ListBatchesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> batch_pb2.ListBatchesResponse:
        await self._auth(context)
        batches = list(reversed(list(self.store.batches.values())))
        start = int(request.pagination_token or 0)
        limit = request.limit or 100
        page = [self._render(await self.store.refresh(b, poll=False)) for b in batches[start : start + limit]]
        token = str(start + limit) if start + limit < len(batches) else ""
        return batch_pb2.ListBatchesResponse(batches=page, pagination_token=token)

    async def AddBatchRequests(  # noqa: N802
        self, request: batch_pb2.AddBatchRequestsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Empty:
        headers = await self._auth(context)
        batch = await self._batch(request.batch_id, context)
        if batch.state != "in_progress":
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"batch {batch.id} has ended")
        items = []
        for r in request.batch_requests:
            if not r.batch_request_id or not r.HasField("completion_request"):
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "each request needs an id and a completion")
            body = MessageToDict(r.completion_request, preserving_proto_field_name=True)
            items.append(BatchItem(r.batch_request_id, _parse(r.completion_request, headers), body))
            self.log.add("chat.GetCompletion", retention_settings(r.completion_request), body,
                         model=r.completion_request.model, batch_id=batch.id, custom_id=r.batch_request_id)
        self.store.add(batch, items)
        return Empty()

    async def GetBatch(  # noqa: N802
        self, request: batch_pb2.GetBatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> batch_pb2.Batch:
        await self._auth(context)
        batch = await self.store.refresh(await self._batch(request.batch_id, context))
        return self._render(batch)

    async def CancelBatch(  # noqa: N802
        self, request: batch_pb2.CancelBatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> batch_pb2.Batch:
        await self._auth(context)
        batch = await self._batch(request.batch_id, context)
        self.store.cancel(batch)
        return self._render(await self.store.refresh(batch, poll=False))

    async def ListBatchResults(  # noqa: N802
        self, request: batch_pb2.ListBatchResultsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> batch_pb2.ListBatchResultsResponse:
        await self._auth(context)
        batch = await self.store.refresh(await self._batch(request.batch_id, context), poll=False)
        done = [item for item in batch.items.values() if item.outcome is not None]
        start = int(request.pagination_token or 0)
        limit = request.limit or 100
        page = done[start : start + limit]
        results = []
        for item in page:
            if item.outcome == "succeeded" and item.decision is not None:
                response = render_completion(
                    item.decision, item.request, self.store.engine.config.price.cost, self.store.settings.price_factor
                )
                results.append(batch_pb2.BatchResult(
                    batch_request_id=item.custom_id,
                    response=batch_pb2.BatchResultData(completion_response=response),
                ))
            else:
                code = _GRPC_ERROR.get(item.outcome or "errored", grpc.StatusCode.INTERNAL)
                message = item.error
                if item.decision is not None and item.decision.status == 404:
                    code, message = grpc.StatusCode.NOT_FOUND, not_found_message(item.request.model)
                results.append(batch_pb2.BatchResult(
                    batch_request_id=item.custom_id,
                    error=status_pb2.Status(code=code.value[0], message=message),
                ))
        token = str(start + limit) if start + limit < len(done) else ""
        return batch_pb2.ListBatchResultsResponse(results=results, pagination_token=token)


class XAIEmulator(EmulatorBase):
    """xAI's gRPC Chat service on 127.0.0.1: `xai_sdk.AsyncClient(api_host=emu.host,
    use_insecure_channel=True, channel_options=[("grpc.enable_retries", 0)])`."""

    vendor = "xai"

    _server: grpc.aio.Server | None = None
    _stored: dict[str, chat_pb2.GetChatCompletionResponse] | None = None

    @property
    def stored(self) -> dict[str, chat_pb2.GetChatCompletionResponse]:
        """Completions kept by `store_messages`, by response id (bounded by `max_recorded`)."""
        if self._stored is None:
            self._stored = {}
        return self._stored

    def retained(self) -> dict[str, list[str]]:
        """Stored completions, and batches (which the vendor offers no way to delete)."""
        return {"stored_completions": list(self.stored), "batches": list(self.batches.batches)}

    @property
    def host(self) -> str:
        """ "127.0.0.1:PORT", what the SDK takes as `api_host`."""
        return f"{self.bind_host}:{self.port}"

    @property
    def base_url(self) -> str:
        """Same as `host` (gRPC has no URL); lets callers treat all emulators alike."""
        return self.host

    async def start(self) -> None:
        """Bind and serve in the running event loop."""
        server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                ("grpc.so_reuseport", 0),
                # gRPC's default CANCELs calls beyond 1,000 not yet picked up by a handler: a burst
                # of concurrent calls (as a sweep makes) would see errors the real service never sends.
                ("grpc.server.max_pending_requests", 100_000),
                ("grpc.server.max_pending_requests_hard_limit", 100_000),
            ]
        )
        chat_pb2_grpc.add_ChatServicer_to_server(_ChatServicer(self.engine, self.log, self.stored), server)
        batch_pb2_grpc.add_BatchMgmtServicer_to_server(_BatchServicer(self.batches, self.log), server)
        self._port = server.add_insecure_port(f"{self.bind_host}:{self._requested_port}")
        self.engine.open()
        await server.start()
        self._server = server

    async def stop(self) -> None:
        """Wake hanging calls and stop the server (in-flight RPCs get a short grace)."""
        self.engine.close()
        if self._server is not None:
            await self._server.stop(grace=0.2)
            self._server = None
