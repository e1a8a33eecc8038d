"""What a grading worker pays to receive a task's grounding index, now and as it was pickled before.

Usage: python benchmarks/index_transfer.py [--tasks 32] [--rounds 8] [--out PATH]

A sweep builds each task's grounding index once and ships it through Ray's object store; every
grading worker that grades the task and does not hold the index yet unpickles it
(`jobs/sweep/shard_work.py`, `ShardInputs`). On the lab benchmark (`tribunal synth --profile lab`: 20k-150k
source tokens per task) a shard names 8 tasks, so this cost is paid per shard, not per sweep.

Measured here on the lab benchmark's tasks (seed 7, as `benchmarks/orchestration_ceiling.py`),
the same indexes pickled two ways, unpickled in alternating rounds in one process (this machine's
speed drifts between runs, so two runs would not compare), the collector paused as the worker does:

* **now**: `evalcore/grounding/index.py` as it is: its dataclasses pickled as calls of their class
  with their fields, each document's token offsets as one flat `array`, its tokens split back out
  of its normalised text, every keyword one shared string;
* **before** (the code before commit 5d2ad18, rebuilt here): pickle's default for the
  dataclasses (an empty object, then its `__dict__`), the offsets as a list of (start, end) tuples,
  the tokens as a list of strings, one string object per keyword occurrence.

Prints and writes `benchmarks/results/index_transfer.json`.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from doubles.synth.lab import generate_lab  # noqa: E402
from evalcore.benchmark.instructions_only import audit_sources  # noqa: E402
from evalcore.benchmark.loader import load_benchmark  # noqa: E402
from evalcore.grounding import index as index_module  # noqa: E402
from evalcore.grounding import sources as sources_module  # noqa: E402
from evalcore.grounding.text import keywords  # noqa: E402
from evalcore.schema import Task  # noqa: E402


def build(tasks: list[Task]) -> list[bytes]:
    """Each task's index, built and pickled as the sweep's index task does."""
    sources_module._build_index_cached.cache_clear()
    return [pickle.dumps(sources_module.index_sources(audit_sources(t)), protocol=5) for t in tasks]


def build_as_before(tasks: list[Task]) -> list[bytes]:
    """The same indexes in the representation before: see the module's docstring."""
    keyword_set = sources_module._keyword_set
    reduce = index_module._PickledByFields.__reduce__
    sources_module._keyword_set = lambda text: frozenset(keywords(text))
    del index_module._PickledByFields.__reduce__
    try:
        blobs = []
        for blob in build(tasks):
            index = pickle.loads(blob)
            index = dataclasses.replace(index, norm=[
                (d.name, d.text, d.tokens, [(d.start(i), d.end(i)) for i in range(len(d.tokens))]) for d in index.norm
            ])
            blobs.append(pickle.dumps(index, protocol=5))
        return blobs
    finally:
        sources_module._keyword_set = keyword_set
        index_module._PickledByFields.__reduce__ = reduce  # type: ignore[method-assign]


def unpickle_ms(blobs: list[bytes]) -> float:
    """CPU milliseconds per index to unpickle them all, the collector paused."""
    gc.disable()
    try:
        t0 = time.process_time()
        for blob in blobs:
            pickle.loads(blob)
        return 1000 * (time.process_time() - t0) / len(blobs)
    finally:
        gc.enable()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "index_transfer.json"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tribunal-index-transfer-") as tmp:
        generate_lab(Path(tmp), tasks=args.tasks, seed=7)
        tasks = load_benchmark(str(Path(tmp) / "tasks")).tasks
        now = build(tasks)
        before = build_as_before(tasks)
    times: dict[str, list[float]] = {"before": [], "now": []}
    for _ in range(args.rounds):
        times["before"].append(unpickle_ms(before))
        times["now"].append(unpickle_ms(now))
    result: dict[str, Any] = {
        "benchmark": "index_transfer",
        "command": f"python benchmarks/index_transfer.py --tasks {args.tasks} --rounds {args.rounds}",
        "machine": f"{os.cpu_count()} cores (shared)",
        "tasks": len(tasks),
        "unpickle_ms_per_task": {k: round(statistics.median(v), 2) for k, v in times.items()},
        "unpickle_ms_per_task_range": {k: [round(min(v), 2), round(max(v), 2)] for k, v in times.items()},
        "pickle_kb_per_task": {"before": round(sum(map(len, before)) / len(before) / 1024, 1),
                               "now": round(sum(map(len, now)) / len(now) / 1024, 1)},
    }
    result["now_to_before"] = round(result["unpickle_ms_per_task"]["now"] / result["unpickle_ms_per_task"]["before"], 3)
    print(json.dumps(result, indent=1))
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
