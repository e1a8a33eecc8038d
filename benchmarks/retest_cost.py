"""The cost of a retest (issue 39) on the realistic benchmark: estimated before it starts, then paid.

What runs: `tribunal synth --profile lab` generates the realistic benchmark (seeded); the three
vendor emulators serve it over loopback with the caching rules of the real services, answering
from the benchmark's ground truth; the real `run_sweep` (local Ray, the real SDK clients) grades
every submission once (the run a retest repeats), then a retest of `--share` of its complete
submissions with K = `--repeats` runs through the same engine, configured as `tribunal retest`
configures it (`jobs.sweep.retest`: the run's configuration, the panel only unless `--audit`, the
estimate calibrated from the run itself). The estimate is the one the retest computes before its
first call (`SweepSummary.estimated_cost_usd`); the measured cost is the retest's calls in the
calls table (its repeats' rows, preflight excluded).

    python benchmarks/retest_cost.py                     # 8 tasks x 4 systems, 10 % of them, K = 2
    python benchmarks/retest_cost.py --audit             # the audit's two stages repeated too

Prints the figures and writes benchmarks/results/retest_cost[_audit].json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from doubles.emulators import EmulatorConfig, LognormalLatency, ServerLimits  # noqa: E402
from doubles.emulators._set import start_in_thread  # noqa: E402
from doubles.emulators.ground_truth import ground_truth_responder, owners  # noqa: E402
from doubles.emulators.serve import point_at_emulators  # noqa: E402
from doubles.synth.lab import generate_lab  # noqa: E402
from evalcore.benchmark.loader import load_benchmark  # noqa: E402
from evalcore.config.load import load_config  # noqa: E402
from evalcore.storage.store import RunRecord, read_table  # noqa: E402
from evalcore.submissions.loader import load_submissions  # noqa: E402
from jobs.sweep.driver import run_sweep  # noqa: E402
from jobs.sweep.options import SweepOptions  # noqa: E402
from jobs.sweep.prepare import server_limits  # noqa: E402
from jobs.sweep.retest import RetestCommand, plan_retest, retest_config, retest_output_model  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--share", type=float, default=0.10, help="share of the complete submissions retested")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--audit", action="store_true", help="repeat the audit too")
    ap.add_argument("--latency-median", type=float, default=0.3, help="emulated vendor latency median, seconds")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    out = Path(args.out or ROOT / "benchmarks" / "results" / f"retest_cost{'_audit' if args.audit else ''}.json")

    with tempfile.TemporaryDirectory(prefix="tribunal-retest-") as tmp:
        lab = Path(tmp) / "lab"
        gt = generate_lab(lab, tasks=args.tasks, seed=args.seed)
        bench = load_benchmark(str(lab))
        subs = load_submissions(str(lab / "submissions"), bench.task_map()).submissions
        latency = LognormalLatency(median=args.latency_median, sigma=0.4, cap=20.0)
        base = load_config(vendors="real")
        configs = {
            adapter: EmulatorConfig(latency=latency, max_recorded=1000, limits=ServerLimits(
                requests_per_minute=lim.requests_per_minute, tokens_per_minute=lim.tokens_per_minute))
            for adapter, lim in server_limits(base).items()
        }
        runs = Path(tmp) / "runs"
        with start_in_thread(configs, responder=ground_truth_responder(gt, owners(subs))) as emus:
            cfg = point_at_emulators(base, emus.endpoints)
            t0 = time.time()
            original = run_sweep(SweepOptions(benchmark=str(lab), submissions=str(lab / "submissions"),
                                              output=str(runs), config=cfg, vendors="emulated", run_id="lab",
                                              progress=False))
            sweep_s = time.time() - t0
            run_uri = original.run_uri
            n = max(1, math.ceil(args.share * original.complete))
            cmd = RetestCommand(run=run_uri, repeats=args.repeats, sample=n, seed=args.seed, audit=args.audit,
                                progress=False)
            record = RunRecord.read(run_uri)
            plan, originals = plan_retest(run_uri, cmd)
            t0 = time.time()
            retest = run_sweep(SweepOptions(
                benchmark=str(lab), submissions=str(lab / "submissions"), output=str(runs),
                config=point_at_emulators(retest_config(record.config, cmd, emulated=True), emus.endpoints),
                vendors="emulated", run_id="lab", progress=False, retest=plan, identity_config=record.config,
                output_model=retest_output_model(run_uri, plan, originals)))
            retest_s = time.time() - t0
            calls = read_table(run_uri, "calls", ["repeat", "purpose", "cost_usd", "reused_from"]).to_pylist()
            paid = [c for c in calls if c["repeat"] > 0 and c["purpose"] != "preflight" and c["reused_from"] is None]
            measured = sum(c["cost_usd"] for c in paid)
            original_usd = sum(c["cost_usd"] for c in calls if c["repeat"] == 0 and c["purpose"] != "preflight")
    estimated = retest.estimated_cost_usd or 0.0
    error = estimated / measured - 1 if measured else None
    result = {
        "benchmark": "retest_cost",
        "command": f"python benchmarks/retest_cost.py --tasks {args.tasks} --seed {args.seed} --share {args.share:g} "
                   f"--repeats {args.repeats}" + (" --audit" if args.audit else ""),
        "machine": f"{os.cpu_count()} cores (shared)",
        "lab": {"tasks": args.tasks, "submissions": len(subs), "complete": original.complete},
        "retest": {"sampled": len(plan.sampled), "repeats": args.repeats, "gradings": plan.total,
                   "audit": args.audit, "graded": retest.graded, "complete": retest.complete,
                   "paid_calls": len(paid)},
        "original_usd": round(original_usd, 4),
        "estimated_usd": round(estimated, 4),
        "measured_usd": round(measured, 4),
        "estimate_error": None if error is None else round(error, 4),
        "within_5_percent": error is not None and abs(error) <= 0.05,
        "wall_s": {"sweep": round(sweep_s, 1), "retest": round(retest_s, 1)},
        "note": "estimated: what the retest's sweep engine priced before its first call (the run's own output "
                "tokens, the sampled originals' audited share); measured: the repeats' calls in the calls table, "
                "preflight excluded",
    }
    print(json.dumps(result, indent=2))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
