"""Anthropic emulator: `POST /v1/messages` over HTTP (aiohttp), as `anthropic` 2.14 speaks it.

Why these details: the SDK authenticates with `Authorization: Bearer` (so `x-api-key` is accepted
but never required), `messages.parse` asks for JSON through `output_config.format`, the older
forced-tool style returns a `tool_use` block, and usage follows Anthropic's semantics where
`input_tokens` EXCLUDES the cache reads and writes (total prompt = input + cache_read +
cache_creation). Prompt caching covers only the prefix up to a `cache_control` breakpoint.

Message batches are kept as the vendor keeps them: listed (newest first, paged) and retrievable
until deleted (`messages.batches.delete`, only once ended: an in-progress batch must be cancelled
first), and archived `BatchSettings.results_kept_s` (29 days) after creation -- still listed, with
`archived_at` set, but its results are gone. Messages themselves have no per-request retention
switch, so nothing online is kept by id.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from doubles.emulators._batches import BatchItem, EmulatedBatch
from doubles.emulators._engine import Decision, Outcome
from doubles.emulators._http import BROKEN_BODY, HttpEmulator, bearer_key, join, read_json, text_of
from doubles.emulators._limits import RateSnapshot, seconds_text
from doubles.emulators.responders import EmulatedRequest

_ALPHABET = string.ascii_letters + string.digits

#: HTTP status -> Anthropic error type (what the SDK puts in `.type` / maps to its classes).
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def _anthropic_id(prefix: str) -> str:
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(24))


def _rfc3339_in(seconds: float) -> str:
    at = datetime.now(UTC) + timedelta(seconds=seconds)
    return at.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _rfc3339(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _rate_headers(rate: RateSnapshot) -> dict[str, str]:
    out = {
        "anthropic-ratelimit-requests-limit": str(rate.requests_limit),
        "anthropic-ratelimit-requests-remaining": str(rate.requests_remaining),
        "anthropic-ratelimit-requests-reset": _rfc3339_in(rate.requests_reset_s),
    }
    # One token bucket backs the combined, input and output token headers.
    for kind in ("tokens", "input-tokens", "output-tokens"):
        out[f"anthropic-ratelimit-{kind}-limit"] = str(rate.tokens_limit)
        out[f"anthropic-ratelimit-{kind}-remaining"] = str(rate.tokens_remaining)
        out[f"anthropic-ratelimit-{kind}-reset"] = _rfc3339_in(rate.tokens_reset_s)
    return out


def error_body(status: int, message: str, request_id: str) -> dict[str, Any]:
    """Anthropic's error body for `status` (also an errored batch result's `error`)."""
    type_ = _ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": type_, "message": message}, "request_id": request_id}


def _error(status: int, message: str, request_id: str, headers: dict[str, str]) -> web.Response:
    return web.json_response(error_body(status, message, request_id), status=status, headers=headers)


def not_found_message(model: str) -> str:
    """What Anthropic says of a model it does not serve (HTTP 404, `not_found_error`)."""
    return f"model: {model}"


def _thinking(body: dict[str, Any]) -> tuple[bool, int | None]:
    """(thinking on, its budget_tokens): `{"type": "enabled", "budget_tokens": N}` or `{"type": "adaptive"}`."""
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "adaptive"):
        return False, None
    budget = thinking.get("budget_tokens")
    return True, budget if isinstance(budget, int) and thinking["type"] == "enabled" else None


DEFAULT_EFFORT = "high"
"""Anthropic's effort when a request with thinking on does not set `output_config.effort`."""


def _cache_breakpoints(body: dict[str, Any]) -> list[int]:
    """Where each `cache_control` breakpoint ends, as offsets in the joined user text.

    A breakpoint on a system block caches the system prompt only (offset 0); one on a user content
    block caches everything up to the end of that block. The offsets follow `_parse`'s joining
    (content parts concatenated, messages separated by a blank line).
    """
    out: list[int] = []
    system = body.get("system")
    if isinstance(system, list) and any(isinstance(b, dict) and "cache_control" in b for b in system):
        out.append(0)
    pos, first = 0, True
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        content = msg.get("content")
        text = text_of(content)
        if not text:
            continue
        if not first:
            pos += 2
        first = False
        if isinstance(content, list):
            end = pos
            for part in content:
                end += len(text_of([part]))
                if isinstance(part, dict) and "cache_control" in part:
                    out.append(end)
        pos += len(text)
    return out


