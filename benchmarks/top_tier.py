"""Top-tier limits: 10,000 requests/min and 30 M tokens/min per account, 30 s median latency, in real time.

Done-when (issue 23, item 2): every vendor (openai, anthropic, xai) at once, each at a top-tier
account's limits, through the real SDK clients and the rate budget against the emulators, which
enforce each vendor's bucket; in steady state >= 0.97 of the binding limit, <= 1 % of the requests
answered 429, no connect or pool timeout. By Little's law 10,000/min at ~30 s is ~5,000 requests on
the wire per vendor, ~15,000 in all (twice that for a while after a full one-minute bucket's burst).

Unlike `steady_state.py` nothing is compressed: the limits, the latency (lognormal, `--median` s,
shape `--sigma`, capped at `--cap`) and the budget run on the real clock, so what is measured is
what a sweep's vendor actors would do. Each vendor gets its own processes, as at the vendors (one
server each) and as in a sweep: its emulator, and N client processes, N as a sweep chooses its
vendor actors (`evalcore.vendors.sharding.actor_count`: the account's rate over `actor_calls_per_s`,
at most the cores; `--actors N` sets it). Each client is one actor's share of the account
(`create_shard_vendor`: a `ShardBudget` of 1/N of the limits, the adapter, its SDK clients and
pools, the in-flight cap) sending an endless backlog. The benchmark's own process only starts them,
tells them when the clock starts and samples the CPU and memory of every process (psutil) and the
busy cores of the whole machine. Every process raises its soft RLIMIT_NOFILE to the hard limit.

Measured, per vendor, on the emulator (its counters at the marks, read in its own loop):

* **steady state**: from `--ramp` s after the start, for `--window` s: requests admitted, as a
  share of the request limit, and the tokens they carry (the server's count per answered request,
  input + output), as a share of the token limit; the larger share is the binding limit's;
* **429s**: server answers 429 / RESOURCE_EXHAUSTED, over the whole run (the target) and in the window;
* **in flight**: requests the emulator holds (`EmulatorStats.open_requests`: mean in the window,
  peak), and the clients' wire slots (attempts on the wire and calls waiting for the budget);
* **failed attempts** by exception (timeouts, connection and pool errors), counted by the clients.

CPU: each process's CPU seconds (psutil), in cores in the window and per call over the run, the
machine's busy cores (other users of the shared machine included: `other_users_cores_in_window`),
load average, and how late each client's loop wakes (a 10 ms ticker). When a target is missed the
scenario says why with these figures; `cpu_needed_cores_at_target` is what the target rates cost
at the CPU per call measured (clients + emulators). `--quiet-wait S` first waits up to S seconds
for the other users of a shared machine to leave it nearly idle (`--quiet-cores`).

    .venv/bin/python benchmarks/top_tier.py [--scenario openai,anthropic,xai@10000 ...] [--tpm 30000000]
        [--median 30] [--sigma 0.4] [--cap 90] [--ramp 90] [--window 120] [--prompt-tokens 2000]
        [--max-in-flight 16000] [--actors auto|N] [--quiet-wait 0] [--out benchmarks/results/top_tier.json]
        [--merge] [--profile DIR]

`--profile DIR` also records every process's py-spy profile over the steady window (20 samples a
second, without pausing it) into DIR, and writes each one's summary into its scenario: the share of
its samples in each part of a client's work (`PROFILE_GROUPS`: the SDK's request building, its HTTP
stack or gRPC call, its response parsing, the budget) and its hottest frames. py-spy's own CPU
shares the cores, so a profiled scenario is marked `profiled` and is not the one to quote for rates.

`--scenario VENDORS@RPM` (repeatable) runs those vendors at once, each at RPM (default: all three at
10,000/min); one scenario takes `--ramp + --window` s plus ~30 s of start-up. `--merge` keeps the
scenarios already in `--out` that this run does not repeat.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import math
import multiprocessing as mp
import os
import resource
import shutil
import subprocess
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from benchmarks.orchestration_ceiling import top_frames  # noqa: E402

VENDORS = ("openai", "anthropic", "xai")
ENV = "TRIBUNAL_BENCH_TOP_TIER_KEY"
PROFILE_GROUPS = {  # where a client's CPU goes (`--profile`): part -> frame names ("a|b": either); parts overlap
    "adapter's attempts (our loop, with the SDK calls it makes)": "AdapterBase._loop",
    "rate budget (acquire)": "RateBudget.acquire",
    "SDK: request params transformed (openai, anthropic)": "async_maybe_transform",
    "SDK: request built (openai, anthropic)": "BaseClient._build_request",
    "HTTP stack (httpx, httpcore, h11)": "AsyncClient.send",
    "SDK: response parsed (openai, anthropic)": "LegacyAPIResponse.parse|AsyncAPIResponse.parse|construct_type",
    "gRPC calls (xai-sdk)": "UnaryUnaryCall._invoke|InterceptedUnaryUnaryCall._invoke",
    "JSON schema made per call": "model_json_schema",
    "event loop waiting (select)": "EpollSelector.select",
    "imports": "_find_and_load",
}
SHARE_TARGET = 0.97
SHARE_429_TARGET = 0.01
ANSWER = {
    "verdict": "pass",
    "reasoning": (
        "The memo states that the tenant has thirty days after written notice to cure a monetary default, "
        "which matches clause 14.2 of the lease; the landlord's remedies apply only after that period. "
        "The memo also quotes the notice requirement correctly and cites the clause by number, so the "
        "criterion is met. No other cure period is stated anywhere in the deliverable, and nothing in it "
        "contradicts the source."
    ),
}
MEMO_UNIT = (
    "Clause 14.2 gives the tenant thirty (30) days after written notice from the landlord to cure any "
    "monetary default; non-monetary defaults may be cured within a reasonable period not exceeding sixty "
    "days, provided the tenant begins the cure promptly and pursues it diligently. "
)


def raise_open_files() -> tuple[int, int]:
    """Soft RLIMIT_NOFILE up to the hard limit (each call on the wire holds a socket at each end)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        want = 1 << 20 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        except (ValueError, OSError):
            pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)


