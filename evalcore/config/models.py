"""Configuration models: one model for the whole run (loaded by `evalcore.config.load`).

Why one module: every section is a small model of one run's configuration; splitting them would scatter the one schema `run.json` records.

Sources, later ones winning key by key (mappings merge, lists and values replace):
`config/defaults.yaml` → the user's YAML (`--config`) → `TRIBUNAL_<KEY>` environment variables
(nested keys joined with `__`, e.g. `TRIBUNAL_AUDIT__MODE=always`, `TRIBUNAL_SEED=7`) → explicit
overrides. pydantic-settings reads and merges them (`TribunalSettings`); the result is validated
as a plain `TribunalConfig`, which is what every other module and run.json see.

Every model forbids unknown keys: a misspelled key (`bootstrap_sample`, an auditor's `modle`) is
an error naming the file, the key and its closest valid name, never a silently ignored setting.

Secrets live only in the environment: a vendor names the variable holding its key
(`api_key_env`), the key is read when the client is created and is never stored in a config
object, serialised into run.json, logged or put into an exception.
"""

from __future__ import annotations

import difflib
import os
import re
from enum import StrEnum
from typing import Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from evalcore.grading.scoring import PANEL_SIZE, AuditMode

#: Judge calls per second one vendor actor is given by default: the per-actor ceiling measured with
#: the real SDKs against a zero-latency emulator (benchmarks/actor_ceiling.py), with headroom.
ACTOR_CALLS_PER_S = 150.0
# validation-context key under which the loader passes the registered adapter names
ADAPTERS_CONTEXT = "registered_adapters"
MIN_OUTPUT_TOKENS = 16
"""The least `max_output_tokens` a vendor accepts (OpenAI's CreateResponse: minimum 16)."""
_GPT_VERSION = re.compile(r"gpt-(\d+)(?:\.(\d+))?")
ONLY_24H_FROM = (5, 5)
"""gpt-5.5 and later keep cached prefixes 24 h and accept no shorter retention (openai 3.57's docstring)."""


def accepts_only_24h(model: str) -> bool:
    """True for an OpenAI model that accepts no prompt-cache retention shorter than 24 h (`ONLY_24H_FROM`).

    A model name this rule does not know counts as accepting `in_memory`: if the model refuses it,
    the preflight says so before a run and the entry can set `24h`."""
    m = _GPT_VERSION.match(model)
    return m is not None and (int(m[1]), int(m[2] or 0)) >= ONLY_24H_FROM


class VendorMode(StrEnum):
    """Where the judges' answers come from (`--vendors`)."""

    REAL = "real"
    """The configured vendors, keys from the environment variables the configuration names."""
    EMULATED = "emulated"
    """Local emulators of each vendor's wire protocol, answering with the offline heuristics."""
    OFFLINE = "offline"
    """The in-process offline adapter: no network at all."""


class _Strict(BaseModel):
    """Base of every configuration model: an unknown key is an error, never silently ignored."""

    model_config = ConfigDict(extra="forbid")


class BilledTokens(NamedTuple):
    """What one call (or an estimate's share of calls) was billed for, in tokens.

    `cached_input_tokens` and the cache writes are subsets of `input_tokens` (every vendor reports
    them so: OpenAI's `input_tokens` includes `cached_tokens` and `cache_write_tokens`; the
    Anthropic adapter adds `cache_read_input_tokens` and `cache_creation_input_tokens` to it);
    `cache_write_1h_tokens` is the part of `cache_write_tokens` written with a one-hour lifetime.
    Floats, so that an estimate's weighted shares are priced by the same function as a call.
    """

    input_tokens: float = 0
    cached_input_tokens: float = 0
    output_tokens: float = 0
    cache_write_tokens: float = 0
    cache_write_1h_tokens: float = 0


class Bill(NamedTuple):
    """USD of one call by `Price.bill`: the whole, and the part paid for writing the prompt cache."""

    usd: float
    cache_write_usd: float


