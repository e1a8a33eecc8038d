"""The one contract every judge vendor implements, and the request/reply types it speaks.

Why: the methodology (panel, audit) talks to vendors only through `Vendor.complete_many`, so a
new vendor is one adapter module plus one registry line, and the Ray layer can put any vendor
behind an actor without knowing which it is.
"""

from __future__ import annotations

import asyncio
from typing import Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from evalcore.config.models import BilledTokens
from evalcore.errors import EarlierAttempt, VendorError

T = TypeVar("T", bound=BaseModel)


class Usage(BaseModel):
    """Token usage of one logical call (summed over its attempts that the vendor billed)."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_tokens: int = Field(default=0, description=(
        "Input tokens written to the prompt cache (a subset of input_tokens, like cached_input_tokens): "
        "Anthropic's cache_creation_input_tokens, OpenAI's input_tokens_details.cache_write_tokens."))
    cache_write_1h_tokens: int = Field(default=0, description=(
        "The part of cache_write_tokens written with a one-hour lifetime (Anthropic's "
        "cache_creation.ephemeral_1h_input_tokens), billed at its own multiplier."))

    def billed(self) -> BilledTokens:
        """The counts `Price.bill` prices: the one way a usage becomes dollars."""
        return BilledTokens(self.input_tokens, self.cached_input_tokens, self.output_tokens,
                            self.cache_write_tokens, self.cache_write_1h_tokens)

    def as_error_tokens(self) -> tuple[int, int, int, int]:
        """(input, cached input, output, reasoning): what a `VendorError` carries as `billed_tokens`."""
        return (self.input_tokens, self.cached_input_tokens, self.output_tokens, self.reasoning_tokens)

    @classmethod
    def of_error(cls, error: VendorError) -> Usage:
        """What a failed call was billed (`VendorError.billed_tokens`) as a usage."""
        i, c, o, r = error.billed_tokens
        return cls(input_tokens=i, cached_input_tokens=c, output_tokens=o, reasoning_tokens=r)

    def __add__(self, other: Usage) -> Usage:
        """Both usages together: a call's billed usage is the sum over its attempts (online or batch)."""
        return Usage(**{name: getattr(self, name) + getattr(other, name) for name in Usage.model_fields})


class JudgeRequest(BaseModel):
    """A vendor-neutral prompt.

    `shared_prefix` is the long part common to many calls (sources, deliverables) and comes
    first so vendors' prompt caches hit; `varying_suffix` is what differs per call (the
    criterion). `request_hash` identifies the call semantically (vendor, model, settings,
    template hash, inputs' content hashes) and is what resume and `--reuse` match on: it does not
    depend on the random fence boundaries inside the text.
    """

    model_config = ConfigDict(frozen=True)

    purpose: Literal["rubric", "detect", "verify", "preflight"]
    request_hash: str
    system_prompt: str
    shared_prefix: str
    varying_suffix: str
    schema_name: str = Field(description="Name of the pydantic output model (for logs, emulators).")
    estimated_input_tokens: int = 0
    max_output_tokens: int | None = Field(default=None, description="None = the vendor's setting.")
    warms: bool = Field(default=False, description=(
        "Sent first to write its prefix to the vendor's prompt cache: the calls sharing the prefix wait "
        "for its answer (`evalcore.vendors.warming`), so it gets its turn at the budget before other "
        "rubric calls. Scheduling only: not part of `request_hash`."))

    @property
    def user_text(self) -> str:
        """The whole user message: shared prefix then varying suffix."""
        return self.shared_prefix + self.varying_suffix


class JudgeReply(BaseModel, Generic[T]):
    """A successful call: the parsed answer and everything needed to account for it.

    Its span (`started_at`, `ended_at`) is set by whoever answered, the only one that knows it: an
    adapter (first attempt sent, last attempt answered, on its own clock), the batching vendor (first
    batch submitted, last batch ended, from its journal), the reusing vendor (when it served the
    stored answer). `latency_s` is derived from the span, so the two can never disagree.
    """

    output: T
    usage: Usage
    cost_usd: float
    started_at: float = Field(description="Unix seconds: the first attempt was sent (batch: the first batch submitted).")
    ended_at: float = Field(description="Unix seconds: the last attempt answered (batch: the last batch ended).")
    attempts: int = 1
    rate_limited: int = Field(default=0, description="429 / RESOURCE_EXHAUSTED answers seen.")
    request_id: str | None = None
    vendor: str
    model: str
    offline: bool = False
    reused_from: str | None = Field(default=None, description="Run id, when served from a stored call.")
    batch_id: str | None = Field(default=None, description="The vendor batch that answered (batch mode).")
    earlier: list[EarlierAttempt] = Field(default_factory=list, description=(
        "Attempts before the answer that stopped at their output-token cap and were retried with a larger one "
        "(`evalcore.vendors.output_cap`); their tokens and cost are in `usage` and `cost_usd` too, and the calls "
        "table gives each its own row (`evalcore.grading.calls.call_rows`)."))

    @property
    def latency_s(self) -> float:
        """Seconds from the first attempt sent to the last answer: retries and backoff included."""
        return self.ended_at - self.started_at


@runtime_checkable
class Vendor(Protocol):
    """A judge vendor: a configured model behind a rate budget and the retry policy."""

    name: str
    family: str
    model: str

    async def complete(self, request: JudgeRequest, schema: type[T]) -> JudgeReply[T]:
        """One logical call (with retries). Raises `VendorError` when it gives up."""
        ...

    async def complete_many(
        self, requests: list[JudgeRequest], schema: type[T]
    ) -> list[JudgeReply[T] | VendorError]:
        """Many calls concurrently; failures are returned in place, never raised."""
        ...

    async def aclose(self) -> None:
        """Release the client (call from the event loop that created it)."""
        ...


async def complete_each(vendor: Vendor, requests: list[JudgeRequest], schema: type[T]) -> list[JudgeReply[T] | VendorError]:
    """`vendor.complete` on every request concurrently, each `VendorError` returned in its request's place.

    Why one function: a wrapping vendor (batching, reuse) implements `complete` and answers
    `complete_many` with this, so the protocol's rule (failures in place, never raised) is written once.
    """

    async def one(request: JudgeRequest) -> JudgeReply[T] | VendorError:
        try:
            return await vendor.complete(request, schema)
        except VendorError as exc:
            return exc

    return list(await asyncio.gather(*(one(r) for r in requests)))
