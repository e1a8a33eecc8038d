"""OpenAI judge over the Responses API with a strict JSON-schema output (openai 3.57).

Why `responses.with_raw_response.create` and our own validation rather than `responses.parse`:
we need the rate-limit headers of every answer (the budget reads them), and a schema-violating
answer is still billed, so its usage must be read before validation fails. The text format is
built by the same SDK helper `responses.parse` uses, so the wire request is identical.

Nothing is kept at OpenAI that need not be: the tasks and deliverables graded are usually
confidential, and the Responses API stores every response (input and output, 30 days, shown in the
dashboard) unless told not to. Every request (and so every line of a batch, which uses `params`)
sends `store: false`, and `prompt_cache_retention` asks for the shortest cache lifetime the model
accepts (`VendorConfig.prompt_cache_retention`, `cache_retention`).

Connection pools are ours (`_stainless.pooled_http_client`): the SDK's own holds at most 1,000 connections
(`openai.DEFAULT_CONNECTION_LIMITS`), one per request on the wire over HTTP/1.1, and one client
per `CALLS_PER_CLIENT` of the in-flight bound is built (`SDKAdapter`), each with a pool of that
many, so no pool caps the client below its bound (`evalcore.vendors.in_flight`).
"""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any, Literal

import openai
from openai._legacy_response import LegacyAPIResponse
from openai.lib._parsing._responses import type_to_text_format_param
from openai.types.responses import Response

from evalcore.config.models import VendorConfig
from evalcore.errors import ErrorKind
from evalcore.vendors.adapters._headers import RateInfo, parse_rate_info
from evalcore.vendors.adapters._stainless import StainlessErrors, pooled_http_client
from evalcore.vendors.adapters.common import Answer, Classified, M, NonModelBody, SDKAdapter
from evalcore.vendors.protocol import JudgeRequest, Usage


def cache_retention(cfg: VendorConfig) -> Literal["in_memory", "24h"]:
    """The `prompt_cache_retention` to send: decided once, by the configuration (`VendorConfig.cache_retention`),
    which the private preset checks before anything is sent.

    The SDK calls this field deprecated in favour of `prompt_cache_options.ttl`, but that is a lifetime
    the cache must at least keep, not a limit: only this field bounds how long prefixes are kept.
    """
    return cfg.cache_retention()


@cache
def _text_format(schema: type[Any]) -> Any:
    return type_to_text_format_param(schema)


def _usage(response: Response) -> Usage:
    u = response.usage
    if u is None:
        return Usage()
    return Usage(
        input_tokens=u.input_tokens or 0,
        cached_input_tokens=(u.input_tokens_details.cached_tokens or 0) if u.input_tokens_details else 0,
        output_tokens=u.output_tokens or 0,
        reasoning_tokens=(u.output_tokens_details.reasoning_tokens or 0) if u.output_tokens_details else 0,
        cache_write_tokens=(u.input_tokens_details.cache_write_tokens or 0) if u.input_tokens_details else 0,
    )


def _refusal(response: Response) -> str | None:
    for item in response.output or []:
        if item.type == "message":
            for part in item.content or []:
                if part.type == "refusal":
                    return part.refusal
    return None


def stopped_at_cap(response: Response) -> bool:
    """The answer ended at `max_output_tokens` (reasoning counts inside it): retried with a larger cap."""
    details = response.incomplete_details
    return response.status == "incomplete" and details is not None and details.reason == "max_output_tokens"


def read_response(response: Response) -> tuple[Usage, str, str | None]:
    """(usage, output text, why the answer is unusable or None), online and in batch results."""
    if response.status == "incomplete":
        reason = response.incomplete_details.reason if response.incomplete_details else None
        return _usage(response), "", f"truncated output (status incomplete: {reason or 'unknown'})"
    refusal = _refusal(response)
    if refusal is not None:
        return _usage(response), "", f"the model refused: {refusal[:120]!r}"
    return _usage(response), response.output_text, None


class OpenAIVendor(SDKAdapter[openai.AsyncOpenAI, LegacyAPIResponse[Any]]):
    """OpenAI Responses API judge: structured output, reasoning effort, prompt-cache key."""

    adapter = "openai"

    def _new_client(self, api_key: str, capacity: int) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=self.cfg.endpoint or None,
            max_retries=0,
            timeout=self.cfg.timeout_s,
            http_client=pooled_http_client(openai, capacity),
        )

    async def _close_one(self, client: openai.AsyncOpenAI) -> None:
        await client.close()

    def params(self, request: JudgeRequest, schema: type[M]) -> dict[str, Any]:
        """The Responses request body (the same online and in a batch's JSONL line)."""
        kwargs: dict[str, Any] = {
            "model": self.cfg.model,
            "instructions": request.system_prompt,
            "input": request.user_text,
            "text": {"format": _text_format(schema)},
            "max_output_tokens": request.max_output_tokens or self.cfg.max_output_tokens,
            "store": False,  # the response is not kept at OpenAI (see the module doc)
            "prompt_cache_retention": cache_retention(self.cfg),
        }
        if self.cfg.reasoning_effort:
            kwargs["reasoning"] = {"effort": self.cfg.reasoning_effort}
        if self.cfg.prompt_caching and request.shared_prefix:
            # routes calls sharing the long prefix to the same cache
            kwargs["prompt_cache_key"] = hashlib.sha256(request.shared_prefix.encode()).hexdigest()[:32]
        return kwargs

    async def _send(
        self, client: openai.AsyncOpenAI, params: dict[str, Any], timeout_s: float
    ) -> LegacyAPIResponse[Any]:
        raw: LegacyAPIResponse[Any] = await client.responses.with_raw_response.create(**params, timeout=timeout_s)
        return raw

    async def _read(self, raw: LegacyAPIResponse[Any]) -> Answer:
        response = raw.parse()
        if not isinstance(response, Response):
            raise NonModelBody(f"HTTP {raw.status_code}: the body is not a Responses object")
        usage, text, problem = read_response(response)
        return Answer(usage, text, problem, raw.request_id or response.id, rate=parse_rate_info(raw.headers),
                      capped=stopped_at_cap(response))

    def rate_info(self, exc: BaseException) -> RateInfo | None:
        return _ERRORS.rate_info(exc) or super().rate_info(exc)

    def describe(self, exc: BaseException) -> str:
        return _ERRORS.describe(exc) or super().describe(exc)

    def classify(self, exc: BaseException) -> Classified:
        if isinstance(exc, openai.LengthFinishReasonError | openai.ContentFilterFinishReasonError):
            return Classified(ErrorKind.BAD_OUTPUT)
        return _ERRORS.classify(exc) or super().classify(exc)


_ERRORS = StainlessErrors(openai, out_of_credit=lambda exc: exc.code == "insufficient_quota")
