"""The realistic-size (lab profile) benchmark generator: protocol-sized tasks, consistent ground
truth, seeded, and a grading through the emulators reproduces its ground-truth scores."""

from __future__ import annotations

import asyncio
import math
import re
from pathlib import Path
from typing import Any

import pytest

from doubles.emulators._set import EmulatorSet
from doubles.emulators.ground_truth import ground_truth_responder
from doubles.emulators.serve import point_at_emulators
from doubles.synth.ground_truth import GroundTruth, expected_scores, load_ground_truth
from doubles.synth.lab import LAB_SYSTEMS, SYSTEMS, LabSystem, generate_lab
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
    for planted in LAB_SYSTEMS:  # the planted rates are the configured quotas (2 tasks: round(share x 2))
        passed = sum(all(v == "pass" for v in task.values()) for task in gt.verdicts[planted.name].values())
        assert passed == math.floor(planted.all_pass * 2 + 0.5), planted.name
    assert all("fail" in task.values() for task in gt.verdicts["lab-weak"].values())
    assert any(any(h.materiality == "material" for h in gt.hallucinations_for("lab-fluent", t)) for t in tasks)


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


def _planted_rates(gt: GroundTruth) -> dict[str, tuple[float, float]]:
    """(all-pass rate, share of tasks with a material hallucination) of each system, from its ground truth."""
    out = {}
    for system, by_task in gt.verdicts.items():
        passed = sum(all(v == "pass" for v in verdicts.values()) for verdicts in by_task.values())
        hallucinated = sum(any(h.materiality == "material" for h in gt.hallucinations_for(system, t)) for t in by_task)
        out[system] = (passed / len(by_task), hallucinated / len(by_task))
    return out


def test_lab_systems_spread_their_all_pass_and_hallucination_rates_as_configured(tmp_path: Path) -> None:
    """Issue 43: every lab system passed all (or none) of its tasks, so the leaderboard could
    separate nothing. The planted rates are the configured quotas: round(share x N) of N tasks."""
    gt = generate_lab(tmp_path / "default", tasks=10, seed=2, scale=0.02)
    rates = _planted_rates(gt)
    for system in LAB_SYSTEMS:
        assert rates[system.name][0] == math.floor(system.all_pass * 10 + 0.5) / 10, system.name
    assert rates["lab-fluent"][1] == 0.6 and rates["lab-strong"][1] == 0.1
    assert len({r[0] for r in rates.values()}) == len(LAB_SYSTEMS)  # four different all-pass rates
    assert (gt.model_extra or {})["lab"]["systems"][0] == {
        "name": "lab-strong", "all_pass": 0.7, "hallucinated": 0.05, "misses": [1, 2], "misstates": False}
    custom = (LabSystem("x", all_pass=0.2, hallucinated=0.0), LabSystem("y", all_pass=0.9, hallucinated=0.5))
    rates = _planted_rates(generate_lab(tmp_path / "custom", tasks=10, seed=2, scale=0.02, systems=custom))
    assert rates == {"x": (0.2, 0.0), "y": (0.9, 0.5)}


def test_a_lab_system_with_a_share_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="bad: all_pass"):
        LabSystem("bad", all_pass=1.5, hallucinated=0.0)
