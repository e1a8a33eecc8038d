"""A benchmark widened to more tasks: each of a sample's tasks written `copies` times under new ids,
with its submissions and ground truth, so a synthetic leaderboard can have a realistic shape.

Why it exists: `doubles.synth.scale` spreads N submissions over the sample's tasks, one per
(system, task), so N submissions over the sample's 8 tasks make N / 8 systems. At 20,000 that is
2,500 systems of 8 tasks each, a leaderboard no publisher has, whose ranking (B x S x S) then
dominates any run meant to measure the sweep. Over the sample widened 25 times (200 tasks) the
same 20,000 submissions are 100 systems of 200 tasks, the shape of a real leaderboard.

Copy 1 of a task keeps its id; copy k > 1 of `area/task[/scenario]` is `area/task[/scenario]-copyKK`
(the area is the first component, so the per-area tables keep the sample's areas). A copy's files
are the original's byte for byte and its ground truth is the original's with the task id replaced:
the copies are distinct tasks to the sweep (every judge call's key holds the task id, so none is
shared between copies), and the same rules decide each.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from doubles.synth.ground_truth import GroundTruth, load_ground_truth
from evalcore.errors import BenchmarkError


def copy_id(task_id: str, k: int, copies: int) -> str:
    """The id of copy `k` (1-based) of `task_id`: the id itself for k == 1, else `<id>-copyKK`."""
    if not 1 <= k <= copies:
        raise ValueError(f"copy {k} is not in 1..{copies}")
    return task_id if k == 1 else f"{task_id}-copy{k:0{max(2, len(str(copies)))}d}"


def widen(sample_root: str | Path, copies: int, out_root: str | Path) -> GroundTruth:
    """Write `sample_root`'s benchmark with every task `copies` times under `out_root` (tasks/,
    submissions/, ground_truth.json); returns the widened ground truth. `out_root` must not exist
    or be empty, so nothing of an earlier benchmark is mixed in."""
    if copies < 1:
        raise ValueError("copies must be at least 1")
    sample, out = Path(sample_root), Path(out_root)
    if out.exists() and any(out.iterdir()):
        raise BenchmarkError(str(out), "not empty; a widened benchmark is written whole into an empty or new folder")
    gt = load_ground_truth(sample / "ground_truth.json")
    tasks = sorted(path.parent.relative_to(sample / "tasks").as_posix()
                   for path in (sample / "tasks").rglob("task.json"))
    for task_id in tasks:
        for k in range(1, copies + 1):
            new = copy_id(task_id, k, copies)
            shutil.copytree(sample / "tasks" / task_id, out / "tasks" / new)
            for system in gt.verdicts:
                folder = sample / "submissions" / system / task_id
                if folder.is_dir():
                    shutil.copytree(folder, out / "submissions" / system / new)

    def spread(items: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{**item, "task_id": copy_id(str(item["task_id"]), k, copies)}
                for item in items for k in range(1, copies + 1)]

    data = gt.model_dump(mode="json")
    data["benchmark"] = f"{gt.benchmark}-x{copies}" if copies > 1 else gt.benchmark
    data["verdicts"] = {system: {copy_id(t, k, copies): v for t, v in by_task.items() for k in range(1, copies + 1)}
                        for system, by_task in gt.verdicts.items()}
    for group in ("hallucinations", "general_knowledge", "supported"):
        data[group] = spread(data[group])
    data["distractors"] = {copy_id(t, k, copies): names for t, names in gt.distractors.items()
                           for k in range(1, copies + 1)}
    widened = GroundTruth.model_validate(data)
    widened.dump(out / "ground_truth.json")
    return widened
