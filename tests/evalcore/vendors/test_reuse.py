"""Never paying twice: stored calls are served for free, identical calls in flight share one."""

from __future__ import annotations

from evalcore.config.load import load_config
from evalcore.emulators import OfflineResponder, OpenAIEmulator
from evalcore.emulators.serve import point_at_emulators
from evalcore.prompts import new_boundary, render_rubric
from evalcore.schema import Criterion, Deliverable, RubricAnswer
from evalcore.vendors.protocol import JudgeReply
from evalcore.vendors.registry import create_vendor
from evalcore.vendors.reuse import ReusingVendor


def _request(cfg, text: str = "The price is $1,250,000."):
    crit = Criterion(id="C-001", title="Price", match_criteria="PASS if the memo states $1,250,000.")
    rendered = render_rubric(task_id="a/t", instructions="Summarise.", criterion=crit,
                             deliverables=[Deliverable(name="memo", text=text)], boundary=new_boundary())
    return rendered.request_for(cfg)


async def test_identical_calls_in_flight_share_one_paid_request_and_later_ones_are_free() -> None:
    async with OpenAIEmulator(responder=OfflineResponder()) as emu:
        cfg = point_at_emulators(load_config(vendors="real"), {"openai": emu.base_url, "anthropic": "x", "xai": "x"})
        judge = cfg.judges[0]
        stored: dict[str, tuple[str, str]] = {}
        vendor = ReusingVendor(create_vendor(judge), stored, run_id="run-a")
        try:
            first = await vendor.complete_many([_request(judge)] * 3, RubricAnswer)  # same hash, 3 times at once
            again = await vendor.complete(_request(judge), RubricAnswer)  # a new boundary, the same request hash
        finally:
            await vendor.aclose()
        assert len(emu.requests) == 1
    paid = [r for r in first if not isinstance(r, Exception) and r.reused_from is None]
    assert len(paid) == 1 and paid[0].cost_usd > 0
    assert again.reused_from == "run-a" and again.cost_usd == 0 and again.attempts == 0
    assert again.output == paid[0].output


async def test_a_call_stored_by_another_run_is_answered_without_any_request() -> None:
    cfg = load_config(vendors="offline")
    judge = cfg.judges[0]
    request = _request(judge)
    stored = {request.request_hash: ("run-old", RubricAnswer(verdict="fail", reasoning="stored").model_dump_json())}
    vendor = ReusingVendor(create_vendor(judge), stored, run_id="run-new")
    reply = await vendor.complete(request, RubricAnswer)
    assert reply.reused_from == "run-old" and reply.output.reasoning == "stored" and vendor.reused == 1


async def test_when_the_shared_call_fails_each_waiter_sends_its_own_request() -> None:
    from evalcore.emulators import AuthError, EmulatorConfig
    from evalcore.errors import VendorError

    async with OpenAIEmulator(EmulatorConfig(script=[AuthError()]), responder=OfflineResponder()) as emu:
        cfg = point_at_emulators(load_config(vendors="real"), {"openai": emu.base_url, "anthropic": "x", "xai": "x"})
        judge = cfg.judges[0]
        vendor = ReusingVendor(create_vendor(judge), {}, run_id="run-a")
        try:
            results = await vendor.complete_many([_request(judge)] * 2, RubricAnswer)
        finally:
            await vendor.aclose()
        assert len(emu.requests) == 2  # the owner's failed request, then the waiter's own
    errors = [r for r in results if isinstance(r, VendorError)]
    assert len(errors) == 1 and errors[0].attempts == 1  # fatal: the owner's call is not retried
    assert sum(1 for r in results if not isinstance(r, VendorError)) == 1


def test_the_request_hash_covers_the_answer_schema() -> None:
    import dataclasses

    from pydantic import BaseModel

    class RubricAnswerV2(BaseModel):
        verdict: str
        reasoning: str
        confidence: float

    judge = load_config(vendors="offline").judges[0]
    crit = Criterion(id="C-001", title="Price", match_criteria="PASS if the memo states $1,250,000.")
    rendered = render_rubric(task_id="a/t", instructions="Summarise.", criterion=crit,
                             deliverables=[Deliverable(name="memo", text="x")], boundary=new_boundary())
    changed = dataclasses.replace(rendered, schema=RubricAnswerV2)
    assert rendered.request_for(judge).request_hash != changed.request_for(judge).request_hash


async def test_a_stored_answer_that_no_longer_validates_is_paid_again_instead_of_raising() -> None:
    async with OpenAIEmulator(responder=OfflineResponder()) as emu:
        cfg = point_at_emulators(load_config(vendors="real"), {"openai": emu.base_url, "anthropic": "x", "xai": "x"})
        judge = cfg.judges[0]
        request = _request(judge)
        stored = {request.request_hash: ("run-old", '{"verdict": "maybe", "reasoning": "an older answer shape"}')}
        vendor = ReusingVendor(create_vendor(judge), stored, run_id="run-new")
        try:
            [reply] = await vendor.complete_many([request], RubricAnswer)
        finally:
            await vendor.aclose()
        assert len(emu.requests) == 1  # paid again
    assert isinstance(reply, JudgeReply) and reply.reused_from is None and reply.cost_usd > 0
    assert vendor.stale == 1 and vendor.reused == 0
    assert stored[request.request_hash][0] == "run-new"  # the fresh answer replaced the stale one
