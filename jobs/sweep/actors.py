"""Ray actors: one async `VendorActor` per vendor account, and the proxy the graders talk to.

Why one actor per account: the actor holds the SDK clients of the entries on that account
(created inside the actor's own event loop), their retry policy and **one rate budget for the
whole account** — and because it is the only caller of the account in the cluster, that budget
*is* the account's cluster-wide budget. Two entries on one account (the default OpenAI judge and
the auditor: same adapter, endpoint and key variable) are served by the same actor on that one
budget, so each entry's share follows its demand (an idle auditor leaves the judge the whole
limit) and their sum is the account's limit by construction. Everything else stays per entry:
the store of paid calls (this run's and `--reuse` runs'), so a call already paid for is never
sent again, whatever worker asks; the statistics; and in batch mode the batch queue and journal
(`BatchingVendor`): requests from every shard in flight meet there, so one batch spans many
submissions. Calls into it are coarse (every request a shard's submissions make of one entry in
one turn of the worker's event loop, `RemoteVendor`), name their entry, and are fanned out in the
actor's event loop.

An account whose rate one actor cannot carry runs N of these (`jobs/sweep/vendor_pool.py`): each is
built with `shards=N` and holds 1/N of the account's limits (`evalcore.vendors.sharding`), so
the N together are that account's cluster-wide budget.
"""

from __future__ import annotations

import asyncio
import gc
import json
import operator
import time
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import ray
from ray.experimental import internal_kv

from evalcore.config.models import BatchConfig, VendorConfig
from evalcore.cost.cost_cap import CapState, CostLedger
from evalcore.errors import ConfigError, VendorError
from evalcore.storage.store import stored_calls
from evalcore.vendors.batch.queue import BatchingVendor
from evalcore.vendors.budget import RateBudget
from evalcore.vendors.protocol import JudgeReply, JudgeRequest, T, Usage, Vendor
from evalcore.vendors.registry import import_adapter
from evalcore.vendors.reuse import ReusingVendor
from evalcore.vendors.sharding import ShardBudget
from evalcore.vendors.stack import BatchMode, VendorStack, build_stacks
from jobs.sweep.metrics import VendorMetrics, tally


def _zero_stats() -> dict[str, float]:
    return {
        "requests": 0,
        "paid_calls": 0,
        "reused_calls": 0,
        "failed_calls": 0,
        "rate_limited": 0,
        "attempts": 0,
        "cost_usd": 0.0,
        "input_tokens": 0,
        "output_tokens": 0,
    }


_REQUEST_FIELDS = tuple(JudgeRequest.model_fields)
_request_values = operator.attrgetter(*_REQUEST_FIELDS)

PackedRequest = tuple[Any, ...]
"""A `JudgeRequest` as it crosses Ray: its field values, in `JudgeRequest.model_fields` order."""
PackedReply = tuple[str, tuple[int, ...], tuple[Any, ...]] | VendorError
"""A reply as it crosses Ray (`pack_replies`), a failure as the `VendorError` itself."""


def pack_requests(requests: Sequence[JudgeRequest]) -> list[PackedRequest]:
    """Requests as plain tuples for one actor call; equal strings become one object.

    Why: Ray pickles arguments with cloudpickle, whose per-object hooks run in Python for every
    pydantic model (and its field dicts) but are skipped for tuples and strings; and pickle writes
    an object it has seen once, so a submission's criteria, which share one system prompt and one
    shared prefix (the deliverables: most of each prompt), carry that text once instead of once
    per criterion."""
    canon: dict[str, str] = {}
    return [tuple(canon.setdefault(v, v) if type(v) is str else v for v in _request_values(r)) for r in requests]


def unpack_requests(packed: Sequence[PackedRequest]) -> list[JudgeRequest]:
    """`pack_requests` undone: the same requests (validated again: pydantic's validation of these
    few fields is faster than its unvalidated `model_construct`)."""
    return [JudgeRequest(**dict(zip(_REQUEST_FIELDS, values, strict=True))) for values in packed]


_REPLY_FIELDS = tuple(f for f in JudgeReply.model_fields if f not in ("output", "usage"))
_USAGE_FIELDS = tuple(Usage.model_fields)
_reply_values = operator.attrgetter(*_REPLY_FIELDS)
_usage_values = operator.attrgetter(*_USAGE_FIELDS)


