"""The start of a sweep: the first shards' grounding indexes are started before the preflight (`jobs.sweep.indexes_ahead`).

No Ray here: the index references are recorded by a stand-in with `SourceIndexes.refs`'s signature.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, cast

from evalcore.schema import Deliverable, Submission
from jobs.intake import SpooledShard
from jobs.shard_work import SourceIndexes
from jobs.sweep import indexes_ahead


class _Recorder:
    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def refs(self, task_ids: Iterable[str]) -> dict[str, Any]:
        self.asked.append(list(dict.fromkeys(task_ids)))
        return {}


def _shard(index: int, tasks: list[str], done: int = 0) -> SpooledShard:
    pending = [Submission(system="sys", task_id=t, deliverables={"memo.md": Deliverable(name="memo.md", text="x")})
               for t in tasks]
    return SpooledShard(index=index, done=done, pending=pending)


def _walk(shards: list[SpooledShard], window: int) -> tuple[_Recorder, list[tuple[int, int]]]:
    """Iterate as the sweep does; note how many index requests had been made when each shard came out."""
    rec = _Recorder()
    seen: list[tuple[int, int]] = []
    it: Iterator[SpooledShard] = indexes_ahead(iter(shards), cast(SourceIndexes, rec), window)
    for shard in it:
        seen.append((shard.index, len(rec.asked)))
    return rec, seen


def test_the_first_windows_indexes_are_asked_for_before_the_first_shard_to_grade_comes_out_and_no_shard_is_lost() -> None:
    shards = [_shard(0, [], done=8), _shard(1, ["t1", "t2"]), _shard(2, ["t2", "t3"]), _shard(3, ["t4"])]
    rec, seen = _walk(shards, window=2)
    # one request, for the first two shards with work (t4's shard is past the window), made before
    # shard 1 (the first one the sweep sends, so before its preflight) came out
    assert rec.asked == [["t1", "t2", "t3"]]
    assert seen == [(0, 0), (1, 1), (2, 1), (3, 1)]


def test_a_run_with_nothing_left_to_grade_asks_for_no_index() -> None:
    rec, seen = _walk([_shard(0, [], done=8), _shard(1, [], done=8)], window=8)
    assert rec.asked == []
    assert [i for i, _ in seen] == [0, 1]


def test_a_window_longer_than_the_stream_takes_what_there_is() -> None:
    rec, seen = _walk([_shard(0, ["t1"]), _shard(1, ["t2"])], window=8)
    assert rec.asked == [["t1", "t2"]]
    assert [i for i, _ in seen] == [0, 1]
