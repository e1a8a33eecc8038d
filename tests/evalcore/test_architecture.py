"""Dependencies point one way: evalcore is a pure library that never imports Ray or jobs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample"

SCRIPT = """
import importlib, pkgutil, sys
import evalcore
for m in pkgutil.walk_packages(evalcore.__path__, "evalcore."):
    importlib.import_module(m.name)
bad = sorted(n for n in sys.modules if n == "ray" or n.startswith("ray.") or n == "jobs" or n.startswith("jobs."))
print(",".join(bad))
"""


def test_importing_every_evalcore_module_never_imports_ray_or_jobs() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == ""


def test_the_public_surface_grades_a_submission_without_ray() -> None:
    import asyncio

    import evalcore

    config = evalcore.load_config(vendors="offline")
    bench = evalcore.load_benchmark(str(SAMPLE))
    subs = evalcore.load_submissions(str(SAMPLE / "submissions"), bench.task_map())
    s = subs.submissions[0]
    result = asyncio.run(evalcore.grade_submission(bench.task_map()[s.task_id], s, config))
    assert result.submission.status == "complete"
    assert len(result.verdicts) == 3 * len(bench.task_map()[s.task_id].criteria)
