"""The offline vendor: in-process, deterministic, free, and every reply labelled offline."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from evalcore.config.models import VendorConfig
from evalcore.errors import ErrorKind, VendorError
from evalcore.prompts import render_preflight, render_rubric
from evalcore.schema import Criterion, Deliverable, PreflightAnswer, RubricAnswer
from evalcore.vendors.protocol import JudgeRequest
from evalcore.vendors.registry import create_vendor

CFG = VendorConfig.model_validate(
    dict(
        adapter="offline",
        name="openai",
        family="openai",
        model="gpt-test",
        price={"input": 5.0, "cached_input": 1.0, "output": 20.0},  # never applied offline
    )
)


def rubric_request(memo: str, criterion_text: str) -> JudgeRequest:
    prompt = render_rubric(
        task_id="t-1",
        instructions="Write a memo on the lease's cure period.",
        criterion=Criterion(id="C-001", title="Cure period", match_criteria=criterion_text),
        deliverables=[Deliverable(name="memo", text=memo)],
        boundary="ab" * 8,
    )
    return prompt.request_for(CFG)


PASSING = rubric_request(
    "The tenant has a cure period of 30 days after written notice under Section 14.2.",
    "PASS if the memo states the 30-day cure period in Section 14.2. FAIL otherwise.",
)
FAILING = rubric_request(
    "The lease is silent on remedies.",
    "PASS if the memo states the 30-day cure period in Section 14.2. FAIL otherwise.",
)


async def test_offline_replies_are_labelled_offline_and_free_with_estimated_usage() -> None:
    vendor = create_vendor(CFG)
    reply = await vendor.complete(PASSING, RubricAnswer)
    assert reply.offline is True
    assert reply.cost_usd == 0.0
    assert reply.usage.input_tokens >= PASSING.estimated_input_tokens - 2
    assert reply.usage.output_tokens > 0
    assert reply.attempts == 1 and reply.request_id == f"offline-{PASSING.request_hash[:16]}"
    assert reply.output.reasoning.startswith("[offline]")


async def test_offline_verdicts_follow_the_deliverable_and_are_deterministic() -> None:
    vendor = create_vendor(CFG)
    first = await vendor.complete_many([PASSING, FAILING, PASSING], RubricAnswer)
    again = await vendor.complete_many([PASSING, FAILING, PASSING], RubricAnswer)
    replies = [r for r in first if not isinstance(r, VendorError)]
    replays = [r for r in again if not isinstance(r, VendorError)]
    assert [r.output.verdict for r in replies] == ["pass", "fail", "pass"]
    assert [r.model_dump(exclude={"started_at", "ended_at"}) for r in replies] == [
        r.model_dump(exclude={"started_at", "ended_at"}) for r in replays
    ]


async def test_offline_answers_the_preflight_without_a_key_or_network() -> None:
    vendor = create_vendor(CFG)
    reply = await vendor.complete(render_preflight().request_for(CFG), PreflightAnswer)
    assert reply.output.ok is True and reply.offline is True
    await vendor.aclose()


class NotTheAnswer(BaseModel):
    score: float


async def test_an_answer_not_matching_the_schema_is_bad_output_without_retries() -> None:
    vendor = create_vendor(CFG)
    with pytest.raises(VendorError) as info:
        await vendor.complete(PASSING, NotTheAnswer)
    assert (info.value.kind, info.value.attempts) == (ErrorKind.BAD_OUTPUT, 1)
    assert "NotTheAnswer" in info.value.cause


def test_the_offline_vendor_has_no_budget_and_no_client() -> None:
    vendor: Any = create_vendor(CFG)
    assert vendor.budget is None
    assert (vendor.name, vendor.family, vendor.model) == ("openai", "openai", "gpt-test")
