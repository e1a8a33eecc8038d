"""What happened to a run's batches reaches the operator's console (issue 24, item 1): a batch lost
at the vendor and a journal record set aside are handled inside the vendor actors, whose log is not
forwarded to the driver (`log_to_driver` is off), so the sweep reads them back from the journal at
the end and prints each, in its summary too: the lost batch with its reason, the record set aside
as `file: reason`.

End to end on a real local Ray cluster, the real SDKs against the emulated batch APIs, on the small
sample (`tests/jobs/conftest.py`): a `--detach` pass, then one batch deleted at the vendor and
another's journal record overwritten with garbage, then the same sweep run to the end.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from doubles.emulators import BatchSettings, EmulatorConfig, OfflineResponder
from doubles.emulators._set import start_in_thread
from evalcore.config.models import TribunalConfig
from evalcore.vendors.batch.journal import BatchRecord
from jobs.display.sweep_summary import print_summary
from jobs.sweep.driver import run_sweep
from jobs.sweep.options import SweepOptions
from tests.jobs.sweep.test_batch_sweep import _config

pytestmark = [pytest.mark.ray]


def _sweep(cfg: TribunalConfig, root: Path, output: str, console: Console, **kw: Any) -> Any:
    opts = SweepOptions(benchmark=str(root), submissions=str(root / "submissions"), output=output, config=cfg,
                        vendors="emulated", run_id="console", progress=False, shard_size=8, max_in_flight=4, **kw)
    return run_sweep(opts, console)


def _first_record(run: Path, vendor: str) -> Path:
    return sorted((run / "_batches" / vendor).glob("*.json"))[0]


def test_a_lost_batch_and_a_record_set_aside_are_printed_with_their_reasons_at_the_end_and_in_the_summary(
    ray_local, small_sample, tmp_path
) -> None:
    slow = EmulatorConfig(batch=BatchSettings(completion_s=86_000))  # nothing ends until the test says so
    out = str(tmp_path / "runs")
    with start_in_thread(slow, responder=OfflineResponder()) as emus:
        cfg = _config(emus, batch=True)
        first = _sweep(cfg, small_sample, out, Console(file=io.StringIO()), detach=True)
        assert first.awaiting_batches == 8 and first.journal_events == []  # nothing happened to any batch
        run = Path(first.run_uri)

        lost_file = _first_record(run, "openai")
        lost = BatchRecord.model_validate_json(lost_file.read_bytes())
        store = emus.batch_stores()["openai"]
        store.delete(store.get(lost.batch_id))  # the vendor no longer has it, nor any batch with its label
        damaged_file = _first_record(run, "xai")
        damaged_file.write_bytes(b"\x8b\x00garbage\xff{")  # the tester's garbage record

        for s in emus.batch_stores().values():
            s.settings.completion_s = 0.0
        printed = io.StringIO()
        console = Console(file=printed, width=400)
        second = _sweep(cfg, small_sample, out, console)
        print_summary(second, console)
    assert second.complete == 8 and not second.failed_shards

    assert len(second.journal_events) == 2, second.journal_events
    lost_line = next(e for e in second.journal_events if " lost: " in e)
    assert lost_line.startswith(f"openai: batch {lost.batch_id} lost: ")
    assert "(404)" in lost_line and f"its {len(lost.requests)} request(s) are sent again" in lost_line
    aside_line = next(e for e in second.journal_events if "set aside" in e)
    assert aside_line.startswith(f"xai: journal record set aside: {damaged_file}: not a readable record (")
    assert "found again at the vendor by its label" in aside_line

    text = printed.getvalue()
    assert "2 batch journal event(s) in this command" in text
    assert f"  {lost_line}" in text and f"  {aside_line}" in text
    attempt = json.loads((run / "_attempts" / "attempt-0002.json").read_text())
    assert attempt["journal_events"] == second.journal_events  # kept in the attempt's summary
