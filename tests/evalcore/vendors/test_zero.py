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