class Price(_Strict):
    """USD per 1M tokens, and what the vendor bills for writing its prompt cache.

    Why the multipliers live here: a cache write is billed per vendor, and the estimate, the cost
    cap, the call rows and the reduction must agree on it, so `bill` is the one place a token count
    becomes dollars (`evalcore.vendors.adapters` price replies with it, `evalcore.cost.estimate`
    its expected calls, `evalcore.cost.cost_cap` its worst cases). Anthropic bills a 5-minute
    cache write at 1.25x its input price and a 1-hour write at 2x; OpenAI reports
    `input_tokens_details.cache_write_tokens` but publishes no separate price for it (its OpenAPI
    document describes them as input tokens written to the cache, counted in `input_tokens`, and
    its usage API's `input_uncached_tokens` excludes them as a count only): 1.0, billed as input;
    xAI reports no cache writes. See docs/COST.md, "What a cache write costs".
    """

    input: float = 0.0
    cached_input: float = 0.0
    output: float = 0.0
    cache_write: float = Field(
        default=1.0,
        ge=0,
        description="Price of an input token written to the prompt cache (5-minute lifetime), as a multiple of "
        "`input`: Anthropic 1.25; OpenAI and xAI 1.0 (billed as ordinary input).",
    )
    cache_write_1h: float = Field(
        default=1.0,
        ge=0,
        description="The same for a write with a one-hour lifetime, as a multiple of `input`: Anthropic 2.0.",
    )

    batch: Price | None = Field(
        default=None,
        description="USD per 1M tokens through the vendor's batch API; None = half of the above "
        "(what OpenAI, Anthropic and xAI charge for batches; the cache-write multipliers stay, as the "
        "vendors' batch discount applies on top of them).",
    )

    def for_batch(self) -> Price:
        """The prices of a batched call."""
        if self.batch is not None:
            return self.batch
        return Price(input=self.input / 2, cached_input=self.cached_input / 2, output=self.output / 2,
                     cache_write=self.cache_write, cache_write_1h=self.cache_write_1h)

    def bill(self, tokens: BilledTokens) -> Bill:
        """USD of `tokens`: the one pricing rule (class docstring).

        Input tokens neither read from nor written to the cache are billed at `input`; reads at
        `cached_input`; writes at `input` x `cache_write` (their 1-hour part x `cache_write_1h`).
        A count larger than the part of the input it is a subset of is clamped to it, so a vendor's
        inconsistent usage can never make a call cost less than nothing.
        """
        total_in = max(tokens.input_tokens, 0)
        cached = min(max(tokens.cached_input_tokens, 0), total_in)
        written = min(max(tokens.cache_write_tokens, 0), total_in - cached)
        written_1h = min(max(tokens.cache_write_1h_tokens, 0), written)
        uncached = total_in - cached - written
        write_usd = ((written - written_1h) * self.cache_write + written_1h * self.cache_write_1h) * self.input
        usd = uncached * self.input + cached * self.cached_input + write_usd + max(tokens.output_tokens, 0) * self.output
        return Bill(usd / 1_000_000, write_usd / 1_000_000)

    def cost(
        self,
        input_tokens: float,
        cached_input_tokens: float,
        output_tokens: float,
        *,
        cache_write_tokens: float = 0,
        cache_write_1h_tokens: float = 0,
    ) -> float:
        """USD of one call (`bill`'s total)."""
        return self.bill(
            BilledTokens(input_tokens, cached_input_tokens, output_tokens, cache_write_tokens, cache_write_1h_tokens)
        ).usd

    def worst_case(self, input_tokens: float, output_tokens: float) -> float:
        """The most a call with this input and output can cost (`evalcore.cost.cost_cap`): no
        input read from the cache, all of it written to the cache when a write costs more than
        `input` (a miss on a cacheable prefix writes it; Tribunal's requests ask for 5-minute writes,
        the Anthropic adapter's `cache_control: ephemeral`, so `cache_write` is the dearest), and
        every output token."""
        written = input_tokens if self.cache_write > 1.0 else 0
        return self.bill(BilledTokens(input_tokens, 0, output_tokens, cache_write_tokens=written)).usd


