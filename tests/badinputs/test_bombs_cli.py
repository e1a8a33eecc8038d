"""`tribunal validate` on the bombs of issue 24 (PDF content and text bombs, 10,000 criteria): exit
code 1, the `file: reason` line naming the limit, and the command's peak memory under 1 GB.

The command runs as a child process (`jobs.cli.app`'s app, what the ``tribunal`` script runs) under
an address-space cap; its peak RSS is its own high-water mark (`jobs.sweep.peak_memory`), read as it
exits, so what is measured is the whole command: configuration, loading, conversion and the
report. (The kernel's ``ru_maxrss`` of the child would also hold this test process's peak: a child
inherits its parent's high-water mark at fork.) Before
the limits, the 40-page PDF took this command to 3.1 GB and the 100-page one past 6 GiB.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.badinputs.build import REPO, Case, build, by_id

PEAK_LIMIT_MB = 1024
"""The target: `tribunal validate` on any of these bombs stays under 1 GB."""

ADDRESS_SPACE_CAP = 4 * 2**30

BOMBS = [
    by_id(case_id)
    for case_id in (
        "pdf-content-bomb-source",
        "pdf-content-bomb-deliverable",
        "pdf-content-over-file-limit",
        "pdf-text-bomb-deliverable",
        "task-10000-criteria",
    )
]


def _cap_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_CAP, ADDRESS_SPACE_CAP))


_CLI_REPORTING_ITS_PEAK = """
import sys
from pathlib import Path
from jobs.sweep.peak_memory import peak_rss_mb
peak_file = Path(sys.argv.pop(1))
try:
    from jobs.cli.app import app
    app(prog_name="tribunal")
finally:
    peak_file.write_text(str(peak_rss_mb()))
"""


def run_cli(args: list[str], out: Path) -> tuple[int, str, float]:
    """(exit code, output, peak RSS in MB) of ``tribunal <args>`` run as a child process."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "COLUMNS": "250",
    }
    peak_file = out.with_name(out.name + ".peak")
    with out.open("wb") as sink:
        child = subprocess.run(
            [sys.executable, "-c", _CLI_REPORTING_ITS_PEAK, str(peak_file), *args], stdout=sink,
            stderr=subprocess.STDOUT, env=env, preexec_fn=_cap_address_space, check=False,
        )
    peak = float(peak_file.read_text()) if peak_file.exists() else float("inf")  # killed before its `finally`
    return child.returncode, out.read_text(errors="replace"), peak


@pytest.mark.parametrize("case", BOMBS, ids=[c.id for c in BOMBS])
def test_validate_refuses_each_bomb_with_exit_1_and_its_file_reason_line_under_1_gb(case: Case, tmp_path: Path) -> None:
    root = build(case, tmp_path / case.id)
    code, output, peak_mb = run_cli(
        ["validate", str(root), "-s", str(root / case.submissions_uri)], tmp_path / "out.txt"
    )
    assert code == 1, output[-3000:]
    assert "Traceback" not in output
    lines = output.splitlines()
    for problem in case.problems:
        prefix = f"{root / problem.file}: "
        matching = [line for line in lines if line.startswith(prefix)]
        assert len(matching) == 1, f"no line starting {prefix!r} in:\n{output[-3000:]}"
        assert all(fragment in matching[0] for fragment in problem.reason), matching[0]
    assert peak_mb < PEAK_LIMIT_MB, f"peak RSS {peak_mb:.0f} MB"


def test_jobs_cli_runs_as_a_module_like_the_tribunal_script(tmp_path: Path) -> None:
    """The runner above relies on ``python -m jobs.cli`` being the ``tribunal`` command."""
    code, output, _ = run_cli(["validate", str(REPO / "examples" / "sample")], tmp_path / "out.txt")
    assert code == 0 and "No problems found" in output
