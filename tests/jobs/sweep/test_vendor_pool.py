"""The sweep with a vendor entry over N actors: same rows and summary as one actor, per entry.

The multi-node limit test is `test_vendor_pool_multinode.py`; the split's arithmetic is tested in
`tests/evalcore/vendors/test_sharding.py`.
"""

from __future__ import annotations

import asyncio

import pytest

from evalcore.config.load import load_config
from evalcore.config.models import VendorMode
from evalcore.errors import ConfigError
from evalcore.storage.store import read_table
from jobs.sweep.actors import RemoteVendor
from jobs.sweep.driver import run_sweep
from jobs.sweep.identity import config_fingerprint
from jobs.sweep.options import SweepOptions
from jobs.sweep.vendor_pool import VendorPool, actor_name, add_up, pool_vendor
from tests.jobs.conftest import SMALL_SUBMISSIONS


def test_one_actor_keeps_its_name_and_is_talked_to_as_before() -> None:
    cfg = load_config(vendors="offline").judges[0]
    assert actor_name("run-x", "openai", 0, 1) == "tribunal:run-x:openai"
    assert actor_name("run-x", "openai", 2, 3) == "tribunal:run-x:openai:2of3"
    assert type(pool_vendor(VendorPool("openai", ("handle",)), cfg)) is RemoteVendor


def test_the_default_configuration_runs_one_actor_per_account_the_openai_judge_and_auditor_sharing_one() -> None:
    from evalcore.vendors.sharding import account_config, actor_count, group_by_account

    for mode in ("real", "offline", "emulated"):
        groups = group_by_account(load_config(vendors=mode).vendors())
        assert [actor_count(account_config(g)) for g in groups] == [1] * len(groups)
        shared = [[v.name for v in g] for g in groups if len(g) > 1]
        assert shared == ([] if mode == "offline" else [["openai", "auditor"]])  # offline entries have no account


def test_entries_of_one_account_share_their_actors_which_are_closed_once() -> None:
    from jobs.sweep.vendor_pool import handles

    shared = ("x", "y")
    pools = {"openai": VendorPool("openai", shared), "xai": VendorPool("xai", ("z",)),
             "auditor": VendorPool("auditor", shared)}
    assert list(handles(pools)) == ["x", "y", "z"]


def test_statistics_are_added_up_per_entry_over_its_actors() -> None:
    pools = {"a": VendorPool("a", ("x", "y", "z")), "b": VendorPool("b", ("w",))}
    stats = [{"requests": 2.0, "cost_usd": 0.5, "uptime_s": 3.0}, {"requests": 1.0, "cost_usd": 0.25, "uptime_s": 9.0},
             {"requests": 4.0, "cost_usd": 0.0, "uptime_s": 1.0}, {"requests": 5.0, "cost_usd": 1.0, "uptime_s": 2.0}]
    total = add_up(pools, stats)
    assert total["a"] == {"requests": 7.0, "cost_usd": 0.75, "uptime_s": 9.0, "actors": 3.0}
    assert total["b"] == stats[3]  # one actor: its statistics as they are


def test_the_number_of_actors_does_not_change_the_run() -> None:
    cfg = load_config(vendors="offline")
    spread = cfg.model_copy(update={"judges": [cfg.judges[0].model_copy(update={"actors": 4, "actor_calls_per_s": 9.0}),
                                               *cfg.judges[1:]]})
    assert config_fingerprint(cfg) == config_fingerprint(spread)


