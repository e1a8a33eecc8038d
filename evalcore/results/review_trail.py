"""The review's audit trail: who signed in, what was assigned and reserved, decided and resolved.

Why a trail beside the decisions: decisions move a public leaderboard, so a publisher must be able
to show who was signed in when a decision was recorded, how items were assigned, and who tried to
sign in and failed. Each event is one JSON object under the run's ``review_trail/`` folder, written
only if its name is new (`fs.write_new`: ``O_EXCL`` locally, a conditional PUT on S3), exactly as
decisions are: nothing is ever rewritten or deleted, a restarted server or a second server on the
same ``s3://`` run appends beside the first and loses nothing, and `read` returns them all in
time order (`TrailReader` reads only what it has not seen).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalcore.errors import StorageError
from evalcore.results.adjudications import Adjudication
from evalcore.storage import fs
from evalcore.storage.run_folder import folder_of

EventKind = Literal[
    "sign_in", "sign_in_failed", "sign_in_locked", "sign_out", "campaign", "assignment", "reservation",
    "decision", "resolution",
]
Scalar = str | int | float | bool | None


class TrailEvent(BaseModel):
    """One event of the review: immutable once written."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event_id: str = Field(default_factory=lambda: uuid.uuid4().hex, pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
    at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC))
    kind: EventKind
    actor: str = Field(min_length=1, description="The signed-in account (or the name tried, for a failed sign-in).")
    run_id: str
    campaign_id: str | None = None
    item: list[str] | None = Field(default=None, description="The item (`Adjudication.item`), for item events.")
    decision_id: str | None = None
    detail: dict[str, Scalar] = Field(default_factory=dict, description="What else the event says (how, until, why).")

    def file_name(self) -> str:
        return f"{self.at.astimezone(dt.UTC).strftime('%Y%m%dT%H%M%S%fZ')}-{self.event_id}.json"


def folder(run_uri: str) -> str:
    return folder_of(run_uri).review_trail


def append(run_uri: str, event: TrailEvent, endpoint_override: str | None = None) -> str:
    """Write one event as a new object; returns its URI (an id clash raises: ids are random)."""
    uri = fs.join(folder(run_uri), event.file_name())
    if not fs.write_new(uri, event.model_dump_json().encode(), endpoint_override):
        raise StorageError(f"{uri}: an event with this name exists already (the trail is append-only)")
    return uri


class TrailReader:
    """Every event of one run's trail, read incrementally (each object is immutable)."""

    def __init__(self, run_uri: str, endpoint_override: str | None = None) -> None:
        self.root = folder(run_uri)
        self.endpoint = endpoint_override
        self._events: dict[str, TrailEvent] = {}
        self._bad: dict[str, str] = {}
        self._lock = threading.Lock()

    def refresh(self) -> list[TrailEvent]:
        """The events in time order (damaged objects are skipped and kept in `problems`)."""
        uris = fs.list_files(self.root, suffix=".json", endpoint_override=self.endpoint) \
            if fs.is_dir(self.root, self.endpoint) else []
        with self._lock:
            new = [u for u in uris if u not in self._events and u not in self._bad]
        for uri in new:
            try:
                event = TrailEvent.model_validate_json(fs.read_bytes(uri, self.endpoint))
            except (ValidationError, ValueError, OSError) as exc:
                with self._lock:
                    self._bad[uri] = f"{uri}: not a readable trail event ({str(exc).splitlines()[0]}); ignored"
                continue
            with self._lock:
                self._events[uri] = event
        with self._lock:
            return sorted(self._events.values(), key=lambda e: (e.at, e.event_id))

    @property
    def problems(self) -> list[str]:
        with self._lock:
            return sorted(self._bad.values())


def read(run_uri: str, endpoint_override: str | None = None) -> list[TrailEvent]:
    """The run's whole trail in time order."""
    return TrailReader(run_uri, endpoint_override).refresh()


EXPORT_COLUMNS = ("at", "kind", "actor", "campaign_id", "item", "decision_id", "decision", "materiality",
                  "resolution", "reason", "detail")


def export_rows(events: Sequence[TrailEvent], decisions: Iterable[Adjudication]) -> list[dict[str, Scalar]]:
    """The trail as rows, each decision event with its decision and reason (joined by decision id).

    Decisions recorded outside the trail (`tribunal adjudicate`, before accounts existed) are
    rows of kind ``decision`` too, so the export is every decision on the run."""
    by_id = {d.decision_id: d for d in decisions}
    rows: list[dict[str, Scalar]] = []
    seen: set[str] = set()
    for e in events:
        d = by_id.get(e.decision_id or "")
        if d is not None:
            seen.add(d.decision_id)
        rows.append(_row(e.at, e.kind, e.actor, e.campaign_id, e.item, e.decision_id, d, e.detail))
    for d in by_id.values():
        if d.decision_id not in seen:
            rows.append(_row(d.recorded_at or d.decided_at, "resolution" if d.resolution else "decision", d.reviewer,
                             d.campaign_id, list(d.item), d.decision_id, d, {"recorded_outside_the_trail": True}))
    rows.sort(key=lambda r: str(r["at"]))
    return rows


def _row(at: dt.datetime, kind: str, actor: str, campaign: str | None, item: Sequence[str] | None,
         decision_id: str | None, d: Adjudication | None, detail: Mapping[str, Scalar]) -> dict[str, Scalar]:
    return {
        "at": at.astimezone(dt.UTC).isoformat(), "kind": kind, "actor": actor, "campaign_id": campaign,
        "item": "/".join(item) if item else None, "decision_id": decision_id,
        "decision": d.decision if d else None, "materiality": d.materiality if d else None,
        "resolution": d.resolution if d else None, "reason": d.reason if d else None,
        "detail": json.dumps(dict(detail), sort_keys=True) if detail else None,
    }


def to_csv(rows: Sequence[Mapping[str, Scalar]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(EXPORT_COLUMNS), lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in EXPORT_COLUMNS})
    return out.getvalue()


def to_jsonl(rows: Sequence[Mapping[str, Scalar]]) -> str:
    return "".join(json.dumps(dict(r), sort_keys=True) + "\n" for r in rows)
