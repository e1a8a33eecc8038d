"""Batch vs online cost: the same sweep online and through the vendors' batch APIs, side by side.

Runs the real `tribunal sweep` (local Ray, emulated vendors over loopback with the real SDKs) on
the sample twice, `--online` and `--batch`, each in a fresh process and run folder, and reports
USD per graded submission per vendor entry (judge calls only: preflight calls go online in both
modes), the batch/online ratio, the number of batches and the wall time. With `--no-caching` the
vendors' prompt caching is off, so both runs are billed the very same tokens and the ratio is the
price ratio exactly; with caching on, cache hits depend on arrival order and differ a little.
Prints a table and writes benchmarks/results/batch_cost.json.

    python benchmarks/batch_cost.py                # caching on (as configured)
    python benchmarks/batch_cost.py --no-caching   # identical tokens: the ratio is exactly 0.5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "sample"


def sweep(mode: str, work: Path, config: Path | None) -> dict[str, object]:
    import pyarrow.parquet as pq

    runs = work / f"runs-{mode}"
    cmd = [sys.executable, "-m", "jobs.cli", "sweep", str(SAMPLE), "-s", str(SAMPLE / "submissions"), "-o", str(runs),
           "--run-id", mode, "--vendors", "emulated", f"--{mode}", "--no-progress", "--no-reduce",
           "--shard-size", "8", "--max-in-flight", "4"]
    if config is not None:
        cmd += ["--config", str(config)]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "GRPC_VERBOSITY": "ERROR"}
    t0 = time.time()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.time() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{mode} sweep failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    summary = json.loads((runs / mode / "_SUCCESS.json").read_text())
    calls = pq.read_table(runs / mode / "calls", columns=["vendor", "purpose", "cost_usd", "batch_id"]).to_pylist()
    cost: dict[str, float] = defaultdict(float)
    batches: dict[str, set[str]] = defaultdict(set)
    for c in calls:
        if c["purpose"] == "preflight":
            continue
        cost[c["vendor"]] += c["cost_usd"]
        if c["batch_id"]:
            batches[c["vendor"]].add(c["batch_id"])
    graded = int(summary["graded"])
    return {
        "mode": mode,
        "graded": graded,
        "wall_s": round(wall, 1),
        "usd_per_submission": {v: round(x / graded, 6) for v, x in sorted(cost.items())},
        "usd_per_submission_total": round(sum(cost.values()) / graded, 6),
        "batches": {v: len(ids) for v, ids in sorted(batches.items())},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-caching", action="store_true", help="turn the vendors' prompt caching off")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="tribunal-batch-cost-") as tmp:
        work = Path(tmp)
        config = None
        if args.no_caching:
            from evalcore.config.load import load_config

            cfg = load_config().model_dump(mode="json")
            for v in [*cfg["judges"], cfg["auditor"]]:
                v["prompt_caching"] = False
            config = work / "no-caching.yaml"
            config.write_text(yaml.safe_dump({"judges": cfg["judges"], "auditor": cfg["auditor"]}))
        online = sweep("online", work, config)
        batch = sweep("batch", work, config)
    ratio = {v: round(batch["usd_per_submission"][v] / x, 4)  # type: ignore[index]
             for v, x in online["usd_per_submission"].items() if x}  # type: ignore[union-attr]
    total_ratio = round(batch["usd_per_submission_total"] / online["usd_per_submission_total"], 4)  # type: ignore[operator]
    result = {"caching": not args.no_caching, "online": online, "batch": batch, "batch_over_online": ratio,
              "batch_over_online_total": total_ratio}
    print(f"{'vendor':<10} {'online USD/sub':>15} {'batch USD/sub':>15} {'batch/online':>13} {'batches':>8}")
    for v, x in online["usd_per_submission"].items():  # type: ignore[union-attr]
        b = batch["usd_per_submission"][v]  # type: ignore[index]
        print(f"{v:<10} {x:>15.5f} {b:>15.5f} {ratio.get(v, 0):>13.4f} {batch['batches'].get(v, 0):>8}")  # type: ignore[union-attr]
    print(f"{'total':<10} {online['usd_per_submission_total']:>15.5f} {batch['usd_per_submission_total']:>15.5f} "
          f"{total_ratio:>13.4f}   wall {online['wall_s']} s online, {batch['wall_s']} s batch")
    out = ROOT / "benchmarks" / "results" / ("batch_cost_no_caching.json" if args.no_caching else "batch_cost.json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