@pytest.mark.ray
def test_a_sweep_with_a_judge_over_three_actors_grades_everything_and_counts_its_calls_once(
    ray_local, small_sample, tmp_path
) -> None:
    cfg = load_config(vendors="offline")
    cfg = cfg.model_copy(update={"judges": [cfg.judges[0].model_copy(update={"actors": 3}), *cfg.judges[1:]]})
    opts = SweepOptions(benchmark=str(small_sample), submissions=str(small_sample / "submissions"),
                        output=str(tmp_path / "runs"), config=cfg, vendors=VendorMode.OFFLINE, run_id="pool",
                        progress=False, shard_size=4)
    summary = run_sweep(opts)
    assert summary.complete == SMALL_SUBMISSIONS and not summary.failed_shards
    judge = cfg.judges[0].name
    assert summary.vendor_stats[judge]["actors"] == 3
    calls = read_table(str(tmp_path / "runs" / "pool"), "calls").to_pylist()
    mine = [c for c in calls if c["vendor"] == judge]
    # every call of the entry has one row, and the summary counts each once over the three actors
    paid = sum(1 for c in mine if c["reused_from"] is None)
    assert summary.vendor_stats[judge]["paid_calls"] == paid > 0
    assert summary.paid_calls == sum(1 for c in calls if c["reused_from"] is None)


@pytest.mark.ray
def test_a_429_to_one_actor_pauses_every_actor_of_the_entry(ray_local, tmp_path) -> None:
    """A 429 says the account is exhausted: the entry's other actors empty and pause as the one that got it."""
    import ray

    from doubles.emulators import RateLimited
    from doubles.emulators._set import start_in_thread
    from doubles.emulators.responders import StaticResponder
    from doubles.emulators.serve import KEY_ENV
    from evalcore.config.models import RateLimits, VendorConfig
    from evalcore.schema import RubricAnswer
    from evalcore.vendors.protocol import JudgeRequest
    from evalcore.vendors.sharding import shard_of
    from jobs.sweep.vendor_pool import PooledVendor, start_pool, stats_refs

    with start_in_thread(responder=StaticResponder({"verdict": "pass", "reasoning": "ok"})) as emus:
        emus.push("openai", RateLimited(retry_after=0.2))
        cfg = VendorConfig(adapter="openai", name="openai", family="openai", model="m",
                           endpoint=emus.endpoints["openai"], api_key_env=KEY_ENV["openai"], actors=2,
                           limits=RateLimits(requests_per_minute=60_000, tokens_per_minute=10**9))
        pool = start_pool(cfg, "pool429", [str(tmp_path)])
        try:
            req = JudgeRequest(purpose="rubric", request_hash="one", system_prompt="s", shared_prefix="p",
                               varying_suffix="v", schema_name="RubricAnswer")
            [reply] = asyncio.run(PooledVendor(pool, cfg).complete_many([req], RubricAnswer))
            assert not isinstance(reply, Exception) and reply.rate_limited == 1
            stats = ray.get(stats_refs({"openai": pool}))
        finally:
            for h in pool.handles:
                ray.kill(h)
    hit = shard_of("one", 2)
    assert stats[hit]["rate_limited"] == 1 and stats[hit]["sibling_429s"] == 0
    assert stats[1 - hit]["sibling_429s"] == 1 and stats[1 - hit]["rate_limited"] == 0


def _stored_answers(folder: str, cfg: object, label: str, hashes: list[str]) -> str:
    """A run folder whose calls table answers each hash with `label` and the hash."""
    from evalcore.schema import CallRow, RubricAnswer
    from evalcore.storage.store import write_shard

    rows = [CallRow(run_id=label, grading_id="g", submission_id="s", system="s", task_id="t", request_hash=h,
                    vendor=cfg.name, family=cfg.family, model=cfg.model, purpose="rubric",  # type: ignore[attr-defined]
                    outcome="ok", response_json=RubricAnswer(verdict="pass", reasoning=f"{label}:{h}").model_dump_json())
            for h in hashes]
    write_shard(folder, "part-0", {"calls": rows})
    return folder


def _answer(pool: VendorPool, cfg: object, h: str) -> str:
    from evalcore.schema import RubricAnswer
    from evalcore.vendors.protocol import JudgeRequest

    req = JudgeRequest(purpose="rubric", request_hash=h, system_prompt="s", shared_prefix="p", varying_suffix=h,
                       schema_name="RubricAnswer")
    return asyncio.run(pool_vendor(pool, cfg).complete(req, RubricAnswer)).output.reasoning  # type: ignore[arg-type]


