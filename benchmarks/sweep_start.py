"""How fast a sweep starts: from the command to its first judge call, with Ray already running,
and `tribunal demo` end to end after its first run (issue 41 item 6).

Two measurements, each in fresh processes as a user runs them:

* `first_call`: a Ray head is started on 127.0.0.1 (`ray start --head`, in its own folder, ports
  chosen free); then `tribunal sweep examples/sample … --vendors emulated --address auto` runs
  `--repeats` times into new output folders. From the run's calls table: seconds from the
  command's start to its first judge call (the preflight), to its first grading call, and to its
  end (wall).
* `demo`: `tribunal demo` twice into one new folder (it starts its own local Ray): the first run
  grades the sample, the second finds everything done; the wall time of each.

    python benchmarks/sweep_start.py [--repeats 3] [--label now] [--out benchmarks/results/sweep_start.json]

`--label` names the rows (run it from a checkout of the code before a change with `--label before`
and the same `--out`); rows of other labels already in `--out` are kept. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "sample"
BIN = Path(sys.executable).parent
TRIBUNAL = [sys.executable, "-m", "jobs.cli"]
"""The command from this checkout (not the installed script): a `--label before` run from another
checkout measures that checkout's code."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_head(temp_dir: Path) -> tuple[str, int]:
    """A Ray head on 127.0.0.1 with 2 CPUs, every port chosen free, in a session of its own;
    returns its address and the session (process group) to end it with."""
    port = free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    head = subprocess.Popen(
        [str(BIN / "ray"), "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
         "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp_dir}",
         f"--dashboard-agent-listen-port={free_port()}", f"--dashboard-agent-grpc-port={free_port()}",
         f"--runtime-env-agent-port={free_port()}", f"--metrics-export-port={free_port()}",
         f"--ray-client-server-port={free_port()}"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,  # its daemons stay in this process group: ended together, and only they
    )
    out, _ = head.communicate(timeout=300)
    if head.returncode != 0:
        raise SystemExit(f"ray start failed:\n{out[-3000:]}")
    return f"127.0.0.1:{port}", head.pid


def stop_head(group: int, temp_dir: Path) -> None:
    """The head's whole process group, and nothing else (never another Ray on this machine)."""
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass
    shutil.rmtree(temp_dir, ignore_errors=True)


def first_calls(runs: Path, t0: float) -> dict[str, float]:
    import duckdb

    rows = duckdb.sql(
        f"SELECT purpose, min(started_at) FROM '{runs}/*/calls/*.parquet' GROUP BY purpose"
    ).fetchall()
    by = {str(p): float(s) - t0 for p, s in rows}
    grading = [v for p, v in by.items() if p != "preflight"]
    return {"first_judge_call_s": round(min(by.values()), 2), "first_grading_call_s": round(min(grading), 2)}


def sweep_once(address: str, work: Path) -> dict[str, Any]:
    runs = work / "runs"
    env = {**os.environ, "RAY_ADDRESS": address, "PYTHONPATH": str(ROOT)}
    t0 = time.time()
    done = subprocess.run(
        [*TRIBUNAL, "sweep", str(SAMPLE), "-s", str(SAMPLE / "submissions"), "-o", str(runs),
         "--vendors", "emulated", "--address", "auto", "--no-progress"],
        env=env, capture_output=True, text=True, timeout=900, cwd=ROOT,
    )
    wall = time.time() - t0
    if done.returncode != 0:  # recorded, not raised: the code before a fix may fail here
        return {"error": f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1][:300]}", "wall_s": round(wall, 2)}
    return {**first_calls(runs, t0), "wall_s": round(wall, 2)}


def demo_twice(work: Path) -> dict[str, Any]:
    out = {}
    for name in ("first_run_s", "second_run_s"):
        t0 = time.time()
        done = subprocess.run([*TRIBUNAL, "demo", "-o", str(work / "runs")], capture_output=True, text=True,
                              timeout=900, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        if done.returncode != 0:
            raise SystemExit(f"the demo failed ({done.returncode}):\n{done.stderr[-3000:]}")
        out[name] = round(time.time() - t0, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label", default="now")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "sweep_start.json")
    args = parser.parse_args()

    temp = Path(tempfile.mkdtemp(prefix="rs-"))  # short: Ray's socket paths must stay short
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    address, group = start_head(temp / "ray")
    try:
        sweeps = []
        for i in range(args.repeats):
            work = temp / f"sweep-{i}"
            work.mkdir()
            sweeps.append(sweep_once(address, work))
            print(json.dumps(sweeps[-1]), flush=True)
    finally:
        stop_head(group, temp / "ray")
    demo_dir = temp / "demo"
    demo_dir.mkdir()
    demo = demo_twice(demo_dir)
    print(json.dumps(demo), flush=True)
    shutil.rmtree(temp, ignore_errors=True)

    ok = [r for r in sweeps if "error" not in r]
    row = {
        "label": args.label,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count()},
        "first_call": {
            "runs": sweeps,
            "median_first_judge_call_s": statistics.median(r["first_judge_call_s"] for r in ok) if ok else None,
            "median_first_grading_call_s": statistics.median(r["first_grading_call_s"] for r in ok) if ok else None,
            "median_wall_s": statistics.median(r["wall_s"] for r in ok) if ok else None,
        },
        "demo": demo,
        "targets": {"first_judge_call_s": 4.0, "demo_second_run_s": 10.0},
    }
    old = json.loads(args.out.read_text()) if args.out.exists() else {"rows": []}
    rows = [r for r in old.get("rows", []) if r.get("label") != args.label] + [row]
    args.out.write_text(json.dumps({"command": "python benchmarks/sweep_start.py", "rows": rows}, indent=1) + "\n")
    print(json.dumps(row, indent=1))


if __name__ == "__main__":
    main()
