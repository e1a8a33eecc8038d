"""The batch queue at the vendors' limits, through the real SDKs against the emulators: batches split
at the request, byte and enqueued-token limits (the rule, `plan_batches`, checked as a property), the
next batch held until earlier ones end so the emulator never holds more than the limit (asserted from
the emulator's own record), a batch refused at the vendor's limit anyway (another process on the same
key) sent again once and never paid twice, and every request answered exactly once."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any, Literal

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from doubles.emulators import BatchSettings, EmulatorConfig, EmulatorSet, StaticResponder
from doubles.emulators._batches import BatchStore
from evalcore.config.models import BatchConfig, BatchLimits, Price, VendorConfig
from evalcore.errors import ErrorKind, VendorError
from evalcore.vendors.batch.journal import BatchJournal, load_all
from evalcore.vendors.batch.queue import BatchingVendor, BatchPending, input_tokens, plan_batches
from evalcore.vendors.protocol import JudgeReply, JudgeRequest
from evalcore.vendors.registry import create_batch_api

ANSWER = {"verdict": "met", "reason": "quoted verbatim"}
Adapter = Literal["openai", "anthropic", "xai"]
VENDORS: tuple[Adapter, ...] = ("openai", "anthropic", "xai")
KEY_ENV = "TRIBUNAL_TEST_BATCH_LIMITS_KEY"
POLL_S = 60.0
COMPLETION_S = 60.0


class Verdict(BaseModel):
    verdict: Literal["met", "not_met"]
    reason: str


def request(i: int) -> JudgeRequest:
    """Requests of one size (two-digit numbers), each with its own hash."""
    n = 10 + i
    return JudgeRequest(
        purpose="rubric",
        request_hash=hashlib.sha256(f"limits-{n}".encode()).hexdigest(),
        system_prompt="You grade legal memos.",
        shared_prefix=f"Memo {n}: the lease runs to 2031. " + "The tenant may assign with consent. " * 8,
        varying_suffix=" Criterion: names the end date.",
        schema_name="Verdict",
    )


def vendor_config(adapter: str, endpoint: str, **limits: Any) -> VendorConfig:
    if adapter == "xai":
        endpoint = "http://" + endpoint
    return VendorConfig.model_validate({
        "adapter": adapter, "name": adapter, "family": adapter, "model": f"{adapter}-model", "endpoint": endpoint,
        "api_key_env": KEY_ENV, "price": Price(input=4.0, cached_input=4.0, output=20.0).model_dump(),
        "prompt_caching": False, "batch_limits": limits,
    })


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "batch-limits-key-0123456789")


def batching(cfg: VendorConfig, run: str, store: BatchStore, *, detach: bool = False) -> BatchingVendor:
    """A batch queue whose waits move the emulator's clock instead of the wall clock (no sleeping):
    a poll interval of waiting is a poll interval of the emulator's time."""

    async def sleep(seconds: float) -> None:
        store.advance(seconds)
        await asyncio.sleep(0)

    settings = BatchConfig(enabled=True, flush_interval_s=0.0, poll_interval_s=POLL_S)
    return BatchingVendor(create_batch_api(cfg), BatchJournal.load(run, cfg.name), settings, detach=detach,
                          sleep=sleep)


def answered_once(replies: list[JudgeReply[Verdict] | VendorError], store: BatchStore, n: int,
                  others: frozenset[str] = frozenset()) -> None:
    """Every request has its answer, and the vendor answered (billed) each exactly once (`others`:
    custom ids of another process's requests)."""
    assert all(not isinstance(r, VendorError) for r in replies), replies
    ours = {cid: times for cid, times in store.billed.items() if cid not in others}
    assert sorted(ours) == sorted(request(i).request_hash for i in range(n))
    assert set(ours.values()) == {1}


# ---------------------------------------------------------------------------------------------- the rule

limits_strategy = st.builds(
    BatchLimits,
    max_requests=st.integers(1, 8),
    max_bytes=st.integers(50, 400),
    max_enqueued_tokens=st.one_of(st.none(), st.integers(20, 200)),
)


