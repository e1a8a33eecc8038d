"""The units of work a sweep puts on the cluster: `grade_shard` (grade a shard and write its rows)
and `build_source_index` (a task's grounding index, built once per sweep: `SourceIndexes`).

What crosses the object store is kept small and put once: a shard task gets references to its
tasks, to their indexes and to the configuration (the driver puts each once per sweep, not once
per shard), its submissions by value, and returns a `ShardResult` (counts, never the rows).

A shard's inputs are kept off the cyclic garbage collector's path: unpickled with it paused
(`ShardInputs`, `gc_paused`) and left out of its passes while the shard runs (`frozen_for_gc`).
At real size a task's index is ~100k objects: unpickling eight of them with the collector on cost
4x what it costs with it paused (each collection re-scans the growing heap), and grading with them
scanned in every full pass cost ~20 % more (the lab benchmark, in one process).
"""

from __future__ import annotations

import asyncio
import gc
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import ray

from evalcore.benchmark.instructions_only import audit_sources
from evalcore.call_accounting import CallCounts, awaiting_batch
from evalcore.config.models import TribunalConfig
from evalcore.grading.calls import total_cost
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.grounding import SourceIndex, index_sources
from evalcore.schema import Submission, Task
from evalcore.storage.store import write_shard
from jobs.sweep import vendor_pool


@dataclass(frozen=True)
class ShardResult:
    """What one `grade_shard` task reports to the driver: counts and cost, never the rows.

    Frozen and small on purpose (it crosses the object store once per shard); add a field here,
    fill it in `of`, and read it in `SweepSummary.add_shard`. `graded` counts the gradings that
    completed; a submission whose calls still wait on batches (`--detach`) is `awaiting` instead
    (its rows are written, as incomplete, and a later run grades it).
    """

    name: str
    graded: int
    complete: int
    incomplete: int
    too_long: int
    cost_usd: float
    calls: int
    node: str
    awaiting: int = 0
    counts: CallCounts = CallCounts()
    """The shard's call rows by who paid for them (`CallCounts`)."""

    @classmethod
    def of(cls, name: str, results: Sequence[GradeResult], node: str, since: float = 0.0) -> ShardResult:
        """The summary of a shard's gradings, for the command that started at `since` (unix s)."""
        waiting = [any(awaiting_batch(c) for c in r.calls) for r in results]
        statuses = [r.submission.status for r, w in zip(results, waiting, strict=True) if not w]
        calls = [c for r in results for c in r.calls]
        return cls(
            name=name,
            graded=len(statuses),
            complete=statuses.count("complete"),
            incomplete=statuses.count("incomplete"),
            too_long=statuses.count("too_long"),
            cost_usd=total_cost(calls),
            calls=len(calls),
            node=node,
            awaiting=sum(waiting),
            counts=CallCounts.of(calls, since),
        )

    def line(self) -> str:
        """One plain, parseable line (what the driver prints per shard without a live view):
        `cost_usd` is what this command paid; what it collected and what waits on batches follow."""
        c = self.counts
        extra = f" collected={c.collected} collected_usd={c.collected_usd:.4f}" if c.collected else ""
        extra += f" awaiting_batches={self.awaiting}" if self.awaiting else ""
        return (
            f"shard {self.name} graded={self.graded} complete={self.complete} incomplete={self.incomplete} "
            f"calls={self.calls} cost_usd={c.paid_usd:.4f}{extra}"
        )


@ray.remote(num_cpus=0.25, max_retries=2, num_returns=2)
def build_source_index(task: Task) -> tuple[SourceIndex, bool]:
    """One task's grounding index (what every submission of the task is checked against), and a
    token that is ready when the index is (`IndexRefs.built`)."""
    return index_sources(audit_sources(task)), True


@dataclass(frozen=True)
class IndexRefs:
    """The two results of one `build_source_index`: the index, and a token ready when it is.

    Why the token: `grade_shard` takes its indexes' tokens as arguments, so Ray starts it only once
    they are built. Taken inside the shard instead (`ray.get`), a shard waited for its builds in a
    worker process, and the CPU that worker gave back while blocked let Ray start another worker
    for the next task: on the lab benchmark 17 worker processes instead of 10, at ~1-2 s of CPU
    each to import Ray and Tribunal. The indexes themselves are still fetched inside the shard
    (`ShardInputs`: reused from the worker's previous shard, unpickled with the collector paused),
    not taken as arguments, which Ray would unpickle itself, again for every shard."""

    index: Any
    built: Any


class SourceIndexes:
    """The driver's references to each task's grounding index: built once, on the task's first shard.

    Why: a task's submissions (one per system) fall in several shards, graded by several worker
    processes; each worker building the index itself cost one build per submission at real size
    (0.15-0.5 s each, more than half of a zero-work sweep's CPU). Shards are cut task by task
    (`jobs.sweep.intake`), so a task's shards follow one another and its index is wanted only while they
    run. The last `keep` tasks' indexes are kept in the object store; an older one is built again
    if a later shard needs it (a shard in flight holds its own references): with shards cut system
    by system, as they once were, a benchmark of more than `keep` tasks built every index again
    for every system.
    """

    def __init__(self, task_refs: dict[str, Any], *, enabled: bool, keep: int = 256) -> None:
        self.task_refs = task_refs
        self.enabled = enabled
        self.keep = keep
        self.built = 0
        self._refs: OrderedDict[str, IndexRefs] = OrderedDict()

    def refs(self, task_ids: Iterable[str]) -> dict[str, IndexRefs]:
        """The index references for these tasks (none when grounding candidates are off)."""
        if not self.enabled:
            return {}
        out = {}
        for tid in dict.fromkeys(task_ids):
            refs = self._refs.get(tid)
            if refs is None:
                # num_returns=2: two references (Ray's stubs type it as one)
                index, built = cast("list[Any]", build_source_index.remote(self.task_refs[tid]))
                refs = IndexRefs(index, built)
                self.built += 1
            self._refs[tid] = refs
            self._refs.move_to_end(tid)
            out[tid] = refs
        while len(self._refs) > self.keep:
            self._refs.popitem(last=False)
        return out


