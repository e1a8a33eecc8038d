"""The spending cap: a call is sent only if its worst case fits under the cap with everything
spent and reserved, the first refusal closes the ledger, and refused calls are abstentions of
kind cost_cap (never sent)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doubles.emulators import EmulatorConfig, OpenAIEmulator, StaticResponder
from evalcore.config.load import load_config
from evalcore.cost.cost_cap import CostLedger, LocalLedger, worst_case_usd
from evalcore.errors import ErrorKind, VendorError
from evalcore.schema import RubricAnswer
from evalcore.vendors.protocol import JudgeRequest
from evalcore.vendors.registry import create_vendor


@settings(deadline=None)  # no timed assertions: a loaded CI machine must not fail it
@given(
    cap=st.floats(0, 10),
    calls=st.lists(st.tuples(st.floats(0, 2), st.floats(0, 1)), max_size=40),
)
def test_spent_never_exceeds_the_cap_when_calls_cost_at_most_their_worst_case(cap, calls) -> None:
    ledger = CostLedger(cap)
    for worst, share in calls:
        [ok] = ledger.reserve([worst])
        if ok:
            ledger.settle(worst, worst * share)
        assert ledger.state.spent_usd + ledger.state.reserved_usd <= cap + 1e-9


def test_the_first_refusal_closes_the_ledger() -> None:
    ledger = CostLedger(1.0)
    assert ledger.reserve([0.4, 0.4, 0.4, 0.01]) == [True, True, False, False]
    ledger.settle(0.8, 0.1)
    assert ledger.reserve([0.01]) == [False]  # plenty left, but the run is stopping
    assert ledger.state.stopped and ledger.state.refused_calls == 3 and ledger.state.left_usd == 0.9


def test_the_worst_case_of_an_attempt_is_its_input_at_the_dearer_of_input_and_cache_write_and_the_full_output() -> None:
    cfg = load_config()
    anthropic, openai = cfg.judges[2], cfg.judges[0]  # 5 / 25 USD per M, writes 1.25x; 2.5 / 15, writes as input
    req = JudgeRequest(purpose="rubric", request_hash="h", system_prompt="s", shared_prefix="p",
                       varying_suffix="v", schema_name="RubricAnswer", estimated_input_tokens=1000,
                       max_output_tokens=2048)
    assert worst_case_usd(anthropic, req) == pytest.approx((1000 * 5.0 * 1.25 + 2048 * 25.0) / 1e6)
    assert worst_case_usd(openai, req) == pytest.approx((1000 * 2.5 + 2048 * 15.0) / 1e6)


async def test_an_adapter_with_a_spend_guard_sends_what_fits_and_refuses_the_rest_unsent(monkeypatch) -> None:
    monkeypatch.setenv("CAP_TEST_KEY", "k-not-a-secret")
    answer = {"verdict": "pass", "reasoning": "stated"}
    async with OpenAIEmulator(EmulatorConfig(), responder=StaticResponder(answer)) as emu:
        cfg = load_config().judges[0].model_copy(
            update={"endpoint": emu.base_url, "api_key_env": "CAP_TEST_KEY", "max_in_flight": 1}
        )
        reqs = [JudgeRequest(purpose="rubric", request_hash=f"h{i}", system_prompt="Judge.", shared_prefix="memo ",
                             varying_suffix=f"criterion {i}", schema_name="RubricAnswer", estimated_input_tokens=10,
                             max_output_tokens=cfg.max_output_tokens) for i in range(5)]
        worst = worst_case_usd(cfg, reqs[0])
        ledger = CostLedger(worst * 1.5)  # room for the first attempt's worst case, not for all five
        vendor = create_vendor(cfg)
        vendor.spend_guard = LocalLedger(ledger)  # type: ignore[attr-defined]
        try:
            replies = await vendor.complete_many(reqs, RubricAnswer)
        finally:
            await vendor.aclose()
        sent = len(emu.requests)
    refused = [r for r in replies if isinstance(r, VendorError)]
    paid = [r for r in replies if not isinstance(r, VendorError)]
    assert 1 <= sent == len(paid) < 5 and len(refused) == 5 - sent
    assert all(r.kind is ErrorKind.COST_CAP and r.attempts == 0 and "--max-cost" in str(r) for r in refused)
    assert ledger.state.spent_usd == sum(r.cost_usd for r in paid) <= ledger.state.cap_usd
    assert ledger.state.reserved_usd == 0
