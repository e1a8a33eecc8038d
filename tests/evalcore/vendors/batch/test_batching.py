"""Batch mode through the real SDKs against the emulated batch APIs: one batch per flush, the
journal written before waiting, a new process polls the same batch instead of submitting again,
failed requests retried in a later batch, the retry policy's limit, half price."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
from typing import Literal

import openai
import pytest
import xai_sdk
from pydantic import BaseModel
from xai_sdk.telemetry import should_disable_sensitive_attributes

from doubles.emulators import BatchSettings, EmulatorConfig, EmulatorSet, StaticResponder
from evalcore.config.models import BatchConfig, Price, RetryPolicy, VendorConfig
from evalcore.cost.cost_cap import CostLedger, LocalLedger, worst_case_usd
from evalcore.errors import ErrorKind, VendorError
from evalcore.grading.calls import GradingContext, call_rows
from evalcore.vendors.adapters.xai import NO_PROMPTS_IN_TELEMETRY, split_endpoint
from evalcore.vendors.batch.journal import BatchJournal, BatchRecord, load_all
from evalcore.vendors.batch.queue import BatchingVendor, BatchPending
from evalcore.vendors.batch.xai import XAIBatch
from evalcore.vendors.protocol import JudgeRequest
from evalcore.vendors.registry import create_batch_api, create_vendor

ANSWER = {"verdict": "met", "reason": "quoted verbatim"}
PRICE = Price(input=4.0, cached_input=4.0, output=20.0)
VENDORS = ("openai", "anthropic", "xai")


class Verdict(BaseModel):
    verdict: Literal["met", "not_met"]
    reason: str


def request(i: int) -> JudgeRequest:
    return JudgeRequest(
        purpose="rubric",
        request_hash=hashlib.sha256(f"req-{i}".encode()).hexdigest(),
        system_prompt="You grade legal memos.",
        shared_prefix=f"Memo {i}: the lease runs to 2031.",
        varying_suffix=" Criterion: names the end date.",
        schema_name="Verdict",
    )


def vendor_config(adapter: str, endpoint: str, **extra: object) -> VendorConfig:
    if adapter == "xai":
        endpoint = "http://" + endpoint
    return VendorConfig.model_validate({
        "adapter": adapter, "name": adapter, "family": adapter, "model": f"{adapter}-model", "endpoint": endpoint,
        "api_key_env": "TRIBUNAL_TEST_BATCH_KEY", "price": PRICE.model_dump(), "prompt_caching": False, **extra,
    })


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIBUNAL_TEST_BATCH_KEY", "batch-key-0123456789")

CTX = GradingContext("run-1", "g-1", "sys::area/task", "sys", "area/task", "area")


def batching(cfg: VendorConfig, run: str, *, detach: bool = False, online: bool = False,
             sleep: object = None, label: str = "tribunal") -> BatchingVendor:
    settings = BatchConfig(enabled=True, flush_interval_s=0.0, poll_interval_s=1.0, retry_online=online)
    return BatchingVendor(
        create_batch_api(cfg), BatchJournal.load(run, cfg.name), settings,
        online=create_vendor(cfg), detach=detach, sleep=sleep or (lambda s: asyncio.sleep(0)),  # type: ignore[arg-type]
        label=label,
    )


@pytest.mark.parametrize("adapter", VENDORS)
async def test_one_flush_is_one_batch_journalled_and_answered_at_half_the_online_price(adapter: str, tmp_path) -> None:
    async with EmulatorSet(EmulatorConfig(price=PRICE), responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config(adapter, emus.endpoints()[adapter])
        vendor = batching(cfg, str(tmp_path))
        online = create_vendor(cfg)
        try:
            replies = await vendor.complete_many([request(i) for i in range(5)], Verdict)
            assert not vendor._watchers  # collected results are let go once every waiter has its answer
            ref = await online.complete(request(0), Verdict)
        finally:
            await vendor.aclose()
            await online.aclose()
        store = emus.by_vendor()[adapter].batches
        assert store.creates == 1 and sum(store.submitted.values()) == 5
        [record] = load_all(str(tmp_path))[adapter]
        assert record.phase == "collected" and sorted(record.requests) == sorted(
            request(i).request_hash for i in range(5))
        assert set(record.outcomes.values()) == {"succeeded"}
        for reply in replies:
            assert not isinstance(reply, VendorError)
            assert reply.output.verdict == "met" and reply.batch_id == record.batch_id
        first = replies[0]
        assert not isinstance(first, VendorError)
        assert first.usage == ref.usage
        assert first.cost_usd == pytest.approx(ref.cost_usd / 2, rel=1e-6)


@pytest.mark.parametrize("adapter", VENDORS)
async def test_a_new_process_polls_the_journalled_batch_and_submits_nothing_twice(adapter: str, tmp_path) -> None:
    emu_cfg = EmulatorConfig(batch=BatchSettings(completion_s=3600))
    async with EmulatorSet(emu_cfg, responder=StaticResponder(ANSWER)) as emus:
        emu = emus.by_vendor()[adapter]
        cfg = vendor_config(adapter, emus.endpoints()[adapter])
        first = batching(cfg, str(tmp_path), detach=True)
        try:
            pending = await first.complete_many([request(i) for i in range(3)], Verdict)
        finally:
            await first.aclose()
        assert all(isinstance(p, BatchPending) for p in pending)
        assert emu.batches.creates == 1 and not emu.requests  # submitted, not answered yet

        async def sleep_advancing(seconds: float) -> None:  # the batch's clock moves, nobody waits
            emu.advance(seconds)
            await asyncio.sleep(0)

        emu.advance(1800)
        second = batching(cfg, str(tmp_path), sleep=sleep_advancing)
        try:
            replies = await second.complete_many([request(i) for i in range(3)], Verdict)
        finally:
            await second.aclose()
        assert all(not isinstance(r, VendorError) for r in replies)
        assert emu.batches.creates == 1  # polled and collected, never resubmitted
        assert max(emu.batches.submitted.values()) == 1
        assert second.stats["resumed_requests"] == 3 and second.stats["batches_submitted"] == 0


@pytest.mark.parametrize("adapter", VENDORS)
async def test_errored_and_expired_requests_are_retried_in_a_later_batch(adapter: str, tmp_path) -> None:
    emu_cfg = EmulatorConfig(batch=BatchSettings(script=["errored", "succeeded", "expired"]))
    async with EmulatorSet(emu_cfg, responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config(adapter, emus.endpoints()[adapter])
        vendor = batching(cfg, str(tmp_path))
        try:
            replies = await vendor.complete_many([request(i) for i in range(3)], Verdict)
        finally:
            await vendor.aclose()
        store = emus.by_vendor()[adapter].batches
        assert all(not isinstance(r, VendorError) for r in replies)
        assert store.creates == 2
        records = load_all(str(tmp_path))[adapter]
        assert sorted(records[0].outcomes.values()) == ["errored", "expired", "succeeded"]
        assert len(records[1].requests) == 2 and set(records[1].outcomes.values()) == {"succeeded"}
        attempts = sorted(r.attempts for r in replies if not isinstance(r, VendorError))
        assert attempts == [1, 2, 2]


async def test_a_request_failing_in_every_batch_gives_up_under_the_retry_policy(tmp_path) -> None:
    emu_cfg = EmulatorConfig(batch=BatchSettings(error_rate=1.0))
    async with EmulatorSet(emu_cfg, responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config("anthropic", emus.endpoints()["anthropic"], retry=RetryPolicy(max_attempts=3))
        vendor = batching(cfg, str(tmp_path))
        try:
            [result] = await vendor.complete_many([request(0)], Verdict)
        finally:
            await vendor.aclose()
        assert isinstance(result, VendorError) and result.attempts == 3
        assert "errored" in str(result)
        assert emus.anthropic.batches.creates == 3


async def test_retry_online_sends_a_failed_batch_request_online_once(tmp_path) -> None:
    emu_cfg = EmulatorConfig(batch=BatchSettings(script=["errored"]))
    async with EmulatorSet(emu_cfg, responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config("openai", emus.endpoints()["openai"])
        vendor = batching(cfg, str(tmp_path), online=True)
        try:
            [reply] = await vendor.complete_many([request(0)], Verdict)
        finally:
            await vendor.aclose()
        assert not isinstance(reply, VendorError) and reply.batch_id is None
        assert [r.path for r in emus.openai.requests] == ["/v1/responses"]  # the online retry
        assert emus.openai.batches.creates == 1


@pytest.mark.parametrize("adapter", VENDORS)
async def test_a_driver_killed_between_the_submit_call_and_its_journal_entry_submits_nothing_twice(
    adapter: str, tmp_path
) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config(adapter, emus.endpoints()[adapter])
        first = batching(cfg, str(tmp_path))
        submit = first.api.submit

        died = asyncio.Event()

        async def submit_then_die(items, label, options):  # the vendor has the batch; the driver dies before saving its id
            await submit(items, label, options)
            died.set()
            raise asyncio.CancelledError

        first.api.submit = submit_then_die  # type: ignore[method-assign]
        task = asyncio.ensure_future(first.complete_many([request(i) for i in range(4)], Verdict))
        await died.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await first.aclose()
        [record] = BatchJournal.load(str(tmp_path), adapter).records.values()
        assert record.phase == "submitting" and not record.batch_id

        second = batching(cfg, str(tmp_path))
        try:
            replies = await second.complete_many([request(i) for i in range(4)], Verdict)
        finally:
            await second.aclose()
        assert all(not isinstance(r, VendorError) for r in replies)
        store = emus.by_vendor()[adapter].batches
        assert store.creates == 1 and max(store.submitted.values()) == 1
        assert second.stats["batches_adopted"] == 1
        [record] = BatchJournal.load(str(tmp_path), adapter).records.values()
        assert record.phase == "collected" and record.batch_id in store.batches


async def test_a_submitting_record_whose_batch_never_arrived_is_abandoned_and_sent_again(tmp_path) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config("openai", emus.endpoints()["openai"])
        journal = BatchJournal.load(str(tmp_path), "openai")
        journal.save(BatchRecord(vendor="openai", model="m", label="lost-1", requests=[request(0).request_hash]))
        vendor = batching(cfg, str(tmp_path))
        try:
            [reply] = await vendor.complete_many([request(0)], Verdict)
        finally:
            await vendor.aclose()
        assert not isinstance(reply, VendorError)
        phases = sorted(r.phase for r in BatchJournal.load(str(tmp_path), "openai").records.values())
        assert phases == ["abandoned", "collected"] and emus.openai.batches.creates == 1


@pytest.mark.parametrize("adapter", VENDORS)
async def test_with_a_cost_cap_a_batch_reserves_its_worst_case_at_batch_prices_and_one_that_could_cross_is_not_sent(
    adapter: str, tmp_path
) -> None:
    first, second = [request(i) for i in range(3)], [request(i) for i in range(3, 6)]
    async with EmulatorSet(EmulatorConfig(price=PRICE), responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config(adapter, emus.endpoints()[adapter])
        worst_first = sum(worst_case_usd(cfg, r, PRICE.for_batch()) for r in first)
        # the first batch fits exactly at batch prices (at online prices it would be twice the cap)
        ledger = CostLedger(worst_first * (1 + 1e-9))
        vendor = batching(cfg, str(tmp_path))
        vendor.spend_guard = LocalLedger(ledger)
        try:
            paid = await vendor.complete_many(first, Verdict)
            assert ledger.state.reserved_usd == pytest.approx(0.0, abs=1e-12)  # settled at collection
            assert ledger.state.spent_usd == pytest.approx(sum(r.cost_usd for r in paid if not isinstance(r, VendorError)))
            refused = await vendor.complete_many(second, Verdict)
        finally:
            await vendor.aclose()
        store = emus.by_vendor()[adapter].batches
        assert all(not isinstance(r, VendorError) for r in paid)
        assert all(isinstance(r, VendorError) and r.kind is ErrorKind.COST_CAP for r in refused)
        assert store.creates == 1 and ledger.state.stopped
        assert len(load_all(str(tmp_path))[adapter]) == 1  # a refused batch leaves no journal record

        # the next run (a fresh ledger with room) submits exactly the refused requests, once
        rerun = batching(cfg, str(tmp_path))
        rerun.spend_guard = LocalLedger(CostLedger(1.0))
        try:
            replies = await rerun.complete_many(first + second, Verdict)
        finally:
            await rerun.aclose()
        assert all(not isinstance(r, VendorError) for r in replies)
        assert store.creates == 2 and rerun.stats["resumed_requests"] == 3
        assert sorted(load_all(str(tmp_path))[adapter][1].requests) == sorted(r.request_hash for r in second)


RUN_ID = "run-acme-merger-0123456789ab"


async def test_every_openai_batch_line_asks_not_to_be_stored_with_the_shortest_cache_retention(tmp_path) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config("openai", emus.endpoints()["openai"])
        vendor = batching(cfg, str(tmp_path), label=RUN_ID)
        try:
            replies = await vendor.complete_many([request(i) for i in range(4)], Verdict)
        finally:
            await vendor.aclose()
        assert all(not isinstance(r, VendorError) for r in replies)
        [batch] = emus.openai.batches.batches.values()
        bodies = [item.body for item in batch.items.values()]  # each line's body as the emulator parsed it
        assert len(bodies) == 4
        assert [b.get("store") for b in bodies] == [False] * 4
        assert [b.get("prompt_cache_retention") for b in bodies] == ["in_memory"] * 4
        assert {r.path for r in emus.openai.requests} == {"batch:/v1/responses"}  # nothing went online


async def test_every_xai_batch_chat_pins_store_messages_off_and_its_client_keeps_prompts_out_of_telemetry(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(NO_PROMPTS_IN_TELEMETRY, "0")
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config("xai", emus.endpoints()["xai"])
        settings = BatchConfig(enabled=True, flush_interval_s=0.0, poll_interval_s=1.0)
        api = create_batch_api(cfg)
        assert isinstance(api, XAIBatch)
        vendor = BatchingVendor(api, BatchJournal.load(str(tmp_path), "xai"), settings,  # no online client
                                sleep=lambda s: asyncio.sleep(0))
        try:
            replies = await vendor.complete_many([request(i) for i in range(3)], Verdict)
            assert api.params(request(0), Verdict)["store_messages"] is False  # pinned, not the SDK's default
        finally:
            await vendor.aclose()
        assert all(not isinstance(r, VendorError) for r in replies)
        [batch] = emus.xai.batches.batches.values()
        # a proto3 false is the absent field on the wire: no request asks to be stored
        assert [item.body.get("store_messages", False) for item in batch.items.values()] == [False] * 3
        assert should_disable_sensitive_attributes()


async def names_kept_at_the_vendor(adapter: str, cfg: VendorConfig, batch_id: str) -> list[str]:
    """What the vendor shows of a batch, read back through its SDK: the label, and OpenAI's input file name."""
    key = "batch-key-0123456789"
    if adapter == "openai":
        client = openai.AsyncOpenAI(api_key=key, base_url=cfg.endpoint, max_retries=0)
        try:
            batch = await client.batches.retrieve(batch_id)
            upload = await client.files.retrieve(batch.input_file_id)
        finally:
            await client.close()
        return [(batch.metadata or {})["tribunal"], upload.filename]
    host, _ = split_endpoint(cfg.endpoint)
    assert host is not None
    xai = xai_sdk.AsyncClient(api_key=key, api_host=host, use_insecure_channel=True)
    try:
        return [(await xai.batch.get(batch_id)).name]
    finally:
        await xai.close()


