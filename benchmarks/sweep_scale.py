"""Sweep scale: does the driver's memory stay flat as N grows, and what throughput does it reach?

Generates N synthetic submissions from the sample (doubles.synth.scale), then runs the real
`tribunal sweep` (local Ray, emulated vendors over loopback with the real SDKs) for each N in a
fresh process, and records wall time, submissions/s, judge calls/s, 429s and the driver's peak
RSS (reported by the sweep itself). Prints a table and writes benchmarks/results/sweep_scale.json.

    python benchmarks/sweep_scale.py --n 200 --n 800
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "sample"


def run_one(n: int, work: Path, shard_size: int, max_in_flight: int) -> dict[str, object]:
    from doubles.synth.ground_truth import load_ground_truth
    from doubles.synth.scale import synthesize

    out = work / f"synth-{n}"
    synthesize(SAMPLE, load_ground_truth(SAMPLE / "ground_truth.json"), n, out, seed=7)
    runs = work / f"runs-{n}"
    cmd = [sys.executable, "-m", "jobs.cli", "sweep", str(SAMPLE), "-s", str(out / "manifest.jsonl"),
           "-o", str(runs), "--run-id", "scale", "--vendors", "emulated", "--no-progress", "--no-reduce",
           "--shard-size", str(shard_size), "--max-in-flight", str(max_in_flight)]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "GRPC_VERBOSITY": "ERROR"}
    t0 = time.time()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.time() - t0
    if proc.returncode not in (0, 3):
        raise SystemExit(f"sweep failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    summary = json.loads((runs / "scale" / "_SUCCESS.json").read_text())
    calls = summary["paid_calls"] + summary["reused_calls"]
    return {
        "n": n,
        "graded": summary["graded"],
        "complete": summary["complete"],
        "wall_s": round(wall, 1),
        "sweep_s": round(summary["wall_s"], 1),
        "submissions_per_s": round(summary["graded"] / summary["wall_s"], 1),
        "judge_calls": calls,
        "calls_per_s": round(calls / summary["wall_s"], 1),
        "rate_limited": summary["rate_limited"],
        "driver_peak_rss_mb": round(summary["driver_peak_rss_mb"], 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, action="append", help="submission counts (repeatable)")
    ap.add_argument("--shard-size", type=int, default=8)
    ap.add_argument("--max-in-flight", type=int, default=8)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "sweep_scale.json"))
    args = ap.parse_args()
    ns = args.n or [200, 800]
    with tempfile.TemporaryDirectory(prefix="tribunal-sweep-scale-") as tmp:
        rows = [run_one(n, Path(tmp), args.shard_size, args.max_in_flight) for n in ns]
    keys = list(rows[0])
    print(" | ".join(keys))
    for r in rows:
        print(" | ".join(str(r[k]) for k in keys))
    growth = rows[-1]["driver_peak_rss_mb"] / rows[0]["driver_peak_rss_mb"]  # type: ignore[operator]
    result = {
        "benchmark": "sweep_scale",
        "command": "python benchmarks/sweep_scale.py " + " ".join(f"--n {n}" for n in ns),
        "machine": f"{os.cpu_count()} cores",
        "settings": {"shard_size": args.shard_size, "max_in_flight": args.max_in_flight, "vendors": "emulated"},
        "rows": rows,
        "driver_rss_growth": round(growth, 2),
        "note": "driver RSS should stay roughly flat as N grows (bounded in-flight window, streamed submissions)",
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"driver peak RSS growth x{growth:.2f} from N={ns[0]} to N={ns[-1]}; wrote {args.out}")


if __name__ == "__main__":
    main()
