"""A batch journal deleted after `--detach`, end to end on a real local Ray cluster with the real SDKs
and the emulated batch APIs: the next run finds the detached batches in the vendors' batch lists,
collects them and grades everything, and no request is submitted twice. On the small sample
(`small_sample` in `tests/jobs/conftest.py`, 8 submissions): finding the batches again is the same
for 8 submissions as for 32."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from doubles.emulators import BatchSettings, EmulatorConfig, OfflineResponder
from doubles.emulators._set import start_in_thread
from evalcore.storage.store import read_table
from evalcore.vendors.batch.journal import load_all
from tests.jobs.conftest import SMALL_SUBMISSIONS
from tests.jobs.sweep.test_batch_sweep import _config, _sweep

pytestmark = [pytest.mark.ray]


def test_a_journal_folder_deleted_after_detach_is_rebuilt_from_the_vendors_and_nothing_is_paid_twice(
    ray_local, small_sample, tmp_path
) -> None:
    slow = EmulatorConfig(batch=BatchSettings(completion_s=86_000))  # nothing ends until the test says so
    out = str(tmp_path / "runs")
    with start_in_thread(slow, responder=OfflineResponder()) as emus:
        cfg = _config(emus, batch=True)
        first = _sweep(cfg, small_sample, out, "rebuilt", detach=True)
        assert first.awaiting_batches == SMALL_SUBMISSIONS
        detached = {r.batch_id: r for rs in load_all(first.run_uri).values() for r in rs if r.live}
        assert {r.vendor for r in detached.values()} == {"openai", "xai", "anthropic"}
        shutil.rmtree(Path(first.run_uri) / "_batches")  # the tester's `rm -rf <run>/_batches`

        for store in emus.batch_stores().values():
            store.settings.completion_s = 0.0
        second = _sweep(cfg, small_sample, out, "rebuilt")
        assert second.complete == SMALL_SUBMISSIONS and not second.failed_shards
        for vendor, store in emus.batch_stores().items():
            assert max(store.submitted.values()) == 1, vendor  # no request submitted (paid) twice
    journal = {r.batch_id: r for rs in load_all(first.run_uri).values() for r in rs}
    for batch_id, before in detached.items():  # each detached batch journalled again and collected
        again = journal[batch_id]
        assert again.phase == "collected" and sorted(again.requests) == sorted(before.requests)
        assert "found" in again.note
    calls = read_table(first.run_uri, "calls", columns=["request_hash", "batch_id", "outcome"]).to_pylist()
    waited = {c["request_hash"] for c in calls if c["outcome"] != "ok"}  # the detach pass's rows: awaiting
    answered = {c["request_hash"]: c["batch_id"] for c in calls if c["outcome"] == "ok"}
    assert waited and waited <= set(answered)
    assert {answered[h] for h in waited} == set(detached)  # answered by the detached batches, found again
