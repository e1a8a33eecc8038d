"""The sweep driver: stream submissions through the cluster, write shards, resume, show progress.

Shape of a run:
1. OCR the benchmark's scans as Ray tasks into the OCR cache next to the runs (`jobs.ocr`), then
   load the benchmark (tasks put once into the object store) and open the submission stream;
2. one `VendorActor` per vendor account, serving every entry on it (judges + auditor; the OpenAI
   judge and the auditor share one; N for an account one actor cannot carry,
   `jobs/vendor_pool.py`), a preflight call through each entry;
3. the stream is cut into fixed shards (by position, so a resumed run cuts the same shards);
   shards whose submissions are all done are skipped; the rest go to `grade_shard` tasks, at
   most `max_in_flight` at a time (memory stays flat in N), with each task's grounding index,
   built once per sweep on the task's first shard (`SourceIndexes`);
4. each `grade_shard` grades its submissions with `evalcore.grade_submission` (Stage A, then the
   audit decision, then Stage B) and writes its rows as one shard of every table;
5. the driver shows progress, and at the end writes `_SUCCESS.json`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import resource
import signal
import subprocess
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ray
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from evalcore.benchmark.instructions_only import audit_sources
from evalcore.benchmark.ocr import use_cache as use_ocr_cache
from evalcore.config.models import TribunalConfig, VendorMode
from evalcore.errors import TribunalError
from evalcore.grading.calls import total_cost
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.grounding import SourceIndex, index_sources, sharing_indexes
from evalcore.prompts import template_hashes
from evalcore.schema import Rejection, Submission, Task
from evalcore.storage import fs
from evalcore.storage.store import (
    RUN_RECORD,
    SUCCESS,
    BenchmarkRef,
    ModelRef,
    ResumeIndex,
    RunRecord,
    TaskRef,
    shard_name,
    valid_run_id,
    write_json,
    write_shard,
    write_table_file,
)
from evalcore.vendors.preflight import preflight, raise_if_failed, require_keys
from jobs import vendor_pool
from jobs.cost import CostWatch
from jobs.ocr import ocr_before_grading

if TYPE_CHECKING:
    from evalcore.benchmark.loader import BenchmarkLoad


@dataclass
class SweepOptions:
    """Everything `tribunal sweep` takes (the CLI maps flags onto this)."""

    benchmark: str
    submissions: str
    output: str
    config: TribunalConfig
    vendors: VendorMode = VendorMode.REAL
    run_id: str | None = None
    address: str = "local"
    reuse: list[str] = field(default_factory=list)
    shard_size: int = 8
    max_in_flight: int = 8
    progress: bool = True
    max_cost_usd: float | None = None
    detach: bool = False
    """Batch mode: submit what can be submitted, do not wait for batches; a later run collects."""

    def __post_init__(self) -> None:
        """The CLI validates these too; a library caller gets the same refusal, not a hang or an escape."""
        if self.shard_size < 1:
            raise TribunalError(f"shard_size: must be at least 1, got {self.shard_size}")
        if self.max_in_flight < 1:
            raise TribunalError(f"max_in_flight: must be at least 1, got {self.max_in_flight} (0 would wait forever)")
        if self.run_id is not None and not valid_run_id(self.run_id):
            raise TribunalError(f"run_id: {self.run_id!r} is not one folder name (letters, digits, . _ -)")


@dataclass
class SweepSummary:
    """What a sweep did: counts, cost and where the run lives."""

    run_id: str
    run_uri: str
    attempt: int = 1
    """Which pass over this run (1 = the first; a resume is the next): `_attempts/` keeps each one's summary."""
    started_at: float = 0.0
    submissions_total: int = 0
    skipped_done: int = 0
    graded: int = 0
    complete: int = 0
    incomplete: int = 0
    too_long: int = 0
    rejected: int = 0
    shards_written: int = 0
    paid_calls: int = 0
    reused_calls: int = 0
    rate_limited: int = 0
    cost_usd: float = 0.0
    batches_submitted: int = 0
    wall_s: float = 0.0
    driver_peak_rss_mb: float = 0.0
    interrupted: bool = False
    cancelled_shards: int = 0
    """Shards in flight cancelled by a second Ctrl-C (their submissions are graded by the next run)."""
    failed_shards: list[str] = field(default_factory=list)
    shards_by_node: dict[str, int] = field(default_factory=dict)
    rejections: list[str] = field(default_factory=list, metadata={"doc": "The first 100 as `file: reason`."})
    vendor_stats: dict[str, dict[str, float]] = field(default_factory=dict)
    estimated_cost_usd: float = 0.0
    max_cost_usd: float | None = None
    cost_capped: bool = False
    cost_message: str | None = None
    ocr: dict[str, Any] = field(default_factory=dict, metadata={"doc": "The OCR step before grading (jobs.ocr)."})
    source_indexes_built: int = 0
    """Grounding indexes of the tasks' sources built by this pass (one per task graded; `SourceIndexes`)."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-able view (for _SUCCESS.json and --json)."""
        return dict(self.__dict__)

    @property
    def done(self) -> int:
        """Submissions finished so far: skipped as already done, or graded by this sweep."""
        return self.skipped_done + self.graded

    def add_shard(self, shard: ShardResult) -> None:
        """Count a finished shard."""
        self.graded += shard.graded
        self.complete += shard.complete
        self.incomplete += shard.incomplete
        self.too_long += shard.too_long
        self.shards_written += 1
        self.shards_by_node[shard.node] = self.shards_by_node.get(shard.node, 0) + 1

    def add_failed_shard(self, submission_ids: Sequence[str], exc: BaseException) -> None:
        """A shard that failed after its retries: its submissions stay pending for the next run."""
        self.failed_shards.append(f"{', '.join(submission_ids)}: {type(exc).__name__}: {exc}"[:2000])

    def add_vendor_stats(self) -> None:
        """Totals of calls, 429s and cost over the vendors' final statistics."""
        for s in self.vendor_stats.values():
            self.paid_calls += int(s.get("paid_calls", 0))
            self.reused_calls += int(s.get("reused_calls", 0))
            self.rate_limited += int(s.get("rate_limited", 0))
            self.cost_usd += float(s.get("cost_usd", 0.0))
            self.batches_submitted += int(s.get("batch_batches_submitted", 0))


