"""The batch journal: which batches a run submitted, with which requests, and how they ended.

Why a journal: a vendor batch takes up to a day, and a driver can die at any moment in between.
Each batch's id and the request hashes in it are written to the run folder *before* anything
waits on it, so a re-run of the same command finds the batch, polls it and collects it, and a
request already in a batch is never paid for again. One small JSON file per batch, written whole
(a temporary file then a rename locally; one PUT on S3), so the journal works the same on a local
folder and on `s3://`, and a reader never sees half a record. The folder starts with `_`: it is
not a table.

    <run>/_batches/<vendor>/<submitted_at_ms>-<batch_id>.json
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from evalcore import fs

JOURNAL_DIR = "_batches"

ItemOutcome = Literal["succeeded", "bad_output", "errored", "expired", "canceled"]
BatchPhase = Literal["submitted", "ended", "collected"]
FAILED: frozenset[str] = frozenset({"errored", "expired", "canceled"})


class BatchRecord(BaseModel):
    """One submitted batch: its vendor id, its requests (custom id -> request hash) and its fate."""

    vendor: str
    model: str
    batch_id: str
    submitted_at: float = Field(default_factory=time.time)
    requests: dict[str, str] = Field(description="custom_id -> request hash (the same string today).")
    purposes: dict[str, int] = Field(default_factory=dict, description="Requests per purpose, for status.")
    phase: BatchPhase = "submitted"
    vendor_status: str = "submitted"
    expires_at: float | None = None
    succeeded: int = 0
    failed: int = 0
    ended_at: float | None = None
    outcomes: dict[str, ItemOutcome] = Field(
        default_factory=dict, description="Per custom_id, once collected."
    )

    @property
    def file_name(self) -> str:
        """Sorted by submission time, unique by batch id."""
        return f"{int(self.submitted_at * 1000):013d}-{self.batch_id}.json"

    @property
    def pending(self) -> int:
        """Requests with no outcome yet."""
        return len(self.requests) - self.succeeded - self.failed


class BatchJournal:
    """The journal of one vendor entry of one run (read once, then kept up to date in memory)."""

    def __init__(self, run_uri: str, vendor: str) -> None:
        self.folder = fs.join(run_uri, JOURNAL_DIR, vendor)
        self.vendor = vendor
        self.records: dict[str, BatchRecord] = {}
        self._by_hash: dict[str, list[str]] = {}

    @classmethod
    def load(cls, run_uri: str, vendor: str) -> BatchJournal:
        """Every batch this vendor entry submitted in the run (an empty journal for a new run)."""
        journal = cls(run_uri, vendor)
        for uri in fs.list_files(journal.folder, suffix=".json"):
            if fs.basename(uri).startswith((".", "_")):
                continue
            journal._index(BatchRecord.model_validate_json(fs.read_bytes(uri)))
        return journal

    def _index(self, record: BatchRecord) -> None:
        new = record.batch_id not in self.records
        self.records[record.batch_id] = record
        if new:
            for request_hash in record.requests.values():
                self._by_hash.setdefault(request_hash, []).append(record.batch_id)

    def save(self, record: BatchRecord) -> None:
        """Write the record whole (the first save of a batch must precede any wait on it)."""
        fs.write_bytes_atomic(fs.join(self.folder, record.file_name), record.model_dump_json(indent=1).encode())
        self._index(record)

    def usable_batch(self, request_hash: str, skip: Iterable[str] = ()) -> BatchRecord | None:
        """The latest batch holding this request that has not failed it: one still running, or one
        whose answer can be collected again. None: the request must be (re)submitted."""
        skipped = set(skip)
        for batch_id in reversed(self._by_hash.get(request_hash, [])):
            if batch_id in skipped:
                continue
            record = self.records[batch_id]
            outcome = next((record.outcomes[c] for c, h in record.requests.items() if h == request_hash
                            and c in record.outcomes), None)
            if outcome is None or outcome == "succeeded":
                return record
        return None

    def open_batches(self) -> list[BatchRecord]:
        """Batches not collected yet (what a re-run must poll)."""
        return [r for r in self.records.values() if r.phase != "collected"]


def load_all(run_uri: str) -> dict[str, list[BatchRecord]]:
    """Every vendor's batches in a run, oldest first (for `tribunal status`)."""
    root = fs.join(run_uri, JOURNAL_DIR)
    out: dict[str, list[BatchRecord]] = {}
    for uri in fs.list_files(root, suffix=".json"):
        if fs.basename(uri).startswith((".", "_")):
            continue
        record = BatchRecord.model_validate_json(fs.read_bytes(uri))
        out.setdefault(record.vendor, []).append(record)
    for records in out.values():
        records.sort(key=lambda r: r.submitted_at)
    return out


def summary_line(record: BatchRecord) -> str:
    """One human line per batch (status output)."""
    expires = (
        time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(record.expires_at)) if record.expires_at else "-"
    )
    return json.dumps(
        {"batch": record.batch_id, "phase": record.phase, "status": record.vendor_status,
         "requests": len(record.requests), "succeeded": record.succeeded, "failed": record.failed,
         "expires_at": expires}
    )
