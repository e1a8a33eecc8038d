"""A run's recorded decisions, read incrementally while reviewers keep adding them.

`evalcore.results.adjudications.load` reads every decision object each time; a review page is
rendered after every decision, by several reviewers, on S3 too. `DecisionLog.refresh` lists the
folder once and reads only the objects it has not seen (each decision is immutable: one object,
created once, never rewritten), so a page costs one listing however long the review has run.
Writes go through `adjudications.record` (create-only), so reviewers deciding at once never
overwrite each other, whichever server or machine they use.
"""

from __future__ import annotations

import threading

from pydantic import ValidationError

from evalcore.results import adjudications as adj
from evalcore.results.adjudications import Adjudication, AdjudicationLoad
from evalcore.storage import fs


class DecisionLog:
    """Every decision recorded for one run, kept in memory and refreshed from storage on demand."""

    def __init__(self, run_uri: str, endpoint_override: str | None = None) -> None:
        self.run_uri = run_uri
        self.endpoint = endpoint_override
        self._decisions: dict[str, Adjudication] = {}
        self._problems: dict[str, str] = {}
        self._lock = threading.Lock()
        self._run_id: str | None = None  # read from run.json on the first refresh ("" when unreadable)

    def refresh(self) -> AdjudicationLoad:
        """Read the decisions added since the last refresh; returns them all (damaged files named)."""
        root = adj.folder(self.run_uri)
        if self._run_id is None:
            self._run_id = adj.run_id_of(self.run_uri, self.endpoint) or ""
        uris = fs.list_files(root, suffix=".json", endpoint_override=self.endpoint)
        with self._lock:
            new = [u for u in uris if u not in self._decisions and u not in self._problems
                   and not fs.is_hidden(fs.relative(u, root), "run")]
        read: dict[str, Adjudication] = {}
        bad: dict[str, str] = {}
        for uri in new:
            try:
                decision = Adjudication.model_validate_json(fs.read_bytes(uri, self.endpoint))
            except (ValidationError, ValueError, OSError) as exc:
                bad[uri] = f"{uri}: not a readable decision ({str(exc).splitlines()[0]}); ignored"
                continue
            why = adj.foreign(uri, decision, self._run_id or None)
            if why is not None:
                bad[uri] = why
            else:
                read[uri] = decision
        with self._lock:
            self._decisions.update(read)
            self._problems.update(bad)
            return AdjudicationLoad(decisions=list(self._decisions.values()), problems=sorted(self._problems.values()))

    def record(self, decision: Adjudication) -> str:
        """Write one decision (a new object); returns its URI. The next refresh reads it back as
        written (with the `recorded_at` that orders it)."""
        return adj.record(self.run_uri, decision, self.endpoint)


def history(load: AdjudicationLoad, key: tuple[str, ...]) -> list[Adjudication]:
    """Every decision on one item, oldest first (the last one is in force)."""
    return sorted((d for d in load.decisions if d.item == key), key=Adjudication.order)
