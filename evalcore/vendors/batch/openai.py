"""OpenAI Batch: one JSONL input file of `/v1/responses` requests, one batch, output + error files.

Why the same body as online: each line's `body` is `OpenAIVendor.params` (the text format built by
the SDK helper `responses.parse` uses), so a batched request is the online request. Output order
is not guaranteed: lines are joined on `custom_id`. An expired or cancelled request comes back in
the error file with `response: null` and an `error.code` saying so.

What it leaves at OpenAI: the input file (uploaded with `expires_after`), the batch object (status,
counts and our opaque label; OpenAI has no delete for it) and the output and error files (created
with the batch's `output_expires_after`). The files hold the benchmark's text; `delete` removes
them once the run's tables are written (`evalcore.vendors.batch.purge`).

A batch over the organisation's batch queue limit (enqueued input tokens per model) is accepted and
then fails with `token_limit_exceeded`: `BatchStatus.refused` says so, and the queue sends its
requests again once it has room (`evalcore.vendors.batch.queue`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import openai
from openai.types.responses import Response
from pydantic import BaseModel

from evalcore.vendors.adapters.openai import OpenAIVendor, read_response, stopped_at_cap
from evalcore.vendors.batch.journal import VendorObject
from evalcore.vendors.batch.protocol import (
    BatchItemResult,
    BatchStatus,
    DeleteOutcome,
    ItemStatus,
    ListedBatch,
    SubmitOptions,
    Undeletable,
    approx_bytes,
)
from evalcore.vendors.protocol import JudgeRequest

_ENDPOINT: Literal["/v1/responses"] = "/v1/responses"
_ENDED = {"completed", "expired", "cancelled", "failed"}
QUEUE_FULL = "token_limit_exceeded"
"""The error code of a batch OpenAI accepted and then failed because the model's enqueued input
tokens would have gone over the organisation's batch queue limit."""


def _ts(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=value.tzinfo or UTC).timestamp()
    return float(value)


def _objects(batch: Any) -> list[VendorObject]:
    """What an OpenAI batch holds: its input file, itself, and its output and error files once made."""
    out = [VendorObject(kind="input_file", id=batch.input_file_id)] if batch.input_file_id else []
    out.append(VendorObject(kind="batch", id=batch.id, holds_text=False, deletable=False))
    if batch.output_file_id:
        out.append(VendorObject(kind="output_file", id=batch.output_file_id))
    if batch.error_file_id:
        out.append(VendorObject(kind="error_file", id=batch.error_file_id))
    return out


def _queue_full(batch: Any) -> str | None:
    """`code: message` when OpenAI failed the batch at its batch queue limit, else None."""
    if batch.status != "failed" or batch.errors is None:
        return None
    for error in batch.errors.data or []:
        if error.code == QUEUE_FULL:
            return f"{error.code}: {error.message or ''}".strip()
    return None