async def _recv(conn: Connection) -> Any:
    return await asyncio.to_thread(conn.recv)


async def _at(t: float) -> float:
    """Sleep until monotonic `t` (system-wide on Linux, so every process shares the marks); the time woken."""
    await asyncio.sleep(max(t - time.monotonic(), 0.0))
    return time.monotonic()


async def _sample(series: list[dict[str, Any]], snap: Callable[[], dict[str, Any]], start: float, every: float) -> None:
    """Append a snapshot to `series` every `every` seconds from `start` (monotonic) until cancelled."""
    t = start
    while True:
        await _at(t)
        series.append(snap())
        t += every


def _reporting(conn: Connection, main: Any) -> None:
    """Run a child's coroutine; a failure goes to the driver as ("error", traceback), not lost on stderr."""
    try:
        asyncio.run(main)
    except BaseException:
        conn.send(("error", traceback.format_exc()))
        raise


def _expect(conn: Connection, proc: Any, what: str, timeout_s: float = 600.0) -> Any:
    """The next message of a child, or an error naming it (it failed, died, or said nothing in time)."""
    deadline = time.monotonic() + timeout_s
    while not conn.poll(1.0):
        if not proc.is_alive():
            raise RuntimeError(f"{proc.name} exited with {proc.exitcode} before sending {what!r}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{proc.name} sent no {what!r} within {timeout_s:g} s")
    tag, payload = conn.recv()
    if tag == "error":
        raise RuntimeError(f"{proc.name} failed:\n{payload}")
    if tag != what:
        raise RuntimeError(f"{proc.name} sent {tag!r}, expected {what!r}")
    return payload


# ------------------------------------------------------------------------------------ the emulator process


def emulator_main(vendor: str, s: dict[str, Any], conn: Connection) -> None:
    """One vendor's emulator in its own process (spawned): serves until told to stop."""
    raise_open_files()
    _reporting(conn, _emulator(vendor, s, conn))


async def _emulator(vendor: str, s: dict[str, Any], conn: Connection) -> None:
    from doubles.emulators import (
        AnthropicEmulator,
        EmulatorConfig,
        LognormalLatency,
        OpenAIEmulator,
        ServerLimits,
        StaticResponder,
        XAIEmulator,
    )
    from evalcore.vendors.budget import VENDOR_BURST_S

    classes: dict[str, Any] = {"openai": OpenAIEmulator, "anthropic": AnthropicEmulator, "xai": XAIEmulator}
    limits = ServerLimits(
        requests_per_minute=s["rpm"], tokens_per_minute=s["tpm"], burst_s=VENDOR_BURST_S[vendor]
    )
    cfg = EmulatorConfig(
        limits=limits,
        latency=LognormalLatency(median=s["median"], sigma=s["sigma"], cap=s["cap"]),
        max_recorded=1_000,
        seed=VENDORS.index(vendor),
    )
    emu = classes[vendor](cfg, responder=StaticResponder(ANSWER))

    def snap() -> dict[str, Any]:
        st = emu.stats
        return {
            "t": time.monotonic(),
            "requests": st.requests,
            "admitted": st.requests - st.rate_limited,
            "rate_limited": st.rate_limited,
            "ok": st.ok,
            "tokens": st.input_tokens + st.output_tokens,
            "open": st.open_requests,
            "peak_open": st.peak_open_requests,
            "cancelled": st.cancelled,
            "errors": st.server_errors + st.bad_requests + st.responder_errors + st.auth_errors,
        }

    async with emu:
        endpoint = f"http://{emu.host}" if vendor == "xai" else emu.base_url
        conn.send(("ready", endpoint))
        _, marks = await _recv(conn)
        series: list[dict[str, Any]] = []
        at_marks: list[dict[str, Any]] = []

        sampler = asyncio.ensure_future(_sample(series, snap, marks[0], s["sample_s"]))
        for m in marks:
            await _at(m)
            at_marks.append(snap())
        stop = await _recv(conn)
        assert stop == "stop"
        sampler.cancel()
        final = snap()
    conn.send(("done", {"marks": at_marks, "series": series, "final": final}))


