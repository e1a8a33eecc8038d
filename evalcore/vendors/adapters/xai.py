"""xAI judge over gRPC with xai-sdk 1.21 (`xai_api.Chat/GetCompletion`), JSON-schema output.

Why `chat.sample()` with a JSON-schema `response_format` and our own validation rather than
`chat.parse`: a schema-violating answer is billed, so its usage and reported cost must be read
before validation fails. gRPC retries are switched off on the channel (they would multiply with
ours), and the per-call limit is `asyncio.timeout` in the shared base (the SDK's interceptor
overwrites per-call deadlines). The SDK has no exception classes: we classify raw gRPC status
codes. xAI reports each call's cost; it is used instead of the price table when present.

Nothing is kept at xAI that need not be: every chat (online, and each request of a batch, which
uses `params`) pins `store_messages=False` — the SDK's default today, pinned so that no SDK
upgrade can turn storage on. And every process that builds a client sets
`XAI_SDK_DISABLE_SENSITIVE_TELEMETRY_ATTRIBUTES=1`: once anything in the process configures an
OpenTelemetry tracer, the SDK would otherwise copy the full prompt text into span attributes.

Concurrent calls and channels: a gRPC channel carries its calls as HTTP/2 streams over one
connection, and the server's `SETTINGS_MAX_CONCURRENT_STREAMS` caps how many are open at once; the
calls past it wait inside the channel (measured against a server advertising 100: one channel
held exactly 100 calls, whatever was sent). xAI does not publish its value, and RFC 9113 only
recommends at least 100. So the adapter builds one client (one channel) per `CALLS_PER_CLIENT`
(100) of the entry's in-flight bound (`max_in_flight`) and sends each call on the least loaded
(`SDKAdapter`). Each channel has `grpc.use_local_subchannel_pool`: channels with the same target
and options otherwise share one connection through gRPC's global subchannel pool (measured: 4
such channels still held 100 calls; with local pools, 400). The first client is the one the
batch API uses.
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any

import grpc
import xai_sdk
from xai_sdk.chat import Response, system, user
from xai_sdk.proto import chat_pb2

from evalcore.errors import ErrorKind
from evalcore.vendors.adapters._headers import RateInfo, parse_rate_info
from evalcore.vendors.adapters.common import Answer, Classified, M, SDKAdapter
from evalcore.vendors.protocol import JudgeRequest, Usage

NO_PROMPTS_IN_TELEMETRY = "XAI_SDK_DISABLE_SENSITIVE_TELEMETRY_ATTRIBUTES"
"""xai-sdk 1.21 leaves prompts out of its telemetry when this is "1" or "true" (telemetry/config.py)."""

_RATE = grpc.StatusCode.RESOURCE_EXHAUSTED
_TRANSIENT = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.CANCELLED,
}


@cache
def response_format(schema: type[Any]) -> chat_pb2.ResponseFormat:
    """The JSON-schema `response_format` of `schema`, built once per schema.

    Why not pass the class, as the SDK allows: xai-sdk 1.21 then runs pydantic's
    `model_json_schema()` and `json.dumps` on every call (`chat.create`), ~13 % of an xAI client's
    CPU per call at a top-tier rate (`benchmarks/top_tier.py --profile`). This is the message it
    builds from the class, so the request on the wire is the same."""
    return chat_pb2.ResponseFormat(
        format_type=chat_pb2.FORMAT_TYPE_JSON_SCHEMA, schema=json.dumps(schema.model_json_schema())
    )


def split_endpoint(endpoint: str | None) -> tuple[str | None, bool]:
    """`http://host:port` -> (host:port, insecure); `https://host` or `host:port` -> secure."""
    if not endpoint:
        return None, False
    if endpoint.startswith("http://"):
        return endpoint[len("http://") :].rstrip("/"), True
    if endpoint.startswith("https://"):
        return endpoint[len("https://") :].rstrip("/"), False
    return endpoint, False


def _metadata(exc: grpc.aio.AioRpcError) -> list[tuple[str, str | bytes]]:
    items: list[tuple[str, str | bytes]] = []
    for md in (exc.trailing_metadata(), exc.initial_metadata()):
        if md:
            items.extend((str(k), v) for k, v in md)
    return items


def read_chat_response(response: Any) -> tuple[Usage, str, str | None]:
    """(usage, answer text, why the answer is unusable or None), online and in batch results."""
    u = response.usage
    # xAI reports reasoning apart from `completion_tokens` and bills both as output (its
    # `cost_in_usd_ticks` includes them): output_tokens is what was billed, as for the others,
    # so the estimate's calibration from a run's calls table counts the reasoning too
    usage = Usage(
        input_tokens=u.prompt_tokens,
        cached_input_tokens=u.cached_prompt_text_tokens,
        output_tokens=u.completion_tokens + u.reasoning_tokens,
        reasoning_tokens=u.reasoning_tokens,
    )
    if response.finish_reason == "REASON_MAX_LEN":
        return usage, "", "truncated output (finish_reason REASON_MAX_LEN)"
    return usage, response.content, None


class XAIVendor(SDKAdapter[xai_sdk.AsyncClient, Response]):
    """xAI (Grok) judge over gRPC: structured output, reported cost, no channel retries."""

    adapter = "xai"

    def _new_client(self, api_key: str, capacity: int) -> xai_sdk.AsyncClient:
        """One channel's client (module doc: its own connection, no gRPC retries)."""
        # read by the SDK whenever it records a span; set here so every process with a client has it
        os.environ[NO_PROMPTS_IN_TELEMETRY] = "1"
        host, insecure = split_endpoint(self.cfg.endpoint)
        kwargs: dict[str, Any] = {
            "api_key": api_key,
            "timeout": self.cfg.timeout_s,
            # its own connection per channel (module doc); no gRPC retries (they multiply with ours)
            "channel_options": [("grpc.enable_retries", 0), ("grpc.use_local_subchannel_pool", 1)],
            "use_insecure_channel": insecure,
        }
        if host:
            kwargs["api_host"] = host
        return xai_sdk.AsyncClient(**kwargs)

    async def _close_one(self, client: xai_sdk.AsyncClient) -> None:
        await client.close()

    def params(self, request: JudgeRequest, schema: type[M]) -> dict[str, Any]:
        """`chat.create` arguments (the same online and for a batched chat)."""
        kwargs: dict[str, Any] = {
            "model": self.cfg.model,
            "messages": [system(request.system_prompt), user(request.user_text)],
            "response_format": response_format(schema),
            "max_tokens": request.max_output_tokens or self.cfg.max_output_tokens,
            "store_messages": False,  # pinned (see the module doc)
        }
        if self.cfg.reasoning_effort:
            kwargs["reasoning_effort"] = self.cfg.reasoning_effort
        return kwargs

    async def _send(self, client: xai_sdk.AsyncClient, params: dict[str, Any], timeout_s: float) -> Response:
        # the per-call limit is the base's asyncio.timeout (see the module doc)
        return await client.chat.create(**params).sample()

    async def _read(self, raw: Response) -> Answer:
        usage, text, problem = read_chat_response(raw)
        return Answer(usage, text, problem, raw.id or None, cost_usd=raw.cost_usd,
                      capped=raw.finish_reason == "REASON_MAX_LEN")

    def rate_info(self, exc: BaseException) -> RateInfo | None:
        if isinstance(exc, grpc.aio.AioRpcError):
            return parse_rate_info(_metadata(exc))
        return super().rate_info(exc)

    def describe(self, exc: BaseException) -> str:
        if isinstance(exc, grpc.aio.AioRpcError):
            return f"gRPC {exc.code().name}: {exc.details() or ''}".strip()
        return super().describe(exc)

    def classify(self, exc: BaseException) -> Classified:
        if isinstance(exc, grpc.aio.AioRpcError):
            code = exc.code()
            retry_after = parse_rate_info(_metadata(exc)).retry_after_s
            if code is _RATE:
                if "larger than max" in (exc.details() or "").lower():  # message size, not a rate
                    return Classified(ErrorKind.FATAL)
                return Classified(ErrorKind.RATE_LIMITED, retry_after)
            if code is grpc.StatusCode.DEADLINE_EXCEEDED:
                return Classified(ErrorKind.TIMEOUT)
            if code in _TRANSIENT:
                return Classified(ErrorKind.TRANSIENT, retry_after)
            return Classified(ErrorKind.FATAL)
        return super().classify(exc)
