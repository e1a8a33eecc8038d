"""The realistic-size (lab profile) benchmark generator: protocol-sized tasks, consistent ground
truth, seeded, and a grading through the emulators reproduces its ground-truth scores."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from doubles.emulators._set import EmulatorSet
from doubles.emulators.ground_truth import ground_truth_responder
from doubles.emulators.serve import point_at_emulators
from doubles.synth.ground_truth import GroundTruth, expected_scores, load_ground_truth
from doubles.synth.lab import SYSTEMS, generate_lab
from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.submissions.loader import load_submissions
from evalcore.vendors.registry import create_vendor


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GroundTruth]:
    root = tmp_path_factory.mktemp("lab")
    return root, generate_lab(root, tasks=2, seed=3)


def test_lab_tasks_have_the_protocol_sizes(lab) -> None:
    root, _ = lab
    bench = load_benchmark(str(root))
    assert bench.ok, bench.problems
    assert len(bench.tasks) == 2
    kinds: set[str] = set()
    for task in bench.tasks:
        assert 44 <= len(task.criteria) <= 90
        assert 5 <= len(task.documents) <= 15
        source_tokens = sum(len(d.text) for d in task.documents) / 4
        assert 20_000 * 0.9 <= source_tokens <= 150_000 * 1.1, task.id
        kinds |= {d.kind for d in task.documents}
    assert kinds == {"docx", "pdf", "xlsx", "eml"}
    subs = load_submissions(str(root / "submissions"), bench.task_map()).submissions
    assert len(subs) == 2 * len(SYSTEMS)
    for s in subs:
        assert 1000 <= len(s.deliverables["memo"].text.split()) <= 5000 * 1.1


def test_lab_ground_truth_is_consistent_with_the_files(lab) -> None:
    root, gt = lab
    assert load_ground_truth(root / "ground_truth.json") == gt
    tasks = load_benchmark(str(root)).task_map()
    sources = {tid: " ".join(" ".join(d.text for d in t.documents).split()) for tid, t in tasks.items()}
    for tid, t in tasks.items():
        for system in SYSTEMS:
            assert set(gt.verdicts[system][tid]) == {c.id for c in t.criteria}
    for s in gt.supported:  # every grounded statement's passage is in the sources, verbatim
        assert " ".join(s.source_passage.split()) in sources[s.task_id]
    for h in gt.hallucinations:  # every planted value is absent from the sources
        value = re.search(r" is (.+) \(Section", h.span)
        planted = value.group(1) if value else "Section 97.4"
        assert planted not in sources[h.task_id], h.span
    assert all(v == "pass" for task in gt.verdicts["lab-strong"].values() for v in task.values())
    assert all(v == "pass" for task in gt.verdicts["lab-fluent"].values() for v in task.values())
    assert all("fail" in task.values() for task in gt.verdicts["lab-weak"].values())
    assert all(any(h.materiality == "material" for h in gt.hallucinations_for("lab-fluent", t)) for t in tasks)


def test_lab_generation_is_a_pure_function_of_the_seed(lab, tmp_path) -> None:
    root, gt = lab
    again = generate_lab(tmp_path, tasks=2, seed=3)
    assert again == gt
    for memo in (root / "submissions").rglob("memo.md"):
        assert (tmp_path / memo.relative_to(root)).read_text() == memo.read_text()
    assert generate_lab(tmp_path / "other", tasks=2, seed=4) != gt


def test_grading_a_lab_task_through_the_emulators_reproduces_its_ground_truth(tmp_path) -> None:
    generate_lab(tmp_path, tasks=1, seed=5, scale=0.5)
    gt = load_ground_truth(tmp_path / "ground_truth.json")
    tasks = load_benchmark(str(tmp_path)).task_map()
    subs = load_submissions(str(tmp_path / "submissions"), tasks).submissions
    owner = {d.text: (s.system, s.task_id) for s in subs for d in s.deliverables.values() if not d.missing}

    async def run() -> list[GradeResult]:
        async with EmulatorSet(responder=ground_truth_responder(gt, owner)) as emus:
            cfg = point_at_emulators(load_config(vendors="real"), emus.endpoints())
            vendors = {v.name: create_vendor(v) for v in cfg.vendors()}
            try:
                return await asyncio.gather(*(grade_submission(tasks[s.task_id], s, cfg, vendors) for s in subs))
            finally:
                for v in vendors.values():
                    await v.aclose()

    expected = expected_scores(gt)
    results: list[Any] = asyncio.run(run())
    assert len(results) == len(SYSTEMS)
    for r in results:
        row = r.row
        exp = expected[(row.system, row.task_id)]
        assert row.status == "complete", row.status_reason
        assert (row.task_score, row.criterion_pass_rate, row.audited, row.material_flags, row.gated) == (
            exp.task_score, pytest.approx(exp.criterion_pass_rate), exp.audited, exp.material_flags, exp.gated
        ), row.submission_id
    assert {r.row.system for r in results if r.row.gated} == {"lab-fluent"}
