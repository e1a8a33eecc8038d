"""The sweep driver: stream submissions through the cluster, write shards, resume, show progress.

Shape of a run (`run_sweep` is this list, one named step each):
1. OCR the benchmark's scans as Ray tasks into the OCR cache next to the runs (`jobs.sweep.ocr_step`), then
   load the benchmark (`load_inputs`);
2. name the run, take its lock (one writer per run, `evalcore.storage.lock`), check it may be resumed or
   create its run.json, and claim the attempt's number (`jobs.sweep.identity.start_run`); a storage
   failure from here on stops the sweep, resumable (`RunStorageFailed`, exit 3);
3. read the submission stream once, held to the input limits (`jobs.sweep.intake.SubmissionPass`);
   a run whose every submission is graded already stops here (no Ray, no vendor actor, nothing
   sent: a re-run of a finished run takes the time of reading its inputs); otherwise that
   one read feeds the cost estimate (priced in chunks as Ray tasks while the read goes on, and
   `--max-cost`'s ledger, `jobs.sweep.cost_watch`), sets the progress total, records the rejections, and
   spools the shards the grading loop sends; the tasks and the configuration are put in the
   object store once, for the estimate and the shards;
4. one `VendorActor` per vendor account, serving every entry on it (judges + auditor; the OpenAI
   judge and the auditor share one; N for an account one actor cannot carry,
   `jobs/sweep/vendor_pool.py`), and a preflight call through each entry (`jobs.sweep.startup`), sent
   as they start and awaited once the first window of shards is sent: their calls wait in the
   actors until it passed (`_ShardLoop.preflight_once`);
5. the accepted submissions are cut into fixed shards task by task (`jobs.sweep.intake.task_major`:
   a shard names one or two tasks; the order depends only on the source, so a resumed run cuts
   the same shards);
   shards whose submissions are all done are skipped; the rest go to `grade_shard` tasks
   (`jobs.sweep.shard_work`), at most `max_in_flight` at a time (`jobs.sweep.shard_window`: memory stays flat
   in N), with each task's grounding index built once per sweep on the task's first shard
   (`SourceIndexes`); each `grade_shard`
   grades its submissions with `evalcore.grade_submission` and writes its rows as one shard of
   every table;
6. the driver shows progress (also as Ray metrics, `jobs.sweep.metrics`) and listens for Ctrl-C
   (`jobs.display.progress`), and at the end writes the attempt's summary, the rejections and
   `_SUCCESS.json` (`finish`); once the tables are all written, what the run's batches left at
   the vendors is purged (`jobs.per_run.purge`).

The names the CLI, tests and benchmarks import from here (`SweepOptions`, `SweepSummary`,
`init_ray`, `Interrupt`, ...) stay importable from `jobs.sweep.driver`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

import ray
from rich.console import Console
from rich.text import Text

from evalcore.benchmark.ocr import PageText
from evalcore.benchmark.ocr import holding as holding_pages
from evalcore.benchmark.ocr import use_cache as use_ocr_cache
from evalcore.call_accounting import CallCounts
from evalcore.errors import StorageError, TribunalError
from evalcore.schema import Rejection
from evalcore.storage import fs
from evalcore.storage.run import open_run
from evalcore.storage.store import (
    ResumeIndex,
    rejections_name,
    shard_name,
    write_json,
    write_table_file,
)
from evalcore.vendors.batch.journal import read_all
from evalcore.vendors.preflight import require_keys
from jobs.display.progress import (
    Interrupt,
    JournalSnapshot,
    SweepProgress,
    journal_events,
    journal_snapshot,
    print_cancelled,
    print_failed_shard,
    print_warnings,
)
from jobs.per_run.purge import purge_after_sweep
from jobs.sweep import vendor_pool
from jobs.sweep.cost_watch import CostWatch, ledger_name_for, start_ledger
from jobs.sweep.governance import (
    LocalCaches,
    check_batch_allowed,
    check_prompt_cache_retention,
    governed_caches,
    local_caches,
    say_allowed_retention,
)
from jobs.sweep.identity import (
    OpenedRun,
    check_named_run_record,
    kill_point,
    resumable,
    start_run,
    storage_failure,
    write_attempt_summary,
    writing_into,
)
from jobs.sweep.intake import SpooledShard, SubmissionPass
from jobs.sweep.metrics import SweepMetrics
from jobs.sweep.ocr_step import OcrSummary, ocr_before_grading
from jobs.sweep.options import SweepOptions, SweepSummary
from jobs.sweep.peak_memory import peak_rss_mb
from jobs.sweep.shard_window import InFlight
from jobs.sweep.shard_work import (
    SourceIndexes,
    grade_shard,
    put_config,
)
from jobs.sweep.startup import (
    PreflightInFlight,
    _env_for_workers,
    init_ray,
    preflight_through_actors,
    settle_preflight,
    start_actors,
    start_preflight,
    stop_actors,
)

if TYPE_CHECKING:
    from evalcore.benchmark.loader import BenchmarkLoad
    from evalcore.config.models import TribunalConfig

__all__ = ["NothingToGrade", "run_sweep"]


class NothingToGrade(TribunalError):
    """The submission source holds nothing (an empty folder, a manifest without rows): the sweep
    stopped before it made anything, no run folder, no cache, no Ray (the sweep command exits 0)."""


def run_sweep(
    opts: SweepOptions, console: Console | None = None, *, take_over_lock: bool = False
) -> SweepSummary:
    """Run (or resume) a sweep; returns its summary. Ctrl-C stops after flushing finished shards.

    Under the configuration's data governance (`jobs.sweep.governance`): a vendor whose batch API is not
    allowed is refused before anything starts, and the local caches live where it says. Raises
    `RunLocked` when another command writes into the run (`take_over_lock`: take over a holder
    whose lease expired, `evalcore.storage.lock`), `RunStorageFailed` when a write into the run failed,
    and `NothingToGrade` when the submission source holds nothing (then nothing is made).
    """
    check_batch_allowed(opts.config)
    console = console or Console(stderr=True)
    say_allowed_retention(check_prompt_cache_retention(opts.config), console)
    require_keys(opts.config.vendors())  # a missing key first: nothing created, not even the output folder
    from evalcore.submissions.loader import holds_no_submission

    if holds_no_submission(opts.submissions):  # nothing to grade: no run is made (no folder left behind)
        raise NothingToGrade(f"{opts.submissions}: no submissions: nothing to grade")
    fs.check_writable(opts.output)  # before the caches' folders are made in it: `PATH: not a directory`, no traceback
    check_named_run_record(opts)  # a damaged run.json is said before the OCR step runs
    caches = local_caches(opts.config, opts.output)
    with governed_caches(caches):
        return _run_sweep(opts, console, caches, take_over_lock)


def _run_sweep(opts: SweepOptions, console: Console, caches: LocalCaches, take_over_lock: bool = False) -> SweepSummary:
    t0 = time.time()
    bench, scans = load_inputs(opts, console, caches)
    tasks = bench.task_map()
    run = start_run(opts, bench, take_over_lock=take_over_lock, console=console)
    with writing_into(run):  # the lock is released on the way out, whatever the way
        summary = SweepSummary(run_id=run.run_id, run_uri=run.run_uri, attempt=run.attempt, ocr=scans.as_dict(),
                               started_at=t0)
        rejected: list[Rejection] = list(bench.problems)
        journal_before = read_journal(run.run_uri, console) if opts.config.batch.enabled else {}
        with read_submissions(opts, bench, run, rejected) as intake:
            pending = intake.pending()  # the one read of the source
            first = next(pending, None)
            if first is None:  # every submission is graded already: no Ray, no vendor, nothing paid
                watch = CostWatch(0.0, 0)
                summary.submissions_total = summary.skipped_done = intake.accepted
                summary.max_cost_usd = opts.max_cost_usd
                failed = None
            else:
                init_ray(opts.address, _env_for_workers())
                # the vendor actors start now and import their SDKs while the submissions are read
                # and priced, and the preflight goes through each the moment it is ready
                # (`PreflightInFlight`); the cap's ledger first: the preflight's calls reserve from it
                ledger_name = ledger_name_for(opts.max_cost_usd)
                ledger = start_ledger(ledger_name, opts.max_cost_usd)
                actors = start_actors(opts.config, run.run_id, [run.run_uri, *run.reuse_uris], ledger_name,
                                      opts.detach)
                sent: PreflightInFlight | None = None
                try:
                    sent = start_preflight(opts.config, actors, run.run_id)
                    task_refs = {tid: ray.put(t) for tid, t in tasks.items()}
                    config_ref = put_config(opts.config)
                    watch = CostWatch.start(opts.config, tasks, chain([first], pending), opts.max_cost_usd,
                                            task_refs=task_refs, config_ref=config_ref, ledger_name=ledger_name,
                                            model=opts.output_model, ledger=ledger)
                except BaseException as exc:  # no actor outlives its sweep (grade_shards stops them from here on)
                    if sent is not None:
                        settle_preflight(sent, run.run_uri, run.attempt, wait=not isinstance(exc, KeyboardInterrupt))
                    stop_actors(actors, ledger, wait=False)
                    raise
                summary.submissions_total, summary.estimated_submissions = intake.accepted, watch.pending
                summary.estimated_cost_usd, summary.max_cost_usd = watch.estimated_usd, opts.max_cost_usd
                failed = grade_shards(opts, run, summary, intake.shards(), task_refs, config_ref, watch, actors,
                                      console, sent)
            summary.retest_changed = list(intake.changed)
        finish(summary, rejected, watch, t0, opts.config, console, journal_before=journal_before)
        if failed is not None:  # after the attempt's summary: what was stored is recorded
            raise resumable(failed, f"; the sweep stopped sending shards ({len(summary.failed_shards)} not "
                                    "written, their submissions stay pending)")
    return summary


def load_inputs(
    opts: SweepOptions, console: Console, caches: LocalCaches | None = None
) -> tuple[BenchmarkLoad, OcrSummary]:
    """Check keys and output, OCR the benchmark's scans on the cluster, load the benchmark.

    ``caches``: where the OCR pages go (`local_caches`; default ``<output>/_ocr``). When they are
    memory only, the pages the OCR tasks send back are held for the load (`ocr.holding`) and no
    cache is read or written.

    The keys and the output are checked before anything is loaded, written or started (OCR starts
    Ray), so a missing key or an unwritable output fails now, not after OCR, Ray and the preflight.
    """
    from evalcore.benchmark.loader import load_benchmark

    require_keys(opts.config.vendors())
    fs.check_writable(opts.output)
    held: dict[tuple[str, int], PageText] | None = {} if caches is not None and caches.ocr_uri is None else None
    scans = ocr_before_grading(opts.benchmark, opts.output, console, progress=opts.progress,
                               start_ray=lambda: init_ray(opts.address, _env_for_workers()),
                               cache_uri=None if caches is None else caches.ocr_uri,
                               limits=opts.config.input_limits, held=held)
    # every page the OCR tasks recognised is found here
    with use_ocr_cache(scans.cache_uri), holding_pages(held or {}):
        bench = load_benchmark(opts.benchmark, limits=opts.config.input_limits)
    print_warnings(console, bench.warnings)
    if not bench.task_map():
        first = "; ".join(str(p) for p in bench.problems[:3])
        raise TribunalError(f"{opts.benchmark}: no loadable tasks ({len(bench.problems)} problem(s)): {first}")
    return bench, scans


def read_journal(run_uri: str, console: Console) -> JournalSnapshot:
    """What the run's batch journal says before this command sends anything (batch mode): the end of
    the sweep reports what changed (`jobs.display.progress.journal_events`). Reads only; informative."""
    try:
        return journal_snapshot(read_all(run_uri)[0])
    except (TribunalError, OSError, ValueError) as exc:
        console.print(f"the run's batch journal could not be read: {exc}", markup=False, highlight=False)
        return {}


def read_submissions(
    opts: SweepOptions, bench: BenchmarkLoad, run: OpenedRun, rejected: list[Rejection]
) -> SubmissionPass:
    """The sweep's one pass over the submission source (`jobs.sweep.intake`), with the run's input limits:
    the submissions this run has already graded are counted as done, the rest spooled for grading."""
    index = ResumeIndex.load(run.run_uri)
    return SubmissionPass(
        opts.submissions, bench.task_map(), excluded=bench.excluded_task_ids(), limits=opts.config.input_limits,
        is_done=lambda s: index.is_done(s.id, s.content_hash(), s.repeat), shard_size=opts.shard_size,
        rejected=rejected, on_submission=opts.on_submission, retest=opts.retest,
    )


PRE_PREFLIGHT_SHARDS = 1
"""Shards sent before the preflight has passed (the first once an actor has answered it:
`_ShardLoop.await_an_actor`): their workers start and their prompts are made while it is on the
wire (`_ShardLoop.preflight_once`); the others are sent once it passed. Why one and not the
whole window: every shard sent starts a Ray worker process (importing Ray and Tribunal, ~1 CPU-s),
and on a laptop those processes took the CPU the vendor actors needed to start, so the preflight,
which every grading call waits for, came 9-11 s after the command instead of ~4 s (the sample on 2
cores, `benchmarks/sweep_start.py`)."""


@dataclass
class _ShardLoop:
    """What sending shards and collecting their results works with (one per sweep)."""

    opts: SweepOptions
    run: OpenedRun
    summary: SweepSummary
    watch: CostWatch
    actors: dict[str, Any]
    console: Console
    interrupt: Interrupt
    window: InFlight
    task_refs: dict[str, Any]
    source_indexes: SourceIndexes
    config_ref: Any
    progress: SweepProgress | None = None
    metrics: SweepMetrics | None = None
    """The driver's Ray metrics (`jobs.sweep.metrics`): recorded at each collect, as the live view is."""
    needs_preflight: bool = field(default=True)
    """Done lazily, once the first shards are sent: a finished run sends no call at all."""
    sent: PreflightInFlight | None = None
    """The preflight sent as the actors started (`start_preflight`) until `preflight_once` collects it."""
    storage_error: StorageError | None = None
    """The first shard that could not be stored: no new shard is sent (its calls would be paid for
    rows that cannot be written), and the sweep ends resumable (`RunStorageFailed`)."""

    def stopping(self) -> bool:
        """Ctrl-C was pressed, the cost cap refused a call, or a shard could not be stored: no new shard is sent."""
        return self.interrupt.requested or self.watch.capped() or self.storage_error is not None

    def preflight_once(self) -> None:
        """The preflight's answers, awaited once the first window of shards was sent (their calls
        wait in the actors until it passed: `VendorActor.open_gate`); it was sent as the actors
        started (`jobs.sweep.startup.PreflightInFlight`), so each actor sent it as soon as it was ready.

        Why await it then: the shards' workers start, their grounding indexes are built and their prompts
        made while the preflight is on the wire, so their calls go out as soon as it has passed.
        Sent after it, they left the sweep's binding account idle ~2 s between its preflight and
        its first grading call (measured on the sample through `benchmarks/peers.py`). A failed
        preflight raises here, the gates stay shut and the shards are cancelled: no grading call
        is sent. A sweep with nothing to grade sends no shard and no preflight."""
        if self.needs_preflight and len(self.window):
            sent, self.sent = self.sent, None  # collected here, whatever its answer
            try:
                rows = preflight_through_actors(self.opts.config, self.actors, self.run.run_uri, self.run.run_id,
                                                self.summary.attempt, sent)
            except Exception:  # a second Ctrl-C is `grade_shards`'s to handle: it cancels and counts them
                self.window.cancel()
                raise
            self.summary.add_calls(CallCounts.of(rows, self.summary.started_at))
            vendor_pool.open_gates(self.actors)
            self.needs_preflight = False

    def await_an_actor(self) -> None:
        """Before the first shard: wait until one vendor actor has answered its preflight (it is
        up), or the preflight ended, or a Ctrl-C.

        Why: a shard starts a Ray worker process (importing Ray and Tribunal, and its tasks'
        grounding index builds start one more), and the actors are processes starting at the same
        moment: on a laptop's two cores those took the CPU the actors needed, and the first judge
        call waited for all of them. Sent once an actor is up, the shard's worker starts while the
        slower actors finish starting, and is ready about when the preflight has passed."""
        while self.sent is not None and not self.interrupt.requested:
            if self.sent.first_answer.wait(0.1):
                return

    def submit(self, shard: SpooledShard) -> None:
        """One `grade_shard` task for the shard's pending submissions, into the window."""
        ids = [s.grading_key for s in shard.pending]  # a repeat's key is its own: `<id>#<k>`
        refs = {s.task_id: self.task_refs[s.task_id] for s in shard.pending}
        name = shard_name(shard.index, ids, self.run.attempt)  # the attempt in the name: never an earlier file
        indexes = self.source_indexes.refs(refs)
        ref = grade_shard.remote(self.run.run_uri, self.run.run_id, name, shard.pending,
                                 refs, {tid: i.index for tid, i in indexes.items()}, self.config_ref, self.actors,
                                 self.summary.started_at, *(i.built for i in indexes.values()))
        self.window.add(ref, ids)

    def collect(self, block: bool) -> None:
        """Count the finished shards into the summary and refresh the live view (after the
        preflight: the shards in the window wait on it)."""
        if not len(self.window):
            return
        self.preflight_once()
        for ids, res in self.window.finished(block):
            if isinstance(res, Exception):
                self.failed_shard(ids, res)
                continue
            self.summary.add_shard(res)
            if not self.opts.progress:  # parseable lines when there is no live view
                print(res.line(), flush=True)
            kill_point("shard", self.summary.shards_written)
        stats = vendor_pool.add_up(self.actors, ray.get(vendor_pool.stats_refs(self.actors)))
        self.summary.vendor_stats = stats
        spent = sum(s["cost_usd"] for s in stats.values())
        if self.progress is not None:
            self.progress.update(self.summary.done, stats, spent, self.summary)
        self.record_metrics(spent)

    def failed_shard(self, ids: list[str], exc: Exception) -> None:
        """A shard that failed: pending for the next run; a storage failure as one line naming the file and cause."""
        cause = storage_failure(exc)
        if cause is None:
            self.summary.add_failed_shard(ids, exc)
            print_failed_shard(self.console, ids, exc)
            return
        self.storage_error = self.storage_error or cause
        self.summary.add_failed_shard(ids, cause)
        self.console.print(Text.assemble(("shard not stored", "red"), f" ({', '.join(ids)}): {cause}; its "
                                         "submissions stay pending and no new shard is sent"), soft_wrap=True)

    def record_metrics(self, spent: float) -> None:
        """Done/total, spend against the estimate, calls/s and ETA as Ray metrics, for a dashboard."""
        if self.metrics is not None:
            self.metrics.record(total=self.summary.submissions_total, done=self.summary.done,
                                graded=self.summary.graded, spent_usd=spent,
                                rates=self.progress.rates if self.progress is not None else None)


