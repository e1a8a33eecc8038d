"""A vendor entry carried by N `VendorActor`s: creating them, routing to them, adding them up.

Why: one actor per vendor entry does all of its vendor's client work in one process, which caps
the entry at what one process carries (`benchmarks/actor_ceiling.py`). An entry whose configured
rate needs more (`evalcore.vendors.sharding.actor_count`) gets N actors, spread over the cluster's
nodes (round-robin, `spread_nodes`), each with 1/N of the entry's limits; every request goes to the actor its
request hash names, so identical requests meet at one actor and are never paid twice. The proof
that the cluster never sends more than the entry's limit is in `evalcore.vendors.sharding`.

With N = 1 the pool is the single actor of before, with the same name, and its `Vendor` is a
plain `RemoteVendor`. Batch mode keeps one actor per entry: a batch queue must see every request
of its vendor to fill batches, and batch requests do not count toward the online rate limits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from evalcore.config import TribunalConfig, VendorConfig
from evalcore.errors import VendorError
from evalcore.vendors.base import JudgeReply, JudgeRequest, T
from evalcore.vendors.sharding import actor_count, shard_of
from jobs.actors import RemoteVendor, VendorActor

#: Counters that are not sums over the actors of an entry (the rest of `VendorActor.stats` are).
_NOT_SUMMED = {"uptime_s": max}


@dataclass(frozen=True)
class VendorPool:
    """The actors of one vendor entry (picklable: handed to every grading task)."""

    name: str
    handles: tuple[Any, ...]

    @property
    def size(self) -> int:
        return len(self.handles)


def actor_name(run_id: str, vendor: str, index: int, n: int) -> str:
    """Named per run so a driver restart finds them; the single actor keeps its name of before."""
    base = f"tribunal:{run_id}:{vendor}"
    return base if n == 1 else f"{base}:{index}of{n}"


def start_pools(
    config: TribunalConfig, run_id: str, stored_runs: list[str], ledger: Any = None, detach: bool = False
) -> dict[str, VendorPool]:
    """N actors per configured vendor entry (N = 1 for most; `actor_count`), spread over nodes.

    In batch mode each entry has one actor (module doc)."""
    batch = config.batch.model_dump(mode="json") if config.batch.enabled else None
    return {
        cfg.name: start_pool(cfg, run_id, stored_runs, ledger, batch, detach, 1 if batch is not None else None)
        for cfg in config.vendors()
    }


def start_pool(
    cfg: VendorConfig,
    run_id: str,
    stored_runs: list[str],
    ledger: Any = None,
    batch: dict[str, Any] | None = None,
    detach: bool = False,
    n: int | None = None,
) -> VendorPool:
    """The actors of one entry: `n`, or `actor_count(cfg)`; more than one are spread over the nodes."""
    n = actor_count(cfg) if n is None else n
    names = [actor_name(run_id, cfg.name, i, n) for i in range(n)]
    nodes = spread_nodes() if n > 1 else []
    handles = []
    for i, name in enumerate(names):
        options: dict[str, Any] = {"name": name, "get_if_exists": True, "lifetime": None}
        if nodes:  # round-robin over the nodes (hard affinity: soft affinity was seen to ignore the node)
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(nodes[i % len(nodes)], soft=False)
        siblings = [other for other in names if other != name]  # told of a 429: the account is exhausted
        handles.append(VendorActor.options(**options).remote(  # type: ignore[attr-defined]
            cfg.model_dump(mode="json"), run_id, stored_runs, ledger, batch, detach, n, siblings,
        ))
    return VendorPool(cfg.name, tuple(handles))


def spread_nodes() -> list[str]:
    """The nodes an entry's actors are spread over, round-robin: the alive nodes with CPUs (an
    actor's client work needs one; a head started with 0 CPUs is left out), else every alive node.

    Explicit placement rather than Ray's `SPREAD` strategy: for actors that ask for no resources
    (`num_cpus=0`) `SPREAD` is best effort and was seen to put three actors on one node (Ray 2.60,
    local 3-node cluster), and so was a soft node affinity. The affinity is hard, so an actor
    whose node dies cannot be restarted elsewhere in this sweep: its calls fail, their shards stay
    pending, and the next run (same command) places the actors on the nodes alive then.
    """
    alive = [node for node in ray.nodes() if node.get("Alive")]
    with_cpu = [node for node in alive if node.get("Resources", {}).get("CPU", 0) > 0]
    return sorted(str(node["NodeID"]) for node in (with_cpu or alive))


class PooledVendor:
    """The `Vendor` protocol over the N actors of one entry: each request to its hash's actor."""

    def __init__(self, pool: VendorPool, cfg: VendorConfig) -> None:
        self.name = cfg.name
        self.family = cfg.family
        self.model = cfg.model
        self.parts = [RemoteVendor(h, cfg) for h in pool.handles]

    async def complete_many(self, requests: list[JudgeRequest], schema: type[T]) -> list[JudgeReply[T] | VendorError]:
        """One Ray call per actor that has requests of this batch; replies in the requests' order."""
        n = len(self.parts)
        groups: dict[int, list[int]] = {}
        for i, r in enumerate(requests):
            groups.setdefault(shard_of(r.request_hash, n), []).append(i)
        answers = await asyncio.gather(
            *(self.parts[k].complete_many([requests[i] for i in idx], schema) for k, idx in groups.items())
        )
        out: list[JudgeReply[T] | VendorError | None] = [None] * len(requests)
        for idx, replies in zip(groups.values(), answers, strict=True):
            for i, reply in zip(idx, replies, strict=True):
                out[i] = reply
        return [r for r in out if r is not None]

    async def complete(self, request: JudgeRequest, schema: type[T]) -> JudgeReply[T]:
        """A single call (raises on failure), for the protocol's sake."""
        return await self.parts[shard_of(request.request_hash, len(self.parts))].complete(request, schema)

    async def aclose(self) -> None:
        """The actors own the clients; nothing to close here."""


def pool_vendor(pool: VendorPool, cfg: VendorConfig) -> RemoteVendor | PooledVendor:
    """What grading workers talk to: the plain `RemoteVendor` for one actor, else a `PooledVendor`."""
    if pool.size == 1:
        return RemoteVendor(pool.handles[0], cfg)
    return PooledVendor(pool, cfg)


def stats_refs(pools: dict[str, VendorPool]) -> list[Any]:
    """One `stats` call per actor of every pool, in pool order (resolve with `ray.get`)."""
    return [h.stats.remote() for p in pools.values() for h in p.handles]


def add_up(pools: dict[str, VendorPool], stats: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Each entry's statistics over its actors (sums; the uptime is the longest), and the actor count.

    Stats/progress, the sweep's summary and the cost shown are therefore per entry, as with one actor.
    """
    out: dict[str, dict[str, float]] = {}
    it = iter(stats)
    for name, pool in pools.items():
        total: dict[str, float] = {}
        for s in (next(it) for _ in pool.handles):
            for k, v in s.items():
                total[k] = _NOT_SUMMED[k](total[k], v) if k in _NOT_SUMMED and k in total else total.get(k, 0) + v
        if pool.size > 1:
            total["actors"] = float(pool.size)
        out[name] = total
    return out


def handles(pools: dict[str, VendorPool]) -> Iterable[Any]:
    """Every actor of every pool (to close and kill them)."""
    for p in pools.values():
        yield from p.handles