def code_version() -> str:
    """git describe of the checkout when available, else the package version."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
        if out.returncode == 0:
            return out.stdout.strip()
    except OSError:
        pass
    from evalcore import __version__

    return __version__


def estimate_submissions(uri: str, task_ids: set[str]) -> int:
    """A cheap count for the ETA, from one listing (folder) or the row count (manifest).

    Folder: distinct `<system>/<task id>` folders holding a file. Manifest: its rows. The stream
    itself is authoritative; this only sizes the progress bar.
    """
    try:
        if uri.lower().endswith(".jsonl"):
            return sum(1 for line in fs.read_bytes(uri).splitlines() if line.strip())
        if uri.lower().endswith(".parquet"):
            import pyarrow.parquet as pq

            filesystem, path = fs.resolve(uri)
            with filesystem.open_input_file(path) as fh:
                return int(pq.ParquetFile(fh).metadata.num_rows)
        found = set()
        for f in fs.list_files(uri):
            rel = fs.relative(f, uri).split("/")
            for cut in range(len(rel) - 1, 1, -1):
                if "/".join(rel[1:cut]) in task_ids:
                    found.add((rel[0], "/".join(rel[1:cut])))
                    break
        return len(found)
    except OSError:
        return 0


def config_fingerprint(config: TribunalConfig) -> str:
    """Hash of everything in the configuration that changes what is graded.

    Where a vendor is reached (endpoint, key variable) and how calls are scheduled (cache warming)
    are left out, so a run resumes across a
    moved endpoint; the vendor mode is recorded next to it in run.json and checked separately.
    """
    cfg = config.public_dict()
    cfg.pop("input_limits", None)  # which inputs are accepted, not how they are graded: raising one resumes
    for v in [*cfg["judges"], cfg["auditor"]]:
        v.pop("endpoint", None)
        v.pop("api_key_env", None)
        v.pop("warm_prompt_cache", None)  # scheduling only: the same requests, the same rows
        v.pop("actors", None)  # how many processes carry a vendor, not what it is asked
        v.pop("actor_calls_per_s", None)
    for timing in ("flush_interval_s", "poll_interval_s"):  # how often, not what, is asked
        cfg.get("batch", {}).pop(timing, None)
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()


def default_run_id(benchmark_hash: str, submissions: str, config: TribunalConfig) -> str:
    """Same command, same run id: re-running a sweep resumes it instead of starting over."""
    key = json.dumps([benchmark_hash, submissions, config_fingerprint(config)], sort_keys=True)
    return "run-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def check_resumable(run_uri: str, previous: RunRecord, opts: SweepOptions, benchmark_hash: str) -> None:
    """A run resumes only with the benchmark, configuration and vendor mode it was made with."""
    fix = "use another --run-id (and --reuse this run to pay only for what changed)"
    if previous.benchmark.content_hash != benchmark_hash:
        raise TribunalError(f"{run_uri}: this run was made from a different benchmark content; {fix}")
    if previous.vendors != opts.vendors:
        raise TribunalError(
            f"{run_uri}: this run was made with --vendors {previous.vendors}, not {opts.vendors}; {fix}"
        )
    if previous.config_fingerprint != config_fingerprint(opts.config):
        raise TribunalError(f"{run_uri}: this run was made with a different configuration; {fix}")


def check_reusable(reuse_uris: list[str], vendors: VendorMode) -> None:
    """`--reuse` serves stored answers as this run's: never emulated or offline ones in a real run."""
    for uri in reuse_uris:
        if not fs.exists(fs.join(uri, RUN_RECORD)):
            raise TribunalError(f"{uri}: --reuse names no run (no {RUN_RECORD} there)")
        mode = RunRecord.read(uri).vendors
        if vendors == VendorMode.REAL and mode != VendorMode.REAL:
            raise TribunalError(
                f"{uri}: made with --vendors {mode}; its answers cannot be reused in a run with real vendors"
            )


