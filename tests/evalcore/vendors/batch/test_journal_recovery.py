"""A damaged batch journal never fails a run and never pays a request twice, through the real SDKs
against the emulated batch APIs.

Each case submits three requests as a `--detach` run would (the batch is left running), damages the
journal the way a tester did, and runs the same command again: first detached while the batch still
runs (nothing may be submitted again), then to the end. The answers must be the batch's, every
request submitted (and answered) once, and what could not be read named and set aside, never
deleted. The cases are listed in docs/RELIABILITY.md (checked below).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from doubles.emulators import BatchSettings, EmulatorConfig, EmulatorSet, StaticResponder
from evalcore.errors import VendorError
from evalcore.vendors.batch.journal import DAMAGED_MARK, BatchJournal, BatchRecord, load_all, run_history
from evalcore.vendors.batch.queue import BatchPending, is_own_label, vendor_label
from tests.evalcore.vendors.batch.test_batching import (
    ANSWER,
    VENDORS,
    Verdict,
    batching,
    request,
    vendor_config,
)

REPO = Path(__file__).resolve().parents[4]
RUN_LABEL = "run-journal-recovery"
N = 3


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIBUNAL_TEST_BATCH_KEY", "batch-key-0123456789")


def _record_file(run: Path, adapter: str) -> Path:
    [path] = (run / "_batches" / adapter).glob("*.json")
    return path


def _garbage(run: Path, adapter: str, emu: Any) -> bytes:
    path = _record_file(run, adapter)
    data = b"\x8b\x00garbage\xff{" + os.urandom(64)
    path.write_bytes(data)
    return data


def _truncated(run: Path, adapter: str, emu: Any) -> bytes:
    path = _record_file(run, adapter)
    data = path.read_bytes()[: len(path.read_bytes()) // 2]
    path.write_bytes(data)
    return data


def _unknown_batch_id(run: Path, adapter: str, emu: Any) -> bytes:
    path = _record_file(run, adapter)
    record = json.loads(path.read_text())
    record["batch_id"] = record["batch_id"][:-6] + "000000"  # an id the vendor never gave
    path.write_text(json.dumps(record))
    return b""


def _lost_at_vendor(run: Path, adapter: str, emu: Any) -> bytes:
    record = BatchRecord.model_validate_json(_record_file(run, adapter).read_bytes())
    store = emu.batches
    store.delete(store.get(record.batch_id))  # the vendor no longer knows it (nothing of it was answered)
    return b""


def _folder_deleted(run: Path, adapter: str, emu: Any) -> bytes:
    shutil.rmtree(run / "_batches")
    return b""


def _purge_record_garbage(run: Path, adapter: str, emu: Any) -> bytes:
    data = b'{"purged_at": 17000'
    (run / "_purge").mkdir(exist_ok=True)
    (run / "_purge" / "0001700000000000-0badf00d.json").write_bytes(data)
    return data


@dataclass(frozen=True)
class JournalCase:
    """One way the tester damaged the journal, and what the recovery must show for it."""

    id: str
    damage: Callable[[Path, str, Any], bytes]
    """Damages the run folder after the detached submit; returns the damaged bytes to find set aside."""
    lost: bool = False
    """The vendor does not have the batch: its requests are sent again, once."""
    folder: str = "_batches"


CASES = [
    JournalCase("journal-record-garbage", _garbage),
    JournalCase("journal-record-truncated", _truncated),
    JournalCase("journal-record-unknown-batch-id", _unknown_batch_id),
    JournalCase("journal-batch-lost-at-vendor", _lost_at_vendor, lost=True),
    JournalCase("journal-folder-deleted", _folder_deleted),
    JournalCase("purge-record-garbage", _purge_record_garbage, folder="_purge"),
]


def _advancing(emu: Any) -> Callable[[float], Awaitable[None]]:
    async def sleep(seconds: float) -> None:  # each poll interval is 15 minutes of the batch's clock
        emu.advance(900)
        await asyncio.sleep(0)

    return sleep


def _answered(emu: Any) -> int:
    """Batched requests the emulator answered (and would bill)."""
    return sum(1 for r in emu.requests if r.path.startswith("batch:"))


async def _run(cfg: Any, run: Path, *, detach: bool = False, sleep: object = None) -> tuple[list[Any], dict[str, int]]:
    vendor = batching(cfg, str(run), detach=detach, sleep=sleep, label=RUN_LABEL)
    try:
        replies = await vendor.complete_many([request(i) for i in range(N)], Verdict)
    finally:
        await vendor.aclose()
    return list(replies), dict(vendor.stats)


@pytest.mark.parametrize("adapter", VENDORS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_a_damaged_journal_is_set_aside_and_its_batch_found_again_and_no_request_is_paid_twice(
    case: JournalCase, adapter: str, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"created_at": time.time() - 5}))  # the run's start (the sweep writes it)
    async with EmulatorSet(EmulatorConfig(batch=BatchSettings(completion_s=3600)),
                           responder=StaticResponder(ANSWER)) as emus:
        emu: Any = emus.by_vendor()[adapter]  # type: ignore[index]
        store = emu.batches
        cfg = vendor_config(adapter, emus.endpoints()[adapter])

        pending, _ = await _run(cfg, run, detach=True)  # the --detach pass
        assert all(isinstance(p, BatchPending) for p in pending)
        (run / "_attempts").mkdir()
        (run / "_attempts" / "attempt-0001.json").write_text("{}")  # as the sweep leaves it
        [original] = load_all(str(run))[adapter]
        assert store.creates == 1 and original.phase == "submitted"
        damaged = case.damage(run, adapter, emu)

        # the same command, detached, while the batch still runs: nothing is submitted again
        again, stats = await _run(cfg, run, detach=True)
        assert all(isinstance(p, BatchPending) for p in again), again
        assert store.creates == (2 if case.lost else 1), case.id
        assert max(store.submitted.values()) == (2 if case.lost else 1)
        if damaged:  # set aside under a name no loader reads: the bytes are kept, nothing deleted
            [kept] = [p for p in (run / case.folder).rglob(f"*{DAMAGED_MARK}*")]
            assert kept.read_bytes() == damaged
            assert not any(p.read_bytes() == damaged for p in (run / case.folder).rglob("*.json"))

        # and to the end: the detached batch's answers, each request answered once
        replies, stats = await _run(cfg, run, sleep=_advancing(emu))
        assert all(not isinstance(r, VendorError) for r in replies), replies
        assert [r.output for r in replies] == [Verdict.model_validate(ANSWER)] * N
        assert _answered(emu) == N and store.creates == (2 if case.lost else 1)
        records = load_all(str(run))[adapter]
        collected = [r for r in records if r.phase == "collected"]
        assert len(collected) == 1 and {r.batch_id for r in replies} == {collected[0].batch_id}
        assert sorted(collected[0].requests) == sorted(request(i).request_hash for i in range(N))
        if case.lost:
            [lost] = [r for r in records if r.phase == "lost"]
            assert lost.batch_id == original.batch_id and "(404)" in lost.note and "sent again" in lost.note
            assert collected[0].batch_id != original.batch_id
            for reply in replies:  # each request's attempt in the lost batch: a `lost` row of its own
                [attempt] = reply.earlier
                assert (attempt.outcome, attempt.batch_id, attempt.cost_usd) == ("lost", original.batch_id, 0.0)
                assert f"batch {original.batch_id}" in attempt.reason and "paid there too" in attempt.reason
        else:
            assert collected[0].batch_id == original.batch_id
            assert all(not reply.earlier for reply in replies)
        if case.folder == "_batches" and not case.lost and case.id != "journal-folder-deleted":
            assert collected[0].note or any(r.note for r in records), records  # status says what happened

        # once more: the recovered journal answers everything, nothing is sent
        final, _ = await _run(cfg, run)
        assert all(not isinstance(r, VendorError) for r in final)
        assert _answered(emu) == N and store.creates == (2 if case.lost else 1)
        assert max(store.submitted.values()) == (2 if case.lost else 1)


async def test_a_batch_lost_at_the_vendor_twice_fails_the_call_instead_of_sending_it_a_third_time(tmp_path: Path) -> None:
    async with EmulatorSet(EmulatorConfig(batch=BatchSettings(completion_s=3600)),
                           responder=StaticResponder(ANSWER)) as emus:
        emu = emus.openai
        cfg = vendor_config("openai", emus.endpoints()["openai"])
        vendor = batching(cfg, str(tmp_path), label=RUN_LABEL)
        poll = vendor.api.poll

        async def vendor_forgets(batch_id: str) -> Any:
            batch = emu.batches.get(batch_id)
            assert batch is not None
            emu.batches.delete(batch)  # every batch is gone by its first poll
            return await poll(batch_id)

        vendor.api.poll = vendor_forgets  # type: ignore[method-assign]
        try:
            [result] = await vendor.complete_many([request(0)], Verdict)
        finally:
            await vendor.aclose()
        assert isinstance(result, VendorError) and "sent again once already" in str(result)
        assert emu.batches.creates == 2 and emu.batches.submitted[request(0).request_hash] == 2
        phases = sorted(r.phase for r in load_all(str(tmp_path))["openai"])
        assert phases == ["lost", "lost"]


def test_a_run_recognises_its_own_labels_and_no_other_run_or_vendor_entry_does() -> None:
    label = vendor_label(RUN_LABEL, "openai")
    assert is_own_label(label, RUN_LABEL, "openai")
    assert not is_own_label(label, RUN_LABEL + "x", "openai") and not is_own_label(label, RUN_LABEL, "xai")
    assert not is_own_label(label[:16] + "0" * 16, RUN_LABEL, "openai")


def test_a_journal_of_every_kind_of_bad_record_loads_naming_each_file_and_reason(tmp_path: Path) -> None:
    folder = tmp_path / "_batches" / "openai"
    folder.mkdir(parents=True)
    good = BatchRecord(vendor="openai", model="m", label="a" * 32, batch_id="batch_1", phase="submitted",
                       requests=["h" * 64])
    (folder / good.file_name).write_text(good.model_dump_json())
    bad = {
        "0000000000001-" + "b" * 32 + ".json": b"",
        "0000000000002-" + "c" * 32 + ".json": good.model_dump_json().encode()[:40],
        "0000000000003-" + "d" * 32 + ".json": b'{"vendor": "openai"}',
        "0000000000004-" + "e" * 32 + ".json": good.model_copy(update={"vendor": "xai"}).model_dump_json().encode(),
        "0000000000005-" + "f" * 32 + ".json": good.model_copy(update={"batch_id": ""}).model_dump_json().encode(),
    }
    for name, data in bad.items():
        (folder / name).write_bytes(data)
    journal = BatchJournal.load(str(tmp_path), "openai")
    assert journal.by_batch_id("batch_1") is not None
    reasons = {Path(d.uri).name: d.reason for d in journal.damaged}
    assert set(reasons) == set(bad)
    assert "empty file" in reasons["0000000000001-" + "b" * 32 + ".json"]
    assert "truncated or not JSON" in reasons["0000000000002-" + "c" * 32 + ".json"]
    assert "label: Field required" in reasons["0000000000003-" + "d" * 32 + ".json"]
    assert "'xai' in the folder of 'openai'" in reasons["0000000000004-" + "e" * 32 + ".json"]
    assert "without a vendor batch id" in reasons["0000000000005-" + "f" * 32 + ".json"]
    # each set aside, its bytes kept; a `damaged` record in its place until its batch is looked up
    for name, data in bad.items():
        [kept] = folder.glob(name + DAMAGED_MARK + "*")
        assert kept.read_bytes() == data
    assert sorted(r.label for r in journal.to_look_up()) == sorted(n[14:46] for n in bad)
    again = BatchJournal.load(str(tmp_path), "openai")  # read back: nothing damaged any more, still to look up
    assert not again.damaged and len(again.to_look_up()) == len(bad)


def test_every_journal_case_is_listed_in_docs_reliability_md() -> None:
    listed = (REPO / "docs" / "RELIABILITY.md").read_text(encoding="utf-8")
    assert [c.id for c in CASES if f"`{c.id}`" not in listed] == []


def test_a_run_counts_as_run_before_only_with_an_attempt_record_other_than_the_current_claim(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"created_at": 1_700_000_000.0}))
    attempts = tmp_path / "_attempts"
    attempts.mkdir()
    assert run_history(str(tmp_path)) == (1_700_000_000.0, False)  # a new run
    (attempts / "attempt-0001.json").write_text(json.dumps({"attempt": 1, "status": "running"}))
    assert run_history(str(tmp_path))[1] is False  # this attempt's own claim
    (attempts / "attempt-0001.json").write_text(json.dumps({"attempt": 1, "graded": 0}))
    assert run_history(str(tmp_path))[1] is True  # an earlier attempt's summary
    (attempts / "attempt-0001.json").write_text(json.dumps({"attempt": 1, "status": "running"}))
    (attempts / "attempt-0002.json").write_text(json.dumps({"attempt": 2, "status": "running"}))
    assert run_history(str(tmp_path))[1] is True  # a killed attempt's claim, then this one's
