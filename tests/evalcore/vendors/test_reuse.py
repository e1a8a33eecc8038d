"""Never paying twice: stored calls are served for free, identical calls in flight share one."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from doubles.emulators import OfflineResponder, OpenAIEmulator
from doubles.emulators.serve import point_at_emulators
from evalcore.config.load import load_config
from evalcore.errors import ErrorKind, VendorError
from evalcore.prompts import new_boundary, render_rubric
from evalcore.schema import Criterion, Deliverable, RubricAnswer
from evalcore.vendors.protocol import JudgeReply, JudgeRequest, T, Usage
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
    from doubles.emulators import AuthError, EmulatorConfig
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


class _Counting:
    """An inner vendor that answers each request with its hash, records every call, and can be
    told to fail some hashes or to hold its answers until released."""

    name, family, model = "judge", "openai", "m"

    def __init__(self, fail: frozenset[str] = frozenset()) -> None:
        self.fail = fail
        self.batches: list[list[str]] = []
        self.release = asyncio.Event()
        self.release.set()

    async def complete(self, request: JudgeRequest, schema: type[T]) -> JudgeReply[T]:
        [reply] = await self.complete_many([request], schema)
        if isinstance(reply, VendorError):
            raise reply
        return reply

    async def complete_many(self, requests: list[JudgeRequest], schema: type[T]) -> list[JudgeReply[T] | VendorError]:
        self.batches.append([r.request_hash for r in requests])
        await self.release.wait()
        answers: list[JudgeReply[BaseModel] | VendorError] = [
            VendorError(self.name, self.model, ErrorKind.FATAL, "refused") if r.request_hash in self.fail else
            JudgeReply(output=RubricAnswer(verdict="pass", reasoning=r.request_hash), usage=Usage(), cost_usd=0.01,
                       started_at=1.0, ended_at=2.0, vendor=self.name, model=self.model)
            for r in requests
        ]
        return answers  # type: ignore[return-value]

    async def aclose(self) -> None:
        return None


def _bare(h: str, purpose: str = "rubric") -> JudgeRequest:
    return JudgeRequest(purpose=purpose, request_hash=h, system_prompt="s", shared_prefix="p",  # type: ignore[arg-type]
                        varying_suffix=h, schema_name="RubricAnswer")


async def test_a_batch_sends_the_calls_it_owns_together_and_serves_stored_answers_and_repeats_without_sending() -> None:
    inner = _Counting()
    stored = {"old": ("run-old", RubricAnswer(verdict="fail", reasoning="stored").model_dump_json())}
    vendor = ReusingVendor(inner, stored, run_id="run-a")
    replies = await vendor.complete_many([_bare(h) for h in ("a", "old", "b", "a", "c")], RubricAnswer)
    assert inner.batches == [["a", "b", "c"]]  # one inner call; the stored answer and the repeat are not sent
    assert [r.output.reasoning for r in replies] == ["a", "stored", "b", "a", "c"]  # type: ignore[union-attr]
    # the repeat waited for the first and was served from the store, as `complete` serves it
    assert [r.reused_from for r in replies] == [None, "run-old", None, "run-a", None]  # type: ignore[union-attr]
    assert set(stored) == {"old", "a", "b", "c"} and not vendor._inflight


async def test_a_call_another_caller_has_in_flight_is_shared_not_sent_again() -> None:
    inner = _Counting()
    inner.release.clear()
    vendor = ReusingVendor(inner, {}, run_id="run-a")
    first = asyncio.ensure_future(vendor.complete_many([_bare("x"), _bare("y")], RubricAnswer))
    await asyncio.sleep(0)  # the first batch owns x and y, and waits for its answers
    second = asyncio.ensure_future(vendor.complete_many([_bare("y"), _bare("z")], RubricAnswer))
    await asyncio.sleep(0)
    inner.release.set()
    _, shared = await asyncio.gather(first, second)
    assert sorted(map(sorted, inner.batches)) == [["x", "y"], ["z"]]  # y was paid once
    assert [r.output.reasoning for r in shared] == ["y", "z"]  # type: ignore[union-attr]


async def test_when_an_owned_call_fails_the_caller_sharing_it_sends_its_own() -> None:
    inner = _Counting(fail=frozenset({"x"}))
    inner.release.clear()
    vendor = ReusingVendor(inner, {}, run_id="run-a")
    first = asyncio.ensure_future(vendor.complete_many([_bare("x")], RubricAnswer))
    await asyncio.sleep(0)
    second = asyncio.ensure_future(vendor.complete_many([_bare("x")], RubricAnswer))
    await asyncio.sleep(0)
    inner.release.set()
    [a], [b] = await asyncio.gather(first, second)
    assert inner.batches == [["x"], ["x"]]  # the owner's failed call, then the sharer's own
    assert isinstance(a, VendorError) and isinstance(b, VendorError) and "x" not in vendor.stored


async def test_stage_2_answers_of_a_batch_are_not_stored_and_a_cancelled_batch_leaves_nothing_in_flight() -> None:
    inner = _Counting()
    vendor = ReusingVendor(inner, {}, run_id="run-a")
    await vendor.complete_many([_bare("v", "verify"), _bare("r")], RubricAnswer)
    assert set(vendor.stored) == {"r"}  # only the calls table, with the audit's outcome, may serve Stage 2

    inner.release.clear()
    batch = asyncio.ensure_future(vendor.complete_many([_bare("p"), _bare("q")], RubricAnswer))
    await asyncio.sleep(0)
    assert set(vendor._inflight) == {"p", "q"}
    batch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await batch
    assert not vendor._inflight and "p" not in vendor.stored
