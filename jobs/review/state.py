"""A run opened for review: its queue (ordered by impact), its sources, its decisions.

Why its own module: the application, the team's rules (`jobs.review.team`), the sign-in and the
lead's routes all read the same state; here it depends on none of them.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence

from jobs.review.context import Sources
from jobs.review.decisions import DecisionLog
from jobs.review.impact import Scorer, rank_by_impact
from jobs.review.queue import SECTION_LABELS, QueueItem, RunData, build_queue


def choices(item: QueueItem) -> list[tuple[str, str, str | None, str]]:
    """(key, decision, materiality, label) of every decision the item's page offers."""
    if item.kind == "flag":
        return [
            ("u", "upheld", None, "uphold: it is a hallucination"),
            ("o", "overturned", None, "overturn: not a hallucination"),
            ("m", "materiality", "minor", "uphold as minor"),
            ("m", "materiality", "material", "uphold as material"),
        ]
    return [("p", "pass", None, "pass"), ("f", "fail", None, "fail")]



class ReviewState:
    """Everything the application serves: the run, its queue, its sources, its decisions."""

    def __init__(
        self, run_uri: str, *, endpoint_override: str | None = None, seed: int | None = None, sample: int = 20,
        benchmark: str | None = None, submissions: str | None = None, full: int = 0,
    ) -> None:
        self.data = RunData(run_uri, endpoint_override)
        self.seed = int(self.data.record.config.seed) if seed is None else seed
        self.sample = sample
        self.full = full
        self.scorer = Scorer(self.data)
        self.log = DecisionLog(self.data.run_uri, endpoint_override)
        self.queue = rank_by_impact(build_queue(self.data, seed=self.seed, sample=sample, full=full), self.scorer,
                                    choices, self.log.refresh().latest())
        self.by_key = {item.key: item for item in self.queue}
        self.sources = Sources(self.data.record, benchmark=benchmark, submissions=submissions,
                               endpoint_override=endpoint_override)
        self.categories = sorted({i.category for i in self.queue if i.category})
        self._include_lock = threading.Lock()

    def include(self, items: Sequence[QueueItem]) -> None:
        """Add items the queue lacks (a campaign's sample drawn with another seed or size), numbered
        after the last; items it has are left where they are."""
        with self._include_lock:
            for item in items:
                if item.key not in self.by_key:
                    added = dataclasses.replace(item, n=len(self.queue))
                    self.queue.append(added)
                    self.by_key[added.key] = added
                    if added.category and added.category not in self.categories:
                        self.categories = sorted([*self.categories, added.category])

    def counts(self) -> dict[str, int]:
        """Items per section, and `moves_score`: how many a decision can change a score or the gate of."""
        out = {s: 0 for s in SECTION_LABELS}
        for item in self.queue:
            out[item.section] += 1
        out["moves_score"] = sum(1 for item in self.queue if item.moves_score)
        return out
