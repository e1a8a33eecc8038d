"""The knobs of a vendor emulator: behaviours a test can script, fault rates, latency, limits.

Why data, not code: a test says "first a 429 with retry-after 0.05, then OK" as a list of small
values, and a demo (`tribunal emulate`) can load the same knobs from YAML. Behaviours are pydantic
dataclasses so they read naturally positionally (`Hang(5)`, `ServerError(503)`) and still validate
and round-trip through the discriminated `kind` field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, SecretStr, field_validator, model_validator
from pydantic.dataclasses import dataclass

from evalcore.config.models import Price

# ---------------------------------------------------------------------------------------------
# Behaviours: what the emulator does with ONE request (the script is consumed in order).
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """A 200 answer. `content=None` asks the responder; a dict/list is sent as JSON, a str verbatim.

    `finish="length"` marks the answer as cut off by the token limit (without cutting it: pair it
    with a partial string to emulate a real truncation, or use `Truncated()`).
    """

    content: dict[str, Any] | list[Any] | str | None = None
    latency: float | None = None
    finish: Literal["stop", "length"] = "stop"
    kind: Literal["reply"] = "reply"


@dataclass(frozen=True)
class Malformed:
    """A 200 answer whose content is not valid JSON (the SDK's parse raises ValidationError)."""

    content: str = 'Here is my assessment: {"verdict": "met", "reason": "see'
    kind: Literal["malformed"] = "malformed"


@dataclass(frozen=True)
class Truncated:
    """The responder's answer cut in half, finish = length / max_tokens / REASON_MAX_LEN."""

    kind: Literal["truncated"] = "truncated"


@dataclass(frozen=True)
class RateLimited:
    """A 429 / RESOURCE_EXHAUSTED after `retry_after` seconds (OpenAI's `retry-after` header is an
    integer >= 1, as its OpenAPI document says, with the exact value in `retry-after-ms`).

    `should_retry` (HTTP emulators): send `x-should-retry: true|false` with the error, the header
    both official SDKs obey over their own rules; None sends none, as on most vendor errors.
    """

    retry_after: float = 1.0
    scope: Literal["requests", "tokens"] = "requests"
    should_retry: bool | None = None
    kind: Literal["rate_limited"] = "rate_limited"


@dataclass(frozen=True)
class ServerError:
    """An error status: 5xx (HTTP) or UNAVAILABLE/INTERNAL (gRPC: 502/503/529 -> UNAVAILABLE, else
    INTERNAL); a 404 is answered as the vendor's unknown-model error (gRPC NOT_FOUND).
    `should_retry` as in `RateLimited`."""

    status: int = 500
    should_retry: bool | None = None
    kind: Literal["server_error"] = "server_error"


@dataclass(frozen=True)
class Hang:
    """Sleep `seconds` before answering normally; a client that gives up first cancels it."""

    seconds: float = 3600.0
    kind: Literal["hang"] = "hang"


@dataclass(frozen=True)
class AuthError:
    """A 401 / UNAUTHENTICATED regardless of the key sent."""

    kind: Literal["auth_error"] = "auth_error"


@dataclass(frozen=True)
class BrokenBody:
    """A 200 whose body is not JSON at all (HTTP) / an UNKNOWN status (gRPC)."""

    kind: Literal["broken_body"] = "broken_body"


Behaviour = Annotated[
    Reply | Malformed | Truncated | RateLimited | ServerError | Hang | AuthError | BrokenBody,
    Field(discriminator="kind"),
]

# ---------------------------------------------------------------------------------------------
# Latency distributions (sampled from the emulator's seeded RNG).
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FixedLatency:
    """Every 200 answer takes exactly `seconds`."""

    seconds: float = 0.0
    kind: Literal["fixed"] = "fixed"


@dataclass(frozen=True)
class UniformLatency:
    """Latency drawn uniformly from [lo, hi] seconds."""

    lo: float = 0.0
    hi: float = 0.0
    kind: Literal["uniform"] = "uniform"


@dataclass(frozen=True)
class LognormalLatency:
    """Long-tailed latency like real model APIs: median `median` s, shape `sigma`, capped at `cap`."""

    median: float = 0.5
    sigma: float = 0.5
    cap: float = 60.0
    kind: Literal["lognormal"] = "lognormal"


Latency = Annotated[FixedLatency | UniformLatency | LognormalLatency, Field(discriminator="kind")]

# ---------------------------------------------------------------------------------------------
# Faults, limits, the whole config.
# ---------------------------------------------------------------------------------------------


class FaultRates(BaseModel):
    """Probabilities (per request, after the script is used up) of each injected fault.

    They are drawn from the emulator's seeded RNG, so a given seed and request order always
    injects the same faults.
    """

    model_config = ConfigDict(extra="forbid")

    rate_limit: float = Field(default=0.0, ge=0, le=1)
    server_error: float = Field(default=0.0, ge=0, le=1)
    malformed: float = Field(default=0.0, ge=0, le=1)
    truncated: float = Field(default=0.0, ge=0, le=1)
    hang: float = Field(default=0.0, ge=0, le=1)
    rate_limit_retry_after_s: float = Field(default=1.0, ge=0)
    server_error_statuses: list[int] = Field(default_factory=lambda: [500, 503])
    hang_s: float = Field(default=3600.0, ge=0)
    should_retry: bool | None = Field(
        default=None,
        description="HTTP emulators: send `x-should-retry: true|false` with every injected 429 and 5xx "
        "(None: no header, as on most vendor errors).",
    )

    @model_validator(mode="after")
    def _at_most_one(self) -> FaultRates:
        total = self.rate_limit + self.server_error + self.malformed + self.truncated + self.hang
        if total > 1.0 + 1e-9:
            raise ValueError(f"fault rates add up to {total:.3f}; they must total at most 1")
        if any(s < 500 or s > 599 for s in self.server_error_statuses):
            raise ValueError(f"server_error_statuses must be 5xx, got {self.server_error_statuses}")
        return self


class ServerLimits(BaseModel):
    """Server-side limits, enforced as token buckets refilled continuously at limit/60 per second
    and holding `burst_s` seconds of it (60, the default: the whole minute, as Anthropic documents
    its bucket; 1: OpenAI's per-second slices of a per-minute limit).

    A request is admitted if the request bucket holds >= 1 and the token bucket holds >= its
    estimated input tokens; it then takes 1 request and its input tokens, and its output tokens
    are taken after the answer (the bucket may go into debt). `None` = not enforced (the headers
    then advertise a large nominal limit).
    """

    model_config = ConfigDict(extra="forbid")

    requests_per_minute: int | None = Field(default=None, gt=0)
    tokens_per_minute: int | None = Field(default=None, gt=0)
    burst_s: float = Field(default=60.0, gt=0, le=60, description="Seconds of refill a bucket holds.")


BatchOutcome = Literal["succeeded", "errored", "expired", "canceled"]


class BatchSettings(BaseModel):
    """How the emulated batch APIs behave (OpenAI Batch, Anthropic Message Batches, xAI BatchMgmt).

    Time is the emulator's own clock (wall time plus whatever a test `advance`d it by), so a test
    can let a batch finish, or run past its window, without waiting. A batch ends `completion_s`
    after its creation if that is within `window_s`; otherwise it expires at `window_s` and every
    request in it expires. Per-request outcomes come from `script` (consumed in order over every
    batched request), then from `error_rate` (seeded).
    """

    model_config = ConfigDict(extra="forbid")

    completion_s: float = Field(default=0.0, ge=0, description="Emulator-clock seconds until a batch ends.")
    window_s: float = Field(default=86_400.0, gt=0, description="A batch not ended by then expires (24 h).")
    error_rate: float = Field(default=0.0, ge=0, le=1, description="Share of requests answered errored.")
    script: list[BatchOutcome] = Field(
        default_factory=list, description="Per-request outcomes, in submission order, before error_rate."
    )
    price_factor: float = Field(
        default=0.5, gt=0, description="xAI's reported cost of a batched request, relative to online."
    )
    results_kept_s: float = Field(
        default=29 * 86_400.0,
        gt=0,
        description="Anthropic archives a message batch this long after its creation: its results "
        "are deleted (29 days, as the vendor documents).",
    )
    max_enqueued_tokens: int | None = Field(
        default=None,
        gt=0,
        description="OpenAI only: the most input tokens (the emulator's count) of the batches of one model "
        "that have not ended, OpenAI's batch queue limit. A batch that would go over it is accepted "
        "(status validating) and then fails: status failed, errors.data[0].code token_limit_exceeded, "
        "nothing processed or billed. None: no limit. Anthropic documents its batch queue limit in requests "
        "and xAI none, so their emulators enforce none.",
    )
    max_enqueued_tokens_by_model: dict[str, PositiveInt] = Field(
        default_factory=dict, description="Per model, instead of max_enqueued_tokens (OpenAI only)."
    )
    keep_request_text: bool = Field(
        default=True,
        description="False for runs at scale: once a batch has ended and its results are made, the text of "
        "its requests is forgotten (bodies, prompts, OpenAI's input file content, which then reads back "
        "empty), keeping ids, outcomes and answers, so the emulator grows by answers, not prompts. The "
        "vendors keep it all (True).",
    )

    def enqueued_token_limit(self, model: str) -> int | None:
        """The batch queue limit of `model` (None: unlimited)."""
        return self.max_enqueued_tokens_by_model.get(model, self.max_enqueued_tokens)


class ReasoningTokens(BaseModel):
    """How many reasoning (thinking) tokens a call spends at one effort: lognormal, median `median`,
    shape `sigma` (0: always the median), never above `cap`.

    Why a distribution: a reasoning model's hidden tokens vary from call to call, and the vendors
    count them inside the output cap (OpenAI `max_output_tokens`, Anthropic `max_tokens`), so a cap
    a call usually fits is sometimes too small. A fixed count would never show that rate. Each
    call's count is drawn from a generator seeded by the emulator's seed and the request's model,
    effort and prompt, so the same request always reasons alike (a test's figures are reproducible
    and a retry with the same cap stops again; only a larger cap helps), whatever the order or
    concurrency of the calls.
    """

    model_config = ConfigDict(extra="forbid")

    median: int = Field(ge=0, description="The median count (0: never reasons).")
    sigma: float = Field(default=0.6, ge=0, le=3, description="Lognormal shape: the spread between calls.")
    cap: int = Field(default=100_000, gt=0, description="The most one call ever reasons.")


def _default_reasoning() -> dict[str, ReasoningTokens]:
    """Medians are the counts the emulators billed per effort before they were distributions (the
    estimates calibrated on emulated runs keep their mean within 20 %: e^(0.6^2/2) = 1.2); sigma 0.6
    puts 80 % of calls within 0.46x-2.2x the median, the spread reasoning models show on one kind of
    task. Not measured at the vendors: it makes the default judge (medium effort, 2,048-token cap,
    a ~150-token answer) stop at its cap on about 1.5 % of calls, so the truncation path is
    exercised in every emulated run; set your own from a real run's `reasoning_tokens`."""
    return {
        "none": ReasoningTokens(median=0),
        "minimal": ReasoningTokens(median=0),
        "low": ReasoningTokens(median=128),
        "medium": ReasoningTokens(median=512),
        "high": ReasoningTokens(median=2048),
        "xhigh": ReasoningTokens(median=4096),
        "max": ReasoningTokens(median=8192),
    }


class EmulatorConfig(BaseModel):
    """Everything that shapes one emulator's behaviour (the responder is passed separately)."""

    model_config = ConfigDict(extra="forbid")

    api_key: SecretStr | None = Field(
        default=None, description="If set, requests must carry this key (else 401 / UNAUTHENTICATED)."
    )
    script: list[Behaviour] = Field(
        default_factory=list, description="Behaviours consumed in order, one per request, before faults."
    )
    faults: FaultRates = Field(default_factory=FaultRates)
    latency: Latency = Field(default_factory=FixedLatency)
    limits: ServerLimits = Field(default_factory=ServerLimits)
    seed: int = Field(default=0, description="Seeds fault injection and latency sampling.")
    chars_per_token: float = Field(default=4.0, gt=0, description="Token estimate: ceil(chars / this).")
    cache_block_tokens: int = Field(
        default=128, gt=0, description="Prompt-cache step for automatic caching (OpenAI: 128 tokens)."
    )
    cache_min_tokens: int = Field(
        default=1024, gt=0, description="Shortest cacheable prefix (OpenAI and Anthropic: 1,024 tokens)."
    )
    cache_ttl_s: float = Field(
        default=300.0, gt=0, description="A cache entry expires this long after its last write or hit (5 min)."
    )
    cache_capacity: int = Field(
        default=1 << 20,
        gt=0,
        description="Prefix hashes kept (LRU; expired ones are dropped first). One per 128 tokens of a "
        "cached prompt: the real services keep far more than a sweep ever writes within a TTL.",
    )
    reasoning_tokens: dict[str, ReasoningTokens] = Field(
        default_factory=_default_reasoning,
        description="Per reasoning effort, the distribution of a call's reasoning tokens (`ReasoningTokens`; "
        "a plain integer is a fixed count). They are output tokens, counted inside the output cap by "
        "OpenAI (`max_output_tokens`) and Anthropic (`max_tokens`, with thinking on), not by xAI's emulator "
        "(its `max_tokens` is not documented to include them).",
    )
    refuse_unknown_models: bool = Field(
        default=False,
        description="Answer a model id neither in the installed SDK's own model list nor in `accept_models` "
        "as the vendor does (OpenAI 404 model_not_found, Anthropic 404 not_found_error, xAI NOT_FOUND). "
        "Off for a bare configuration (tests of the SDKs use made-up ids); on in every configuration "
        "`doubles.emulators.serve.emulator_config_from` builds (`tribunal emulate`, "
        "`tribunal sweep --vendors emulated`, the demo).",
    )
    accept_models: list[str] = Field(
        default_factory=list,
        description="Model ids served beyond the installed SDK's list (a model newer than the SDK, a "
        "test's own id). `emulator_config_from` adds the default configuration's `known_newer_models`.",
    )
    max_recorded: int | None = Field(
        default=None,
        gt=0,
        description="Keep only about the last N recorded requests, received bodies and stored responses "
        "(None = all, as the vendors keep them); stats always count all.",
    )
    batch: BatchSettings = Field(default_factory=BatchSettings)
    price: Price = Field(
        default_factory=lambda: Price(input=3.0, cached_input=0.75, output=15.0),
        description="Used for xAI's cost_in_usd_ticks (1 tick = 1e-10 USD).",
    )

    @field_validator("reasoning_tokens", mode="before")
    @classmethod
    def _fixed_counts(cls, value: Any) -> Any:
        """A plain count per effort (the older form) is a distribution that always draws it."""
        if isinstance(value, dict):
            return {k: {"median": v, "sigma": 0.0} if isinstance(v, int) else v for k, v in value.items()}
        return value
