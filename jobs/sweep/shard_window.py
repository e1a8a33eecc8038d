"""The window of shards on the cluster (`InFlight`): at most `max_in_flight` at once.

Why a window: the driver submits a shard only when one finishes, so what it holds (references,
submission ids) and what the cluster queues stay flat in the number of submissions.
"""

from __future__ import annotations

import contextlib
from typing import Any

import ray

from jobs.sweep.shard_work import ShardResult


class InFlight:
    """The window of shards on the cluster: at most `limit` at once, so driver memory stays flat in N.

    Holds each shard's Ray reference with the submission ids it grades (for a failure report).
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"the in-flight window needs at least one slot, got {limit}")
        self.limit = limit
        self._refs: dict[Any, list[str]] = {}

    def __len__(self) -> int:
        return len(self._refs)

    @property
    def full(self) -> bool:
        """No slot free: collect before submitting."""
        return len(self._refs) >= self.limit

    def add(self, ref: Any, submission_ids: list[str]) -> None:
        """A submitted shard."""
        self._refs[ref] = submission_ids

    def cancel(self) -> int:
        """Cancel every shard in flight (their workers are killed; nothing of theirs is written).

        Their submissions have no `submissions` rows, so the next run grades them; calls they had
        paid are paid again (at most the window's worth). Returns how many were cancelled.
        """
        refs = list(self._refs)
        for ref in refs:
            with contextlib.suppress(Exception):  # already finished or already gone
                ray.cancel(ref, force=True)
        self._refs.clear()
        return len(refs)

    def finished(self, block: bool) -> list[tuple[list[str], ShardResult | Exception]]:
        """Every shard finished by now (waiting up to 1 s for the first when `block`), with its result.

        A shard that failed after its retries comes back as its exception: the rest goes on.
        """
        if not self._refs:
            return []
        ready, _ = ray.wait(list(self._refs), num_returns=1, timeout=1.0 if block else 0)
        if ready:
            ready, _ = ray.wait(list(self._refs), num_returns=len(self._refs), timeout=0)
        out: list[tuple[list[str], ShardResult | Exception]] = []
        for ref in ready:
            ids = self._refs.pop(ref)
            try:
                out.append((ids, ray.get(ref)))
            except Exception as exc:
                out.append((ids, exc))
        return out