def _forced_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    """The tool the request forces (`tool_choice: {"type": "tool", "name": ...}`), if any."""
    choice = body.get("tool_choice")
    tools = body.get("tools")
    if not isinstance(choice, dict) or choice.get("type") != "tool" or not isinstance(tools, list):
        return None
    for tool in tools:
        if isinstance(tool, dict) and tool.get("name") == choice.get("name"):
            return tool
    return None


class AnthropicEmulator(HttpEmulator):
    """The Anthropic Messages API on 127.0.0.1: `AsyncAnthropic(base_url=emu.base_url)`."""

    vendor = "anthropic"
    id_prefix = "req_"

    @property
    def base_url(self) -> str:
        """http://127.0.0.1:PORT (the SDK adds /v1 itself)."""
        return self.origin

    def _routes(self) -> list[web.RouteDef]:
        return [
            web.post("/v1/messages", self._messages),
            web.post("/v1/messages/batches", self._batch_create),
            web.get("/v1/messages/batches", self._batch_list),
            web.get("/v1/messages/batches/{batch_id}", self._batch_get),
            web.get("/v1/messages/batches/{batch_id}/results", self._batch_results),
            web.post("/v1/messages/batches/{batch_id}/cancel", self._batch_cancel),
            web.delete("/v1/messages/batches/{batch_id}", self._batch_delete),
        ]

    # -- what is received and kept --------------------------------------------------------------

    @staticmethod
    def retention_settings(body: dict[str, Any]) -> dict[str, Any]:
        """Anthropic has no per-request retention switch; what a request decides is how long its
        cached prefixes live: the TTL of each `cache_control` breakpoint ("5m" unless "1h")."""
        ttls: list[str] = []
        blocks: list[Any] = list(body.get("system") or []) if isinstance(body.get("system"), list) else []
        for msg in body.get("messages") or []:
            if isinstance(msg, dict) and isinstance(msg.get("content"), list):
                blocks.extend(msg["content"])
        for block in blocks:
            control = block.get("cache_control") if isinstance(block, dict) else None
            if isinstance(control, dict):
                ttls.append(str(control.get("ttl", "5m")))
        return {"cache_control_ttls": ttls}

    def retained(self) -> dict[str, list[str]]:
        """Batches still holding requests or results, and archived ones (listed, contents gone)."""
        self.batches.archive_due(self.config.batch.results_kept_s)
        batches = self.batches.batches.values()
        return {
            "batches": [b.id for b in batches if b.archived_at is None],
            "archived_batches": [b.id for b in batches if b.archived_at is not None],
        }

    async def _look(self, batch: EmulatedBatch, *, poll: bool = True) -> EmulatedBatch:
        """Bring a batch up to the clock: end it when due, archive batches past their retention."""
        await self.batches.refresh(batch, poll=poll)
        self.batches.archive_due(self.config.batch.results_kept_s)
        return batch

    # -- message batches ------------------------------------------------------------------------

    def _denied(self, request: web.Request) -> web.Response | None:
        if self.batches.authorized(bearer_key(request)):
            return None
        return _error(401, "invalid x-api-key", _anthropic_id("req_"), {})

    async def _batch_create(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._denied(request)) is not None:
            return denied
        headers = {k.lower(): v for k, v in request.headers.items()}
        body = await read_json(request) or {}
        entries = body.get("requests")
        if not isinstance(entries, list) or not entries:
            return _error(400, "requests: a non-empty list is required", _anthropic_id("req_"), {})
        items: list[BatchItem] = []
        for n, entry in enumerate(entries):
            params = entry.get("params") if isinstance(entry, dict) else None
            custom_id = entry.get("custom_id") if isinstance(entry, dict) else None
            if (
                not isinstance(params, dict)
                or not isinstance(custom_id, str)
                or not _CUSTOM_ID.fullmatch(custom_id)
                or not isinstance(params.get("messages"), list)
            ):
                return _error(400, f"requests.{n}: needs a custom_id matching {_CUSTOM_ID.pattern} and "
                              "params with model and messages", _anthropic_id("req_"), {})
            items.append(BatchItem(custom_id, self._parse(params, headers), params, _cache_breakpoints(params)))
        batch = self.batches.create("msgbatch_", "/v1/messages", items)
        self.log.add("messages.batches.create", {"requests": len(items)}, body, object_id=batch.id)
        for item in items:
            self.log.add("messages", self.retention_settings(item.body), item.body, model=item.request.model,
                         batch_id=batch.id, custom_id=item.custom_id)
        return web.json_response(self._render_batch(batch))

    async def _batch_list(self, request: web.Request) -> web.StreamResponse:
        """`messages.batches.list`: newest first, `limit` (default 20) a page, `after_id` / `before_id`."""
        if (denied := self._denied(request)) is not None:
            return denied
        batches = [await self._look(b, poll=False) for b in reversed(list(self.batches.batches.values()))]
        ids = [b.id for b in batches]
        after, before = request.query.get("after_id"), request.query.get("before_id")
        try:
            limit = min(max(int(request.query.get("limit", 20)), 1), 1000)
        except ValueError:
            return _error(400, "limit must be an integer", _anthropic_id("req_"), {})
        if before is not None:
            end = ids.index(before) if before in ids else 0
            page, has_more = batches[max(end - limit, 0) : end], end - limit > 0
        else:
            start = ids.index(after) + 1 if after in ids else 0 if after is None else len(ids)
            page, has_more = batches[start : start + limit], start + limit < len(batches)
        data = [self._render_batch(b) for b in page]
        return web.json_response({"data": data, "has_more": has_more,
                                  "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    async def _batch_get(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._denied(request)) is not None:
            return denied
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return _error(404, "batch not found", _anthropic_id("req_"), {})
        await self._look(batch)
        return web.json_response(self._render_batch(batch))

    async def _batch_delete(self, request: web.Request) -> web.StreamResponse:
        """`messages.batches.delete`: only an ended batch (cancel an in-progress one first)."""
        if (denied := self._denied(request)) is not None:
            return denied
        batch_id = request.match_info["batch_id"]
        self.log.add("messages.batches.delete", object_id=batch_id)
        batch = self.batches.get(batch_id)
        if batch is None:
            return _error(404, "batch not found", _anthropic_id("req_"), {})
        await self._look(batch, poll=False)
        if batch.state != "ended":
            return _error(400, f"Message Batch {batch_id} cannot be deleted while it is processing; "
                          "cancel it first.", _anthropic_id("req_"), {})
        self.batches.delete(batch)
        return web.json_response({"id": batch_id, "type": "message_batch_deleted"})

    async def _batch_cancel(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._denied(request)) is not None:
            return denied
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return _error(404, "batch not found", _anthropic_id("req_"), {})
        self.batches.cancel(batch)
        return web.json_response(self._render_batch(batch))

    async def _batch_results(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._denied(request)) is not None:
            return denied
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return _error(404, "batch not found", _anthropic_id("req_"), {})
        await self._look(batch, poll=False)
        if batch.state != "ended":
            return _error(400, "batch is still processing", _anthropic_id("req_"), {})
        if batch.archived_at is not None:
            return _error(404, f"the results of Message Batch {batch.id} are no longer available "
                          "(archived)", _anthropic_id("req_"), {})
        lines = []
        for item in batch.items.values():
            result: dict[str, Any]
            if item.outcome == "succeeded" and item.decision is not None:
                result = {"type": "succeeded",
                          "message": self._render(item.decision, item.request, _forced_tool(item.body))}
            elif item.outcome == "errored" and item.decision is not None and item.decision.status == 404:
                result = {"type": "errored",
                          "error": error_body(404, not_found_message(item.request.model), _anthropic_id("req_"))}
            elif item.outcome == "errored":
                result = {"type": "errored", "error": error_body(500, item.error, _anthropic_id("req_"))}
            else:
                result = {"type": item.outcome or "expired"}
            lines.append(json.dumps({"custom_id": item.custom_id, "result": result}))
        return web.Response(text="\n".join(lines) + "\n", content_type="application/binary")

    def _render_batch(self, batch: EmulatedBatch) -> dict[str, Any]:
        counts = batch.counts()
        ended = batch.state == "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "canceling" if batch.state == "cancelling" else batch.state,
            "request_counts": {
                "processing": counts["processing"],
                "succeeded": counts["succeeded"],
                "errored": counts["errored"],
                "canceled": counts["canceled"],
                "expired": counts["expired"],
            },
            "created_at": _rfc3339(batch.created_at),
            "expires_at": _rfc3339(batch.expires_at),
            "ended_at": _rfc3339(batch.ended_at) if batch.ended_at else None,
            "archived_at": _rfc3339(batch.archived_at) if batch.archived_at else None,
            "cancel_initiated_at": _rfc3339(batch.created_at) if batch.cancelled else None,
            # absolute, as the real service sends it: the SDK GETs it verbatim
            "results_url": f"{self.origin}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    def _parse(self, body: dict[str, Any], headers: dict[str, str]) -> EmulatedRequest:
        system = body.get("system")
        user: list[str] = []
        for msg in body.get("messages") or []:
            if isinstance(msg, dict) and msg.get("role") == "user":
                user.append(text_of(msg.get("content")))
        schema: dict[str, Any] | None = None
        name: str | None = None
        raw_config = body.get("output_config")
        output_config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
        fmt = output_config.get("format")
        tool = _forced_tool(body)
        if isinstance(fmt, dict) and isinstance(fmt.get("schema"), dict):
            schema = fmt["schema"]
        elif tool is not None and isinstance(tool.get("input_schema"), dict):
            schema = tool["input_schema"]
            name = str(tool.get("name"))
        if schema is not None and isinstance(schema.get("title"), str):
            name = schema["title"]
        effort = output_config.get("effort")
        thinking, budget = _thinking(body)
        max_tokens = body.get("max_tokens")
        return EmulatedRequest(
            vendor="anthropic",
            api="messages",
            model=str(body.get("model", "")),
            system=text_of(system)
            if isinstance(system, list)
            else (system if isinstance(system, str) else ""),
            user=join(user),
            json_schema=schema,
            schema_name=name,
            # Claude reasons (and bills thinking tokens inside max_tokens) only with thinking on;
            # `effort` then sets how much (without thinking it shapes the answer, not hidden tokens).
            reasoning_effort=(effort if isinstance(effort, str) else DEFAULT_EFFORT) if thinking else None,
            reasoning_budget=budget,
            max_output_tokens=max_tokens if isinstance(max_tokens, int) else None,
            headers=headers,
        )

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        headers = {k.lower(): v for k, v in request.headers.items()}
        body = await read_json(request)
        if (
            body is None
            or not isinstance(body.get("model"), str)
            or not isinstance(body.get("messages"), list)
        ):
            d = self.engine.bad_request(
                method=request.method,
                path=request.path,
                headers=headers,
                message="body must be a JSON object with model and messages",
            )
            return _error(400, d.message, d.request_id, {"request-id": d.request_id})
        req = self._parse(body, headers)
        self.log.add("messages", self.retention_settings(body), body, model=req.model)
        d = await self.engine.handle(
            req,
            method=request.method,
            path=request.path,
            body=body,
            presented_key=bearer_key(request),
            cache_breakpoints=_cache_breakpoints(body),
        )
        out = {"request-id": d.request_id, **_rate_headers(d.rate)}
        if d.should_retry is not None:
            out["x-should-retry"] = "true" if d.should_retry else "false"
        if d.status == 404:
            return _error(404, not_found_message(req.model), d.request_id, out)
        if d.outcome == Outcome.AUTH_ERROR:
            return _error(401, d.message, d.request_id, out)
        if d.outcome == Outcome.RATE_LIMITED:
            out["retry-after"] = seconds_text(d.retry_after_s)
            return _error(429, d.message + ".", d.request_id, out)
        if d.outcome in (Outcome.SERVER_ERROR, Outcome.RESPONDER_ERROR):
            message = "Overloaded" if d.status == 529 else d.message
            return _error(d.status, message, d.request_id, out)
        if d.outcome == Outcome.BROKEN_BODY:
            return web.Response(status=200, text=BROKEN_BODY, content_type="application/json", headers=out)
        return web.json_response(self._render(d, req, _forced_tool(body)), headers=out)

    @staticmethod
    def _render(d: Decision, req: EmulatedRequest, tool: dict[str, Any] | None) -> dict[str, Any]:
        u = d.usage
        assert u is not None
        content: list[dict[str, Any]]
        if tool is not None:
            # Forced tool: the answer arrives as the tool's input (an object, never validated).
            tool_input = (
                d.answer if isinstance(d.answer, dict) and d.outcome in (Outcome.OK, Outcome.HANG) else {}
            )
            content = [
                {"type": "tool_use", "id": _anthropic_id("toolu_"), "name": tool["name"], "input": tool_input}
            ]
            stop = "max_tokens" if d.finish == "length" else "tool_use"
        else:
            content = [{"type": "text", "text": d.content, "citations": None}]
            stop = "max_tokens" if d.finish == "length" else "end_turn"
        if d.finish == "length" and not d.content:  # it thought up to max_tokens: no answer block
            content = []
        if u.reasoning_tokens:  # thinking comes first, signed (its text is not emulated)
            content.insert(0, {"type": "thinking", "thinking": "", "signature": _anthropic_id("sig_")})
        return {
            "id": _anthropic_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": req.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": u.input_tokens - u.cached_tokens - u.cache_write_tokens,
                "output_tokens": u.output_tokens,
                "cache_creation_input_tokens": u.cache_write_tokens,
                "cache_read_input_tokens": u.cached_tokens,
                "cache_creation": {
                    "ephemeral_5m_input_tokens": u.cache_write_tokens,
                    "ephemeral_1h_input_tokens": 0,
                },
                "server_tool_use": None,
                "service_tier": "standard",
            },
        }
