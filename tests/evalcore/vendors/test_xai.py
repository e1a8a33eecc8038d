"""xAI adapter: the real xai-sdk (gRPC) against the xAI emulator."""

from __future__ import annotations

from typing import Any

import pytest
import xai_sdk
from xai_sdk.telemetry import should_disable_sensitive_attributes

from doubles.emulators import XAIEmulator
from evalcore.schema import RubricAnswer
from evalcore.vendors.adapters.xai import NO_PROMPTS_IN_TELEMETRY, XAIVendor, response_format, split_endpoint
from evalcore.vendors.registry import create_vendor
from tests.evalcore.vendors._vendor_contract import VendorContract, judge_request


class TestXAI(VendorContract):
    adapter = "xai"
    emulator_cls = XAIEmulator
    key_env = "TRIBUNAL_TEST_XAI_KEY"
    reports_cost = True
    reports_written = False

    @staticmethod
    def endpoint(emu: Any) -> str:
        return f"http://{emu.host}"  # http:// = plaintext gRPC channel

    async def test_channel_retries_are_off_and_the_key_is_sent(self, emu: Any) -> None:
        vendor = create_vendor(self.config(emu))
        await vendor.complete(judge_request(), RubricAnswer)
        await vendor.aclose()
        (rec,) = emu.requests
        assert rec.headers.get("authorization") == "Bearer test-key-not-secret-123"
        assert rec.schema_name is not None

    async def test_max_tokens_and_effort_are_sent(self, emu: Any) -> None:
        vendor = create_vendor(self.config(emu, reasoning_effort="high"))
        reply = await vendor.complete(judge_request(), RubricAnswer)
        await vendor.aclose()
        assert reply.usage.reasoning_tokens > 0
        assert emu.requests[0].body.get("max_tokens") == 400

    async def test_the_output_billed_includes_the_reasoning_xai_reports_apart(self, emu: Any) -> None:
        """xAI's usage has `completion_tokens` and `reasoning_tokens` apart and bills both as output:
        the call's output tokens are their sum, and its cost (xAI's own) prices them."""
        vendor = create_vendor(self.config(emu, reasoning_effort="high"))
        reply = await vendor.complete(judge_request(), RubricAnswer)
        await vendor.aclose()
        u = reply.usage
        assert u.reasoning_tokens > 0 and u.output_tokens > u.reasoning_tokens
        price = emu.engine.config.price  # what the emulated xAI bills with (its cost_in_usd_ticks)
        expected = price.cost(u.input_tokens, u.cached_input_tokens, u.output_tokens)
        assert abs(reply.cost_usd - expected) < 1e-6

    async def test_the_response_format_is_the_sdks_own_for_the_schema_and_built_once(self, emu: Any) -> None:
        client = xai_sdk.AsyncClient(api_key="k", api_host=emu.host, use_insecure_channel=True)
        try:
            from_class = client.chat.create(model="m", response_format=RubricAnswer)
            ours = client.chat.create(model="m", response_format=response_format(RubricAnswer))
            assert ours.proto.response_format == from_class.proto.response_format
            assert ours.proto.response_format.schema  # the JSON schema itself is sent
        finally:
            await client.close()
        assert response_format(RubricAnswer) is response_format(RubricAnswer)
        vendor = create_vendor(self.config(emu))
        assert vendor.params(judge_request(), RubricAnswer)["response_format"] is response_format(RubricAnswer)  # type: ignore[attr-defined]
        await vendor.complete(judge_request(), RubricAnswer)
        await vendor.aclose()
        assert emu.requests[0].schema_name is not None

    async def test_every_chat_pins_store_messages_off(self, emu: Any) -> None:
        # On the wire a proto3 false is the absent field: what can be seen there is that no request
        # asks to be stored; that the adapter pins it (not the SDK's default) is seen in its chat.
        vendor = create_vendor(self.config(emu))
        assert isinstance(vendor, XAIVendor)
        await vendor.complete_many([judge_request(i) for i in range(3)], RubricAnswer)
        assert vendor.params(judge_request(), RubricAnswer)["store_messages"] is False
        await vendor.aclose()
        assert len(emu.requests) == 3
        assert [r.body.get("store_messages", False) for r in emu.requests] == [False, False, False]

    async def test_building_a_client_keeps_prompts_out_of_the_sdks_telemetry(
        self, emu: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv(NO_PROMPTS_IN_TELEMETRY, "0")  # even an explicit 0 in the environment
        assert not should_disable_sensitive_attributes()
        vendor = create_vendor(self.config(emu))
        await vendor.complete(judge_request(), RubricAnswer)
        await vendor.aclose()
        assert should_disable_sensitive_attributes()  # the SDK's own reading of the variable


@pytest.mark.parametrize(
    ("endpoint", "expected"),
    [
        ("http://127.0.0.1:5000", ("127.0.0.1:5000", True)),
        ("https://api.x.ai", ("api.x.ai", False)),
        ("api.x.ai:443", ("api.x.ai:443", False)),
        (None, (None, False)),
    ],
)
def test_endpoint_scheme_picks_the_channel(endpoint: str | None, expected: tuple[str | None, bool]) -> None:
    assert split_endpoint(endpoint) == expected
