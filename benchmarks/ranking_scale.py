"""Ranking a leaderboard whose systems were scored on different tasks, at thousands of systems.

The shape of `python benchmarks/batch_scale.py`'s 20,000 synthetic submissions: 2,500 systems over
the sample's 8 tasks, each system missing a task with probability 0.07 (44 % of systems miss one
or more; 57 % in that sweep, whose rejected submissions left 88 distinct task sets), 2,000
bootstrap replicates. `rank_matrix` then takes
the path that compares each pair on the tasks both were scored on (`_compare_shared`), O(B·S²).
In a sweep of that size the online leaderboard's reduction was still ranking after 9 minutes
(510 of 2,480 systems done), which is what this measures apart.

    python benchmarks/ranking_scale.py                       # 2,500 systems (and 800)
    python benchmarks/ranking_scale.py --label before ...    # another code's figure, merged in

Writes benchmarks/results/ranking_scale.json (CPU seconds per size and label, and a digest of the
ranking so two codes can be shown to give the same one).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evalcore.results.ranking import rank_matrix  # noqa: E402


def shape(systems: int, tasks: int, missing: float, seed: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Scores in thirteenths (a 13-criterion rubric), a task missing with probability `missing`."""
    rng = np.random.default_rng(seed)
    m = (rng.random((systems, tasks)) >= missing).astype(np.float64)
    m[m.sum(axis=1) == 0, 0] = 1.0
    x = np.round(rng.random((systems, tasks)) * 13) / 13 * m
    return [f"synth-{i:05d}" for i in range(systems)], x, m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", default="800,2500", help="comma-separated sizes")
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--missing", type=float, default=0.07)
    ap.add_argument("--label", default="now")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "ranking_scale.json"))
    args = ap.parse_args()
    out = Path(args.out)
    result = json.loads(out.read_text()) if out.exists() else {
        "benchmark": "ranking_scale", "machine": f"{os.cpu_count()} cores (shared)", "runs": {}}
    result["command"] = "python benchmarks/ranking_scale.py (--label before on the code before)"
    runs = result["runs"].setdefault(args.label, {})
    for systems in (int(s) for s in args.systems.split(",")):
        names, x, m = shape(systems, args.tasks, args.missing, seed=7)
        partial = int((m.sum(axis=1) < args.tasks).sum())
        started = time.process_time()
        ranking = rank_matrix(names, x, m, rng=np.random.default_rng(11))
        cpu = time.process_time() - started
        digest = hashlib.sha256(b"".join(a.tobytes() for a in (
            np.array(ranking.point), ranking.beats, ranking.separable)) + "\n".join(ranking.systems).encode()).hexdigest()
        runs[str(systems)] = {"tasks": args.tasks, "systems_missing_a_task": partial, "replicates": 2000,
                              "cpu_s": round(cpu, 1), "ranking_sha256": digest[:16],
                              "loadavg": [round(v, 2) for v in os.getloadavg()]}
        print(f"{args.label}: {systems} systems ({partial} missing a task) x {args.tasks} tasks: {cpu:.1f} CPU-s, "
              f"ranking {digest[:16]}", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
