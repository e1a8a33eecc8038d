"""Measure the synthetic scale-up: how fast `doubles.synth.scale.synthesize` writes N submissions.

Why: scale tests and sweep benchmarks start by generating thousands of submissions with known
ground truth; the target (issue 2, part 8) is 2,000 submissions in a few seconds.

    .venv/bin/python benchmarks/synth_scale.py [--n 2000] [--seed 0] [--out benchmarks/results/synth_scale.json]

Runs the generator into a temporary folder (cold: document conversion cache emptied first, then
warm), prints the figures and writes them as JSON. Exit status 0 even if the target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 5.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample", type=Path, default=ROOT / "examples" / "sample")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "synth_scale.json")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as work:
        os.environ["TRIBUNAL_CACHE_DIR"] = cache  # cold start: sources converted from scratch
        from doubles.synth.scale import summary, synthesize
        from evalcore.benchmark.cache import clear_cache

        clear_cache()
        timings = {}
        for label in ("cold", "warm"):
            start = time.perf_counter()
            gt = synthesize(args.sample, None, args.n, Path(work) / label, seed=args.seed)
            timings[label] = round(time.perf_counter() - start, 3)
        files = sum(1 for p in (Path(work) / "warm" / "results").rglob("*") if p.is_file())

    result = {
        "n": args.n,
        "seed": args.seed,
        "seconds": timings,
        "submissions_per_second_warm": round(args.n / timings["warm"], 1),
        "files_written": files,
        "hallucinations": len(gt.hallucinations),
        "target_seconds": TARGET_SECONDS,
        "target_met": timings["cold"] <= TARGET_SECONDS,
        "summary": summary(gt).splitlines(),
    }
    print(f"synthesize n={args.n}: cold {timings['cold']} s, warm {timings['warm']} s "
          f"({result['submissions_per_second_warm']}/s), {files} files")
    print(summary(gt))
    print(f"target <= {TARGET_SECONDS} s: {'MET' if result['target_met'] else 'NOT MET'}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
