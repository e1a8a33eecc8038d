"""What a sweep does before its first shard, at real size: loading the tasks, planning and estimating.

Before the first shard a sweep's driver loads the benchmark (reading and converting every source
document), then prices every pending submission (`CostWatch.start`: the fast estimate, which makes
each submission's plan as grading does, `evalcore.grading.plan.plan_submission`). The grading
workers make the same plan again for each submission they grade. On a lab benchmark (`tribunal
synth --profile lab`: real-size tasks, 4 systems each) this measures, each in a fresh process:

* `load`: `load_benchmark` with the conversion cache off (a sweep's first run on a benchmark):
  wall time and the process's peak RSS, with the loader's conversion slots as they are and, when
  the code has them, with 16 (every reading thread converting at once, as before);
* `plan` and `estimate`: milliseconds per submission (the best of two passes over all of them);
* `sweep_estimate`, when the code has it: the sweep's estimate as it prices its pending
  submissions (`jobs.sweep.cost_watch.price_pending`: chunks as Ray tasks on a local Ray of every core, the
  rest in the driver), wall time from the first submission to the total, the workers' start
  included (a sweep's shards reuse them), against the same estimate in one process; over the
  lab's submissions `--estimate-copies` times (each copy is priced on its own, as a sweep would).

    python benchmarks/start_up.py [--lab-tasks 64] [--keep DIR] [--label now] [--estimate-copies 8]

`--label` names the row (`before`: run this script from a checkout of the code before a change,
with `--out` pointing here); rows of other labels already in `--out` are kept. `--keep DIR`
generates the lab benchmark into DIR once and reuses it.
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
sys.path.insert(0, str(ROOT))


def child_load(bench: Path, slots: int | None) -> dict[str, object]:
    import resource

    from evalcore.benchmark import loader

    if slots is not None:
        loader.conversion_slots = lambda: slots  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    load = loader.load_benchmark(str(bench))
    return {"tasks": len(load.tasks), "load_s": round(time.perf_counter() - t0, 2),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            "slots": slots if slots is not None else getattr(loader, "conversion_slots", lambda: None)()}


def child_plan(bench: Path) -> dict[str, object]:
    from evalcore.benchmark.loader import load_benchmark
    from evalcore.config.load import load_config
    from evalcore.cost.estimate import estimate
    from evalcore.grading.plan import plan_submission
    from evalcore.submissions.loader import load_submissions

    tasks = load_benchmark(str(bench)).task_map()
    loaded = load_submissions(str(bench / "submissions"), tasks)
    subs = list(getattr(loaded, "submissions", loaded))
    config = load_config()
    plan_s, estimate_s, usd = [], [], 0.0
    for _ in range(2):
        t0 = time.perf_counter()
        for sub in subs:
            plan_submission(tasks[sub.task_id], sub, config, grounding=False)
        plan_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        est = estimate(tasks, subs, config, fast=True)
        estimate_s.append(time.perf_counter() - t0)
        usd = est.cost_usd.get(est.pricing, 0.0)
    return {"submissions": len(subs), "plan_ms_per_submission": round(1000 * min(plan_s) / len(subs), 2),
            "estimate_ms_per_submission": round(1000 * min(estimate_s) / len(subs), 2),
            "estimated_usd": round(usd, 4)}


def child_cluster(bench: Path, copies: int) -> dict[str, object]:
    import ray

    from evalcore.benchmark.loader import load_benchmark
    from evalcore.config.load import load_config
    from evalcore.cost.estimate import estimate
    from evalcore.submissions.loader import load_submissions
    from jobs.sweep.cost_watch import ESTIMATE_CHUNK, price_pending
    from jobs.sweep.shard_work import put_config
    from jobs.sweep.startup import init_ray

    tasks = load_benchmark(str(bench)).task_map()
    subs = list(load_submissions(str(bench / "submissions"), tasks).submissions) * copies
    config = load_config()
    t0 = time.perf_counter()
    alone = estimate(tasks, subs, config, fast=True)
    alone_s = time.perf_counter() - t0
    init_ray("local", {})
    try:
        task_refs = {tid: ray.put(t) for tid, t in tasks.items()}
        t0 = time.perf_counter()
        est = price_pending(config, tasks, iter(subs), task_refs=task_refs, config_ref=put_config(config))
        cluster_s = time.perf_counter() - t0
    finally:
        ray.shutdown()
    same = abs(est.cost_usd[est.pricing] - alone.cost_usd[alone.pricing]) <= 1e-6 * alone.cost_usd[alone.pricing]
    return {"submissions": len(subs), "chunk": ESTIMATE_CHUNK, "in_one_process_s": round(alone_s, 2),
            "sweep_estimate_s": round(cluster_s, 2), "same_usd": same}


def run_child(*args: str, cache: str) -> dict[str, object]:
    env = {**os.environ, "TRIBUNAL_CACHE_DIR": cache, "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT))}
    out = subprocess.run([sys.executable, __file__, "--child", *args], env=env, check=True, capture_output=True,
                         text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lab-tasks", type=int, default=64)
    ap.add_argument("--keep", type=Path, default=None, help="generate the lab benchmark here once, and reuse it")
    ap.add_argument("--label", default="now")
    ap.add_argument("--estimate-copies", type=int, default=8,
                    help="sweep_estimate prices the lab's submissions this many times over (each on its own)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "start_up.json")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, bench, *rest = args.child
        if kind == "load":
            result = child_load(Path(bench), int(rest[0]) if rest else None)
        else:
            result = child_plan(Path(bench)) if kind == "plan" else child_cluster(Path(bench), int(rest[0]))
        print(json.dumps(result))
        return

    from doubles.synth.lab import generate_lab

    with tempfile.TemporaryDirectory() as tmp:
        lab = args.keep or Path(tmp) / "lab"
        if not (lab / "submissions").is_dir():
            generate_lab(lab, tasks=args.lab_tasks, seed=7)
        row: dict[str, object] = {"label": args.label, "lab_tasks": args.lab_tasks, "cpus": os.cpu_count(),
                                  "load": run_child("load", str(lab), cache="off")}
        from evalcore.benchmark import loader

        if hasattr(loader, "conversion_slots") and args.label != "before":
            row["load_16_slots"] = run_child("load", str(lab), "16", cache="off")
        row.update(run_child("plan", str(lab), cache=str(Path(tmp) / "cache")))
        try:
            import jobs.sweep.cost_watch as cost

            if hasattr(cost, "price_pending"):
                row["sweep_estimate"] = run_child("cluster", str(lab), str(args.estimate_copies),
                                                  cache=str(Path(tmp) / "cache"))
        except ImportError:
            pass
    print(json.dumps(row, indent=1))
    result = json.loads(args.out.read_text()) if args.out.exists() else {}
    rows = {r["label"]: r for r in result.get("rows", [])}
    rows[args.label] = row
    result = {"benchmark": "start_up", "command": "python benchmarks/start_up.py --lab-tasks "
              f"{args.lab_tasks}", "rows": list(rows.values())}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
