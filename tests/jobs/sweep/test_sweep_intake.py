"""The sweep reads its submission source once, held to the run's input limits, and that one read
feeds both the estimate and the shards: the estimate counts exactly what grading grades."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.config.models import InputLimits, VendorMode
from evalcore.schema import Deliverable, Rejection, Submission
from evalcore.storage import fs
from evalcore.storage.store import read_table
from evalcore.submissions.loader import load_submissions
from jobs.sweep.driver import run_sweep
from jobs.sweep.intake import SubmissionPass, cut_shards, task_major
from jobs.sweep.options import SweepOptions
from tests.jobs.conftest import SAMPLE, SMALL_SUBMISSIONS

LIMIT = 100_000
"""A file ceiling above every file of the sample and far below the default (64 MiB)."""
OVERSIZED = [
    ("gpt-strong", "corporate-ma/change-of-control-consents", "memo.md"),
    ("claude-average", "commercial-contracts/msa-renewal", "memo.md"),
    ("grok-weak", "corporate-ma/change-of-control-consents", "memo.md"),
]


def _sample_with_oversized_deliverables(sample: Path, tmp_path: Path) -> Path:
    """The (small) sample's submissions, three of them with a deliverable over `LIMIT` (under the default)."""
    subs = tmp_path / "submissions"
    shutil.copytree(sample / "submissions", subs)
    for system, task, name in OVERSIZED:
        path = subs / system / task / name
        assert path.exists(), path
        path.write_text("The renewal term is twelve months.\n" * (LIMIT // 30))
    return subs


def _count_listings(monkeypatch: pytest.MonkeyPatch, root: str) -> list[str]:
    """Every listing of the submission source (the first thing each read of a results folder does).

    A spy, not a stand-in: the real `fs.list_files` runs and returns its real answer."""
    seen: list[str] = []
    real: Callable[..., list[str]] = fs.list_files

    def counting(uri: str, *args: object, **kwargs: object) -> list[str]:
        if uri.rstrip("/") == root:
            seen.append(uri)
        return real(uri, *args, **kwargs)

    monkeypatch.setattr(fs, "list_files", counting)
    return seen


@pytest.mark.ray
def test_a_sweep_reads_its_submissions_once_and_estimates_exactly_the_submissions_the_input_limits_let_through(
    ray_local, small_sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    subs = _sample_with_oversized_deliverables(small_sample, tmp_path)
    cfg = load_config(vendors=VendorMode.OFFLINE).model_copy(update={"input_limits": InputLimits(max_file_bytes=LIMIT)})
    listings = _count_listings(monkeypatch, str(subs))
    opts = SweepOptions(benchmark=str(small_sample), submissions=str(subs), output=str(tmp_path / "runs"), config=cfg,
                        vendors=VendorMode.OFFLINE, run_id="limited", progress=False, shard_size=4, max_in_flight=2)

    first = run_sweep(opts)

    assert len(listings) == 1  # one read of the source for the estimate, the progress total and the shards
    assert first.rejected == len(OVERSIZED)
    assert all("max_file_bytes" in r for r in first.rejections)
    assert first.graded == SMALL_SUBMISSIONS - len(OVERSIZED) and first.incomplete == 0
    assert first.estimated_submissions == first.graded == first.submissions_total
    rows = read_table(first.run_uri, "submissions").to_pylist()
    assert {f"{system}::{task}" for system, task, _ in OVERSIZED}.isdisjoint({r["submission_id"] for r in rows})

    listings.clear()
    again = run_sweep(opts)  # the same command resumes: everything is done, nothing to estimate
    assert len(listings) == 1
    assert (again.graded, again.estimated_submissions, again.skipped_done) == (0, 0, first.graded)
    assert again.submissions_total == first.graded and again.rejected == len(OVERSIZED)


def test_the_spooled_shards_are_the_task_major_shards_with_done_submissions_counted_and_not_kept() -> None:
    bench = load_benchmark(str(SAMPLE))
    tasks = bench.task_map()
    uri = str(SAMPLE / "submissions")
    source = load_submissions(uri, tasks, excluded=bench.excluded_task_ids()).submissions
    expected = list(cut_shards(task_major(source), 5))
    done = {"gpt-strong"}
    rejected: list[Rejection] = []
    with SubmissionPass(uri, tasks, excluded=bench.excluded_task_ids(), limits=InputLimits(),
                        is_done=lambda s: s.system in done, shard_size=5, rejected=rejected) as intake:
        pending = [s.id for s in intake.pending()]
        shards = list(intake.shards())

    assert [(sh.index, sh.done, [s.id for s in sh.pending]) for sh in shards] == [
        (i, sum(s.system in done for s in shard), [s.id for s in shard if s.system not in done])
        for i, shard in expected
    ]
    assert [s.model_dump() for sh in shards for s in sh.pending] == [
        s.model_dump() for s in task_major(source) if s.system not in done
    ]  # what was spooled comes back whole
    assert pending == [s.id for s in source if s.system not in done]  # the estimate prices them in source order
    assert sorted(pending) == sorted(s.id for sh in shards for s in sh.pending)  # ... and the shards send the same
    assert intake.accepted == 32 and intake.pending_count == 32 - 8 and rejected == []


def test_a_source_listed_system_by_system_is_cut_into_shards_of_one_task_each_when_the_sizes_allow() -> None:
    bench = load_benchmark(str(SAMPLE))
    tasks = bench.task_map()
    uri = str(SAMPLE / "submissions")
    source = load_submissions(uri, tasks, excluded=bench.excluded_task_ids()).submissions
    assert len({s.task_id for s in source[:4]}) == 4  # the source is system-major: positional shards mix tasks
    per_task = len(source) // len({s.task_id for s in source})
    with SubmissionPass(uri, tasks, excluded=bench.excluded_task_ids(), limits=InputLimits(),
                        is_done=lambda s: False, shard_size=per_task, rejected=[]) as intake:
        shards = list(intake.shards())
    assert [len({s.task_id for s in sh.pending}) for sh in shards] == [1] * len({s.task_id for s in source})


_IDS = st.lists(st.tuples(st.sampled_from("abcde"), st.integers(0, 9)), unique=True, max_size=40)


@given(_IDS)
def test_task_major_groups_each_tasks_submissions_in_source_order_with_tasks_in_order_of_first_appearance(
    pairs: list[tuple[str, int]],
) -> None:
    source = [Submission(system=f"s{n}", task_id=t, deliverables={"memo.md": Deliverable(name="memo.md", text="x")}) for t, n in pairs]
    ordered = task_major(source)
    assert sorted(map(id, ordered)) == sorted(map(id, source))  # a permutation: nothing lost or doubled
    first_seen = list(dict.fromkeys(s.task_id for s in source))
    assert list(dict.fromkeys(s.task_id for s in ordered)) == first_seen
    assert [s.task_id for s in ordered] == sorted((s.task_id for s in source), key=first_seen.index)  # contiguous
    for task in first_seen:
        assert [s for s in ordered if s.task_id == task] == [s for s in source if s.task_id == task]