class OpenAIBatch(OpenAIVendor):
    """The Batch API of an OpenAI vendor entry (same client, key and settings as online)."""

    labels_batches = True

    def request_bytes(self, request: JudgeRequest, schema: type[BaseModel]) -> int:
        return approx_bytes(self.params(request, schema))

    def _status(self, batch: Any) -> BatchStatus:
        counts = batch.request_counts
        return BatchStatus(
            batch_id=batch.id,
            vendor_status=batch.status,
            ended=batch.status in _ENDED,
            total=counts.total if counts else 0,
            succeeded=counts.completed if counts else 0,
            failed=counts.failed if counts else 0,
            expires_at=_ts(batch.expires_at),
            objects=_objects(batch),
            refused=_queue_full(batch),
        )

    async def submit(
        self, items: list[tuple[str, JudgeRequest, type[BaseModel]]], label: str,
        options: SubmitOptions = SubmitOptions(),
    ) -> BatchStatus:
        client = self._ensure_client()
        lines = [
            json.dumps({"custom_id": cid, "method": "POST", "url": _ENDPOINT, "body": self.params(req, schema)})
            for cid, req, schema in items
        ]
        data = ("\n".join(lines) + "\n").encode()
        if options.input_expires_after_s is not None:
            upload = await client.files.create(
                file=(f"{label}.jsonl", data), purpose="batch",
                expires_after={"anchor": "created_at", "seconds": options.input_expires_after_s},
            )
        else:
            upload = await client.files.create(file=(f"{label}.jsonl", data), purpose="batch")
        if options.created is not None:  # journalled before the batch exists: never an unrecorded copy
            options.created(VendorObject(kind="input_file", id=upload.id))
        if options.output_expires_after_s is not None:
            batch = await client.batches.create(
                input_file_id=upload.id, endpoint=_ENDPOINT, completion_window="24h", metadata={"tribunal": label},
                output_expires_after={"anchor": "created_at", "seconds": options.output_expires_after_s},
            )
        else:
            batch = await client.batches.create(
                input_file_id=upload.id, endpoint=_ENDPOINT, completion_window="24h", metadata={"tribunal": label}
            )
        return self._status(batch)

    async def delete(self, obj: VendorObject) -> DeleteOutcome:
        """Files are deleted; a batch object cannot be (OpenAI keeps it, without the text)."""
        if obj.kind == "batch":
            raise Undeletable("OpenAI has no delete for a batch object (it keeps status, counts and the opaque "
                              "label; the text is in its files, which are deleted)")
        try:
            await self._ensure_client().files.delete(obj.id)
        except openai.NotFoundError:
            return "gone"
        return "deleted"

    async def exists(self, obj: VendorObject) -> bool:
        client = self._ensure_client()
        try:
            if obj.kind == "batch":
                await client.batches.retrieve(obj.id)
            else:
                await client.files.retrieve(obj.id)
        except openai.NotFoundError:
            return False
        return True

    async def find(self, label: str, submitted_at: float, requests: Sequence[str], known: set[str]) -> BatchStatus | None:
        """The batch whose metadata carries our label (batches are listed newest first)."""
        async for batch in self._ensure_client().batches.list(limit=100):
            if (batch.metadata or {}).get("tribunal") == label:
                return self._status(batch)
            if batch.created_at < submitted_at - 3600:
                return None
        return None

    async def listing(self, since: float) -> list[ListedBatch]:
        """Batches newest first, down to `since`; our label is the `tribunal` metadata entry."""
        out: list[ListedBatch] = []
        async for batch in self._ensure_client().batches.list(limit=100):
            created = float(batch.created_at)
            if created < since:
                break
            out.append(ListedBatch(status=self._status(batch), created_at=created,
                                   label=(batch.metadata or {}).get("tribunal")))
        return out

    async def request_ids(self, batch_id: str) -> list[str] | None:
        """The custom ids in the batch's input file (None once the file is gone: deleted or expired)."""
        client = self._ensure_client()
        try:
            batch = await client.batches.retrieve(batch_id)
            if not batch.input_file_id:
                return None
            content = await client.files.content(batch.input_file_id)
        except openai.NotFoundError:
            return None
        try:
            return [str(json.loads(line)["custom_id"]) for line in content.text.splitlines() if line.strip()]
        except (ValueError, KeyError, TypeError):  # not our JSONL: known from the results instead
            return None

    def missing(self, exc: BaseException) -> bool:
        return isinstance(exc, openai.NotFoundError)

    async def poll(self, batch_id: str) -> BatchStatus:
        return self._status(await self._ensure_client().batches.retrieve(batch_id))

    async def collect(self, batch_id: str) -> list[BatchItemResult]:
        client = self._ensure_client()
        batch = await client.batches.retrieve(batch_id)
        out: list[BatchItemResult] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await client.files.content(file_id)
            for line in content.text.splitlines():
                if line.strip():
                    out.append(self._item(json.loads(line)))
        return out

    def _item(self, line: dict[str, Any]) -> BatchItemResult:
        cid = str(line.get("custom_id"))
        response = line.get("response") or None
        error = line.get("error") or None
        if response is not None and response.get("status_code") == 200:
            parsed = Response.model_validate(response.get("body") or {})
            usage, text, problem = read_response(parsed)
            return BatchItemResult(custom_id=cid, status="succeeded", text=text, problem=problem, usage=usage,
                                   request_id=response.get("request_id") or parsed.id, capped=stopped_at_cap(parsed))
        status: ItemStatus = "errored"
        message = "errored"
        if error is not None:
            code = str(error.get("code") or "")
            status = "expired" if code == "batch_expired" else "canceled" if code == "batch_cancelled" else "errored"
            message = f"{code}: {error.get('message') or ''}".strip()
        elif response is not None:
            body = response.get("body") or {}
            detail = body.get("error", {}).get("message") if isinstance(body.get("error"), dict) else None
            message = f"HTTP {response.get('status_code')}: {detail or 'error'}"
        return BatchItemResult(custom_id=cid, status=status, error=self.redact(message),
                               request_id=(response or {}).get("request_id"))
