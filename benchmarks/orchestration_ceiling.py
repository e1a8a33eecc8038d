"""Orchestration ceiling: judge calls per second and CPU per judge call of the framework alone.

Done-when (issue 15, item 2): calls/s and CPU-ms per judge call for the framework alone (the
zero-work vendor: every call answered at once with a fixed valid answer, `evalcore/vendors/zero.py`)
and separately with the offline heuristics (`--vendors offline`), on N synthetic submissions from
the sample, through the real `tribunal sweep` (local Ray) in a fresh process. CPU is the sweep's
whole process tree (driver, Ray's daemons and workers, as reaped: `getrusage(RUSAGE_CHILDREN)`),
so it counts what the framework burns, not what other work on the machine takes.

    python benchmarks/orchestration_ceiling.py [--n 300] [--modes zero,offline] [--profile DIR]

`--profile DIR` also records a py-spy flame graph of the zero-work sweep (driver and workers,
`py-spy record --subprocesses`) into DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SAMPLE = ROOT / "examples" / "sample"


def zero_config(path: Path) -> Path:
    """Every judge and the auditor on the zero-work adapter (names and families kept)."""
    from evalcore.config import load_config

    cfg = load_config()
    entries = {
        "judges": [{**j.model_dump(mode="json"), "adapter": "zero"} for j in cfg.judges],
        "auditor": {**cfg.auditor.model_dump(mode="json"), "adapter": "zero"},
    }
    path.write_text(yaml.safe_dump(entries, sort_keys=False))
    return path


def run_one(mode: str, manifest: Path, work: Path, profile: Path | None) -> dict[str, object]:
    runs = work / f"runs-{mode}"
    cmd = [sys.executable, "-m", "jobs.cli", "sweep", str(SAMPLE), "-s", str(manifest), "-o", str(runs),
           "--run-id", mode, "--no-progress", "--no-reduce"]
    cmd += ["--vendors", "real", "--config", str(zero_config(work / "zero.yaml"))] if mode == "zero" else [
        "--vendors", "offline"]
    if profile is not None:
        py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        profile.mkdir(parents=True, exist_ok=True)
        cmd = [py_spy, "record", "--subprocesses", "--rate", "50", "--format", "speedscope",
               "-o", str(profile / f"sweep-{mode}.speedscope.json"), "--", *cmd]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "GRPC_VERBOSITY": "ERROR"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.time() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 3):
        raise SystemExit(f"{mode} sweep failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    summary = json.loads((runs / mode / "_SUCCESS.json").read_text())
    calls = summary["paid_calls"] + summary["reused_calls"]
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "mode": mode,
        "profiled": profile is not None,
        "graded": summary["graded"],
        "complete": summary["complete"],
        "judge_calls": calls,
        "sweep_s": round(summary["wall_s"], 2),
        "process_wall_s": round(wall, 2),
        "calls_per_s": round(calls / summary["wall_s"], 1),
        "cpu_s": round(cpu_s, 1),
        "cpu_ms_per_call": round(1000 * cpu_s / max(calls, 1), 2),
        "driver_peak_rss_mb": round(summary["driver_peak_rss_mb"], 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=300, help="synthetic submissions")
    ap.add_argument("--modes", default="zero,offline")
    ap.add_argument("--profile", type=Path, default=None, help="also record a py-spy profile of the zero run here")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "orchestration_ceiling.json"))
    args = ap.parse_args()
    from evalcore.ground_truth import load_ground_truth
    from evalcore.synth import synthesize

    rows = []
    with tempfile.TemporaryDirectory(prefix="tribunal-ceiling-") as tmp:
        work = Path(tmp)
        synthesize(SAMPLE, load_ground_truth(SAMPLE / "ground_truth.json"), args.n, work / "synth", seed=7)
        for mode in args.modes.split(","):
            rows.append(run_one(mode, work / "synth" / "manifest.jsonl", work, None))
            print(json.dumps(rows[-1]), flush=True)
        if args.profile is not None:
            rows.append(run_one("zero", work / "synth" / "manifest.jsonl", work / "p", args.profile))
            print(json.dumps(rows[-1]), flush=True)
    result = {
        "benchmark": "orchestration_ceiling",
        "command": "python benchmarks/orchestration_ceiling.py " + " ".join(sys.argv[1:]),
        "machine": f"{os.cpu_count()} cores (shared)",
        "target": ">= 20,000 judge calls/s framework-only (zero-work vendor)",
        "met": any(r["mode"] == "zero" and float(r["calls_per_s"]) >= 20_000 for r in rows),  # type: ignore[arg-type]
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
