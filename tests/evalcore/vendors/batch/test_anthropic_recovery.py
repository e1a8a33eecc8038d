"""An Anthropic batch carries no label, so after journal damage it is found by what it does carry: the
custom ids of its requests, which Tribunal chose (the request hashes). Through the real anthropic
SDK against the emulated Message Batches API.

The case the creation-time heuristic got wrong: another batch of the same size that the journal
does not know (another run's, on the same account) was created around the same time. Picking by
size then found two candidates, gave up, declared the run's batch lost and paid for its requests
again (issue 43, "Paid twice after journal damage").
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from doubles.emulators import BatchSettings, EmulatorConfig, EmulatorSet, StaticResponder
from evalcore.errors import VendorError
from evalcore.vendors.batch.journal import load_all
from evalcore.vendors.batch.queue import BatchPending
from tests.evalcore.vendors.batch.test_batching import ANSWER, Verdict, batching, request, vendor_config

N = 3
RUN_LABEL = "run-anthropic-recovery"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIBUNAL_TEST_BATCH_KEY", "batch-key-0123456789")


def _advancing(emu: Any) -> Callable[[float], Awaitable[None]]:
    async def sleep(seconds: float) -> None:  # each poll interval is 15 minutes of the batch's clock
        emu.advance(900)
        await asyncio.sleep(0)

    return sleep


async def _run(cfg: Any, run: Path, first: int, *, label: str = RUN_LABEL, detach: bool = False,
               sleep: object = None) -> list[Any]:
    vendor = batching(cfg, str(run), detach=detach, sleep=sleep, label=label)
    try:
        return list(await vendor.complete_many([request(i) for i in range(first, first + N)], Verdict))
    finally:
        await vendor.aclose()


def _damage_batch_id(run: Path) -> str:
    [path] = (run / "_batches" / "anthropic").glob("*.json")
    record = json.loads(path.read_text())
    original = record["batch_id"]
    record["batch_id"] = original[:-6] + "000000"  # an id the vendor never gave
    path.write_text(json.dumps(record))
    return str(original)


@pytest.mark.parametrize("ended", [True, False], ids=["batches-ended", "batches-running"])
async def test_a_damaged_anthropic_batch_id_is_found_by_its_requests_custom_ids_and_nothing_is_paid_twice(
    tmp_path: Path, ended: bool
) -> None:
    run, other = tmp_path / "run", tmp_path / "other-run"
    for folder in (run, other):
        folder.mkdir()
        (folder / "run.json").write_text(json.dumps({"created_at": time.time() - 5}))
    async with EmulatorSet(EmulatorConfig(batch=BatchSettings(completion_s=3600)),
                           responder=StaticResponder(ANSWER)) as emus:
        emu: Any = emus.anthropic
        store = emu.batches
        cfg = vendor_config("anthropic", emus.endpoints()["anthropic"])
        assert all(isinstance(p, BatchPending) for p in await _run(cfg, run, 0, detach=True))
        # another run on the same account: a batch of as many requests, other ones, at the same time
        assert all(isinstance(p, BatchPending) for p in await _run(cfg, other, 100, label="another-run", detach=True))
        assert store.creates == 2
        original = _damage_batch_id(run)
        if ended:
            emu.advance(7200)  # both batches end: their results tell which requests each holds

        replies = await _run(cfg, run, 0, sleep=_advancing(emu))
        assert all(not isinstance(r, VendorError) for r in replies), replies
        assert [r.output for r in replies] == [Verdict.model_validate(ANSWER)] * N
        assert store.creates == 2, "a request of the run was paid for again"
        assert max(store.submitted.values()) == 1
        assert {r.batch_id for r in replies} == {original}
        records = load_all(str(run))["anthropic"]
        assert not [r for r in records if r.phase == "lost"], [r.note for r in records]
        [ours] = [r for r in records if r.batch_id == original]
        assert ours.phase == "collected" and sorted(ours.requests) == sorted(request(i).request_hash for i in range(N))
        notes = " ".join(r.note for r in records)
        assert ("found again by the custom ids of its requests" in notes if ended
                else "journalled unconfirmed and answer the run's requests they hold" in notes), notes
        # the other run's batch is never taken for this run's (a purge leaves it alone)
        [theirs] = [r.batch_id for r in load_all(str(other))["anthropic"]]
        assert all(r.confirmed is False for r in records if r.batch_id == theirs)