# ------------------------------------------------------------------------------------ the client process


def client_main(vendor: str, endpoint: str, shard: tuple[int, int], s: dict[str, Any], conn: Connection) -> None:
    """One of a vendor account's N client processes (spawned), as one of a sweep's N vendor actors."""
    raise_open_files()
    logging.getLogger("evalcore.vendors").setLevel(logging.CRITICAL)
    os.environ[ENV] = "bench-key"
    _reporting(conn, _client(vendor, endpoint, shard, s, conn))


def vendor_config(vendor: str, endpoint: str, s: dict[str, Any]) -> Any:
    """The account's entry, as `tribunal emulate --write-config` would state it, with a top-tier bound."""
    from evalcore.config.models import VendorConfig

    return VendorConfig.model_validate({
        "adapter": vendor, "name": vendor, "family": vendor, "model": f"{vendor}-top-tier",
        "endpoint": endpoint, "api_key_env": ENV, "max_output_tokens": 300, "timeout_s": s["timeout_s"],
        "max_in_flight": s["max_in_flight"],
        "limits": {"requests_per_minute": s["rpm"], "tokens_per_minute": s["tpm"]},
    })


def failure_name(exc: BaseException) -> str:
    """`APITimeoutError(ConnectTimeout)`: the SDK's exception and the transport's beneath it."""
    code = getattr(exc, "code", None)
    if callable(code) and type(exc).__name__ == "AioRpcError":
        return f"grpc.{code().name}"
    root: BaseException = exc
    while (below := root.__cause__ or root.__context__) is not None and below is not root:
        root = below
    return type(exc).__name__ if root is exc else f"{type(exc).__name__}({type(root).__name__})"


def is_transport_failure(name: str) -> bool:
    """Timeouts (connect, pool, read, the attempt's own), connection errors, cancelled channels."""
    return any(w in name for w in ("Timeout", "Connect", "Pool", "DEADLINE", "UNAVAILABLE", "CANCELLED"))


