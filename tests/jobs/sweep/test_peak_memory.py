"""A process's peak memory is its own: a sweep started by a large process does not report that
process's peak as its own (`jobs.sweep.peak_memory`; a benchmark that had just synthesised 100,000
submissions made its sweep report 3.4 GB)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PARENT_MB = 800
CHILD_MB = 150

_PARENT = f"""
import subprocess, sys
ballast = bytearray({PARENT_MB} * 2**20)
ballast[::4096] = b"x" * len(ballast[::4096])  # resident, not just reserved
del ballast  # the parent's peak stays {PARENT_MB} MB; what it holds now is far less
child = '''
import json, resource
from jobs.sweep.peak_memory import peak_rss_mb
held = bytearray({CHILD_MB} * 2**20)
held[::4096] = b"x" * len(held[::4096])
print(json.dumps({{"own": peak_rss_mb(), "ru_maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
'''
sys.exit(subprocess.run([sys.executable, "-c", child]).returncode)
"""


def test_a_child_of_a_large_process_reports_its_own_peak_not_the_one_it_inherited_at_fork() -> None:
    done = subprocess.run([sys.executable, "-c", _PARENT], capture_output=True, text=True, cwd=ROOT, check=True)
    peaks = json.loads(done.stdout)
    assert peaks["ru_maxrss"] >= PARENT_MB  # the kernel's ru_maxrss: the parent's peak, inherited
    assert CHILD_MB <= peaks["own"] < PARENT_MB / 2  # its own: what it held, and a Python's start