def resolve_run_uri(output: str, run: str) -> str:
    """A `--reuse` value may be a run id under the output folder or a full run URI."""
    if "://" in run or run.startswith("/") or run.startswith("."):
        return run
    return fs.join(output, run)


# ----------------------------------------------------------------------------------------------
# The unit of work on the cluster
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShardResult:
    """What one `grade_shard` task reports to the driver: counts and cost, never the rows.

    Frozen and small on purpose (it crosses the object store once per shard); add a field here,
    fill it in `of`, and read it in `SweepSummary.add_shard`.
    """

    name: str
    graded: int
    complete: int
    incomplete: int
    too_long: int
    cost_usd: float
    calls: int
    node: str

    @classmethod
    def of(cls, name: str, results: Sequence[GradeResult], node: str) -> ShardResult:
        """The summary of a shard's gradings."""
        statuses = [r.submission.status for r in results]
        calls = [c for r in results for c in r.calls]
        return cls(
            name=name,
            graded=len(results),
            complete=statuses.count("complete"),
            incomplete=statuses.count("incomplete"),
            too_long=statuses.count("too_long"),
            cost_usd=total_cost(calls),
            calls=len(calls),
            node=node,
        )

    def line(self) -> str:
        """One plain, parseable line (what the driver prints per shard without a live view)."""
        return (
            f"shard {self.name} graded={self.graded} complete={self.complete} incomplete={self.incomplete} "
            f"calls={self.calls} cost_usd={self.cost_usd:.4f}"
        )


@ray.remote(num_cpus=0.25, max_retries=2)
def build_source_index(task: Task) -> SourceIndex:
    """One task's grounding index (what every submission of the task is checked against)."""
    return index_sources(audit_sources(task))