def _awaiting(task: asyncio.Future[Any]) -> list[str]:
    """Where a task is suspended: its chain of awaited coroutines, outermost first."""
    coro: Any = task.get_coro() if isinstance(task, asyncio.Task) else None
    chain = []
    while coro is not None:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None:
            chain.append(f"{frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return chain


async def _client(vendor: str, endpoint: str, shard: tuple[int, int], s: dict[str, Any], conn: Connection) -> None:
    from evalcore.errors import VendorError
    from evalcore.prompts import render_rubric
    from evalcore.schema import Criterion, Deliverable, RubricAnswer
    from evalcore.vendors.adapters.common import SDKAdapter
    from evalcore.vendors.sharding import create_shard_vendor

    cfg = vendor_config(vendor, endpoint, s)
    memo = (MEMO_UNIT * (1 + s["prompt_tokens"] * 4 // len(MEMO_UNIT)))[: s["prompt_tokens"] * 4]
    request = render_rubric(
        task_id="t",
        instructions="Assess the memo against the criterion.",
        criterion=Criterion(id="C-0001", title="Cure period", match_criteria="PASS if the memo states 30 days."),
        deliverables=[Deliverable(name="memo", text=memo)],
        boundary="cd" * 8,
    ).request_for(cfg)
    # as one of a sweep's N actors of the account: 1/N of its limits (ShardBudget), headers read at 1/N
    v = create_shard_vendor(cfg, shard[1])
    assert isinstance(v, SDKAdapter)
    built = time.monotonic()
    v._ensure_client()  # the SDK clients (and the in-flight cap at the shard's rate), before the clock starts
    n_clients = len(v._clients)
    build_s = time.monotonic() - built
    # as a vendor actor does once its vendor is built (jobs/sweep/actors.py): what lives as long as the
    # process stays out of the cyclic collector's full passes while thousands of calls stream through
    gc.collect()
    gc.freeze()

    failures: Counter[str] = Counter()
    classify = v.classify

    def counting(exc: BaseException) -> Any:
        failures[failure_name(exc)] += 1
        return classify(exc)

    setattr(v, "classify", counting)  # noqa: B010  # the attempts' failures, by exception
    done = {"ok": 0, "retried": 0}
    gave_up: Counter[str] = Counter()
    running = [True]

    async def worker() -> None:
        # the flag, not only the cancellation: Python 3.11's `asyncio.wait_for` (the adapter's
        # per-attempt limit) returns the attempt's result instead of raising when the cancellation
        # arrives as the attempt completes (CPython gh-86296, fixed in 3.12); this loop would then
        # go on sending, and the cancelled task never ends
        while running[0]:
            try:
                reply = await v.complete(request, RubricAnswer)
            except VendorError as err:
                gave_up[err.kind.value] += 1
                continue
            done["ok"] += 1
            done["retried"] += reply.attempts > 1

    def snap() -> dict[str, Any]:
        wire = v.wire_stats()
        budget = v.budget
        return {
            "t": time.monotonic(),
            "ok": done["ok"],
            "retried": done["retried"],
            "failed_attempts": dict(failures),
            "gave_up": dict(gave_up),
            "in_flight": int(wire["in_flight"]),
            "in_flight_cap": int(wire["in_flight_cap"]),
            "cap_waiting": int(wire["cap_waiting"]),
            "cap_bound_s": round(wire["cap_bound_s"], 2),
            "budget_bound_s": round(wire["budget_bound_s"], 2),
            "latency_estimate_s": round(v._wire.latency_s, 2),
            "budget_429s": budget.stats.rate_limited if budget else None,
        }

    conn.send(("ready", {"sdk_clients": n_clients, "client_build_s": round(build_s, 2),
                         "estimated_input_tokens": request.estimated_input_tokens}))
    _, marks = await _recv(conn)
    lateness: list[float] = []
    series: list[dict[str, Any]] = []
    at_marks: list[dict[str, Any]] = []

    async def ticker(tick: float = 0.01) -> None:
        while True:
            t = time.monotonic()
            await asyncio.sleep(tick)
            if marks[1] <= t < marks[2]:
                lateness.append(time.monotonic() - t - tick)

    await _at(marks[0])
    workers = [asyncio.ensure_future(worker()) for _ in range(s["max_in_flight"] + s["backlog"])]
    side = [asyncio.ensure_future(ticker()), asyncio.ensure_future(_sample(series, snap, marks[0], s["sample_s"]))]
    for m in marks:
        await _at(m)
        at_marks.append(snap())
    stop = await _recv(conn)
    assert stop == "stop"
    final = snap()
    stopping = time.monotonic()
    running[0] = False
    for task in (*workers, *side):
        task.cancel()
    _, stuck = await asyncio.wait([*workers, *side], timeout=60)
    shutdown: dict[str, Any] = {"cancel_s": round(time.monotonic() - stopping, 2), "stuck_tasks": len(stuck)}
    if stuck:
        shutdown["stuck_at"] = _awaiting(next(iter(stuck)))
    closing = time.monotonic()
    try:
        await asyncio.wait_for(v.aclose(), 60)
    except TimeoutError:
        shutdown["aclose"] = "timed out after 60 s"
    shutdown["aclose_s"] = round(time.monotonic() - closing, 2)
    lateness.sort()

    def q(p: float) -> float | None:
        return round(1000 * lateness[min(int(len(lateness) * p), len(lateness) - 1)], 1) if lateness else None

    conn.send(("done", {
        "marks": at_marks, "series": series, "final": final,
        "peak_in_flight": v._wire.stats.peak_in_flight,
        "loop_late_ms": {"p50": q(0.5), "p99": q(0.99), "max": q(1.0)},
        "shutdown": shutdown,
    }))


# ------------------------------------------------------------------------------------ the driver


def _busy(t: Any) -> float:
    return float(sum(t) - t.idle - getattr(t, "iowait", 0.0))


def _cpu_s(p: psutil.Process) -> float:
    t = p.cpu_times()
    return float(t.user + t.system)


def parse_scenario(text: str) -> tuple[tuple[str, ...], int]:
    """`openai,anthropic,xai@10000` -> (('openai', 'anthropic', 'xai'), 10000)."""
    names, _, rpm = text.partition("@")
    vendors = tuple(v.strip() for v in names.split(",") if v.strip())
    unknown = set(vendors) - set(VENDORS)
    if not vendors or unknown or not rpm.isdigit():
        raise argparse.ArgumentTypeError(f"expected VENDORS@RPM with vendors among {VENDORS}, got {text!r}")
    return vendors, int(rpm)


def actors_for(vendor: str, s: dict[str, Any], actors: str) -> int:
    """Client processes for a vendor account: `--actors N`, or as a sweep chooses (`actor_count`)."""
    from evalcore.vendors.sharding import actor_count

    if actors != "auto":
        return max(1, int(actors))
    return actor_count(vendor_config(vendor, "http://127.0.0.1:1", s), psutil.cpu_count() or 1)


def machine_busy(over_s: float = 5.0) -> float:
    """Cores busy on the whole machine over the next `over_s` seconds (every user's processes)."""
    before = _busy(psutil.cpu_times())
    time.sleep(over_s)
    return (_busy(psutil.cpu_times()) - before) / over_s


def wait_for_quiet(most_cores: float, patience_s: float) -> float:
    """Wait (up to `patience_s`) until the shared machine's other users leave it nearly idle; the
    busy cores last seen. A run on a machine another user is loading measures the other user."""
    deadline = time.monotonic() + patience_s
    while True:
        busy = machine_busy()
        if busy <= most_cores or time.monotonic() >= deadline:
            return busy
        print(f"  the machine is busy ({busy:.2f} cores): waiting", flush=True)
        time.sleep(10)


def run_scenario(vendors: tuple[str, ...], rpm: int, a: argparse.Namespace) -> dict[str, Any]:
    s = {
        "rpm": rpm, "tpm": a.tpm, "median": a.median, "sigma": a.sigma, "cap": a.cap,
        "timeout_s": a.timeout, "max_in_flight": a.max_in_flight, "backlog": a.backlog,
        "prompt_tokens": a.prompt_tokens, "sample_s": a.sample,
    }
    shards = {v: actors_for(v, s, a.actors) for v in vendors}
    ctx = mp.get_context("spawn")
    procs: dict[str, Any] = {}
    pipes: dict[str, Connection] = {}

    def spawn(key: str, target: Any, *args: Any) -> None:
        mine, theirs = ctx.Pipe()
        p = ctx.Process(target=target, args=(*args, theirs), name=key, daemon=True)
        p.start()
        theirs.close()  # the child's end: its death then ends our reads (EOF) instead of blocking them
        procs[key], pipes[key] = p, mine

    clients = [f"client:{v}:{i}" for v in vendors for i in range(shards[v])]
    try:
        for v in vendors:
            spawn(f"emulator:{v}", emulator_main, v, s)
        endpoints = {v: _expect(pipes[f"emulator:{v}"], procs[f"emulator:{v}"], "ready") for v in vendors}
        for key in clients:
            _, v, i = key.split(":")
            spawn(key, client_main, v, endpoints[v], (int(i), shards[v]), s)
        ready = {key: _expect(pipes[key], procs[key], "ready") for key in clients}
        ps = {k: psutil.Process(p.pid) for k, p in procs.items()}
        t0 = time.monotonic() + 1.0
        marks = [t0, t0 + a.ramp, t0 + a.ramp + a.window]
        for conn in pipes.values():
            conn.send(("go", marks))
        cpu_marks: list[dict[str, Any]] = []
        spies: dict[str, tuple[subprocess.Popen[bytes], Path]] = {}
        for i, m in enumerate(marks):
            time.sleep(max(m - time.monotonic(), 0.0))
            if i == 1 and a.profile is not None:  # the steady window: every process, sampled apart
                spies = start_profiles(a.profile, f"{'+'.join(vendors)}@{rpm}", ps, a.window)
            cpu_marks.append({
                "t": time.monotonic(),
                "procs": {k: _cpu_s(p) for k, p in ps.items()},
                "rss_mb": {k: round(p.memory_info().rss / 2**20) for k, p in ps.items()},
                "machine_busy_s": _busy(psutil.cpu_times()),
                "loadavg": [round(x, 2) for x in os.getloadavg()],
            })
            print(f"  t={m - t0:6.1f}s  load {cpu_marks[-1]['loadavg'][0]}", flush=True)
        profiles = finish_profiles(spies, a.window)
        time.sleep(0.3)
        out: dict[str, Any] = {}
        for key in clients:  # clients first: the emulators then see the hang-ups, and stay up for them
            pipes[key].send("stop")
        for key in clients:
            out[key] = _expect(pipes[key], procs[key], "done")
        for v in vendors:
            pipes[f"emulator:{v}"].send("stop")
            out[f"emulator:{v}"] = _expect(pipes[f"emulator:{v}"], procs[f"emulator:{v}"], "done")
    finally:
        for p in procs.values():
            p.join(timeout=15)
            if p.is_alive():
                p.kill()
    sc = summarise(vendors, rpm, shards, a, ready, out, cpu_marks)
    if a.profile is not None:
        sc["profiled"] = True  # py-spy's sampling costs CPU too: these figures are not the headline ones
        sc["profile"] = profiles
    return sc


def start_profiles(folder: Path, name: str, ps: dict[str, psutil.Process], seconds: float) -> dict[
        str, tuple[subprocess.Popen[bytes], Path]]:
    """One py-spy per process (clients and emulators), for `seconds`, without pausing them
    (`--nonblocking`: less exact stacks, less disturbance), 20 samples a second."""
    folder.mkdir(parents=True, exist_ok=True)
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    spies = {}
    for key, p in ps.items():
        path = folder / f"top_tier-{name}-{key.replace(':', '-')}.speedscope.json"
        cmd = [py_spy, "record", "--pid", str(p.pid), "--rate", "20", "--nonblocking", "--duration",
               str(math.ceil(seconds)), "--format", "speedscope", "-o", str(path)]
        spies[key] = (subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), path)
    return spies


def finish_profiles(spies: dict[str, tuple[subprocess.Popen[bytes], Path]], seconds: float) -> dict[str, Any]:
    """Each process's profile over the window: share of its samples per part (`PROFILE_GROUPS`) and
    its hottest frames."""
    out: dict[str, Any] = {}
    for key, (spy, path) in spies.items():
        try:
            spy.wait(timeout=seconds + 60)
        except subprocess.TimeoutExpired:
            spy.kill()
            spy.wait()
        out[key] = ({"file": str(path), **top_frames(path, k=12, groups=PROFILE_GROUPS)} if path.exists()
                    else {"error": f"py-spy wrote no profile (exit {spy.returncode})"})
    return out


def _sum_series(runs: list[list[dict[str, Any]]], key: str) -> list[int]:
    """Element-wise sum of one counter over the clients' series (they sample at the same instants)."""
    n = min(len(r) for r in runs)
    return [sum(r[i][key] for r in runs) for i in range(n)]


def summarise(
    vendors: tuple[str, ...], rpm: int, shards: dict[str, int], a: argparse.Namespace,
    ready: dict[str, Any], out: dict[str, Any], cpu_marks: list[dict[str, Any]],
) -> dict[str, Any]:
    t0c, t1c, t2c = cpu_marks
    wall = t2c["t"] - t1c["t"]
    cores = psutil.cpu_count() or 1

    def cpu(key: str, phase: str = "window") -> float:
        a_, b_ = (t1c, t2c) if phase == "window" else (t0c, t1c)
        return float(b_["procs"][key] - a_["procs"][key])

    machine = (t2c["machine_busy_s"] - t1c["machine_busy_s"]) / wall
    bench = sum(cpu(k) for k in t0c["procs"]) / wall
    others = max(machine - bench, 0.0)
    per_vendor: dict[str, Any] = {}
    needed = 0.0
    for v in vendors:
        keys = [f"client:{v}:{i}" for i in range(shards[v])]
        emu, clis = out[f"emulator:{v}"], [out[k] for k in keys]
        e0, e1, e2 = emu["marks"]
        dt = e2["t"] - e1["t"]
        final = emu["final"]
        admitted = e2["admitted"] - e1["admitted"]
        tokens_per_request = final["tokens"] / max(final["ok"], 1)  # input + output, as the server counts
        req_share = admitted / (rpm / 60.0 * dt)
        tok_share = admitted * tokens_per_request / (a.tpm / 60.0 * dt)
        share_429 = final["rate_limited"] / max(final["requests"], 1)
        w_requests = e2["requests"] - e1["requests"]
        failed: Counter[str] = Counter()
        gave_up: Counter[str] = Counter()
        for c in clis:
            failed.update(c["final"]["failed_attempts"])
            gave_up.update(c["final"]["gave_up"])
        transport = {k: n for k, n in failed.items() if is_transport_failure(k)}
        calls = sum(c["marks"][2]["ok"] - c["marks"][1]["ok"] for c in clis)
        client_cpu = sum(cpu(k) for k in keys)
        emu_cpu = cpu(f"emulator:{v}")
        client_ms = 1000 * client_cpu / max(calls, 1)
        emu_ms = 1000 * emu_cpu / max(w_requests, 1)
        # over the whole run (a starved window completes few calls): a call's CPU is spent half when
        # sent, half when answered, so the calls are counted between those sent and those answered
        run_calls = ((e2["admitted"] - e0["admitted"]) + sum(c["marks"][2]["ok"] - c["marks"][0]["ok"] for c in clis)) / 2
        client_ms_run = 1000 * sum(cpu(k) + cpu(k, "ramp") for k in keys) / max(run_calls, 1)
        emu_ms_run = 1000 * (emu_cpu + cpu(f"emulator:{v}", "ramp")) / max(e2["requests"] - e0["requests"], 1)
        needed += (client_ms_run + emu_ms_run) / 1000 * rpm / 60.0
        t_in = [x["t"] for x in clis[0]["series"]]
        in_flight_all = _sum_series([c["series"] for c in clis], "in_flight")
        in_flight = [n for t, n in zip(t_in, in_flight_all, strict=False) if e1["t"] <= t <= e2["t"]] or [0]
        open_series = [x["open"] for x in emu["series"] if e1["t"] <= x["t"] <= e2["t"]] or [e2["open"]]
        use = max(req_share, tok_share)
        misses = []
        if use < SHARE_TARGET:
            misses.append(f"steady state {use:.3f} of the binding limit (< {SHARE_TARGET})")
        if share_429 > SHARE_429_TARGET:
            misses.append(f"{share_429:.2%} 429s (> 1 %)")
        if transport:
            misses.append(f"transport failures {transport}")
        busiest = max(cpu(k) / wall for k in keys)
        if misses and busiest > 0.85:
            misses.append(f"CPU-bound: a client process used {busiest:.2f} of a core ({client_ms_run:.2f} CPU-ms per call)")
        late = [c["loop_late_ms"] for c in clis]
        per_vendor[v] = {
            "actors": shards[v],
            "steady_share_of_requests": round(req_share, 4),
            "steady_share_of_tokens": round(tok_share, 4),
            "binding": "requests" if req_share >= tok_share else "tokens",
            "steady_share_of_binding_limit": round(use, 4),
            "admitted_per_min_steady": round(admitted / dt * 60.0),
            "server_requests": final["requests"],
            "server_429s": final["rate_limited"],
            "share_429": round(share_429, 5),
            "window_requests": w_requests,
            "window_429s": e2["rate_limited"] - e1["rate_limited"],
            "admitted_in_ramp": e1["admitted"] - e0["admitted"],
            "tokens_per_request": round(tokens_per_request),
            "server_open_requests": {"window_mean": round(sum(open_series) / len(open_series)),
                                     "window_max": max(open_series), "peak": final["peak_open"]},
            "client_in_flight": {"window_mean": round(sum(in_flight) / len(in_flight)),
                                 "window_max": max(in_flight),
                                 "peaks_summed": sum(c["peak_in_flight"] for c in clis),
                                 "caps_at_end": [c["marks"][2]["in_flight_cap"] for c in clis],
                                 "latency_estimates_s": [c["marks"][2]["latency_estimate_s"] for c in clis]},
            "cap_bound_s_in_window": max(c["marks"][2]["cap_bound_s"] - c["marks"][1]["cap_bound_s"] for c in clis),
            "budget_bound_s_in_window": max(
                c["marks"][2]["budget_bound_s"] - c["marks"][1]["budget_bound_s"] for c in clis
            ),
            "failed_attempts": dict(failed),
            "transport_failures": sum(transport.values()),
            "gave_up": dict(gave_up),
            "calls_completed_in_window": calls,
            "client_cpu_cores": round(client_cpu / wall, 3),
            "client_cpu_ms_per_call": round(client_ms, 2),
            "client_cpu_s_in_ramp": round(sum(cpu(k, "ramp") for k in keys), 1),
            "client_cpu_ms_per_call_run": round(client_ms_run, 2),
            "emulator_cpu_cores": round(emu_cpu / wall, 3),
            "emulator_cpu_ms_per_request": round(emu_ms, 2),
            "emulator_cpu_ms_per_request_run": round(emu_ms_run, 2),
            "client_loop_late_ms": {"p99_worst": max((x["p99"] or 0) for x in late),
                                    "max": max((x["max"] or 0) for x in late)},
            "rss_mb_at_end": {k.split(":", 1)[1]: t2c["rss_mb"][k] for k in [f"emulator:{v}", *keys]},
            "sdk_clients_per_actor": ready[keys[0]]["sdk_clients"],
            "estimated_input_tokens": ready[keys[0]]["estimated_input_tokens"],
            "client_shutdown": [c["shutdown"] for c in clis],
            "series": {
                "t": [round(t - e0["t"], 1) for t in t_in][::10],
                "client_in_flight": in_flight_all[::10],
                "client_ok": _sum_series([c["series"] for c in clis], "ok")[::10],
                "server_admitted": [x["admitted"] for x in emu["series"]][::10],
                "server_open": [x["open"] for x in emu["series"]][::10],
                "server_429s": [x["rate_limited"] for x in emu["series"]][::10],
            },
            "met": not misses,
            "misses": misses,
        }
    met = all(r["met"] for r in per_vendor.values())
    why = []
    if not met:
        why.append(
            f"the benchmark's processes used {bench:.2f} cores in the window, the machine {machine:.2f} of {cores} "
            f"(other users: {others:.2f}); at the CPU per call measured over the run (client + emulator) the target "
            f"rates need "
            f"{needed:.2f} cores"
        )
        if needed > cores - others - 0.05 or machine > cores - 0.15:
            why.append(f"CPU-bound: {needed:.2f} cores needed, {cores - others:.2f} available to the benchmark")
    return {
        "vendors": list(vendors),
        "rpm": rpm,
        "tpm": a.tpm,
        "in_flight_expected_per_vendor": round(rpm / 60.0 * a.median * math.exp(a.sigma**2 / 2)),
        "window_s": round(wall, 1),
        "ramp_s": a.ramp,
        "cpu": {
            "cores": cores,
            "benchmark_cores_in_window": round(bench, 3),
            "machine_busy_cores_in_window": round(machine, 3),
            "other_users_cores_in_window": round(others, 3),
            "machine_busy_cores_in_ramp": round((t1c["machine_busy_s"] - t0c["machine_busy_s"]) / (t1c["t"] - t0c["t"]), 3),
            "cpu_needed_cores_at_target": round(needed, 3),
            "loadavg_at_marks": [m["loadavg"] for m in cpu_marks],
        },
        "met": met,
        "why_not": why,
        "per_vendor": per_vendor,
    }


def line(sc: dict[str, Any]) -> str:
    rows = [f"{'+'.join(sc['vendors'])} at {sc['rpm']:,}/min each: target met: {'yes' if sc['met'] else 'NO'}"]
    for v, r in sc["per_vendor"].items():
        rows.append(
            f"  {v:9} x{r['actors']} steady {r['steady_share_of_binding_limit']:.3f} of the {r['binding']} limit "
            f"({r['admitted_per_min_steady']:,}/min), 429s {r['server_429s']} ({r['share_429']:.2%}), "
            f"transport failures {r['transport_failures']}, open at the server mean "
            f"{r['server_open_requests']['window_mean']:,} (peak {r['server_open_requests']['peak']:,}), client "
            f"{r['client_cpu_cores']:.2f} cores {r['client_cpu_ms_per_call_run']:.2f} ms/call, emulator "
            f"{r['emulator_cpu_cores']:.2f} cores {r['emulator_cpu_ms_per_request_run']:.2f} ms/req, loop late p99 "
            f"{r['client_loop_late_ms']['p99_worst']} ms"
            + ("" if r["met"] else f"  MISSED: {'; '.join(r['misses'])}")
        )
    c = sc["cpu"]
    rows.append(
        f"  CPU: benchmark {c['benchmark_cores_in_window']:.2f} cores, machine {c['machine_busy_cores_in_window']:.2f} "
        f"of {c['cores']} (others {c['other_users_cores_in_window']:.2f}), needed at the target "
        f"{c['cpu_needed_cores_at_target']:.2f}; load {c['loadavg_at_marks'][-1]}"
    )
    rows += [f"  why not: {w}" for w in sc["why_not"]]
    return "\n".join(rows)


def verdicts(scenarios: list[dict[str, Any]]) -> list[str]:
    """One line per scenario: which target was met, and if not, why (the JSON's `summary`)."""
    out = []
    for sc in scenarios:
        name = f"{'+'.join(sc['vendors'])} at {sc['rpm']:,}/min each"
        per = ", ".join(
            f"{v} {r['steady_share_of_binding_limit']:.3f} / {r['share_429']:.2%} 429s / {r['transport_failures']} failures"
            for v, r in sc["per_vendor"].items()
        )
        if sc["met"]:
            out.append(f"{name}: met ({per})")
        else:
            c = sc["cpu"]
            out.append(
                f"{name}: NOT met ({per}); {c['cpu_needed_cores_at_target']:.2f} cores needed at the CPU per call "
                f"measured, the benchmark used {c['benchmark_cores_in_window']:.2f} of {c['cores']} "
                f"(other users {c['other_users_cores_in_window']:.2f})"
                + ("; CPU-bound" if any("CPU-bound" in w for w in sc["why_not"]) else "")
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--scenario", action="append", type=parse_scenario,
                    help="VENDORS@RPM, e.g. openai,anthropic,xai@10000 (repeatable)")
    ap.add_argument("--tpm", type=int, default=30_000_000, help="tokens per minute per account")
    ap.add_argument("--median", type=float, default=30.0, help="median latency, s (lognormal)")
    ap.add_argument("--sigma", type=float, default=0.4, help="lognormal shape")
    ap.add_argument("--cap", type=float, default=90.0, help="longest latency, s")
    ap.add_argument("--timeout", type=float, default=180.0, help="the vendor entries' timeout_s")
    ap.add_argument("--ramp", type=float, default=90.0, help="s before the steady-state window")
    ap.add_argument("--window", type=float, default=120.0, help="steady-state window, s")
    ap.add_argument("--prompt-tokens", type=int, default=2_000, help="the deliverable's size in tokens")
    ap.add_argument("--max-in-flight", type=int, default=16_000, help="the vendor entries' max_in_flight")
    ap.add_argument("--backlog", type=int, default=1_000, help="calls waiting beyond max_in_flight")
    ap.add_argument("--actors", default="auto",
                    help="client processes per account: N, or auto (as a sweep: actor_count, at most the cores)")
    ap.add_argument("--sample", type=float, default=1.0, help="s between samples of the time series")
    ap.add_argument("--quiet-wait", type=float, default=0.0,
                    help="wait up to this many s before each scenario for the machine's other users to go quiet")
    ap.add_argument("--quiet-cores", type=float, default=0.3, help="busy cores that count as quiet")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "top_tier.json"))
    ap.add_argument("--merge", action="store_true", help="keep the scenarios of --out this run does not repeat")
    ap.add_argument("--profile", type=Path, default=None,
                    help="record each process's py-spy profile over the steady window here (and summarise it)")
    a = ap.parse_args()
    scenarios = a.scenario or [(VENDORS, 10_000)]
    nofile = raise_open_files()
    results = []
    for vendors, rpm in scenarios:
        print(f"{'+'.join(vendors)} at {rpm:,}/min each, {a.tpm:,} tokens/min, latency median {a.median:g} s: "
              f"{a.ramp:g} s ramp + {a.window:g} s window", flush=True)
        busy_before = wait_for_quiet(a.quiet_cores, a.quiet_wait) if a.quiet_wait > 0 else machine_busy()
        sc = run_scenario(vendors, rpm, a)
        sc["cpu"]["machine_busy_cores_before"] = round(busy_before, 3)
        sc["command"] = "python benchmarks/top_tier.py " + " ".join(sys.argv[1:])
        results.append(sc)
        print(line(sc), flush=True)
    out = Path(a.out)
    kept = []
    if a.merge and out.exists():
        keys = {(tuple(r["vendors"]), r["rpm"]) for r in results}
        kept = [r for r in json.loads(out.read_text())["scenarios"] if (tuple(r["vendors"]), r["rpm"]) not in keys]
    report = {
        "benchmark": "top_tier",
        "target": f"each vendor >= {SHARE_TARGET} of its binding limit in steady state, <= 1 % 429s over the run, "
                  "no connect or pool timeout (no transport failure at all)",
        "settings": {k: getattr(a, k) for k in ("tpm", "median", "sigma", "cap", "timeout", "ramp", "window",
                                                "prompt_tokens", "max_in_flight", "backlog", "actors")},
        "machine": {"cores": psutil.cpu_count(), "rlimit_nofile": list(nofile)},
        "summary": verdicts(kept + results),
        "scenarios": kept + results,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print("\n".join(report["summary"]))
    print(f"-> {out}")


if __name__ == "__main__":
    main()
