"""The emulators `tribunal emulate` (and `--vendors emulated`) configures enforce each vendor's own
bucket: OpenAI slices a per-minute limit per second, Anthropic holds the whole minute.

Checked through the real SDKs with the limits' clock frozen, so "a burst within one second" does
not depend on how fast this machine sends it.
"""

from __future__ import annotations

import anthropic
import openai

from doubles.emulators import AnthropicEmulator, OpenAIEmulator, StaticResponder
from doubles.emulators.serve import emulator_config_from
from evalcore.emulation import EmulationOptions

ANSWER = {"ok": True}
BURST = 5


class FrozenClock:
    """The limits' clock: time moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def _openai_refused(client: openai.AsyncOpenAI, n: int) -> int:
    refused = 0
    for _ in range(n):
        try:
            await client.responses.create(model="gpt-6-sol", input="hi")
        except openai.RateLimitError:
            refused += 1
    return refused


async def test_emulate_config_enforces_openais_one_second_slices_of_a_per_minute_limit() -> None:
    configs = emulator_config_from(EmulationOptions(requests_per_minute=60))
    clock = FrozenClock()
    async with OpenAIEmulator(configs["openai"], responder=StaticResponder(ANSWER), limits_clock=clock) as emu:
        async with openai.AsyncOpenAI(api_key="k", base_url=emu.base_url, max_retries=0) as client:
            # 60/min in one-second slices: one request per second, however many the minute allows
            assert await _openai_refused(client, BURST) == BURST - 1
            clock.now += 1.0  # the next second's slice
            assert await _openai_refused(client, 2) == 1
    assert emu.stats.limit_rejections == BURST  # 429s of the server limits, counted by the emulator too


async def test_emulate_config_lets_anthropic_burst_the_whole_minute() -> None:
    configs = emulator_config_from(EmulationOptions(requests_per_minute=60))
    clock = FrozenClock()
    async with AnthropicEmulator(configs["anthropic"], responder=StaticResponder(ANSWER), limits_clock=clock) as emu:
        async with anthropic.AsyncAnthropic(api_key="k", base_url=emu.base_url, max_retries=0) as client:
            for _ in range(BURST):  # the same burst: within the minute's bucket of 60
                await client.messages.create(
                    model="claude-opus-5-5", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
                )
    assert emu.stats.limit_rejections == 0 and emu.stats.ok == BURST