class SourceIndexes:
    """The driver's references to each task's grounding index: built once, on the task's first shard.

    Why: a shard holds submissions in stream order (a system's tasks one after another), so one
    task's submissions fall in as many shards as there are systems; each worker building the index
    itself cost one build per submission at real size (0.15-0.5 s each, more than half of a
    zero-work sweep's CPU). The last `keep` tasks' indexes are kept in the object store; an older
    one is built again if a later shard needs it (a shard in flight holds its own references).
    """

    def __init__(self, task_refs: dict[str, Any], *, enabled: bool, keep: int = 256) -> None:
        self.task_refs = task_refs
        self.enabled = enabled
        self.keep = keep
        self.built = 0
        self._refs: OrderedDict[str, Any] = OrderedDict()

    def refs(self, task_ids: Iterable[str]) -> dict[str, Any]:
        """The index references for these tasks (none when grounding candidates are off)."""
        if not self.enabled:
            return {}
        out = {}
        for tid in dict.fromkeys(task_ids):
            ref = self._refs.get(tid)
            if ref is None:
                ref = build_source_index.remote(self.task_refs[tid])
                self.built += 1
            self._refs[tid] = ref
            self._refs.move_to_end(tid)
            out[tid] = ref
        while len(self._refs) > self.keep:
            self._refs.popitem(last=False)
        return out


@ray.remote(num_cpus=0.25, max_retries=2)
def grade_shard(
    run_uri: str,
    run_id: str,
    name: str,
    submissions: list[Submission],
    task_refs: dict[str, Any],
    index_refs: dict[str, Any],
    config_json: dict[str, Any],
    actors: dict[str, Any],
) -> ShardResult:
    """Grade a shard of submissions and write its rows; return a small summary (not the rows).

    `index_refs` are the tasks' grounding indexes, built once per sweep (`SourceIndexes`)."""
    config = TribunalConfig.model_validate(config_json)
    tasks: dict[str, Task] = {tid: ray.get(ref) for tid, ref in task_refs.items()}
    indexes = dict(zip(index_refs, ray.get(list(index_refs.values())), strict=True))
    by_name = {cfg.name: cfg for cfg in config.vendors()}
    vendors = {n: vendor_pool.pool_vendor(actors[n], by_name[n]) for n in by_name}

    async def run_all() -> list[GradeResult]:
        return await asyncio.gather(
            *(grade_submission(tasks[s.task_id], s, config, vendors, run_id=run_id) for s in submissions)
        )

    with sharing_indexes((audit_sources(tasks[tid]), index) for tid, index in indexes.items()):
        results = asyncio.run(run_all())
    write_shard(run_uri, name, {
        "submissions": [r.submission for r in results],
        "verdicts": [v for r in results for v in r.verdicts],
        "flags": [f for r in results for f in r.flags],
        "calls": [c for r in results for c in r.calls],
    })
    return ShardResult.of(name, results, ray.get_runtime_context().get_node_id())


# ----------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------


def stream_only(uri: str, tasks: dict[str, Task], excluded: set[str]) -> Iterator[Submission]:
    """The submissions of `uri` in the sweep's order, without the rejections."""
    from evalcore.submissions.loader import iter_submissions

    for item in iter_submissions(uri, tasks, excluded=excluded):
        if isinstance(item, Submission):
            yield item


def _shards(items: Iterable[Submission], size: int) -> Iterator[tuple[int, list[Submission]]]:
    batch: list[Submission] = []
    index = 0
    for s in items:
        batch.append(s)
        if len(batch) == size:
            yield index, batch
            index, batch = index + 1, []
    if batch:
        yield index, batch


def _env_for_workers() -> dict[str, str]:
    """Non-secret settings the workers need (S3 endpoint and region, the document cache).

    Keys are never put in the runtime_env: Ray records it in its job table, where the dashboard
    and state API show it. A local cluster inherits the driver's environment (keys included); a
    remote cluster gets keys from its own secrets (see cluster/README.md).
    """
    names = ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
             "AWS_EC2_METADATA_DISABLED", "TRIBUNAL_CACHE_DIR")
    return {n: os.environ[n] for n in names if n in os.environ}


