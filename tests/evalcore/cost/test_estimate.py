"""`estimate` builds the requests a grading sends without sending them: it counts the same calls and
input tokens, predicts the cached share by the vendors' caching rules, and, calibrated on a run,
prices it within a few percent of what the run paid. In batch mode it expects the hits of a batch's
requests answered one after another (as the emulated batch APIs answer them), gives the cold bound
beside it, and a wall time from the batch completion window."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doubles.emulators import BatchSettings, EmulatorConfig, FixedLatency
from doubles.emulators._set import EmulatorSet
from doubles.emulators.ground_truth import ground_truth_responder
from doubles.emulators.serve import point_at_emulators
from doubles.synth.ground_truth import load_ground_truth
from doubles.synth.lab import generate_lab
from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.config.models import Price, TribunalConfig
from evalcore.cost.estimate import (
    BATCH_WINDOW_S,
    PRICINGS,
    OutputModel,
    combine,
    estimate,
    estimate_part,
    finish,
)
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.storage.store import write_json, write_shard
from evalcore.submissions.loader import load_submissions
from evalcore.vendors.batch.journal import BatchJournal
from evalcore.vendors.batch.queue import BatchingVendor
from evalcore.vendors.protocol import Vendor
from evalcore.vendors.registry import create_batch_api, create_vendor
from tests.evalcore.cost.lab_run import grade_lab

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample"


@pytest.fixture(scope="module")
def graded_lab(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("lab")
    generate_lab(root, tasks=1, seed=21, scale=0.3)
    return grade_lab(root, EmulatorConfig(latency=FixedLatency(0.02)), "est")


@pytest.fixture(scope="module")
def batch_graded_lab(graded_lab: dict[str, Any]) -> dict[str, Any]:
    """The same lab graded in batch mode: every call through the emulated batch APIs (real SDKs)."""
    root = graded_lab["root"]
    gt = load_ground_truth(root / "ground_truth.json")
    tasks, subs = graded_lab["tasks"], graded_lab["subs"]
    owner = {d.text: (s.system, s.task_id) for s in subs for d in s.deliverables.values() if not d.missing}
    run_uri = str(root / "batch-run")

    async def run() -> tuple[list[GradeResult], Any]:
        emu_cfg = EmulatorConfig(latency=FixedLatency(0.02), batch=BatchSettings(completion_s=0.0))
        async with EmulatorSet(emu_cfg, responder=ground_truth_responder(gt, owner)) as emus:
            cfg = batch_mode(point_at_emulators(load_config(vendors="real"), emus.endpoints()))
            cfg = cfg.model_copy(update={"batch": cfg.batch.model_copy(update={"flush_interval_s": 0.05,
                                                                                 "poll_interval_s": 0.05})})
            vendors: dict[str, Vendor] = {
                v.name: BatchingVendor(create_batch_api(v), BatchJournal.load(run_uri, v.name), cfg.batch,
                                       online=create_vendor(v))
                for v in cfg.vendors()
            }
            try:
                results = await asyncio.gather(*(grade_submission(tasks[s.task_id], s, cfg, vendors) for s in subs))
            finally:
                for v in vendors.values():
                    await v.aclose()
            return list(results), cfg

    results, cfg = asyncio.run(run())
    write_json(f"{run_uri}/run.json", {"run_id": "est-batch"})
    write_shard(run_uri, "part-000000-all", {
        "submissions": [r.submission for r in results],
        "verdicts": [v for r in results for v in r.verdicts],
        "flags": [f for r in results for f in r.flags],
        "calls": [c for r in results for c in r.calls],
    })
    return {"tasks": tasks, "subs": subs, "results": results, "cfg": cfg, "run": run_uri}


def test_the_estimate_counts_exactly_the_rubric_calls_and_their_input_tokens(graded_lab) -> None:
    est = estimate(graded_lab["tasks"], graded_lab["subs"], graded_lab["cfg"])
    calls = [c for r in graded_lab["results"] for c in r.calls]
    for v in est.vendors:
        if v.vendor == "auditor":
            continue
        mine = [c for c in calls if c.vendor == v.vendor and c.purpose == "rubric"]
        assert v.calls_by_purpose["rubric"] == len(mine)
        actual_in = sum(c.input_tokens for c in mine)
        assert v.input_tokens == pytest.approx(actual_in, rel=0.002)  # ±1 token of rounding per call
        actual_cached = sum(c.cached_input_tokens for c in mine)
        assert v.cached_input_tokens == pytest.approx(actual_cached, rel=0.002), v.vendor


def test_the_audit_is_counted_for_the_assumed_share_of_submissions(graded_lab) -> None:
    tasks, subs, cfg = graded_lab["tasks"], graded_lab["subs"], graded_lab["cfg"]
    every = estimate(tasks, subs, cfg, OutputModel(audited_share=1.0, verify_share=1.0))
    half = estimate(tasks, subs, cfg, OutputModel(audited_share=0.5, verify_share=0.5))
    none = estimate(tasks, subs, cfg, OutputModel(audited_share=0.0))
    auditor = {e: next(v for v in x.vendors if v.vendor == "auditor") for e, x in (("all", every), ("half", half),
                                                                                    ("none", none))}
    assert auditor["all"].calls_by_purpose == {"detect": len(subs), "verify": len(subs)}
    assert auditor["half"].calls_by_purpose == {"detect": len(subs) / 2, "verify": len(subs) / 4}
    assert auditor["none"].calls == 0
    assert every.cost_usd["online"] > half.cost_usd["online"] > none.cost_usd["online"] > 0


def test_calibrated_on_a_run_the_estimate_is_within_5_percent_of_what_it_paid(graded_lab) -> None:
    model = OutputModel.from_run(graded_lab["run"])
    results = graded_lab["results"]
    audited = sum(1 for r in results if r.submission.audited)
    assert model.audited_share == pytest.approx(audited / len(results))
    est = estimate(graded_lab["tasks"], graded_lab["subs"], graded_lab["cfg"], model)
    paid = sum(c.cost_usd for r in results for c in r.calls)
    assert est.cost_usd["online"] == pytest.approx(paid, rel=0.05)
    purposes = Counter(c.purpose for r in results for c in r.calls)
    assert sum(v.calls for v in est.vendors) == pytest.approx(sum(purposes.values()), rel=0.01)


def test_without_warming_a_submissions_criteria_all_miss_the_cache(graded_lab) -> None:
    cfg = graded_lab["cfg"]
    cold = cfg.model_copy(update={"judges": [j.model_copy(update={"warm_prompt_cache": False}) for j in cfg.judges]})
    warm = estimate(graded_lab["tasks"], graded_lab["subs"], cfg)
    est = estimate(graded_lab["tasks"], graded_lab["subs"], cold)
    assert not est.warm and warm.warm
    assert all(v.cached_input_tokens == 0 for v in est.vendors if v.vendor != "auditor")
    assert warm.cached_share > 0.5 > est.cached_share
    assert warm.cost_usd["online"] < est.cost_usd["online"]


def test_each_pricing_mode_with_a_price_gets_a_cost_column(graded_lab, monkeypatch) -> None:
    monkeypatch.setitem(PRICINGS, "half", lambda cfg: Price(input=cfg.price.input / 2,
                                                             cached_input=cfg.price.cached_input / 2,
                                                             output=cfg.price.output / 2,
                                                             cache_write=cfg.price.cache_write,
                                                             cache_write_1h=cfg.price.cache_write_1h))
    est = estimate(graded_lab["tasks"], graded_lab["subs"], graded_lab["cfg"])
    assert est.cost_usd["half"] == pytest.approx(est.cost_usd["online"] / 2)


def batch_mode(cfg: TribunalConfig) -> TribunalConfig:
    """What `tribunal sweep --batch` runs: batch mode on, cache warming off (jobs.per_run.status.with_batch)."""
    return cfg.model_copy(update={
        "batch": cfg.batch.model_copy(update={"enabled": True}),
        "judges": [j.model_copy(update={"warm_prompt_cache": False}) for j in cfg.judges],
        "auditor": cfg.auditor.model_copy(update={"warm_prompt_cache": False}),
    })


def warming_off(cfg: TribunalConfig) -> TribunalConfig:
    return cfg.model_copy(update={"judges": [j.model_copy(update={"warm_prompt_cache": False}) for j in cfg.judges]})


def test_batch_mode_expects_the_hits_of_requests_answered_in_turn_below_online_and_below_its_cold_bound(
    graded_lab,
) -> None:
    tasks, subs, cfg = graded_lab["tasks"], graded_lab["subs"], graded_lab["cfg"]
    batch = estimate(tasks, subs, batch_mode(cfg))
    warm = estimate(tasks, subs, cfg)
    cold_online = estimate(tasks, subs, warming_off(cfg))
    assert batch.pricing == "batch" and warm.pricing == "online" and not batch.warm
    assert set(batch.cost_usd) == set(batch.cost_usd_cold) == {"batch"} and set(warm.cost_usd) == {"online"}
    # a batch's requests are answered one after another: each reads what an earlier one wrote, at
    # least the prefix warming shares online (the lab's prefixes are long: the hits matter)
    for b, w in zip(batch.vendors, warm.vendors, strict=True):
        assert b.cached_input_tokens >= w.cached_input_tokens, b.vendor
    assert batch.cached_share > 0.5 > cold_online.cached_share
    assert batch.cost_usd["batch"] < warm.cost_usd["online"]
    assert batch.cost_usd["batch"] < 0.6 * batch.cost_usd_cold["batch"]
    # the cold bound: the same traffic with no cache hit at all, at half the online prices
    assert batch.cost_usd_cold["batch"] == pytest.approx(cold_online.cost_usd_cold["online"] / 2)
    assert cold_online.cost_usd_cold["online"] >= cold_online.cost_usd["online"]
    assert batch.per_submission() == pytest.approx(batch.cost_usd["batch"] / len(subs))


def test_on_the_sample_batch_mode_costs_less_than_online_and_no_more_than_its_cold_bound() -> None:
    tasks = load_benchmark(str(SAMPLE)).task_map()
    subs = load_submissions(str(SAMPLE / "submissions"), tasks).submissions
    cfg = load_config()
    online = estimate(tasks, subs, cfg, fast=True)
    batch = estimate(tasks, subs, batch_mode(cfg), fast=True)
    assert 0 < batch.cost_usd["batch"] <= batch.cost_usd_cold["batch"]
    assert batch.cost_usd["batch"] < online.cost_usd["online"]
    assert batch.cost_usd_cold["batch"] == pytest.approx(online.cost_usd_cold["online"] / 2)


def test_in_batch_mode_the_expected_cost_is_within_10_percent_of_what_an_emulated_batch_run_paid(
    batch_graded_lab,
) -> None:
    results, cfg = batch_graded_lab["results"], batch_graded_lab["cfg"]
    calls = [c for r in results for c in r.calls]
    assert calls and all(c.batch_id for c in calls)  # every call went through a batch
    model = OutputModel.from_run(batch_graded_lab["run"])
    est = estimate(batch_graded_lab["tasks"], batch_graded_lab["subs"], cfg, model)
    # the replay's hits are the emulated batches' hits, request for request: each call's first attempt.
    # A truncated attempt's retry (the emulators' reasoning stops ~1.5 % of calls at their cap, which
    # of them depends on the prompts' random fences) is the estimate's expected rate, not a replay.
    replay = estimate(batch_graded_lab["tasks"], batch_graded_lab["subs"], cfg,
                      model.model_copy(update={"truncation_rate": {}}))
    first: dict[tuple[str, str], Any] = {}
    for c in sorted(calls, key=lambda c: c.started_at):
        first.setdefault((c.grading_id, c.request_hash), c)
    for v in replay.vendors:
        if v.vendor == "auditor":
            continue
        mine = [c for c in first.values() if c.vendor == v.vendor and c.purpose == "rubric"]
        assert v.cached_input_tokens == pytest.approx(sum(c.cached_input_tokens for c in mine), rel=0.002), v.vendor
    paid = sum(c.cost_usd for c in calls)
    assert est.cost_usd["batch"] == pytest.approx(paid, rel=0.10)
    assert est.cost_usd_cold["batch"] > paid


def test_the_batch_wall_time_is_rounds_of_the_completion_window_not_the_rate_limits(graded_lab) -> None:
    tasks, subs, cfg = graded_lab["tasks"], graded_lab["subs"], batch_mode(graded_lab["cfg"])
    est = estimate(tasks, subs, cfg)
    w = est.batch_wall_time
    assert w is not None and est.min_wall_s is None and all(v.min_wall_s is None for v in est.vendors)
    assert w.stages == ["rubric", "detect", "verify"] and w.rounds == 3 and w.window_s == BATCH_WINDOW_S == 86_400
    per_round = cfg.batch.flush_interval_s + BATCH_WINDOW_S + cfg.batch.poll_interval_s
    assert w.upper_bound_s == pytest.approx(3 * per_round) and w.expected_s is None
    timed = estimate(tasks, subs, cfg, batch_completion_s=600.0, in_flight=(len(subs) + 1) // 2)
    assert timed.batch_wall_time is not None and timed.batch_wall_time.waves == 2
    assert timed.batch_wall_time.expected_s == pytest.approx(
        6 * (cfg.batch.flush_interval_s + 600.0 + cfg.batch.poll_interval_s / 2))
    unaudited = estimate(tasks, subs, cfg, OutputModel(audited_share=0.0))
    assert unaudited.batch_wall_time is not None and unaudited.batch_wall_time.stages == ["rubric"]
    online = estimate(tasks, subs, graded_lab["cfg"])
    assert online.batch_wall_time is None and (online.min_wall_s or 0) > 0


def test_an_explicit_batch_price_table_is_the_one_batch_mode_uses(graded_lab) -> None:
    tasks, subs, cfg = graded_lab["tasks"], graded_lab["subs"], batch_mode(graded_lab["cfg"])
    flat = Price(input=1.0, cached_input=1.0, output=1.0)
    judges = [j.model_copy(update={"price": j.price.model_copy(update={"batch": flat})}) for j in cfg.judges]
    auditor = cfg.auditor.model_copy(update={"price": cfg.auditor.price.model_copy(update={"batch": flat})})
    est = estimate(tasks, subs, cfg.model_copy(update={"judges": judges, "auditor": auditor}))
    tokens = sum(v.input_tokens + v.output_tokens for v in est.vendors)
    assert est.cost_usd["batch"] == pytest.approx(tokens / 1_000_000)


def test_the_wall_time_bound_follows_the_configured_limits(graded_lab) -> None:
    est = estimate(graded_lab["tasks"], graded_lab["subs"], graded_lab["cfg"])
    for v in est.vendors:
        cfg = next(c for c in graded_lab["cfg"].vendors() if c.name == v.vendor)
        by_requests = v.calls / (0.95 * cfg.limits.requests_per_minute / 60)
        by_tokens = (v.input_tokens + v.output_tokens) / (0.95 * cfg.limits.tokens_per_minute / 60)
        assert v.min_wall_s == pytest.approx(max(by_requests, by_tokens))
    assert est.min_wall_s == max(v.min_wall_s for v in est.vendors)



@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(0, 32), max_size=6), batch=st.booleans())
def test_an_estimate_priced_in_parts_and_combined_is_the_estimate_of_the_whole(
    sample_inputs: tuple[Any, Any, TribunalConfig], cuts: list[int], batch: bool
) -> None:
    """A sweep prices its pending submissions in chunks (`jobs.sweep.cost_watch`): however they are cut, the
    parts add up to the estimate of all of them, wall times included."""
    tasks, subs, cfg = sample_inputs
    if batch:
        cfg = batch_mode(cfg)
    whole = estimate(tasks, subs, cfg, fast=True)
    bounds = [0, *sorted(min(c, len(subs)) for c in cuts), len(subs)]
    parts = [estimate_part(tasks, subs[a:b], cfg, fast=True) for a, b in zip(bounds, bounds[1:], strict=False)]
    combined = finish(combine(parts), cfg)
    assert (combined.submissions, combined.too_long) == (whole.submissions, whole.too_long)
    assert combined.cost_usd == pytest.approx(whole.cost_usd)
    assert combined.cost_usd_cold == pytest.approx(whole.cost_usd_cold)
    assert combined.min_wall_s == pytest.approx(whole.min_wall_s)
    assert combined.batch_wall_time == whole.batch_wall_time
    for mine, theirs in zip(combined.vendors, whole.vendors, strict=True):
        assert mine.vendor == theirs.vendor
        for field in ("calls", "input_tokens", "cached_input_tokens", "output_tokens"):
            assert getattr(mine, field) == pytest.approx(getattr(theirs, field))
        assert mine.calls_by_purpose == pytest.approx(theirs.calls_by_purpose)


@pytest.fixture(scope="module")
def sample_inputs() -> tuple[Any, Any, TribunalConfig]:
    tasks = load_benchmark(str(SAMPLE)).task_map()
    return tasks, load_submissions(str(SAMPLE / "submissions"), tasks).submissions, load_config(vendors="emulated")
