"""OpenAI emulator: `POST /v1/responses` and `POST /v1/chat/completions` over HTTP (aiohttp).

Why one module: the Responses, Chat Completions, Files and Batch endpoints share one server, its store and its clock, as the vendor's do.

Why faithful bodies and headers: the adapter is tested with the real `openai` SDK against this
server, so every field the SDK (or `_strict_response_validation`) reads must be there, and errors
must carry the exact shape the SDK turns into `RateLimitError`, `InternalServerError`, ...

Data is kept as the vendor keeps it: a response created with `store` true (the Responses default,
also inside a batch) can be read back (`responses.retrieve`, `responses.input_items.list`) until
deleted, one with `store: false` cannot (404); a chat completion only with `store: true`. Files
are listed and deleted, and expire by the emulator's clock (`expires_after` on upload, 30 days by
default for `purpose=batch`, a batch's `output_expires_after` for its output and error files);
a batch itself cannot be deleted, as at the vendor.

The batch queue limit (`BatchSettings.max_enqueued_tokens`, per model) is enforced as OpenAI does:
`batches.create` accepts a batch that would take the model's enqueued input tokens over the limit
(status `validating`), and the batch then reads `failed` with
`errors.data[0].code == "token_limit_exceeded"`, no output or error file and no request processed
(so nothing billed); the real SDK parses it as it parses the vendor's.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from doubles.emulators._batches import BatchItem, EmulatedBatch
from doubles.emulators._config import EmulatorConfig
from doubles.emulators._engine import Decision, Outcome
from doubles.emulators._http import BROKEN_BODY, HttpEmulator, bearer_key, join, read_json, text_of
from doubles.emulators._limits import Clock, RateSnapshot, openai_duration
from doubles.emulators._retention import keep
from doubles.emulators.responders import EmulatedRequest, Responder

_SYSTEM_ROLES = {"system", "developer"}
EXPIRY_RANGE_S = (3_600, 2_592_000)  # what files.create / batches.create accept (1 hour to 30 days)
BATCH_FILE_EXPIRY_S = 30 * 86_400  # purpose=batch uploads expire after 30 days unless told otherwise


def retention_settings(api: str, body: dict[str, Any]) -> dict[str, Any]:
    """What decides what OpenAI keeps of one request, resolved the vendor's way.

    `store`: absent or null means true for Responses and false for Chat Completions.
    `prompt_cache_retention` / `prompt_cache_ttl` (`prompt_cache_options.ttl`): None when not sent
    (the vendor then picks per model and organisation).
    """
    store = body.get("store")
    options = body.get("prompt_cache_options")
    return {
        "store": store if isinstance(store, bool) else api == "responses",
        "prompt_cache_retention": body.get("prompt_cache_retention"),
        "prompt_cache_ttl": options.get("ttl") if isinstance(options, dict) else None,
    }


def form_fields(form: Any) -> dict[str, Any]:
    """A multipart upload's fields as the JSON object they encode (what the API defines them as):
    `a[b]` fields nested, whole numbers as integers (multipart carries text), a file as its name
    (the content is not logged)."""
    out: dict[str, Any] = {}
    for name, value in form.items():
        text = value.filename if isinstance(value, web.FileField) else str(value)
        parsed: Any = int(text) if text.isdigit() else text
        if "[" in name and name.endswith("]"):
            outer, inner = name[:-1].split("[", 1)
            out.setdefault(outer, {})[inner] = parsed
        else:
            out[name] = parsed
    return out


def expiry_seconds(policy: Any, field: str) -> int | str:
    """The seconds of an `expires_after` / `output_expires_after` policy, or the error message."""
    if not isinstance(policy, dict) or policy.get("anchor") != "created_at":
        return f"{field}.anchor must be 'created_at'"
    try:
        seconds = int(policy.get("seconds"))  # type: ignore[arg-type]  # multipart sends text
    except (TypeError, ValueError):
        return f"{field}.seconds must be an integer"
    lo, hi = EXPIRY_RANGE_S
    if not lo <= seconds <= hi:
        return f"{field}.seconds must be between {lo} and {hi}, got {seconds}"
    return seconds


@dataclass
class StoredFile:
    """A file as the vendor holds it, until deleted or until the emulator's clock passes its expiry."""

    obj: dict[str, Any]  # the FileObject JSON
    data: bytes
    expires_clock: float | None = None  # the emulator's clock (BatchStore.now) at expiry