def init_ray(address: str, env: dict[str, str], *, attempts: int = 3, **extra: Any) -> None:
    """Start or attach to Ray once per process (local, auto, or ray://host:port).

    A local start is retried: when two local Ray instances start at the same moment on one
    machine (a test and a demo, two CI steps) a raylet can lose its pre-selected port and never
    register, and Ray gives up after 30 s with "timed out during startup" (seen on this machine).
    """
    if ray.is_initialized():
        return
    kwargs: dict[str, Any] = {
        "log_to_driver": False,
        "logging_level": logging.ERROR,
        "runtime_env": {"env_vars": env},
        **extra,
    }
    if address != "local":
        ray.init(address=address, **kwargs)
        return
    for attempt in range(1, attempts + 1):
        try:
            ray.init(address="local", include_dashboard=False, **kwargs)
            return
        except Exception as exc:
            if "timed out during startup" not in str(exc) or attempt == attempts:
                raise
            logging.getLogger(__name__).warning("local Ray did not start (%s); retrying", exc)
            ray.shutdown()


def start_actors(
    config: TribunalConfig, run_id: str, stored_runs: list[str], ledger: Any = None, detach: bool = False
) -> dict[str, vendor_pool.VendorPool]:
    """The VendorActors of each vendor account, keyed by entry (one, or N for an account one actor
    cannot carry: `jobs/vendor_pool.py`), named per run so a driver restart finds them.

    In batch mode each actor also gets the batch settings: it queues its vendor's requests into
    batches journalled in the run folder (`stored_runs[0]`)."""
    return vendor_pool.start_pools(config, run_id, stored_runs, ledger, detach)


def preflight_through_actors(
    config: TribunalConfig, actors: dict[str, Any], run_uri: str, run_id: str, attempt: int
) -> None:
    """The library's preflight (`evalcore.vendors.preflight`), sent through each vendor's actor so
    it exercises the client, budget and retry policy the sweep will use; raises PreflightError
    naming vendor, model and cause.

    Its calls are paid like any other, so their rows go into the run's `calls` table (one file
    per attempt, `calls/preflight-<attempt>.parquet`, written even when the preflight fails):
    the summary's calls and cost then equal the tables'.
    """
    vendors = {cfg.name: vendor_pool.pool_vendor(actors[cfg.name], cfg) for cfg in config.vendors()}
    results = asyncio.run(preflight(config.vendors(), vendors=vendors, run_id=run_id))
    write_table_file(run_uri, "calls", f"preflight-{attempt:04d}", [r.call for r in results if r.call is not None])
    raise_if_failed(results)


ATTEMPTS = "_attempts"
"""Folder of the run holding one summary per attempt (`attempt-0001.json`, ...): a resumed run
adds its own instead of overwriting the summary of the run that did the work."""


def next_attempt(run_uri: str) -> int:
    """1 for a new run; one more than the attempts already recorded for a resumed one."""
    return len(fs.list_files(fs.join(run_uri, ATTEMPTS), suffix=".json")) + 1


def write_attempt_summary(summary: SweepSummary) -> None:
    """`_attempts/attempt-<n>.json`, for every attempt (finished, interrupted or with failed shards)."""
    write_json(fs.join(summary.run_uri, ATTEMPTS, f"attempt-{summary.attempt:04d}.json"), summary.as_dict())


def run_record(opts: SweepOptions, run_id: str, tasks: list[Task], benchmark_hash: str) -> RunRecord:
    """run.json: everything that produced the run, and nothing secret."""
    cfg = opts.config
    return RunRecord(
        run_id=run_id,
        created_at=time.time(),
        code_version=code_version(),
        vendors=opts.vendors,
        config_fingerprint=config_fingerprint(cfg),
        config=cfg,
        judges=[ModelRef(name=j.name, family=j.family, model=j.model, effort=j.reasoning_effort) for j in cfg.judges],
        auditor=ModelRef(name=cfg.auditor.name, model=cfg.auditor.model, effort=cfg.auditor.reasoning_effort),
        prompt_hashes=template_hashes(),
        benchmark=BenchmarkRef(
            uri=opts.benchmark,
            content_hash=benchmark_hash,
            tasks=[TaskRef(id=t.id, area=t.area, n_criteria=len(t.criteria)) for t in tasks],
        ),
        submissions_uri=opts.submissions,
        reuse=opts.reuse,
    )


