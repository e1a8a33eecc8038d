"""A sweep with `--max-cost` that stays under its cap finishes like any other (was: an `ActorDiedError`
traceback and exit 1 once every shard was written: the end of the sweep asked the cost ledger
whether it had capped after the ledger was stopped with the vendor actors).

The capped case is `tests/jobs/sweep/test_sweep_cost_cap.py`. Real parts: a local Ray cluster, the real
SDKs against the emulators, the small sample.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
import ray
from rich.console import Console

from doubles.emulators import OfflineResponder
from doubles.emulators._set import start_in_thread
from evalcore.storage import fs
from evalcore.storage.run_folder import SUCCESS
from jobs.sweep import driver as sweep_module
from jobs.sweep.driver import run_sweep
from jobs.sweep.options import SweepOptions
from tests.jobs.conftest import emulated_config

pytestmark = [pytest.mark.ray]


def _stop_and_wait_for_the_ledger(stop: Callable[..., None]) -> Callable[..., None]:
    """`stop_actors`, then wait until the stopped ledger is really gone (`ray.kill` returns before
    the actor dies): what a busy machine does anyway, here every time."""

    def stop_actors(actors: Any, ledger: Any, *, wait: bool) -> None:
        stop(actors, ledger, wait=wait)
        while ledger is not None:
            try:
                ray.get(ledger.state.remote(), timeout=120)
            except ray.exceptions.RayActorError:
                return

    return stop_actors


def test_a_sweep_that_stays_under_its_cost_cap_finishes_and_says_it_was_not_capped(
    ray_local, small_sample, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(sweep_module, "stop_actors", _stop_and_wait_for_the_ledger(sweep_module.stop_actors))
    with start_in_thread(responder=OfflineResponder()) as emus:
        opts = SweepOptions(benchmark=str(small_sample), submissions=str(small_sample / "submissions"),
                            output=str(tmp_path / "runs"), config=emulated_config(emus.endpoints), vendors="emulated",
                            run_id="under-cap", progress=False, shard_size=4, max_in_flight=2, max_cost_usd=1000.0)
        summary = run_sweep(opts, Console(file=io.StringIO()))
    assert summary.complete == 8 and not summary.cost_capped and summary.cost_message is None
    assert 0 < summary.cost_usd < 1000.0
    assert fs.exists(fs.join(summary.run_uri, SUCCESS))