def pack_replies(replies: Sequence[JudgeReply[Any] | VendorError]) -> list[PackedReply]:
    """Replies for the trip back: each `JudgeReply` as a tuple (its output as JSON, its usage and
    its other fields as plain values), each failure as it is.

    Why: cloudpickling a reply's three models cost several times pydantic's JSON serialiser (in
    Rust), and the tuple is a third of the reply's own JSON (field names are not repeated), which
    keeps a shard's batch of replies under Ray's 100 KB inline limit: a larger result goes through
    the object store (~1 ms of the raylet's CPU and as much in the two processes, per call)."""
    return [r if isinstance(r, VendorError) else
            (r.output.model_dump_json(), _usage_values(r.usage), _reply_values(r)) for r in replies]


def unpack_replies(packed: Sequence[PackedReply], schema: type[T]) -> list[JudgeReply[T] | VendorError]:
    """`pack_replies` undone: the same replies, their output as `schema` (an answer schema is
    plain JSON data, so the round trip gives back equal values: the reuse store relies on it too)."""
    reply_type = JudgeReply[schema]  # type: ignore[valid-type]
    return [r if isinstance(r, VendorError) else reply_type(
        output=schema.model_validate_json(r[0]), usage=Usage(**dict(zip(_USAGE_FIELDS, r[1], strict=True))),
        **dict(zip(_REPLY_FIELDS, r[2], strict=True))) for r in packed]


class _Entry:
    """What stays per entry inside an account's actor: its vendor (store, batch queue) and counters."""

    def __init__(self, cfg: VendorConfig) -> None:
        self.cfg = cfg
        self.vendor: ReusingVendor | None = None
        self.batching: BatchingVendor | None = None
        self.adapter: Vendor | None = None  # the online adapter (its wire slots: `wire_stats`)
        self.stats: dict[str, float] = _zero_stats()


def _reconstructed() -> bool:
    """Whether Ray restarted this actor. Ray's property reads its own deprecated `actor_id` and
    warns, once per actor, into every actor's log: the warning is Ray's, silenced here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return bool(ray.get_runtime_context().was_current_actor_reconstructed)


def _freeze() -> None:
    """What exists once an actor's stacks are built lives as long as the actor (modules, clients,
    budget, the stored calls of earlier runs): out of the cyclic collector's passes from here on,
    which otherwise re-scanned all of it every full pass while calls stream through. Done once
    they are built, or, for a gated actor, when its gate opens (`VendorActor.open_gate`): before
    the grading calls stream, after the preflight (a full collection is ~0.05 CPU-s of the start)."""
    gc.collect()
    gc.freeze()


class Binding(NamedTuple):
    """What a sweep gives its vendor actor: `VendorActor`'s constructor arguments, in order (and
    `VendorActor.rebind`'s, when a kept actor takes the driver's next sweep)."""

    cfg: dict[str, Any] | list[dict[str, Any]]
    run_id: str
    stored_run_uris: list[str]
    ledger: str | None = None
    batch: dict[str, Any] | None = None
    detach: bool = False
    shards: int = 1
    siblings: list[str] | None = None
    gated: bool = False


BINDING_NAMESPACE = "tribunal-actor-bindings"
"""Where a rebound actor keeps the arguments of its current sweep (Ray's key-value store in the
GCS, keyed by actor id): an actor that Ray restarts re-runs its constructor with the arguments it
was *created* with, which after `VendorActor.rebind` are an earlier sweep's."""


def record_binding(binding: Binding) -> None:
    """In the actor (`rebind`): the sweep a restart of this actor must come back to."""
    actor_id = ray.get_runtime_context().get_actor_id()
    if actor_id is not None:
        internal_kv._internal_kv_put(actor_id, json.dumps(list(binding)), namespace=BINDING_NAMESPACE)


def current_binding() -> Binding | None:
    """In the actor: the arguments of the sweep it was last bound to (None: never rebound)."""
    actor_id = ray.get_runtime_context().get_actor_id()
    if actor_id is None or not internal_kv._internal_kv_initialized():
        return None
    raw = internal_kv._internal_kv_get(actor_id, namespace=BINDING_NAMESPACE)
    return None if raw is None else Binding(*json.loads(raw))


