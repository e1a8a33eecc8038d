"""What a judge call costs to cross from a grading worker to its vendor actor and back, per call.

Usage: python benchmarks/transport.py [--lab-tasks 4] [--rounds 20] [--out PATH]

The in-process floor of `benchmarks/orchestration_ceiling.py` grades submissions with the vendors
in the same process; a sweep sends each call to its account's `VendorActor` (one budget per
account) and gets the reply back. What that adds per judge call, apart from Ray's own per-call
and per-second costs, is measured here on the calls a realistic-size submission makes
(`tribunal synth --profile lab`, seed 7, as the other benchmarks): the submissions are graded
once in this process with zero-work vendors that record every batch of requests they are given
and the replies they return, then each step of the trip is timed over all the recorded batches,
`--rounds` times, and divided by the calls:

* in the grading worker: `pack_requests` and cloudpickle (as Ray pickles arguments), then on the
  way back `pickle.loads` and `unpack_replies`;
* in the vendor actor: `pickle.loads` and `unpack_requests`, the tally and Ray metrics of the
  batch (`jobs.sweep.metrics`: one latency per paid call), `pack_replies` and cloudpickle.

The zero-work replies are short (a fixed reasoning sentence), so unpickling them is cheaper than
real replies. Prints and writes `benchmarks/results/transport.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import ray  # noqa: E402
from ray import cloudpickle  # noqa: E402

from benchmarks.orchestration_ceiling import zero_config  # noqa: E402
from doubles.synth.lab import generate_lab  # noqa: E402
from evalcore.benchmark.loader import load_benchmark  # noqa: E402
from evalcore.config.load import load_config  # noqa: E402
from evalcore.errors import VendorError  # noqa: E402
from evalcore.grading.grade import grade_submission  # noqa: E402
from evalcore.schema import Submission  # noqa: E402
from evalcore.submissions.loader import iter_submissions  # noqa: E402
from evalcore.vendors.protocol import JudgeReply, JudgeRequest, T, Vendor  # noqa: E402
from evalcore.vendors.sharding import create_account_vendors  # noqa: E402
from jobs.sweep.actors import pack_replies, pack_requests, unpack_replies, unpack_requests  # noqa: E402
from jobs.sweep.metrics import VendorMetrics, tally  # noqa: E402

Batch = tuple[list[JudgeRequest], type[Any], list[Any]]


class Recording:
    """A vendor that passes every call on and keeps each batch (requests, schema, replies)."""

    def __init__(self, inner: Vendor, batches: list[Batch]) -> None:
        self.inner, self.batches = inner, batches
        self.name, self.family, self.model = inner.name, inner.family, inner.model

    async def complete(self, request: JudgeRequest, schema: type[T]) -> JudgeReply[T]:
        (reply,) = await self.complete_many([request], schema)
        if isinstance(reply, VendorError):
            raise reply
        return reply

    async def complete_many(self, requests: list[JudgeRequest], schema: type[T]) -> list[JudgeReply[T] | VendorError]:
        replies = await self.inner.complete_many(requests, schema)
        self.batches.append((list(requests), schema, list(replies)))
        return replies

    async def aclose(self) -> None:
        await self.inner.aclose()


def record_batches(lab: Path, work: Path) -> tuple[list[Batch], int]:
    """Grade the lab benchmark's submissions once (zero-work vendors), keeping every batch."""
    tasks = {t.id: t for t in load_benchmark(str(lab)).tasks}
    subs = [s for s in iter_submissions(str(lab / "submissions"), tasks) if isinstance(s, Submission)]
    cfg = load_config(zero_config(work / "zero.yaml"))
    batches: list[Batch] = []

    async def grade_all() -> None:
        vendors: dict[str, Any] = {k: Recording(v, batches) for k, v in create_account_vendors(cfg.vendors()).items()}
        await asyncio.gather(*(grade_submission(tasks[s.task_id], s, cfg, vendors, run_id="transport") for s in subs))
        for v in vendors.values():
            await v.aclose()

    asyncio.run(grade_all())
    return batches, len(subs)


def per_call_us(step: Callable[[Batch], Any], batches: list[Batch], rounds: int) -> float:
    """CPU microseconds per judge call of `step` over every batch, best of `rounds` passes."""
    calls = sum(len(b[0]) for b in batches)
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        for b in batches:
            step(b)
        best = min(best, time.process_time() - t0)
    return round(1e6 * best / calls, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--lab-tasks", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "transport.json"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        generate_lab(work / "lab", tasks=args.lab_tasks, seed=7)
        batches, graded = record_batches(work / "lab", work)
    # the payloads as they cross: packed and pickled once, to time each side on its own
    req_blobs = {id(b): cloudpickle.dumps(pack_requests(b[0])) for b in batches}
    rep_blobs = {id(b): cloudpickle.dumps(pack_replies(b[2])) for b in batches}
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)  # Ray metrics record only in a Ray process
    try:
        metrics = VendorMetrics("transport", ["judge"])
        steps: dict[str, Callable[[Batch], Any]] = {
            "worker: pack_requests + cloudpickle": lambda b: cloudpickle.dumps(pack_requests(b[0])),
            "actor: unpickle + unpack_requests": lambda b: unpack_requests(pickle.loads(req_blobs[id(b)])),
            "actor: tally + Ray metrics": lambda b: metrics.calls("judge", tally(b[0], b[2])),
            "actor: pack_replies + cloudpickle": lambda b: cloudpickle.dumps(pack_replies(b[2])),
            "worker: unpickle + unpack_replies": lambda b: unpack_replies(pickle.loads(rep_blobs[id(b)]), b[1]),
        }
        us = {name: per_call_us(step, batches, args.rounds) for name, step in steps.items()}
    finally:
        ray.shutdown()
    calls = sum(len(b[0]) for b in batches)
    result = {
        "benchmark": "transport",
        "command": "python benchmarks/transport.py " + " ".join(sys.argv[1:]),
        "lab_tasks": args.lab_tasks,
        "submissions": graded,
        "judge_calls": calls,
        "batches": len(batches),
        "mean_calls_per_batch": round(calls / max(len(batches), 1), 1),
        "request_bytes_per_call": round(sum(len(x) for x in req_blobs.values()) / calls),
        "reply_bytes_per_call": round(sum(len(x) for x in rep_blobs.values()) / calls),
        "cpu_us_per_call": us,
        "total_cpu_us_per_call": round(sum(us.values()), 2),
    }
    print(json.dumps(result, indent=2))
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
