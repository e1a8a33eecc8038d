"""A call row's times are the call's own: when its first attempt went out and its last answered (the
adapter's clock), or its batches' submission and end (the batch journal), never when the row was
built; `latency_s` is always `ended_at - started_at`."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

from doubles.emulators import BatchSettings, EmulatorConfig, EmulatorSet, StaticResponder
from evalcore.config.models import VendorConfig
from evalcore.errors import ErrorKind, VendorError
from evalcore.grading.calls import GradingContext, call_row
from evalcore.schema import CallRow
from evalcore.vendors.adapters.common import AdapterBase, Attempt, Classified, M
from evalcore.vendors.batch.journal import load_all
from evalcore.vendors.batch.queue import custom_id
from evalcore.vendors.budget import RateBudget
from evalcore.vendors.protocol import JudgeReply, JudgeRequest, Usage
from evalcore.vendors.reuse import ReusingVendor
from tests.evalcore.vendors._vendor_testkit import Fail, FakeTime, Verdict, make_cfg, request
from tests.evalcore.vendors.batch.test_batching import ANSWER, batching, vendor_config
from tests.evalcore.vendors.batch.test_batching import Verdict as BatchVerdict
from tests.evalcore.vendors.batch.test_batching import request as batch_request

CTX = GradingContext("run-1", "g-1", "sys::area/task", "sys", "area/task", "area")


class TimedVendor(AdapterBase[object]):
    """A scripted adapter whose attempts each take the next of `durations` on the fake clock.

    Its client is a real object (kept per loop like an SDK client), so its calls share one set of
    wire slots as a real adapter's do."""

    adapter = "timed"
    needs_key = False

    def __init__(self, cfg: VendorConfig, script: list[Any], t: FakeTime, durations: list[float]) -> None:
        budget = RateBudget.from_limits(cfg.limits, clock=t.clock, sleep=t.budget_sleep)
        super().__init__(cfg, budget=budget, clock=t.clock, sleep=t.sleep, rng=random.Random(7))
        self.t = t
        self.script = list(script)
        self.durations = list(durations)
        self.sent: list[JudgeRequest] = []

    def _make_client(self, api_key: str) -> object:
        return object()

    async def _attempt(self, client: object, request: JudgeRequest, schema: type[M], timeout_s: float) -> Attempt[M]:
        self.sent.append(request)
        await asyncio.sleep(0)  # on the wire: the other calls run meanwhile
        self.t.now += self.durations.pop(0)
        item = self.script.pop(0) if self.script else {"ok": True}
        if isinstance(item, BaseException):
            raise item
        return Attempt(schema.model_validate(item), Usage(input_tokens=100, output_tokens=10))

    def classify(self, exc: BaseException) -> Classified:
        return Classified(exc.kind, exc.retry_after) if isinstance(exc, Fail) else super().classify(exc)


def assert_span_is_latency(row: CallRow) -> None:
    assert row.ended_at - row.started_at == row.latency_s


async def test_two_calls_of_one_submission_start_when_their_first_attempts_go_out_not_when_their_rows_are_built() -> None:
    t = FakeTime()
    # one call on the wire at a time: the second goes out when the first has answered, 2.5 s later
    before = time.time()  # the adapter reads the wall clock once, when it is built
    vendor = TimedVendor(make_cfg(max_in_flight=1), [], t, durations=[2.5, 4.0])
    replies = await vendor.complete_many([request(0), request(1)], Verdict)
    after = time.time()
    first, second = (call_row(CTX, vendor.cfg, request(i), r) for i, r in enumerate(replies))
    assert first.outcome == second.outcome == "ok"
    assert before <= first.started_at <= after  # unix seconds, not the adapter's monotonic reading
    assert second.started_at - first.started_at == pytest.approx(2.5, abs=1e-6)
    assert second.started_at == pytest.approx(first.ended_at, abs=1e-6)
    assert (first.latency_s, second.latency_s) == (pytest.approx(2.5, abs=1e-6), pytest.approx(4.0, abs=1e-6))
    for row in (first, second):
        assert_span_is_latency(row)


async def test_retries_extend_the_span_from_the_first_attempt_sent_to_the_last_answer() -> None:
    t = FakeTime()
    vendor = TimedVendor(make_cfg(), [Fail(ErrorKind.TRANSIENT), {"ok": True}], t, durations=[1.0, 2.0])
    [reply] = await vendor.complete_many([request()], Verdict)
    assert isinstance(reply, JudgeReply) and reply.attempts == 2
    [backoff] = t.sleeps
    row = call_row(CTX, vendor.cfg, request(), reply)
    assert row.attempts == 2
    assert row.latency_s == pytest.approx(1.0 + backoff + 2.0, abs=1e-6)
    assert_span_is_latency(row)


