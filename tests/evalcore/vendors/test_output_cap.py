"""The output-cap rule (`evalcore.vendors.output_cap`): the cap fits the answer and the reasoning,
grows with the effort, never falls below the configured floor, and a retry's cap is larger."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from evalcore.config.load import load_config
from evalcore.config.models import VendorConfig
from evalcore.prompts import render_preflight
from evalcore.schema import DetectionAnswer, PreflightAnswer, RubricAnswer, VerificationAnswer
from evalcore.vendors.output_cap import (
    DEFAULT_EFFORT,
    OUTPUT_CEILING,
    REASONING_ALLOWANCE,
    answer_allowance,
    output_cap,
    reasoning_allowance,
    retry_cap,
)

SCHEMAS: list[type[BaseModel]] = [RubricAnswer, DetectionAnswer, VerificationAnswer, PreflightAnswer]
EFFORTS = list(REASONING_ALLOWANCE)


def _cfg(effort: str | None, floor: int) -> VendorConfig:
    return VendorConfig(adapter="openai", name="j", family="openai", model="m", reasoning_effort=effort,
                        max_output_tokens=floor)


@given(st.sampled_from(SCHEMAS), st.sampled_from([*EFFORTS, None]), st.integers(min_value=16, max_value=100_000))
def test_the_cap_holds_the_answer_and_the_efforts_reasoning_and_never_falls_below_the_floor(
    schema: type[BaseModel], effort: str | None, floor: int
) -> None:
    cap = output_cap(_cfg(effort, floor), schema)
    assert cap >= floor
    assert cap >= min(answer_allowance(schema) + reasoning_allowance(effort), OUTPUT_CEILING)
    assert cap == floor or cap % 256 == 0


@given(st.sampled_from(SCHEMAS), st.integers(min_value=16, max_value=100_000))
def test_the_cap_is_monotone_in_effort(schema: type[BaseModel], floor: int) -> None:
    caps = [output_cap(_cfg(effort, floor), schema) for effort in EFFORTS]
    assert caps == sorted(caps)


@given(st.sampled_from(SCHEMAS), st.sampled_from(EFFORTS), st.integers(min_value=16, max_value=60_000))
def test_the_cap_is_monotone_in_the_floor(schema: type[BaseModel], effort: str, floor: int) -> None:
    assert output_cap(_cfg(effort, floor), schema) <= output_cap(_cfg(effort, floor + 1), schema)


def test_no_effort_is_the_vendors_default_and_an_unknown_one_gets_the_most_room() -> None:
    assert reasoning_allowance(None) == REASONING_ALLOWANCE[DEFAULT_EFFORT]
    assert reasoning_allowance("ludicrous") == max(REASONING_ALLOWANCE.values())


def test_a_richer_schema_is_allowed_more_answer_than_a_one_field_one() -> None:
    assert answer_allowance(PreflightAnswer) < answer_allowance(RubricAnswer) < answer_allowance(VerificationAnswer)
    assert answer_allowance(VerificationAnswer) < answer_allowance(DetectionAnswer)


@given(st.integers(min_value=16, max_value=2 * OUTPUT_CEILING))
def test_a_retrys_cap_is_larger_up_to_the_ceiling_or_there_is_no_retry(cap: int) -> None:
    larger = retry_cap(cap)
    if cap >= OUTPUT_CEILING:
        assert larger is None
    else:
        assert larger is not None and cap < larger <= min(2 * cap, OUTPUT_CEILING)


def test_a_request_carries_the_rules_cap_for_its_vendor_and_schema() -> None:
    """One decision in one place: `request_for`, which grading and the estimate both bind prompts
    with, puts the rule's cap on the request (adapters, budget and cost cap read it from there)."""
    config = load_config()
    prompt = render_preflight()
    for cfg in config.vendors():
        assert prompt.request_for(cfg).max_output_tokens == output_cap(cfg, PreflightAnswer) >= cfg.max_output_tokens
    assert output_cap(config.auditor, DetectionAnswer) > config.auditor.max_output_tokens  # the floor is not enough
