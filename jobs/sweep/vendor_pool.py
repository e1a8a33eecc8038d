"""A vendor account carried by N `VendorActor`s: creating them, routing to them, adding them up.

Why per account: entries that draw on one account (same adapter, endpoint and key variable: the
OpenAI judge and the auditor by default) are served by the same actor(s), on one budget for the
whole account, so the share of each follows its demand and the sum never exceeds the account
(`jobs/sweep/actors.py`). Each entry still has its own `VendorPool` (the same handles for entries of
one account), its own store, batch queue and statistics; every call names its entry.

Why N: one actor does all of its account's client work in one process, which caps the account at
what one process carries (`benchmarks/actor_ceiling.py`). An account whose configured rate needs
more (`evalcore.vendors.sharding.actor_count` of `account_config`) gets N actors, spread over the
cluster's nodes (round-robin, `spread_nodes`), each with 1/N of the account's limits; every
request goes to the actor its request hash names, so identical requests meet at one actor and are
never paid twice. The proof that the cluster never sends more than the account's limit is in
`evalcore.vendors.sharding`.

With N = 1 and one entry on its account the pool is the single actor of before, with the same
name, and its `Vendor` is a plain `RemoteVendor`. Batch mode keeps one actor per account: a batch
queue must see every request of its entry to fill batches, and batch requests do not count
toward the online rate limits.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from evalcore.config.models import TribunalConfig, VendorConfig
from evalcore.errors import VendorError
from evalcore.vendors.protocol import JudgeReply, JudgeRequest, T
from evalcore.vendors.sharding import account_config, actor_count, group_by_account, shard_of
from jobs.sweep.actors import Binding, RemoteVendor, VendorActor, forget_binding

#: Counters that are not sums over the actors of an entry (the rest of `VendorActor.stats` are).
_NOT_SUMMED = {"uptime_s": max}


@dataclass(frozen=True)
class VendorPool:
    """The actors serving one vendor entry: its account's (picklable: handed to every grading task)."""

    name: str
    handles: tuple[Any, ...]
    sdks: tuple[str, ...] = ()
    """The adapters its one actor has imported, when that actor may serve the driver's next sweep
    (`park`); empty for a pool that is killed with its sweep."""

    @property
    def size(self) -> int:
        return len(self.handles)


def actor_name(run_id: str, vendor: str, index: int, n: int) -> str:
    """Named per run so a driver restart finds them; the single actor keeps its name of before.

    `vendor` is the entry's name, or the names of an account's entries joined by `+`."""
    base = f"tribunal:{run_id}:{vendor}"
    return base if n == 1 else f"{base}:{index}of{n}"


def start_pools(
    config: TribunalConfig, run_id: str, stored_runs: list[str], ledger: str | None = None, detach: bool = False,
    gated: bool = False,
) -> dict[str, VendorPool]:
    """N actors per vendor account (N = 1 for most; `actor_count`), spread over nodes; each entry's
    pool holds its account's actors; `gated`: they hold grading calls until `open_gates`.

    In batch mode each account has one actor (module doc)."""
    batch = config.batch.model_dump(mode="json") if config.batch.enabled else None
    pools: dict[str, VendorPool] = {}
    for members in group_by_account(config.vendors()):
        handles = start_account(members, run_id, stored_runs, ledger, batch, detach, 1 if batch is not None else None,
                                gated, reuse=True)
        sdks = sdks_of(members) if len(handles) == 1 else ()
        pools.update({m.name: VendorPool(m.name, handles, sdks) for m in members})
    return {cfg.name: pools[cfg.name] for cfg in config.vendors()}


def start_pool(
    cfg: VendorConfig,
    run_id: str,
    stored_runs: list[str],
    ledger: str | None = None,
    batch: dict[str, Any] | None = None,
    detach: bool = False,
    n: int | None = None,
) -> VendorPool:
    """The actors of one entry alone on its account: `n`, or `actor_count(cfg)`."""
    return VendorPool(cfg.name, start_account([cfg], run_id, stored_runs, ledger, batch, detach, n))


def start_account(
    members: list[VendorConfig],
    run_id: str,
    stored_runs: list[str],
    ledger: str | None = None,
    batch: dict[str, Any] | None = None,
    detach: bool = False,
    n: int | None = None,
    gated: bool = False,
    *,
    reuse: bool = False,
) -> tuple[Any, ...]:
    """The actors of one account serving its entries `members`: `n`, or `actor_count` of the
    account's whole rate; more than one are spread over the nodes. `reuse`: a single actor is the
    one an earlier sweep of this driver parked for these SDKs, when there is one (`park`)."""
    n = actor_count(account_config(members), cluster_cores()) if n is None else n
    label = "+".join(m.name for m in members)
    names = [actor_name(run_id, label, i, n) for i in range(n)]
    nodes = spread_nodes() if n > 1 else []
    cfgs = [m.model_dump(mode="json") for m in members]
    if reuse and n == 1 and (parked := _unpark(sdks_of(members), Binding(cfgs, run_id, stored_runs, ledger, batch,
                                                                           detach, n, [], gated))) is not None:
        return (parked,)
    handles = []
    for i, name in enumerate(names):
        options: dict[str, Any] = {"name": name, "get_if_exists": True, "lifetime": None}
        if nodes:  # round-robin over the nodes (hard affinity: soft affinity was seen to ignore the node)
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(nodes[i % len(nodes)], soft=False)
        siblings = [other for other in names if other != name]  # told of a 429: the account is exhausted
        handles.append(VendorActor.options(**options).remote(  # type: ignore[attr-defined]
            cfgs, run_id, stored_runs, ledger, batch, detach, n, siblings, gated,
        ))
    return tuple(handles)


