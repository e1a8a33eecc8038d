"""The batch journal: which batches a run submitted, with which requests, and how they ended.

Why one module: reading, validating, setting aside and rebuilding records are one recovery
procedure; every step must agree on what a record in each phase means.

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

Why every record is validated on read, and a bad one set aside rather than fatal: a record is the
only link between paid work at a vendor and the run, so neither a traceback (every later run of
the command fails the same way) nor silently dropping it (its requests are paid for again) will
do. A record that cannot be read -- not JSON, truncated, not a record, in another vendor's folder,
or live without a vendor id -- is reported as `file: reason` (`Damaged`) and renamed to
`<name>.damaged-<ms>-<nonce>` (never deleted; no loader reads that name). A `damaged` record takes
its place (so the need to look it up survives a crash), and the queue finds its batch again at the
vendor *before* it submits anything: by the label in the file name (the name is ours even when the
content is not), or, for vendors whose batches carry no label (Anthropic), among the batches created
around then, journalled unconfirmed and answering the requests of the run they hold
(`evalcore.vendors.batch.queue`). The same lookup rebuilds a journal folder deleted after a
`--detach` (`BatchJournal.resumed` with no record). A damaged purge record is set aside the same
way; its purges are then unknown, so a batch it deleted is found gone (a 404) and its requests,
if the run still needs them, are sent again.

Phases `damaged`, `replaced` and `lost` (the vendor answers 404 for the id and has no batch with
the label), `requests_known = False` (a batch found at the vendor whose requests cannot be listed
until it ends: xAI, Anthropic) and `confirmed` exist for that recovery; `note` says, for
`tribunal status`, what happened.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from evalcore.errors import StorageError
from evalcore.storage import fs
from evalcore.storage.run_folder import folder_of

log = logging.getLogger("evalcore.vendors.batch.journal")


ItemOutcome = Literal["succeeded", "bad_output", "errored", "expired", "canceled", "refused"]
"""refused: the vendor refused the whole batch at its batch queue limit (OpenAI token_limit_exceeded):
the request was not processed nor billed, and is sent again in a later batch."""
SplitCause = Literal["requests", "bytes", "tokens", "interval", "flush"]
"""Why the queue sent a batch when it did: the next request would have taken it over a per-batch
limit (requests, bytes, or the enqueued-token limit: `tokens`), `flush_interval_s` passed since its
first request (`interval`), or the queue was flushed (`flush`: --detach)."""
BatchPhase = Literal["submitting", "submitted", "ended", "collected", "abandoned", "lost", "damaged", "replaced"]
"""submitting: written before the submit call (no batch id yet); submitted: the vendor's id is
known; ended / collected: results ready / read; abandoned: a `submitting` record whose batch the
vendor does not have (the submit never arrived), so its requests are submitted again; lost: the
vendor does not know the batch's id (a 404) nor any batch with its label, so its requests are sent
again (once) -- also a set-aside record whose batch the vendor does not have; damaged: in place of
a record that could not be read (set aside), its batch not looked up at the vendor yet; replaced:
a damaged record of a vendor whose batches carry no label (Anthropic), looked up: the batches
created around then are journalled in records of their own (`confirmed` False)."""

LIVE_PHASES = ("submitted", "ended", "collected")
DAMAGED_MARK = ".damaged-"
"""What a record that could not be read is renamed with (`<name>.damaged-<ms>-<nonce>`): not a
`.json` name, so no loader reads it again; nothing is ever deleted."""


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
    requests_known: bool = Field(
        default=True,
        description="False for a batch found again at the vendor whose requests cannot be listed before it "
        "ends (xAI, Anthropic): nothing is submitted until it is collected and `requests` filled in.",
    )
    note: str = Field(default="", description="What recovery did with this record (shown by `tribunal status`).")
    input_tokens: int = Field(
        default=0,
        description="Estimated input tokens of its requests: what it counts against the vendor entry's "
        "enqueued-token limit (`BatchLimits.max_enqueued_tokens`) until it ends (0 in records written "
        "before the limit existed).",
    )
    closed_by: SplitCause | None = Field(
        default=None, description="Why the queue sent it when it did (None in records written before this was kept).")
    confirmed: bool = Field(
        default=True,
        description="False for an unlabelled (Anthropic) batch found at the vendor by when it was created, which "
        "may be another run's: it answers the run's requests it holds, and becomes the run's (True) when one is "
        "found in it; a purge leaves an unconfirmed batch alone.",
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
        return bool(self.batch_id) and self.phase in LIVE_PHASES


@dataclass(frozen=True)
class Damaged:
    """A journal or purge record that could not be read, and what became of it.

    `label` and `submitted_at` come from the file name (`<ms>-<label>.json`), which this code wrote
    whole even when the content is lost: the label finds the batch again at its vendor."""

    uri: str
    reason: str
    set_aside_as: str | None = None
    """Where it was moved (None when only read, as by `tribunal status`, or when the move failed)."""
    label: str | None = None
    submitted_at: float | None = None

    @property
    def line(self) -> str:
        """`file: reason`, and where the file went."""
        where = f"; set aside as {fs.basename(self.set_aside_as)}" if self.set_aside_as else ""
        return f"{self.uri}: {self.reason}{where}"


_NAME = re.compile(r"^(\d{13})-([A-Za-z0-9_.-]+)\.json$")


def _from_name(name: str) -> tuple[str | None, float | None]:
    """(label, submitted_at) from a journal file name; (None, None) for a name we did not write."""
    m = _NAME.match(name)
    if m is None:
        return None, None
    return m.group(2), (int(m.group(1)) + 0.5) / 1000  # +0.5 ms: `file_name` gives back the same name


def _reason(exc: ValidationError) -> str:
    """A validation failure in a line: not JSON (with where), or the fields that are wrong."""
    errors = exc.errors(include_url=False)
    if errors and errors[0]["type"] == "json_invalid":
        return f"not a readable record ({errors[0]['msg']}; truncated or not JSON)"
    fields = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}" for e in errors[:4])
    return f"not a batch record ({fields})"


M = TypeVar("M", bound=BaseModel)


def _read(uri: str, model: type[M], endpoint_override: str | None = None) -> M | str | None:
    """The validated record, or the reason it cannot be used; None if it vanished meanwhile."""
    try:
        raw = fs.read_bytes(uri, endpoint_override)
    except FileNotFoundError:
        return None
    except OSError as exc:  # not a problem of the content: say which file, and stop
        raise StorageError(f"{uri}: cannot be read: {exc}") from exc
    if not raw.strip():
        return "empty file (truncated when it was written?)"
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        return _reason(exc)


def _consistent(record: BatchRecord, vendor: str | None) -> str | None:
    """Why a well-formed record cannot be trusted, or None."""
    if vendor is not None and record.vendor != vendor:
        return f"a record of vendor entry {record.vendor!r} in the folder of {vendor!r}"
    if record.phase in LIVE_PHASES and not record.batch_id:
        return f"phase {record.phase!r} without a vendor batch id"
    return None


def set_aside(uri: str) -> str | None:
    """Rename a record that cannot be read to a name no loader reads; its new URI (None if the
    rename failed: it is then only skipped, and set aside by a later run)."""
    new = f"{uri}{DAMAGED_MARK}{int(time.time() * 1000):013d}-{secrets.token_hex(3)}"
    filesystem, src = fs.resolve(uri)
    _, dst = fs.resolve(new)
    try:
        filesystem.move(src, dst)
    except OSError as exc:
        log.error("%s: could not be set aside (%s); it is skipped", uri, exc)
        return None
    return new


def _read_folder(
    folder: str, model: type[M], vendor: str | None, *, move: bool, endpoint_override: str | None = None
) -> tuple[list[M], list[Damaged]]:
    """Every record under a folder, validated; the others named (and set aside when `move`)."""
    good: list[M] = []
    bad: list[Damaged] = []
    for uri in fs.list_files(folder, suffix=".json", endpoint_override=endpoint_override):
        name = fs.basename(uri)
        if fs.is_hidden(fs.relative(uri, folder), "run"):
            continue
        got = _read(uri, model, endpoint_override)
        if got is None:
            continue
        if isinstance(got, str):
            reason = got
        else:
            owner = vendor if vendor is not None else fs.basename(fs.parent(uri))
            found = _consistent(got, owner) if isinstance(got, BatchRecord) else None
            if found is None:
                good.append(got)
                continue
            reason = found
        label, at = _from_name(name) if model is BatchRecord else (None, None)
        moved = set_aside(uri) if move else None
        damaged = Damaged(uri=uri, reason=reason, set_aside_as=moved, label=label, submitted_at=at)
        if move:
            log.warning("%s", damaged.line)
        bad.append(damaged)
    return good, bad


def set_aside_files(run_uri: str) -> list[str]:
    """Records set aside by earlier runs (journal and purge folders), for `tribunal status`."""
    return [uri for folder in (folder_of(run_uri).journal, folder_of(run_uri).purges) for uri in fs.list_files(folder)
            if DAMAGED_MARK in fs.basename(uri)]


_ATTEMPT = re.compile(r"attempt-(\d+)\.json")


def run_history(run_uri: str) -> tuple[float | None, bool]:
    """(when the run was first started, from run.json; whether an earlier attempt ran).

    Why the journal reads them: a journal folder that is empty in a run that ran before may have
    been deleted (after a `--detach`, its batches are still at the vendors), and the run's start
    bounds the vendors' batch lists the queue searches for its batches (`BatchJournal.resumed`).
    An earlier attempt left a record in `_attempts/` (each attempt claims its numbered record when
    it starts, status `running`, and replaces it with its summary at the end): so two records, or
    one that is not the current attempt's claim; or, failing those, rows in the `submissions` table."""
    started: float | None = None
    try:
        raw = json.loads(fs.read_bytes(folder_of(run_uri).record))
        value = raw.get("created_at") if isinstance(raw, dict) else None
        started = float(value) if isinstance(value, int | float) else None
    except (OSError, ValueError):
        started = None
    attempts = [uri for uri in fs.list_files(folder_of(run_uri).attempts, suffix=".json")
                if _ATTEMPT.fullmatch(fs.basename(uri))]
    earlier = len(attempts) >= 2 or (len(attempts) == 1 and not _claimed_only(attempts[0]))
    if not earlier:
        earlier = bool(fs.list_files(folder_of(run_uri).table("submissions"), suffix=".parquet"))
    return started, earlier