def grade_shards(
    opts: SweepOptions,
    run: OpenedRun,
    summary: SweepSummary,
    shards: Iterator[SpooledShard],
    task_refs: dict[str, Any],
    config_ref: Any,
    watch: CostWatch,
    actors: dict[str, Any],
    console: Console,
    sent: PreflightInFlight | None = None,
) -> StorageError | None:
    """Send the shards with something to grade through the in-flight window and count what comes back.

    A first Ctrl-C stops sending and flushes the shards in flight; a second cancels them. The
    actors are stopped on the way out, whatever way that is. Returns the first storage failure of
    a shard (after it no new shard was sent), else None.
    """
    window = InFlight(opts.max_in_flight)
    with Interrupt(console) as interrupt:
        loop = _ShardLoop(opts, run, summary, watch, actors, console, interrupt, window, task_refs,
                          SourceIndexes(task_refs, enabled=opts.config.audit.grounding_candidates),
                          config_ref, metrics=SweepMetrics(run.run_id, watch.estimated_usd), sent=sent)
        loop.record_metrics(0.0)
        try:
            with SweepProgress(console, opts.progress, summary.submissions_total,
                               phase="submitting batches" if opts.detach else "grading") as progress:
                progress.cost_text = watch.progress_text
                loop.progress = progress
                for shard in shards:
                    if loop.stopping():
                        break
                    summary.skipped_done += shard.done
                    if not shard.pending:
                        continue
                    if not len(window):
                        loop.await_an_actor()
                    if len(window) >= PRE_PREFLIGHT_SHARDS:  # the rest wait until the preflight passed
                        loop.preflight_once()
                    while window.full and not loop.stopping():
                        loop.collect(block=True)
                    if loop.stopping():
                        break
                    loop.submit(shard)
                while len(window):
                    loop.collect(block=True)
        except KeyboardInterrupt:  # the second Ctrl-C (Interrupt.on_interrupt): stop now
            summary.cancelled_shards = window.cancel()
            print_cancelled(console, summary.cancelled_shards)
        finally:  # a cancelled sweep does not wait for calls still on the wire
            watch.capped()  # asked while the ledger lives: `finish` reads the answer after it is stopped
            if loop.sent is not None and (  # sent as the actors started, never collected: stopped before its first shard
                    rows := settle_preflight(loop.sent, run.run_uri, run.attempt, wait=not interrupt.cancelled)):
                summary.add_calls(CallCounts.of(rows, summary.started_at))
            stop_actors(actors, watch.ledger, wait=not interrupt.cancelled)
            watch.ledger = None
    summary.interrupted = interrupt.requested
    summary.source_indexes_built = loop.source_indexes.built
    return loop.storage_error


