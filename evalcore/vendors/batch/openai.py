"""OpenAI Batch: one JSONL input file of `/v1/responses` requests, one batch, output + error files.

Why the same body as online: each line's `body` is `OpenAIVendor.params` (the text format built by
the SDK helper `responses.parse` uses), so a batched request is the online request. Output order
is not guaranteed: lines are joined on `custom_id`. An expired or cancelled request comes back in
the error file with `response: null` and an `error.code` saying so.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from openai.types.responses import Response
from pydantic import BaseModel

from evalcore.vendors.adapters.openai import OpenAIVendor, read_response
from evalcore.vendors.batch.protocol import BatchItemResult, BatchStatus, ItemStatus, approx_bytes
from evalcore.vendors.protocol import JudgeRequest

_ENDPOINT: Literal["/v1/responses"] = "/v1/responses"
_ENDED = {"completed", "expired", "cancelled", "failed"}


def _ts(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=value.tzinfo or UTC).timestamp()
    return float(value)


class OpenAIBatch(OpenAIVendor):
    """The Batch API of an OpenAI vendor entry (same client, key and settings as online)."""

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
        )

    async def submit(self, items: list[tuple[str, JudgeRequest, type[BaseModel]]], label: str) -> BatchStatus:
        client = self._ensure_client()
        lines = [
            json.dumps({"custom_id": cid, "method": "POST", "url": _ENDPOINT, "body": self.params(req, schema)})
            for cid, req, schema in items
        ]
        upload = await client.files.create(file=(f"{label}.jsonl", ("\n".join(lines) + "\n").encode()),
                                           purpose="batch")
        batch = await client.batches.create(
            input_file_id=upload.id, endpoint=_ENDPOINT, completion_window="24h", metadata={"tribunal": label}
        )
        return self._status(batch)

    async def find(self, label: str, submitted_at: float, n_requests: int, known: set[str]) -> BatchStatus | None:
        """The batch whose metadata carries our label (batches are listed newest first)."""
        async for batch in self._ensure_client().batches.list(limit=100):
            if (batch.metadata or {}).get("tribunal") == label:
                return self._status(batch)
            if batch.created_at < submitted_at - 3600:
                return None
        return None

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
                                   request_id=response.get("request_id") or parsed.id)
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