def put_config(config: TribunalConfig) -> Any:
    """The configuration in the object store, once per sweep: every `grade_shard` gets this reference.

    Why: passed by value, the configuration (every judge, price table and prompt budget) was
    serialised into each shard's task spec, once per shard; as a reference it is stored once and
    each worker fetches it from its node's store."""
    return ray.put(config.model_dump(mode="json"))


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off within the block (as it was, after).

    For allocation bursts whose objects all stay alive (unpickling indexes): every collection the
    burst triggers re-scans what it has built so far and frees nothing. Reference counting still
    frees everything else; a cycle made meanwhile waits for the next collection."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def frozen_for_gc() -> Iterator[None]:
    """What is alive on entry is left out of the collector's passes until the block ends
    (`gc.freeze`), then handed back to it (`gc.unfreeze`: the oldest generation).

    Used for one shard: its tasks, indexes and configuration live until it ends, so scanning them
    in every full pass during grading frees nothing (on the lab benchmark those passes cost ~20 %
    of grading). Nothing is kept longer than the shard: cycles that were garbage on entry are
    collected after it, and what the shard itself allocates is collected as usual."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


K = TypeVar("K", bound=Hashable)


class ShardInputs:
    """A grading worker's tasks and grounding indexes, fetched from the object store by reference.

    The values of the previous shard this worker graded are kept and reused when a shard names the
    same references (the driver puts each task and each index once, so a reference names one value
    for the whole sweep): a task's shards follow one another (`jobs.sweep.intake`), and the sample's
    grade the same few tasks again and again. What the shard does not name is dropped, so a worker
    holds at most one shard's worth, as before. What is fetched is unpickled in one `ray.get`,
    with the collector paused (`gc_paused`)."""

    _kept: dict[bytes, Any] = {}

    @classmethod
    def fetch(cls, refs: Mapping[K, Any]) -> dict[K, Any]:
        """`refs` (any key -> object reference) resolved to their values."""
        keys = {k: ref.binary() for k, ref in refs.items()}
        missing = [k for k, b in keys.items() if b not in cls._kept]
        kept = {b: cls._kept[b] for b in keys.values() if b in cls._kept}
        cls._kept = {}  # the previous shard's values go now, before this shard's are unpickled
        if missing:
            with gc_paused():
                values = ray.get([refs[k] for k in missing])
            kept.update((keys[k], v) for k, v in zip(missing, values, strict=True))
        cls._kept = kept
        return {k: kept[b] for k, b in keys.items()}


@ray.remote(num_cpus=0.25, max_retries=2)
def grade_shard(
    run_uri: str,
    run_id: str,
    name: str,
    submissions: list[Submission],
    task_refs: dict[str, Any],
    index_refs: dict[str, Any],
    config_json: dict[str, Any],
    actors: dict[str, Any],
    since: float = 0.0,
    *indexes_built: bool,
) -> ShardResult:
    """Grade a shard of submissions and write its rows; return a small summary (not the rows).

    `index_refs` are the tasks' grounding indexes, built once per sweep (`SourceIndexes`), and
    `indexes_built` their tokens (`IndexRefs.built`: passed as references, so Ray starts the shard
    once they are built); `config_json` is passed as the reference `put_config` made (Ray hands
    the task its value); `since` is when the sweep's command started (its calls are told from
    collected ones: `CallCounts`)."""
    config = TribunalConfig.model_validate(config_json)
    inputs = ShardInputs.fetch({**{("task", t): r for t, r in task_refs.items()},
                                **{("index", t): r for t, r in index_refs.items()}})
    tasks: dict[str, Task] = {tid: inputs["task", tid] for tid in task_refs}
    indexes: dict[str, SourceIndex] = {tid: inputs["index", tid] for tid in index_refs}
    by_name = {cfg.name: cfg for cfg in config.vendors()}
    vendors = {n: vendor_pool.pool_vendor(actors[n], by_name[n]) for n in by_name}
    results: list[GradeResult] = []

    async def run_all() -> None:
        # Returns nothing: `asyncio.run` reprs its main task (result included) on the way out,
        # when it checks its SIGINT handler (a partial holding the task), and a shard's rows
        # took ~0.1 s to repr.
        results.extend(await asyncio.gather(
            *(grade_submission(tasks[s.task_id], s, config, vendors, run_id=run_id, source_index=indexes.get(s.task_id))
              for s in submissions)
        ))

    with frozen_for_gc():
        asyncio.run(run_all())
        write_shard(run_uri, name, {
            "submissions": [r.submission for r in results],
            "verdicts": [v for r in results for v in r.verdicts],
            "flags": [f for r in results for f in r.flags],
            "calls": [c for r in results for c in r.calls],
        })
    return ShardResult.of(name, results, ray.get_runtime_context().get_node_id(), since)
