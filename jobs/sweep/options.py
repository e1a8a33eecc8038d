"""What a sweep takes (`SweepOptions`, which the CLI maps its flags onto) and what it reports (`SweepSummary`).

Kept apart from the driver so the run's identity (`jobs.sweep.identity`), the console
(`jobs.display.progress`) and the CLI can name these without importing the driver's steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalcore.config.models import TribunalConfig, VendorMode
from evalcore.errors import TribunalError
from evalcore.storage.store import valid_run_id

if TYPE_CHECKING:
    from evalcore.call_accounting import CallCounts
    from evalcore.cost.estimate import OutputModel
    from evalcore.grading.repeats import RetestPlan
    from evalcore.schema import Submission, Task
    from evalcore.vendors.batch.journal import BatchRecord
    from jobs.sweep.shard_work import ShardResult


FAILED_SHARD_TRACE_CHARS = 1500
"""How much of a failed shard's remote traceback its record keeps after the error: the end, where
the error was raised (the start is Ray's frames of the task that awaited it)."""


def root_cause(exc: BaseException) -> BaseException:
    """The exception behind Ray's wrapper of a failed task (`RayTaskError(FileNotFoundError)`,
    whose `cause` it is; Ray folds an actor's error that a shard's task awaited into the one
    wrapper, checked), following `cause` as far as it goes: what a user is told, since the
    wrapper's text starts with Ray's frames and the error itself comes last."""
    seen = {id(exc)}
    while isinstance(cause := getattr(exc, "cause", None), BaseException) and id(cause) not in seen:
        exc = cause
        seen.add(id(exc))
    return exc


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
    on_submission: Callable[[Submission, Task], None] | None = None
    """Called once per accepted submission (with its task) during intake's one read of the source: how
    emulated judges with personas learn each deliverable's family and rubric length
    (`jobs.sweep.prepare.prepare_run`)."""
    retest: RetestPlan | None = None
    """`tribunal retest`: grade the plan's repeats of the sampled submissions instead of the
    submissions themselves (`evalcore.grading.repeats`; `jobs.sweep.retest`)."""
    identity_config: TribunalConfig | None = None
    """The configuration the run was made with, when this pass grades with another (a retest's:
    the panel only, or some judges): the run's identity and resume check read it, not `config`."""
    output_model: OutputModel | None = None
    """What the estimate (and the cap's message) assumes of the answers: the defaults unless given
    (a retest calibrates it from the run it repeats: `OutputModel.from_run`)."""

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
    """What a sweep did: counts, cost and where the run lives.

    Everything is what *this command* (this attempt) did, kept apart by who paid (`CallCounts`):
    `paid_calls`/`cost_usd` it sent and paid for (online calls answered now, requests of batches it
    submitted), `collected_calls`/`collected_usd` batch results it collected that an earlier command
    submitted and paid for, `reused_calls` served from stored calls, `awaiting_calls` still in
    batches. The commands of a run add up to its calls table: rows = paid + failed + collected +
    reused + awaiting, USD of the rows not reused = cost_usd + collected_usd.
    """

    run_id: str
    run_uri: str
    attempt: int = 1
    """Which pass over this run (1 = the first; a resume is the next): `_attempts/` keeps each one's summary."""
    started_at: float = 0.0
    submissions_total: int = 0
    """Submissions the source holds that pass the input limits (done before or pending), counted by
    the sweep's one read of the source (`jobs.sweep.intake`); the progress bar's total."""
    skipped_done: int = 0
    graded: int = 0
    """Submissions whose grading completed in this command (`complete` + `incomplete` + `too_long`)."""
    complete: int = 0
    incomplete: int = 0
    too_long: int = 0
    awaiting_batches: int = 0
    """Submissions not graded because their calls wait in batches that had not ended (`--detach`):
    written as incomplete, graded by the run that collects them."""
    rejected: int = 0
    retest_changed: list[str] = field(default_factory=list)
    """`tribunal retest`: sampled submissions not repeated, their content changed since the original."""
    shards_written: int = 0
    paid_calls: int = 0
    """Calls this command sent and had answered: online calls (preflight included) and requests of
    batches it submitted, collected by it."""
    truncated_calls: int = 0
    """Attempts of this command that stopped at their output-token cap (paid, in `cost_usd`), each
    sent again once at a larger cap (`evalcore.vendors.output_cap`)."""
    lost_calls: int = 0
    """Attempts of this command in batches the vendor no longer has, each sent again once: paid twice
    if the vendor had processed the batch, at a cost not known here (`evalcore.call_accounting`)."""
    failed_calls: int = 0
    """Calls this command sent that failed for good (what their attempts were billed is in `cost_usd`)."""
    cost_usd: float = 0.0
    """USD paid by this command: its paid and failed calls (a batch it submitted and did not collect
    is priced when collected, in the collecting command's `collected_usd`)."""
    collected_calls: int = 0
    """Batch results this command collected from batches an earlier command submitted (paid then)."""
    collected_usd: float = 0.0
    reused_calls: int = 0
    """Calls served from stored calls (this run's, or a `--reuse` run's): nothing paid."""
    awaiting_calls: int = 0
    """Calls still in a batch that had not ended (`--detach`): placeholder rows, nothing paid yet."""
    rate_limited: int = 0
    batches_submitted: int = 0
    """Batches this command submitted (all vendors)."""
    batch_requests_submitted: int = 0
    """Requests in those batches (one per distinct call)."""
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Batch mode, per vendor entry: `batches_submitted` and `requests_submitted` by this command,
    `open` (the run's batches not collected yet) and `ends_by` (unix s: the latest expiry of the
    open ones, the vendor's window; None if unknown)."""
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
    estimated_submissions: int = 0
    """Pending submissions the estimate priced: the ones this pass grades (same read, same input limits)."""
    max_cost_usd: float | None = None
    cost_capped: bool = False
    cost_message: str | None = None
    ocr: dict[str, Any] = field(default_factory=dict, metadata={"doc": "The OCR step before grading (jobs.sweep.ocr_step)."})
    source_indexes_built: int = 0
    """Grounding indexes of the tasks' sources built by this pass (one per task graded; `SourceIndexes`)."""
    purge: dict[str, Any] = field(default_factory=dict)
    """What the purge at the end did at the vendors (`jobs.per_run.purge.purge_after_sweep`; empty: no batches)."""
    journal_events: list[str] = field(default_factory=list)
    """Batch mode: what recovery did to the run's batches in this command, one line each (a lost batch
    and why, a journal record set aside as `file: reason`; `jobs.display.progress.journal_events`)."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-able view (for _SUCCESS.json and --json)."""
        return dict(self.__dict__)

    @property
    def done(self) -> int:
        """Submissions finished so far: skipped as already done, or graded by this sweep."""
        return self.skipped_done + self.graded

    @property
    def handled(self) -> int:
        """Submissions this sweep is through with: done, or left waiting on their batches (`--detach`)."""
        return self.done + self.awaiting_batches

    def add_shard(self, shard: ShardResult) -> None:
        """Count a finished shard."""
        self.graded += shard.graded
        self.complete += shard.complete
        self.incomplete += shard.incomplete
        self.too_long += shard.too_long
        self.awaiting_batches += shard.awaiting
        self.add_calls(shard.counts)
        self.shards_written += 1
        self.shards_by_node[shard.node] = self.shards_by_node.get(shard.node, 0) + 1

    def add_calls(self, counts: CallCounts) -> None:
        """Count call rows this command wrote (a shard's, or the preflight's) by who paid for them."""
        self.paid_calls += counts.paid
        self.failed_calls += counts.failed
        self.truncated_calls += counts.truncated
        self.lost_calls += counts.lost
        self.cost_usd += counts.paid_usd
        self.collected_calls += counts.collected
        self.collected_usd += counts.collected_usd
        self.reused_calls += counts.reused
        self.awaiting_calls += counts.awaiting

    def add_failed_shard(self, submission_ids: Sequence[str], exc: BaseException) -> None:
        """A shard that failed after its retries: its submissions stay pending for the next run.

        Recorded: the error behind Ray's wrappers (`root_cause`: its type and message, which name
        the file or the call), then the end of the remote traceback, where it was raised."""
        cause = root_cause(exc)
        where = "" if cause is exc else f"\n{str(exc)[-FAILED_SHARD_TRACE_CHARS:]}"
        self.failed_shards.append(f"{', '.join(submission_ids)}: {type(cause).__name__}: {cause}{where}")

    def add_vendor_stats(self) -> None:
        """429s and the batches this command submitted, from the vendors' final statistics.

        Calls and cost are not taken from there: an actor counts every answer as paid, collected
        batch results too; they are counted from the call rows (`add_calls`)."""
        for name, s in self.vendor_stats.items():
            self.rate_limited += int(s.get("rate_limited", 0))
            if "batch_batches_submitted" in s:
                batches, requests = int(s["batch_batches_submitted"]), int(s.get("batch_requests_submitted", 0))
                self.batches_submitted += batches
                self.batch_requests_submitted += requests
                entry = self.batches.setdefault(name, {"open": 0, "ends_by": None})
                entry.update(batches_submitted=batches, requests_submitted=requests)

    def add_journal(self, journal: dict[str, list[BatchRecord]]) -> None:
        """Per vendor, the run's batches not collected yet and when the last of them expires (from the
        run's batch journal, `evalcore.vendors.batch.journal.load_all`): what a `--detach` pass
        leaves to come back for."""
        for vendor, records in journal.items():
            open_ = [r for r in records if r.live and r.phase != "collected"]
            entry = self.batches.setdefault(vendor, {"batches_submitted": 0, "requests_submitted": 0})
            ends = [r.expires_at for r in open_ if r.expires_at]
            entry.update(open=len(open_), ends_by=max(ends) if ends else None)