def sdks_of(members: list[VendorConfig]) -> tuple[str, ...]:
    """What an account's actor imports at its start: its entries' adapters (each an SDK)."""
    return tuple(sorted({m.adapter for m in members}))


REBIND_TIMEOUT_S = 60.0
"""How long a parked actor has to take a new sweep before a new one is started instead."""

PARK_IDLE_S = 120.0
"""How long a parked actor waits for the driver's next sweep before it is killed: an idle Ray
worker still wakes every 10 ms (~10 ms of CPU a second, `benchmarks/local_ray_idle.py
--live-workers`), and a driver that has stopped sweeping keeps no process for nothing."""


class _Parking:
    """The actors a finished sweep of this driver left for its next one, by the SDKs they imported,
    each with the timer that kills it after `PARK_IDLE_S`; and the Ray connection they belong to
    (a handle means nothing once the driver has reconnected)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.actors: dict[tuple[str, ...], tuple[Any, threading.Timer]] = {}
        self.connection: str | None = None

    def take(self, sdks: tuple[str, ...], here: str) -> Any | None:
        """The actor parked for `sdks` on connection `here`, no longer parked (None: none)."""
        with self.lock:
            self._on(here)
            handle, timer = self.actors.pop(sdks, (None, None))
        if timer is not None:
            timer.cancel()
        return handle

    def put(self, sdks: tuple[str, ...], handle: Any, here: str) -> bool:
        """Park `handle` for `sdks` (False: one is parked for them already)."""
        with self.lock:
            self._on(here)
            if sdks in self.actors:
                return False
            timer = threading.Timer(PARK_IDLE_S, self._expire, (sdks, handle))
            timer.daemon = True
            self.actors[sdks] = (handle, timer)
        timer.start()
        return True

    def _expire(self, sdks: tuple[str, ...], handle: Any) -> None:
        with self.lock:
            if self.actors.get(sdks, (None,))[0] is not handle:
                return  # taken by a sweep meanwhile
            del self.actors[sdks]
        try:
            retire(handle)
        except Exception:  # the driver disconnected meanwhile: the actor went with its job
            pass

    def _on(self, here: str) -> None:
        """Called with the lock held: what was parked on another connection is forgotten."""
        if self.connection != here:
            self._drop()
            self.connection = here

    def _drop(self) -> None:
        for _, timer in self.actors.values():
            timer.cancel()
        self.actors.clear()

    def parked(self) -> dict[tuple[str, ...], Any]:
        """What is parked now, by SDKs (for tests and benchmarks)."""
        with self.lock:
            return {sdks: handle for sdks, (handle, _) in self.actors.items()}

    def clear(self) -> None:
        """Forget every parked actor (their timers stopped; the actors are left to their job)."""
        with self.lock:
            self._drop()


parking = _Parking()


def _connection() -> str:
    ctx = ray.get_runtime_context()
    return f"{ctx.gcs_address}/{ctx.get_job_id()}/{ctx.get_node_id()}"


def park(pool: VendorPool) -> bool:
    """Keep `pool`'s closed actor for the driver's next sweep, instead of killing it; False when it
    cannot be kept (several actors, or one is parked for these SDKs already), and the caller kills it.

    Why: a driver that runs several sweeps (a notebook, a campaign script, the test suite) paid a new
    process per account per sweep, importing Ray, Tribunal and an SDK again (3.6 CPU-s for the
    default panel, `benchmarks/actor_start.py`). A parked actor is idle, has let go of its sweep's
    clients and stores (`VendorActor.close`), refuses calls until its next sweep binds it
    (`VendorActor.rebind`), is killed after `PARK_IDLE_S` unused, and dies with the driver, as any
    actor of it."""
    if not pool.sdks or pool.size != 1:
        return False
    return parking.put(pool.sdks, pool.handles[0], _connection())


def _unpark(sdks: tuple[str, ...], binding: Binding) -> Any | None:
    """The actor parked for `sdks`, bound to a new sweep (`VendorActor.rebind`); None when there is
    none, or it did not answer (it is killed, and the caller starts a new one)."""
    handle = parking.take(sdks, _connection())
    if handle is None:
        return None
    try:
        ray.get(handle.rebind.remote(*binding), timeout=REBIND_TIMEOUT_S)
    except Exception:  # dead or stuck: a new actor serves this sweep
        retire(handle)
        return None
    return handle


def retire(handle: Any) -> None:
    """Kill an actor, and forget the sweep it was last bound to (`VendorActor.rebind`)."""
    forget_binding(handle._actor_id.hex())
    ray.kill(handle)


def cluster_cores() -> int:
    """The CPUs of the whole cluster (at least 1): the most actors an account is given from its rate."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


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
    """The `Vendor` protocol over the N actors of one entry's account: each request to its hash's actor."""

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
    """One `stats` call per (entry, actor) of every pool, in pool order (resolve with `ray.get`):
    an account's actor reports each of its entries apart."""
    return [h.stats.remote(p.name) for p in pools.values() for h in p.handles]


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


def open_gates(pools: dict[str, VendorPool]) -> None:
    """The sweep's preflight passed: every actor sends the grading calls it holds (`VendorActor.open_gate`)."""
    ray.get([h.open_gate.remote() for h in handles(pools)])


def handles(pools: dict[str, VendorPool]) -> Iterable[Any]:
    """Every actor of every pool, once (to close and kill them; an account's entries share theirs)."""
    seen: set[Any] = set()
    for p in pools.values():
        for h in p.handles:
            if h not in seen:
                seen.add(h)
                yield h