async def test_a_reused_call_takes_no_time_when_this_run_serves_it_and_names_the_run_that_paid() -> None:
    t = FakeTime()
    inner = TimedVendor(make_cfg(), [], t, durations=[])
    served_at = 1_700_000_000.5
    reusing = ReusingVendor(inner, {request().request_hash: ("run-0", '{"ok": true}')}, "run-1",
                            clock=lambda: served_at)
    reply = await reusing.complete(request(), Verdict)
    row = call_row(CTX, inner.cfg, request(), reply)
    assert row.reused_from == "run-0" and row.attempts == 0 and row.cost_usd == 0
    assert row.started_at == row.ended_at == served_at and row.latency_s == 0
    assert not inner.sent  # nothing was sent: the stored answer served it


def test_a_failure_carries_no_span_its_row_runs_from_the_callers_start_to_when_it_was_recorded() -> None:
    err = VendorError("scripted", "m-1", ErrorKind.TIMEOUT, "timed out", attempts=3)
    began = time.time()
    row = call_row(CTX, make_cfg(), request(), err, started_at=began)
    assert row.outcome == "timeout" and row.started_at == began and row.ended_at >= began
    assert_span_is_latency(row)
    alone = call_row(CTX, make_cfg(), request(), err)
    assert alone.started_at == alone.ended_at and alone.latency_s == 0


async def test_a_batched_calls_times_are_its_batches_submission_and_end_from_the_journal(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIBUNAL_TEST_BATCH_KEY", "batch-key-0123456789")
    # the first batch answers one request and fails two: those go into a second batch
    emu_cfg = EmulatorConfig(batch=BatchSettings(script=["errored", "succeeded", "expired"]))
    requests = [batch_request(i) for i in range(3)]
    async with EmulatorSet(emu_cfg, responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config("anthropic", emus.endpoints()["anthropic"])
        vendor = batching(cfg, str(tmp_path))
        try:
            replies = await vendor.complete_many(requests, BatchVerdict)
        finally:
            await vendor.aclose()
    first, second = load_all(str(tmp_path))["anthropic"]
    assert first.ended_at is not None and second.ended_at is not None
    for req, reply in zip(requests, replies, strict=True):
        assert isinstance(reply, JudgeReply)
        row = call_row(CTX, cfg, req, reply)
        once = first.outcomes[custom_id(req)] == "succeeded"
        assert row.batch_id == (first if once else second).batch_id
        assert row.started_at == first.submitted_at  # its first batch's submission, retried or not
        assert row.ended_at == (first.ended_at if once else second.ended_at)
        assert_span_is_latency(row)


async def test_a_batched_call_retried_online_spans_from_its_batch_submission_to_the_online_answer(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIBUNAL_TEST_BATCH_KEY", "batch-key-0123456789")
    emu_cfg = EmulatorConfig(batch=BatchSettings(script=["errored"]))
    async with EmulatorSet(emu_cfg, responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config("openai", emus.endpoints()["openai"])
        vendor = batching(cfg, str(tmp_path), online=True)
        try:
            [reply] = await vendor.complete_many([batch_request(0)], BatchVerdict)
        finally:
            await vendor.aclose()
    [record] = load_all(str(tmp_path))["openai"]
    assert isinstance(reply, JudgeReply) and reply.batch_id is None and reply.attempts == 2
    assert record.ended_at is not None
    row = call_row(CTX, cfg, batch_request(0), reply)
    assert row.started_at == record.submitted_at
    assert row.ended_at > record.ended_at  # the online answer came after the batch had failed it
    assert_span_is_latency(row)


def _reply(usage: Usage, **extra: Any) -> JudgeReply[Any]:
    return JudgeReply(output=Verdict(ok=True), usage=usage, cost_usd=0.0, started_at=1.0, ended_at=2.0,
                      vendor="anthropic", model="claude-opus-5-5", **extra)


def test_a_call_row_itemises_its_cache_writes_at_the_vendors_write_price_online_in_batch_and_not_when_reused() -> None:
    from evalcore.config.load import load_config

    anthropic = load_config().judges[2]  # input 5 USD per M online, 2.5 in batch; writes 1.25x
    req = request(7)
    usage = Usage(input_tokens=10_000, cached_input_tokens=2_000, output_tokens=100, cache_write_tokens=8_000)
    online = call_row(CTX, anthropic, req, _reply(usage))
    batched = call_row(CTX, anthropic, req, _reply(usage, batch_id="b-1"))
    reused = call_row(CTX, anthropic, req, _reply(usage, reused_from="run-0"))
    assert (online.cache_write_tokens, online.cache_write_usd) == (8_000, pytest.approx(8_000 * 5.0 * 1.25 / 1e6))
    assert batched.cache_write_usd == pytest.approx(8_000 * 2.5 * 1.25 / 1e6)
    assert reused.cache_write_usd == 0.0
