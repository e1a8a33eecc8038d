"""Truncations on an emulated lab run: no verdict is lost to the output cap, every truncated
attempt is a paid row of its own, and the estimate calibrated on the run counts the retries and
stays within 5 % of what the run paid. The OpenAI emulator counts reasoning inside
`max_output_tokens` (as OpenAI does); here the judge's medium effort reasons more than the
emulator's default, so about one call in ten stops at its sized cap."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from doubles.emulators import EmulatorConfig, FixedLatency
from doubles.emulators._set import EmulatorSet
from doubles.emulators.ground_truth import ground_truth_responder
from doubles.emulators.serve import point_at_emulators
from doubles.synth.ground_truth import load_ground_truth
from doubles.synth.lab import generate_lab
from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.cost.estimate import OutputModel, estimate
from evalcore.grading.calls import truncation_rates
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.storage.store import read_table, write_json, write_shard
from evalcore.submissions.loader import load_submissions
from evalcore.vendors.registry import create_vendor

REASONING = {"medium": {"median": 3000, "sigma": 0.3}}
"""P(reasoning > the rubric's 4,352-token cap) ~ 11 %; above its 8,704-token retry cap ~ 0.02 %."""


@pytest.fixture(scope="module")
def truncating_lab(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("lab")
    generate_lab(root, tasks=1, seed=21, scale=0.3)
    gt = load_ground_truth(root / "ground_truth.json")
    tasks = load_benchmark(str(root)).task_map()
    subs = load_submissions(str(root / "submissions"), tasks).submissions
    owner = {d.text: (s.system, s.task_id) for s in subs for d in s.deliverables.values() if not d.missing}

    async def run() -> tuple[list[GradeResult], Any]:
        emu_cfg = EmulatorConfig.model_validate({"latency": FixedLatency(0.02), "reasoning_tokens": REASONING})
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
    write_json(f"{run_uri}/run.json", {"run_id": "trunc"})
    write_shard(run_uri, "part-000000-all", {
        "submissions": [r.submission for r in results],
        "verdicts": [v for r in results for v in r.verdicts],
        "flags": [f for r in results for f in r.flags],
        "calls": [c for r in results for c in r.calls],
    })
    return {"tasks": tasks, "subs": subs, "results": results, "cfg": cfg, "run": run_uri}


def test_no_verdict_is_lost_to_the_cap_each_truncated_attempt_retried_once_at_a_larger_cap(truncating_lab) -> None:
    results = truncating_lab["results"]
    calls = [c for r in results for c in r.calls]
    truncated = [c for c in calls if c.outcome == "truncated"]
    assert truncated, "the run should truncate some calls"
    answered = {(c.grading_id, c.request_hash): c for c in calls if c.outcome == "ok"}
    for t in truncated:
        retry = answered[(t.grading_id, t.request_hash)]
        assert t.max_output_tokens is not None and retry.max_output_tokens == 2 * t.max_output_tokens
        assert t.cost_usd > 0 and t.output_tokens == t.max_output_tokens
    assert all(v.verdict != "abstain" for r in results for v in r.verdicts)
    assert all(r.submission.status == "complete" for r in results)


def test_the_truncation_rate_is_measured_per_vendor_and_purpose_from_the_calls_table(truncating_lab) -> None:
    calls = [c for r in truncating_lab["results"] for c in r.calls]
    rates = {(t.vendor, t.purpose): t for t in truncation_rates(read_table(truncating_lab["run"], "calls"))}
    cut = Counter((c.vendor, c.purpose) for c in calls if c.outcome == "truncated")
    sent = Counter((c.vendor, c.purpose) for c in calls if c.outcome != "truncated" and c.reused_from is None)
    for key, t in rates.items():
        assert (t.truncated, t.calls) == (cut[key], sent[key])
        assert t.rate == pytest.approx(cut[key] / sent[key])
    assert 0.03 < rates[("openai", "rubric")].rate < 0.3
    assert rates[("xai", "rubric")].truncated == 0  # xAI's emulator does not count reasoning in its cap


def test_calibrated_on_the_run_the_estimate_counts_the_retries_and_is_within_5_percent_of_what_it_paid(
    truncating_lab,
) -> None:
    model = OutputModel.from_run(truncating_lab["run"])
    assert model.truncation_rate["openai"]["rubric"] > 0
    results = truncating_lab["results"]
    est = estimate(truncating_lab["tasks"], truncating_lab["subs"], truncating_lab["cfg"], model)
    paid = sum(c.cost_usd for r in results for c in r.calls)
    assert est.cost_usd["online"] == pytest.approx(paid, rel=0.05)
    rows = sum(len(r.calls) for r in results)  # truncated attempts are rows: calls the vendor counted
    assert sum(v.calls for v in est.vendors) == pytest.approx(rows, rel=0.01)
    without = model.model_copy(update={"truncation_rate": {}})
    assert estimate(truncating_lab["tasks"], truncating_lab["subs"], truncating_lab["cfg"], without).cost_usd[
        "online"] < est.cost_usd["online"]
