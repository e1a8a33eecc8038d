"""Reasoning tokens are drawn per request from their effort's distribution, reproducibly, and count
inside the output cap where the vendor counts them (OpenAI, Anthropic with thinking), so a cap a
call usually fits is sometimes too small, at the rate the distribution says."""

from __future__ import annotations

import math
import statistics

import openai
from hypothesis import given, settings
from hypothesis import strategies as st

from doubles.emulators import EmulatedRequest, EmulatorConfig, OpenAIEmulator, StaticResponder
from doubles.emulators._config import ReasoningTokens
from doubles.emulators._engine import Engine

texts = st.text(max_size=200)


def request(user: str, effort: str = "medium", budget: int | None = None) -> EmulatedRequest:
    return EmulatedRequest(vendor="openai", api="responses", model="m", system="s", user=user,
                           reasoning_effort=effort, reasoning_budget=budget)


@settings(max_examples=200, deadline=None)
@given(user=texts, seed=st.integers(0, 10**6), median=st.integers(1, 50_000), sigma=st.floats(0, 2),
       cap=st.integers(1, 100_000), budget=st.none() | st.integers(1, 100_000))
def test_a_request_always_draws_the_same_count_within_the_cap_and_its_budget(
    user: str, seed: int, median: int, sigma: float, cap: int, budget: int | None
) -> None:
    config = EmulatorConfig(seed=seed, reasoning_tokens={"medium": ReasoningTokens(median=median, sigma=sigma, cap=cap)})
    first, second = Engine("openai", config, None, "r"), Engine("openai", config, None, "r")
    drawn = first.reasoning_tokens(request(user, budget=budget))
    assert drawn == second.reasoning_tokens(request(user, budget=budget))  # another emulator, same draw
    assert 0 <= drawn <= min(cap, budget if budget is not None else cap)
    if sigma == 0:
        assert drawn == min(median, cap, budget if budget is not None else cap)


@settings(max_examples=100, deadline=None)
@given(body=texts, boundaries=st.lists(st.text("0123456789abcdef", min_size=16, max_size=16), min_size=2, max_size=2))
def test_the_same_question_reasons_alike_in_every_grading_whatever_its_fence_boundary(
    body: str, boundaries: list[str]
) -> None:
    """Each grading fences its material with a new random boundary (`evalcore.prompts.new_boundary`);
    a draw keyed on it changed a run's truncations from one run of the same requests to the next."""
    from evalcore.prompts import fence

    engine = Engine("openai", EmulatorConfig(), None, "r")
    a, b = (engine.reasoning_tokens(request("Grade this.\n" + fence("deliverable", body, b))) for b in boundaries)
    assert a == b


def test_an_effort_without_a_distribution_or_a_zero_median_reasons_not_at_all() -> None:
    engine = Engine("openai", EmulatorConfig(), None, "r")
    assert engine.reasoning_tokens(request("x", effort="none")) == 0
    assert engine.reasoning_tokens(request("x", effort="unheard-of")) == 0


def test_the_default_medium_draws_have_the_documented_median_and_tail() -> None:
    """Median 512, sigma 0.6: a 1,898-token budget for reasoning (a 2,048 cap less a 150-token
    answer) is exceeded by P(Z > ln(1898/512)/0.6), about 1.5 % of calls."""
    engine = Engine("openai", EmulatorConfig(), None, "r")
    draws = [engine.reasoning_tokens(request(f"criterion {i}")) for i in range(20_000)]
    assert abs(statistics.median(draws) - 512) < 15
    expected = 0.5 * math.erfc(math.log(1898 / 512) / 0.6 / math.sqrt(2))
    assert abs(sum(d > 1898 for d in draws) / len(draws) - expected) < 0.004


async def test_openai_counts_reasoning_inside_max_output_tokens() -> None:
    """A cap the answer alone fits is not enough once the reasoning is counted: incomplete, with the
    cap's worth of output tokens billed (the old emulator compared the answer alone, then added 512)."""
    config = EmulatorConfig(reasoning_tokens={"high": 1000})
    async with OpenAIEmulator(config, responder=StaticResponder({"verdict": "pass"})) as emu:
        async with openai.AsyncOpenAI(api_key="k", base_url=emu.base_url, max_retries=0) as client:
            cut = await client.responses.create(model="m", input="x", reasoning={"effort": "high"},
                                                max_output_tokens=1004)
            whole = await client.responses.create(model="m", input="x", reasoning={"effort": "high"},
                                                  max_output_tokens=1100)
    assert (cut.status, cut.incomplete_details and cut.incomplete_details.reason) == ("incomplete", "max_output_tokens")
    assert cut.usage is not None and cut.usage.output_tokens == 1004
    assert whole.status == "completed" and whole.output_text == '{"verdict": "pass"}'
    assert whole.usage is not None and whole.usage.output_tokens_details.reasoning_tokens == 1000
