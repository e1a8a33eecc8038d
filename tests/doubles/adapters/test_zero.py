"""The zero-work vendor answers every schema at once with a valid fixed answer, labelled offline."""

from __future__ import annotations

from pydantic import BaseModel

from evalcore.config.models import VendorConfig
from evalcore.schema import DetectionAnswer, PreflightAnswer, RubricAnswer, VerificationAnswer
from evalcore.vendors.protocol import JudgeRequest
from evalcore.vendors.registry import adapters, create_vendor


def request() -> JudgeRequest:
    return JudgeRequest(
        purpose="rubric",
        request_hash="h",
        system_prompt="s",
        shared_prefix="p",
        varying_suffix="v",
        schema_name="RubricAnswer",
    )


async def test_the_zero_vendor_answers_every_schema_validly_without_a_key_or_a_budget() -> None:
    assert "zero" in adapters()
    cfg = VendorConfig(adapter="zero", name="z", family="zero", model="none", api_key_env="NO_SUCH_KEY_SET")
    vendor = create_vendor(cfg)
    schemas: list[type[BaseModel]] = [RubricAnswer, DetectionAnswer, VerificationAnswer, PreflightAnswer]
    for schema in schemas:
        reply = await vendor.complete(request(), schema)
        assert isinstance(reply.output, schema) and reply.offline and reply.cost_usd == 0
    assert getattr(vendor, "budget", None) is None


async def test_a_clientless_adapter_keeps_one_wire_limiter_per_loop_so_its_cap_holds() -> None:
    """An adapter without an SDK client (zero-work, offline) used to build new wire slots at every
    call, so `max_in_flight` never held and its progress showed one call on the wire."""
    cfg = VendorConfig(adapter="zero", name="z", family="zero", model="none", max_in_flight=4)
    vendor = create_vendor(cfg)
    await vendor.complete_many([request() for _ in range(3)], RubricAnswer)
    wire = vendor._wire  # type: ignore[attr-defined]
    replies = await vendor.complete_many([request() for _ in range(40)], RubricAnswer)
    assert len(replies) == 40 and all(not isinstance(r, Exception) for r in replies)
    assert vendor._wire is wire  # type: ignore[attr-defined]
    stats = wire.snapshot()
    assert stats["in_flight"] == 0 and stats["in_flight_cap"] == 4
    assert 0 < wire.stats.peak_in_flight <= 4