@given(limits=limits_strategy, data=st.data())
def test_batches_hold_every_request_once_in_order_within_every_limit_and_split_only_when_one_more_would_not_fit(
    limits: BatchLimits, data: st.DataObject
) -> None:
    top = limits.max_enqueued_tokens or 200
    items = data.draw(st.lists(st.tuples(st.integers(1, 120), st.integers(1, top)), max_size=40))
    plan = plan_batches(items, limits)
    assert [i for batch, _ in plan for i in batch] == list(range(len(items)))  # nothing lost, none twice, in order
    for n, (batch, cause) in enumerate(plan):
        assert batch and len(batch) <= limits.max_requests
        size = sum(items[i][0] for i in batch)
        tokens = sum(items[i][1] for i in batch)
        assert size <= limits.max_bytes or len(batch) == 1  # a request over the byte limit alone goes alone
        assert limits.max_enqueued_tokens is None or tokens <= limits.max_enqueued_tokens
        if cause is None:
            assert n == len(plan) - 1  # only the last batch is left open
            continue
        nxt = batch[-1] + 1
        if cause == "requests":
            assert len(batch) == limits.max_requests
        elif cause == "bytes":
            assert len(batch) < limits.max_requests and size + items[nxt][0] > limits.max_bytes
        else:
            assert cause == "tokens" and limits.max_enqueued_tokens is not None
            assert size + items[nxt][0] <= limits.max_bytes
            assert tokens + items[nxt][1] > limits.max_enqueued_tokens


# ---------------------------------------------------------------------------------------------- splitting


@pytest.mark.parametrize("adapter", VENDORS)
async def test_batches_split_at_the_request_limit(adapter: Adapter, tmp_path) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        store = emus.by_vendor()[adapter].batches
        cfg = vendor_config(adapter, emus.endpoints()[adapter], max_requests=4)
        vendor = batching(cfg, str(tmp_path), store)
        replies = await _complete(vendor, 10)
        answered_once(replies, store, 10)
        records = load_all(str(tmp_path))[adapter]
        assert [len(r.requests) for r in records] == [4, 4, 2]
        assert [r.closed_by for r in records] == ["requests", "requests", "interval"]
        assert sorted(len(b.items) for b in store.batches.values()) == [2, 4, 4]


