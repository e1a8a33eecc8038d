"""The sweep's Ray metrics, for an operator watching a long sweep: every name, type and tag is here.

Why Ray metrics (`ray.util.metrics`): a sweep runs for hours on a cluster, and its live progress
line is only on the driver's terminal. Recorded as Ray metrics, the same numbers reach Ray's
metrics agent on every node, which serves them as Prometheus text on the node's metrics export
port (`/metrics`; Ray's dashboard and a Prometheus scrape read it). Recording costs no Ray call:
each process keeps its values and Ray's core worker sends them to its node's agent on its own
(every `metrics_report_interval_ms`, 10 s by default).

Where they are recorded:

* **`VendorMetrics`, in each `VendorActor`** (`jobs.sweep.actors`): the counters once per coalesced
  call (`complete_many`), summed over its requests per purpose — a few records per Ray call, never
  a Ray call per record; the latency histogram once per paid call. The gauges (in flight, cap,
  budget use) at each `stats` call, which the driver makes about once a second while shards are in
  flight (`jobs.sweep.shard_window.InFlight.finished` waits at most 1 s).
* **`SweepMetrics`, in the driver** (`jobs.sweep.driver`): submissions done/total, spend against the
  estimate, calls per second per vendor (the figures of the progress line, `jobs.display.progress`), ETA —
  at start and each time the driver collects finished shards (about once a second).

Two properties of Ray 2.60's export shape this (measured): a gauge that is not recorded again is
dropped by the agent two export intervals (20 s) after its last report, so gauges are recorded
again at every tick even when unchanged; and a counter is exported under `ray_<name>_total`
(`SPECS[i].exported` is the name a scrape shows). Counters keep their last value after their
actor is gone, but what an actor recorded in the last export interval before the sweep stops it
(`jobs.sweep.startup.stop_actors` kills it) may never be exported: the sweep's summary has the exact
totals. The histogram's `_sum` is approximated by Ray's agent from bucket midpoints.

The documentation (docs/OPERATIONS.md, "Watching a long sweep") lists `SPECS`; a test checks
that every name there is documented and exported (tests/jobs/sweep/test_metrics.py).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ray.util.metrics import Counter, Gauge, Histogram

from evalcore.call_accounting import is_reused
from evalcore.errors import VendorError
from evalcore.vendors.budget import RateBudget
from evalcore.vendors.protocol import JudgeReply, JudgeRequest

Kind = Literal["counter", "gauge", "histogram"]

VENDOR_TAGS = ("run", "vendor", "account")
"""Every vendor actor metric: the run, the entry (`openai`, `auditor`, ...) and its account (the
names of the entries on it joined by `+`: `openai+auditor` by default)."""

LATENCY_BUCKETS_S = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)
"""Judges answer in 1-60 s; a call with retries and backoff can take minutes."""

BUDGET_WINDOW_S = 10.0
"""Budget use is the rate over at least this long (one export interval): shorter would be noise."""


@dataclass(frozen=True)
class MetricSpec:
    """One metric: its name (as recorded), type, tags and what it means to an operator."""

    name: str
    kind: Kind
    tags: tuple[str, ...]
    meaning: str

    @property
    def exported(self) -> str:
        """The name a Prometheus scrape of Ray's metrics agent shows (Ray adds `ray_`; a counter, `_total`)."""
        return f"ray_{self.name}" + ("_total" if self.kind == "counter" else "")


