"""`tribunal status` in the terminal: every batch per vendor, the run's progress, what the vendors hold."""

from __future__ import annotations

import time

from rich.console import Console
from rich.text import Text

from evalcore.vendors.batch.journal import BatchRecord
from jobs.display.tables import Block, Cell, Column, TableFormat, TableSpec, emit
from jobs.per_run.status import AWAITING_BATCH, SETTLED, RunStatus


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


_PROGRESS = {AWAITING_BATCH: "awaiting their batch (detached)"}
"""How a progress key reads when it is not a submission status."""


def status_blocks(status: RunStatus) -> list[Block]:
    """The run's progress, then one table per vendor of its batches (laid out by `jobs.display.tables`).

    A batch is read as one record, so a vendor's table is either one wide table or, when it does
    not fit, one block per batch (`max_bands=1`): split in bands it printed three pieces per
    vendor, each repeating the batch id, under a paragraph of prose."""
    # a row is not a grading: a --detach pass records its submissions awaiting their batches, not failed
    recorded = sum(status.submissions.values())
    progress = (f"{status.submissions.get('complete', 0)} of {recorded} complete ("
                + ", ".join(f"{n} {_PROGRESS.get(s, s)}" for s, n in sorted(status.submissions.items())) + ")"
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
                      title=f"{vendor}: {len(records)} batch(es)", max_bands=1)
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
                   Column("note", "text")], title=f"{len(still)} object(s) still at the vendors", key=2, max_bands=1)
    for h in still:
        note = h.detail or ("xAI has no batch delete" if h.state == "undeletable" else "")
        t.add_row(h.vendor, h.kind.replace("_", " "), h.id, _STATES[h.state], note)
    return [*out, t]
