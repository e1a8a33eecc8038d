"""Deleting what a run's batches left at the vendors, once the run's tables are written.

Why after the tables, never before: a batch's answers are what a resumed run collects again until
its rows are in the run's `calls` table (from then on the stored call answers). So only a batch
collected before the run's tables were last written completely (`tables_written_at`: the end of
the latest attempt that finished, `_SUCCESS.json`) is purged, a batch abandoned before it
was created (its input file is an orphan), and one lost (the vendor no longer knows it: whatever of
it is left, an OpenAI input file say, is deleted or found gone). Anything else is left alone and reported as in use.

Why from the run folder alone: the journal records every object a batch created at its vendor
(`evalcore.vendors.batch.journal`, `BatchRecord.objects`), and each purge records what it did in a
new file under ``<run>/_purge/``. So a purge can run at the end of a sweep, again later
(`tribunal purge RUN`), on a half-purged run (an object already gone -- a 404 -- counts as gone), on
a local or an ``s3://`` run, and `tribunal status` can say what each vendor still holds without
asking it (`holdings`). What cannot be deleted is said, not hidden: xAI batches (BatchMgmt has no
delete) and OpenAI batch objects (metadata only: status, counts, an opaque label).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, Field

from evalcore.errors import ErrorKind
from evalcore.vendors.batch.journal import (
    BatchRecord,
    ObjectKind,
    PurgedObject,
    PurgeRecord,
    VendorObject,
    load_all,
    load_purges,
    save_purge,
)
from evalcore.vendors.batch.protocol import BatchAPI, Undeletable

HoldState = Literal["held", "in_use", "deleted", "gone", "undeletable", "metadata"]
"""held: at the vendor, and the next purge deletes it; in_use: at the vendor, and the run still
needs it (its batch's answers are not in the tables yet); deleted / gone: deleted by a purge, or
found gone by one; undeletable: at the vendor, with no way to delete it; metadata: kept by the
vendor but holds no text (an OpenAI batch object)."""

ATTEMPTS = 3
"""Delete calls per object and purge when the vendor fails transiently (a later purge tries again)."""


class Holding(BaseModel):
    """One object a run's batches created at a vendor, and where it stands."""

    vendor: str
    batch_label: str
    batch_id: str
    kind: ObjectKind
    id: str
    state: HoldState
    detail: str = ""
    expires_at: float | None = Field(default=None, description="The batch's own expiry (for a batch in use).")


def tables_written_at(success: Mapping[str, object] | None) -> float | None:
    """When the latest finished attempt had written every table (from `_SUCCESS.json`), or None."""
    if not success:
        return None
    started, wall = success.get("started_at"), success.get("wall_s")
    if isinstance(started, int | float) and isinstance(wall, int | float) and started > 0:
        return float(started) + float(wall)
    return None


def purgeable(record: BatchRecord, written_at: float | None) -> bool:
    """The run no longer needs this batch at its vendor (see the module doc)."""
    if record.phase in ("abandoned", "lost", "damaged", "replaced"):  # nothing to collect: whatever is left is deleted (or found gone)
        return True
    if record.phase != "collected" or written_at is None:
        return False
    return (record.collected_at or record.submitted_at) <= written_at


def holdings(
    journal: Mapping[str, list[BatchRecord]], purges: list[PurgeRecord], written_at: float | None
) -> list[Holding]:
    """Every object in the journal with its state, from the journal and the purge records alone."""
    done: dict[tuple[str, str, str], PurgedObject] = {}
    for p in purges:  # oldest first: a later outcome wins, except that deleted/gone is final
        for o in p.objects:
            key = (o.vendor, o.kind, o.id)
            if key not in done or done[key].outcome not in ("deleted", "gone"):
                done[key] = o
    out: list[Holding] = []
    for vendor, records in sorted(journal.items()):
        for r in records:
            if not r.confirmed:  # found by its creation time only: perhaps another run's, never deleted
                continue
            needed = not purgeable(r, written_at)
            for obj in r.objects:
                previous = done.get((vendor, obj.kind, obj.id))
                state: HoldState
                detail = ""
                if previous is not None and previous.outcome in ("deleted", "gone"):
                    state = previous.outcome
                elif not obj.holds_text:
                    state = "metadata"
                elif not obj.deletable:
                    state = "undeletable"
                elif needed:
                    state = "in_use"
                else:
                    state = "held"
                    if previous is not None and previous.outcome == "failed":
                        detail = f"the last purge failed: {previous.detail}"
                out.append(Holding(vendor=vendor, batch_label=r.label, batch_id=r.batch_id, kind=obj.kind,
                                   id=obj.id, state=state, detail=detail, expires_at=r.expires_at))
    return out


async def _delete(api: BatchAPI, obj: VendorObject) -> tuple[str, str]:
    """(outcome, detail) of deleting one object, with a few tries on transient failures."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return await api.delete(obj), ""
        except Undeletable as exc:
            return "undeletable", str(exc)
        except Exception as exc:
            kind = api.classify(exc).kind
            detail = f"{kind.value}: {api.redact(str(exc))[:300]}"
            if kind is ErrorKind.FATAL or attempt == ATTEMPTS:
                return "failed", detail
            await asyncio.sleep(attempt)
    return "failed", "no attempt made"  # pragma: no cover (the loop always returns)


async def purge(
    run_uri: str,
    apis: Mapping[str, BatchAPI],
    *,
    trigger: Literal["sweep", "command"],
    written_at: float | None,
) -> PurgeRecord | None:
    """Delete every object of the run the vendors still hold and the run no longer needs; record it.

    ``apis`` are the batch adapters by vendor entry name (judge or auditor); an object of an entry
    with none is recorded as failed. Returns the purge's record (also written under
    ``<run>/_purge/``), or None when the run's batches left nothing to report.
    """
    journal = load_all(run_uri)
    if not journal:
        return None
    record = PurgeRecord(trigger=trigger)
    for h in holdings(journal, load_purges(run_uri), written_at):
        if h.state == "in_use":
            record.in_use += 1
        if h.state not in ("held", "undeletable"):
            continue
        obj = VendorObject(kind=h.kind, id=h.id, deletable=h.state != "undeletable")
        if h.state == "undeletable":
            outcome, detail = "undeletable", _NO_DELETE.get(h.kind, "the vendor has no delete for it")
        elif (api := apis.get(h.vendor)) is None:
            outcome, detail = "failed", f"no vendor entry {h.vendor!r} in the configuration"
        else:
            outcome, detail = await _delete(api, obj)
        record.objects.append(PurgedObject(**obj.model_dump(), vendor=h.vendor, batch_label=h.batch_label,
                                           outcome=outcome, detail=detail))  # type: ignore[arg-type]
    if not record.objects and not record.in_use:
        return None
    save_purge(run_uri, record)
    return record


_NO_DELETE = {
    "batch": "xAI's batch API has no delete: the batch, its requests and answers stay at xAI (retention not published)",
}
