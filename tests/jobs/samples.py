"""Cuts of the sample for the tests of the Ray layer: some of its tasks, every system's submissions
of them, in the sample's own layout (`<root>/tasks/...`, `<root>/submissions/<system>/...`), so
`tribunal sweep ROOT -s ROOT/submissions` works on a cut as on the sample.

Why cuts: every submission a sweep grades costs ~39 calls through the real SDKs, and most tests
need only a few submissions that show what they check (`tests/jobs/conftest.py::small_sample` is
the cut most mechanics tests share; a test that needs particular tasks cuts its own here).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from tests.jobs.conftest import SAMPLE


def cut_sample(root: Path, tasks: Iterable[str]) -> Path:
    """Copy `tasks` of the sample (ids like `employment/restrictive-covenants`) and all four
    systems' submissions of them under `root`; returns `root`."""
    systems = sorted(p.name for p in (SAMPLE / "submissions").iterdir() if p.is_dir())
    for task in tasks:
        shutil.copytree(SAMPLE / "tasks" / task, root / "tasks" / task)
        for system in systems:
            shutil.copytree(SAMPLE / "submissions" / system / task, root / "submissions" / system / task)
    return root
