"""Where the test suite's CPU goes: each test module run alone, with every process it starts counted
(issue 41 item 6: the suite is CPU-bound on 2 cores, so its time is its CPU over two).

Each module runs as `python -m pytest -q MODULE` under a child subreaper (`prctl
PR_SET_CHILD_SUBREAPER`): Ray's raylet, its workers and the CLI's sweeps are reparented to this
process when their parents exit, and reaped here, so `RUSAGE_CHILDREN` holds the CPU of the whole
tree, not only of pytest and the children it waited for. Each row: user and system CPU-s, wall
seconds, and the pytest summary line. Every module pays its own pytest start (about the lightest
module's CPU) and, if it
uses Ray, its own Ray start, which a parallel run of the suite pays once per worker.

    python benchmarks/suite_cpu.py [--jobs 2] [--out benchmarks/results/suite_cpu.json] [MODULE ...]

It first times a few fixed snippets (`REFERENCE`: a pure-Python loop, `import anthropic`, `import
ray`) in fresh interpreters: the host's own speed, without which two runs' CPU-s do not compare.

Nothing leaves 127.0.0.1 (the tests' own rule).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REAPER = """
import ctypes, json, os, resource, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
start = time.monotonic()
done = subprocess.run(sys.argv[2:], capture_output=True, text=True)
wall = time.monotonic() - start
deadline = time.monotonic() + 120  # the orphans of the tree (Ray's daemons and workers) exit
while True:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid == 0:
        if time.monotonic() > deadline:  # one that never exits is killed, not waited for
            subprocess.run(["pkill", "-9", "-P", str(os.getpid())], check=False)
        time.sleep(0.2)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
lines = [line for line in done.stdout.splitlines() if line.strip()]
json.dump({"user": usage.ru_utime, "system": usage.ru_stime, "wall": wall, "rc": done.returncode,
           "summary": lines[-1] if lines else ""}, open(sys.argv[1], "w"))
"""


def measure(module: str) -> dict[str, Any]:
    """One module, run alone in its own reaping process."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([sys.executable, "-c", REAPER, out.name, sys.executable, "-m", "pytest", "-q",
                        "-p", "no:cacheprovider", module], cwd=ROOT, check=False)
        row: dict[str, Any] = json.loads(Path(out.name).read_text())
    row["module"] = module
    row["cpu"] = round(row["user"] + row["system"], 2)
    return row


REFERENCE = {
    # a fixed pure-Python workload: the host's single-core speed
    "python_loop": "sum(i * i for i in range(3_000_000))",
    # the heaviest import a vendor actor makes, and the one every Ray process makes
    "import_anthropic": "import anthropic",
    "import_ray": "import ray",
}
"""What the host itself costs, measured before the modules: the suite's CPU-s compare across hosts
only next to these (docs/PERFORMANCE.md, "Where the test suite's CPU goes")."""


def reference() -> dict[str, float]:
    """The CPU-s of each `REFERENCE` snippet in a fresh interpreter, the best of three."""
    best: dict[str, float] = {}
    for name, code in REFERENCE.items():
        runs = []
        for _ in range(3):
            done = subprocess.run([sys.executable, "-c", f"import resource\n{code}\n"
                                   "u = resource.getrusage(resource.RUSAGE_SELF)\nprint(u.ru_utime + u.ru_stime)"],
                                  cwd=ROOT, capture_output=True, text=True, check=True)
            runs.append(float(done.stdout.split()[-1]))
        best[name] = round(min(runs), 3)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="test modules (default: every tests/**/test_*.py)")
    parser.add_argument("--jobs", type=int, default=2, help="modules measured at once (CPU-s do not depend on it)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "suite_cpu.json"))
    args = parser.parse_args()
    modules = args.modules or sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py"))
    started = time.time()
    host = reference()
    print("host reference (CPU-s, best of 3): " + ", ".join(f"{k} {v}" for k, v in host.items()))
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(measure, modules))
    rows.sort(key=lambda r: -r["cpu"])
    for r in rows[:25]:
        print(f"{r['cpu']:8.1f} CPU-s {r['wall']:7.1f} s  {r['module']}  ({r['summary']})")
    total = sum(r["cpu"] for r in rows)
    start = rows[-1]["cpu"]  # the lightest module: about one pytest start, which every module pays
    print(f"{len(rows)} modules: {total:.0f} CPU-s, of which ~{start * len(rows):.0f} their pytest starts "
          f"({start:.1f} CPU-s each, the lightest module's)")
    Path(args.out).write_text(json.dumps({
        "measured": time.strftime("%Y-%m-%d", time.gmtime(started)), "cores": os.cpu_count(),
        "host_reference_cpu_s": host,
        "total_cpu_s": round(total, 1), "modules": rows,
    }, indent=1) + "\n")


if __name__ == "__main__":
    main()
