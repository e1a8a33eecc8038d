"""What a local Ray's own processes cost while it sits idle, after it has run many actors.

A sweep's local Ray (and the test suite's session cluster) runs a vendor actor per account per
sweep; each writes two log files in the session's logs folder. Ray's log monitor re-lists that
folder ten times a second while it holds fewer than 1,000 files, although a sweep streams no log
to its driver. `jobs.sweep.startup.init_ray` starts a local Ray with `LOCAL_LOG_MONITOR_ENV` (the folder
listed every 10 s); `--ray-defaults` starts it with Ray's settings for the comparison.

`--live-workers N` keeps N actors alive (and idle) through the measured window: what each Ray
worker process costs by just being there (its core worker wakes every 10 ms to check for signals
and cancellations, taking the GIL; seen with `py-spy record --native`), which a sweep pays for
every vendor actor and grading worker it holds, whatever the work.

    .venv/bin/python benchmarks/local_ray_idle.py [--actors 100] [--idle-s 30] [--ray-defaults]
        [--live-workers N] [--out benchmarks/results/local_ray_idle.json]   # merges one row per setting
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
import ray  # noqa: E402

from jobs.sweep import startup  # noqa: E402

RAY_DEFAULTS = {"LOG_NAME_UPDATE_INTERVAL_S": "0.5", "RAY_LOG_MONITOR_MANY_FILES_THRESHOLD": "1000"}
"""Ray 2.60's defaults for the two settings (`ray/_private/log_monitor.py`): below 1,000 files the
monitor re-lists the folder on every pass of its loop (0.1 s apart when idle)."""


@ray.remote(num_cpus=0)
class _Actor:
    def ping(self) -> int:
        return 1


def _kind(cmdline: str) -> str:
    for needle, kind in (("log_monitor", "log monitor"), ("raylet", "raylet"), ("gcs_server", "gcs"),
                         ("DashboardAgent", "dashboard agent"), ("dashboard/agent", "dashboard agent"),
                         ("RuntimeEnvAgent", "runtime-env agent"), ("runtime_env", "runtime-env agent"),
                         ("monitor.py", "autoscaler monitor"), ("ray::_Actor", "live idle workers")):
        if needle in cmdline:
            return kind
    return "other"


def _cpu_by_kind() -> dict[str, float]:
    out: dict[str, float] = {}
    for p in psutil.Process().children(recursive=True):
        try:
            t = p.cpu_times()
            kind = _kind(" ".join(p.cmdline()))
            out[kind] = out.get(kind, 0.0) + t.user + t.system
        except psutil.Error:
            continue
    return out


def measure(actors: int, idle_s: float, ray_defaults: bool, live_workers: int = 0) -> dict[str, Any]:
    if ray_defaults:  # Ray's own values, set as an operator would: `init_ray` never overrides them
        os.environ.update(RAY_DEFAULTS)
    startup.init_ray("local", {})
    try:
        for start in range(0, actors, 25):  # waves of 25, each killed: the files stay, as after sweeps
            wave = [_Actor.remote() for _ in range(min(25, actors - start))]  # type: ignore[attr-defined]
            ray.get([a.ping.remote() for a in wave])
            for a in wave:
                ray.kill(a)
        node = ray._private.worker._global_node
        assert node is not None
        log_files = len(os.listdir(node.get_logs_dir_path()))
        live = [_Actor.remote() for _ in range(live_workers)]  # type: ignore[attr-defined]
        ray.get([a.ping.remote() for a in live])
        time.sleep(3)  # the killed actors' processes gone
        before = _cpu_by_kind()
        time.sleep(idle_s)
        after = _cpu_by_kind()
        del live
    finally:
        ray.shutdown()
    per_30 = {k: round((after.get(k, 0.0) - before.get(k, 0.0)) * 30 / idle_s, 3) for k in after}
    setting = "ray defaults" if ray_defaults else "tribunal (LOCAL_LOG_MONITOR_ENV)"
    extra: dict[str, Any] = {}
    if live_workers:
        setting += f", {live_workers} idle workers alive"
        extra["cpu_ms_per_s_per_live_worker"] = round(1000 * per_30.get("live idle workers", 0.0) / 30 / live_workers, 2)
    return {
        "setting": setting,
        "actors_run": actors,
        "log_files": log_files,
        "idle_s": idle_s,
        "cpu_s_per_30s_by_process": per_30,
        "cpu_s_per_30s": round(sum(per_30.values()), 3),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        **extra,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--actors", type=int, default=100)
    ap.add_argument("--idle-s", type=float, default=30.0)
    ap.add_argument("--ray-defaults", action="store_true", help="Ray's own log-monitor settings")
    ap.add_argument("--live-workers", type=int, default=0, help="actors kept alive (idle) through the window")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "local_ray_idle.json"))
    a = ap.parse_args()
    row = measure(a.actors, a.idle_s, a.ray_defaults, a.live_workers)
    print(json.dumps(row, indent=2))
    out = Path(a.out)
    doc: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {"benchmark": "local_ray_idle", "rows": []}
    doc["command"] = ("python benchmarks/local_ray_idle.py && python benchmarks/local_ray_idle.py --ray-defaults"
                      " && python benchmarks/local_ray_idle.py --live-workers 10")
    doc["rows"] = [r for r in doc["rows"] if r["setting"] != row["setting"]] + [row]
    out.write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
