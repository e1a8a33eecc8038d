"""The small contract of a vendor's batch API: submit requests, poll a batch, collect its results.

Why so small: what a batch *means* for a run (a journal written before waiting, requests retried
in a later batch, answers validated and priced, stages batched across submissions) is the same
for every vendor and lives in `evalcore.vendors.batch.queue`. A vendor's batch adapter only translates:
OpenAI (a JSONL file + a batch on /v1/responses), Anthropic (message batches) and xAI (BatchMgmt
over gRPC). Each adapter builds its requests with its online adapter's `params`, so a batched
request is the request an online call would send.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from evalcore.config.models import VendorConfig
from evalcore.vendors.adapters.common import Classified
from evalcore.vendors.protocol import JudgeRequest, Usage

ItemStatus = Literal["succeeded", "errored", "expired", "canceled"]


class BatchStatus(BaseModel):
    """A batch as its vendor reports it, in vendor-neutral terms."""

    batch_id: str
    vendor_status: str = Field(description="The vendor's own word (in_progress, completed, ended, ...).")
    ended: bool = Field(description="Every request has an outcome: results can be collected.")
    total: int = 0
    succeeded: int = 0
    failed: int = 0
    expires_at: float | None = Field(default=None, description="Unix time the vendor gives up on it.")


class BatchItemResult(BaseModel):
    """One request's outcome. A `succeeded` answer may still be unusable (`problem`: truncated,
    refused); it was billed either way, so its usage is kept."""

    custom_id: str
    status: ItemStatus
    text: str = ""
    problem: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = Field(default=None, description="Vendor-reported cost (xAI), else priced.")
    request_id: str | None = None
    error: str | None = None


@runtime_checkable
class BatchAPI(Protocol):
    """One vendor entry's batch API (client created lazily in the running event loop)."""

    cfg: VendorConfig
    name: str
    model: str

    def request_bytes(self, request: JudgeRequest, schema: type[BaseModel]) -> int:
        """About how many bytes the request adds to a batch (for the per-batch byte limit)."""
        ...

    async def submit(self, items: list[tuple[str, JudgeRequest, type[BaseModel]]], label: str) -> BatchStatus:
        """Create one batch holding `items` (custom id, request, output schema)."""
        ...

    async def find(self, label: str, submitted_at: float, n_requests: int, known: set[str]) -> BatchStatus | None:
        """The batch this run submitted as `label` (created no earlier than `submitted_at`, holding
        `n_requests`, not one of `known`), if the vendor has it; used after a crash."""
        ...

    async def poll(self, batch_id: str) -> BatchStatus:
        """The batch's current state."""
        ...

    async def collect(self, batch_id: str) -> list[BatchItemResult]:
        """Every request's outcome of an ended batch (may be called again: results are kept)."""
        ...

    def classify(self, exc: BaseException) -> Classified:
        """What a failed submit/poll/collect call means (same classes as online calls)."""
        ...

    def redact(self, text: str) -> str:
        """The text without the API key."""
        ...

    async def aclose(self) -> None:
        """Release the client."""
        ...


def approx_bytes(params: dict[str, Any]) -> int:
    """Size of a request's text fields (the JSON around them is small next to the prompts)."""
    return sum(len(str(v).encode()) for v in params.values()) + 256
