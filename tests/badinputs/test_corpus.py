"""The bad-input corpus (``build.py``): each broken copy of the sample gives exactly its outcome.

For every case: every problem ``validate`` reports is expected (the file it names and the reason),
none is missing, the left-out task's submissions are rejected pointing at it, and every other task
and submission still loads. Cases that could exhaust memory run in a subprocess whose peak RSS is
measured (its own high-water mark, `jobs.sweep.peak_memory`) under an address-space cap, so a regression fails here instead of
taking the machine down.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evalcore.benchmark.validate import validate
from evalcore.config.models import InputLimits
from tests.badinputs.build import CASES, REPO, SAMPLE, Case, build

ADDRESS_SPACE_CAP = 4 * 2**30
"""RLIMIT_AS of an isolated case: far below what the bombs needed before the limits (> 6 GB)."""

_ISOLATED = """
import json, sys
from evalcore.config.models import InputLimits
from evalcore.benchmark.validate import validate
from jobs.sweep.peak_memory import peak_rss_mb
report = validate(sys.argv[1], sys.argv[2], limits=InputLimits(**json.loads(sys.argv[3])))
peak_mb = peak_rss_mb()  # its own: ru_maxrss would also hold this test process's peak
print(json.dumps({"report": report.model_dump(mode="json"), "peak_mb": peak_mb}))
"""


def _cap_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_CAP, ADDRESS_SPACE_CAP))


def run_validate(case: Case, root: Path) -> tuple[dict[str, Any], float | None]:
    """The validation report (as JSON) and, for an isolated case, the loading process's peak RSS in MB."""
    submissions = str(root / case.submissions_uri)
    if not case.isolate:
        report = validate(str(root), submissions, limits=InputLimits(**case.limits))
        return report.model_dump(mode="json"), None
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-c", _ISOLATED, str(root), submissions, json.dumps(case.limits)],
        capture_output=True, text=True, env=env, preexec_fn=_cap_address_space, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["report"], out["peak_mb"]


def _relative(file: str, root: Path) -> str:
    return Path(file).relative_to(root).as_posix() if file.startswith(str(root)) else file


def test_the_clean_sample_has_no_problem_so_every_case_starts_from_a_valid_copy(tmp_path: Path) -> None:
    report = validate(str(SAMPLE), str(SAMPLE / "submissions"))
    assert report.ok and report.n_tasks == 8 and report.n_submissions == 32


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_reported_by_file_and_reason_and_everything_else_loads(case: Case, tmp_path: Path) -> None:
    root = build(case, tmp_path / case.id)
    report, peak_mb = run_validate(case, root)
    got = [(_relative(p["file"], root), p["reason"]) for p in report["problems"]]
    expected = case.expected_problems()
    for problem in expected:
        matches = [g for g in got if g[0] == problem.file and all(f in g[1] for f in problem.reason)]
        assert len(matches) == 1, f"expected one problem {problem} among {got}"
    assert len(got) == len(expected), f"unexpected problems: {got}"
    assert report["n_tasks"] == case.expected_tasks()
    assert report["n_submissions"] == case.expected_submissions()
    if case.isolate:
        assert peak_mb is not None and peak_mb < case.peak_mb, f"peak RSS {peak_mb:.0f} MB"


def test_the_corpus_covers_every_input_item_of_the_issue_with_at_least_25_cases() -> None:
    assert len(CASES) >= 25
    assert len({c.id for c in CASES}) == len(CASES)
    per_item = Counter(c.item for c in CASES)
    assert set(per_item) >= {"1", "2", "3", "4", "6", "10", "11", "15"}
    isolated = Counter(c.item for c in CASES if c.isolate and not c.limits)
    assert isolated["1"] >= 3 and isolated["4"] >= 1  # bombs, huge files, a million rows: memory measured


def test_every_case_is_listed_in_docs_reliability_md() -> None:
    listed = (REPO / "docs" / "RELIABILITY.md").read_text(encoding="utf-8")
    assert [c.id for c in CASES if f"`{c.id}`" not in listed] == []