class _Progress:
    """Live view: submissions done/total, calls/s and 429s per vendor, cost so far, ETA."""

    def __init__(self, console: Console, enabled: bool, total: int | None) -> None:
        self.enabled = enabled
        self.console = console
        self.progress = Progress(
            TextColumn("[bold]grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[detail]}"),
            console=console,
            transient=False,
            disable=not enabled,
        )
        self.task = self.progress.add_task("grading", total=total, detail="")
        self.last: dict[str, tuple[float, float]] = {}
        self.cost_text: Callable[[float], str] = lambda cost: f"${cost:,.2f}"

    def __enter__(self) -> _Progress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def update(self, done: int, stats: dict[str, dict[str, float]], cost: float) -> None:
        parts = []
        now = time.time()
        for name, s in stats.items():
            calls = s.get("paid_calls", 0) + s.get("reused_calls", 0) + s.get("failed_calls", 0)
            prev_t, prev_c = self.last.get(name, (now, calls))
            rate = (calls - prev_c) / (now - prev_t) if now > prev_t else 0.0
            self.last[name] = (now, calls)
            if "batch_batches_submitted" in s:  # batch mode: batches sent and still awaited
                parts.append(f"{name} batches={int(s['batch_batches_submitted'])} "
                             f"open={int(s.get('batch_watching', 0))} queued={int(s.get('batch_queued', 0))}")
                continue
            parts.append(f"{name} {rate:,.0f}/s 429s={int(s.get('rate_limited', 0))}")
        self.progress.update(self.task, completed=done, detail=f"{self.cost_text(cost)} | " + " | ".join(parts))


class Interrupt:
    """Ctrl-C as a context manager: while active, SIGINT asks the sweep to stop instead of killing it.

    The first Ctrl-C sets `requested`: no new shard is submitted and the ones in flight are
    flushed (their rows written), so nothing paid is lost. The previous handler is restored on
    exit. To react to further presses (e.g. cancel the shards in flight), override `on_interrupt`,
    which receives how many times Ctrl-C was pressed.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.presses = 0
        self._previous: Any = None

    @property
    def requested(self) -> bool:
        """Ctrl-C was pressed at least once."""
        return self.presses > 0

    @property
    def cancelled(self) -> bool:
        """Ctrl-C was pressed again: the shards in flight are cancelled, not flushed."""
        return self.presses > 1

    def on_interrupt(self, presses: int) -> None:
        """What a press does (called from the signal handler, in the driver's main thread).

        First press: finish the shards in flight (nothing paid is lost). Second press: raise
        KeyboardInterrupt wherever the driver is waiting (a shard, the preflight, a listing), so it
        stops within a second; `run_sweep` then cancels the shards in flight, whose submissions
        have no rows yet and are graded by the next run.
        """
        if presses == 1:
            self.console.print(
                "[yellow]Ctrl-C: no new shards; flushing the ones in flight... "
                "(press Ctrl-C again to cancel them now: their submissions are graded by the next run)[/]"
            )
        else:
            self.console.print("[yellow]Ctrl-C again: cancelling the shards in flight...[/]")
            raise KeyboardInterrupt

    def _handle(self, signum: int, frame: object) -> None:
        self.presses += 1
        self.on_interrupt(self.presses)

    def __enter__(self) -> Interrupt:
        self._previous = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._previous)


class InFlight:
    """The window of shards on the cluster: at most `limit` at once, so driver memory stays flat in N.

    Holds each shard's Ray reference with the submission ids it grades (for a failure report).
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"the in-flight window needs at least one slot, got {limit}")
        self.limit = limit
        self._refs: dict[Any, list[str]] = {}

    def __len__(self) -> int:
        return len(self._refs)

    @property
    def full(self) -> bool:
        """No slot free: collect before submitting."""
        return len(self._refs) >= self.limit

    def add(self, ref: Any, submission_ids: list[str]) -> None:
        """A submitted shard."""
        self._refs[ref] = submission_ids

    def cancel(self) -> int:
        """Cancel every shard in flight (their workers are killed; nothing of theirs is written).

        Their submissions have no `submissions` rows, so the next run grades them; calls they had
        paid are paid again (at most the window's worth). Returns how many were cancelled.
        """
        refs = list(self._refs)
        for ref in refs:
            with contextlib.suppress(Exception):  # already finished or already gone
                ray.cancel(ref, force=True)
        self._refs.clear()
        return len(refs)

    def finished(self, block: bool) -> list[tuple[list[str], ShardResult | Exception]]:
        """Every shard finished by now (waiting up to 1 s for the first when `block`), with its result.

        A shard that failed after its retries comes back as its exception: the rest goes on.
        """
        if not self._refs:
            return []
        ready, _ = ray.wait(list(self._refs), num_returns=1, timeout=1.0 if block else 0)
        if ready:
            ready, _ = ray.wait(list(self._refs), num_returns=len(self._refs), timeout=0)
        out: list[tuple[list[str], ShardResult | Exception]] = []
        for ref in ready:
            ids = self._refs.pop(ref)
            try:
                out.append((ids, ray.get(ref)))
            except Exception as exc:
                out.append((ids, exc))
        return out


