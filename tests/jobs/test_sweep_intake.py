"""The sweep reads its submission source once, held to the run's input limits, and that one read
feeds both the estimate and the shards: the estimate counts exactly what grading grades."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.config.models import InputLimits, VendorMode
from evalcore.schema import Rejection
from evalcore.storage import fs
from evalcore.storage.store import read_table
from evalcore.submissions.loader import load_submissions
from jobs.intake import SubmissionPass, cut_shards
from jobs.sweep import SweepOptions, run_sweep
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


def test_the_spooled_shards_are_the_streams_shards_with_done_submissions_counted_and_not_kept() -> None:
    bench = load_benchmark(str(SAMPLE))
    tasks = bench.task_map()
    uri = str(SAMPLE / "submissions")
    expected = list(cut_shards(load_submissions(uri, tasks, excluded=bench.excluded_task_ids()).submissions, 5))
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
    assert pending == [s.id for sh in shards for s in sh.pending]  # the estimate saw what the shards send
    assert intake.accepted == 32 and intake.pending_count == 32 - 8 and rejected == []