def forget_binding(actor_id: str) -> None:
    """In the driver, as it kills the actor: its binding goes with it."""
    if internal_kv._internal_kv_initialized():
        internal_kv._internal_kv_del(actor_id, namespace=BINDING_NAMESPACE)


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=3, max_concurrency=2000)  # type: ignore[call-overload]
class VendorActor:
    """Holds one account's clients, its one budget, the retry policy and each entry's paid-call store."""

    def __init__(
        self,
        cfg: dict[str, Any] | list[dict[str, Any]],
        run_id: str,
        stored_run_uris: list[str],
        ledger: Any = None,
        batch: dict[str, Any] | None = None,
        detach: bool = False,
        shards: int = 1,
        siblings: list[str] | None = None,
        gated: bool = False,
    ) -> None:
        binding = Binding(cfg, run_id, stored_run_uris, ledger, batch, detach, shards, siblings, gated)
        restarted = _reconstructed()
        if restarted:  # bound to a later sweep since it started (`rebind`): Ray passes the first arguments again
            binding = current_binding() or binding
        self._bind(binding, restarted=restarted)

    def _bind(self, binding: Binding, *, restarted: bool = False) -> None:
        """Everything that belongs to one sweep: its entries, limits, stores, ledger, batch mode, gate."""
        cfg, run_id, stored_run_uris, ledger, batch, detach, shards, siblings, gated = binding
        cfgs = [VendorConfig.model_validate(c) for c in (cfg if isinstance(cfg, list) else [cfg])]
        self.entries = {c.name: _Entry(c) for c in cfgs}  # the entries of one account
        self.cfg = cfgs[0]
        self.shards = shards  # one of N actors of this account: 1/N of its limits (jobs/sweep/vendor_pool.py)
        self.siblings = siblings or []  # names of the account's other actors: told of a 429
        self._sibling_handles: dict[str, Any] = {}
        self._telling: set[asyncio.Future[Any]] = set()
        # the name of the sweep's CostCapActor when it has --max-cost: a name, not a handle, since
        # an actor that restarts (max_restarts) must not hold another actor's handle among its
        # constructor arguments (Ray logs an ERROR line on the driver's terminal for each)
        self.ledger: str | None = ledger
        self.run_id = run_id
        self.stored_run_uris = stored_run_uris  # this run's folder first
        self.batch = BatchConfig.model_validate(batch) if batch else None
        self.detach = detach
        self.budget: RateBudget | None = None  # the account's one budget, once the clients exist
        self.started = time.time()
        self.metrics = VendorMetrics(run_id, list(self.entries))  # Ray metrics (jobs/sweep/metrics.py)
        # `gated`: grading calls wait here until the driver says the preflight passed (`open_gate`).
        # Why here: the sweep sends its first shards before the preflight, so their workers start,
        # their indexes are built and their prompts made while it is on the wire, and their calls
        # go out the moment it has passed. An actor restarted by Ray (a crash mid-sweep) opens at
        # once: the driver opens a gate only once.
        self._gate = asyncio.Event()
        if not gated or restarted:
            self._gate.set()
        self._built = False  # the account's stacks exist (`_vendor`)
        self._closed = False  # the sweep is over (`close`): no stack is built again until `rebind`
        for c in cfgs:  # the SDKs now, while the driver reads and prices the submissions
            import_adapter(c.adapter)

    async def rebind(self, *binding: Any) -> None:
        """Serve another sweep from this process, as if started with `binding` (`Binding`: the
        constructor's arguments, in order): a driver that runs several sweeps keeps its actors
        (`jobs.sweep.vendor_pool.park`).

        Why: starting an actor is a new process importing Ray, Tribunal and an SDK (0.9-2.7 CPU-s
        by SDK and host, `benchmarks/actor_start.py`). Everything of the last sweep (its clients,
        closed by `close`, its stores, counters, gate and budget) is dropped here and built again
        lazily, as in a new actor; what was frozen for it (`_freeze`) is handed back to the
        collector. Only an actor whose `close` answered is rebound."""
        bound = Binding(*binding)
        record_binding(bound)
        gc.unfreeze()
        self._bind(bound)
        gc.collect()

    def _entry(self, name: str | None) -> _Entry:
        """The entry a call names (None: the only or first one, for single-entry callers)."""
        if name is None:
            return next(iter(self.entries.values()))
        try:
            return self.entries[name]
        except KeyError:
            raise ConfigError(
                f"vendor actor: no entry {name!r} here (serves {', '.join(self.entries)})"
            ) from None

    async def _vendor(self, name: str | None = None) -> ReusingVendor:
        # Created lazily inside the actor's event loop: SDK clients are tied to one loop. All the
        # account's stacks are built at once, their adapters on one budget (`build_stacks`).
        entry = self._entry(name)
        if self._closed:
            raise ConfigError(f"vendor actor of {', '.join(self.entries)}: closed at the end of run {self.run_id}")
        if entry.vendor is None:
            ledger = RemoteLedger(self.ledger) if self.ledger is not None else None
            batch = (BatchMode(self.batch, self.stored_run_uris[0], self.run_id, self.detach)
                     if self.batch is not None else None)
            stacks = build_stacks([e.cfg for e in self.entries.values()], run_id=self.run_id, shards=self.shards,
                                  stored=lambda name: stored_calls(self.stored_run_uris, name), ledger=ledger,
                                  batch=batch)
            for e in self.entries.values():
                self._adopt(e, stacks[e.cfg.name])
            self._built = True
            if self._gate.is_set():
                _freeze()
        assert entry.vendor is not None
        return entry.vendor

    def _adopt(self, entry: _Entry, stack: VendorStack) -> None:
        """Keep an entry's stack (`evalcore.vendors.stack`), and the account's budget, told of a
        sibling actor's 429 when the account is spread over N actors."""
        entry.adapter, entry.batching, entry.vendor = stack.adapter, stack.batching, stack.vendor
        budget = getattr(stack.adapter, "budget", None)
        if isinstance(budget, RateBudget):
            self.budget = budget
            if isinstance(budget, ShardBudget) and self.siblings:
                budget.on_account_429 = self._tell_siblings

    async def complete_many(
        self, requests: list[JudgeRequest], schema: type[T], entry: str | None = None
    ) -> list[JudgeReply[T] | VendorError]:
        """The requests of one coalesced call of entry `entry` (`RemoteVendor`); replies in order,
        failures in place. Grading calls wait for the gate (`open_gate`); a preflight does not."""
        vendor = await self._vendor(entry)
        if not self._gate.is_set() and any(r.purpose != "preflight" for r in requests):
            await self._gate.wait()
        results = await vendor.complete_many(requests, schema)
        if self._telling:  # a 429 of ours has reached the account's other actors before we answer
            await asyncio.gather(*list(self._telling), return_exceptions=True)
        e = self._entry(entry)
        tallies = tally(requests, results)  # counted once, for the Ray metrics and the statistics
        self.metrics.calls(e.cfg.name, tallies)  # recorded locally: a few records per call
        s = e.stats
        s["requests"] += len(requests)
        for t in tallies.values():
            s["paid_calls"] += t.paid
            s["reused_calls"] += t.reused
            s["failed_calls"] += t.failed
            s["attempts"] += t.attempts
            s["rate_limited"] += t.rate_limited
            s["cost_usd"] += t.cost
            s["input_tokens"] += t.input
            s["output_tokens"] += t.output
        return results

    async def complete_packed(
        self, packed: list[PackedRequest], schema: type[T], entry: str | None = None
    ) -> tuple[list[PackedReply], bool]:
        """`complete_many` for `RemoteVendor`: requests and replies in their packed forms
        (`pack_requests`, `pack_replies`), and whether the account is rate-bound — calls wait on
        its budget now or did in the last `RATE_BOUND_S` (`RemoteVendor` then sends its large
        callers apart: `OWN_CALL_REQUESTS`)."""
        replies = pack_replies(await self.complete_many(unpack_requests(packed), schema, entry))
        return replies, self.budget is not None and self.budget.waited_within(RATE_BOUND_S)

    def _tell_siblings(self, retry_after_s: float | None) -> None:
        """The account answered 429: its other actors pause too (a sibling not found is skipped)."""
        for name in self.siblings:
            try:
                handle = self._sibling_handles.get(name) or ray.get_actor(name)
            except ValueError:
                continue
            self._sibling_handles[name] = handle
            fut = asyncio.ensure_future(handle.sibling_rate_limited.remote(retry_after_s))
            self._telling.add(fut)
            fut.add_done_callback(self._telling.discard)

    async def sibling_rate_limited(self, retry_after_s: float | None) -> None:
        """Another actor of this account got a 429: the account is exhausted, pause as it did."""
        await self._vendor()
        if isinstance(self.budget, ShardBudget):
            self.budget.sibling_rate_limited(retry_after_s)

    async def stats(self, entry: str | None = None) -> dict[str, float]:
        """Counters of entry `entry` (None: the first) since this actor (re)started, for live progress.

        `sibling_429s` is the account's (its one budget's), reported with each of its entries. The
        entry's wire slots (`evalcore.vendors.in_flight`): `in_flight_cap` (now), `in_flight_bound`
        (its `max_in_flight`), `in_flight`, `cap_waiting`, `cap_bound` (1: calls wait for a slot and
        none on the budget — the cap, not the budget, binds), and the calls and seconds spent
        waiting on each (`cap_waits`, `cap_wait_s`, `budget_waits`, `budget_wait_s`, `cap_bound_s`,
        `budget_bound_s`); all sums over an entry's actors. Each look also records this actor's Ray
        gauges (`jobs.sweep.metrics`: in flight, cap, budget use), so they are as fresh as the progress."""
        e = self._entry(entry)
        batch = e.batching.snapshot() if e.batching is not None else {}
        shard = {}
        if self.shards > 1 and self.budget is not None:
            shard = {"sibling_429s": float(getattr(self.budget, "sibling_pauses", 0))}
        wire_stats = getattr(e.adapter, "wire_stats", None)
        wire = wire_stats() if callable(wire_stats) else {}
        # the gauges are recorded again at each look (Ray drops a gauge not reported for 20 s)
        self.metrics.wire(e.cfg.name, wire)
        self.metrics.budget(self.budget, sum(x.stats["input_tokens"] + x.stats["output_tokens"]
                                             for x in self.entries.values()))
        return {**e.stats, **{f"batch_{k}": float(v) for k, v in batch.items()}, **shard, **wire,
                "uptime_s": time.time() - self.started}

    async def open_gate(self) -> None:
        """The sweep's preflight passed: the grading calls held here (`gated`) go out (after the
        actor's long-lived objects are frozen: `_freeze`, left until now so the preflight, which
        the driver waits for, is not sent after a full collection)."""
        if not self._gate.is_set() and self._built:
            _freeze()
        self._gate.set()

    async def close(self) -> None:
        """Close the SDK clients and let go of the sweep's stacks (their stores of paid calls, the
        batch queues): an actor kept for the driver's next sweep (`vendor_pool.park`) holds nothing
        of this one. A call after this is refused (`_vendor`), never sent on a new client."""
        self._closed = True
        for e in self.entries.values():
            if e.vendor is not None:
                await e.vendor.aclose()
            e.vendor, e.batching, e.adapter = None, None, None
        self.budget = None


