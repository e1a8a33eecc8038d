"""One accounting of calls (`evalcore.call_accounting`): every call row is exactly one kind, the
counts of a command add up to its rows, and the SQL the reduction and the report sum with pays
what the Python count pays."""

from __future__ import annotations

import math
from typing import get_args

import duckdb
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from evalcore.call_accounting import AWAITING_MARK, PAID_SQL, CallCounts, call_kind, paid_sum
from evalcore.schema import CallOutcome, CallRow

SINCE = 1000.0


@st.composite
def call_rows(draw: st.DrawFn) -> CallRow:
    awaiting = draw(st.booleans())
    outcome = "transient" if awaiting else draw(st.sampled_from(get_args(CallOutcome)))
    reused = draw(st.sampled_from([None, None, "run-0"]))
    return CallRow(
        run_id="r", grading_id="g", submission_id="s", system="sys", task_id="a/t",
        request_hash=draw(st.text("0123456789abcdef", min_size=4, max_size=4)), vendor="v", family="f", model="m",
        purpose="rubric", outcome=outcome, attempts=0 if awaiting else draw(st.integers(0, 3)),
        error=f"in batch b1; {AWAITING_MARK}" if awaiting else None, reused_from=reused,
        batch_id=draw(st.sampled_from([None, "b1"])), started_at=draw(st.sampled_from([10.0, SINCE, 2000.0])),
        cost_usd=0.0 if reused or awaiting else draw(st.floats(0, 5, allow_nan=False)),
    )


@given(st.lists(call_rows(), max_size=40))
def test_every_row_is_one_kind_and_a_commands_counts_add_up_to_its_rows(rows: list[CallRow]) -> None:
    counts = CallCounts.of(rows, SINCE)
    assert (counts.paid + counts.truncated + counts.lost + counts.failed + counts.collected + counts.reused
            + counts.awaiting) == len(rows)
    not_reused = [r.cost_usd for r in rows if r.reused_from is None]
    assert math.isclose(counts.paid_usd + counts.collected_usd, math.fsum(not_reused), abs_tol=1e-9)


@given(st.lists(call_rows(), max_size=40))
def test_the_sql_the_reduction_and_report_sum_with_pays_what_the_count_pays(rows: list[CallRow]) -> None:
    table = pa.Table.from_pylist([r.model_dump() for r in rows]) if rows else pa.table(
        {"reused_from": pa.array([], pa.string()), "cost_usd": pa.array([], pa.float64())})
    con = duckdb.connect()
    con.register("calls_in", table)
    [(usd, reused)] = con.sql(f"SELECT {paid_sum('cost_usd', fsum=True)}, count(*) FILTER (WHERE NOT ({PAID_SQL})) "
                              "FROM calls_in").fetchall()
    counts = CallCounts.of(rows, SINCE)
    assert math.isclose(float(usd or 0.0), counts.paid_usd + counts.collected_usd, abs_tol=1e-9)
    assert reused == counts.reused


def test_a_batch_result_an_earlier_command_submitted_is_collected_not_paid_again() -> None:
    row = CallRow(run_id="r", grading_id="g", submission_id="s", system="sys", task_id="a/t", request_hash="h",
                  vendor="v", family="f", model="m", purpose="rubric", outcome="ok", batch_id="b1", started_at=10.0,
                  cost_usd=0.5)
    assert call_kind(row, since=SINCE) == "collected"
    assert call_kind(row, since=0.0) == "paid"
    assert call_kind(row.model_copy(update={"reused_from": "run-0", "cost_usd": 0.0}), since=SINCE) == "reused"


def test_a_request_sent_again_after_its_batch_was_lost_has_a_lost_row_before_its_answer() -> None:
    """Issue 43: a request the vendor may have been paid for twice (its first batch lost, the request
    sent again) shows in the calls table: the lost attempt's row names the batch, then the answer's."""
    from evalcore.config.load import load_config
    from evalcore.errors import EarlierAttempt
    from evalcore.grading.calls import GradingContext, call_rows
    from evalcore.vendors.protocol import JudgeReply, Usage
    from tests.evalcore.vendors._vendor_testkit import Verdict, request

    cfg = load_config().judges[2]
    lost = EarlierAttempt(max_output_tokens=4_352, reason="batch b0 lost; sent again", usage={}, cost_usd=0.0,
                          request_id=None, started_at=10.0, ended_at=20.0, outcome="lost", batch_id="b0")
    reply = JudgeReply(output=Verdict(ok=True), usage=Usage(input_tokens=100, output_tokens=10), cost_usd=0.01,
                       started_at=30.0, ended_at=40.0, vendor=cfg.name, model=cfg.model, batch_id="b1", earlier=[lost])
    req = request(3)
    ctx = GradingContext("run-1", "g-1", "sys::area/task", "sys", "area/task", "area")
    first, answer = call_rows(ctx, cfg, req, reply)
    assert (first.outcome, first.batch_id, first.cost_usd, first.input_tokens) == ("lost", "b0", 0.0, 0)
    assert (answer.outcome, answer.batch_id, answer.cost_usd, answer.input_tokens) == ("ok", "b1", 0.01, 100)
    assert first.request_hash == answer.request_hash and first.ended_at <= answer.started_at
    assert call_kind(first) == "lost" and CallCounts.of([first, answer]).lost == 1
