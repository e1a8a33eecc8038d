"""Real matters: a task whose only source is a scan is graded with page-cited evidence, and a task
with no source documents is graded with its audit against the instructions.

End to end: the task folder is loaded from disk like a benchmark (the scan is OCR'd), then graded
by the real SDK clients against the emulators (offline answers), audit always on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from doubles.emulators import OfflineResponder
from doubles.emulators._set import EmulatorSet
from doubles.emulators.serve import point_at_emulators
from evalcore.benchmark.instructions_only import SOURCE_NAME
from evalcore.benchmark.loader import load_task
from evalcore.config.load import load_config
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.prompts import parse_prompt
from evalcore.schema import Deliverable, Submission, Task
from evalcore.vendors.registry import create_vendor
from examples.sample_gen.scans import scanned_pdf

FAITHFUL = "The purchase price was $4,250,000, payable in three installments."  # page 1, verbatim
ALTERED = "They agreed to extend it by ninety days, but only in writing, and that letter is Exhibit 12."
# page 2 says "forty-five days": a fabricated quotation of the deposition


async def _grade(task: Task, memo: str) -> tuple[GradeResult, list[str]]:
    async with EmulatorSet(responder=OfflineResponder()) as emus:
        cfg = point_at_emulators(load_config(vendors="real"), emus.endpoints())
        vendors = {v.name: create_vendor(v) for v in cfg.vendors()}
        sub = Submission(system="x", task_id=task.id, deliverables={"memo": Deliverable(name="memo", text=memo)})
        try:
            result = await grade_submission(task, sub, cfg, vendors, audit_mode="always")
        finally:
            for v in vendors.values():
                await v.aclose()
        detect_prompts = [r.user for e in emus.by_vendor().values() for r in e.requests
                          if parse_prompt(r.system, r.user).purpose == "detect"]
    return result, detect_prompts


@pytest.fixture
def scan_task(tmp_path: Path, bench) -> Task:
    data, _ = scanned_pdf()
    task = bench.task_json(
        instructions="Summarise the deposition for the trial team.",
        deliverables={"memo": "memo.md"},
        criteria=[{"id": "C-001", "title": "Price",
                   "match_criteria": "PASS if the memo states the purchase price of $4,250,000. FAIL otherwise."}],
    )
    folder = bench.write(tmp_path / "tasks", "litigation/deposition", task, documents={"deposition.pdf": data})
    return load_task(str(folder))


async def test_fabricated_quotation_of_a_scan_is_flagged_with_its_page_and_a_faithful_one_is_not(scan_task):
    assert [p.ocr for p in scan_task.documents[0].pages] == [True, True]
    memo = (
        f'The witness confirmed the price: "{FAITHFUL}"\n\n'
        f'On the delay she testified: "{ALTERED}"\n'
    )
    result, detect_prompts = await _grade(scan_task, memo)

    assert result.row.status == "complete" and result.row.audited
    confirmed = [f for f in result.flags if f.status == "confirmed"]
    assert [(f.evidence_document, f.evidence_page, f.category) for f in confirmed] == [
        ("deposition.pdf", "Page 2", "contradiction")
    ]
    assert "ninety days" in confirmed[0].span
    assert not [f for f in result.flags if "4,250,000" in str(f.span)]
    # the auditor reads the page headings it is asked to cite
    assert detect_prompts and all("## Page 2 (OCR)" in p and "evidence_page" in p for p in detect_prompts)


async def test_task_without_documents_is_graded_and_audited_against_its_instructions(tmp_path, bench):
    task_json = bench.task_json(
        instructions=(
            "Our client Harbor Lane Capital LLC signed a lease on 1 March 2024 at a monthly rent of $12,500. "
            "Write a memo on its notice obligations under the lease."
        ),
        deliverables={"memo": "memo.md"},
        criteria=[{"id": "C-001", "title": "Rent",
                   "match_criteria": "PASS if the memo states the monthly rent. FAIL otherwise."}],
    )
    folder = bench.write(tmp_path / "tasks", "real-estate/notice", task_json, documents={})
    task = load_task(str(folder))
    assert task.documents == []
    memo = (
        "Harbor Lane Capital LLC pays a monthly rent of $15,000 under the lease signed on 1 March 2024.\n\n"
        "Notices should be sent by courier with a 30-day cure period, as is customary."
    )
    result, detect_prompts = await _grade(task, memo)

    assert result.row.status == "complete"
    assert len(result.verdicts) == 3 and result.row.task_score is not None
    assert result.row.audited
    # a fact the instructions state, contradicted: flagged with the instructions as its evidence
    confirmed = [f for f in result.flags if f.status == "confirmed"]
    assert [(f.span, f.evidence_document) for f in confirmed] == [("$15,000", SOURCE_NAME)]
    # specifics the instructions do not mention (the 30-day cure period) are out of scope
    assert not [f for f in result.flags if "30-day" in str(f.span)]
    assert detect_prompts and all(f'name="{SOURCE_NAME}"' in p for p in detect_prompts)
