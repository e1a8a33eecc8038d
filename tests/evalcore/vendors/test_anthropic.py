"""Anthropic adapter: the real anthropic SDK (Messages API) against the Anthropic emulator."""

from __future__ import annotations

from typing import Any

from doubles.emulators import AnthropicEmulator, RateLimited
from evalcore.schema import RubricAnswer
from evalcore.vendors.registry import create_vendor
from tests.evalcore.vendors._vendor_contract import VendorContract, judge_request


class TestAnthropic(VendorContract):
    adapter = "anthropic"
    emulator_cls = AnthropicEmulator
    key_env = "TRIBUNAL_TEST_ANTHROPIC_KEY"

    async def test_the_shared_prefix_ends_with_an_ephemeral_cache_breakpoint(self, emu: Any) -> None:
        vendor = create_vendor(self.config(emu))
        await vendor.complete(judge_request(), RubricAnswer)
        await vendor.aclose()
        (rec,) = emu.requests
        prefix_block, suffix_block = rec.body["messages"][0]["content"]
        assert prefix_block["text"] == "Shared prefix: the deliverable text.\n"
        assert prefix_block["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" not in suffix_block
        assert rec.body["output_config"]["format"]["type"] == "json_schema"
        assert rec.body["max_tokens"] == 400
        assert rec.body["system"] == "You are a grader. Answer with JSON."

    async def test_a_cache_write_is_billed_at_its_multiplier_and_a_cache_read_at_the_cached_price(
        self, emu: Any
    ) -> None:
        """The usage the SDK reports (cache_creation / cache_read input tokens) is priced as Anthropic
        bills it (`Price.bill`): a 5-minute write at 1.25x input, a read at the cached price."""
        price = {"input": 10.0, "cached_input": 1.0, "output": 50.0, "cache_write": 1.25}
        vendor = create_vendor(self.config(emu, price=price))
        prefix = "The lease runs to 2031 and the tenant may renew twice. " * 400  # well over the cache minimum
        first = await vendor.complete(judge_request(0, prefix), RubricAnswer)
        second = await vendor.complete(judge_request(1, prefix), RubricAnswer)
        await vendor.aclose()
        u1, u2 = first.usage, second.usage
        assert u1.cache_write_tokens > 0 and u1.cached_input_tokens == 0  # the first call writes the prefix
        assert u2.cached_input_tokens > 0 and u2.cache_write_tokens == 0  # the second reads it
        expected = (10.0 * (u1.input_tokens - u1.cache_write_tokens) + 10.0 * 1.25 * u1.cache_write_tokens
                    + 50.0 * u1.output_tokens) / 1e6
        assert abs(first.cost_usd - expected) < 1e-9
        read = (10.0 * (u2.input_tokens - u2.cached_input_tokens) + 1.0 * u2.cached_input_tokens
                + 50.0 * u2.output_tokens) / 1e6
        assert abs(second.cost_usd - read) < 1e-9

    async def test_no_breakpoint_when_prompt_caching_is_off(self, emu: Any) -> None:
        vendor = create_vendor(self.config(emu, prompt_caching=False))
        await vendor.complete(judge_request(), RubricAnswer)
        await vendor.aclose()
        assert all("cache_control" not in b for b in emu.requests[0].body["messages"][0]["content"])

    async def test_a_large_max_tokens_is_sent_without_streaming_because_a_timeout_is_explicit(
        self, emu: Any
    ) -> None:
        vendor = create_vendor(self.config(emu, max_output_tokens=64_000))
        request = judge_request().model_copy(update={"max_output_tokens": 64_000})
        reply = await vendor.complete(request, RubricAnswer)
        await vendor.aclose()
        assert reply.attempts == 1 and emu.requests[0].body["max_tokens"] == 64_000

    async def test_effort_goes_into_output_config(self, emu: Any) -> None:
        vendor = create_vendor(self.config(emu, reasoning_effort="high"))
        await vendor.complete(judge_request(), RubricAnswer)
        await vendor.aclose()
        assert emu.requests[0].body["output_config"]["effort"] == "high"

    async def test_rate_limit_headers_reach_the_budget(self, emu: Any) -> None:
        vendor: Any = create_vendor(self.config(emu))
        emu.push(RateLimited(retry_after=0.02))
        await vendor.complete(judge_request(), RubricAnswer)
        await vendor.aclose()
        assert vendor.budget.stats.rate_limited == 1
