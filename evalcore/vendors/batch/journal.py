"""The batch journal: which batches a run submitted, with which requests, and how they ended.

Why a journal: a vendor batch takes up to a day, and a driver can die at any moment in between.
Each batch's id and the request hashes in it are written to the run folder *before* anything
waits on it, so a re-run of the same command finds the batch, polls it and collects it, and a
request already in a batch is never paid for again. One small JSON file per batch, written whole
(a temporary file then a rename locally; one PUT on S3), so the journal works the same on a local
folder and on `s3://`, and a reader never sees half a record. The folder starts with `_`: it is
not a table.

    <run>/_batches/<vendor>/<submitted_at_ms>-<label>.json

The record is written twice around the submit call: before it (a label and the request hashes,
no vendor id yet) and right after it (the vendor's id). A driver killed in between leaves a
`submitting` record; the next run asks the vendor for a batch with that label (OpenAI metadata,
xAI batch name; Anthropic batches carry no name, so a batch created just after the record with
the same number of requests, unknown to the journal, is taken) before submitting anything.

Why every vendor-side object is recorded (`BatchRecord.objects`): a batch copies the benchmark's
tasks and deliverables to the vendor (OpenAI: an input file, then output and error files;
Anthropic and xAI: the batch itself), and they stay there until deleted or expired. The journal
records each one as soon as its id is known -- the OpenAI input file before the batch that reads it
is created -- so that once the run's tables are written, `evalcore.vendors.batch.purge` can delete
every one of them, from the run folder alone, as often as needed. What a purge deleted is recorded
next to the journal, in files that are created and never rewritten:

    <run>/_purge/<purged_at_ms>-<nonce>.json

A journal read back knows which of its batches were purged (`BatchJournal.purged`): a purged batch
is not waited on or collected again (its answers are in the run's tables).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from evalcore.storage import fs

JOURNAL_DIR = "_batches"
PURGE_DIR = "_purge"

ItemOutcome = Literal["succeeded", "bad_output", "errored", "expired", "canceled"]
BatchPhase = Literal["submitting", "submitted", "ended", "collected", "abandoned"]
"""submitting: written before the submit call (no batch id yet); submitted: the vendor's id is
known; ended / collected: results ready / read; abandoned: a `submitting` record whose batch the
vendor does not have (the submit never arrived), so its requests are submitted again."""


ObjectKind = Literal["input_file", "batch", "output_file", "error_file"]


class VendorObject(BaseModel):
    """Something a batch created at its vendor, by the vendor's id."""

    kind: ObjectKind
    id: str
    holds_text: bool = Field(
        default=True,
        description="It holds request or answer text. False for an OpenAI batch object: status, counts and "
        "our opaque label only (its text is in its files); the vendor has no delete for it.",
    )
    deletable: bool = Field(
        default=True,
        description="The vendor has a delete for it. False for xAI batches (BatchMgmt has none) and the "
        "OpenAI batch object.",
    )

    @property
    def key(self) -> tuple[str, str]:
        """Identity (kind, id): the same object reported twice is recorded once."""
        return (self.kind, self.id)


class BatchRecord(BaseModel):
    """One batch: its label and vendor id, its requests (custom id = request hash) and its fate."""

    vendor: str
    model: str
    label: str = Field(description="Our unique name for the batch, given to the vendor where it takes one.")
    batch_id: str = Field(default="", description="The vendor's id (empty while submitting).")
    submitted_at: float = Field(default_factory=time.time)
    requests: list[str] = Field(description="Request hashes (each is also the request's custom id).")
    purposes: dict[str, int] = Field(default_factory=dict, description="Requests per purpose, for status.")
    phase: BatchPhase = "submitting"
    vendor_status: str = "submitting"
    expires_at: float | None = None
    succeeded: int = 0
    failed: int = 0
    ended_at: float | None = None
    outcomes: dict[str, ItemOutcome] = Field(default_factory=dict, description="Per request, once collected.")
    collected_at: float | None = Field(default=None, description="When its results were read (phase collected).")
    objects: list[VendorObject] = Field(
        default_factory=list,
        description="Every object the batch created at the vendor, in the order their ids became known "
        "(OpenAI: input file, batch, output and error files; Anthropic, xAI: the batch).",
    )

    def add_objects(self, objects: Iterable[VendorObject]) -> bool:
        """Record objects not recorded yet; True when the record changed (and must be saved)."""
        known = {o.key for o in self.objects}
        new = [o for o in objects if o.key not in known]
        self.objects.extend(new)
        return bool(new)

    @property
    def file_name(self) -> str:
        """Sorted by submission time, unique by label."""
        return f"{int(self.submitted_at * 1000):013d}-{self.label}.json"

    @property
    def live(self) -> bool:
        """The vendor has this batch (its id is known)."""
        return bool(self.batch_id) and self.phase not in ("submitting", "abandoned")