@pytest.mark.parametrize("adapter", VENDORS)
async def test_batches_split_at_the_byte_limit(adapter: Adapter, tmp_path) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        store = emus.by_vendor()[adapter].batches
        probe = create_batch_api(vendor_config(adapter, emus.endpoints()[adapter]))
        size = probe.request_bytes(request(0), Verdict)
        assert {probe.request_bytes(request(i), Verdict) for i in range(10)} == {size}
        await probe.aclose()
        cfg = vendor_config(adapter, emus.endpoints()[adapter], max_bytes=3 * size + size // 2)
        vendor = batching(cfg, str(tmp_path), store)
        replies = await _complete(vendor, 10)
        answered_once(replies, store, 10)
        records = load_all(str(tmp_path))[adapter]
        assert [len(r.requests) for r in records] == [3, 3, 3, 1]
        assert [r.closed_by for r in records] == ["bytes", "bytes", "bytes", "interval"]
        assert plan_batches([(size, 1)] * 10, cfg.batch_limits) == [
            ([0, 1, 2], "bytes"), ([3, 4, 5], "bytes"), ([6, 7, 8], "bytes"), ([9], None)]


# ---------------------------------------------------------------------------------------------- the enqueued-token limit


def _queue_limited(limit: int) -> EmulatorConfig:
    """Emulators whose OpenAI batch queue holds at most `limit` enqueued tokens per model."""
    return EmulatorConfig(batch=BatchSettings(completion_s=COMPLETION_S, max_enqueued_tokens=limit))


async def _complete(vendor: Any, n: int) -> list[Any]:
    """Requests 0..n-1 through a batching vendor, which is closed however that ends."""
    try:
        return await vendor.complete_many([request(i) for i in range(n)], Verdict)
    finally:
        await vendor.aclose()


async def test_the_next_batch_is_held_until_earlier_ones_end_and_the_vendor_never_holds_more_than_the_limit(
    tmp_path,
) -> None:
    tokens = input_tokens(request(0))
    limit = 4 * tokens  # four requests' worth: one batch of four at a time
    emu_cfg = _queue_limited(limit)
    async with EmulatorSet(emu_cfg, responder=StaticResponder(ANSWER)) as emus:
        store = emus.openai.batches
        cfg = vendor_config("openai", emus.endpoints()["openai"], max_enqueued_tokens=limit)
        vendor = batching(cfg, str(tmp_path), store)
        replies = await _complete(vendor, 10)
        answered_once(replies, store, 10)
        assert store.refusals == []  # the queue kept to the limit: the vendor never had to refuse
        assert 0 < store.max_enqueued["openai-model"] <= limit  # the emulator's own record
        records = load_all(str(tmp_path))["openai"]
        assert [len(r.requests) for r in records] == [4, 4, 2]
        assert [r.closed_by for r in records] == ["tokens", "tokens", "interval"]
        assert [r.input_tokens for r in records] == [4 * tokens, 4 * tokens, 2 * tokens]
        assert vendor.stats["batches_held"] == 2 and vendor.stats["max_enqueued_tokens"] == limit
        # held, not just split: each batch was created once the one before it had ended
        batches = sorted(store.batches.values(), key=lambda b: b.created_clock)
        for before, after in zip(batches, batches[1:], strict=False):
            assert after.created_clock - before.created_clock >= COMPLETION_S


async def test_with_detach_a_batch_that_does_not_fit_is_not_sent_and_the_next_run_sends_it_once(tmp_path) -> None:
    tokens = input_tokens(request(0))
    limit = 4 * tokens
    emu_cfg = _queue_limited(limit)
    async with EmulatorSet(emu_cfg, responder=StaticResponder(ANSWER)) as emus:
        store = emus.openai.batches
        cfg = vendor_config("openai", emus.endpoints()["openai"], max_enqueued_tokens=limit)
        first = batching(cfg, str(tmp_path), store, detach=True)
        pending = await _complete(first, 6)
        assert all(isinstance(p, BatchPending) for p in pending)
        assert sum("not sent" in str(p) for p in pending) == 2  # the second batch: held, not sent
        assert store.creates == 1 and len(load_all(str(tmp_path))["openai"]) == 1

        second = batching(cfg, str(tmp_path), store)
        replies = await _complete(second, 6)
        answered_once(replies, store, 6)
        assert store.creates == 2 and store.refusals == [] and store.max_enqueued["openai-model"] <= limit
        assert second.stats["resumed_requests"] == 4  # the first run's batch, polled, not sent again


async def test_a_request_larger_than_the_enqueued_token_limit_fails_naming_the_limit_and_sends_nothing(
    tmp_path,
) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        store = emus.openai.batches
        cfg = vendor_config("openai", emus.endpoints()["openai"], max_enqueued_tokens=input_tokens(request(0)) - 1)
        vendor = batching(cfg, str(tmp_path), store)
        try:
            [result] = await vendor.complete_many([request(0)], Verdict)
        finally:
            await vendor.aclose()
        assert isinstance(result, VendorError) and result.kind is ErrorKind.FATAL
        assert "max_enqueued_tokens" in str(result) and store.creates == 0


async def test_a_batch_refused_at_the_vendors_limit_is_sent_again_once_there_is_room_and_paid_once(
    tmp_path, caplog: pytest.LogCaptureFixture
) -> None:
    limit = 1000
    emu_cfg = _queue_limited(limit)
    async with EmulatorSet(emu_cfg, responder=StaticResponder(ANSWER)) as emus:
        store = emus.openai.batches
        cfg = vendor_config("openai", emus.endpoints()["openai"])  # this queue knows no limit: another
        # process on the same key has filled the vendor's queue (one batch of 900 of the 1,000 tokens)
        other = create_batch_api(cfg)
        filler = JudgeRequest(purpose="rubric", request_hash="f" * 64, system_prompt="s", shared_prefix="p" * 3596,
                              varying_suffix="", schema_name="Verdict")
        await other.submit([("filler", filler, Verdict)], "another-process")
        await other.aclose()
        assert store.enqueued_tokens("openai-model") == 900

        vendor = batching(cfg, str(tmp_path), store)
        with caplog.at_level(logging.WARNING, logger="evalcore.vendors.batch.queue"):
            replies = await _complete(vendor, 3)
        answered_once(replies, store, 3, others=frozenset({"filler"}))
        assert all(r.attempts == 1 for r in replies if not isinstance(r, VendorError))  # a refusal is no attempt
        refused_id, = store.refusals
        assert store.creates == 3  # the other process's, ours refused, ours again
        assert all(store.submitted[request(i).request_hash] == 2 for i in range(3))  # sent twice, billed once
        assert store.max_enqueued["openai-model"] <= limit
        assert vendor.stats["batches_refused"] == 1 and vendor.stats["resent_after_refusal"] == 3

        refused, again = load_all(str(tmp_path))["openai"]
        assert refused.batch_id == refused_id and refused.phase == "collected"
        assert set(refused.outcomes.values()) == {"refused"} and len(refused.outcomes) == 3
        assert "token_limit_exceeded" in refused.note and "sent again" in refused.note
        assert set(again.outcomes.values()) == {"succeeded"} and sorted(again.requests) == sorted(refused.requests)
        assert [r for r in caplog.records if "refused by the vendor's batch queue limit" in r.getMessage()]

        # the journal stays right: a re-run answers every request from the second batch, sending nothing
        rerun = batching(cfg, str(tmp_path), store)
        replies = await _complete(rerun, 3)
        assert all(not isinstance(r, VendorError) and r.batch_id == again.batch_id for r in replies)
        assert store.creates == 3 and set(store.billed.values()) == {1}  # the other process's once too


async def test_the_real_sdk_reads_a_refused_batch_as_failed_with_token_limit_exceeded(tmp_path) -> None:
    """What the adapter reads is what the vendor sends: the emulator's refusal through the SDK."""
    emu_cfg = EmulatorConfig(batch=BatchSettings(completion_s=COMPLETION_S, max_enqueued_tokens=10))
    async with EmulatorSet(emu_cfg, responder=StaticResponder(ANSWER)) as emus:
        cfg = vendor_config("openai", emus.endpoints()["openai"])
        api = create_batch_api(cfg)
        try:
            created = await api.submit([("one", request(0), Verdict)], "label")
            assert created.vendor_status == "validating" and not created.ended and created.refused is None
            polled = await api.poll(created.batch_id)
            assert polled.ended and polled.vendor_status == "failed"
            assert polled.refused is not None and polled.refused.startswith("token_limit_exceeded: Enqueued token limit")
            assert await api.collect(created.batch_id) == []
        finally:
            await api.aclose()
        client = openai.AsyncOpenAI(api_key="batch-limits-key-0123456789", base_url=cfg.endpoint, max_retries=0,
                                    _strict_response_validation=True)
        try:
            batch = await client.batches.retrieve(created.batch_id)
        finally:
            await client.close()
        assert batch.errors is not None and [e.code for e in batch.errors.data or []] == ["token_limit_exceeded"]


async def test_a_queue_without_a_limit_learns_the_vendors_from_its_refusal_and_splits_at_it(
    tmp_path, caplog: pytest.LogCaptureFixture
) -> None:
    tokens = input_tokens(request(0))
    limit = 3 * tokens
    emu_cfg = _queue_limited(limit)
    async with EmulatorSet(emu_cfg, responder=StaticResponder(ANSWER)) as emus:
        store = emus.openai.batches
        cfg = vendor_config("openai", emus.endpoints()["openai"])  # no max_enqueued_tokens configured
        vendor = batching(cfg, str(tmp_path), store)
        with caplog.at_level(logging.WARNING, logger="evalcore.vendors.batch.queue"):
            replies = await _complete(vendor, 8)
        answered_once(replies, store, 8)
        assert len(store.refusals) == 1  # the first batch, larger than the vendor ever accepts; never again
        assert vendor.stats["vendor_enqueued_token_limit"] == limit
        assert store.max_enqueued["openai-model"] <= limit
        refused, *sent = load_all(str(tmp_path))["openai"]
        assert len(refused.requests) == 8 and set(refused.outcomes.values()) == {"refused"}
        assert [len(r.requests) for r in sent] == [3, 3, 2]
        assert [r for r in caplog.records if f"batch queue limit is {limit:,} enqueued tokens" in r.getMessage()]


async def test_a_batch_waiting_for_room_when_a_lower_vendor_limit_is_learned_is_split_again_not_left_waiting(
    tmp_path,
) -> None:
    tokens = input_tokens(request(0))
    limit = 3 * tokens
    emu_cfg = _queue_limited(limit)
    async with EmulatorSet(emu_cfg, responder=StaticResponder(ANSWER)) as emus:
        store = emus.openai.batches
        # configured above the vendor's limit: the first batch (5 requests) is refused while the second
        # (5 more) waits for room, and is larger than the limit the refusal tells
        cfg = vendor_config("openai", emus.endpoints()["openai"], max_enqueued_tokens=5 * tokens)
        vendor = batching(cfg, str(tmp_path), store)
        replies = await _complete(vendor, 10)
        answered_once(replies, store, 10)
        assert len(store.refusals) == 1 and store.max_enqueued["openai-model"] <= limit
        assert vendor.stats["batches_split_again"] == 1
        refused, *sent = load_all(str(tmp_path))["openai"]
        assert len(refused.requests) == 5 and all(len(r.requests) <= 3 for r in sent)
        assert sorted(h for r in sent for h in r.requests) == sorted(request(i).request_hash for i in range(10))