@dataclass
class StoredResponse:
    """A response (or chat completion) kept because its request had `store` true."""

    api: str  # "responses" or "chat.completions"
    payload: dict[str, Any]  # what the client was answered, returned again on retrieve
    body: dict[str, Any]  # the request, its input listed by responses.input_items


def _rate_headers(rate: RateSnapshot) -> dict[str, str]:
    return {
        "x-ratelimit-limit-requests": str(rate.requests_limit),
        "x-ratelimit-remaining-requests": str(rate.requests_remaining),
        "x-ratelimit-reset-requests": openai_duration(rate.requests_reset_s),
        "x-ratelimit-limit-tokens": str(rate.tokens_limit),
        "x-ratelimit-remaining-tokens": str(rate.tokens_remaining),
        "x-ratelimit-reset-tokens": openai_duration(rate.tokens_reset_s),
    }


def _error(
    status: int, message: str, type_: str, code: str | None, headers: dict[str, str], param: str | None = None
) -> web.Response:
    body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return web.json_response(body, status=status, headers=headers)


def model_not_found(model: str) -> dict[str, Any]:
    """OpenAI's error object for a model it does not serve (HTTP 404; also a batch error line's body)."""
    return {
        "message": f"The model `{model}` does not exist or you do not have access to it.",
        "type": "invalid_request_error",
        "param": "model",
        "code": "model_not_found",
    }


