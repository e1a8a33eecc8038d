"""Anthropic judge over the Messages API with structured output and prompt caching (anthropic 2.14).

Why `messages.with_raw_response.create(output_config=...)` and our own validation rather than
`messages.parse`: `parse` has no raw-response wrapper (the headers the budget reads would need a
middleware), and a schema-violating answer is billed, so its usage must be read before the
validation fails. The schema goes through the SDK's own `transform_schema`, as `parse` does.

Prompt caching: the shared prefix (sources, deliverables) is its own content block ending in a
`cache_control: ephemeral` breakpoint, so every criterion of a submission reuses it.
An explicit timeout is always passed: without one the SDK refuses large `max_tokens` values
("Streaming is required") before sending anything.

Connection pools are ours (`_stainless.pooled_http_client`): the SDK's own holds at most 1,000 connections
(`anthropic.DEFAULT_CONNECTION_LIMITS`), one per request on the wire over HTTP/1.1, and one client
per `CALLS_PER_CLIENT` of the in-flight bound is built (`SDKAdapter`), each with a pool of that
many, so no pool caps the client below its bound (`evalcore.vendors.in_flight`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import anthropic
from anthropic.types import Message

from evalcore.vendors.adapters._headers import RateInfo, parse_rate_info
from evalcore.vendors.adapters._stainless import StainlessErrors, pooled_http_client
from evalcore.vendors.adapters.common import Answer, Classified, M, NonModelBody, SDKAdapter
from evalcore.vendors.protocol import JudgeRequest, Usage


@cache
def _output_schema(schema: type[Any]) -> dict[str, Any]:
    return anthropic.transform_schema(schema)


def _usage(message: Message) -> Usage:
    u = message.usage
    read = u.cache_read_input_tokens or 0
    created = u.cache_creation_input_tokens or 0
    return Usage(
        input_tokens=(u.input_tokens or 0) + read + created,
        cached_input_tokens=read,
        output_tokens=u.output_tokens or 0,
        # a cache write is billed above input (5-minute 1.25x, 1-hour 2x: `Price.bill`)
        cache_write_tokens=created,
        cache_write_1h_tokens=(u.cache_creation.ephemeral_1h_input_tokens or 0) if u.cache_creation else 0,
    )


def read_message(message: Message) -> tuple[Usage, str, str | None]:
    """(usage, answer text, why the answer is unusable or None), online and in batch results."""
    if message.stop_reason == "max_tokens":
        return _usage(message), "", "truncated output (stop_reason max_tokens)"
    if message.stop_reason == "refusal":
        return _usage(message), "", "the model refused (stop_reason refusal)"
    return _usage(message), "".join(block.text for block in message.content if block.type == "text"), None


class AnthropicVendor(SDKAdapter[anthropic.AsyncAnthropic, anthropic.AsyncAPIResponse[Any]]):
    """Anthropic Messages judge: JSON-schema output, cached shared prefix, effort setting."""

    adapter = "anthropic"

    def _new_client(self, api_key: str, capacity: int) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=self.cfg.endpoint or None,
            max_retries=0,
            timeout=self.cfg.timeout_s,
            http_client=pooled_http_client(anthropic, capacity),
        )

    async def _close_one(self, client: anthropic.AsyncAnthropic) -> None:
        await client.close()

    def _content(self, request: JudgeRequest) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if request.shared_prefix:
            block: dict[str, Any] = {"type": "text", "text": request.shared_prefix}
            if self.cfg.prompt_caching:
                block["cache_control"] = {"type": "ephemeral"}
            blocks.append(block)
        if request.varying_suffix or not blocks:
            blocks.append({"type": "text", "text": request.varying_suffix or "."})
        return blocks

    def params(self, request: JudgeRequest, schema: type[M]) -> dict[str, Any]:
        """The Messages request (the same online and as a message batch's `params`)."""
        output_config: dict[str, Any] = {"format": {"type": "json_schema", "schema": _output_schema(schema)}}
        if self.cfg.reasoning_effort:
            output_config["effort"] = self.cfg.reasoning_effort
        return {
            "model": self.cfg.model,
            "max_tokens": request.max_output_tokens or self.cfg.max_output_tokens,
            "system": request.system_prompt,
            "messages": [{"role": "user", "content": self._content(request)}],
            "output_config": output_config,
        }

    async def _send(
        self, client: anthropic.AsyncAnthropic, params: dict[str, Any], timeout_s: float
    ) -> anthropic.AsyncAPIResponse[Any]:
        # the timeout is always explicit (see the module doc)
        raw: anthropic.AsyncAPIResponse[Any] = await client.messages.with_raw_response.create(**params, timeout=timeout_s)
        return raw

    async def _read(self, raw: anthropic.AsyncAPIResponse[Any]) -> Answer:
        message = await raw.parse()
        if not isinstance(message, Message):
            raise NonModelBody(f"HTTP {raw.status_code}: the body is not a Message")
        usage, text, problem = read_message(message)
        # max_tokens counts thinking too: a stop there is retried with a larger cap
        return Answer(usage, text, problem, raw.request_id or message.id, rate=parse_rate_info(raw.headers),
                      capped=message.stop_reason == "max_tokens")

    def rate_info(self, exc: BaseException) -> RateInfo | None:
        return _ERRORS.rate_info(exc) or super().rate_info(exc)

    def describe(self, exc: BaseException) -> str:
        return _ERRORS.describe(exc) or super().describe(exc)

    def classify(self, exc: BaseException) -> Classified:
        return _ERRORS.classify(exc) or super().classify(exc)


def _out_of_credit(exc: Any) -> bool:
    code = (getattr(exc, "error_code", None) or "").lower()
    return "spend_limit" in code or "billing" in code


# 529 overloaded is >= 500; 499 is a client-closed request the API reports as retryable.
_ERRORS = StainlessErrors(anthropic, out_of_credit=_out_of_credit, transient_statuses=(408, 409, 499))
