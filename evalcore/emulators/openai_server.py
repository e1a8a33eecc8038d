"""OpenAI emulator: `POST /v1/responses` and `POST /v1/chat/completions` over HTTP (aiohttp).

Why faithful bodies and headers: the adapter is tested with the real `openai` SDK against this
server, so every field the SDK (or `_strict_response_validation`) reads must be there, and errors
must carry the exact shape the SDK turns into `RateLimitError`, `InternalServerError`, ...
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from evalcore.emulators._batches import BatchItem, EmulatedBatch
from evalcore.emulators._engine import Decision, Outcome
from evalcore.emulators._http import BROKEN_BODY, HttpEmulator, bearer_key, join, read_json, text_of
from evalcore.emulators._limits import RateSnapshot, openai_duration, seconds_text
from evalcore.emulators.responders import EmulatedRequest

_SYSTEM_ROLES = {"system", "developer"}


def _rate_headers(rate: RateSnapshot) -> dict[str, str]:
    return {
        "x-ratelimit-limit-requests": str(rate.requests_limit),
        "x-ratelimit-remaining-requests": str(rate.requests_remaining),
        "x-ratelimit-reset-requests": openai_duration(rate.requests_reset_s),
        "x-ratelimit-limit-tokens": str(rate.tokens_limit),
        "x-ratelimit-remaining-tokens": str(rate.tokens_remaining),
        "x-ratelimit-reset-tokens": openai_duration(rate.tokens_reset_s),
    }


def _error(status: int, message: str, type_: str, code: str | None, headers: dict[str, str]) -> web.Response:
    body = {"error": {"message": message, "type": type_, "param": None, "code": code}}
    return web.json_response(body, status=status, headers=headers)


def _json_schema(fmt: Any) -> tuple[dict[str, Any] | None, str | None]:
    """(schema, name) from a Responses `text.format` or a Chat `json_schema` object."""
    if not isinstance(fmt, dict):
        return None, None
    schema = fmt.get("schema")
    name = fmt.get("name")
    return (schema if isinstance(schema, dict) else None), (name if isinstance(name, str) else None)


class OpenAIEmulator(HttpEmulator):
    """The OpenAI API on 127.0.0.1: point `AsyncOpenAI(base_url=emu.base_url)` at it."""

    vendor = "openai"
    id_prefix = "req_"

    @property
    def base_url(self) -> str:
        """http://127.0.0.1:PORT/v1 (the SDK needs the /v1)."""
        return f"{self.origin}/v1"

    def _routes(self) -> list[web.RouteDef]:
        return [
            web.post("/v1/responses", self._responses),
            web.post("/v1/chat/completions", self._chat),
            web.post("/v1/files", self._file_create),
            web.get("/v1/files/{file_id}", self._file_get),
            web.get("/v1/files/{file_id}/content", self._file_content),
            web.post("/v1/batches", self._batch_create),
            web.get("/v1/batches", self._batch_list),
            web.get("/v1/batches/{batch_id}", self._batch_get),
            web.post("/v1/batches/{batch_id}/cancel", self._batch_cancel),
        ]

    _files: dict[str, tuple[dict[str, Any], bytes]] | None = None

    @property
    def files(self) -> dict[str, tuple[dict[str, Any], bytes]]:
        """Uploaded and generated files: id -> (FileObject JSON, content)."""
        if self._files is None:
            self._files = {}
        return self._files

    # -- request parsing ------------------------------------------------------------------------

    def _parse_responses(self, body: dict[str, Any], headers: dict[str, str]) -> EmulatedRequest:
        system: list[str] = []
        user: list[str] = []
        if isinstance(body.get("instructions"), str):
            system.append(body["instructions"])
        items = body.get("input")
        if isinstance(items, str):
            user.append(items)
        elif isinstance(items, list):
            for item in items:
                if not isinstance(item, dict):
                    continue
                role = item.get("role")
                if role in _SYSTEM_ROLES:
                    system.append(text_of(item.get("content")))
                elif role == "user":
                    user.append(text_of(item.get("content")))
        text = body.get("text")
        schema, name = _json_schema(text.get("format") if isinstance(text, dict) else None)
        reasoning = body.get("reasoning")
        max_out = body.get("max_output_tokens")
        return EmulatedRequest(
            vendor="openai",
            api="responses",
            model=str(body.get("model", "")),
            system=join(system),
            user=join(user),
            json_schema=schema,
            schema_name=name,
            reasoning_effort=reasoning.get("effort") if isinstance(reasoning, dict) else None,
            max_output_tokens=max_out if isinstance(max_out, int) else None,
            headers=headers,
        )

    def _parse_chat(self, body: dict[str, Any], headers: dict[str, str]) -> EmulatedRequest:
        system: list[str] = []
        user: list[str] = []
        for msg in body.get("messages") or []:
            if not isinstance(msg, dict):
                continue
            if msg.get("role") in _SYSTEM_ROLES:
                system.append(text_of(msg.get("content")))
            elif msg.get("role") == "user":
                user.append(text_of(msg.get("content")))
        fmt = body.get("response_format")
        schema, name = _json_schema(fmt.get("json_schema") if isinstance(fmt, dict) else None)
        max_out = body.get("max_completion_tokens", body.get("max_tokens"))
        effort = body.get("reasoning_effort")
        return EmulatedRequest(
            vendor="openai",
            api="chat.completions",
            model=str(body.get("model", "")),
            system=join(system),
            user=join(user),
            json_schema=schema,
            schema_name=name,
            reasoning_effort=effort if isinstance(effort, str) else None,
            max_output_tokens=max_out if isinstance(max_out, int) else None,
            headers=headers,
        )

    # -- handlers -------------------------------------------------------------------------------

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, self._parse_responses, self._render_response)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, self._parse_chat, self._render_chat)

    async def _serve(
        self,
        request: web.Request,
        parse: Callable[[dict[str, Any], dict[str, str]], EmulatedRequest],
        render: Callable[[Decision, EmulatedRequest, dict[str, Any]], dict[str, Any]],
    ) -> web.StreamResponse:
        headers = {k.lower(): v for k, v in request.headers.items()}
        body = await read_json(request)
        if body is None or not isinstance(body.get("model"), str):
            d = self.engine.bad_request(
                method=request.method,
                path=request.path,
                headers=headers,
                message="body must be a JSON object with a model",
            )
            return _error(400, d.message, "invalid_request_error", None, {"x-request-id": d.request_id})
        req = parse(body, headers)
        d = await self.engine.handle(
            req, method=request.method, path=request.path, body=body, presented_key=bearer_key(request)
        )
        out = {"x-request-id": d.request_id, **_rate_headers(d.rate)}
        if d.outcome == Outcome.AUTH_ERROR:
            return _error(
                401,
                f"Incorrect API key provided ({d.message}).",
                "invalid_request_error",
                "invalid_api_key",
                out,
            )
        if d.outcome == Outcome.RATE_LIMITED:
            out["retry-after"] = seconds_text(d.retry_after_s)
            out["retry-after-ms"] = str(max(round(d.retry_after_s * 1000), 0))
            return _error(429, d.message + ". Please try again later.", d.scope, "rate_limit_exceeded", out)
        if d.outcome in (Outcome.SERVER_ERROR, Outcome.RESPONDER_ERROR):
            return _error(d.status, d.message, "server_error", None, out)
        if d.outcome == Outcome.BROKEN_BODY:
            return web.Response(status=200, text=BROKEN_BODY, content_type="application/json", headers=out)
        out["openai-processing-ms"] = str(
            round(
                ((d.record.finished_monotonic or d.record.received_monotonic) - d.record.received_monotonic)
                * 1000
            )
        )
        return web.json_response(render(d, req, body), headers=out)

    # -- files and batches (the Batch API on /v1/responses) ------------------------------------

    def _new_file(self, filename: str, purpose: str, data: bytes) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "id": "file-" + secrets.token_hex(12),
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }
        self.files[obj["id"]] = (obj, data)
        return obj

    def _denied(self, request: web.Request) -> web.Response | None:
        if self.batches.authorized(bearer_key(request)):
            return None
        return _error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key", {})

    async def _file_create(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._denied(request)) is not None:
            return denied
        form = await request.post()
        upload = form.get("file")
        purpose = str(form.get("purpose", ""))
        if not isinstance(upload, web.FileField) or purpose != "batch":
            return _error(400, "expected a multipart file with purpose=batch", "invalid_request_error", None, {})
        return web.json_response(self._new_file(upload.filename or "input.jsonl", purpose, upload.file.read()))

    async def _file_get(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._denied(request)) is not None:
            return denied
        found = self.files.get(request.match_info["file_id"])
        if found is None:
            return _error(404, "No such File object", "invalid_request_error", None, {})
        return web.json_response(found[0])

    async def _file_content(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._denied(request)) is not None:
            return denied
        found = self.files.get(request.match_info["file_id"])
        if found is None:
            return _error(404, "No such File object", "invalid_request_error", None, {})
        return web.Response(body=found[1], content_type="application/octet-stream")

    async def _batch_create(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._denied(request)) is not None:
            return denied
        body = await read_json(request) or {}
        endpoint = body.get("endpoint")
        found = self.files.get(str(body.get("input_file_id")))
        if found is None or endpoint not in ("/v1/responses", "/v1/chat/completions"):
            return _error(400, "input_file_id must name an uploaded file and endpoint a supported one",
                          "invalid_request_error", None, {})
        if body.get("completion_window") != "24h":
            return _error(400, "completion_window must be 24h", "invalid_request_error", None, {})
        headers = {k.lower(): v for k, v in request.headers.items()}
        parse = self._parse_responses if endpoint == "/v1/responses" else self._parse_chat
        items: list[BatchItem] = []
        for n, line in enumerate(found[1].decode().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                return _error(400, f"line {n} of the input file is not JSON", "invalid_request_error", None, {})
            inner = entry.get("body") if isinstance(entry, dict) else None
            if not isinstance(inner, dict) or entry.get("url") != endpoint or not entry.get("custom_id"):
                return _error(400, f"line {n}: needs custom_id, url {endpoint} and a body",
                              "invalid_request_error", None, {})
            items.append(BatchItem(str(entry["custom_id"]), parse(inner, headers), inner))
        metadata = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        batch = self.batches.create("batch_", str(endpoint), items, metadata)
        batch.metadata["input_file_id"] = str(body["input_file_id"])
        return web.json_response(self._render_batch(batch))

    async def _batch_list(self, request: web.Request) -> web.StreamResponse:
        """Newest first, one page (the emulator never holds more batches than a test makes)."""
        if (denied := self._denied(request)) is not None:
            return denied
        data = [self._render_batch(await self.batches.refresh(b, poll=False))
                for b in reversed(list(self.batches.batches.values()))]
        return web.json_response({"object": "list", "data": data, "has_more": False,
                                  "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    async def _batch_get(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._denied(request)) is not None:
            return denied
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return _error(404, "No such batch", "invalid_request_error", None, {})
        await self.batches.refresh(batch)
        return web.json_response(self._render_batch(batch))

    async def _batch_cancel(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._denied(request)) is not None:
            return denied
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return _error(404, "No such batch", "invalid_request_error", None, {})
        self.batches.cancel(batch)
        return web.json_response(self._render_batch(batch))

    def _result_files(self, batch: EmulatedBatch) -> tuple[str | None, str | None]:
        """The output and error files of an ended batch (made once, at its first look)."""
        if "output_file_id" in batch.metadata:
            return batch.metadata["output_file_id"] or None, batch.metadata["error_file_id"] or None
        out: list[str] = []
        err: list[str] = []
        for item in batch.items.values():
            line: dict[str, Any] = {"id": "batch_req_" + secrets.token_hex(12), "custom_id": item.custom_id}
            d = item.decision
            if item.outcome == "succeeded" and d is not None:
                render = self._render_response if batch.endpoint == "/v1/responses" else self._render_chat
                line["response"] = {"status_code": 200, "request_id": d.request_id,
                                    "body": render(d, item.request, item.body)}
                line["error"] = None
                out.append(json.dumps(line))
            elif item.outcome == "errored":
                line["response"] = {"status_code": 500, "request_id": self.engine.new_id(),
                                    "body": {"error": {"message": item.error, "type": "server_error",
                                                       "param": None, "code": None}}}
                line["error"] = None
                err.append(json.dumps(line))
            else:
                code = "batch_expired" if item.outcome == "expired" else "batch_cancelled"
                line["response"] = None
                line["error"] = {"code": code, "message": item.error}
                err.append(json.dumps(line))
        ids: list[str] = []
        for name, lines in (("output", out), ("errors", err)):
            ids.append(self._new_file(f"{batch.id}_{name}.jsonl", "batch_output",
                                      ("\n".join(lines) + "\n").encode())["id"] if lines else "")
        batch.metadata["output_file_id"], batch.metadata["error_file_id"] = ids
        return ids[0] or None, ids[1] or None

    def _render_batch(self, batch: EmulatedBatch) -> dict[str, Any]:
        counts = batch.counts()
        ended = batch.state == "ended"
        status = "in_progress"
        if batch.state == "cancelling":
            status = "cancelling"
        elif ended:
            status = "cancelled" if batch.cancelled else "expired" if batch.expired else "completed"
        output_file_id, error_file_id = self._result_files(batch) if ended else (None, None)
        at = int(batch.ended_at) if batch.ended_at else None
        meta = {k: v for k, v in batch.metadata.items()
                if k not in ("input_file_id", "output_file_id", "error_file_id")}
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "errors": None,
            "input_file_id": batch.metadata.get("input_file_id", ""),
            "completion_window": "24h",
            "status": status,
            "output_file_id": output_file_id,
            "error_file_id": error_file_id,
            "created_at": int(batch.created_at),
            "in_progress_at": int(batch.created_at),
            "expires_at": int(batch.expires_at),
            "finalizing_at": at,
            "completed_at": at if status == "completed" else None,
            "failed_at": None,
            "expired_at": at if status == "expired" else None,
            "cancelling_at": int(batch.created_at) if batch.cancelled else None,
            "cancelled_at": at if status == "cancelled" else None,
            "request_counts": {
                "total": len(batch.items),
                "completed": counts["succeeded"],
                "failed": len(batch.items) - counts["succeeded"] - counts["processing"],
            },
            "metadata": meta or None,
        }

    # -- rendering ------------------------------------------------------------------------------

    @staticmethod
    def _render_response(d: Decision, req: EmulatedRequest, body: dict[str, Any]) -> dict[str, Any]:
        u = d.usage
        assert u is not None
        incomplete = d.finish == "length"
        output: list[dict[str, Any]] = []
        if u.reasoning_tokens:
            output.append({"type": "reasoning", "id": "rs_" + secrets.token_hex(16), "summary": []})
        output.append(
            {
                "type": "message",
                "id": "msg_" + secrets.token_hex(16),
                "status": "incomplete" if incomplete else "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": d.content, "annotations": [], "logprobs": []}],
            }
        )
        text = body.get("text") if isinstance(body.get("text"), dict) else {"format": {"type": "text"}}
        return {
            "id": "resp_" + secrets.token_hex(24),
            "object": "response",
            "created_at": int(time.time()),
            "status": "incomplete" if incomplete else "completed",
            "background": False,
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
            "instructions": body.get("instructions"),
            "max_output_tokens": req.max_output_tokens,
            "model": req.model,
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": req.reasoning_effort, "summary": None},
            "service_tier": "default",
            "store": True,
            "temperature": 1.0,
            "text": text,
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": {
                "input_tokens": u.input_tokens,
                "input_tokens_details": {"cached_tokens": u.cached_tokens, "cache_write_tokens": 0},
                "output_tokens": u.output_tokens,
                "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
                "total_tokens": u.input_tokens + u.output_tokens,
            },
            "user": None,
            "metadata": {},
        }

    @staticmethod
    def _render_chat(d: Decision, req: EmulatedRequest, body: dict[str, Any]) -> dict[str, Any]:
        u = d.usage
        assert u is not None
        return {
            "id": "chatcmpl-" + secrets.token_hex(14),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": d.content,
                        "refusal": None,
                        "annotations": [],
                    },
                    "logprobs": None,
                    "finish_reason": "length" if d.finish == "length" else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": u.input_tokens,
                "completion_tokens": u.output_tokens,
                "total_tokens": u.input_tokens + u.output_tokens,
                "prompt_tokens_details": {"cached_tokens": u.cached_tokens, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": u.reasoning_tokens,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },
            "service_tier": "default",
            "system_fingerprint": "fp_emulated",
        }
