"""Per-actor ceiling: the judge calls/s one `VendorActor` sustains with the real SDK, and 2 and 4.

Issue 15, item 3: before spreading a vendor over several actors, measure what one carries. Each
vendor's real SDK client (openai, anthropic, xai-sdk over gRPC) runs inside `VendorActor`s exactly
as in a sweep (adapter, rate budget, retry policy, paid-call store), against that vendor's
emulator answering at once (zero latency) with limits far above what is sent (10^8 requests/min:
the budget and headers never bind). The driver keeps enough calls outstanding (`--callers`
concurrent batches of `--batch` requests per actor, each a distinct request), routed to the
actors by request hash as the sweep does (`jobs.sweep.vendor_pool`). Per setting: calls/s over a
measured span after a warm-up, and CPU-ms per call of the actors (their processes' CPU time),
of the emulator process and of the driver. The emulators run in a process of their own.

    python benchmarks/actor_ceiling.py [--vendors openai,anthropic,xai] [--actors 1,2,4] [--seconds 6]

Writes benchmarks/results/actor_ceiling.json. On a 2-core machine the emulator, the driver and
the actors share the cores: the figure is the ceiling of the whole loop there, an upper bound on
what one actor costs, and the load average (recorded) says how shared the machine was.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

KEY_ENV = "TRIBUNAL_CEILING_KEY"
PREFIX = "Source documents and the deliverable under review. " * 40  # ~2 kB shared by every call


def serve() -> None:
    """Run in the emulator subprocess: the three emulators, answering at once, until stdin closes."""
    from doubles.emulators import EmulatorConfig, ServerLimits
    from doubles.emulators._set import start_in_thread
    from doubles.emulators.responders import StaticResponder

    limits = ServerLimits(requests_per_minute=10**8, tokens_per_minute=10**12)
    emus = start_in_thread(EmulatorConfig(limits=limits),
                           responder=StaticResponder({"verdict": "pass", "reasoning": "ok"}))
    print(json.dumps(emus.endpoints), flush=True)
    sys.stdin.read()
    emus.stop()


def proc_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of a process so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def vendor_cfg(vendor: str, endpoint: str) -> Any:
    from evalcore.config.models import RateLimits, VendorConfig

    if vendor == "xai" and "://" not in endpoint:
        endpoint = "http://" + endpoint  # the xai adapter reads http:// as a plaintext channel
    return VendorConfig(adapter=vendor, name=vendor, family=vendor, model=f"{vendor}-ceiling", endpoint=endpoint,
                        api_key_env=KEY_ENV, max_output_tokens=64, warm_prompt_cache=False,
                        limits=RateLimits(requests_per_minute=10**8, tokens_per_minute=10**12))


async def drive(handles: list[Any], seconds: float, warmup_s: float, callers: int, batch: int, tag: str) -> dict[str, float]:
    """Keep `callers` batches outstanding per actor; count calls answered in the measured span."""
    from evalcore.schema import RubricAnswer
    from evalcore.vendors.protocol import JudgeRequest
    from evalcore.vendors.sharding import shard_of

    n = len(handles)
    counter = iter(range(10**12))
    done = {"calls": 0, "failed": 0}
    start = time.monotonic()
    t_measure = start + warmup_s
    t_end = t_measure + seconds

    def requests_for(k: int) -> list[JudgeRequest]:
        out: list[JudgeRequest] = []
        while len(out) < batch:  # distinct requests that route to actor k, as the sweep routes them
            i = next(counter)
            h = f"{tag}-{i}"
            if shard_of(h, n) == k:
                out.append(JudgeRequest(purpose="rubric", request_hash=h, system_prompt="You grade legal work.",
                                        shared_prefix=PREFIX, varying_suffix=f"Criterion {i}: is it right?",
                                        schema_name="RubricAnswer", estimated_input_tokens=600))
        return out

    async def caller(k: int) -> None:
        while time.monotonic() < t_end:
            raw = await handles[k].complete_many.remote(requests_for(k), RubricAnswer)
            if time.monotonic() >= t_measure:
                done["failed"] += sum(1 for r in raw if isinstance(r, Exception))
                done["calls"] += sum(1 for r in raw if not isinstance(r, Exception))

    await asyncio.gather(*(caller(k) for k in range(n) for _ in range(callers)))
    return {"calls": done["calls"], "failed": done["failed"], "span_s": time.monotonic() - t_measure}


def measure(vendor: str, endpoint: str, n: int, args: argparse.Namespace, emu_pid: int, store: str) -> dict[str, Any]:
    import ray

    from jobs.sweep.vendor_pool import start_pool

    cfg = vendor_cfg(vendor, endpoint)
    pool = start_pool(cfg, f"ceiling-{vendor}-{n}", [store], n=n)
    handles = list(pool.handles)
    pids = ray.get([h.__ray_call__.remote(lambda self: os.getpid()) for h in handles])
    # warm each client (connection pools, gRPC channel) before anything is timed
    asyncio.run(drive(handles, 0.5, 0.0, 2, 4, f"warm-{vendor}-{n}"))
    load0 = os.getloadavg()[0]
    actors0 = sum(proc_cpu_s(p) for p in pids)
    emu0, drv0 = proc_cpu_s(emu_pid), time.process_time()
    res = asyncio.run(drive(handles, args.seconds, args.warmup, args.callers, args.batch, f"{vendor}-{n}"))
    actors_cpu = sum(proc_cpu_s(p) for p in pids) - actors0
    emu_cpu, drv_cpu = proc_cpu_s(emu_pid) - emu0, time.process_time() - drv0
    for h in handles:
        ray.get(h.close.remote())
        ray.kill(h)
    calls = max(res["calls"], 1)
    # CPU was measured over warm-up + span: charge it to the calls of that whole time
    whole = res["span_s"] + args.warmup
    per_call = lambda cpu: round(1000 * cpu / (calls * whole / res["span_s"]), 3)  # noqa: E731
    return {
        "vendor": vendor,
        "actors": n,
        "calls": res["calls"],
        "failed": res["failed"],
        "span_s": round(res["span_s"], 2),
        "calls_per_s": round(res["calls"] / res["span_s"], 1),
        "calls_per_s_per_actor": round(res["calls"] / res["span_s"] / n, 1),
        "actor_cpu_ms_per_call": per_call(actors_cpu),
        "emulator_cpu_ms_per_call": per_call(emu_cpu),
        "driver_cpu_ms_per_call": per_call(drv_cpu),
        "load_average_1m_before": round(load0, 2),
        "load_average_1m_after": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vendors", default="openai,anthropic,xai")
    ap.add_argument("--actors", default="1,2,4")
    ap.add_argument("--seconds", type=float, default=6.0, help="measured span per setting")
    ap.add_argument("--warmup", type=float, default=1.5)
    ap.add_argument("--callers", type=int, default=16, help="batches outstanding per actor")
    ap.add_argument("--batch", type=int, default=16, help="requests per batch (one Ray call)")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "actor_ceiling.json"))
    args = ap.parse_args()
    if args.serve:
        serve()
        return
    import ray

    os.environ[KEY_ENV] = "emulated-not-a-secret"
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    emu = subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    rows: list[dict[str, Any]] = []
    load_start = os.getloadavg()
    try:
        assert emu.stdout is not None
        endpoints = json.loads(emu.stdout.readline())
        ray.init(address="local", include_dashboard=False, log_to_driver=False, num_cpus=2,
                 runtime_env={"env_vars": {KEY_ENV: os.environ[KEY_ENV], "PYTHONPATH": str(ROOT)}})
        with tempfile.TemporaryDirectory(prefix="tribunal-ceiling-") as store:
            for vendor in args.vendors.split(","):
                for n in (int(x) for x in args.actors.split(",")):
                    rows.append(measure(vendor, endpoints[vendor], n, args, emu.pid, store))
                    print(json.dumps(rows[-1]), flush=True)
    finally:
        ray.shutdown()
        if emu.stdin is not None:
            emu.stdin.close()
        emu.wait(timeout=30)
    one = {r["vendor"]: r["calls_per_s"] for r in rows if r["actors"] == 1}
    result = {
        "benchmark": "actor_ceiling",
        "command": "python benchmarks/actor_ceiling.py " + " ".join(sys.argv[1:]),
        "machine": f"{os.cpu_count()} cores (shared)",
        "load_average_at_start": [round(x, 2) for x in load_start],
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "one_actor_calls_per_s": one,
        "settings": {"seconds": args.seconds, "warmup": args.warmup, "callers_per_actor": args.callers,
                     "batch": args.batch, "emulator_latency_s": 0.0},
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
