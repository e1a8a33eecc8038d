"""Runs of the sample graded for real, cheaply: the offline judges in plain asyncio (no Ray), each run
written as a finished sweep writes it (run.json with the benchmark's identity and the prompt hashes,
one shard of rows, _SUCCESS.json). What the release tests build releases from."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.config.models import TribunalConfig, VendorMode
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.prompts import template_hashes
from evalcore.storage import fs
from evalcore.storage.run import open_run
from evalcore.storage.store import BenchmarkRef, ModelRef, RunRecord, TaskRef, stored_calls, write_shard
from evalcore.submissions.loader import load_submissions
from evalcore.vendors.stack import build_stacks

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample"
JUNE_2026, NOVEMBER_2026 = 1_780_000_000.0, 1_793_000_000.0


def cut(root: Path, tasks: Iterable[str], systems: Iterable[str]) -> Path:
    """The sample's benchmark.json, `tasks` and the `systems`' submissions of them under `root`."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(SAMPLE / "benchmark.json", root / "benchmark.json")
    for task in tasks:
        shutil.copytree(SAMPLE / "tasks" / task, root / "tasks" / task)
        for system in systems:
            shutil.copytree(SAMPLE / "submissions" / system / task, root / "submissions" / system / task)
    return root


def grade_run(bench: Path, submissions: Path, run_uri: str, run_id: str, created_at: float,
              config: TribunalConfig | None = None, reuse: Sequence[str] = ()) -> list[GradeResult]:
    """Grade every submission under `submissions` offline and write the run folder at `run_uri`;
    with `reuse`, through the sweep's vendor stack serving the calls those runs paid (`--reuse`)."""
    loaded = load_benchmark(str(bench))
    tasks = loaded.task_map()
    subs = load_submissions(str(submissions), tasks).submissions
    cfg = config or load_config(vendors="offline")

    async def grade() -> list[GradeResult]:
        stacks = build_stacks(cfg.vendors(), run_id=run_id, stored=lambda name: stored_calls(reuse, name))
        vendors = {n: s.vendor for n, s in stacks.items()}
        try:
            return list(await asyncio.gather(*(grade_submission(tasks[s.task_id], s, cfg, vendors, run_id=run_id)
                                               for s in subs)))
        finally:
            for s in stacks.values():
                await s.vendor.aclose()

    results = asyncio.run(grade())
    assert loaded.identity is not None
    RunRecord(
        run_id=run_id, created_at=created_at, code_version="test", vendors=VendorMode.OFFLINE,
        config_fingerprint="f" * 64, config=cfg,
        judges=[ModelRef(name=j.name, family=j.family, model=j.model, effort=j.reasoning_effort) for j in cfg.judges],
        auditor=ModelRef(name=cfg.auditor.name, model=cfg.auditor.model, effort=cfg.auditor.reasoning_effort),
        prompt_hashes=template_hashes(),
        benchmark=BenchmarkRef(uri=str(bench), content_hash=loaded.content_hash(),
                               tasks=[TaskRef(id=t.id, area=t.area, n_criteria=len(t.criteria)) for t in loaded.tasks],
                               name=loaded.identity.name, version=loaded.identity.version),
        submissions_uri=str(submissions), reuse=[fs.basename(r) for r in reuse],
    ).write(run_uri)
    write_shard(run_uri, "part-000000-all", {
        "submissions": [r.submission for r in results], "verdicts": [v for r in results for v in r.verdicts],
        "flags": [f for r in results for f in r.flags], "calls": [c for r in results for c in r.calls],
    })
    Path(open_run(run_uri).success).write_text(json.dumps({"run_id": run_id, "attempt": 1}))
    return results