class RateLimits(_Strict):
    """A vendor's published limits for this account and model, and how the vendor enforces them.

    Entries sharing one account (same adapter, endpoint and key variable) state the account's
    limits; the configuration takes the lowest stated, and a sweep, `grade` and `grade-one` serve
    the entries of one account with one budget of those limits, so together they never exceed them.
    """

    requests_per_minute: int = Field(default=600, gt=0)
    tokens_per_minute: int = Field(default=2_000_000, gt=0)
    algorithm: Literal["token_bucket", "sliding_window"] = Field(
        default="token_bucket",
        description="How the vendor counts: a bucket refilled continuously, or a strict sliding minute.",
    )
    burst_s: float | None = Field(
        default=None,
        gt=0,
        le=60,
        description="Seconds of refill the vendor's bucket holds (60: the whole minute; 1: per-second "
        "slices). None: the vendor's own (evalcore.vendors.budget.VENDOR_BURST_S).",
    )
    sent_arrival_s: float = Field(
        default=0.1,
        ge=0,
        le=10,
        description="Seconds within which a request whose body the HTTP client has written reaches the vendor "
        "(one-way network time and the socket buffer's drain): the token-bucket budget counts the call "
        "against the vendor's bucket from then. Raise it for a host far from the vendor or a slow uplink.",
    )


class RetryPolicy(_Strict):
    """One retry policy for every vendor (SDK retries are off)."""

    max_attempts: int = Field(default=6, ge=1)
    deadline_s: float = Field(default=900.0, gt=0)
    base_delay_s: float = Field(default=0.5, ge=0)
    max_delay_s: float = Field(default=60.0, gt=0)
    bad_output_retries: int = Field(default=2, ge=0)


class BatchLimits(_Strict):
    """What one batch may hold for this vendor (its batch API's documented caps, or lower), and what
    its batch queue may keep at the vendor at once (`max_enqueued_tokens`)."""

    max_requests: int = Field(default=10_000, gt=0, description="Requests per batch.")
    max_bytes: int = Field(default=100_000_000, gt=0, description="Serialized request bytes per batch.")
    max_enqueued_tokens: int | None = Field(
        default=None,
        gt=0,
        description="The most estimated input tokens this entry's batch queue keeps in batches at the vendor "
        "that have not ended (OpenAI's 'batch queue limit', per model and organisation; no batch holds more): "
        "the next batch is held until earlier ones end. None: unlimited. Entries of one account on one model "
        "(the OpenAI judge and auditor) and the vendor actors of one account draw on one vendor limit: give "
        "each its share. A batch the vendor refuses anyway (token_limit_exceeded) is sent again once there "
        "is room (evalcore.vendors.batch.queue).",
    )


