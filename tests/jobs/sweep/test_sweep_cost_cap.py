"""`--max-cost`: a sweep stops before any call could cross the cap, says what it spent and what is
left, and the same command run again finishes the rest without paying any call twice.

On the small sample (`small_sample` in `tests/jobs/conftest.py`, 8 submissions: ~$1.75 online, ~$0.89
in batches, preflight included), in shards of two sent one at a time: the first shard's calls fit
under each cap whatever order they go in, the rest cannot, so every first run gets part of the way
and stops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest

from doubles.emulators import OfflineResponder
from doubles.emulators._set import start_in_thread
from evalcore.config.models import TribunalConfig
from evalcore.storage import fs
from evalcore.storage.run_folder import SUCCESS
from evalcore.storage.store import read_table
from evalcore.vendors.batch.journal import load_all
from jobs.sweep.driver import run_sweep
from jobs.sweep.options import SweepOptions
from jobs.sweep.prepare import with_batch
from tests.jobs.conftest import SMALL_SUBMISSIONS, emulated_config

pytestmark = [pytest.mark.ray]
CAP_ONLINE = 1.0  # the first shard (under $0.5 with the preflight) fits; three shards (over $1.2) never do
CAP_BATCH = 0.6
"""Room for the first shard's batches whatever order the vendors reserve in: with no reasoning,
three batches of 24 requests at worst $0.13 (OpenAI), $0.14 (xAI) and $0.25 (Anthropic); under the
~$0.68 estimate. The ledger refuses everything after its first refusal: at low effort Anthropic's
first batch alone ($0.76) was over a $0.75 cap, and a run where it reserved first sent no batch
at all (CI, by chance of the order)."""


@pytest.fixture(scope="module")
def emulators():
    with start_in_thread(responder=OfflineResponder()) as emus:
        yield emus


def _sweep(cfg: TribunalConfig, root: Path, output: str, max_cost: float | None) -> Any:
    opts = SweepOptions(
        benchmark=str(root), submissions=str(root / "submissions"), output=output, config=cfg,
        vendors="emulated", run_id="capped", progress=False, shard_size=2, max_in_flight=1, max_cost_usd=max_cost,
    )
    return run_sweep(opts)


def _graded_ok(calls):  # type: ignore[no-untyped-def]
    """Paid, successful grading calls: the preflight is sent again by every attempt on purpose (it
    must reach the vendor now) and has its own row each time, so it is left out here."""
    ok = pc.and_(pc.equal(calls.column("outcome"), "ok"), pc.is_null(calls.column("reused_from")))
    return pc.and_(ok, pc.not_equal(calls.column("purpose"), "preflight"))


def _paid(calls) -> set[str]:
    return set(calls.filter(_graded_ok(calls)).column("request_hash").to_pylist())


def test_a_capped_sweep_stops_under_the_cap_and_the_next_run_finishes_without_paying_twice(
    ray_local, emulators, small_sample, tmp_path
) -> None:
    base = emulated_config(emulators.endpoints)
    # a few calls on the wire per vendor, small output allowances: the in-flight worst cases stay
    # well under the cap, so the first run gets part of the way before stopping. The cap reserves
    # each call at its output cap, which the reasoning effort sizes (`evalcore.vendors.output_cap`:
    # medium reserves 4,352 tokens a call): no reasoning keeps the cap at the configured 600
    small = {"max_in_flight": 4, "max_output_tokens": 600, "reasoning_effort": "none"}
    cfg = base.model_copy(update={"judges": [j.model_copy(update=small) for j in base.judges],
                                  "auditor": base.auditor.model_copy(update={"max_in_flight": 2})})
    cap = CAP_ONLINE
    first = _sweep(cfg, small_sample, str(tmp_path), cap)
    run = first.run_uri
    calls = read_table(run, "calls")
    spent = pc.sum(calls.column("cost_usd")).as_py()
    assert first.cost_capped and spent <= cap
    assert first.estimated_cost_usd > cap  # grading all of them would have cost more
    assert first.complete > 0  # it got part of the way
    assert "cost cap reached" in first.cost_message and "left to grade" in first.cost_message
    assert not fs.exists(fs.join(run, SUCCESS))
    refused = pc.sum(pc.equal(calls.column("outcome"), "cost_cap")).as_py()
    assert refused > 0
    assert pc.sum(pc.equal(calls.filter(pc.equal(calls.column("outcome"), "cost_cap")).column("attempts"), 0)).as_py() == refused
    paid_first = _paid(calls)

    second = _sweep(cfg, small_sample, str(tmp_path), None)
    assert not second.cost_capped and fs.exists(fs.join(run, SUCCESS))
    subs = read_table(run, "submissions")
    latest: dict[str, str] = {}
    for sid, status, at in zip(subs.column("submission_id").to_pylist(), subs.column("status").to_pylist(),
                               subs.column("graded_at").to_pylist(), strict=True):
        if sid not in latest or at >= latest[sid][1]:
            latest[sid] = (status, at)  # type: ignore[assignment]
    assert len(latest) == SMALL_SUBMISSIONS and {s for s, _ in latest.values()} == {"complete"}
    all_calls = read_table(run, "calls")
    paid_second = _paid(all_calls) - paid_first
    hashes = all_calls.filter(_graded_ok(all_calls)).column("request_hash").to_pylist()
    assert len(hashes) == len(set(hashes)), "a call was paid twice"
    assert paid_second and not (paid_second & paid_first)


def test_a_capped_batch_sweep_submits_no_batch_that_could_cross_the_cap_and_the_next_run_finishes_it(
    ray_local, emulators, small_sample, tmp_path
) -> None:
    base = emulated_config(emulators.endpoints)
    small = {"max_output_tokens": 600, "reasoning_effort": "none"}  # each call reserved at 600 output tokens (above)
    cfg = with_batch(base.model_copy(update={"judges": [j.model_copy(update=small) for j in base.judges],
                                             "auditor": base.auditor.model_copy(update=small)}), True)
    cfg = cfg.model_copy(update={"batch": cfg.batch.model_copy(update={"flush_interval_s": 0.3,
                                                                        "poll_interval_s": 0.1})})
    created = {k: s.creates for k, s in emulators.batch_stores().items()}
    cap = CAP_BATCH
    first = _sweep(cfg, small_sample, str(tmp_path), cap)
    run = first.run_uri
    calls = read_table(run, "calls")
    spent = pc.sum(calls.column("cost_usd")).as_py()
    assert first.cost_capped and spent <= cap
    assert spent > 0 and sum(s.creates for s in emulators.batch_stores().values()) > sum(created.values())
    assert first.estimated_cost_usd > cap and "cost cap reached" in first.cost_message
    assert not fs.exists(fs.join(run, SUCCESS))
    refused = calls.filter(pc.equal(calls.column("outcome"), "cost_cap"))
    assert refused.num_rows > 0 and pc.all(pc.equal(refused.column("attempts"), 0)).as_py()
    submitted = {k: len(v) for k, v in load_all(run).items()}
    assert sum(submitted.values()) == sum(s.creates for s in emulators.batch_stores().values()) - sum(created.values())

    second = _sweep(cfg, small_sample, str(tmp_path), None)
    assert not second.cost_capped and fs.exists(fs.join(run, SUCCESS))
    assert second.complete + first.complete == SMALL_SUBMISSIONS
    all_calls = read_table(run, "calls")
    hashes = all_calls.filter(_graded_ok(all_calls)).column("request_hash").to_pylist()
    assert len(hashes) == len(set(hashes)), "a call was paid twice"
    records = [r for rs in load_all(run).values() for r in rs]
    in_batches = [h for r in records for h in r.requests]
    assert len(in_batches) == len(set(in_batches)), "a request was submitted in two batches"