@pytest.mark.parametrize("adapter", ["openai", "xai"])
async def test_a_batch_is_named_at_the_vendor_by_an_opaque_hash_the_journal_keeps_not_the_run_id(
    adapter: str, tmp_path
) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config(adapter, emus.endpoints()[adapter])
        vendor = batching(cfg, str(tmp_path), label=RUN_ID)
        try:
            await vendor.complete_many([request(i) for i in range(2)], Verdict)
            await vendor.complete_many([request(i) for i in range(2, 4)], Verdict)
        finally:
            await vendor.aclose()
        records = load_all(str(tmp_path))[adapter]
        assert len(records) == 2 and len({r.label for r in records}) == 2
        for record in records:
            names = await names_kept_at_the_vendor(adapter, cfg, record.batch_id)
            assert names[0] == record.label  # a later run finds the batch by it (BatchAPI.find)
            assert re.fullmatch(r"[0-9a-f]{32}", record.label)
            assert not any(part in name for name in names for part in ("acme", "0123456789ab", "run-", adapter))


async def test_an_answer_that_stopped_at_its_cap_in_a_batch_is_sent_once_more_at_a_larger_cap(tmp_path) -> None:
    """As online (`evalcore.vendors.output_cap`): OpenAI counts reasoning inside `max_output_tokens`,
    so a batch answer can end `incomplete`; it is its own paid attempt and the request goes into a
    later batch at twice the cap, whose answer is the verdict (not a bad output retried at the same
    cap, which would stop again)."""
    config = EmulatorConfig(price=PRICE, reasoning_tokens={"low": 700})  # more than the first cap holds
    async with EmulatorSet(config, responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config("openai", emus.endpoints()["openai"], reasoning_effort="low")
        vendor = batching(cfg, str(tmp_path))
        try:
            [reply] = await vendor.complete_many([request(0).model_copy(update={"max_output_tokens": 600})], Verdict)
        finally:
            await vendor.aclose()
        store = emus.by_vendor()["openai"].batches
    assert not isinstance(reply, VendorError) and reply.output.verdict == "met"
    assert store.creates == 2  # the capped answer's batch, then the retry's
    [attempt] = reply.earlier
    assert attempt.max_output_tokens == 600 and "1,200-token cap" in attempt.reason
    assert attempt.usage["output_tokens"] == 600 and attempt.cost_usd > 0
    # as online: the reply's totals hold both attempts, and its rows add up to them
    truncated, answered = call_rows(CTX, cfg, request(0), reply, criterion_id="C-1")
    assert (truncated.outcome, truncated.attempts, truncated.output_tokens) == ("truncated", 1, 600)
    assert (answered.outcome, answered.attempts, answered.max_output_tokens) == ("ok", 1, 1200)
    billed = [i.decision.usage for b in sorted(store.batches.values(), key=lambda b: b.created_clock)
              for i in b.items.values() if i.decision is not None and i.decision.usage is not None]
    assert [(truncated.input_tokens, truncated.output_tokens), (answered.input_tokens, answered.output_tokens)] == [
        (u.input_tokens, u.output_tokens) for u in billed]
    assert truncated.output_tokens + answered.output_tokens == reply.usage.output_tokens > 600
    assert answered.output_tokens > 0 and answered.cost_usd > 0
    assert truncated.cost_usd + answered.cost_usd == pytest.approx(reply.cost_usd)


async def test_a_second_stop_at_the_cap_in_a_batch_is_a_final_bad_output_not_retried_online(tmp_path) -> None:
    """As online: one retry at a larger cap, and a second stop is final whatever the bad-output
    allowance (the same prompt reasons alike, so a third attempt would stop again: a runaway) — not
    sent online either. Both paid attempts are on the call: the first as its own `truncated` row."""
    config = EmulatorConfig(price=PRICE, reasoning_tokens={"low": 5000})  # more than both caps hold
    async with EmulatorSet(config, responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config("openai", emus.endpoints()["openai"], reasoning_effort="low")
        vendor = batching(cfg, str(tmp_path), online=True)
        try:
            [err] = await vendor.complete_many([request(0).model_copy(update={"max_output_tokens": 600})], Verdict)
        finally:
            await vendor.aclose()
        emu = emus.by_vendor()["openai"]
    assert isinstance(err, VendorError) and err.kind is ErrorKind.BAD_OUTPUT and err.attempts == 2
    assert emu.batches.creates == 2
    assert [r.path for r in emu.requests if not r.path.startswith("batch:")] == []  # nothing went online
    rows = call_rows(CTX, cfg, request(0), err, criterion_id="C-1")
    assert [(r.outcome, r.max_output_tokens, r.attempts) for r in rows] == [("truncated", 600, 1),
                                                                           ("bad_output", 1200, 1)]
    assert [r.output_tokens for r in rows] == [600, 1200]
    assert sum(r.cost_usd for r in rows) == pytest.approx(err.cost_usd) and rows[1].cost_usd > 0