@ray.remote(num_cpus=0, max_concurrency=1)  # type: ignore[call-overload]
class CostCapActor:
    """The sweep's one `CostLedger` (`--max-cost`): every vendor actor reserves from it before paying.

    One thread of execution (max_concurrency=1), so reservations are serialised exactly.
    """

    def __init__(self, cap_usd: float) -> None:
        self.ledger = CostLedger(cap_usd)

    def reserve(self, worst_usd: list[float]) -> list[bool]:
        return self.ledger.reserve(worst_usd)

    def settle(self, reserved_usd: float, paid_usd: float) -> None:
        self.ledger.settle(reserved_usd, paid_usd)

    def state(self) -> dict[str, Any]:
        return self.ledger.state.model_dump()


class RemoteLedger:
    """The `Ledger` protocol on top of the `CostCapActor` of that name (used inside vendor actors)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._handle: Any = None

    @property
    def handle(self) -> Any:
        """The ledger actor, looked up once, when first used."""
        if self._handle is None:
            self._handle = ray.get_actor(self.name)
        return self._handle

    async def reserve(self, worst_usd: list[float]) -> list[bool]:
        granted: list[bool] = await self.handle.reserve.remote(worst_usd)
        return granted

    async def settle(self, reserved_usd: float, paid_usd: float) -> None:
        await self.handle.settle.remote(reserved_usd, paid_usd)


def cap_state(handle: Any) -> CapState:
    """The ledger's state, from the driver."""
    return CapState.model_validate(ray.get(handle.state.remote()))