def finish(
    summary: SweepSummary,
    rejected: list[Rejection],
    watch: CostWatch,
    t0: float,
    config: TribunalConfig | None = None,
    console: Console | None = None,
    *,
    journal_before: JournalSnapshot | None = None,
) -> None:
    """Write what this attempt did: the rejections, the attempt's summary, and `_SUCCESS.json` if it finished.

    An attempt that finished has written every table: then, before its summary, what its batches
    left at the vendors is purged (`jobs.per_run.purge`, `data_governance.purge`; never before the tables:
    a resumed run may collect a batch again). In batch mode the summary also says what recovery
    did to the run's batches since `journal_before` (`jobs.display.progress.journal_events`).
    """
    capped = watch.capped()
    if not summary.interrupted and not capped:
        # One file per attempt that finishes, and readers take the latest (`store.table_files`): a
        # fixed rejection disappears and a resumed run does not count a rejection twice (an
        # interrupted or capped attempt leaves it to the attempt that finishes the run).
        write_table_file(summary.run_uri, "rejected", rejections_name(summary.attempt), rejected)
        if config is not None and not summary.failed_shards:
            summary.purge = purge_after_sweep(config, summary.run_uri, console or Console(stderr=True))
    kill_point("tables")
    summary.rejected = len(rejected)
    summary.rejections = [str(r) for r in rejected[:100]]
    summary.add_vendor_stats()
    if config is not None and config.batch.enabled:  # what is left at the vendors to come back for
        try:
            journal = open_run(summary.run_uri).read_journal()
            summary.add_journal(journal)
            summary.journal_events = journal_events(journal_before or {}, journal)
        except (TribunalError, OSError, ValueError) as exc:  # informative only: the attempt is recorded anyway
            (console or Console(stderr=True)).print(f"the run's batch journal could not be read: {exc}",
                                                    markup=False, highlight=False)
    if capped:
        summary.cost_capped = True
        summary.cost_message = watch.cap_message(summary.cost_usd, summary.complete)
    summary.wall_s = time.time() - t0
    summary.driver_peak_rss_mb = peak_rss_mb()
    write_attempt_summary(summary)
    if not summary.interrupted and not capped and not summary.failed_shards:
        write_json(open_run(summary.run_uri).success, summary.as_dict())  # the latest finished attempt
