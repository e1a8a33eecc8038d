"""Truncations on an emulated lab run: no verdict is lost to the output cap, every truncated
attempt is a paid row of its own, and the estimate calibrated on the run counts the retries and
stays within 5 % of what the run paid. The OpenAI emulator counts reasoning inside
`max_output_tokens` (as OpenAI does); here the judge's medium effort reasons more than the
emulator's default, so about one call in ten stops at its sized cap."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from doubles.emulators import EmulatorConfig, FixedLatency
from doubles.synth.lab import generate_lab
from evalcore.cost.estimate import OutputModel, estimate
from evalcore.grading.calls import truncation_rates
from evalcore.storage.store import read_table
from tests.evalcore.cost.lab_run import grade_lab

REASONING = {"medium": {"median": 3000, "sigma": 0.3, "cap": 6000}}
"""P(reasoning > the rubric's 4,352-token cap) ~ 11 %; never above its 8,704-token retry cap (the
draw's cap): uncapped, ~0.02 % of calls would stop twice, a final bad output in ~8 % of runs (the
draw depends on the prompts' random fences), and this test would fail by chance."""


@pytest.fixture(scope="module")
def truncating_lab(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("lab")
    generate_lab(root, tasks=1, seed=21, scale=0.3)
    return grade_lab(root, EmulatorConfig.model_validate({"latency": FixedLatency(0.02), "reasoning_tokens": REASONING}), "trunc")


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
