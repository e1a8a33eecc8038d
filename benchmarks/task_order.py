"""Shards cut task by task: grounding indexes built per task, not per system, on a benchmark of many tasks.

A sweep builds each task's grounding index once, as a Ray task, and keeps the last 256 in the
object store (`jobs.sweep.shard_work.SourceIndexes`). Shards used to be cut by position in the source,
which lists submissions system by system: with more tasks than that, every system's pass evicted
the indexes the next system needed, and every index was built again for every system. Shards are
now cut task by task (`jobs.sweep.intake.task_major`). This runs the real `tribunal sweep` with the
zero-work vendor (`benchmarks/orchestration_ceiling.py`'s `run_one`: the process tree's CPU,
sampled) over a lab benchmark (`tribunal synth --profile lab`: real-size tasks, 4 systems each)
of more tasks than are kept, and records the index builds, the CPU and the wall time.

    python benchmarks/task_order.py [--lab-tasks 300] [--keep DIR] [--label now]

`--label` names the row (`before`: run this script from a checkout of the code before the change,
with `--out` pointing here); rows of other labels already in `--out` are kept. `--keep DIR`
generates the lab benchmark into DIR once and reuses it (the same benchmark for both labels).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from orchestration_ceiling import run_one  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lab-tasks", type=int, default=300)
    ap.add_argument("--keep", type=Path, default=None, help="generate the lab benchmark here once, and reuse it")
    ap.add_argument("--label", default="now")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "task_order.json"))
    args = ap.parse_args()

    from doubles.synth.lab import generate_lab

    with tempfile.TemporaryDirectory(prefix="tribunal-task-order-") as tmp:
        lab = args.keep or Path(tmp) / "lab"
        if not (lab / "submissions").is_dir():
            generate_lab(lab, tasks=args.lab_tasks, seed=7)
        row = run_one("zero", lab / "submissions", Path(tmp) / "work", None, None, None, benchmark=lab)
    submissions = int(row["graded"])  # type: ignore[call-overload]
    kept = {"label": args.label, "lab_tasks": args.lab_tasks, "systems": submissions // args.lab_tasks,
            **{k: row[k] for k in ("graded", "complete", "shards", "source_indexes_built", "judge_calls",
                                   "process_wall_s", "sweep_s", "startup_s", "tree_cpu_s", "cpu_ms_per_call",
                                   "steady_calls_per_s", "steady_index_build_cpu_s", "driver_peak_rss_mb",
                                   "loadavg_before", "loadavg_after") if k in row}}
    print(json.dumps(kept), flush=True)

    out = Path(args.out)
    result = json.loads(out.read_text()) if out.exists() else {}
    rows = {r["label"]: r for r in result.get("rows", [])}
    rows[args.label] = kept
    result = {
        "benchmark": "task_order",
        "command": "python benchmarks/task_order.py " + " ".join(sys.argv[1:]),
        "machine": result.get("machine", "2 cores (shared)"),
        "target": "each task's grounding index built once per sweep however many tasks the benchmark has "
                  "(source_indexes_built == lab_tasks)",
        "met": {label: r["source_indexes_built"] == r["lab_tasks"] for label, r in rows.items()},
        "rows": list(rows.values()),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
