"""xAI batches over gRPC (`xai_api.BatchMgmt`): create a named batch, add chats, poll, page results.

Why chats built by `XAIVendor.params`: `client.batch.add` takes the same chat objects an online
call samples (with a `batch_request_id`), so the batched request is the online one. Batch requests
do not count toward xAI's rate limits; each answer carries its cost at the batch price, used as is.

What it leaves at xAI: the batch with its requests and results, for a time xAI does not publish.
BatchMgmt has no delete (create, add, get, list, cancel only), so `delete` raises `Undeletable`:
an operator who cannot leave a benchmark there refuses xAI batch mode
(`data_governance.batch_allowed.xai: false`, set by the `private` preset).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc
from pydantic import BaseModel

from evalcore.vendors.adapters.xai import XAIVendor, read_chat_response
from evalcore.vendors.batch.journal import VendorObject
from evalcore.vendors.batch.protocol import (
    BatchItemResult,
    BatchStatus,
    DeleteOutcome,
    ItemStatus,
    ListedBatch,
    SubmitOptions,
    Undeletable,
)
from evalcore.vendors.protocol import JudgeRequest

PAGE = 100
ADD_CHUNK = 500  # requests per AddBatchRequests call (each call stays far below 20 MiB of prompts)


class XAIBatch(XAIVendor):
    """The batch API of an xAI vendor entry."""

    labels_batches = True

    def request_bytes(self, request: JudgeRequest, schema: type[BaseModel]) -> int:
        return len(request.system_prompt.encode()) + len(request.user_text.encode()) + 512

    @staticmethod
    def _status(batch: Any) -> BatchStatus:
        s = batch.state
        expires = batch.expire_time.ToNanoseconds() / 1e9 if batch.HasField("expire_time") else None
        return BatchStatus(
            batch_id=batch.batch_id,
            vendor_status="in_progress" if s.num_pending else "ended",
            ended=s.num_requests > 0 and s.num_pending == 0,
            total=s.num_requests,
            succeeded=s.num_success,
            failed=s.num_error + s.num_cancelled,
            expires_at=expires,
            objects=[VendorObject(kind="batch", id=batch.batch_id, deletable=False)],
        )

    async def submit(
        self, items: list[tuple[str, JudgeRequest, type[BaseModel]]], label: str,
        options: SubmitOptions = SubmitOptions(),
    ) -> BatchStatus:
        """xAI batches take no expiry setting."""
        client = self._ensure_client()
        batch = await client.batch.create(batch_name=label)
        for start in range(0, len(items), ADD_CHUNK):
            chats = [client.chat.create(**self.params(req, schema), batch_request_id=cid)
                     for cid, req, schema in items[start : start + ADD_CHUNK]]
            await client.batch.add(batch_id=batch.batch_id, batch_requests=chats)
        return self._status(await client.batch.get(batch.batch_id))

    async def find(self, label: str, submitted_at: float, requests: Sequence[str], known: set[str]) -> BatchStatus | None:
        """The batch named with our label."""
        client = self._ensure_client()
        token: str | None = None
        while True:
            page = await client.batch.list(limit=PAGE, pagination_token=token)
            for batch in page.batches:
                if batch.name == label:
                    return self._status(batch)
            token = page.pagination_token or None
            if not token:
                return None

    async def delete(self, obj: VendorObject) -> DeleteOutcome:
        raise Undeletable("xAI's batch API has no delete: the batch, its requests and results stay at xAI "
                          "(retention not published)")

    async def exists(self, obj: VendorObject) -> bool:
        try:
            await self._ensure_client().batch.get(obj.id)
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                return False
            raise
        return True

    async def listing(self, since: float) -> list[ListedBatch]:
        """Every page (xAI does not document the order), kept from `since`; our label is the batch name."""
        client = self._ensure_client()
        out: list[ListedBatch] = []
        token: str | None = None
        while True:
            page = await client.batch.list(limit=PAGE, pagination_token=token)
            for batch in page.batches:
                created = batch.create_time.ToNanoseconds() / 1e9 if batch.HasField("create_time") else since
                if created >= since:
                    out.append(ListedBatch(status=self._status(batch), created_at=created, label=batch.name or None))
            token = page.pagination_token or None
            if not token:
                return out

    async def request_ids(self, batch_id: str) -> list[str] | None:
        """Known from the results once the batch ends. (BatchMgmt's ListBatchRequestMetadata would
        tell earlier, but our emulator does not serve it, so that path could not be tested.)"""
        return None

    def missing(self, exc: BaseException) -> bool:
        return isinstance(exc, grpc.aio.AioRpcError) and exc.code() == grpc.StatusCode.NOT_FOUND

    async def poll(self, batch_id: str) -> BatchStatus:
        return self._status(await self._ensure_client().batch.get(batch_id))

    async def collect(self, batch_id: str) -> list[BatchItemResult]:
        client = self._ensure_client()
        out: list[BatchItemResult] = []
        token: str | None = None
        while True:
            page = await client.batch.list_batch_results(batch_id, limit=PAGE, pagination_token=token)
            for result in page.results:
                if result.is_success:
                    response = result.response
                    usage, text, problem = read_chat_response(response)
                    out.append(BatchItemResult(custom_id=result.batch_request_id, status="succeeded", text=text,
                                               problem=problem, usage=usage, cost_usd=response.cost_usd,
                                               request_id=response.id or None,
                                               capped=response.finish_reason == "REASON_MAX_LEN"))
                    continue
                code = result.proto.error.code
                status: ItemStatus = (
                    "expired" if code == grpc.StatusCode.DEADLINE_EXCEEDED.value[0]
                    else "canceled" if code == grpc.StatusCode.CANCELLED.value[0] else "errored"
                )
                out.append(BatchItemResult(custom_id=result.batch_request_id, status=status,
                                           error=self.redact(result.error_message or status)))
            token = page.pagination_token
            if not token:
                return out
