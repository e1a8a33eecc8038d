"""Know the bill before paying it: every request a sweep would send, counted and priced, unsent.

Why one module: the counts, their sum over parts priced apart, the pricing modes, the wall times
and the table that shows them are one model of a sweep's bill; each reads the others' fields.

`estimate` walks the submissions like a sweep: for each it makes the plan `grade_submission` makes
(`evalcore.grading.plan.plan_submission`: the too_long decision, the rubric prompts and the Stage 1
prompt with its grounding candidates unless `fast`), renders Stage 2's prefix as the audit does
(`audit.verify_prompt`), binds them to every judge and the auditor, and counts calls and input
tokens per vendor exactly. Two things are not knowable before the answers come
back, and are explicit assumptions (`OutputModel`), calibrated from an earlier run when one is
given (`OutputModel.from_run`, e.g. a pilot on a few submissions):

* output tokens per call (answer + reasoning), per vendor and purpose;
* which submissions are audited (Stage A must pass) and how many audits raise flags (Stage 2).

The expected cached share comes from replaying the vendors' caching rules (`evalcore.cost.prompt_cache`,
the same model the emulators bill by) over the requests in the order a sweep sends them: with cache
warming, each prefix's first request is answered before the others arrive; without it, a
submission's criteria arrive together and all miss. Stage 2 is replayed after Stage 1.

Pricing is per mode (`PRICINGS`): "online" uses each vendor's configured price table, "batch" its
batch prices (`Price.for_batch`: the vendors' batch APIs charge half). Every call is priced by
`Price.bill`, the rule the adapters price replies by: the replay also says which tokens each request
writes to the cache, and a write is billed at the vendor's write price (Anthropic: 1.25x input), so
warming's cost is counted where it is paid. A configuration in batch mode
(`config.batch.enabled`, `tribunal estimate --batch`) is priced "batch" instead of "online": its
calls all go through the batch APIs. Batch mode turns cache warming off (a warming round would be a
whole batch), but a batch's requests are not a burst: the vendor works through them one after
another, so a request whose prefix an earlier one in the batch wrote reads it, as warming achieves
online. That is how the emulators answer a batch (`doubles.emulators._batches`: each request is
looked up and written in turn), and how the replay prices batch mode: the expected cost
(`cost_usd`). The vendors call caching inside a batch best effort, so the cold bound beside it
(`cost_usd_cold`: no input token served from a cache) is what a batch costs if no hit happens.
Any further mode in `PRICINGS` is one more cost column.

Wall time. Online, the lower bound is what the configured rate limits allow (the budget runs at 95 %
of them): calls / requests-per-minute and tokens / tokens-per-minute, for the slowest vendor;
latency only adds to it (`min_wall_s`). Batches are not bound by those limits but by the vendors'
completion window: each stage (Stage A's rubric calls, then Stage 1, then Stage 2) is one round of
batches that waits for the last to end, so a batch sweep takes up to rounds × the window
(`BatchWallTime`, and `min_wall_s` is None).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from evalcore.config.models import BilledTokens, Price, TribunalConfig, VendorConfig
from evalcore.cost.prompt_cache import CachePlan, PrefixCache
from evalcore.grading.audit import verify_prompt
from evalcore.grading.plan import TooLong, plan_submission
from evalcore.schema import Submission, Task
from evalcore.vendors.protocol import JudgeRequest
from evalcore.vendors.registry import has_batch_api
from evalcore.vendors.warming import prefix_groups

Purpose = Literal["rubric", "detect", "verify"]
BUDGET_SHARE = 0.95
"""The rate budget runs each vendor at this share of its configured limits (vendors/budget.py)."""

PRICINGS: dict[str, Callable[[VendorConfig], Price | None]] = {
    "online": lambda cfg: cfg.price,
    "batch": lambda cfg: cfg.price.for_batch(),
}
"""Price table of a vendor per pricing mode; a mode whose price is None for a vendor is not shown.
"online" and "batch" are exclusive: a configuration is priced by the one its `batch.enabled` picks."""

BATCH_WINDOW_S = 86_400.0
"""The vendors' batch completion window: a batch ends within it or expires (OpenAI's only
`completion_window` is "24h"; Anthropic's message batches and xAI's batches end within 24 hours)."""


def pricing_modes(config: TribunalConfig) -> dict[str, Callable[[VendorConfig], Price | None]]:
    """The modes `config` is priced in: "batch" in batch mode, else "online" (plus any other mode)."""
    skip = "online" if config.batch.enabled else "batch"
    return {mode: price_of for mode, price_of in PRICINGS.items() if mode != skip}


class OutputModel(BaseModel):
    """What cannot be known before sending: output sizes and which submissions are audited."""

    answer_tokens: dict[str, float] = Field(
        default_factory=lambda: {"rubric": 80.0, "detect": 400.0, "verify": 300.0},
        description="Visible answer tokens per call, by purpose.",
    )
    reasoning_tokens: dict[str, float] = Field(
        default_factory=lambda: {"none": 0.0, "minimal": 0.0, "low": 128.0, "medium": 512.0, "high": 2048.0, "xhigh": 4096.0},
        description="Reasoning tokens per call, by the vendor's reasoning effort (billed as output).",
    )
    per_vendor: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="Measured mean output tokens, vendor -> purpose (from a run); overrides the two above.",
    )
    audited_share: float = Field(
        default=1.0, ge=0, le=1,
        description="Share of graded submissions audited (task score > 0); 1.0 is the upper bound.",
    )
    verify_share: float = Field(default=1.0, ge=0, le=1, description="Share of audits whose Stage 1 raises flags.")
    verify_flag_tokens: float = Field(default=600.0, ge=0, description="Stage 2 suffix: flags and their passages.")
    truncation_rate: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="Share of calls whose answer stopped at its output cap and was retried, vendor -> purpose "
        "(measured on a run: `evalcore.grading.calls.truncation_rates`); each adds a paid attempt. None "
        "assumed without a run: the caps are sized for the effort (`evalcore.vendors.output_cap`).",
    )
    truncated_output_tokens: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="Mean output tokens billed per truncated attempt, vendor -> purpose (measured with the rate).",
    )
    calibrated_from: str | None = None

    def output_tokens(self, cfg: VendorConfig, purpose: str) -> float:
        """Expected output tokens of one call of `cfg` for `purpose`."""
        measured = self.per_vendor.get(cfg.name, {}).get(purpose)
        if measured is not None:
            return measured
        return self.answer_tokens.get(purpose, 0.0) + self.reasoning_tokens.get(cfg.reasoning_effort or "none", 0.0)

    def truncation(self, cfg: VendorConfig, request: JudgeRequest) -> tuple[float, float]:
        """(truncated attempts per call, output tokens each) for `request` sent to `cfg`: each is an
        extra paid attempt that used its whole cap (the request's, when the run did not say)."""
        rate = self.truncation_rate.get(cfg.name, {}).get(request.purpose, 0.0)
        cap = float(request.max_output_tokens or cfg.max_output_tokens)
        return rate, self.truncated_output_tokens.get(cfg.name, {}).get(request.purpose, cap)

    @classmethod
    def from_run(cls, run_uri: str) -> OutputModel:
        """Calibrate from a run's tables: mean output tokens of its paid successful calls per vendor
        and purpose, how often their answers stopped at the output cap (`truncation_rates`), the
        share of complete submissions that were audited, and of audits with a Stage 2. Purposes the
        run never called keep the defaults."""
        import duckdb

        from evalcore.grading.calls import truncation_rates
        from evalcore.storage.store import read_table

        calls = read_table(run_uri, "calls", ["vendor", "purpose", "outcome", "output_tokens", "reused_from",
                                              "attempts", "cost_usd"])
        subs = read_table(run_uri, "submissions", ["status", "audited", "repeat"])
        con = duckdb.connect()
        con.register("calls", calls)
        con.register("subs", subs)
        per: dict[str, dict[str, float]] = {}
        for vendor, purpose, mean in con.execute(
            "select vendor, purpose, avg(output_tokens) from calls where outcome = 'ok' and reused_from is null "
            "group by vendor, purpose"
        ).fetchall():
            per.setdefault(str(vendor), {})[str(purpose)] = float(mean)
        complete, audited = con.execute(
            # the originals: a retest's repeats of the panel only are not audited by choice, not by the rule
            "select count(*), count(*) filter (where audited) from subs where status = 'complete' "
            "and coalesce(repeat, 0) = 0"
        ).fetchone() or (0, 0)
        detects, verifies = con.execute(
            "select count(*) filter (where purpose = 'detect'), count(*) filter (where purpose = 'verify') from calls"
        ).fetchone() or (0, 0)
        out = cls(per_vendor=per, calibrated_from=run_uri)
        for t in truncation_rates(calls):
            out.truncation_rate.setdefault(t.vendor, {})[t.purpose] = t.rate
            out.truncated_output_tokens.setdefault(t.vendor, {})[t.purpose] = t.truncated_output_tokens
        if complete:
            out.audited_share = audited / complete
        if detects:
            out.verify_share = min(1.0, verifies / detects)
        return out


class VendorEstimate(BaseModel):
    """One configured vendor entry's expected traffic and bill."""

    vendor: str
    model: str
    calls: float = 0.0
    input_tokens: float = 0.0
    cached_input_tokens: float = 0.0
    cache_write_tokens: float = Field(default=0.0, description="Expected input tokens written to the prompt cache.")
    output_tokens: float = 0.0
    cost_usd: dict[str, float] = Field(
        default_factory=dict, description="Pricing mode -> expected USD (with the expected cache hits)."
    )
    cache_write_usd: dict[str, float] = Field(
        default_factory=dict,
        description="Pricing mode -> the part of cost_usd paid for cache writes (the vendor's write price: Anthropic 1.25x input).",
    )
    cost_usd_cold: dict[str, float] = Field(
        default_factory=dict, description="Pricing mode -> USD if no input token is served from a cache, each request "
        "writing its whole cacheable prefix (upper bound)."
    )
    min_wall_s: float | None = Field(
        default=0.0, description="Lower bound set by this vendor's rate limits (online; None in batch mode)."
    )
    calls_by_purpose: dict[str, float] = Field(default_factory=dict)


class BatchWallTime(BaseModel):
    """How long a batch sweep takes: rounds of batches one after another, each ending within the window.

    Why not from the rate limits: batched requests do not go through them (xAI does not count them;
    the others queue them apart), a batch's requests are answered when the vendor gets to them. What
    bounds a round is the completion window; the sweep adds its flush interval before submitting a
    round and notices the end within one poll interval. Requests retried in a later batch (errored,
    expired, unusable) add rounds; this counts none.
    """

    stages: list[str] = Field(description="The rounds, in order: rubric (Stage A), detect (Stage 1), verify (Stage 2).")
    in_flight: int | None = Field(default=None, description="Submissions graded at once (None: all of them).")
    waves: int = Field(default=1, description="Groups of submissions graded one after another (`in_flight`).")
    window_s: float = Field(default=BATCH_WINDOW_S, description="The vendors' completion window of one batch.")
    flush_interval_s: float = 0.0
    poll_interval_s: float = 0.0
    completion_s: float | None = Field(
        default=None, description="Expected time for a batch to end, when known (an emulator's); the vendors publish none."
    )

    @property
    def rounds(self) -> int:
        """Rounds of batches one after another."""
        return len(self.stages) * self.waves

    @property
    def upper_bound_s(self) -> float:
        """Every batch taking its whole window."""
        return self.rounds * (self.flush_interval_s + self.window_s + self.poll_interval_s)

    @property
    def expected_s(self) -> float | None:
        """Every batch ending after `completion_s` (noticed half a poll interval later on average)."""
        if self.completion_s is None:
            return None
        return self.rounds * (self.flush_interval_s + self.completion_s + self.poll_interval_s / 2)


class Estimate(BaseModel):
    """A sweep's expected calls, tokens, cached share, bill (and its cold bound) and wall time."""

    submissions: int = 0
    too_long: int = 0
    warm: bool = True
    pricing: str = Field(default="online", description="The configuration's own mode: online or batch.")
    vendors: list[VendorEstimate] = Field(default_factory=list)
    assumptions: OutputModel = Field(default_factory=OutputModel)
    batch_wall_time: BatchWallTime | None = Field(
        default=None, description="Batch mode: rounds of batches and the completion window (None online)."
    )

    @property
    def cost_usd(self) -> dict[str, float]:
        """Expected total per pricing mode."""
        return _total(v.cost_usd for v in self.vendors)

    @property
    def cache_write_usd(self) -> dict[str, float]:
        """Expected USD paid for prompt-cache writes per pricing mode (part of `cost_usd`)."""
        return _total(v.cache_write_usd for v in self.vendors)

    @property
    def cost_usd_cold(self) -> dict[str, float]:
        """Total per pricing mode if no input token is served from a cache: the upper bound."""
        return _total(v.cost_usd_cold for v in self.vendors)

    @property
    def cached_share(self) -> float:
        """Expected share of input tokens served from the vendors' caches."""
        total = sum(v.input_tokens for v in self.vendors)
        return sum(v.cached_input_tokens for v in self.vendors) / total if total else 0.0

    @property
    def min_wall_s(self) -> float | None:
        """Online, vendors run in parallel: the slowest one's bound. None in batch mode, where the
        rate limits bound nothing (`batch_wall_time` is the figure there)."""
        if self.batch_wall_time is not None:
            return None
        return max((v.min_wall_s or 0.0 for v in self.vendors), default=0.0)

    def per_submission(self, mode: str | None = None) -> float:
        """USD per graded submission (in `mode`, by default the configuration's own)."""
        graded = self.submissions - self.too_long
        return self.cost_usd.get(mode or self.pricing, 0.0) / graded if graded else 0.0


def _total(per_vendor: Iterable[dict[str, float]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for costs in per_vendor:
        for mode, usd in costs.items():
            out[mode] = out.get(mode, 0.0) + usd
    return out


def _breakpoints(cfg: VendorConfig, request: JudgeRequest) -> list[int] | None:
    """Where the adapter marks the cache (Anthropic: the end of the shared prefix, if caching is on);
    None = the vendor caches prefixes automatically (OpenAI, xAI)."""
    if cfg.adapter != "anthropic":
        return None
    return [len(request.shared_prefix)] if cfg.prompt_caching and request.shared_prefix else []


class _Replay:
    """The vendors' caches over one submission's requests (fences differ per grading, so no prefix
    is shared across submissions and a fresh cache per submission is exact)."""

    def __init__(self, chars_per_token: float) -> None:
        self.chars_per_token = chars_per_token
        self.caches: dict[str, PrefixCache] = {}

    def _cache(self, cfg: VendorConfig) -> PrefixCache:
        if cfg.adapter not in self.caches:  # one cache per service (the OpenAI judge and auditor share one)
            self.caches[cfg.adapter] = PrefixCache(
                block_tokens=128, min_tokens=1024, chars_per_token=self.chars_per_token, ttl_s=300.0,
                capacity=1 << 30,
            )
        return self.caches[cfg.adapter]

    def burst(self, cfg: VendorConfig, requests: list[JudgeRequest], extra_chars: int = 0) -> list[CachePlan]:
        """Requests that arrive together: all look up first, then all write. What each found and wrote."""
        if cfg.adapter == "offline":
            return [CachePlan(0, ())] * len(requests)
        cache = self._cache(cfg)
        plans = [
            cache.lookup(cfg.model, r.system_prompt, r.user_text + "x" * extra_chars, _breakpoints(cfg, r))
            for r in requests
        ]
        for p in plans:
            cache.store(p)
        return plans


def _batched(config: TribunalConfig) -> set[str]:
    """The entries whose calls all go through their vendor's batch API (batch mode)."""
    return {cfg.name for cfg in config.vendors() if config.batch.enabled and has_batch_api(cfg)}


def estimate(
    tasks: Mapping[str, Task],
    submissions: Iterable[Submission],
    config: TribunalConfig,
    model: OutputModel | None = None,
    *,
    fast: bool = False,
    on_request: Callable[[Submission, VendorConfig, JudgeRequest], None] | None = None,
    in_flight: int | None = None,
    batch_completion_s: float | None = None,
) -> Estimate:
    """Every request a sweep of `submissions` would send, counted and priced (nothing is sent).

    The too_long decision and the prompts come from `evalcore.grading.plan.plan_submission`, the
    function `grade_submission` plans with. `fast` skips the grounding checks (their candidates
    are a small part of the Stage 1 suffix) so that a sweep can show an estimate at once;
    `tribunal estimate` builds the exact prompts. `on_request`, when given, sees each request as
    it is priced (Stage 2 without its flags): how a test holds the estimate to what grading sends.

    Batch mode only: `in_flight` is how many submissions are graded at once (a sweep's shard size
    × shards in flight; None: all of them), so each further group repeats the rounds of batches;
    `batch_completion_s` is the expected time for a batch to end, when the caller knows it.
    """
    part = estimate_part(tasks, submissions, config, model, fast=fast, on_request=on_request)
    return finish(part, config, in_flight=in_flight, batch_completion_s=batch_completion_s)


def estimate_part(
    tasks: Mapping[str, Task],
    submissions: Iterable[Submission],
    config: TribunalConfig,
    model: OutputModel | None = None,
    *,
    fast: bool = False,
    on_request: Callable[[Submission, VendorConfig, JudgeRequest], None] | None = None,
) -> Estimate:
    """`estimate`'s counts and dollars for some submissions, without the wall times (`finish`).

    Why apart: each submission is priced on its own (a fresh cache replay per submission), so the
    parts of a sweep's submissions add up (`combine`) and can be priced in parallel (a sweep
    prices its pending submissions in chunks on the cluster, `jobs.sweep.cost_watch`).
    """
    model = model or OutputModel()
    budget = config.prompt_budget
    cpt = budget.chars_per_token
    warm_any = any(j.warm_prompt_cache and j.prompt_caching for j in config.judges)
    est = Estimate(assumptions=model, warm=warm_any, pricing="batch" if config.batch.enabled else "online")
    modes = pricing_modes(config)
    acc = {cfg.name: VendorEstimate(vendor=cfg.name, model=cfg.model) for cfg in config.vendors()}
    audit_weight = {"always": 1.0, "never": 0.0}.get(config.audit.mode, model.audited_share)
    batched = _batched(config)

    def add(sub: Submission, cfg: VendorConfig, request: JudgeRequest, request_tokens: int, plan: CachePlan,
            weight: float) -> None:
        if on_request is not None:
            on_request(sub, cfg, request)
        purpose = request.purpose
        v = acc[cfg.name]
        cached = min(plan.hit_tokens, request_tokens)
        written = min(plan.write_tokens, request_tokens - cached)
        # cold: nothing read, so a request writes its whole cacheable prefix (hit + write)
        written_cold = min(plan.hit_tokens + plan.write_tokens, request_tokens)
        out = model.output_tokens(cfg, purpose)
        # a truncated attempt is one more paid attempt before the answer: the same input (reading
        # what its first attempt wrote), its whole cap of output (`OutputModel.truncation`)
        rate, cut_out = model.truncation(cfg, request)
        retried = weight * rate
        reread = min(cached + written, request_tokens)
        v.calls += weight + retried
        v.calls_by_purpose[purpose] = v.calls_by_purpose.get(purpose, 0.0) + weight + retried
        v.input_tokens += (weight + retried) * request_tokens
        v.cached_input_tokens += weight * cached + retried * reread
        v.cache_write_tokens += weight * written
        v.output_tokens += weight * out + retried * cut_out
        if cfg.adapter == "offline":
            return
        for mode, price_of in modes.items():
            price = price_of(cfg)
            if price is not None:  # `Price.bill`: the rule the adapters price each reply by
                usd, write_usd = price.bill(BilledTokens(request_tokens, cached, out, cache_write_tokens=written))
                cold = price.bill(BilledTokens(request_tokens, 0, out, cache_write_tokens=written_cold)).usd
                again = price.bill(BilledTokens(request_tokens, reread, cut_out)).usd if retried else 0.0
                again_cold = price.bill(BilledTokens(request_tokens, 0, cut_out)).usd if retried else 0.0
                v.cost_usd[mode] = v.cost_usd.get(mode, 0.0) + weight * usd + retried * again
                v.cache_write_usd[mode] = v.cache_write_usd.get(mode, 0.0) + weight * write_usd
                v.cost_usd_cold[mode] = v.cost_usd_cold.get(mode, 0.0) + weight * cold + retried * again_cold

    for sub in submissions:
        task = tasks.get(sub.task_id)
        if task is None:
            continue
        est.submissions += 1
        plan = plan_submission(task, sub, config, grounding=not fast)  # the one grading makes
        if isinstance(plan, TooLong):
            est.too_long += 1
            continue
        replay = _Replay(cpt)
        for cfg in config.judges:
            if sub.repeat and sub.repeat_judges and cfg.name not in sub.repeat_judges:
                continue  # a judge the repeat holds: answered from the original's stored calls, unpaid
            requests = [p.request_for(cfg, cpt, sub.repeat) for _, p in plan.rubric]
            cached = [CachePlan(0, ())] * len(requests)
            if cfg.name in batched:  # the vendor answers a batch's requests one after another
                phases = [[i] for i in range(len(requests))]
            elif cfg.warm_prompt_cache and cfg.prompt_caching:
                groups, direct = prefix_groups(requests, cpt)
                phases = [direct + [g[0] for g in groups], [i for g in groups for i in g[1:]]]
            else:
                phases = [list(range(len(requests)))]
            for phase in phases:
                for i, found in zip(phase, replay.burst(cfg, [requests[i] for i in phase]), strict=True):
                    cached[i] = found
            for r, hit in zip(requests, cached, strict=True):
                add(sub, cfg, r, r.estimated_input_tokens, hit, 1.0)
        if audit_weight > 0:
            auditor = config.auditor
            stage1 = plan.detect.request_for(auditor, cpt, sub.repeat)
            [found] = replay.burst(auditor, [stage1])
            add(sub, auditor, stage1, stage1.estimated_input_tokens, found, audit_weight)
            # Stage 2 reads Stage 1's prefix (the audit's sources, the same fences), then its flags:
            # rendered without them, their size is the assumed `verify_flag_tokens`
            stage2 = verify_prompt(task, sub, [], plan.boundary).request_for(auditor, cpt, sub.repeat)
            extra = int(model.verify_flag_tokens * cpt)
            [found] = replay.burst(auditor, [stage2], extra_chars=extra)
            add(sub, auditor, stage2, stage2.estimated_input_tokens + int(model.verify_flag_tokens), found,
                audit_weight * model.verify_share)

    est.vendors = list(acc.values())
    return est


def combine(parts: Sequence[Estimate]) -> Estimate:
    """The sum of `estimate_part`s of one configuration over disjoint submissions (not finished)."""
    if not parts:
        raise ValueError("nothing to combine")
    first = parts[0]
    total = first.model_copy(update={"submissions": 0, "too_long": 0, "vendors": [], "batch_wall_time": None})
    sums: dict[str, VendorEstimate] = {}
    for part in parts:
        total.submissions += part.submissions
        total.too_long += part.too_long
        for v in part.vendors:
            into = sums.setdefault(v.vendor, VendorEstimate(vendor=v.vendor, model=v.model))
            into.calls += v.calls
            into.input_tokens += v.input_tokens
            into.cached_input_tokens += v.cached_input_tokens
            into.cache_write_tokens += v.cache_write_tokens
            into.output_tokens += v.output_tokens
            for field, add in ((into.cost_usd, v.cost_usd), (into.cost_usd_cold, v.cost_usd_cold),
                               (into.calls_by_purpose, v.calls_by_purpose), (into.cache_write_usd, v.cache_write_usd)):
                for key, value in add.items():
                    field[key] = field.get(key, 0.0) + value
    total.vendors = list(sums.values())
    return total


def finish(
    est: Estimate, config: TribunalConfig, *, in_flight: int | None = None, batch_completion_s: float | None = None
) -> Estimate:
    """Add the wall times to summed counts: the rate limits' lower bound online, the rounds of
    batches in batch mode (`estimate` explains `in_flight` and `batch_completion_s`)."""
    acc = {v.vendor: v for v in est.vendors}
    batched = _batched(config)
    for cfg in config.vendors():
        v = acc[cfg.name]
        if cfg.name in batched:
            v.min_wall_s = None  # batches are not bound by the rate limits (BatchWallTime)
        elif cfg.adapter != "offline" and v.calls:
            per_s_requests = BUDGET_SHARE * cfg.limits.requests_per_minute / 60
            per_s_tokens = BUDGET_SHARE * cfg.limits.tokens_per_minute / 60
            v.min_wall_s = max(v.calls / per_s_requests, (v.input_tokens + v.output_tokens) / per_s_tokens)
    if batched:
        stages = [p for p in ("rubric", "detect", "verify")
                  if any(acc[name].calls_by_purpose.get(p, 0.0) > 0 for name in batched)]
        graded = est.submissions - est.too_long
        est.batch_wall_time = BatchWallTime(
            stages=stages, in_flight=in_flight, waves=max(1, math.ceil(graded / in_flight)) if in_flight else 1,
            flush_interval_s=config.batch.flush_interval_s, poll_interval_s=config.batch.poll_interval_s,
            completion_s=batch_completion_s,
        )
    return est


def render_table(est: Estimate) -> list[list[str]]:
    """Rows for the CLI table: one per vendor, then the total. Cost columns per pricing mode; in batch
    mode each is followed by its cold bound, and there is no wall time column (`batch_summary`)."""
    modes = list(est.cost_usd)
    batch = est.batch_wall_time is not None

    def money(expected: dict[str, float], cold: dict[str, float]) -> list[str]:
        out = []
        for m in modes:
            out.append(f"${expected.get(m, 0.0):,.2f}")
            if batch:
                out.append(f"${cold.get(m, 0.0):,.2f}")
        return out

    def wall(seconds: float | None) -> list[str]:
        return [] if batch else [_duration(seconds or 0.0)]

    rows = []
    for v in est.vendors:
        share = v.cached_input_tokens / v.input_tokens if v.input_tokens else 0.0
        rows.append([
            v.vendor, v.model, f"{v.calls:,.0f}", f"{v.input_tokens:,.0f}", f"{share:.1%}", f"{v.output_tokens:,.0f}",
            *money(v.cost_usd, v.cost_usd_cold), *wall(v.min_wall_s),
        ])
    total_in = sum(v.input_tokens for v in est.vendors)
    rows.append([
        "total", "", f"{sum(v.calls for v in est.vendors):,.0f}", f"{total_in:,.0f}", f"{est.cached_share:.1%}",
        f"{sum(v.output_tokens for v in est.vendors):,.0f}", *money(est.cost_usd, est.cost_usd_cold),
        *wall(est.min_wall_s),
    ])
    return rows


def batch_summary(est: Estimate) -> list[str]:
    """What the batch columns mean and how long the batches take (nothing online)."""
    w = est.batch_wall_time
    if w is None:
        return []
    modes = " / ".join(f"USD {m}" for m in est.cost_usd)
    lines = [
        f"{modes}: expected, each batch's requests answered one after another (a request reads the prefix an "
        "earlier one wrote); cold: no cache hit at all, the upper bound (the vendors cache inside a batch best effort)",
    ]
    expected = f"expected {_duration(w.expected_s)}" if w.expected_s is not None else "no expected time published"
    group = ("every submission in flight at once (a sweep grades --shard-size x --max-in-flight at once; each "
             "further group repeats the rounds)") if w.in_flight is None else f"{w.in_flight:,} submissions at once"
    lines.append(
        f"batch wall time: at most {_duration(w.upper_bound_s)}, {expected}: {w.rounds} round(s) of batches one "
        f"after another ({', '.join(w.stages)}"
        + (f"; {w.waves} groups" if w.waves > 1 else "")
        + f"), each ending within the vendors' {_duration(w.window_s)} window; {group}; rate limits do not bound batches"
    )
    return lines


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def ceil_usd(value: float) -> float:
    """Round a dollar amount up to the cent (what an operator would set as a cap)."""
    return math.ceil(value * 100) / 100