def _collect(
    window: InFlight, block: bool, summary: SweepSummary, progress: _Progress, actors: dict[str, Any],
    console: Console, plain: bool,
) -> None:
    """Count the finished shards into `summary` and refresh the live view."""
    if not len(window):
        return
    for ids, res in window.finished(block):
        if isinstance(res, Exception):
            summary.add_failed_shard(ids, res)
            console.print(Text.assemble(
                ("shard failed", "red"), f" ({', '.join(ids)}): {type(res).__name__}; "
                "its submissions stay pending and are retried by the next run",
            ))
            continue
        summary.add_shard(res)
        if plain:  # parseable lines when there is no live view
            print(res.line(), flush=True)
    summary.vendor_stats = vendor_pool.add_up(actors, ray.get(vendor_pool.stats_refs(actors)))
    progress.update(summary.done, summary.vendor_stats, sum(s["cost_usd"] for s in summary.vendor_stats.values()))


def _stream(
    opts: SweepOptions, bench: BenchmarkLoad, tasks: dict[str, Task], rejected: list[Rejection]
) -> Iterator[Submission]:
    """Submissions in the loader's stable order; rejections are set aside in `rejected` for the table."""
    from evalcore.submissions.loader import iter_submissions

    for item in iter_submissions(
        opts.submissions, tasks, excluded=bench.excluded_task_ids(), limits=opts.config.input_limits
    ):
        if isinstance(item, Rejection):
            rejected.append(item)
        else:
            yield item