def test_a_finished_sweeps_closed_actor_refuses_calls_then_serves_the_drivers_next_sweep_with_its_stores_and_counters(
    ray_local: None, tmp_path
) -> None:
    import ray

    from jobs.sweep.startup import stop_actors
    from jobs.sweep.vendor_pool import parking, start_pools

    config = load_config(vendors=VendorMode.OFFLINE)
    config = config.model_copy(update={"judges": [config.judges[0].model_copy(update={"adapter": "zero"})],
                                       "auditor": config.auditor.model_copy(update={"adapter": "zero"})})
    cfg = config.judges[0]
    first = _stored_answers(str(tmp_path / "first"), cfg, "first", ["h"])
    second = _stored_answers(str(tmp_path / "second"), cfg, "second", ["h"])
    parking.clear()
    pools = start_pools(config, "reuse-a", [first])
    [handle] = pools[cfg.name].handles
    try:
        assert pools[cfg.name].sdks == ("zero",)
        assert _answer(pools[cfg.name], cfg, "h") == "first:h"
        stop_actors(pools, None, wait=True)
        assert parking.parked() == {("zero",): handle}  # closed and kept, not killed
        with pytest.raises(ConfigError, match="closed at the end of run reuse-a"):  # kept idle: it refuses calls
            _answer(pools[cfg.name], cfg, "h")
        again = start_pools(config, "reuse-b", [second])
        assert again[cfg.name].handles == (handle,) and parking.parked() == {}
        assert ray.get(handle.stats.remote(cfg.name), timeout=60)["requests"] == 0  # the last sweep's counters went with it
        assert _answer(again[cfg.name], cfg, "h") == "second:h"  # this sweep's stored calls, not the last one's
        stop_actors(again, None, wait=False)  # a cancelled sweep keeps none
        assert parking.parked() == {}
        with pytest.raises(ray.exceptions.RayActorError):
            ray.get(handle.stats.remote(cfg.name), timeout=60)
    finally:
        parking.clear()
        ray.kill(handle)


def test_only_a_single_actor_per_set_of_sdks_is_parked_and_the_rest_are_killed(ray_local: None) -> None:
    from jobs.sweep.vendor_pool import park, parking

    parking.clear()
    try:
        assert not park(VendorPool("openai", ("a", "b"), ("openai",)))  # an account over two actors
        assert not park(VendorPool("openai", ("a",), ()))  # a pool not started for reuse
        assert park(VendorPool("openai", ("a",), ("openai",)))
        assert not park(VendorPool("auditor", ("b",), ("openai",)))  # one is parked for these SDKs already
        assert parking.parked() == {("openai",): "a"}
    finally:
        parking.clear()


def test_a_parked_actor_no_sweep_takes_within_the_idle_limit_is_killed(ray_local: None, monkeypatch) -> None:
    import ray

    from jobs.sweep import vendor_pool
    from jobs.sweep.actors import VendorActor

    cfg = load_config(vendors=VendorMode.OFFLINE).judges[0].model_copy(update={"adapter": "zero"})
    handle = VendorActor.remote(cfg.model_dump(mode="json"), "idle", [])  # type: ignore[attr-defined]
    ray.get(handle.close.remote(), timeout=60)
    monkeypatch.setattr(vendor_pool, "PARK_IDLE_S", 0.2)
    vendor_pool.parking.clear()
    try:
        assert vendor_pool.park(VendorPool(cfg.name, (handle,), ("zero",)))
        [(_, timer)] = vendor_pool.parking.actors.values()
        timer.join(timeout=60)  # the timer has fired and killed it
        assert vendor_pool.parking.parked() == {}
        with pytest.raises(ray.exceptions.RayActorError):
            ray.get(handle.stats.remote(cfg.name), timeout=60)
    finally:
        vendor_pool.parking.clear()
        ray.kill(handle)