def _claimed_only(uri: str) -> bool:
    """The attempt record is a claim (`status: running`): perhaps the current attempt's own."""
    try:
        raw = json.loads(fs.read_bytes(uri))
    except (OSError, ValueError):
        return False
    return isinstance(raw, dict) and raw.get("status") == "running"


class BatchJournal:
    """The journal of one vendor entry of one run (read once, then kept up to date in memory)."""

    def __init__(self, run_uri: str, vendor: str) -> None:
        self.folder = fs.join(folder_of(run_uri).journal, vendor)
        self.vendor = vendor
        self.records: dict[str, BatchRecord] = {}  # by label
        self._by_hash: dict[str, list[str]] = {}  # request hash -> labels, oldest first
        self.purged: set[str] = set()
        """Vendor ids a purge deleted (or found gone): a batch whose answers were among them is not
        collected again (`usable_batch`)."""
        self.damaged: list[Damaged] = []
        """Records of this vendor entry that could not be read, set aside when loaded: their batches
        are looked up at the vendor before anything is submitted (`evalcore.vendors.batch.queue`)."""
        self.started_at: float | None = None
        """When the run was first started (run.json), the earliest a batch of the run can be."""
        self.resumed = False
        """An earlier attempt of the run ran: an empty journal may have been deleted."""
        self.loaded_at = time.time()
        """Batches the vendor created after this are this attempt's (a sibling actor's, perhaps): a
        search for lost records stops here."""

    @classmethod
    def load(cls, run_uri: str, vendor: str) -> BatchJournal:
        """Every batch this vendor entry submitted in the run (an empty journal for a new run).

        A record that cannot be read is named, set aside and kept in `damaged`, never fatal; so is
        a purge record."""
        journal = cls(run_uri, vendor)
        records, journal.damaged = _read_folder(journal.folder, BatchRecord, vendor, move=True)
        for record in sorted(records, key=lambda r: r.submitted_at):
            journal._index(record)
        for d in journal.damaged:
            label = d.label or f"damaged-{hashlib.sha256(d.uri.encode()).hexdigest()[:16]}"
            if label in journal.records:  # a stale copy of a record that reads: its batch is known
                continue
            moved = d.set_aside_as is not None
            record = BatchRecord(
                vendor=vendor, model="", label=label, requests=[], requests_known=False, phase="damaged",
                # a file that could not be moved keeps its name: this record's is 1 ms later, never over it
                submitted_at=(d.submitted_at or 0.0) + (0.0 if moved else 0.001),
                vendor_status="unreadable", note=d.line,
            )
            if moved:  # kept until its batch is looked up, by this run or the next
                journal.save(record)
            else:  # looked up now; set aside by a later run
                journal._index(record)
        purges, _ = _read_folder(folder_of(run_uri).purges, PurgeRecord, None, move=True)
        journal.purged = {o.id for p in purges for o in p.objects
                          if o.vendor == vendor and o.outcome in ("deleted", "gone")}
        journal.started_at, journal.resumed = run_history(run_uri)
        return journal

    def _index(self, record: BatchRecord) -> None:
        new = record.label not in self.records
        self.records[record.label] = record
        if new:
            for request_hash in record.requests:
                self._by_hash.setdefault(request_hash, []).append(record.label)

    def learned(self, record: BatchRecord) -> None:
        """Index the requests of a record whose requests were not known when it was journalled."""
        for request_hash in record.requests:
            labels = self._by_hash.setdefault(request_hash, [])
            if record.label not in labels:
                labels.append(record.label)
                labels.sort(key=lambda label: self.records[label].submitted_at)

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

    def to_look_up(self) -> list[BatchRecord]:
        """Records in place of ones that could not be read: their batches are looked up at the vendor."""
        return [r for r in self.records.values() if r.phase == "damaged"]

    def unresolved(self) -> list[BatchRecord]:
        """Records written before a submit whose answer never made it to the journal (a crash)."""
        return [r for r in self.records.values() if r.phase == "submitting"]

    def known_ids(self) -> set[str]:
        """Vendor ids of every batch in the journal."""
        return {r.batch_id for r in self.records.values() if r.batch_id}


