"""What batches leave at the vendors, through the real SDKs against the emulators: every object a
batch creates is journalled (OpenAI's input file before its batch exists), OpenAI files are created
with the governed expiries, and a purge deletes what the run no longer needs -- repeatably, on a
half-purged run, never what is still needed -- records it in the run, and reports what cannot be
deleted (xAI batches)."""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Literal

import anthropic
import openai
import pytest
from pydantic import BaseModel

from doubles.emulators import EmulatorSet, StaticResponder
from evalcore.config.models import BatchConfig, BatchRetention, Price, VendorConfig
from evalcore.errors import VendorError
from evalcore.vendors.batch.journal import BatchJournal, load_all, load_purges
from evalcore.vendors.batch.protocol import BatchAPI
from evalcore.vendors.batch.purge import holdings, purge
from evalcore.vendors.batch.queue import BatchingVendor
from evalcore.vendors.protocol import JudgeRequest
from evalcore.vendors.registry import create_batch_api, create_vendor

ANSWER = {"verdict": "met", "reason": "quoted verbatim"}
KEY_ENV = "TRIBUNAL_TEST_PURGE_KEY"
KEY = "purge-key-0123456789"
RETENTION = BatchRetention(input_file_expires_after_s=90_000, output_files_expire_after_s=7_200)


class Verdict(BaseModel):
    verdict: Literal["met", "not_met"]
    reason: str


def request(i: int) -> JudgeRequest:
    return JudgeRequest(
        purpose="rubric", request_hash=hashlib.sha256(f"purge-{i}".encode()).hexdigest(),
        system_prompt="You grade legal memos.", shared_prefix=f"Memo {i}: the lease runs to 2031.",
        varying_suffix=" Criterion: names the end date.", schema_name="Verdict",
    )


def vendor_config(adapter: str, endpoint: str) -> VendorConfig:
    return VendorConfig.model_validate({
        "adapter": adapter, "name": adapter, "family": adapter, "model": f"{adapter}-model",
        "endpoint": ("http://" + endpoint) if adapter == "xai" else endpoint, "api_key_env": KEY_ENV,
        "price": Price(input=4.0, output=20.0).model_dump(), "prompt_caching": False,
    })


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


async def run_batch(cfg: VendorConfig, run: str, n: int = 3, retention: BatchRetention = RETENTION) -> list[object]:
    settings = BatchConfig(enabled=True, flush_interval_s=0.0, poll_interval_s=1.0, retention=retention)
    vendor = BatchingVendor(create_batch_api(cfg), BatchJournal.load(run, cfg.name), settings,
                            online=create_vendor(cfg), sleep=lambda s: asyncio.sleep(0))
    try:
        return list(await vendor.complete_many([request(i) for i in range(n)], Verdict))
    finally:
        await vendor.aclose()


async def purge_now(cfg: VendorConfig, run: str, written_at: float | None) -> object:
    api: BatchAPI = create_batch_api(cfg)
    try:
        return await purge(run, {cfg.name: api}, trigger="command", written_at=written_at)
    finally:
        await api.aclose()


async def test_openai_batch_files_are_journalled_created_with_the_governed_expiries_and_purged(tmp_path) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        emu = emus.by_vendor()["openai"]
        cfg = vendor_config("openai", emus.endpoints()["openai"])
        run = str(tmp_path)
        assert not any(isinstance(r, VendorError) for r in await run_batch(cfg, run))
        [record] = load_all(run)["openai"]
        kinds = [o.kind for o in record.objects]
        assert kinds[:2] == ["input_file", "batch"] and "output_file" in kinds
        held = emu.retained()["files"]
        assert sorted(held) == sorted(o.id for o in record.objects if o.kind != "batch")
        [upload] = [r for r in emu.received if r.api == "files.create"]
        [created] = [r for r in emu.received if r.api == "batches.create"]
        assert upload.settings["expires_after_s"] == 90_000
        assert created.settings["output_expires_after_s"] == 7_200
        assert all(r.settings["store"] is False for r in emu.received if r.api == "responses")

        result = await purge_now(cfg, run, written_at=time.time())
        assert emu.retained()["files"] == []
        [purged] = load_purges(run)
        assert purged is not None and result == purged
        assert sorted(o.id for o in purged.objects if o.outcome == "deleted") == sorted(held)
        assert emu.retained()["batches"] == [record.batch_id]  # the batch object (no text) has no delete
        states = {h.kind: h.state for h in holdings(load_all(run), load_purges(run), time.time())}
        assert states == {"input_file": "deleted", "batch": "metadata", "output_file": "deleted"}

        again = await purge_now(cfg, run, written_at=time.time())  # idempotent: nothing left, no call
        assert again is None and len(load_purges(run)) == 1
        assert [r.api for r in emu.received].count("files.delete") == len(held)


