"""The sweep driver's small parts: shard results, the Ctrl-C context manager, the summary."""

from __future__ import annotations

import os
import signal

import pytest
from ray.exceptions import RayTaskError
from rich.console import Console

from evalcore.grading.calls import GradingContext
from evalcore.grading.grade import GradeResult
from evalcore.schema import CallRow, SubmissionRow
from jobs.display.progress import Interrupt, print_failed_shard
from jobs.sweep.options import FAILED_SHARD_TRACE_CHARS, SweepSummary
from jobs.sweep.shard_work import ShardResult


def _result(status: str, costs: list[float]) -> GradeResult:
    ctx = GradingContext("r", "g", f"s::{status}", "s", "a/t", "a")
    calls = [CallRow(**ctx.call_ids(), request_hash=f"h{i}", vendor="v", family="f", model="m", purpose="rubric",
                     outcome="ok", cost_usd=c) for i, c in enumerate(costs)]
    row = SubmissionRow(**ctx.ids(), content_hash="c", status=status, n_criteria=1)  # type: ignore[arg-type]
    return GradeResult(submission=row, calls=calls)


def test_a_shard_result_counts_statuses_calls_and_cost_of_its_gradings() -> None:
    res = ShardResult.of("part-1", [_result("complete", [0.5, 0.25]), _result("incomplete", [1.0]),
                                    _result("too_long", [])], node="n1")
    assert (res.graded, res.complete, res.incomplete, res.too_long, res.calls) == (3, 1, 1, 1, 3)
    assert res.cost_usd == pytest.approx(1.75)
    assert res.line() == "shard part-1 graded=3 complete=1 incomplete=1 calls=3 cost_usd=1.7500"


def test_the_summary_adds_shards_and_counts_every_finished_submission() -> None:
    summary = SweepSummary(run_id="r", run_uri="u", skipped_done=4)
    summary.add_shard(ShardResult("p0", 3, 2, 1, 0, 0.1, 9, "n1"))
    summary.add_shard(ShardResult("p1", 2, 2, 0, 0, 0.1, 6, "n2"))
    summary.add_failed_shard(["a::t", "b::t"], RuntimeError("worker died"))
    assert (summary.graded, summary.complete, summary.incomplete, summary.done) == (5, 4, 1, 9)
    assert summary.shards_by_node == {"n1": 1, "n2": 1} and summary.shards_written == 2
    assert summary.failed_shards == ["a::t, b::t: RuntimeError: worker died"]


def test_a_failed_shard_is_recorded_and_printed_with_the_error_behind_rays_wrappers_and_where_it_was_raised() -> None:
    # a shard's task whose awaited actor call failed, wrapped once more as a further hop would
    # be: Ray's text of each starts with its frames, and the error itself (naming the file) came
    # last, past where the record was cut
    missing = FileNotFoundError(2, "No such file or directory", "/runs/r/calls/part-1.parquet")
    actor_frames = "ray::VendorActor.complete_packed()\n" + "  File \"jobs/sweep/actors.py\", line 1\n" * 200
    inner = RayTaskError("VendorActor.complete_packed", actor_frames + "FileNotFoundError: x", missing)
    outer = RayTaskError("grade_shard", "ray::grade_shard()\n" + "  File \"jobs/sweep/shard_work.py\"\n" * 200 + str(inner),
                         inner.as_instanceof_cause()).as_instanceof_cause()
    summary = SweepSummary(run_id="r", run_uri="u")
    summary.add_failed_shard(["a::t"], outer)
    [record] = summary.failed_shards
    assert record.startswith("a::t: FileNotFoundError: [Errno 2] No such file or directory: "
                             "'/runs/r/calls/part-1.parquet'\n")
    assert record.endswith("FileNotFoundError: x") and len(record) < 2 * FAILED_SHARD_TRACE_CHARS
    console = Console(record=True, width=300)
    print_failed_shard(console, ["a::t"], outer)
    assert "(a::t): FileNotFoundError: [Errno 2] No such file or directory: '/runs/r/calls/part-1.parquet'; " \
           "its submissions stay pending" in console.export_text()


def test_ctrl_c_inside_the_context_asks_to_stop_and_the_previous_handler_comes_back() -> None:
    before = signal.getsignal(signal.SIGINT)
    console = Console(record=True, width=200)
    with Interrupt(console) as interrupt:
        assert not interrupt.requested
        os.kill(os.getpid(), signal.SIGINT)  # handled in this (main) thread before kill returns to us
        assert interrupt.requested and interrupt.presses == 1
    assert signal.getsignal(signal.SIGINT) is before
    assert "no new shards; flushing the ones in flight" in console.export_text()


def test_further_presses_reach_on_interrupt_for_a_subclass_to_act_on() -> None:
    seen: list[int] = []

    class Counting(Interrupt):
        def on_interrupt(self, presses: int) -> None:
            seen.append(presses)

    with Counting(Console(record=True)):
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
    assert seen == [1, 2]


def test_a_detach_pass_progress_says_submitting_batches_and_shows_paid_collected_and_awaiting_apart() -> None:
    from jobs.display.progress import SweepProgress

    summary = SweepSummary(run_id="r", run_uri="u", awaiting_batches=30, graded=2, cost_usd=0.5,
                           collected_calls=1200, collected_usd=9.75)
    stats = {"openai": {"paid_calls": 1300.0, "cost_usd": 10.25, "batch_batches_submitted": 2.0,
                        "batch_requests_submitted": 80.0, "batch_watching": 2.0, "batch_queued": 0.0}}
    progress = SweepProgress(Console(record=True, width=200), enabled=False, total=32, phase="submitting batches")
    progress.update(summary.done, stats, 10.25, summary)
    line = progress.line()
    assert line.startswith("submitting batches 32/32 | ")  # not "grading"; graded or left waiting on batches
    # what this command paid, not the actors' figure that counts collected results as paid
    assert ("| paid $0.50 | collected 1,200 ($9.75, paid before) | graded 2, awaiting batches 30 | " in line
            and line.endswith(" | openai batches=2 requests=80 open=2 queued=0")), line