class VendorConfig(_Strict):
    """One judge or auditor: which adapter, which model, its settings, limits and prices."""

    adapter: str = Field(
        description="Name of a registered adapter (evalcore.vendors.registry): openai, anthropic, xai, offline, "
        "zero, or any adapter registered with `@register(name)`."
    )
    name: str = Field(description="Name of this judge in tables (usually the vendor).")
    family: str = Field(description="Model family, for self-family preference (openai, xai, anthropic).")
    model: str
    reasoning_effort: str | None = None
    max_output_tokens: int = Field(
        default=2048,
        description=f"Output tokens a call may produce, reasoning included; at least {MIN_OUTPUT_TOKENS} "
        "(OpenAI refuses fewer).",
    )
    timeout_s: float = Field(default=120.0, gt=0)
    endpoint: str | None = Field(default=None, description="Base URL (HTTP) or host:port (gRPC).")
    api_key_env: str | None = Field(default=None, description="Environment variable holding the key.")
    limits: RateLimits = Field(default_factory=RateLimits)
    price: Price = Field(default_factory=Price)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    prompt_caching: bool = True
    prompt_cache_retention: Literal["shortest", "in_memory", "24h"] = Field(
        default="shortest",
        description="OpenAI only: the longest the vendor may keep this entry's cached prompt prefixes (our "
        "confidential sources and deliverables), sent as prompt_cache_retention on every request, batched "
        "ones too. shortest: the shortest the model accepts (in_memory, minutes; 24h for gpt-5.5 and later, "
        "which accept only that); in_memory or 24h: sent as given. run.json records the value sent, never shortest.",
    )
    batch_limits: BatchLimits = Field(default_factory=BatchLimits)
    warm_prompt_cache: bool = Field(
        default=True,
        description="Send one rubric call per shared prefix and wait for its answer before the rest "
        "(evalcore.vendors.warming): the vendors cache a prefix only once its first request is answering.",
    )
    max_in_flight: int = Field(
        default=512,
        gt=0,
        description="Upper bound of the in-flight cap per vendor client: the cap itself follows the budget's "
        "rate and the observed latency (Little's law, evalcore.vendors.in_flight); raise this bound for a "
        "top-tier account (10,000/min at 30 s needs ~10,000 in flight). One SDK client is built per 100.",
    )
    budget_share: float = Field(
        default=1.0,
        gt=0,
        description="Weight of this entry in its account's limits when its client is built alone "
        "(create_vendor). No effect in a sweep, grade or grade-one: entries on one account share one "
        "budget there (evalcore.vendors.sharding.create_account_vendors).",
    )
    account_fraction: float = Field(
        default=1.0,
        gt=0,
        le=1,
        description="Computed by the configuration (not set by hand): the fraction of the account's "
        "limits this entry's budget may use when its client is built alone (budget_share).",
    )
    actors: int | None = Field(
        default=None,
        ge=1,
        description="Vendor actors carrying this entry's account in a sweep (each with 1/N of the account's "
        "limits, requests routed by hash; evalcore.vendors.sharding; entries of one account: the most "
        "stated). None: enough for the account's rate at actor_calls_per_s.",
    )
    actor_calls_per_s: float = Field(
        default=ACTOR_CALLS_PER_S,
        gt=0,
        description="Judge calls per second one vendor actor is given (its measured ceiling with "
        "headroom, benchmarks/actor_ceiling.py); an entry whose rate exceeds it gets more actors.",
    )

    def cache_retention(self) -> Literal["in_memory", "24h"]:
        """The `prompt_cache_retention` an OpenAI request of this entry sends: as configured, or for
        `shortest` the shortest the model accepts (`accepts_only_24h`).

        The one place it is decided: the OpenAI adapter sends it, and the private preset refuses a
        24 h one before anything is sent (`jobs.sweep.governance.check_prompt_cache_retention`).
        Why never left out: without it an organisation without zero data retention gets 24 h on
        every model that offers it."""
        if self.prompt_cache_retention != "shortest":
            return self.prompt_cache_retention
        return "24h" if accepts_only_24h(self.model) else "in_memory"

    def account(self) -> tuple[str, str, str]:
        """Entries with the same adapter, endpoint and key variable draw on one vendor account.

        An offline entry is its own: it has no account (no key, no budget) to share with another.
        This is the one grouping rule: the configuration's limits and the sweep's budgets and
        actors (evalcore.vendors.sharding.group_by_account) both group entries by it.
        """
        if self.adapter == "offline":
            return ("offline", self.name, "")
        return (self.adapter, self.endpoint or "", self.api_key_env or "")

    @field_validator("max_output_tokens")
    @classmethod
    def _enough_output_tokens(cls, value: int) -> int:
        """Refused here rather than by the vendor at the first call: OpenAI answers a request with
        `max_output_tokens` below 16 with a 400, after a sweep has started and paid its preflight."""
        if value < MIN_OUTPUT_TOKENS:
            raise ValueError(
                f"max_output_tokens must be at least {MIN_OUTPUT_TOKENS} (OpenAI refuses fewer; the answer and any "
                f"reasoning share it), got {value}"
            )
        return value

    @field_validator("adapter")
    @classmethod
    def _registered_adapter(cls, value: str, info: ValidationInfo) -> str:
        """Checked against the registry's names when the loader passes them (`evalcore.config.load`).

        The names come in the validation context, so this model imports no vendor code; registering
        an adapter stays the only step to add a vendor.
        """
        known = (info.context or {}).get(ADAPTERS_CONTEXT)
        if known is not None and value not in known:
            close = difflib.get_close_matches(value, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"unknown adapter {value!r}{hint}; registered adapters: {', '.join(known)}")
        return value

    def api_key(self) -> SecretStr | None:
        """Read the key from the environment at the moment a client is built; never stored."""
        if not self.api_key_env:
            return None
        value = os.environ.get(self.api_key_env)
        return SecretStr(value) if value else None


