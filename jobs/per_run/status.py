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
import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.text import Text

from evalcore.errors import StorageError, TribunalError
from evalcore.storage import fs
from evalcore.storage.run_folder import RUN_RECORD, open_run
from evalcore.storage.store import read_json, read_table
from evalcore.tables import Block, Cell, Column, TableFormat, TableSpec, emit
from evalcore.vendors.batch.journal import BatchRecord, load_purges, read_all, set_aside_files
from evalcore.vendors.batch.purge import Holding, holdings, tables_written_at

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
    submissions: dict[str, int] = field(default_factory=dict)  # latest status -> count
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
    record_uri = open_run(run_uri).record
    if not fs.exists(record_uri):
        raise TribunalError(f"{run_uri}: not a run folder (no {RUN_RECORD})")
    try:
        record = read_json(record_uri)
    except (OSError, ValueError) as exc:  # truncated, not JSON, unreadable: name the file, never a traceback
        raise StorageError(f"{record_uri}: not a readable run record ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from exc
    latest: dict[str, tuple[float, str]] = {}
    try:
        t = read_table(run_uri, "submissions", columns=["submission_id", "status", "graded_at"])
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise StorageError(f"{fs.join(run_uri, 'submissions')}: cannot be read ({str(exc).splitlines()[0]})") from exc
    for sid, status, at in zip(t.column("submission_id").to_pylist(), t.column("status").to_pylist(),
                               t.column("graded_at").to_pylist(), strict=True):
        if sid not in latest or at >= latest[sid][0]:
            latest[sid] = (at, status)
    counts: dict[str, int] = {}
    for _, status in latest.values():
        counts[status] = counts.get(status, 0) + 1
    batches, damaged = read_all(run_uri)
    settled = all(r.phase in SETTLED for rs in batches.values() for r in rs)
    success: dict[str, Any] | None = None
    if fs.exists(open_run(run_uri).success):
        with contextlib.suppress(OSError, ValueError):  # unreadable: no finished attempt is known, nothing purgeable
            success = read_json(open_run(run_uri).success)
    return RunStatus(
        run_uri=run_uri,
        run_id=str(record.get("run_id", fs.basename(run_uri))),
        batch_mode=bool(record.get("config", {}).get("batch", {}).get("enabled", False)),
        # a pass over every input ended, nothing is left to retry and no batch is awaited
        finished=fs.exists(open_run(run_uri).success) and settled and not counts.get("incomplete"),
        submissions=counts,
        batches=batches,
        holdings=holdings(batches, load_purges(run_uri), tables_written_at(success)),
        damaged=[d.line for d in damaged],
        set_aside=set_aside_files(run_uri),
    )


def _when(unix: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(unix)) if unix else "-"


def _state(r: BatchRecord) -> str:
    state = _phase_state(r)
    return state if r.confirmed else f"{state} (found by its time; not known to be the run's)"


def _phase_state(r: BatchRecord) -> str:
    if r.phase == "damaged":
        return "record unreadable, set aside (looked up at the vendor on the next run)"
    if r.phase == "replaced":
        return "record unreadable, set aside (looked up: see the note)"
    if r.phase == "abandoned":
        return "never submitted (requests sent again)"
    if r.phase == "lost":
        return "lost: unknown to the vendor (requests sent again)"
    if r.phase == "submitting":
        return "submitting (looked up on the next run)"
    if r.phase == "collected":
        return "done" if not r.failed and not any(o != "succeeded" for o in r.outcomes.values()) else "done (some failed)"
    if r.phase == "ended":
        return "ended (not collected)"
    return "in progress" if r.vendor_status not in ("submitted", "validating") else "submitted"


def status_blocks(status: RunStatus) -> list[Block]:
    """The run's progress, then one table per vendor of its batches (laid out by `evalcore.tables`)."""
    # a row is not a grading: a --detach pass records its submissions incomplete, awaiting their batches
    recorded = sum(status.submissions.values())
    progress = (f"{status.submissions.get('complete', 0)} of {recorded} complete ("
                + ", ".join(f"{n} {s}" for s, n in sorted(status.submissions.items())) + ")"
                if recorded else "none recorded yet")
    out: list[Block] = [Text.assemble(
        (status.run_id, "bold"), f" ({status.run_uri}) — {'batch' if status.batch_mode else 'online'} "
        f"mode, {'finished' if status.finished else 'not finished'}; submissions: {progress}")]
    out += _damaged_lines(status)
    if not status.batches:
        return [*out, "no batches submitted"]
    for vendor, records in sorted(status.batches.items()):
        t = TableSpec([Column("batch", "id"), Column("state", "text"), Column("vendor status", "id"),
                       Column("requests", "number"), Column("succeeded", "number"), Column("failed", "number"),
                       Column("submitted", "id"), Column("expires at", "id")],
                      title=f"{vendor}: {len(records)} batch(es)")
        for r in records:
            failed = r.failed or sum(1 for o in r.outcomes.values() if o != "succeeded")
            n = Cell(str(len(r.requests)), len(r.requests)) if r.requests_known else Cell("?", None)
            t.add_row(r.batch_id or r.label, _state(r), r.vendor_status, n,
                      Cell(str(r.succeeded), r.succeeded), Cell(str(failed), failed), _when(r.submitted_at),
                      _when(r.expires_at))
        out.append(t)
        out += [f"  {r.batch_id or r.label}: {r.note}" for r in records if r.note]
    open_batches = sum(1 for rs in status.batches.values() for r in rs if r.phase not in SETTLED)
    out.append(f"{open_batches} batch(es) not collected yet" if open_batches else "every batch collected")
    return [*out, *holdings_blocks(status)]


def _damaged_lines(status: RunStatus) -> list[Block]:
    """Records that cannot be read (named, with the reason) and records set aside before."""
    out: list[Block] = []
    if status.damaged:
        out.append(f"{len(status.damaged)} journal record(s) cannot be read; the next run sets them aside and finds "
                   "their batches again at the vendors before it submits anything:")
        out += [f"  {line}" for line in status.damaged]
    if status.set_aside:
        out.append(f"{len(status.set_aside)} record(s) set aside by an earlier run (kept, not read):")
        out += [f"  {uri}" for uri in status.set_aside]
    return out


def render_status(status: RunStatus, console: Console, fmt: TableFormat = TableFormat.TABLE) -> None:
    """`status_blocks` in `fmt`: the tables fit the console's width, never cut."""
    emit(console, status_blocks(status), fmt)


_STATES = {
    "held": "held (the next purge deletes it)",
    "in_use": "held, in use by the run",
    "undeletable": "held, cannot be deleted",
    "metadata": "kept without text",
    "deleted": "deleted",
    "gone": "gone",
}


def holdings_blocks(status: RunStatus) -> list[Block]:
    """What each vendor still holds of the run: per vendor and state, then every object still there."""
    if not status.holdings:
        return []
    source = "asked the vendors (--check)" if status.checked else "from the journal and purge records; --check asks the vendors"
    out: list[Block] = [f"At the vendors ({source}):"]
    for vendor, counts in sorted(status.held_at_vendors().items()):
        out.append(f"  {vendor}: " + ", ".join(f"{n} {_STATES[state]}" for state, n in sorted(counts.items())))
    still = [h for h in status.holdings if h.state in ("held", "in_use", "undeletable")]
    if not still:
        return [*out, "  nothing with the run's text is left at any vendor"]
    t = TableSpec([Column("vendor", "id"), Column("object", "id"), Column("id", "id"), Column("state", "text"),
                   Column("note", "text")], title=f"{len(still)} object(s) still at the vendors")
    for h in still:
        note = h.detail or ("xAI has no batch delete" if h.state == "undeletable" else "")
        t.add_row(h.vendor, h.kind.replace("_", " "), h.id, _STATES[h.state], note)
    return [*out, t]
