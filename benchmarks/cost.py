"""Cost on the realistic benchmark: USD per graded submission and the share of input tokens served
from the vendors' prompt caches, online without and with cache warming and through the vendors'
batch APIs (`sweep --batch`: batch prices, warming off), side by side in one run; and the
estimate's error against what each run actually paid.

What runs: `tribunal synth --profile lab` generates the realistic benchmark (seeded); the three
vendor emulators serve it over loopback with vendor-like latency (lognormal) and the caching rules
of the real services, answering from the benchmark's ground truth (so exactly the submissions that
pass Stage A are audited, as in a real sweep); the real `run_sweep` (local Ray, the real SDK
clients) grades every submission once per mode. Cost and tokens are read from each run's calls
table, i.e. from the vendors' usage fields. The estimate is `evalcore.cost.estimate` with its default
assumptions, and calibrated on a pilot sweep of the first task's submissions (a separate run).

    python benchmarks/cost.py                 # 8 tasks x 4 systems, seed 0
    python benchmarks/cost.py --tasks 2       # quicker

Prints a table and writes benchmarks/results/cost.json. The batch row also gives its USD per graded
submission as a multiple of the online row with the same traffic (warming off: batch mode turns
warming off), the issue's "batch = 0.5x online". The emulators end a batch as soon as it is polled
(no completion delay), so the batch row's wall time is not a vendor's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from doubles.emulators import EmulatorConfig, LognormalLatency, ServerLimits  # noqa: E402
from doubles.emulators._set import start_in_thread  # noqa: E402
from doubles.emulators.ground_truth import ground_truth_responder, owners  # noqa: E402
from doubles.emulators.serve import point_at_emulators  # noqa: E402
from doubles.synth.lab import generate_lab  # noqa: E402
from evalcore.benchmark.loader import load_benchmark  # noqa: E402
from evalcore.config.load import load_config  # noqa: E402
from evalcore.config.models import TribunalConfig  # noqa: E402
from evalcore.cost.estimate import OutputModel, estimate  # noqa: E402
from evalcore.storage.store import read_table  # noqa: E402
from evalcore.submissions.loader import load_submissions  # noqa: E402
from jobs.sweep.driver import run_sweep  # noqa: E402
from jobs.sweep.options import SweepOptions  # noqa: E402
from jobs.sweep.prepare import server_limits, with_batch  # noqa: E402


def with_warming(cfg: TribunalConfig, warm: bool) -> TribunalConfig:
    return cfg.model_copy(update={"judges": [j.model_copy(update={"warm_prompt_cache": warm}) for j in cfg.judges]})


def pilot_manifest(lab: Path, task_id: str) -> Path:
    """A manifest of the first task's submissions (the pilot the estimate is calibrated on)."""
    path = lab / "pilot.jsonl"
    lines = []
    for system_dir in sorted((lab / "submissions").iterdir()):
        memo = system_dir / task_id / "memo.md"
        if memo.is_file():
            lines.append(json.dumps({"system": system_dir.name, "task_id": task_id,
                                     "deliverables": {"memo": {"path": str(memo.relative_to(lab))}}}))
    path.write_text("\n".join(lines) + "\n")
    return path