CALLS = MetricSpec(
    "tribunal_vendor_calls", "counter", (*VENDOR_TAGS, "purpose", "outcome"),
    "Judge calls finished (`outcome`: paid, reused from a stored run, failed after retries); "
    "`purpose`: rubric, detect, verify, preflight. Its rate is the throughput.",
)
ATTEMPTS = MetricSpec(
    "tribunal_vendor_attempts", "counter", (*VENDOR_TAGS, "purpose"),
    "HTTP/gRPC attempts sent by paid and failed calls (retries included).",
)
RATE_LIMITED = MetricSpec(
    "tribunal_vendor_rate_limited", "counter", (*VENDOR_TAGS, "purpose"),
    "429 / RESOURCE_EXHAUSTED answers seen by those attempts (absent until the first one).",
)
COST = MetricSpec(
    "tribunal_vendor_cost_usd", "counter", (*VENDOR_TAGS, "purpose"),
    "USD the paid calls cost, as the sweep's summary counts it (reused calls cost nothing).",
)
TOKENS = MetricSpec(
    "tribunal_vendor_tokens", "counter", (*VENDOR_TAGS, "purpose", "kind"),
    "Tokens of the paid calls (`kind`: input, output).",
)
LATENCY = MetricSpec(
    "tribunal_vendor_call_latency_s", "histogram", (*VENDOR_TAGS, "purpose"),
    f"Seconds from a paid call's first attempt to its answer, retries and backoff included "
    f"(buckets {', '.join(f'{b:g}' for b in LATENCY_BUCKETS_S)}).",
)
IN_FLIGHT = MetricSpec(
    "tribunal_vendor_in_flight", "gauge", VENDOR_TAGS,
    "Attempts on the wire now (`evalcore.vendors.in_flight`).",
)
IN_FLIGHT_CAP = MetricSpec(
    "tribunal_vendor_in_flight_cap", "gauge", VENDOR_TAGS,
    "The in-flight cap now (Little's law from the budget and the latency, at most `max_in_flight`).",
)
CAP_BOUND = MetricSpec(
    "tribunal_vendor_cap_bound", "gauge", VENDOR_TAGS,
    "1 while calls wait for a wire slot and none on the budget: the cap, not the rate budget, binds.",
)
BUDGET_USE = MetricSpec(
    "tribunal_vendor_budget_use", "gauge", ("run", "account", "limit"),
    f"Share of the actor's rate budget used over the last {BUDGET_WINDOW_S:g}+ s (`limit`: requests, "
    "tokens; 1 = at the limit after the safety margin); one series per actor of the account.",
)
SUBMISSIONS_TOTAL = MetricSpec(
    "tribunal_sweep_submissions", "gauge", ("run",),
    "Submissions in the sweep (done before or pending): the progress bar's total.",
)
SUBMISSIONS_DONE = MetricSpec(
    "tribunal_sweep_submissions_done", "gauge", ("run",),
    "Submissions finished: skipped as already done, or graded by this attempt.",
)
SPENT = MetricSpec(
    "tribunal_sweep_spent_usd", "gauge", ("run",),
    "USD this attempt has paid so far (all vendors, from their actors' statistics).",
)
ESTIMATED = MetricSpec(
    "tribunal_sweep_estimated_usd", "gauge", ("run",),
    "USD the pending submissions were estimated to cost when the attempt started (`tribunal estimate`).",
)
THROUGHPUT = MetricSpec(
    "tribunal_sweep_calls_per_s", "gauge", ("run", "vendor"),
    "Calls answered per second per entry since the driver's previous look (as the progress line shows).",
)
ETA = MetricSpec(
    "tribunal_sweep_eta_s", "gauge", ("run",),
    "Seconds left at this attempt's average rate so far (absent until a submission is graded).",
)

SPECS: tuple[MetricSpec, ...] = (
    CALLS, ATTEMPTS, RATE_LIMITED, COST, TOKENS, LATENCY, IN_FLIGHT, IN_FLIGHT_CAP, CAP_BOUND, BUDGET_USE,
    SUBMISSIONS_TOTAL, SUBMISSIONS_DONE, SPENT, ESTIMATED, THROUGHPUT, ETA,
)


@functools.cache
def _instrument(spec: MetricSpec) -> Any:
    """The Ray metric of `spec`, once per process (created where it is recorded: after Ray started)."""
    if spec.kind == "counter":
        return Counter(spec.name, spec.meaning, tag_keys=spec.tags)
    if spec.kind == "gauge":
        return Gauge(spec.name, spec.meaning, tag_keys=spec.tags)
    return Histogram(spec.name, spec.meaning, boundaries=list(LATENCY_BUCKETS_S), tag_keys=spec.tags)


def _inc(spec: MetricSpec, value: float, tags: dict[str, str]) -> None:
    if value > 0:  # Ray refuses a zero increment; an absent series reads as zero
        _instrument(spec).inc(value, tags)


def _set(spec: MetricSpec, value: float, tags: dict[str, str]) -> None:
    _instrument(spec).set(value, tags)


class CallTally:
    """What the replies of one coalesced call add up to, for one purpose: the one place a reply is
    counted as paid, reused or failed, for the actor's statistics (`VendorActor.stats`) and its Ray
    metrics (`VendorMetrics.calls`) alike."""

    __slots__ = ("attempts", "cost", "failed", "input", "latencies", "output", "paid", "rate_limited", "reused")

    def __init__(self) -> None:
        self.paid = self.reused = self.failed = self.attempts = self.rate_limited = 0
        self.cost = 0.0
        self.input = self.output = 0
        self.latencies: list[float] = []

    def add(self, reply: JudgeReply[Any] | VendorError) -> None:
        """Count one reply: a failure's attempts and 429s; a reused answer as free; a paid one's
        attempts, 429s, cost, tokens and latency."""
        if isinstance(reply, VendorError):
            self.failed += 1
            self.attempts += reply.attempts
            self.rate_limited += reply.rate_limited
        elif is_reused(reply.reused_from):
            self.reused += 1
        else:
            self.paid += 1
            self.attempts += reply.attempts
            self.rate_limited += reply.rate_limited
            self.cost += reply.cost_usd
            self.input += reply.usage.input_tokens
            self.output += reply.usage.output_tokens
            self.latencies.append(max(reply.ended_at - reply.started_at, 0.0))


