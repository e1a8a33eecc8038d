"""xAI adapter: the real xai-sdk (gRPC) against the xAI emulator."""

from __future__ import annotations

from typing import Any

import pytest

from evalcore.emulators import XAIEmulator
from evalcore.schema import RubricAnswer
from evalcore.vendors.adapters.xai import split_endpoint
from evalcore.vendors.registry import create_vendor
from tests.evalcore.vendors._vendor_contract import VendorContract, judge_request


class TestXAI(VendorContract):
    adapter = "xai"
    emulator_cls = XAIEmulator
    key_env = "TRIBUNAL_TEST_XAI_KEY"
    reports_cost = True

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
