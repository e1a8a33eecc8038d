"""The units of work a sweep puts on the cluster: `grade_shard` (grade a shard and write its rows)
and `build_source_index` (a task's grounding index, built once per sweep: `SourceIndexes`).

What crosses the object store is kept small and put once: a shard task gets references to its
tasks, to their indexes and to the configuration (the driver puts each once per sweep, not once
per shard), its submissions by value, and returns a `ShardResult` (counts, never the rows).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import ray

from evalcore.benchmark.instructions_only import audit_sources
from evalcore.config.models import TribunalConfig
from evalcore.grading.calls import total_cost
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.grounding import SourceIndex, index_sources, sharing_indexes
from evalcore.schema import Submission, Task
from evalcore.storage.store import write_shard
from jobs import vendor_pool


@dataclass(frozen=True)
class ShardResult:
    """What one `grade_shard` task reports to the driver: counts and cost, never the rows.

    Frozen and small on purpose (it crosses the object store once per shard); add a field here,
    fill it in `of`, and read it in `SweepSummary.add_shard`.
    """

    name: str
    graded: int
    complete: int
    incomplete: int
    too_long: int
    cost_usd: float
    calls: int
    node: str

    @classmethod
    def of(cls, name: str, results: Sequence[GradeResult], node: str) -> ShardResult:
        """The summary of a shard's gradings."""
        statuses = [r.submission.status for r in results]
        calls = [c for r in results for c in r.calls]
        return cls(
            name=name,
            graded=len(results),
            complete=statuses.count("complete"),
            incomplete=statuses.count("incomplete"),
            too_long=statuses.count("too_long"),
            cost_usd=total_cost(calls),
            calls=len(calls),
            node=node,
        )

    def line(self) -> str:
        """One plain, parseable line (what the driver prints per shard without a live view)."""
        return (
            f"shard {self.name} graded={self.graded} complete={self.complete} incomplete={self.incomplete} "
            f"calls={self.calls} cost_usd={self.cost_usd:.4f}"
        )


@ray.remote(num_cpus=0.25, max_retries=2)
def build_source_index(task: Task) -> SourceIndex:
    """One task's grounding index (what every submission of the task is checked against)."""
    return index_sources(audit_sources(task))


class SourceIndexes:
    """The driver's references to each task's grounding index: built once, on the task's first shard.

    Why: a shard holds submissions in stream order (a system's tasks one after another), so one
    task's submissions fall in as many shards as there are systems; each worker building the index
    itself cost one build per submission at real size (0.15-0.5 s each, more than half of a
    zero-work sweep's CPU). The last `keep` tasks' indexes are kept in the object store; an older
    one is built again if a later shard needs it (a shard in flight holds its own references).
    """

    def __init__(self, task_refs: dict[str, Any], *, enabled: bool, keep: int = 256) -> None:
        self.task_refs = task_refs
        self.enabled = enabled
        self.keep = keep
        self.built = 0
        self._refs: OrderedDict[str, Any] = OrderedDict()

    def refs(self, task_ids: Iterable[str]) -> dict[str, Any]:
        """The index references for these tasks (none when grounding candidates are off)."""
        if not self.enabled:
            return {}
        out = {}
        for tid in dict.fromkeys(task_ids):
            ref = self._refs.get(tid)
            if ref is None:
                ref = build_source_index.remote(self.task_refs[tid])
                self.built += 1
            self._refs[tid] = ref
            self._refs.move_to_end(tid)
            out[tid] = ref
        while len(self._refs) > self.keep:
            self._refs.popitem(last=False)
        return out


def put_config(config: TribunalConfig) -> Any:
    """The configuration in the object store, once per sweep: every `grade_shard` gets this reference.

    Why: passed by value, the configuration (every judge, price table and prompt budget) was
    serialised into each shard's task spec, once per shard; as a reference it is stored once and
    each worker fetches it from its node's store."""
    return ray.put(config.model_dump(mode="json"))


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
) -> ShardResult:
    """Grade a shard of submissions and write its rows; return a small summary (not the rows).

    `index_refs` are the tasks' grounding indexes, built once per sweep (`SourceIndexes`);
    `config_json` is passed as the reference `put_config` made (Ray hands the task its value)."""
    config = TribunalConfig.model_validate(config_json)
    tasks: dict[str, Task] = {tid: ray.get(ref) for tid, ref in task_refs.items()}
    indexes = dict(zip(index_refs, ray.get(list(index_refs.values())), strict=True))
    by_name = {cfg.name: cfg for cfg in config.vendors()}
    vendors = {n: vendor_pool.pool_vendor(actors[n], by_name[n]) for n in by_name}

    async def run_all() -> list[GradeResult]:
        return await asyncio.gather(
            *(grade_submission(tasks[s.task_id], s, config, vendors, run_id=run_id) for s in submissions)
        )

    with sharing_indexes((audit_sources(tasks[tid]), index) for tid, index in indexes.items()):
        results = asyncio.run(run_all())
    write_shard(run_uri, name, {
        "submissions": [r.submission for r in results],
        "verdicts": [v for r in results for v in r.verdicts],
        "flags": [f for r in results for f in r.flags],
        "calls": [c for r in results for c in r.calls],
    })
    return ShardResult.of(name, results, ray.get_runtime_context().get_node_id())
