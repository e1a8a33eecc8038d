"""Local wire-protocol emulators of the three judge vendors (OpenAI, Anthropic, xAI).

Why: the real SDK clients run unchanged against them on 127.0.0.1, so adapters, retries, rate
budgets and the whole sweep are tested end to end with no network and no keys. Each emulator has
knobs (script of behaviours, fault rates, latency, server-side limits), a pluggable responder that
decides the answer, realistic usage (incl. prompt-cache hits) and a record of every request.
They keep and delete data as the vendors do (OpenAI `store`, files and their expiry, Anthropic
batch deletion, xAI `store_messages`), and log the retention settings of every body received
(`emu.received`, `emu.retained()`), so a client's data retention is tested through the real SDKs.

They refuse and fail as the vendors do: with `refuse_unknown_models` (on in every configuration
`serve.emulator_config_from` builds) a model id neither in the installed SDK's model list nor in
`accept_models` gets the vendor's 404 (OpenAI `model_not_found`, Anthropic `not_found_error`, xAI
NOT_FOUND); reasoning tokens are drawn per request from a seeded distribution by effort
(`reasoning_tokens`) and count inside OpenAI's `max_output_tokens` and Anthropic's `max_tokens`
(thinking on), so `incomplete` / `max_tokens` stops happen at a known rate; `x-should-retry:
true|false` is sent on an error when a scripted `RateLimited` / `ServerError` says `should_retry`
(or `FaultRates.should_retry` for injected faults), to test a client's retry policy through the
real SDKs:

    async with OpenAIEmulator(EmulatorConfig(script=[RateLimited(retry_after=0.05)])) as emu:
        client = AsyncOpenAI(api_key="k", base_url=emu.base_url, max_retries=0)
"""

from doubles.emulators._batches import BatchItem, BatchStore, EmulatedBatch
from doubles.emulators._config import (
    AuthError,
    BatchOutcome,
    BatchSettings,
    Behaviour,
    BrokenBody,
    EmulatorConfig,
    FaultRates,
    FixedLatency,
    Hang,
    Latency,
    LognormalLatency,
    Malformed,
    RateLimited,
    Reply,
    ServerError,
    ServerLimits,
    Truncated,
    UniformLatency,
)
from doubles.emulators._engine import EmulatorStats, Outcome, RecordedRequest, UsageCounts
from doubles.emulators._retention import Received
from doubles.emulators._set import EmulatorSet, EmulatorThread, start_in_thread
from doubles.emulators.anthropic_server import AnthropicEmulator
from doubles.emulators.openai_server import OpenAIEmulator
from doubles.emulators.responders import (
    EmulatedRequest,
    OfflineResponder,
    Responder,
    ScriptedResponder,
    StaticResponder,
)
from doubles.emulators.xai_server import XAIEmulator

__all__ = [
    "AnthropicEmulator",
    "AuthError",
    "BatchItem",
    "BatchOutcome",
    "BatchSettings",
    "BatchStore",
    "Behaviour",
    "EmulatedBatch",
    "BrokenBody",
    "EmulatedRequest",
    "EmulatorConfig",
    "EmulatorSet",
    "EmulatorThread",
    "EmulatorStats",
    "FaultRates",
    "FixedLatency",
    "Hang",
    "Latency",
    "LognormalLatency",
    "Malformed",
    "OfflineResponder",
    "OpenAIEmulator",
    "Outcome",
    "RateLimited",
    "Received",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ScriptedResponder",
    "ServerError",
    "ServerLimits",
    "StaticResponder",
    "Truncated",
    "UniformLatency",
    "UsageCounts",
    "XAIEmulator",
    "start_in_thread",
]
