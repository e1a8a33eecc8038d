"""Prompt caching as the vendors do it: a prefix is readable only once the request that wrote it has
started answering; OpenAI's 1,024-token minimum and 128-token steps; Anthropic only up to a
`cache_control` breakpoint; entries expire after their TTL."""

from __future__ import annotations

import asyncio

import anthropic
from hypothesis import given, settings
from hypothesis import strategies as st
from openai import AsyncOpenAI
from pydantic import BaseModel

from doubles.emulators import (
    AnthropicEmulator,
    EmulatedRequest,
    EmulatorConfig,
    OpenAIEmulator,
    ScriptedResponder,
)
from evalcore.cost.prompt_cache import PrefixCache, _blocks_in_common


class Verdict(BaseModel):
    verdict: str


SHARED = "The lease says the rent is due monthly. " * 400  # 16,000 chars, ~4,000 tokens


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def cache(clock: Clock | None = None, ttl: float = 300.0) -> PrefixCache:
    return PrefixCache(block_tokens=128, min_tokens=1024, chars_per_token=4.0, ttl_s=ttl, capacity=10_000,
                       clock=clock or Clock())


def test_requests_arriving_before_the_writer_answers_all_miss_and_later_ones_hit() -> None:
    c = cache()
    burst = [c.lookup("m", "sys", SHARED + f"criterion {i}") for i in range(5)]
    assert [p.hit_tokens for p in burst] == [0] * 5
    assert all(c.store(p) > 0 for p in burst)  # each of the burst pays its own write
    after = c.lookup("m", "sys", SHARED + "criterion 9")
    assert after.hit_tokens == (len("sys") + 1 + len(SHARED)) // 512 * 128


def test_an_entry_expires_ttl_after_its_last_use() -> None:
    clock = Clock()
    c = cache(clock, ttl=300.0)
    c.store(c.lookup("m", "", SHARED + "a"))
    clock.now = 299.0
    assert c.lookup("m", "", SHARED + "b").hit_tokens > 0  # a hit refreshes the entry
    clock.now = 598.0
    assert c.lookup("m", "", SHARED + "c").hit_tokens > 0
    clock.now = 899.0
    assert c.lookup("m", "", SHARED + "d").hit_tokens == 0


def test_expired_entries_are_dropped_when_new_ones_are_written() -> None:
    clock = Clock()
    c = cache(clock, ttl=300.0)
    c.store(c.lookup("m", "", SHARED + "a"))
    held = len(c)
    assert held > 0
    clock.now = 301.0
    c.store(c.lookup("m", "", "other prefix " * 400))
    assert 0 < len(c) < held + 1 and c.lookup("m", "", SHARED + "b").hit_tokens == 0


def test_prefixes_shorter_than_the_minimum_are_never_cached() -> None:
    c = cache()
    short = "x" * (1023 * 4 - 2)  # system + separator + this is just under 1,024 tokens
    c.store(c.lookup("m", "", short + "yyyyyyyy"))
    assert c.lookup("m", "", short + "zzzzzzzz").hit_tokens == 0


def test_the_model_is_part_of_the_cache_key() -> None:
    c = cache()
    c.store(c.lookup("model-a", "", SHARED + "a"))
    assert c.lookup("model-b", "", SHARED + "b").hit_tokens == 0


