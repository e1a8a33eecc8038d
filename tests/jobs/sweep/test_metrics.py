"""A long sweep can be watched from outside: its Ray metrics (`jobs.sweep.metrics`) are on the node's
Prometheus endpoint while it runs, each documented, with its tags and plausible values.

The sweep is held mid-way on purpose: two submissions of different tasks, the emulators answer the
first at once and hold every request of the second (its memo carries a marker) until a scrape of
the node's metrics endpoint shows every documented metric. So the scrape sees a sweep that is
really running — one submission done, one with calls on the wire — and the sweep then finishes
normally. The first OpenAI request is answered 429, so the 429 counter has something to count.
"""

from __future__ import annotations

import asyncio
import math
import re
import shutil
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from doubles.emulators import EmulatedRequest, EmulatorConfig, OfflineResponder, RateLimited, start_in_thread
from doubles.emulators.responders import Answer
from evalcore.config.models import VendorMode
from jobs.sweep.metrics import (
    ATTEMPTS,
    BUDGET_USE,
    CALLS,
    CAP_BOUND,
    COST,
    ESTIMATED,
    ETA,
    IN_FLIGHT,
    IN_FLIGHT_CAP,
    LATENCY,
    RATE_LIMITED,
    SPECS,
    SPENT,
    SUBMISSIONS_DONE,
    SUBMISSIONS_TOTAL,
    THROUGHPUT,
    TOKENS,
    MetricSpec,
    eta_s,
)
from tests.jobs.conftest import SAMPLE, emulated_config
from tests.ray_start import PROGRESS_DEADLINE_S

DOC = Path(__file__).resolve().parents[3] / "docs" / "OPERATIONS.md"
MARKER = "METRICS-TEST-HOLD-THIS-SUBMISSION"
RUN = "metrics-watch"
SCRAPE_DEADLINE_S = PROGRESS_DEADLINE_S
"""Ray exports every 10 s and budget use needs a 10 s window: seconds normally, minutes when loaded
(the scrape ends as soon as every metric is shown)."""

Sample = tuple[str, dict[str, str], float]


# --------------------------------------------------------------------------------------------
# Without Ray
# --------------------------------------------------------------------------------------------


