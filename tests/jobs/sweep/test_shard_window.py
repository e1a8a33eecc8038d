"""The in-flight cap as a sweep shows it: in each vendor actor's statistics, and "cap-bound" in the
live progress while the cap, not the rate budget, holds calls back (`evalcore.vendors.in_flight`)."""

from __future__ import annotations

import asyncio

import pytest
from rich.console import Console

from jobs.display.progress import SweepProgress


def _detail(stats: dict[str, dict[str, float]]) -> str:
    progress = SweepProgress(Console(record=True, width=200), enabled=False, total=10)
    progress.update(1, stats, 0.0)
    return progress.line()


def test_the_progress_says_cap_bound_with_the_count_and_the_cap_only_while_the_cap_binds() -> None:
    base = {"paid_calls": 10.0, "rate_limited": 0.0, "in_flight": 512.0, "in_flight_cap": 512.0}
    assert "openai 0/s 429s=0 cap-bound 512/512" in _detail({"openai": {**base, "cap_bound": 1.0}})
    assert "cap-bound" not in _detail({"openai": {**base, "cap_bound": 0.0}})
    assert "cap-bound" not in _detail({"openai": {"paid_calls": 1.0}})  # statistics without the fields


@pytest.mark.ray
def test_a_vendor_actors_statistics_carry_its_in_flight_cap_from_its_budget_and_latency(ray_local, tmp_path) -> None:
    import ray

    from doubles.emulators._set import start_in_thread
    from doubles.emulators.responders import StaticResponder
    from doubles.emulators.serve import KEY_ENV
    from evalcore.config.models import RateLimits, VendorConfig
    from evalcore.schema import RubricAnswer
    from evalcore.vendors.protocol import JudgeRequest
    from jobs.sweep.vendor_pool import PooledVendor, start_pool, stats_refs

    with start_in_thread(responder=StaticResponder({"verdict": "pass", "reasoning": "ok"})) as emus:
        cfg = VendorConfig(adapter="openai", name="openai", family="openai", model="m", max_in_flight=5_000,
                           endpoint=emus.endpoints["openai"], api_key_env=KEY_ENV["openai"],
                           limits=RateLimits(requests_per_minute=600, tokens_per_minute=10**9))
        pool = start_pool(cfg, "inflight", [str(tmp_path)], n=1)
        try:
            req = JudgeRequest(purpose="rubric", request_hash="one", system_prompt="s", shared_prefix="p",
                               varying_suffix="v", schema_name="RubricAnswer")
            [reply] = asyncio.run(PooledVendor(pool, cfg).complete_many([req], RubricAnswer))
            assert not isinstance(reply, Exception)
            [stats] = ray.get(stats_refs({"openai": pool}))
        finally:
            for h in pool.handles:
                ray.kill(h)
    # 10 calls/s x (the 30 s prior, moved 5 % towards one quick answer) x 2: 570-600, far below the bound
    assert 560 <= stats["in_flight_cap"] <= 600 and stats["in_flight_bound"] == 5_000
    assert (stats["in_flight"], stats["cap_waiting"], stats["cap_bound"], stats["cap_waits"]) == (0, 0, 0, 0)
