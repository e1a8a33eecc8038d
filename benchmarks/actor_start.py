"""What one vendor actor costs to start, per account, against a bare Ray actor: the fixed price of
every sweep, which the test suite pays about 200 times.

A sweep starts one `VendorActor` per vendor account (`jobs/sweep/vendor_pool.py`): a new Ray
worker process that imports Ray, Tribunal's actor module and its account's SDK, then builds its
clients on its first call. This starts the default panel's actors (three accounts, pointed at an
address nothing listens on: no call is made) on a local Ray, waits until each has answered
`stats` (constructed: its imports done), and reads each actor process's CPU time (user +
system, `actor_ceiling.proc_cpu_s`) before killing it; then the same for a bare actor (an empty
class), which is what Ray itself costs per actor process. Then what the driver's next sweep pays
instead when the actor was kept (`vendor_pool.park`): the CPU-s the same process spends taking a
new sweep (`VendorActor.rebind`) until it answers `stats` again. `--rounds` repeats all on the same
Ray; the figures are means. The host's own speed is timed first (`suite_cpu.reference`,
`host_reference_cpu_s` in the JSON): two results compare only when those agree.

    .venv/bin/python benchmarks/actor_start.py [--rounds 3] [--out benchmarks/results/actor_start.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import psutil  # noqa: E402
import ray  # noqa: E402
from actor_ceiling import proc_cpu_s  # noqa: E402
from suite_cpu import reference  # noqa: E402

NOWHERE = "http://127.0.0.1:9"
"""Where the actors' clients point: the discard port, never called (construction makes no call)."""


@ray.remote(num_cpus=0)
class Bare:
    """An actor with nothing in it: Ray's own price for an actor process."""

    def pid(self) -> int:
        return os.getpid()


def _titled(title: str) -> set[int]:
    """The pids of the processes Ray titles `title` (an idle actor's process: `ray::<class>`)."""
    return {p.info["pid"] for p in psutil.process_iter(["pid", "cmdline"])
            if (p.info["cmdline"] or [""])[0].strip() == title}


def _killed(handles: list[Any], pids: list[int]) -> None:
    """Kill the actors and wait for their processes to exit (the next round starts on a quiet Ray)."""
    procs = [psutil.Process(pid) for pid in pids if psutil.pid_exists(pid)]
    for h in handles:
        ray.kill(h)
    psutil.wait_procs(procs, timeout=60)


def vendor_round(round_no: int) -> tuple[dict[str, float], dict[str, float]]:
    """Start the default panel's actors one account at a time, wait for each to answer, and read
    its process's CPU-s (the one new `ray::VendorActor` process); then park it and take it for a
    next sweep, and read what that cost the same process. Both per account."""
    from doubles.emulators.serve import KEY_ENV, point_at_emulators
    from evalcore.config.load import load_config
    from evalcore.config.models import VendorMode
    from evalcore.vendors.sharding import group_by_account
    from jobs.sweep.vendor_pool import VendorPool, park, sdks_of, start_account

    for name in KEY_ENV.values():
        os.environ.setdefault(name, "emulated-key-not-a-secret")
    cfg = point_at_emulators(load_config(vendors=VendorMode.REAL), {v: NOWHERE for v in ("openai", "xai", "anthropic")})
    cpu: dict[str, float] = {}
    rebind: dict[str, float] = {}
    for members in group_by_account(cfg.vendors()):
        account = "+".join(m.name for m in members)
        before = _titled("ray::VendorActor")
        started = list(start_account(members, f"actor-start-{round_no}", [], n=1))
        ray.get([h.stats.remote() for h in started])
        (pid,) = _titled("ray::VendorActor") - before
        cpu[account] = proc_cpu_s(pid)
        assert park(VendorPool(members[0].name, tuple(started), sdks_of(members)))
        again = start_account(members, f"actor-start-{round_no}-next", [], n=1, reuse=True)
        assert again == tuple(started), "the parked actor was not taken"
        ray.get([h.stats.remote() for h in again])
        rebind[account] = proc_cpu_s(pid) - cpu[account]
        _killed(started, [pid])
    return cpu, rebind


def bare_round(n: int) -> list[float]:
    """`n` bare actors: each one's CPU-s once it has answered."""
    actors = [Bare.remote() for _ in range(n)]  # type: ignore[attr-defined]
    pids = ray.get([a.pid.remote() for a in actors])
    cpu = [proc_cpu_s(pid) for pid in pids]
    _killed(actors, pids)
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "actor_start.json"))
    args = parser.parse_args()

    host = reference()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    vendor: dict[str, list[float]] = {}
    rebound: dict[str, list[float]] = {}
    bare: list[float] = []
    try:
        for r in range(args.rounds):
            started, rebind = vendor_round(r)
            for account, cpu in started.items():
                vendor.setdefault(account, []).append(cpu)
                rebound.setdefault(account, []).append(rebind[account])
            bare += bare_round(3)
    finally:
        ray.shutdown()

    result: dict[str, Any] = {
        "measured": time.strftime("%Y-%m-%d"),
        "rounds": args.rounds,
        "host_reference_cpu_s": host,
        "vendor_actor_cpu_s": {a: round(statistics.mean(v), 3) for a, v in sorted(vendor.items())},
        "bare_actor_cpu_s": round(statistics.mean(bare), 3),
        "rebind_cpu_s": {a: round(statistics.mean(v), 3) for a, v in sorted(rebound.items())},
    }
    result["per_sweep_cpu_s"] = round(sum(result["vendor_actor_cpu_s"].values()), 3)
    result["per_sweep_rebind_cpu_s"] = round(sum(result["rebind_cpu_s"].values()), 3)
    print(json.dumps(result, indent=2))
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
