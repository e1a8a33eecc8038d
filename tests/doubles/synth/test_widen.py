"""doubles.synth.widen: every task copied under a new id, its submissions and ground truth with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from doubles.synth.ground_truth import load_ground_truth, span_problems
from doubles.synth.scale import synthesize
from doubles.synth.widen import copy_id, widen
from evalcore.benchmark.loader import load_benchmark
from evalcore.errors import BenchmarkError

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample"


def test_copy_one_keeps_the_id_and_later_copies_add_a_suffix_to_the_last_component() -> None:
    assert copy_id("real-estate/psa-key-terms/scenario-01", 1, 3) == "real-estate/psa-key-terms/scenario-01"
    assert copy_id("real-estate/psa-key-terms/scenario-01", 3, 3) == "real-estate/psa-key-terms/scenario-01-copy03"
    assert copy_id("employment/termination-risk", 7, 120) == "employment/termination-risk-copy007"
    with pytest.raises(ValueError, match="copy 4 is not in 1..3"):
        copy_id("employment/termination-risk", 4, 3)


def test_widened_benchmark_has_every_task_copies_times_with_identical_files_and_ground_truth(tmp_path: Path) -> None:
    sample_gt = load_ground_truth(SAMPLE / "ground_truth.json")
    gt = widen(SAMPLE, 3, tmp_path / "wide")
    wide = tmp_path / "wide"
    tasks = load_benchmark(str(wide)).tasks
    original = load_benchmark(str(SAMPLE)).tasks
    assert sorted(t.id for t in tasks) == sorted(copy_id(t.id, k, 3) for t in original for k in (1, 2, 3))
    by_id = {t.id: t for t in tasks}
    for task in original:
        copy = by_id[copy_id(task.id, 3, 3)]
        assert copy.area == task.area
        assert [c.model_dump() for c in copy.criteria] == [c.model_dump() for c in task.criteria]
        assert sorted(d.name for d in copy.documents) == sorted(d.name for d in task.documents)
    assert gt == load_ground_truth(wide / "ground_truth.json")
    assert len(gt.submissions()) == 3 * len(sample_gt.submissions())
    assert len(gt.hallucinations) == 3 * len(sample_gt.hallucinations)
    assert len(gt.supported) == 3 * len(sample_gt.supported)
    for system, task_id in sample_gt.submissions():
        new = copy_id(task_id, 2, 3)
        assert gt.verdicts[system][new] == sample_gt.verdicts[system][task_id]
        assert [h.span for h in gt.hallucinations_for(system, new)] == [
            h.span for h in sample_gt.hallucinations_for(system, task_id)]
        for path in (SAMPLE / "submissions" / system / task_id).rglob("*"):
            if path.is_file():
                rel = path.relative_to(SAMPLE / "submissions" / system / task_id)
                assert (wide / "submissions" / system / new / rel).read_bytes() == path.read_bytes()
    texts = {}
    for system, task_id in gt.submissions():
        for name, filename in by_id[task_id].deliverables.items():
            path = wide / "submissions" / system / task_id / filename
            texts[(system, task_id, name)] = path.read_text(encoding="utf-8") if path.is_file() else ""
    assert span_problems(gt, texts) == []


def test_synthetic_submissions_over_a_widened_benchmark_make_fewer_systems_of_more_tasks(tmp_path: Path) -> None:
    widen(SAMPLE, 5, tmp_path / "wide")
    gt = synthesize(tmp_path / "wide", None, 120, tmp_path / "synth", seed=3)
    assert len(gt.task_ids()) == 40
    assert len(gt.systems) == 3  # 120 submissions over 40 tasks, not 15 systems over 8


def test_widen_refuses_a_folder_that_already_holds_files(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("x")
    with pytest.raises(BenchmarkError, match="not empty"):
        widen(SAMPLE, 2, tmp_path)
    with pytest.raises(ValueError, match="at least 1"):
        widen(SAMPLE, 0, tmp_path / "new")