class BatchJournal:
    """The journal of one vendor entry of one run (read once, then kept up to date in memory)."""

    def __init__(self, run_uri: str, vendor: str) -> None:
        self.folder = fs.join(run_uri, JOURNAL_DIR, vendor)
        self.vendor = vendor
        self.records: dict[str, BatchRecord] = {}  # by label
        self._by_hash: dict[str, list[str]] = {}  # request hash -> labels, oldest first
        self.purged: set[str] = set()
        """Vendor ids a purge deleted (or found gone): a batch whose answers were among them is not
        collected again (`usable_batch`)."""

    @classmethod
    def load(cls, run_uri: str, vendor: str) -> BatchJournal:
        """Every batch this vendor entry submitted in the run (an empty journal for a new run)."""
        journal = cls(run_uri, vendor)
        records = [
            BatchRecord.model_validate_json(fs.read_bytes(uri))
            for uri in fs.list_files(journal.folder, suffix=".json")
            if not fs.is_hidden(fs.basename(uri), "run")
        ]
        for record in sorted(records, key=lambda r: r.submitted_at):
            journal._index(record)
        journal.purged = {o.id for p in load_purges(run_uri) for o in p.objects
                          if o.vendor == vendor and o.outcome in ("deleted", "gone")}
        return journal

    def _index(self, record: BatchRecord) -> None:
        new = record.label not in self.records
        self.records[record.label] = record
        if new:
            for request_hash in record.requests:
                self._by_hash.setdefault(request_hash, []).append(record.label)

    def save(self, record: BatchRecord) -> None:
        """Write the record whole: first before the submit call, again once the vendor's id is
        known (before anything waits on the batch), then as its state changes."""
        fs.write_bytes_atomic(fs.join(self.folder, record.file_name), record.model_dump_json(indent=1).encode())
        self._index(record)

    def by_batch_id(self, batch_id: str) -> BatchRecord | None:
        """The record of a vendor batch id."""
        return next((r for r in self.records.values() if r.batch_id == batch_id), None)

    def usable_batch(self, request_hash: str, skip: Iterable[str] = ()) -> BatchRecord | None:
        """The latest live batch holding this request that has not failed it: one still running, or
        one whose answer can be collected again. None: the request must be (re)submitted."""
        skipped = set(skip)
        for label in reversed(self._by_hash.get(request_hash, [])):
            record = self.records[label]
            if not record.live or record.batch_id in skipped or self.answers_purged(record):
                continue
            outcome = record.outcomes.get(request_hash)
            if outcome is None or outcome == "succeeded":
                return record
        return None

    def answers_purged(self, record: BatchRecord) -> bool:
        """A purge deleted where this batch's answers are kept (the batch, or its output file)."""
        return any(o.id in self.purged for o in record.objects if o.kind in ("batch", "output_file"))

    def unresolved(self) -> list[BatchRecord]:
        """Records written before a submit whose answer never made it to the journal (a crash)."""
        return [r for r in self.records.values() if r.phase == "submitting"]

    def known_ids(self) -> set[str]:
        """Vendor ids of every batch in the journal."""
        return {r.batch_id for r in self.records.values() if r.batch_id}


def load_all(run_uri: str) -> dict[str, list[BatchRecord]]:
    """Every vendor's batches in a run, oldest first (for `tribunal status`)."""
    root = fs.join(run_uri, JOURNAL_DIR)
    out: dict[str, list[BatchRecord]] = {}
    for uri in fs.list_files(root, suffix=".json"):
        if fs.is_hidden(fs.basename(uri), "run"):
            continue
        record = BatchRecord.model_validate_json(fs.read_bytes(uri))
        out.setdefault(record.vendor, []).append(record)
    for records in out.values():
        records.sort(key=lambda r: r.submitted_at)
    return out


# --------------------------------------------------------------------------------------------
# What purges deleted: one create-only file per purge
# --------------------------------------------------------------------------------------------

PurgeOutcome = Literal["deleted", "gone", "failed", "undeletable"]
"""deleted: this purge deleted it; gone: the vendor no longer had it (deleted before, expired: a
404); failed: the delete call failed (the next purge tries again); undeletable: the vendor has no
delete for it (xAI batches)."""


class PurgedObject(VendorObject):
    """One object a purge dealt with, and how."""

    vendor: str = Field(description="The vendor entry (judge or auditor name) whose batch created it.")
    batch_label: str
    outcome: PurgeOutcome
    detail: str = ""


class PurgeRecord(BaseModel):
    """One purge of a run: every object it tried, and what it left because the run still needs it."""

    purged_at: float = Field(default_factory=time.time)
    trigger: Literal["sweep", "command"] = Field(description="At the end of a sweep, or `tribunal purge`.")
    objects: list[PurgedObject] = Field(default_factory=list)
    in_use: int = Field(default=0, description="Objects left alone: their batch's answers are not in the tables yet.")

    def count(self, outcome: PurgeOutcome) -> int:
        """Objects with this outcome."""
        return sum(1 for o in self.objects if o.outcome == outcome)


def load_purges(run_uri: str) -> list[PurgeRecord]:
    """Every purge of a run, oldest first ([] for a run never purged)."""
    root = fs.join(run_uri, PURGE_DIR)
    records = [
        PurgeRecord.model_validate_json(fs.read_bytes(uri))
        for uri in fs.list_files(root, suffix=".json")
        if not fs.is_hidden(fs.basename(uri), "run")
    ]
    return sorted(records, key=lambda r: r.purged_at)


def save_purge(run_uri: str, record: PurgeRecord) -> str:
    """Write a purge record under a new name (never over another one); returns its URI."""
    while True:
        name = f"{int(record.purged_at * 1000):013d}-{secrets.token_hex(4)}.json"
        uri = fs.join(run_uri, PURGE_DIR, name)
        if fs.write_new(uri, record.model_dump_json(indent=1).encode()):
            return uri