def retry_after_header(seconds: float) -> str:
    """`retry-after` as OpenAI's OpenAPI document types it: whole seconds, at least 1 (rounded up, so
    waiting that long always suffices; the exact wait is in `retry-after-ms`)."""
    return str(max(math.ceil(seconds - 1e-9), 1))


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

    def __init__(
        self,
        config: EmulatorConfig | None = None,
        *,
        responder: Responder | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        limits_clock: Clock = time.monotonic,
    ) -> None:
        super().__init__(config, responder=responder, host=host, port=port, limits_clock=limits_clock)
        self._files: dict[str, StoredFile] = {}
        self.batches.forget_at_end = False  # the result files are rendered from the text first (`_result_files`)
        self.stored: dict[str, StoredResponse] = {}
        """Responses and chat completions kept by `store`, by id (bounded by `max_recorded`)."""
        self._output_expiry: dict[str, int] = {}  # batch id -> output_expires_after seconds

    @property
    def base_url(self) -> str:
        """http://127.0.0.1:PORT/v1 (the SDK needs the /v1)."""
        return f"{self.origin}/v1"

    def _routes(self) -> list[web.RouteDef]:
        return [
            web.post("/v1/responses", self._responses),
            web.get("/v1/responses/{response_id}", self._stored_get),
            web.delete("/v1/responses/{response_id}", self._stored_delete),
            web.get("/v1/responses/{response_id}/input_items", self._input_items),
            web.post("/v1/chat/completions", self._chat),
            web.get("/v1/chat/completions/{response_id}", self._stored_get),
            web.delete("/v1/chat/completions/{response_id}", self._stored_delete),
            web.post("/v1/files", self._file_create),
            web.get("/v1/files", self._file_list),
            web.get("/v1/files/{file_id}", self._file_get),
            web.delete("/v1/files/{file_id}", self._file_delete),
            web.get("/v1/files/{file_id}/content", self._file_content),
            web.post("/v1/batches", self._batch_create),
            web.get("/v1/batches", self._batch_list),
            web.get("/v1/batches/{batch_id}", self._batch_get),
            web.post("/v1/batches/{batch_id}/cancel", self._batch_cancel),
        ]

    @property
    def files(self) -> dict[str, StoredFile]:
        """Uploaded and generated files not deleted or expired (by the emulator's clock), by id."""
        now = self.batches.now()
        for file_id in [i for i, f in self._files.items() if f.expires_clock is not None and f.expires_clock <= now]:
            del self._files[file_id]
        return self._files

    def retained(self) -> dict[str, list[str]]:
        """Stored responses and chat completions, live files and batches (which cannot be deleted)."""
        return {
            "responses": [i for i, r in self.stored.items() if r.api == "responses"],
            "chat.completions": [i for i, r in self.stored.items() if r.api == "chat.completions"],
            "files": list(self.files),
            "batches": list(self.batches.batches),
        }

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
        settings = retention_settings(req.api, body)
        entry = self.log.add(req.api, settings, body, model=req.model)
        d = await self.engine.handle(
            req, method=request.method, path=request.path, body=body, presented_key=bearer_key(request)
        )
        out = {"x-request-id": d.request_id, **_rate_headers(d.rate)}
        if d.should_retry is not None:
            out["x-should-retry"] = "true" if d.should_retry else "false"
        if d.status == 404:
            return web.json_response({"error": model_not_found(req.model)}, status=404, headers=out)
        if d.outcome == Outcome.AUTH_ERROR:
            return _error(
                401,
                f"Incorrect API key provided ({d.message}).",
                "invalid_request_error",
                "invalid_api_key",
                out,
            )
        if d.outcome == Outcome.RATE_LIMITED:
            out["retry-after"] = retry_after_header(d.retry_after_s)
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
        payload = render(d, req, body)
        if settings["store"]:
            keep(self.stored, payload["id"], StoredResponse(req.api, payload, body), self.config.max_recorded)
            entry.object_id = payload["id"]
        return web.json_response(payload, headers=out)

    # -- stored responses (`store`) -------------------------------------------------------------

    @staticmethod
    def _stored_api(request: web.Request) -> str:
        return "responses" if request.path.startswith("/v1/responses/") else "chat.completions"

    def _stored_of(self, request: web.Request) -> StoredResponse | None:
        found = self.stored.get(request.match_info["response_id"])
        return found if found is not None and found.api == self._stored_api(request) else None

    def _not_stored(self, request: web.Request) -> web.Response:
        kind = "Response" if self._stored_api(request) == "responses" else "Chat completion"
        message = f"{kind} with id '{request.match_info['response_id']}' not found."
        return _error(404, message, "invalid_request_error", None, {})

    async def _stored_get(self, request: web.Request) -> web.StreamResponse:
        """`responses.retrieve` / `chat.completions.retrieve`: only what was stored (else 404)."""
        if (denied := self._denied(request)) is not None:
            return denied
        self.log.add(f"{self._stored_api(request)}.retrieve", object_id=request.match_info["response_id"])
        found = self._stored_of(request)
        if found is None:
            return self._not_stored(request)
        return web.json_response(found.payload)

    async def _stored_delete(self, request: web.Request) -> web.StreamResponse:
        """`responses.delete` / `chat.completions.delete` (404 for what was never stored)."""
        if (denied := self._denied(request)) is not None:
            return denied
        response_id = request.match_info["response_id"]
        self.log.add(f"{self._stored_api(request)}.delete", object_id=response_id)
        found = self._stored_of(request)
        if found is None:
            return self._not_stored(request)
        del self.stored[response_id]
        if found.api == "responses":
            return web.json_response({"id": response_id, "object": "response", "deleted": True})
        return web.json_response({"id": response_id, "object": "chat.completion.deleted", "deleted": True})

    async def _input_items(self, request: web.Request) -> web.StreamResponse:
        """`responses.input_items.list`: the stored request's input, as the vendor keeps it."""
        if (denied := self._denied(request)) is not None:
            return denied
        found = self._stored_of(request)
        if found is None:
            return self._not_stored(request)
        raw = found.body.get("input")
        messages = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw if isinstance(raw, list) else []
        items = []
        for n, msg in enumerate(messages):
            if not isinstance(msg, dict) or msg.get("role") not in ("user", "system", "developer"):
                continue
            items.append({
                "id": f"msg_{n:04d}{found.payload['id'].removeprefix('resp_')}",  # stable: `after` pages
                "type": "message",
                "role": msg["role"],
                "status": "completed",
                "content": [{"type": "input_text", "text": text_of(msg.get("content"))}],
            })
        return web.json_response(_page(items, request.query))

    # -- files and batches (the Batch API on /v1/responses) ------------------------------------

    def _new_file(self, filename: str, purpose: str, data: bytes, expires_s: int | None = None) -> dict[str, Any]:
        created = int(time.time())
        obj: dict[str, Any] = {
            "id": "file-" + secrets.token_hex(12),
            "object": "file",
            "bytes": len(data),
            "created_at": created,
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }
        if expires_s is not None:  # the OpenAPI document: an integer when the file expires, else absent
            obj["expires_at"] = created + expires_s
        expires_clock = self.batches.now() + expires_s if expires_s is not None else None
        self._files[obj["id"]] = StoredFile(obj, data, expires_clock)
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
        expires_s: int | None = BATCH_FILE_EXPIRY_S
        if "expires_after[anchor]" in form or "expires_after[seconds]" in form:
            policy = {"anchor": form.get("expires_after[anchor]"), "seconds": form.get("expires_after[seconds]")}
            checked = expiry_seconds(policy, "expires_after")
            if isinstance(checked, str):
                return _error(400, checked, "invalid_request_error", None, {})
            expires_s = checked
        data = upload.file.read()
        obj = self._new_file(upload.filename or "input.jsonl", purpose, data, expires_s)
        self.log.add("files.create", {"purpose": purpose, "expires_after_s": expires_s}, form_fields(form),
                     object_id=obj["id"])
        return web.json_response(obj)

    async def _file_list(self, request: web.Request) -> web.StreamResponse:
        """`files.list`: live files, newest first unless `order=asc`, filtered by `purpose`."""
        if (denied := self._denied(request)) is not None:
            return denied
        purpose = request.query.get("purpose")
        objs = [f.obj for f in self.files.values() if purpose is None or f.obj["purpose"] == purpose]
        return web.json_response(_page(objs, request.query, default_limit=10_000))

    async def _file_get(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._denied(request)) is not None:
            return denied
        found = self.files.get(request.match_info["file_id"])
        if found is None:
            return _error(404, "No such File object", "invalid_request_error", None, {})
        return web.json_response(found.obj)

    async def _file_delete(self, request: web.Request) -> web.StreamResponse:
        """`files.delete`: the file and its content are gone (404 for an unknown or expired id)."""
        if (denied := self._denied(request)) is not None:
            return denied
        file_id = request.match_info["file_id"]
        self.log.add("files.delete", object_id=file_id)
        if self.files.pop(file_id, None) is None:
            return _error(404, "No such File object", "invalid_request_error", None, {})
        return web.json_response({"id": file_id, "object": "file", "deleted": True})

    async def _file_content(self, request: web.Request) -> web.StreamResponse:
        if (denied := self._denied(request)) is not None:
            return denied
        found = self.files.get(request.match_info["file_id"])
        if found is None:
            return _error(404, "No such File object", "invalid_request_error", None, {})
        return web.Response(body=found.data, content_type="application/octet-stream")

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
        output_expiry: int | None = None
        if body.get("output_expires_after") is not None:
            checked = expiry_seconds(body["output_expires_after"], "output_expires_after")
            if isinstance(checked, str):
                return _error(400, checked, "invalid_request_error", None, {})
            output_expiry = checked
        headers = {k.lower(): v for k, v in request.headers.items()}
        parse = self._parse_responses if endpoint == "/v1/responses" else self._parse_chat
        items: list[BatchItem] = []
        for n, line in enumerate(found.data.decode().splitlines(), start=1):
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
        model = items[0].request.model if items else ""  # one model per input file
        tokens = sum(self.engine.tokens(item.request.system + item.request.user) for item in items)
        refused = await self.batches.queue_refusal(model, tokens)  # created right after: no await between
        batch = self.batches.create("batch_", str(endpoint), items, metadata, model=model, input_tokens=tokens,
                                    refused=refused)
        batch.metadata["input_file_id"] = str(body["input_file_id"])
        if output_expiry is not None:
            self._output_expiry[batch.id] = output_expiry
        self.log.add("batches.create", {"output_expires_after_s": output_expiry}, body, object_id=batch.id)
        for item in items:
            self.log.add(item.request.api, retention_settings(item.request.api, item.body), item.body,
                         model=item.request.model, batch_id=batch.id, custom_id=item.custom_id)
        return web.json_response(self._render_batch(batch, created=True))

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
                payload = render(d, item.request, item.body)
                if retention_settings(item.request.api, item.body)["store"]:  # kept like an online one
                    keep(self.stored, payload["id"], StoredResponse(item.request.api, payload, item.body),
                         self.config.max_recorded)
                line["response"] = {"status_code": 200, "request_id": d.request_id, "body": payload}
                line["error"] = None
                out.append(json.dumps(line))
            elif item.outcome == "errored" and d is not None and d.outcome == Outcome.NOT_FOUND:
                line["response"] = {"status_code": 404, "request_id": d.request_id,
                                    "body": {"error": model_not_found(item.request.model)}}
                line["error"] = None
                err.append(json.dumps(line))
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
        expires_s = self._output_expiry.get(batch.id)  # None: kept until deleted
        for name, lines in (("output", out), ("errors", err)):
            ids.append(self._new_file(f"{batch.id}_{name}.jsonl", "batch_output",
                                      ("\n".join(lines) + "\n").encode(), expires_s)["id"] if lines else "")
        batch.metadata["output_file_id"], batch.metadata["error_file_id"] = ids
        if not self.batches.settings.keep_request_text:  # a run at scale: the answers are in the files now
            self.batches.forget_text(batch, keep_keys=(), answers=True)
            if (upload := self._files.get(batch.metadata.get("input_file_id", ""))) is not None:
                upload.data = b""
        return ids[0] or None, ids[1] or None

    def _render_batch(self, batch: EmulatedBatch, *, created: bool = False) -> dict[str, Any]:
        """The batch as OpenAI shows it; a refused one (its queue limit) reads `validating` in the
        create call's answer and `failed` with `token_limit_exceeded` from then on."""
        if batch.refused is not None:
            return self._render_refused(batch, created)
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
        return _present({
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "model": batch.model or None,
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
        })

    @staticmethod
    def _render_refused(batch: EmulatedBatch, created: bool) -> dict[str, Any]:
        meta = {k: v for k, v in batch.metadata.items() if k != "input_file_id"}
        at = int(batch.ended_at or batch.created_at)
        errors = None if created else {"object": "list", "data": [
            {"code": "token_limit_exceeded", "message": batch.refused, "param": None, "line": None}]}
        return _present({
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "model": batch.model or None,
            "errors": errors,
            "input_file_id": batch.metadata.get("input_file_id", ""),
            "completion_window": "24h",
            "status": "validating" if created else "failed",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": int(batch.created_at),
            "in_progress_at": None,
            "expires_at": int(batch.expires_at),
            "finalizing_at": None,
            "completed_at": None,
            "failed_at": None if created else at,
            "expired_at": None,
            "cancelling_at": None,
            "cancelled_at": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": meta or None,
        })

    # -- rendering ------------------------------------------------------------------------------

    @staticmethod
    def _render_response(d: Decision, req: EmulatedRequest, body: dict[str, Any]) -> dict[str, Any]:
        u = d.usage
        assert u is not None
        incomplete = d.finish == "length"
        output: list[dict[str, Any]] = []
        if u.reasoning_tokens:
            output.append({"type": "reasoning", "id": "rs_" + secrets.token_hex(16), "summary": []})
        if d.content or not incomplete:  # a call that reasoned up to its cap has no message
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
            "prompt_cache_retention": (
                body.get("prompt_cache_retention") if body.get("prompt_cache_retention") in ("in_memory", "24h") else None
            ),
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
            "metadata": {},  # no "user": deprecated, and a string when present (never null)
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


def _present(batch: dict[str, Any]) -> dict[str, Any]:
    """A Batch object without the optional fields that have no value: OpenAI's OpenAPI document
    types them (timestamps, file ids, model, errors) as present-or-absent, never null; `metadata`
    alone may be null."""
    return {k: v for k, v in batch.items() if v is not None or k == "metadata"}


def _page(items: list[dict[str, Any]], query: Any, default_limit: int = 20) -> dict[str, Any]:
    """One cursor page as the openai SDK pages it: newest first unless `order=asc`, after `after`."""
    ordered = list(items) if query.get("order") == "asc" else list(reversed(items))
    after = query.get("after")
    if after is not None:
        ids = [x["id"] for x in ordered]
        ordered = ordered[ids.index(after) + 1 :] if after in ids else []
    try:
        limit = max(int(query.get("limit", default_limit)), 1)
    except ValueError:
        limit = default_limit
    page = ordered[:limit]
    return {
        "object": "list",
        "data": page,
        "first_id": page[0]["id"] if page else None,
        "last_id": page[-1]["id"] if page else None,
        "has_more": len(ordered) > limit,
    }