RATE_BOUND_S = 10.0
"""An account whose calls waited on its budget this recently counts as rate-bound (`complete_packed`)."""

OWN_CALL_REQUESTS = 8
"""While the actor's account is rate-bound (calls wait on its budget), a caller asking for this many
requests at once (a submission's criteria after the warming call) gets an actor call of its own,
so its replies come back when its own requests are answered. In one call with the shard's other
submissions, each submission's audit waited for the whole shard's rubric answers, and the last
shards' audits ran after every rubric call, with the binding account idle (measured on the sample
through `benchmarks/peers.py`: whole-run use of the binding limit 0.968 -> 0.976). When nothing
waits on the budget, the cores are what binds and every caller shares one call: one Ray call per
submission raised a zero-work sweep's CPU per judge call from 0.33 to 0.41 ms
(`benchmarks/orchestration_ceiling.py --n 1000 --modes zero --shard-size 32 --max-in-flight 4`)."""


class RemoteVendor:
    """The `Vendor` protocol on top of a `VendorActor` handle (used inside grading workers).

    Why it coalesces: a shard grades its submissions concurrently, and each asks every vendor for
    its criteria (twice with prompt-cache warming) and then the auditor, so one Ray call per
    (submission, vendor) paid a Ray round trip — task submission, pickling, the actor's dispatch —
    for every few judge calls. Requests made in the same turn of the event loop are now sent as one
    actor call per (vendor, answer schema) and the replies handed back to each caller in order: the
    same requests reach the same actor (so the same budget, store and batch queue see them), only
    fewer Ray calls carry them. Requests and replies cross Ray as tuples of plain values
    (`pack_requests`, `pack_replies`): cloudpickling the pydantic models cost more than the rest
    of the trip.
    """

    def __init__(self, handle: Any, cfg: VendorConfig) -> None:
        self.handle = handle  # the actor of cfg's account; every call names the entry
        self.name = cfg.name
        self.family = cfg.family
        self.model = cfg.model
        self._waiting: dict[type[Any], list[tuple[list[JudgeRequest], asyncio.Future[list[Any]]]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flushes: set[asyncio.Task[None]] = set()  # strong references: the loop keeps only weak ones
        self.ray_calls = 0
        """Actor calls sent (for tests and benchmarks: fewer than `complete_many` calls when coalesced)."""
        self.rate_bound = False
        """What the actor said with its last answer: calls of its account were waiting on its budget."""

    async def complete_many(self, requests: list[JudgeRequest], schema: type[T]) -> list[JudgeReply[T] | VendorError]:
        """Queue `requests` for the next coalesced actor call of this schema; their replies, in order."""
        if not requests:
            return []
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (one per shard): nothing queued in a finished one is sent
            self._loop, self._waiting = loop, {}
        fut: asyncio.Future[list[Any]] = loop.create_future()
        if not self._waiting:  # the first request of this turn: send them all once the turn is over
            loop.call_soon(self._start_flush)
        self._waiting.setdefault(schema, []).append((requests, fut))
        replies: list[JudgeReply[T] | VendorError] = await fut
        return replies

    def _start_flush(self) -> None:
        task = asyncio.ensure_future(self._flush())
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _flush(self) -> None:
        """Send what was queued in this turn of the loop: one actor call per schema, and, while the
        actor said its account is rate-bound, one of its own for each caller with
        `OWN_CALL_REQUESTS` requests or more."""
        waiting, self._waiting = self._waiting, {}
        sends = []
        for schema, group in waiting.items():
            split = self.rate_bound
            own = [g for g in group if split and len(g[0]) >= OWN_CALL_REQUESTS]
            shared = [g for g in group if not (split and len(g[0]) >= OWN_CALL_REQUESTS)]
            sends += [self._send(schema, [g]) for g in own]
            if shared:
                sends.append(self._send(schema, shared))
        await asyncio.gather(*sends)

    async def _send(self, schema: type[Any], group: list[tuple[list[JudgeRequest], asyncio.Future[list[Any]]]]) -> None:
        batch = [r for requests, _ in group for r in requests]
        self.ray_calls += 1
        try:
            packed, self.rate_bound = await self.handle.complete_packed.remote(pack_requests(batch), schema, self.name)
            raw = unpack_replies(packed, schema)
        except BaseException as exc:  # the actor call failed as a whole: every caller sees it, as before
            for _, fut in group:
                if not fut.done():
                    fut.cancel() if isinstance(exc, asyncio.CancelledError) else fut.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        start = 0
        for requests, fut in group:
            part, start = raw[start:start + len(requests)], start + len(requests)
            if not fut.done():  # a cancelled caller: its replies are dropped (paid ones are in the store)
                fut.set_result(part)

    async def complete(self, request: JudgeRequest, schema: type[T]) -> JudgeReply[T]:
        """A single call (raises on failure), for the protocol's sake."""
        [r] = await self.complete_many([request], schema)
        if isinstance(r, VendorError):
            raise r
        return r

    async def aclose(self) -> None:
        """The actor owns the client; nothing to close here."""
