"""Anthropic Message Batches: `messages.batches.create(requests=[{custom_id, params}])`.

Why `params` is `AnthropicVendor.params`: `output_config` (effort, JSON-schema format) must sit
at the top level of the params (not in extra_body), and the shared prefix keeps its
`cache_control` breakpoint, so prompt caching works inside the batch as it does online. Results
come from the batch's absolute `results_url`, in any order: joined on `custom_id`.

What it leaves at Anthropic: the batch, requests and results, kept 29 days after creation and not
covered by zero-data-retention agreements; `delete` removes it once it has ended and the run's
tables are written (`evalcore.vendors.batch.purge`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anthropic
from pydantic import BaseModel

from evalcore.vendors.adapters.anthropic import AnthropicVendor, read_message
from evalcore.vendors.batch.journal import VendorObject
from evalcore.vendors.batch.protocol import (
    BatchItemResult,
    BatchStatus,
    DeleteOutcome,
    ListedBatch,
    SubmitOptions,
    approx_bytes,
)
from evalcore.vendors.protocol import JudgeRequest

FIND_SKEW_S = 600.0
"""How much earlier than the journal record the vendor may date its batch (clocks differ; the record
is written just before the submit call): the margin of `find`'s search."""


class AnthropicBatch(AnthropicVendor):
    """The Message Batches API of an Anthropic vendor entry."""

    labels_batches = False
    """Message batches take no name or metadata: ours are told apart by their custom ids."""

    def request_bytes(self, request: JudgeRequest, schema: type[BaseModel]) -> int:
        return approx_bytes(self.params(request, schema))

    @staticmethod
    def _status(batch: Any) -> BatchStatus:
        c = batch.request_counts
        return BatchStatus(
            batch_id=batch.id,
            vendor_status=batch.processing_status,
            ended=batch.processing_status == "ended",
            total=c.processing + c.succeeded + c.errored + c.canceled + c.expired,
            succeeded=c.succeeded,
            failed=c.errored + c.canceled + c.expired,
            expires_at=batch.expires_at.timestamp() if batch.expires_at else None,
            objects=[VendorObject(kind="batch", id=batch.id)],
        )

    async def submit(
        self, items: list[tuple[str, JudgeRequest, type[BaseModel]]], label: str,
        options: SubmitOptions = SubmitOptions(),
    ) -> BatchStatus:
        """Message batches take no expiry: they are kept 29 days unless deleted (`delete`)."""
        requests: Any = [{"custom_id": cid, "params": self.params(req, schema)} for cid, req, schema in items]
        return self._status(await self._ensure_client().messages.batches.create(requests=requests))

    async def find(self, label: str, submitted_at: float, requests: Sequence[str], known: set[str]) -> BatchStatus | None:
        """Message batches have no name, but their requests carry the custom ids Tribunal chose (the
        request hashes): among the batches created since the record was written (less the clock
        skew) and unknown to the journal, the ended one whose results hold the most of `requests`.
        A batch still running cannot tell its requests (only its results carry them): if none that
        ended matches, the one running batch holding as many requests, if exactly one; else None
        (the queue then waits on the running candidates before sending anything again)."""
        wanted = set(requests)
        running: list[BatchStatus] = []
        best: tuple[int, BatchStatus] | None = None
        async for batch in self._ensure_client().messages.batches.list(limit=100):
            if batch.created_at.timestamp() < submitted_at - FIND_SKEW_S:
                break
            if batch.id in known:
                continue
            status = self._status(batch)
            if not status.ended:
                running.append(status)
                continue
            ids = await self.request_ids(batch.id)
            hits = len(wanted.intersection(ids or ()))
            if hits and (best is None or hits > best[0]):
                best = (hits, status)
        if best is not None:
            return best[1]
        same_size = [s for s in running if s.total == len(wanted)]
        return same_size[0] if len(same_size) == 1 else None

    async def delete(self, obj: VendorObject) -> DeleteOutcome:
        """The batch with its requests and results (only an ended batch can be deleted)."""
        try:
            await self._ensure_client().messages.batches.delete(obj.id)
        except anthropic.NotFoundError:
            return "gone"
        return "deleted"

    async def exists(self, obj: VendorObject) -> bool:
        try:
            await self._ensure_client().messages.batches.retrieve(obj.id)
        except anthropic.NotFoundError:
            return False
        return True

    async def listing(self, since: float) -> list[ListedBatch]:
        """Batches newest first, down to `since` (no label: message batches carry none)."""
        out: list[ListedBatch] = []
        async for batch in self._ensure_client().messages.batches.list(limit=100):
            created = batch.created_at.timestamp()
            if created < since:
                break
            out.append(ListedBatch(status=self._status(batch), created_at=created))
        return out

    async def request_ids(self, batch_id: str) -> list[str] | None:
        """The custom ids of an ended batch, from its results (None while it runs: only the results
        carry them, or when its results are gone)."""
        client = self._ensure_client()
        if (await client.messages.batches.retrieve(batch_id)).processing_status != "ended":
            return None
        try:
            return sorted({item.custom_id async for item in await client.messages.batches.results(batch_id)})
        except anthropic.NotFoundError:
            return None

    def missing(self, exc: BaseException) -> bool:
        return isinstance(exc, anthropic.NotFoundError)

    async def poll(self, batch_id: str) -> BatchStatus:
        return self._status(await self._ensure_client().messages.batches.retrieve(batch_id))

    async def collect(self, batch_id: str) -> list[BatchItemResult]:
        out: list[BatchItemResult] = []
        async for item in await self._ensure_client().messages.batches.results(batch_id):
            result = item.result
            if result.type == "succeeded":
                usage, text, problem = read_message(result.message)
                out.append(BatchItemResult(custom_id=item.custom_id, status="succeeded", text=text,
                                           problem=problem, usage=usage, request_id=result.message.id,
                                           capped=result.message.stop_reason == "max_tokens"))
            elif result.type == "errored":
                err = result.error.error
                out.append(BatchItemResult(custom_id=item.custom_id, status="errored",
                                           error=self.redact(f"{err.type}: {err.message}")))
            else:
                out.append(BatchItemResult(custom_id=item.custom_id, status=result.type, error=result.type))
        return out