def measured(run_uri: str, config: TribunalConfig) -> dict[str, float]:
    """What a run paid (its calls table), and what the same calls cost under the rule before cache
    writes had their own price (every written token billed as input): the difference the prices
    that match the bill make, on the very same traffic."""
    import pyarrow.compute as pc

    calls = read_table(run_uri, "calls", ["cost_usd", "input_tokens", "cached_input_tokens", "purpose", "vendor",
                                          "cache_write_tokens", "cache_write_usd"])
    calls = calls.filter(pc.not_equal(calls.column("purpose"), "preflight"))  # online in every mode
    subs = read_table(run_uri, "submissions", ["status"])
    cost = sum(calls.column("cost_usd").to_pylist())
    tokens = sum(calls.column("input_tokens").to_pylist())
    cached = sum(calls.column("cached_input_tokens").to_pylist())
    written = sum(calls.column("cache_write_tokens").to_pylist())
    write_usd = sum(calls.column("cache_write_usd").to_pylist())
    multiplier = {v.name: v.price.cache_write for v in config.vendors()}
    as_input = sum(usd / multiplier[v] for v, usd in zip(calls.column("vendor").to_pylist(),
                                                          calls.column("cache_write_usd").to_pylist(), strict=True))
    graded = sum(1 for s in subs.column("status").to_pylist() if s == "complete")
    return {"usd": cost, "input_tokens": tokens, "cached_input_tokens": cached, "calls": calls.num_rows,
            "graded": graded, "cache_write_tokens": written, "cache_write_usd": write_usd,
            "usd_writes_as_input": cost - write_usd + as_input}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--latency-median", type=float, default=1.5, help="emulated vendor latency median, seconds")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "cost.json"))
    args = ap.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")

    with tempfile.TemporaryDirectory(prefix="tribunal-cost-") as tmp:
        lab = Path(tmp) / "lab"
        t0 = time.time()
        gt = generate_lab(lab, tasks=args.tasks, seed=args.seed)
        generated_s = time.time() - t0
        bench = load_benchmark(str(lab))
        tasks = bench.task_map()
        subs = load_submissions(str(lab / "submissions"), tasks).submissions
        latency = LognormalLatency(median=args.latency_median, sigma=0.4, cap=20.0)
        base = load_config(vendors="real")
        configs = {
            adapter: EmulatorConfig(
                latency=latency, max_recorded=1000,
                limits=ServerLimits(requests_per_minute=lim.requests_per_minute, tokens_per_minute=lim.tokens_per_minute),
            )
            for adapter, lim in server_limits(base).items()
        }
        runs = Path(tmp) / "runs"
        rows: list[dict[str, Any]] = []
        with start_in_thread(configs, responder=ground_truth_responder(gt, owners(subs))) as emus:
            cfg = point_at_emulators(base, emus.endpoints)
            first_task = sorted(tasks)[0]

            def sweep(submissions: str, run_id: str, config: TribunalConfig) -> tuple[str, float]:
                start = time.time()
                summary = run_sweep(SweepOptions(
                    benchmark=str(lab), submissions=submissions, output=str(runs), config=config,
                    vendors="emulated", run_id=run_id, progress=False,
                ))
                if summary.incomplete or summary.failed_shards:
                    raise SystemExit(f"{run_id}: {summary.incomplete} incomplete, {summary.failed_shards}")
                return summary.run_uri, time.time() - start

            pilot_uri, _ = sweep(str(pilot_manifest(lab, first_task)), "pilot", cfg)
            calibrated = OutputModel.from_run(pilot_uri)
            modes = {
                "online, warming off": with_warming(cfg, False),
                "online, warming on": with_warming(cfg, True),
                "batch (warming off)": with_batch(cfg, True, emulated=True),
            }
            for mode, run_cfg in modes.items():
                est_default = estimate(tasks, subs, run_cfg)
                est_cal = estimate(tasks, subs, run_cfg, calibrated)
                pricing = est_cal.pricing
                run_id = mode.replace(", ", "-").replace(" (", "-").replace(")", "").replace(" ", "-")
                uri, wall = sweep(str(lab / "submissions"), run_id, run_cfg)
                m = measured(uri, run_cfg)
                actual_share = m["cached_input_tokens"] / m["input_tokens"]
                rows.append({
                    "mode": mode,
                    "graded_submissions": m["graded"],
                    "calls": m["calls"],
                    "usd_total": round(m["usd"], 4),
                    "usd_per_graded_submission": round(m["usd"] / m["graded"], 4),
                    "usd_per_graded_submission_writes_as_input": round(m["usd_writes_as_input"] / m["graded"], 4),
                    "cache_write_tokens": m["cache_write_tokens"],
                    "cache_write_usd": round(m["cache_write_usd"], 4),
                    "cached_input_share": round(actual_share, 4),
                    "input_tokens": m["input_tokens"],
                    "cached_input_tokens": m["cached_input_tokens"],
                    "wall_s": round(wall, 1),
                    "estimate_calibrated_usd": round(est_cal.cost_usd[pricing], 4),
                    "estimate_calibrated_error": round(est_cal.cost_usd[pricing] / m["usd"] - 1, 4),
                    "estimate_calibrated_cached_share": round(est_cal.cached_share, 4),
                    "estimate_default_usd": round(est_default.cost_usd[pricing], 4),
                    "estimate_default_error": round(est_default.cost_usd[pricing] / m["usd"] - 1, 4),
                    # None in batch mode: batches are bound by their completion window, not the rate limits
                    "estimate_min_wall_s": None if est_cal.min_wall_s is None else round(est_cal.min_wall_s, 1),
                })

    same_traffic = next(r for r in rows if r["mode"] == "online, warming off")
    for r in rows:
        r["usd_per_graded_submission_vs_online_warming_off"] = round(
            r["usd_per_graded_submission"] / same_traffic["usd_per_graded_submission"], 4)
    sizes = (gt.model_extra or {}).get("lab", {}).get("sizes", [])
    keys = ["mode", "usd_per_graded_submission", "usd_per_graded_submission_writes_as_input",
            "usd_per_graded_submission_vs_online_warming_off", "cached_input_share", "cache_write_usd", "usd_total",
            "estimate_calibrated_usd",
            "estimate_calibrated_error", "estimate_default_error", "wall_s"]
    print(" | ".join(keys))
    for r in rows:
        print(" | ".join(str(r[k]) for k in keys))
    result = {
        "benchmark": "cost",
        "command": f"python benchmarks/cost.py --tasks {args.tasks} --seed {args.seed}"
                   + (f" --latency-median {args.latency_median:g}" if args.latency_median != 1.5 else ""),
        "machine": f"{os.cpu_count()} cores (shared)",
        "lab": {"tasks": args.tasks, "seed": args.seed, "submissions": len(subs), "generated_s": round(generated_s, 1),
                "sizes": sizes},
        "emulators": {"latency": latency.__dict__, "responder": "ground truth", "caching": "vendor rules"},
        "pilot": {"task": first_task, "audited_share": calibrated.audited_share,
                  "verify_share": calibrated.verify_share, "output_tokens": calibrated.per_vendor},
        "rows": rows,
        "note": "cost and tokens from the runs' calls tables (vendors' usage fields); preflight calls excluded; "
                "*_writes_as_input: the same calls priced with every cache write billed as input (the rule before "
                "cache writes had their own price)",
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
