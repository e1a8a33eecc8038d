"""Dependencies point one way: evalcore is a pure library that never imports Ray, jobs or its doubles."""

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
bad = sorted(n for n in sys.modules if n.split(".")[0] in ("ray", "jobs", "doubles"))
print(",".join(bad))
"""


def test_importing_every_evalcore_module_never_imports_ray_jobs_or_the_doubles() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == ""


def test_the_offline_vendor_plugs_in_by_entry_point_and_is_imported_only_when_named() -> None:
    """`offline` and `zero` are doubles (`doubles/adapters`): the registry lists them from the
    `tribunal.adapters` entry points and imports one only when a vendor of it is made."""
    script = (
        "import sys\n"
        "from evalcore.vendors import registry\n"
        "assert {'offline', 'zero'} <= set(registry.adapters()) and 'doubles' not in sys.modules\n"
        "from evalcore.config.load import load_config\n"
        "cfg = load_config(vendors='offline')\n"
        "v = registry.create_vendor(cfg.judges[0])\n"
        "print(type(v).__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "doubles.adapters.offline"


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