@settings(deadline=None)  # no timed assertions: a loaded CI machine must not fail it
@given(common=st.integers(0, 20_000), tail_a=st.text(min_size=1, max_size=50), tail_b=st.text(min_size=1, max_size=50))
def test_an_automatic_hit_is_zero_or_a_128_token_step_from_1024_within_the_common_prefix(
    common: int, tail_a: str, tail_b: str
) -> None:
    c = cache()
    prefix = "p" * common
    c.store(c.lookup("m", "", prefix + "A" + tail_a))
    hit = c.lookup("m", "", prefix + "B" + tail_b).hit_tokens
    assert hit == 0 or (hit >= 1024 and hit % 128 == 0)
    assert hit * 4 <= common + 1
    assert hit == ((common + 1) // 512 * 128 if (common + 1) // 512 * 128 >= 1024 else 0)


def _fresh_prefixes(model: str, user: str) -> list[tuple[bytes, int]]:
    return PrefixCache(block_tokens=2, min_tokens=4, chars_per_token=1.0, ttl_s=300.0, capacity=100)._prefixes(
        model, "s", user, None)


@settings(deadline=None)
@given(texts=st.lists(st.tuples(st.sampled_from(["m", "n"]), st.integers(0, 3), st.text("ab\u00e9", max_size=24)),
                      min_size=1, max_size=12))
def test_a_prefix_digest_is_the_same_whatever_texts_the_cache_hashed_before(
    texts: list[tuple[str, int, str]]
) -> None:
    """The cache resumes hashing from the last text with the same first block: it must give every
    text the digests a fresh cache gives it (texts here share one of four prefixes, then part)."""
    c = PrefixCache(block_tokens=2, min_tokens=4, chars_per_token=1.0, ttl_s=300.0, capacity=100)
    for model, shared, tail in texts:
        user = "ab" * (3 * shared) + tail
        assert c._prefixes(model, "s", user, None) == _fresh_prefixes(model, user)


@given(a=st.text("ab", max_size=40), b=st.text("ab", max_size=40), block=st.integers(1, 5))
def test_the_blocks_two_texts_share_are_counted_as_a_block_by_block_comparison_would(a: str, b: str, block: int) -> None:
    limit = min(len(a), len(b)) // block
    linear = 0
    while linear < limit and a[linear * block : (linear + 1) * block] == b[linear * block : (linear + 1) * block]:
        linear += 1
    assert _blocks_in_common(a, b, limit, block) == linear


def test_with_breakpoints_only_the_prefix_up_to_a_breakpoint_is_cached() -> None:
    c = cache()
    user_a, user_b = SHARED + "criterion A", SHARED + "criterion B"
    first = c.lookup("m", "sys", user_a, [len(SHARED)])
    assert first.hit_tokens == 0 and c.store(first) == -(-len("sys" + SHARED) // 4)
    assert c.lookup("m", "sys", user_b, [len(SHARED)]).hit_tokens == -(-len("sys" + SHARED) // 4)
    assert c.lookup("m", "sys", user_b, []).hit_tokens == 0  # no breakpoint: nothing read
    assert c.lookup("m", "sys", user_b, [len(user_b)]).hit_tokens == 0  # another breakpoint: another entry


# ------------------------------------------------------------------ through the real SDKs


def gated_responder(gate: asyncio.Event) -> ScriptedResponder:
    """Answers only once `gate` is set: the test decides when requests 'start answering'."""

    async def respond(req: EmulatedRequest) -> dict[str, str]:
        await gate.wait()
        return {"verdict": "pass"}

    return ScriptedResponder(respond)


async def arrived(emu: OpenAIEmulator | AnthropicEmulator, n: int) -> None:
    """Until the emulator has received n requests (they are then all waiting on the gate)."""
    async with asyncio.timeout(10):
        while len(emu.requests) < n:
            await asyncio.sleep(0.01)


async def test_openai_a_simultaneous_burst_is_not_cached_but_warm_then_fan_out_is() -> None:
    gate = asyncio.Event()
    async with OpenAIEmulator(EmulatorConfig(), responder=gated_responder(gate)) as emu:
        client = AsyncOpenAI(api_key="k", base_url=emu.base_url, max_retries=0)
        try:
            def ask(i: int, prefix: str = SHARED):  # noqa: ANN202
                return client.responses.parse(model="m", instructions="Judge.", input=prefix + f"criterion {i}",
                                              text_format=Verdict)

            burst = [asyncio.create_task(ask(i)) for i in range(5)]
            await arrived(emu, 5)
            gate.set()
            cold = await asyncio.gather(*burst)
            assert [r.usage.input_tokens_details.cached_tokens for r in cold] == [0] * 5

            other = "A different submission's memo. " * 500
            warm = await ask(0, other)  # warm: one request, wait for its answer...
            fan = await asyncio.gather(*(ask(i, other) for i in range(1, 6)))  # ...then the rest
        finally:
            await client.close()
    assert warm.usage.input_tokens_details.cached_tokens == 0
    expected = (len("Judge.") + 1 + len(other)) // 512 * 128
    assert [r.usage.input_tokens_details.cached_tokens for r in fan] == [expected] * 5


async def test_anthropic_a_simultaneous_burst_is_not_cached_but_warm_then_fan_out_is() -> None:
    gate = asyncio.Event()
    async with AnthropicEmulator(EmulatorConfig(), responder=gated_responder(gate)) as emu:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=emu.base_url, max_retries=0)
        try:
            def ask(i: int, prefix: str = SHARED):  # noqa: ANN202
                content = [{"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}},
                           {"type": "text", "text": f"criterion {i}"}]
                return client.messages.create(model="m", max_tokens=100, system="Judge.",
                                              messages=[{"role": "user", "content": content}])  # type: ignore[list-item]

            burst = [asyncio.create_task(ask(i)) for i in range(4)]
            await arrived(emu, 4)
            gate.set()
            cold = await asyncio.gather(*burst)
            warm_next = await ask(9)
        finally:
            await client.close()
    prefix_tokens = -(-len("Judge." + SHARED) // 4)
    assert [m.usage.cache_read_input_tokens for m in cold] == [0] * 4
    assert [m.usage.cache_creation_input_tokens for m in cold] == [prefix_tokens] * 4  # each pays a write
    assert warm_next.usage.cache_read_input_tokens == prefix_tokens
    assert warm_next.usage.cache_creation_input_tokens == 0
    assert warm_next.usage.input_tokens == -(-len("Judge." + SHARED + "criterion 9") // 4) - prefix_tokens


def test_the_emulator_config_defaults_are_the_documented_vendor_values() -> None:
    cfg = EmulatorConfig()
    assert (cfg.cache_min_tokens, cfg.cache_block_tokens, cfg.cache_ttl_s) == (1024, 128, 300.0)
