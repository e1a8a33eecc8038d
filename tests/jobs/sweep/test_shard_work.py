"""What a grading worker does around `grade_submission` (`jobs.sweep.shard_work`): the garbage
collector paused or frozen only within its blocks, the previous shard's tasks and indexes reused
and everything else fetched, each task's index built once with a token ready when it is."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
import ray

from evalcore.benchmark.loader import load_benchmark
from evalcore.grounding import SourceIndex
from jobs.sweep.shard_work import ShardInputs, SourceIndexes, frozen_for_gc, gc_paused
from tests.jobs.conftest import SAMPLE


def test_the_collector_is_paused_within_the_block_and_as_it_was_after_it_even_on_an_error() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("a failed fetch")
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # it was off: it stays off
    finally:
        gc.enable()


def test_what_lives_on_entry_is_frozen_for_the_block_only() -> None:
    assert gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError), frozen_for_gc():
        assert gc.get_freeze_count() > 0
        raise RuntimeError("a failed shard")
    assert gc.get_freeze_count() == 0


@pytest.fixture
def counted_gets(monkeypatch: pytest.MonkeyPatch, ray_local: None) -> Iterator[list[int]]:
    """How many references each `ray.get` resolved."""
    sizes: list[int] = []
    real = ray.get

    def get(refs: Any, **kwargs: Any) -> Any:
        sizes.append(len(refs) if isinstance(refs, list) else 1)
        return real(refs, **kwargs)

    monkeypatch.setattr(ray, "get", get)
    monkeypatch.setattr(ShardInputs, "_kept", {})
    yield sizes


def test_a_worker_reuses_what_its_previous_shard_fetched_and_keeps_nothing_else(counted_gets: list[int]) -> None:
    a, b, c = (ray.put({"value": name}) for name in "abc")
    first = ShardInputs.fetch({"a": a, "b": b})
    second = ShardInputs.fetch({"b": b, "c": c})
    assert second["b"] is first["b"] and second["c"] == {"value": "c"}
    third = ShardInputs.fetch({"a": a})  # a was not the previous shard's: fetched again
    assert third == {"a": {"value": "a"}}
    assert counted_gets == [2, 1, 1]
    assert len(ShardInputs._kept) == 1  # at most one shard's worth is held


def test_each_tasks_index_is_built_once_with_a_token_ready_when_it_is(ray_local: None) -> None:
    task = load_benchmark(str(SAMPLE)).tasks[0]
    indexes = SourceIndexes({task.id: ray.put(task)}, enabled=True)
    first, again = indexes.refs([task.id, task.id]), indexes.refs([task.id])
    assert indexes.built == 1 and first[task.id] is again[task.id]
    assert ray.get(first[task.id].built) is True
    assert isinstance(ray.get(first[task.id].index), SourceIndex)
    assert SourceIndexes({task.id: ray.put(task)}, enabled=False).refs([task.id]) == {}