class AuditConfig(_Strict):
    """Stage B settings."""

    mode: AuditMode = Field(
        default=AuditMode.SCORED, description="scored: audit only task score > 0 (the rule); always: debug; never: the panel only (a retest without --audit)."
    )
    grounding_candidates: bool = Field(default=True, description="Give Stage 1 the grounding flags.")


class OcrConfig(_Strict):
    """OCR of scanned pages (`evalcore.benchmark.ocr`): what counts as a page to check by eye."""

    low_confidence: float = Field(
        default=70.0, ge=0.0, le=100.0,
        description="An OCR'd page whose mean word confidence (0-100) is below this is a warning in `tribunal validate`.",
    )


class PromptBudget(_Strict):
    """Token budgets per prompt (estimated at 4 characters per token); over budget -> too_long."""

    rubric_tokens: int = 180_000
    audit_tokens: int = 180_000
    chars_per_token: float = 4.0


class InputLimits(_Strict):
    """Ceilings on what reading one input file may cost (task documents and submitted deliverables).

    Why: inputs come from benchmark authors and from the evaluated systems; one hostile or broken
    file (a decompression bomb, a million-row spreadsheet) must be refused with a reason instead of
    exhausting the memory of the process that loads every other input. The defaults are far above
    any real legal document; each refusal names the limit to raise (``input_limits.<name>`` in
    ``--config``). Applied by ``evalcore.benchmark.limits``.
    """

    max_file_bytes: int = Field(default=64 * 2**20, gt=0, description="Size of one file as stored.")
    max_unpacked_bytes: int = Field(
        default=128 * 2**20, gt=0,
        description="Total uncompressed size of the parts of one docx/xlsx/pptx (they are zip archives).",
    )
    max_archive_members: int = Field(default=10_000, gt=0, description="Parts in one docx/xlsx/pptx.")
    max_sheet_rows: int = Field(default=100_000, gt=0, description="Rows read from one workbook, all sheets.")
    max_sheet_cells: int = Field(default=1_000_000, gt=0, description="Cells read from one workbook, all sheets.")
    max_source_chars: int = Field(
        default=2_000_000, gt=0,
        description="Text of one task document after conversion (every source is indexed for grounding).",
    )
    max_pdf_page_content_bytes: int = Field(
        default=16 * 2**20, gt=0,
        description="Inflated content streams of one PDF page (its own and the forms it draws), measured "
        "before any is parsed; also bounds the text its fonts could expand them to (4x).",
    )
    max_pdf_content_bytes: int = Field(
        default=256 * 2**20, gt=0,
        description="Inflated content streams of all pages of one PDF, plus its fonts' maps and programs.",
    )
    max_pdf_page_chars: int = Field(default=1_000_000, gt=0, description="Text extracted from one PDF page.")
    max_pdf_text_chars: int = Field(default=10_000_000, gt=0, description="Text extracted from one PDF, all pages.")
    max_task_criteria: int = Field(
        default=1_000, gt=0,
        description="Criteria in one task.json (the protocol has 44-90; each is judged per submission).",
    )


class BatchRetention(_Strict):
    """The expiries a batch's files are created with (OpenAI), copied from `DataGovernance` so the
    batch queue, which is given the batch settings only, sends them. None: the vendor's default."""

    input_file_expires_after_s: int | None = None
    output_files_expire_after_s: int | None = None


