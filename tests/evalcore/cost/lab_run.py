"""A lab benchmark graded in plain asyncio through the real SDKs against the emulators, written as a
run folder: what the estimate's tests calibrate from and compare with."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from doubles.emulators import EmulatorConfig
from doubles.emulators._set import EmulatorSet
from doubles.emulators.ground_truth import ground_truth_responder
from doubles.emulators.serve import point_at_emulators
from doubles.synth.ground_truth import load_ground_truth
from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.storage.store import write_json, write_shard
from evalcore.submissions.loader import load_submissions
from evalcore.vendors.registry import create_vendor


def grade_lab(root: Path, emulators: EmulatorConfig, run_id: str) -> dict[str, Any]:
    """Grade every submission of the lab benchmark at `root` with the default panel aimed at
    emulators configured by `emulators` (answers from the lab's ground truth), and write the rows
    as one shard of a run folder `root/run`."""
    gt = load_ground_truth(root / "ground_truth.json")
    tasks = load_benchmark(str(root)).task_map()
    subs = load_submissions(str(root / "submissions"), tasks).submissions
    owner = {d.text: (s.system, s.task_id) for s in subs for d in s.deliverables.values() if not d.missing}

    async def run() -> tuple[list[GradeResult], Any]:
        async with EmulatorSet(emulators, responder=ground_truth_responder(gt, owner)) as emus:
            cfg = point_at_emulators(load_config(vendors="real"), emus.endpoints())
            vendors = {v.name: create_vendor(v) for v in cfg.vendors()}
            try:
                results = await asyncio.gather(*(grade_submission(tasks[s.task_id], s, cfg, vendors) for s in subs))
            finally:
                for v in vendors.values():
                    await v.aclose()
            return list(results), cfg

    results, cfg = asyncio.run(run())
    run_uri = str(root / "run")
    write_json(f"{run_uri}/run.json", {"run_id": run_id})
    write_shard(run_uri, "part-000000-all", {
        "submissions": [r.submission for r in results],
        "verdicts": [v for r in results for v in r.verdicts],
        "flags": [f for r in results for f in r.flags],
        "calls": [c for r in results for c in r.calls],
    })
    return {"tasks": tasks, "subs": subs, "results": results, "cfg": cfg, "run": run_uri, "root": root}