async def test_anthropic_batch_is_deleted_by_the_purge_and_then_never_collected_again(tmp_path) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        emu = emus.by_vendor()["anthropic"]
        cfg = vendor_config("anthropic", emus.endpoints()["anthropic"])
        run = str(tmp_path)
        await run_batch(cfg, run)
        [record] = load_all(run)["anthropic"]
        assert [o.kind for o in record.objects] == ["batch"]
        assert emu.retained()["batches"] == [record.batch_id]
        await purge_now(cfg, run, written_at=time.time())
        assert emu.retained() == {"batches": [], "archived_batches": []}
        journal = BatchJournal.load(run, "anthropic")
        assert journal.usable_batch(request(0).request_hash) is None  # its answers are in the tables, not there


@pytest.mark.parametrize("adapter", ["openai", "anthropic"])
async def test_a_half_purged_run_is_purged_again_and_what_the_vendor_no_longer_has_counts_as_gone(
    adapter: str, tmp_path
) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        emu = emus.by_vendor()[adapter]
        cfg = vendor_config(adapter, emus.endpoints()[adapter])
        run = str(tmp_path)
        await run_batch(cfg, run)
        [record] = load_all(run)[adapter]
        first = next(o for o in record.objects if o.holds_text)
        if adapter == "openai":  # someone (an earlier purge killed midway) deleted one already
            async with openai.AsyncOpenAI(api_key=KEY, base_url=cfg.endpoint, max_retries=0) as oc:
                await oc.files.delete(first.id)
        else:
            async with anthropic.AsyncAnthropic(api_key=KEY, base_url=cfg.endpoint, max_retries=0) as ac:
                await ac.messages.batches.delete(first.id)
        await purge_now(cfg, run, written_at=time.time())
        [purged] = load_purges(run)
        outcomes = {o.id: o.outcome for o in purged.objects}
        assert outcomes[first.id] == "gone" and "failed" not in outcomes.values()
        assert emu.retained()["files" if adapter == "openai" else "batches"] == []


@pytest.mark.parametrize("adapter", ["openai", "anthropic"])
async def test_a_batch_whose_answers_are_not_in_the_tables_is_left_alone(adapter: str, tmp_path) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        emu = emus.by_vendor()[adapter]
        cfg = vendor_config(adapter, emus.endpoints()[adapter])
        run = str(tmp_path)
        started = time.time()
        await run_batch(cfg, run)
        before = emu.retained()
        for written_at in (None, started):  # no finished attempt; or one that ended before the collect
            result = await purge_now(cfg, run, written_at=written_at)
            assert result is not None and result.in_use > 0 and not result.objects  # type: ignore[attr-defined]
        assert emu.retained() == before
        assert not any(r.api.endswith("delete") for r in emu.received)


async def test_an_openai_input_file_whose_batch_was_never_created_is_journalled_and_purged(tmp_path) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        emu = emus.by_vendor()["openai"]
        cfg = vendor_config("openai", emus.endpoints()["openai"])
        run = str(tmp_path)
        refused = BatchRetention(input_file_expires_after_s=90_000, output_files_expire_after_s=10)  # < 1 h: a 400
        results = await run_batch(cfg.model_copy(update={"retry": cfg.retry.model_copy(update={"max_attempts": 1})}),
                                  run, n=1, retention=refused)
        assert isinstance(results[0], VendorError)
        [record] = load_all(run)["openai"]
        assert record.phase == "abandoned" and [o.kind for o in record.objects] == ["input_file"]
        assert emu.retained()["files"] == [record.objects[0].id]  # uploaded; the batch was refused
        await purge_now(cfg, run, written_at=None)  # an orphan: purged whether or not the run finished
        assert emu.retained()["files"] == []


async def test_xai_batches_are_reported_undeletable_and_stay_at_xai(tmp_path) -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        emu = emus.by_vendor()["xai"]
        cfg = vendor_config("xai", emus.endpoints()["xai"])
        run = str(tmp_path)
        await run_batch(cfg, run)
        [record] = load_all(run)["xai"]
        result = await purge_now(cfg, run, written_at=time.time())
        [purged] = load_purges(run)
        assert result == purged
        assert [(o.kind, o.id, o.outcome) for o in purged.objects] == [("batch", record.batch_id, "undeletable")]
        assert "no delete" in purged.objects[0].detail
        assert emu.retained()["batches"] == [record.batch_id]
        [held] = holdings(load_all(run), load_purges(run), time.time())
        assert held.state == "undeletable"