class BatchConfig(_Strict):
    """Batch mode: judge calls go through the vendors' batch APIs (half price, hours of latency).

    Requests queue per vendor and are sent as one batch when `max_requests`/`max_bytes` of the
    vendor's `batch_limits` is reached or `flush_interval_s` after the first request queued; each
    batch is polled every `poll_interval_s`. Requests that come back errored, expired or cancelled
    go into a later batch (or online with `retry_online`) under the vendor's retry policy.
    """

    enabled: bool = Field(default=False, description="tribunal sweep --batch sets this.")
    flush_interval_s: float = Field(default=30.0, ge=0)
    poll_interval_s: float = Field(default=60.0, gt=0)
    retry_online: bool = Field(default=False, description="Retry failed batch requests online (full price).")
    retention: BatchRetention = Field(
        default_factory=BatchRetention,
        description="Computed by the configuration from data_governance (not set by hand): how long OpenAI "
        "keeps a batch's files if no purge deletes them.",
    )


EXPIRY_RANGE_S = (3_600, 2_592_000)
"""What OpenAI accepts for a file's `expires_after` and a batch's `output_expires_after`: 1 hour to 30 days."""


class BatchAllowed(_Strict):
    """Per vendor, whether its batch API may be used (a sweep with `--batch` refuses otherwise)."""

    openai: bool = True
    anthropic: bool = True
    xai: bool = Field(
        default=True,
        description="xAI's batch API has no delete: a batch stays at xAI for a time xAI does not publish. "
        "The private preset refuses it.",
    )


GovernancePreset = Literal["standard", "private"]

PRIVATE_PRESET: dict[str, Any] = {
    "batch_allowed": {"xai": False},
    "purge": True,
    "openai_input_file_expires_after_s": 90_000,
    "openai_output_files_expire_after_s": 86_400,
}
"""The strictest value of each governed setting, which `preset: private` sets (and holds: a laxer
value set next to it is refused). Settings not listed are the same in both presets."""


class DataGovernance(_Strict):
    """What the vendors and the local disk keep of a benchmark's tasks and deliverables.

    Why a section: a private benchmark must not outlive its run anywhere it was copied to. What
    every request sends is fixed (OpenAI `store: false`, xAI `store_messages` off, the shortest
    prompt-cache retention: `VendorConfig.prompt_cache_retention`); what a run leaves behind is
    set here: which vendors' batch APIs may be used, whether batch artefacts are deleted once the
    run's tables are written (`purge`), how long OpenAI keeps a batch's files if they are not, and
    where the local caches of converted documents and OCR pages live. `preset: private` sets the
    strictest value of each (`PRIVATE_PRESET`) and refuses a laxer one set next to it. Every copy,
    and the setting that controls it: docs/DATA.md.
    """

    preset: GovernancePreset = Field(
        default="standard",
        description="standard: the defaults below; private: the strictest of each (xAI batch refused, purge "
        "on, the shortest expiries, a 24h prompt_cache_retention refused unless prompt_cache_24h_allowed names "
        "the entry).",
    )
    batch_allowed: BatchAllowed = Field(default_factory=BatchAllowed)
    purge: bool = Field(
        default=True,
        description="Delete every batch artefact at the vendors (OpenAI input/output/error files, Anthropic "
        "batches) once the run's tables are written; `tribunal purge RUN` does it later or again.",
    )
    openai_input_file_expires_after_s: int = Field(
        default=90_000, ge=EXPIRY_RANGE_S[0], le=EXPIRY_RANGE_S[1],
        description="A batch input file's expires_after (OpenAI's default: 30 days). 25 h: the batch's 24 h "
        "window and an hour; after its batch ends the file is never read again.",
    )
    openai_output_files_expire_after_s: int = Field(
        default=259_200, ge=EXPIRY_RANGE_S[0], le=EXPIRY_RANGE_S[1],
        description="A batch's output_expires_after for its output and error files, from their creation "
        "(OpenAI's default: kept until deleted). A run must collect within it: 3 days leaves a --detach run "
        "time to come back (private: 24 h).",
    )
    prompt_cache_24h_allowed: list[str] = Field(
        default_factory=list,
        description="Names of OpenAI entries whose model accepts only a 24 h prompt-cache retention (gpt-5.5 "
        "and later) that the private preset may use anyway: the publisher's consent that OpenAI keeps their "
        "cached prompt prefixes (sources, deliverables) up to 24 h. Private refuses such an entry unless it is "
        "named here; the sweep says so on the console and run.json records it. Standard: not needed.",
    )
    cache_dir: str | None = Field(
        default=None,
        description="Where a sweep keeps its local caches: a local folder (converted documents in docs/, OCR "
        "pages in ocr/; created 0700, files 0600), or off (memory only: the sweep's OCR tasks hand their pages "
        "back through Ray). None: memory only under the private preset; else TRIBUNAL_CACHE_DIR if set, else "
        "the sweep's output folder (<output>/_cache, OCR pages in <output>/_ocr) -- never ~/.cache. "
        "`tribunal purge RUN --local` deletes a run's entries.",
    )

    @field_validator("cache_dir")
    @classmethod
    def _local_folder(cls, value: str | None) -> str | None:
        if value is not None and (value.startswith("s3://") or not value.strip()):
            raise ValueError(f"{value!r}: a local folder (a sweep's OCR pages on S3 are <output>/_ocr)")
        return value

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: Any) -> Any:
        """`preset: private`: fill every setting not given with its strictest value; refuse a laxer one."""
        if not isinstance(data, dict) or data.get("preset") != "private":
            return data
        out = dict(data)
        laxer: list[str] = []
        for key, strict in PRIVATE_PRESET.items():
            if key == "batch_allowed":
                given = dict(out.get(key) or {})
                for vendor, allowed in strict.items():
                    if vendor not in given:
                        given[vendor] = allowed
                    elif given[vendor] is True or str(given[vendor]).lower() == "true":
                        laxer.append(f"batch_allowed.{vendor}: true (private: {str(allowed).lower()})")
                out[key] = given
            elif key not in out:
                out[key] = strict
            elif key == "purge" and not _truthy(out[key]):
                laxer.append("purge: false (private: true)")
            elif key.endswith("_s") and _number(out[key]) > strict:
                laxer.append(f"{key}: {out[key]} (private: at most {strict})")
        if laxer:
            raise ValueError("preset private holds the strictest value of each setting; laxer values given: "
                             + "; ".join(laxer))
        return out

    def batch_refused(self, adapter: str) -> bool:
        """True when this adapter's batch API may not be used."""
        return getattr(self.batch_allowed, adapter, True) is False


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in {"true", "1", "yes", "on"}


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("-inf")  # not a number: the field's own validation names it


