"""`tribunal status`: a run's batches, progress and what the vendors still hold of it.

The sweep itself does not change in batch mode (each vendor actor holds a
`evalcore.vendors.batch.queue.BatchingVendor`, which queues, journals, polls and collects; the switch
is `jobs.sweep.prepare.with_batch`); a run whose batches may take a day needs a way to look at it: every batch
per vendor (submitted, in progress, done, failed, expires at), read from the run folder's
journal, and the run's progress, read from its submissions table. Reading status sends no call.

Status also says what each vendor still holds of the run (`holdings`): every object the journal
says a batch created there (OpenAI files, Anthropic and xAI batches), minus what purges recorded
as deleted, each as held (the next purge deletes it), in use (the run still needs it),
undeletable (xAI batches) or metadata only (OpenAI batch objects). `--check` asks the vendors.

A journal record that cannot be read is named (`file: reason`), never a traceback; status leaves it
where it is (reading changes nothing) and the next run sets it aside and finds its batch again at
the vendor. Records the recovery wrote or changed say why (`BatchRecord.note`), a lost batch too.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import pyarrow.compute as pc

from evalcore.call_accounting import awaits_batch
from evalcore.errors import StorageError, TribunalError
from evalcore.storage import fs
from evalcore.storage.run import open_run
from evalcore.storage.run_folder import RUN_RECORD
from evalcore.storage.store import read_json
from evalcore.vendors.batch.journal import BatchRecord, read_all, set_aside_files
from evalcore.vendors.batch.purge import Holding, holdings, tables_written_at

AWAITING_BATCH = "awaiting_batch"
"""The progress key of submissions a `--detach` pass wrote as incomplete because their calls wait in
batches (`evalcore.call_accounting.awaits_batch`): nothing failed, the same command collects them."""

SETTLED = ("collected", "abandoned", "lost", "replaced")
"""Phases nothing is awaited from: collected, never submitted, unknown to the vendor (its requests
sent again in another batch), an unreadable record looked up (`evalcore.vendors.batch.journal`)."""


@dataclass
class RunStatus:
    """What `tribunal status` shows about one run."""

    run_uri: str
    run_id: str
    batch_mode: bool
    finished: bool
    submissions: dict[str, int] = field(default_factory=dict)
    """Latest status -> count; an incomplete grading awaiting its batches counts as `AWAITING_BATCH`."""
    batches: dict[str, list[BatchRecord]] = field(default_factory=dict)
    holdings: list[Holding] = field(default_factory=list)
    """Every object the run's batches created at a vendor, with its state (`evalcore.vendors.batch.purge`)."""
    checked: bool = False
    """`--check`: the holdings' states were confirmed with the vendors."""
    damaged: list[str] = field(default_factory=list)
    """Journal and purge records that cannot be read, as `file: reason` (the next run sets them aside)."""
    set_aside: list[str] = field(default_factory=list)
    """Records an earlier run could not read and set aside (kept, never read again)."""

    def held_at_vendors(self) -> dict[str, dict[str, int]]:
        """Per vendor entry, objects per state (see `HoldState`)."""
        out: dict[str, dict[str, int]] = {}
        for h in self.holdings:
            counts = out.setdefault(h.vendor, {})
            counts[h.state] = counts.get(h.state, 0) + 1
        return out

    def as_dict(self) -> dict[str, Any]:
        """JSON view (`tribunal status --json`)."""
        return {
            "run_uri": self.run_uri,
            "run_id": self.run_id,
            "batch_mode": self.batch_mode,
            "finished": self.finished,
            "submissions": self.submissions,
            "batches": {v: [r.model_dump(exclude={"outcomes", "requests"}) | {"requests": len(r.requests)}
                            for r in records] for v, records in self.batches.items()},
            "held_at_vendors": self.held_at_vendors(),
            "vendor_objects": [h.model_dump() for h in self.holdings],
            "checked_at_vendors": self.checked,
            "damaged_records": self.damaged,
            "set_aside_records": self.set_aside,
        }


def run_status(run_uri: str) -> RunStatus:
    """Read a run's record, journal and submissions table (no vendor is contacted)."""
    run = open_run(run_uri)
    record_uri = run.record
    if not run.has_record():
        raise TribunalError(f"{run_uri}: not a run folder (no {RUN_RECORD})")
    try:
        record = read_json(record_uri)
    except (OSError, ValueError) as exc:  # truncated, not JSON, unreadable: name the file, never a traceback
        raise StorageError(f"{record_uri}: not a readable run record ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from exc
    latest: dict[str, tuple[float, str]] = {}
    try:
        t = run.read_table("submissions", columns=["submission_id", "status", "status_reason", "graded_at", "repeat"])
        t = t.filter(pc.equal(pc.fill_null(t.column("repeat"), 0), 0))  # the originals: a retest's repeats apart
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise StorageError(f"{run.table('submissions')}: cannot be read ({str(exc).splitlines()[0]})") from exc
    for sid, status, reason, at in zip(t.column("submission_id").to_pylist(), t.column("status").to_pylist(),
                                       t.column("status_reason").to_pylist(), t.column("graded_at").to_pylist(),
                                       strict=True):
        if sid not in latest or at >= latest[sid][0]:
            latest[sid] = (at, AWAITING_BATCH if awaits_batch(status, reason) else status)
    counts: dict[str, int] = {}
    for _, status in latest.values():
        counts[status] = counts.get(status, 0) + 1
    batches, damaged = read_all(run_uri)
    settled = all(r.phase in SETTLED for rs in batches.values() for r in rs)
    success: dict[str, Any] | None = None
    if fs.exists(run.success):
        with contextlib.suppress(OSError, ValueError):  # unreadable: no finished attempt is known, nothing purgeable
            success = read_json(run.success)
    return RunStatus(
        run_uri=run_uri,
        run_id=str(record.get("run_id", fs.basename(run_uri))),
        batch_mode=bool(record.get("config", {}).get("batch", {}).get("enabled", False)),
        # a pass over every input ended, nothing is left to retry and no batch is awaited
        finished=fs.exists(run.success) and settled and not counts.get("incomplete") and not counts.get(AWAITING_BATCH),
        submissions=counts,
        batches=batches,
        holdings=holdings(batches, run.read_purges(), tables_written_at(success)),
        damaged=[d.line for d in damaged],
        set_aside=set_aside_files(run_uri),
    )


