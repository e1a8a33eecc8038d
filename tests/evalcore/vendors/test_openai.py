"""OpenAI adapter: the real openai SDK (Responses API) against the OpenAI emulator."""

from __future__ import annotations

from typing import Any

import pytest

from doubles.emulators import OpenAIEmulator
from evalcore.config.load import load_config
from evalcore.schema import RubricAnswer
from evalcore.vendors.adapters.openai import cache_retention
from evalcore.vendors.registry import create_vendor
from tests.evalcore.vendors._vendor_contract import VendorContract, judge_request


class TestOpenAI(VendorContract):
    adapter = "openai"
    emulator_cls = OpenAIEmulator
    key_env = "TRIBUNAL_TEST_OPENAI_KEY"

    async def test_responses_api_gets_strict_schema_effort_and_max_output_tokens(self, emu: Any) -> None:
        # low: its reasoning fits the 400-token cap (high's would not, and OpenAI counts it inside the cap)
        vendor = create_vendor(self.config(emu, reasoning_effort="low"))
        reply = await vendor.complete(judge_request(), RubricAnswer)
        await vendor.aclose()
        (rec,) = emu.requests
        assert rec.path == "/v1/responses"
        fmt = rec.body["text"]["format"]
        assert (fmt["type"], fmt["strict"], fmt["name"]) == ("json_schema", True, "RubricAnswer")
        assert rec.body["reasoning"] == {"effort": "low"}
        assert rec.body["max_output_tokens"] == 400
        assert rec.body["instructions"] == "You are a grader. Answer with JSON."
        assert rec.headers.get("x-stainless-retry-count") == "0"
        assert reply.usage.reasoning_tokens > 0  # the emulator bills reasoning for effort=low

    async def test_no_reasoning_field_is_sent_when_effort_is_not_configured(self, emu: Any) -> None:
        vendor = create_vendor(self.config(emu))
        await vendor.complete(judge_request(), RubricAnswer)
        await vendor.aclose()
        assert "reasoning" not in emu.requests[0].body

    async def test_calls_sharing_a_prefix_share_a_prompt_cache_key(self, emu: Any) -> None:
        vendor = create_vendor(self.config(emu))
        await vendor.complete_many(
            [judge_request(0), judge_request(1), judge_request(2, "other")], RubricAnswer
        )
        await vendor.aclose()
        keys = [r.body.get("prompt_cache_key") for r in emu.requests]
        assert len(set(keys)) == 2 and all(keys)

    async def test_every_request_asks_openai_not_to_store_the_response(self, emu: Any) -> None:
        vendor = create_vendor(self.config(emu, reasoning_effort="low"))
        await vendor.complete_many([judge_request(i) for i in range(3)], RubricAnswer)
        await vendor.aclose()
        assert len(emu.requests) == 3
        assert [r.body.get("store") for r in emu.requests] == [False, False, False]

    @pytest.mark.parametrize(
        ("model", "setting", "sent"),
        [
            ("gpt-4.1", "shortest", "in_memory"),
            ("gpt-5.4-mini", "shortest", "in_memory"),
            ("gpt-5.5", "shortest", "24h"),  # gpt-5.5 and later accept only 24h
            ("gpt-5.5-pro", "shortest", "24h"),
            ("gpt-6-sol", "shortest", "24h"),
            ("openai-test-model", "shortest", "in_memory"),  # a name the rule does not know: the shortest
            ("gpt-4.1", "24h", "24h"),  # a configured value is sent as given
            ("gpt-6-sol", "in_memory", "in_memory"),
        ],
    )
    async def test_the_prompt_cache_retention_sent_is_the_shortest_the_model_accepts_unless_configured(
        self, emu: Any, model: str, setting: str, sent: str
    ) -> None:
        vendor = create_vendor(self.config(emu, model=model, prompt_cache_retention=setting))
        await vendor.complete(judge_request(), RubricAnswer)
        await vendor.aclose()
        assert [r.body.get("prompt_cache_retention") for r in emu.requests] == [sent]


def test_the_default_panels_openai_entries_ask_for_the_shortest_retention_their_model_accepts() -> None:
    cfg = load_config()
    entries = [v for v in cfg.vendors() if v.adapter == "openai"]
    assert entries and all(v.prompt_cache_retention == "shortest" for v in entries)
    assert {v.model: cache_retention(v) for v in entries} == {"gpt-6-sol": "24h"}