def _doc_section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## Watching a long sweep")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_every_metric_is_documented_with_its_type_and_tags_in_operations() -> None:
    section = _doc_section()
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(tribunal_\w+)` \|.*$", section, re.M)}
    assert set(rows) == {s.name for s in SPECS}, "the table lists exactly the metrics jobs/sweep/metrics.py defines"
    for spec in SPECS:
        cells = [c.strip() for c in rows[spec.name].strip("|").split("|")]
        assert cells[1] == spec.kind, spec.name
        assert cells[2] == ", ".join(f"`{t}`" for t in spec.tags), spec.name


def test_eta_is_the_time_left_at_the_attempts_average_rate_and_unknown_before_one_is_graded() -> None:
    assert eta_s(total=100, done=40, graded=30, elapsed_s=60.0) == pytest.approx(120.0)  # 60 left at 0.5/s
    assert eta_s(total=100, done=10, graded=0, elapsed_s=60.0) is None  # only skipped ones: no rate yet
    assert eta_s(total=10, done=10, graded=10, elapsed_s=5.0) == 0.0


# --------------------------------------------------------------------------------------------
# A held sweep, scraped
# --------------------------------------------------------------------------------------------


class HoldingResponder:
    """The offline heuristics' answers; a request carrying `MARKER` waits until `release()`."""

    def __init__(self) -> None:
        self.inner = OfflineResponder()
        self.held = 0
        self._lock = threading.Lock()
        self._released = False
        self._events: dict[asyncio.AbstractEventLoop, asyncio.Event] = {}

    async def __call__(self, request: EmulatedRequest) -> Answer:
        if MARKER in request.user:
            loop = asyncio.get_running_loop()
            with self._lock:
                event = self._events.setdefault(loop, asyncio.Event())
                if self._released:
                    event.set()
                self.held += 1
            await event.wait()
        return self.inner(request)

    def release(self) -> None:
        """From any thread: every held request is answered, and none is held from now on."""
        with self._lock:
            self._released = True
            for loop, event in self._events.items():
                loop.call_soon_threadsafe(event.set)


def _two_tasks(root: Path) -> tuple[Path, Path]:
    """Two of the sample's tasks (the benchmark) and one submission of each: one answered at once
    (msa-renewal), one held (change-of-control-consents). Different tasks: no shared prompt prefix,
    so nothing of the first waits on the second's cache warming."""
    bench, subs = root / "bench", root / "submissions"
    for area, task in (("commercial-contracts", "msa-renewal"), ("corporate-ma", "change-of-control-consents")):
        shutil.copytree(SAMPLE / "tasks" / area / task, bench / "tasks" / area / task)
        shutil.copytree(SAMPLE / "submissions" / "gpt-strong" / area / task, subs / "m" / area / task)
    held = subs / "m" / "corporate-ma" / "change-of-control-consents" / "memo.md"
    held.write_text(f"{MARKER}\n\n{held.read_text(encoding='utf-8')}", encoding="utf-8")
    return bench, subs


def _metrics_url() -> str:
    """This node's Prometheus endpoint: Ray's metrics agent, on the port Ray chose at start."""
    import ray

    port = next(n["MetricsExportPort"] for n in ray.nodes() if n["Alive"])
    return f"http://127.0.0.1:{port}/metrics"


def _scrape(url: str) -> list[Sample]:
    """This run's samples on the endpoint (an agent not answering yet: none)."""
    from prometheus_client.parser import text_string_to_metric_families

    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode("utf-8")
    except OSError:
        return []
    return [(s.name, dict(s.labels), float(s.value))
            for family in text_string_to_metric_families(text) if "tribunal_" in family.name
            for s in family.samples if s.labels.get("run") == RUN]


def _values(samples: list[Sample], spec: MetricSpec, suffix: str = "", **labels: str) -> list[float]:
    name = spec.exported + suffix
    return [v for n, lab, v in samples if n == name and all(lab.get(k) == x for k, x in labels.items())]


def _missing(samples: list[Sample]) -> list[str]:
    """What the scrape does not show yet: every documented metric with its tags, values plausible
    for a running sweep with one submission done and one on the wire."""
    problems = []
    for spec in SPECS:
        name = spec.exported + ("_count" if spec.kind == "histogram" else "")
        found = [lab for n, lab, _ in samples if n == name]
        if not found:
            problems.append(f"{name}: absent")
        elif not all(set(spec.tags) <= set(lab) for lab in found):
            problems.append(f"{name}: a series lacks one of the tags {spec.tags}")
    checks: list[tuple[str, Callable[[], bool]]] = [
        ("paid calls > 0, rubric and preflight among the purposes",
         lambda: sum(_values(samples, CALLS, outcome="paid")) > 0
         and {"rubric", "preflight"} <= {lab["purpose"] for n, lab, _ in samples if n == CALLS.exported}),
        ("every entry's calls under an account that names it",
         lambda: {(lab["vendor"], lab["vendor"] in lab["account"].split("+"))
                  for n, lab, _ in samples if n == CALLS.exported}
         == {(v, True) for v in ("openai", "anthropic", "xai", "auditor")}),
        ("attempts > 0", lambda: sum(_values(samples, ATTEMPTS)) > 0),
        ("the scripted 429 counted", lambda: sum(_values(samples, RATE_LIMITED)) >= 1),
        ("cost > 0", lambda: sum(_values(samples, COST)) > 0),
        ("input and output tokens > 0",
         lambda: sum(_values(samples, TOKENS, kind="input")) > 0 and sum(_values(samples, TOKENS, kind="output")) > 0),
        ("latencies observed", lambda: sum(_values(samples, LATENCY, "_count")) > 0),
        ("calls on the wire (the held submission)", lambda: max(_values(samples, IN_FLIGHT), default=0) > 0),
        ("in-flight caps >= 1", lambda: min(_values(samples, IN_FLIGHT_CAP), default=0) >= 1),
        ("cap-bound is 0 or 1", lambda: set(_values(samples, CAP_BOUND)) <= {0.0, 1.0}),
        ("budget use for requests and tokens, >= 0",
         lambda: {lab["limit"] for n, lab, _ in samples if n == BUDGET_USE.exported} == {"requests", "tokens"}
         and all(v >= 0 and math.isfinite(v) for v in _values(samples, BUDGET_USE))),
        ("2 submissions in all", lambda: _values(samples, SUBMISSIONS_TOTAL) == [2.0]),
        ("1 done (the other held)", lambda: _values(samples, SUBMISSIONS_DONE) == [1.0]),
        ("spent > 0", lambda: sum(_values(samples, SPENT)) > 0),
        ("an estimate > 0", lambda: sum(_values(samples, ESTIMATED)) > 0),
        ("calls/s of every entry, >= 0",
         lambda: {lab["vendor"] for n, lab, _ in samples if n == THROUGHPUT.exported}
         == {"openai", "anthropic", "xai", "auditor"} and min(_values(samples, THROUGHPUT)) >= 0),
        ("an ETA > 0 (one left)", lambda: len(_values(samples, ETA)) == 1 and _values(samples, ETA)[0] > 0),
    ]
    for what, ok in checks:
        try:
            if not ok():
                problems.append(what)
        except (KeyError, ValueError):  # a series without a tag, or none yet
            problems.append(what)
    return problems


class Watcher(threading.Thread):
    """Scrapes the endpoint until everything is shown (or the deadline), then releases the held calls."""

    def __init__(self, url: str, responder: HoldingResponder) -> None:
        super().__init__(daemon=True)
        self.url, self.responder = url, responder
        self.samples: list[Sample] = []
        self.scrapes = 0
        self.stop = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + SCRAPE_DEADLINE_S
        try:
            while not self.stop.is_set():
                self.samples = _scrape(self.url)
                self.scrapes += 1
                if not _missing(self.samples) or time.monotonic() > deadline:
                    return
                self.stop.wait(0.5)  # the poll's interval (the deadline above ends it)
        finally:
            self.responder.release()


@pytest.mark.ray
def test_a_running_sweep_shows_every_documented_metric_with_its_tags_on_the_nodes_prometheus_endpoint(
    ray_local, tmp_path
) -> None:
    from jobs.sweep.driver import run_sweep
    from jobs.sweep.options import SweepOptions

    responder = HoldingResponder()
    configs = {"openai": EmulatorConfig(script=[RateLimited(retry_after=0.05)]),
               "anthropic": EmulatorConfig(), "xai": EmulatorConfig()}
    with start_in_thread(configs, responder=responder) as emus:
        watcher = Watcher(_metrics_url(), responder)
        watcher.start()
        try:
            bench, subs = _two_tasks(tmp_path)
            opts = SweepOptions(
                benchmark=str(bench), submissions=str(subs), output=str(tmp_path / "runs"),
                config=emulated_config(emus.endpoints), vendors=VendorMode.EMULATED, run_id=RUN, progress=False,
                shard_size=1, max_in_flight=2,
            )
            summary = run_sweep(opts)
        finally:
            watcher.stop.set()
            responder.release()
            watcher.join()
    assert not _missing(watcher.samples), (_missing(watcher.samples), watcher.scrapes)
    assert responder.held > 0, "the second submission's calls were held while the endpoint was read"
    assert summary.complete == 2 and summary.rate_limited >= 1  # and the sweep then finished normally


def test_a_coalesced_calls_replies_are_counted_once_per_purpose_for_the_statistics_and_the_metrics() -> None:
    from evalcore.errors import ErrorKind, VendorError
    from evalcore.schema import RubricAnswer
    from evalcore.vendors.protocol import JudgeReply, JudgeRequest, Usage
    from jobs.sweep.metrics import tally

    def request(purpose: str) -> JudgeRequest:
        return JudgeRequest(purpose=purpose, request_hash="h", system_prompt="s", shared_prefix="p",  # type: ignore[arg-type]
                            varying_suffix="v", schema_name="RubricAnswer")

    def reply(reused_from: str | None = None) -> JudgeReply[RubricAnswer]:
        return JudgeReply(output=RubricAnswer(verdict="pass", reasoning="r"), cost_usd=0.5, attempts=2, rate_limited=1,
                          usage=Usage(input_tokens=10, output_tokens=3), started_at=1.0, ended_at=4.0, vendor="v",
                          model="m", reused_from=reused_from)

    failed = VendorError("v", "m", ErrorKind.TIMEOUT, "slow", attempts=3, rate_limited=2)
    tallies = tally([request("rubric"), request("rubric"), request("rubric"), request("detect")],
                    [reply(), reply("run-old"), failed, reply()])
    rubric, detect = tallies["rubric"], tallies["detect"]
    assert (rubric.paid, rubric.reused, rubric.failed) == (1, 1, 1)
    assert (rubric.attempts, rubric.rate_limited) == (2 + 3, 1 + 2)  # a reused answer made no attempt
    assert (rubric.cost, rubric.input, rubric.output, rubric.latencies) == (0.5, 10, 3, [3.0])
    assert (detect.paid, detect.reused, detect.failed, detect.latencies) == (1, 0, 0, [3.0])