def load_all(run_uri: str, endpoint_override: str | None = None) -> dict[str, list[BatchRecord]]:
    """Every vendor's readable batches in a run, oldest first (for `tribunal status`, the purge)."""
    return read_all(run_uri, endpoint_override)[0]


def read_all(
    run_uri: str, endpoint_override: str | None = None
) -> tuple[dict[str, list[BatchRecord]], list[Damaged]]:
    """Every vendor's readable batches in a run, and the records that cannot be read (journal and
    purge folders), without moving anything: reading status changes nothing."""
    records, damaged = _read_folder(folder_of(run_uri).journal, BatchRecord, None, move=False,
                                    endpoint_override=endpoint_override)
    out: dict[str, list[BatchRecord]] = {}
    for record in records:
        out.setdefault(record.vendor, []).append(record)
    for vendor_records in out.values():
        vendor_records.sort(key=lambda r: r.submitted_at)
    _, bad_purges = _read_folder(folder_of(run_uri).purges, PurgeRecord, None, move=False,
                                 endpoint_override=endpoint_override)
    return out, damaged + bad_purges


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


def load_purges(run_uri: str, endpoint_override: str | None = None) -> list[PurgeRecord]:
    """Every readable purge of a run, oldest first ([] for a run never purged); one that cannot be
    read is skipped here (a sweep sets it aside: `BatchJournal.load`)."""
    records, _ = _read_folder(folder_of(run_uri).purges, PurgeRecord, None, move=False,
                              endpoint_override=endpoint_override)
    return sorted(records, key=lambda r: r.purged_at)


def save_purge(run_uri: str, record: PurgeRecord) -> str:
    """Write a purge record under a new name (never over another one); returns its URI."""
    while True:
        name = f"{int(record.purged_at * 1000):013d}-{secrets.token_hex(4)}.json"
        uri = fs.join(folder_of(run_uri).purges, name)
        if fs.write_new(uri, record.model_dump_json(indent=1).encode()):
            return uri
