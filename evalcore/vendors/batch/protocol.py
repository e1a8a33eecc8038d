"""The small contract of a vendor's batch API: submit requests, poll a batch, collect its results.

Why so small: what a batch *means* for a run (a journal written before waiting, requests retried
in a later batch, answers validated and priced, stages batched across submissions) is the same
for every vendor and lives in `evalcore.vendors.batch.queue`. A vendor's batch adapter only translates:
OpenAI (a JSONL file + a batch on /v1/responses), Anthropic (message batches) and xAI (BatchMgmt
over gRPC). Each adapter builds its requests with its online adapter's `params`, so a batched
request is the request an online call would send.

Each adapter also says what the batch created at the vendor (`BatchStatus.objects`, and
`SubmitOptions.created` for an object that exists before the batch does: OpenAI's input file) and
deletes it again (`delete`), so the journal can record every copy of the run's data a vendor holds
and a purge can remove it (`evalcore.vendors.batch.purge`).

And each adapter lists the batches its vendor holds (`listing`, with the label where the vendor
keeps one) and says which requests a batch holds where the vendor tells before it ends
(`request_ids`), and which failures mean the vendor does not know the batch (`missing`): what the
queue needs to find a run's batches again when its journal is damaged or gone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from evalcore.config.models import VendorConfig
from evalcore.vendors.adapters.common import Classified
from evalcore.vendors.batch.journal import VendorObject
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
    objects: list[VendorObject] = Field(
        default_factory=list,
        description="What the batch holds at the vendor now (OpenAI: its input file, the batch, and its "
        "output and error files once they exist; Anthropic, xAI: the batch).",
    )
    refused: str | None = Field(
        default=None,
        description="The vendor refused the whole batch because its batch queue was full (OpenAI: status "
        "failed, errors code token_limit_exceeded), with its message: nothing in it was processed or "
        "billed, and the queue sends its requests again once there is room.",
    )


class ListedBatch(BaseModel):
    """A batch in its vendor's list (`BatchAPI.listing`)."""

    status: BatchStatus
    created_at: float = Field(description="Unix time the vendor created it.")
    label: str | None = Field(
        default=None, description="Our label as the vendor keeps it (OpenAI metadata, xAI batch name); "
        "None where batches carry none (Anthropic).")


DeleteOutcome = Literal["deleted", "gone"]
"""deleted: the call deleted it; gone: the vendor no longer has it (a 404: deleted or expired)."""


class Undeletable(Exception):
    """The vendor has no way to delete this object (xAI batches; an OpenAI batch object)."""


@dataclass(frozen=True)
class SubmitOptions:
    """What a submit needs besides its requests.

    ``input_expires_after_s`` / ``output_expires_after_s``: how long the vendor may keep what the
    batch creates if nobody deletes it (OpenAI: the input file's ``expires_after`` and the batch's
    ``output_expires_after``; the other vendors take no such setting). ``created`` is told of each
    object the submit creates before the batch exists (OpenAI's input file), so it is journalled
    even when the batch is never created.
    """

    input_expires_after_s: int | None = None
    output_expires_after_s: int | None = None
    created: Callable[[VendorObject], None] | None = None


class BatchItemResult(BaseModel):
    """One request's outcome. A `succeeded` answer may still be unusable (`problem`: truncated,
    refused); it was billed either way, so its usage is kept."""

    custom_id: str
    status: ItemStatus
    text: str = ""
    problem: str | None = None
    capped: bool = Field(default=False, description="The answer stopped at its output-token cap (`problem` says "
                         "so): the queue sends it again once at a larger cap.")
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
    labels_batches: bool
    """The vendor keeps our label with each batch (OpenAI, xAI), so `listing` names our batches;
    False for Anthropic, whose batches are told apart by the custom ids of their requests."""

    def request_bytes(self, request: JudgeRequest, schema: type[BaseModel]) -> int:
        """About how many bytes the request adds to a batch (for the per-batch byte limit)."""
        ...

    async def submit(
        self, items: list[tuple[str, JudgeRequest, type[BaseModel]]], label: str, options: SubmitOptions = ...
    ) -> BatchStatus:
        """Create one batch holding `items` (custom id, request, output schema)."""
        ...

    async def find(self, label: str, submitted_at: float, requests: Sequence[str], known: set[str]) -> BatchStatus | None:
        """The batch this run submitted as `label` holding `requests` (their custom ids; created no
        earlier than `submitted_at`, not one of `known`), if the vendor has it; used after a crash,
        and when the vendor does not know a journalled id (a 404: the id may be what was damaged).
        Where batches carry no label (Anthropic) it is found by the custom ids of its requests."""
        ...

    async def listing(self, since: float) -> list[ListedBatch]:
        """Every batch the vendor holds for this key created at or after `since` (unix time)."""
        ...

    async def request_ids(self, batch_id: str) -> list[str] | None:
        """The custom ids of a batch's requests where the vendor tells before the batch ends
        (OpenAI: its input file); None when they are known only from its results."""
        ...

    def missing(self, exc: BaseException) -> bool:
        """The failure means the vendor does not know the batch (or its results): a 404."""
        ...

    async def poll(self, batch_id: str) -> BatchStatus:
        """The batch's current state."""
        ...

    async def collect(self, batch_id: str) -> list[BatchItemResult]:
        """Every request's outcome of an ended batch (may be called again: results are kept)."""
        ...

    async def delete(self, obj: VendorObject) -> DeleteOutcome:
        """Delete one object this adapter's batches created; raises `Undeletable` when the vendor
        cannot, any other exception when the call failed (a later purge tries again)."""
        ...

    async def exists(self, obj: VendorObject) -> bool:
        """Whether the vendor still holds the object (`tribunal status --check`)."""
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
