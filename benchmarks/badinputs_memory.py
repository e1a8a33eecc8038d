"""Peak memory of loading each memory-heavy bad input, with the input limits and (--control) without.

Every isolated case of the bad-input corpus (``tests/badinputs/build.py``: decompression bombs, a
1 M-row workbook, a 70 MB deliverable, a 12 MB XML text node, PDFs whose content streams or text
inflate to gigabytes, a task of 10,000 criteria) is built, then loaded by ``tribunal
validate``'s loader in a fresh subprocess whose peak RSS is read with ``resource.getrusage``; the
address space is capped (4 GB) so a control run fails with MemoryError instead of swapping. With
``--control`` each case is loaded again with every limit raised out of the way, which is what the
loader did before the limits existed: the difference is what the limits save.

    .venv/bin/python benchmarks/badinputs_memory.py [--control] [--case ID ...] [--out benchmarks/results/badinputs_memory.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.badinputs.build import CASES, build  # noqa: E402
from tests.badinputs.test_corpus import run_validate  # noqa: E402

NO_LIMITS = {
    "max_file_bytes": 2**40, "max_unpacked_bytes": 2**40, "max_archive_members": 2**31,
    "max_sheet_rows": 2**31, "max_sheet_cells": 2**40, "max_source_chars": 2**40,
    "max_pdf_page_content_bytes": 2**40, "max_pdf_content_bytes": 2**40, "max_pdf_page_chars": 2**40,
    "max_pdf_text_chars": 2**40, "max_task_criteria": 2**31,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--control", action="store_true", help="also load each case with the limits out of the way")
    parser.add_argument("--case", action="append", help="only this case (repeatable; default: every isolated case)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "badinputs_memory.json")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in (c for c in CASES if c.isolate and (not args.case or c.id in args.case)):
            root = build(case, Path(tmp) / case.id)
            runs = [("limits", case)] + ([("control", replace(case, limits=NO_LIMITS))] if args.control else [])
            for label, variant in runs:
                t0 = time.time()
                try:
                    report, peak = run_validate(variant, root)
                    outcome = "; ".join(p["reason"][:90] for p in report["problems"][:1]) or "accepted"
                except AssertionError as exc:  # the subprocess died (MemoryError under the cap, ...)
                    peak, outcome = None, f"failed: {str(exc).strip().splitlines()[-1][:120]}"
                row = {"case": case.id, "run": label, "peak_rss_mb": round(peak) if peak else None,
                       "wall_s": round(time.time() - t0, 1), "outcome": outcome}
                results.append(row)
                print(json.dumps(row), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.case and args.out.exists():  # a partial run replaces its cases' rows, keeps the others
        done = {(r["case"], r["run"]) for r in results}
        kept = [r for r in json.loads(args.out.read_text())["cases"] if (r["case"], r["run"]) not in done]
        results = kept + results
    args.out.write_text(json.dumps({"address_space_cap_gb": 4, "cases": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
