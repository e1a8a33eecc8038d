"""`estimate` builds the requests a grading sends without sending them: it counts the same calls and
input tokens, predicts the cached share by the vendors' caching rules, and, calibrated on a run,
prices it within a few percent of what the run paid."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.config.models import Price, TribunalConfig
from evalcore.emulators import EmulatorConfig, FixedLatency
from evalcore.emulators._set import EmulatorSet
from evalcore.emulators.ground_truth import ground_truth_responder
from evalcore.emulators.serve import point_at_emulators
from evalcore.grading.estimate import PRICINGS, OutputModel, estimate
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.storage.store import write_json, write_shard
from evalcore.submissions.loader import load_submissions
from evalcore.synth.ground_truth import load_ground_truth
from evalcore.synth.lab import generate_lab
from evalcore.vendors.registry import create_vendor


@pytest.fixture(scope="module")
def graded_lab(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("lab")
    generate_lab(root, tasks=1, seed=21, scale=0.3)
    gt = load_ground_truth(root / "ground_truth.json")
    tasks = load_benchmark(str(root)).task_map()
    subs = load_submissions(str(root / "submissions"), tasks).submissions
    owner = {d.text: (s.system, s.task_id) for s in subs for d in s.deliverables.values() if not d.missing}

    async def run() -> tuple[list[GradeResult], Any]:
        emu_cfg = EmulatorConfig(latency=FixedLatency(0.02))
        async with EmulatorSet(emu_cfg, responder=ground_truth_responder(gt, owner)) as emus:
            cfg = point_at_emulators(load_config(vendors="real"), emus.endpoints())
            vendors = {v.name: create_vendor(v) for v in cfg.vendors()}
            try:
                results = await asyncio.gather(*(grade_submission(tasks[s.task_id], s, cfg, vendors) for s in subs))
            finally:
                for v in vendors.values():
                    await v.aclose()
            return list(results), cfg

    results, cfg = asyncio.run(run())
    run_uri = str(root / "run")
    write_json(f"{run_uri}/run.json", {"run_id": "est"})
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
                                                             output=cfg.price.output / 2))
    est = estimate(graded_lab["tasks"], graded_lab["subs"], graded_lab["cfg"])
    assert est.cost_usd["half"] == pytest.approx(est.cost_usd["online"] / 2)


def batch_mode(cfg: TribunalConfig) -> TribunalConfig:
    """What `tribunal sweep --batch` runs: batch mode on, cache warming off (jobs.batch.with_batch)."""
    return cfg.model_copy(update={
        "batch": cfg.batch.model_copy(update={"enabled": True}),
        "judges": [j.model_copy(update={"warm_prompt_cache": False}) for j in cfg.judges],
        "auditor": cfg.auditor.model_copy(update={"warm_prompt_cache": False}),
    })


def test_batch_mode_is_priced_at_batch_prices_with_the_cold_cache_share_of_warming_off(graded_lab) -> None:
    tasks, subs, cfg = graded_lab["tasks"], graded_lab["subs"], graded_lab["cfg"]
    batch_cfg = batch_mode(cfg)
    cold_cfg = cfg.model_copy(update={"judges": [j.model_copy(update={"warm_prompt_cache": False})
                                                 for j in cfg.judges]})
    batch = estimate(tasks, subs, batch_cfg)
    cold = estimate(tasks, subs, cold_cfg)
    warm = estimate(tasks, subs, cfg)
    assert batch.pricing == "batch" and warm.pricing == "online"
    assert set(batch.cost_usd) == {"batch"} and set(warm.cost_usd) == {"online"}
    assert not batch.warm and batch.cached_share == pytest.approx(cold.cached_share)
    assert batch.cached_share < warm.cached_share
    # every vendor's batch price is half its online price, so the same traffic costs half
    assert batch.cost_usd["batch"] == pytest.approx(cold.cost_usd["online"] / 2)
    assert batch.per_submission() > 0
    assert batch.per_submission() == pytest.approx(cold.per_submission() / 2)


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