def tally(
    requests: Sequence[JudgeRequest], results: Sequence[JudgeReply[Any] | VendorError]
) -> dict[str, CallTally]:
    """One coalesced call's replies (in order, failures in place) counted per purpose of their requests."""
    per: dict[str, CallTally] = {}
    for request, reply in zip(requests, results, strict=True):
        t = per.get(request.purpose)
        if t is None:
            t = per[request.purpose] = CallTally()
        t.add(reply)
    return per


class VendorMetrics:
    """A vendor actor's metrics (one per `VendorActor`; the actor's account serves `entries`)."""

    def __init__(self, run_id: str, entries: Sequence[str], clock: Callable[[], float] = time.monotonic) -> None:
        self.run = run_id
        self.account = "+".join(entries)
        self._clock = clock
        self._mark: tuple[float, float, float] | None = None  # (time, attempts granted, tokens) at the window's start
        self._use: dict[str, float] = {}

    def calls(self, entry: str, tallies: Mapping[str, CallTally]) -> None:
        """Record one coalesced call (`tally`: per purpose): a few records per purpose, plus one
        latency per paid call (what Ray's API allows; each record is ~5-20 us)."""
        tags = {"run": self.run, "vendor": entry, "account": self.account}
        for purpose, p in tallies.items():
            t = {**tags, "purpose": purpose}
            latency = _instrument(LATENCY)
            for seconds in p.latencies:  # ~5-20 us each: per paid call, at most the vendor's rate
                latency.observe(seconds, t)
            for outcome, n in (("paid", p.paid), ("reused", p.reused), ("failed", p.failed)):
                _inc(CALLS, n, {**t, "outcome": outcome})
            _inc(ATTEMPTS, p.attempts, t)
            _inc(RATE_LIMITED, p.rate_limited, t)
            _inc(COST, p.cost, t)
            _inc(TOKENS, p.input, {**t, "kind": "input"})
            _inc(TOKENS, p.output, {**t, "kind": "output"})

    def wire(self, entry: str, wire: Mapping[str, float]) -> None:
        """An entry's wire slots now (`WireStats` snapshot; nothing for a vendor without one)."""
        tags = {"run": self.run, "vendor": entry, "account": self.account}
        for spec, key in ((IN_FLIGHT, "in_flight"), (IN_FLIGHT_CAP, "in_flight_cap"), (CAP_BOUND, "cap_bound")):
            if key in wire:
                _set(spec, float(wire[key]), tags)

    def budget(self, budget: RateBudget | None, tokens: float) -> None:
        """The account's budget use (this actor's share of it), over windows of `BUDGET_WINDOW_S`.

        `tokens`: input + output tokens paid so far on the account (this actor's entries). Recorded
        again between windows so the gauge stays exported; nothing without a budget (offline)."""
        if budget is None:
            return
        now, granted = self._clock(), float(budget.stats.granted)
        if self._mark is None:
            self._mark = (now, granted, tokens)
        elapsed = now - self._mark[0]
        if elapsed >= BUDGET_WINDOW_S:
            per_minute = 60.0 / elapsed
            self._use = {
                "requests": (granted - self._mark[1]) * per_minute / (budget.requests_per_minute * budget.safety),
                "tokens": (tokens - self._mark[2]) * per_minute / (budget.tokens_per_minute * budget.safety),
            }
            self._mark = (now, granted, tokens)
        for limit, use in self._use.items():
            _set(BUDGET_USE, use, {"run": self.run, "account": self.account, "limit": limit})


def eta_s(total: int, done: int, graded: int, elapsed_s: float) -> float | None:
    """Seconds left at this attempt's average rate (`graded` in `elapsed_s`); None before any is graded."""
    left = max(total - done, 0)
    if left == 0:
        return 0.0
    if graded <= 0 or elapsed_s <= 0:
        return None
    return left * elapsed_s / graded


class SweepMetrics:
    """The driver's metrics of one sweep attempt (`jobs.sweep.driver`)."""

    def __init__(self, run_id: str, estimated_usd: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.tags = {"run": run_id}
        self.estimated_usd = estimated_usd
        self._clock = clock
        self.started = clock()

    def record(
        self, *, total: int, done: int, graded: int, spent_usd: float, rates: Mapping[str, float] | None = None
    ) -> None:
        """Where the sweep is now; called at start and each time the driver collects finished shards."""
        _set(SUBMISSIONS_TOTAL, float(total), self.tags)
        _set(SUBMISSIONS_DONE, float(done), self.tags)
        _set(SPENT, spent_usd, self.tags)
        _set(ESTIMATED, self.estimated_usd, self.tags)
        for vendor, rate in (rates or {}).items():
            _set(THROUGHPUT, rate, {**self.tags, "vendor": vendor})
        eta = eta_s(total, done, graded, self._clock() - self.started)
        if eta is not None:
            _set(ETA, eta, self.tags)