def run_sweep(opts: SweepOptions, console: Console | None = None) -> SweepSummary:
    """Run (or resume) a sweep; returns its summary. Ctrl-C stops after flushing finished shards."""
    from evalcore.benchmark.loader import load_benchmark

    console = console or Console(stderr=True)
    t0 = time.time()
    require_keys(opts.config.vendors())  # before anything is loaded, written or started (OCR starts Ray)
    fs.check_writable(opts.output)  # an unwritable output fails now, not after OCR, Ray and the preflight
    scans = ocr_before_grading(opts.benchmark, opts.output, console, progress=opts.progress,
                               start_ray=lambda: init_ray(opts.address, _env_for_workers()))
    with use_ocr_cache(scans.cache_uri):  # every page the OCR tasks recognised is found here
        bench = load_benchmark(opts.benchmark, limits=opts.config.input_limits)
    for warning in bench.warnings:
        console.print(Text.assemble(("warning: ", "yellow"), str(warning)))
    tasks = bench.task_map()
    if not tasks:
        first = "; ".join(str(p) for p in bench.problems[:3])
        raise TribunalError(f"{opts.benchmark}: no loadable tasks ({len(bench.problems)} problem(s)): {first}")
    benchmark_hash = bench.content_hash()
    run_id = opts.run_id or default_run_id(benchmark_hash, opts.submissions, opts.config)
    run_uri = fs.join(opts.output, run_id)
    summary = SweepSummary(run_id=run_id, run_uri=run_uri, ocr=scans.as_dict(), started_at=t0)

    reuse_uris = [resolve_run_uri(opts.output, r) for r in opts.reuse]
    check_reusable(reuse_uris, opts.vendors)
    if fs.exists(fs.join(run_uri, RUN_RECORD)):
        check_resumable(run_uri, RunRecord.read(run_uri), opts, benchmark_hash)
    else:
        run_record(opts, run_id, bench.tasks, benchmark_hash).write(run_uri)

    summary.attempt = next_attempt(run_uri)
    summary.submissions_total = estimate_submissions(opts.submissions, set(tasks))
    rejected: list[Rejection] = list(bench.problems)

    index = ResumeIndex.load(run_uri)
    init_ray(opts.address, _env_for_workers())
    pending_subs = (s for s in stream_only(opts.submissions, tasks, bench.excluded_task_ids())
                    if not index.is_done(s.id, s.content_hash()))
    watch = CostWatch.start(opts.config, tasks, pending_subs, opts.max_cost_usd)
    summary.estimated_cost_usd, summary.max_cost_usd = watch.estimated_usd, opts.max_cost_usd
    actors = start_actors(opts.config, run_id, [run_uri, *reuse_uris], watch.ledger, opts.detach)
    needs_preflight = True  # done lazily: a finished run sends no call at all

    task_refs = {tid: ray.put(t) for tid, t in tasks.items()}
    source_indexes = SourceIndexes(task_refs, enabled=opts.config.audit.grounding_candidates)
    config_json = opts.config.model_dump(mode="json")
    window = InFlight(opts.max_in_flight)
    with Interrupt(console) as interrupt:
        try:
            with _Progress(console, opts.progress, summary.submissions_total) as progress:
                progress.cost_text = watch.progress_text
                plain = not opts.progress
                for idx, shard in _shards(_stream(opts, bench, tasks, rejected), opts.shard_size):
                    if interrupt.requested or watch.capped():
                        break
                    pending = [s for s in shard if not index.is_done(s.id, s.content_hash())]
                    summary.skipped_done += len(shard) - len(pending)
                    if not pending:
                        continue
                    if needs_preflight:
                        preflight_through_actors(opts.config, actors, run_uri, run_id, summary.attempt)
                        needs_preflight = False
                    while window.full and not interrupt.requested and not watch.capped():
                        _collect(window, True, summary, progress, actors, console, plain)
                    if interrupt.requested or watch.capped():
                        break
                    name = shard_name(idx, [s.id for s in pending])
                    refs = {s.task_id: task_refs[s.task_id] for s in pending}
                    ref = grade_shard.remote(run_uri, run_id, name, pending, refs, source_indexes.refs(refs),
                                             config_json, actors)
                    window.add(ref, [s.id for s in pending])
                while len(window):
                    _collect(window, True, summary, progress, actors, console, plain)
        except KeyboardInterrupt:  # the second Ctrl-C (Interrupt.on_interrupt): stop now
            summary.cancelled_shards = window.cancel()
            console.print(
                f"[yellow]cancelled {summary.cancelled_shards} shard(s) in flight; "
                "their submissions are graded by the next run (run the same command again)[/]"
            )
        finally:
            for a in vendor_pool.handles(actors):  # also on errors (a failed preflight): no actor outlives its sweep
                if not interrupt.cancelled:  # a cancelled sweep does not wait for calls still on the wire
                    with contextlib.suppress(Exception):  # a dead actor has nothing left to close
                        ray.get(a.close.remote(), timeout=30)
                ray.kill(a)
            if watch.ledger is not None:
                ray.kill(watch.ledger)

    summary.interrupted = interrupt.requested
    summary.source_indexes_built = source_indexes.built
    capped = watch.capped()
    if not summary.interrupted and not capped:
        # One file, rewritten by every complete pass over the inputs: a fixed rejection disappears
        # and a resumed run does not count a rejection twice. An interrupted pass saw only part.
        write_table_file(run_uri, "rejected", "rejections", rejected)
    summary.rejected = len(rejected)
    summary.rejections = [str(r) for r in rejected[:100]]
    summary.add_vendor_stats()
    if capped:
        summary.cost_capped = True
        summary.cost_message = watch.cap_message(summary.cost_usd, summary.complete)
    summary.wall_s = time.time() - t0
    summary.driver_peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    write_attempt_summary(summary)
    if not summary.interrupted and not capped and not summary.failed_shards:
        write_json(fs.join(run_uri, SUCCESS), summary.as_dict())  # the latest finished attempt
    return summary