class TribunalConfig(_Strict):
    """Everything a run needs besides its inputs; recorded (without secrets) in run.json."""

    judges: list[VendorConfig]
    auditor: VendorConfig
    audit: AuditConfig = Field(default_factory=AuditConfig)
    prompt_budget: PromptBudget = Field(default_factory=PromptBudget)
    ocr: OcrConfig = Field(default_factory=OcrConfig)
    batch: BatchConfig = Field(default_factory=BatchConfig)
    known_newer_models: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Adapter -> model ids the vendor serves that the installed SDK's model list does not have "
        "yet: configuring one draws no warning (evalcore.config.model_ids). The preflight still checks them.",
    )
    family_map: dict[str, str] = Field(
        default_factory=dict, description="Evaluated system name (or prefix) -> model family."
    )
    bootstrap_samples: int = 2000
    seed: int = 20261130
    input_limits: InputLimits = Field(default_factory=InputLimits)
    data_governance: DataGovernance = Field(default_factory=DataGovernance)

    @field_validator("judges")
    @classmethod
    def _three_judges(cls, value: list[VendorConfig]) -> list[VendorConfig]:
        if len(value) != PANEL_SIZE:
            raise ValueError(f"the panel needs exactly {PANEL_SIZE} judges, got {len(value)}")
        names = [v.name for v in value]
        if len(set(names)) != PANEL_SIZE:
            raise ValueError(f"judge names must be distinct, got {names}")
        return value

    @model_validator(mode="after")
    def _auditor_name_distinct(self) -> TribunalConfig:
        if self.auditor.name in {j.name for j in self.judges}:
            raise ValueError(f"auditor name {self.auditor.name!r} must differ from the judges' names")
        return self

    @model_validator(mode="after")
    def _governance_applied(self) -> TribunalConfig:
        """The batch queue gets the governed expiries (`BatchConfig.retention`); under the private
        preset no entry may ask OpenAI to keep its cached prompts a day (`prompt_cache_retention: 24h`)."""
        gov = self.data_governance
        if gov.preset == "private":
            long = [v.name for v in self.vendors() if v.prompt_cache_retention == "24h"
                    and not (accepts_only_24h(v.model) and v.name in gov.prompt_cache_24h_allowed)]
            if long:
                raise ValueError(
                    f"data_governance.preset private: prompt_cache_retention 24h on {', '.join(long)}; private keeps "
                    "cached prompts the shortest the model accepts (set shortest, or leave it out)"
                )
        retention = BatchRetention(input_file_expires_after_s=gov.openai_input_file_expires_after_s,
                                   output_files_expire_after_s=gov.openai_output_files_expire_after_s)
        if self.batch.retention != retention:
            self.batch = self.batch.model_copy(update={"retention": retention})
        return self

    @model_validator(mode="after")
    def _accounts_budgeted_together(self) -> TribunalConfig:
        """Entries sharing an account never get more than the account's limits, together.

        Whatever files the entries come from, the account's limits are the lowest any of its
        entries states. Where the entries are built together (sweep, grade, grade-one) they share
        one budget of those limits (`evalcore.vendors.sharding.create_account_vendors`); each
        entry's `account_fraction` (its `budget_share` of them) holds for a client built alone.
        Recomputed identically when the configuration is validated again, e.g. from run.json.
        """
        groups: dict[tuple[str, str, str], list[VendorConfig]] = {}
        for v in self.vendors():
            if v.adapter != "offline":
                groups.setdefault(v.account(), []).append(v)
        updates: dict[str, dict[str, Any]] = {}
        for members in groups.values():
            limits = {
                "requests_per_minute": min(m.limits.requests_per_minute for m in members),
                "tokens_per_minute": min(m.limits.tokens_per_minute for m in members),
            }
            total = sum(m.budget_share for m in members)
            for m in members:
                updates[m.name] = {
                    "limits": m.limits.model_copy(update=limits),
                    "account_fraction": m.budget_share / total,
                }
        # copies: the entries may be objects the caller still holds
        self.judges = [j.model_copy(update=updates[j.name]) if j.name in updates else j for j in self.judges]
        if self.auditor.name in updates:
            self.auditor = self.auditor.model_copy(update=updates[self.auditor.name])
        return self

    def vendors(self) -> list[VendorConfig]:
        """Judges then the auditor: each gets its own client; entries on one account share its budget.

        The auditor is a separate entry even when it is the same vendor as a judge: it runs a
        different model setting (high effort), its own store of paid calls and its own statistics,
        so a sweep's audit traffic is visible on its own; on the judge's account it draws from
        the same budget (one actor per account in a sweep).
        """
        return [*self.judges, self.auditor]

    def family_of(self, system: str) -> str | None:
        """Family of an evaluated system: exact name first, then the longest matching prefix."""
        if system in self.family_map:
            return self.family_map[system]
        best = None
        for prefix, fam in self.family_map.items():
            if system.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
                best = (prefix, fam)
        return best[1] if best else None

    def as_sent(self) -> TribunalConfig:
        """The configuration with what its requests send decided, as run.json records it: each OpenAI
        entry's `prompt_cache_retention` resolved (`shortest` is `in_memory`, or `24h` on a model that
        accepts only that: `VendorConfig.cache_retention`), so the record never says `shortest` of
        requests that carried `24h`. Other vendors send no such field: their entries are unchanged."""

        def sent(v: VendorConfig) -> VendorConfig:
            if v.adapter != "openai":
                return v
            return v.model_copy(update={"prompt_cache_retention": v.cache_retention()})

        return self.model_copy(update={"judges": [sent(j) for j in self.judges], "auditor": sent(self.auditor)})

    def public_dict(self) -> dict[str, Any]:
        """The configuration as recorded in run.json (no secrets exist in it by construction)."""
        return self.model_dump(mode="json")


