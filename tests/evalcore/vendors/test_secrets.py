"""No API key in any exception text, log line, repr or output, through every failure path.

A sentinel key is configured for each SDK adapter; the emulator even makes the "model" echo the
key back in a malformed answer, the worst case for an error message that quotes the output.
Everything is logged at DEBUG (the SDKs' own loggers included) and all of it is searched.
"""

from __future__ import annotations

import logging
import socket
import traceback
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import SecretStr

from doubles.emulators import (
    AnthropicEmulator,
    AuthError,
    BrokenBody,
    EmulatorConfig,
    Hang,
    Malformed,
    OpenAIEmulator,
    RateLimited,
    Reply,
    ServerError,
    StaticResponder,
    Truncated,
    XAIEmulator,
)
from evalcore.config.models import VendorConfig
from evalcore.errors import VendorError
from evalcore.schema import RubricAnswer
from evalcore.vendors.protocol import JudgeRequest
from evalcore.vendors.registry import create_vendor

SENTINEL = "sk-SENTINEL-not-a-real-key-123"
ENV = "TRIBUNAL_TEST_SENTINEL_KEY"
EMULATORS: dict[str, Any] = {"openai": OpenAIEmulator, "anthropic": AnthropicEmulator, "xai": XAIEmulator}

FAILURES: dict[str, list[Any]] = {
    "auth": [AuthError()],
    "rate_limited": [RateLimited(retry_after=0.01)] * 3,
    "server_error": [ServerError(500), ServerError(503), ServerError(529)],
    "echoed_key_in_bad_output": [Malformed(f"my key is {SENTINEL} {{")] * 3,
    "echoed_key_cut_by_truncation": [Malformed("x" * 62 + SENTINEL)] * 3,
    "echoed_key_in_wrong_shape": [Reply({"verdict": SENTINEL, "reasoning": SENTINEL})] * 3,
    "truncated": [Truncated()] * 3,
    "hang": [Hang(30)] * 3,
    "broken_body": [BrokenBody()] * 3,
}


def endpoint(adapter: str, emu: Any) -> str:
    return f"http://{emu.host}" if adapter == "xai" else str(emu.base_url)


def cfg(adapter: str, ep: str) -> VendorConfig:
    return VendorConfig.model_validate(
        dict(
            adapter=adapter,
            name=adapter,
            family=adapter,
            model="m",
            endpoint=ep,
            api_key_env=ENV,
            timeout_s=0.3,
            limits={"requests_per_minute": 60_000, "tokens_per_minute": 10**9},
            retry={
                "max_attempts": 3,
                "deadline_s": 20,
                "base_delay_s": 0.01,
                "max_delay_s": 0.02,
                "bad_output_retries": 2,
            },
        )
    )


REQUEST = JudgeRequest(
    purpose="rubric",
    request_hash="h",
    system_prompt="grade",
    shared_prefix="prefix ",
    varying_suffix="suffix",
    schema_name="RubricAnswer",
    estimated_input_tokens=10,
    max_output_tokens=200,
)


def assert_clean(*texts: str) -> None:
    chunks = {SENTINEL[i : i + 12] for i in range(len(SENTINEL) - 11)}  # nor any 12-char piece of it
    for text in texts:
        assert SENTINEL not in text
        assert not [c for c in chunks if c in text]


@pytest.fixture(autouse=True)
def sentinel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, SENTINEL)


@pytest.fixture
async def emulators() -> AsyncIterator[dict[str, Any]]:
    config = EmulatorConfig(api_key=SecretStr(SENTINEL))
    emus = {
        name: cls(config, responder=StaticResponder({"verdict": "pass", "reasoning": "ok"}))
        for name, cls in EMULATORS.items()
    }
    for emu in emus.values():
        await emu.start()
    try:
        yield emus
    finally:
        for emu in emus.values():
            await emu.stop()


@pytest.mark.parametrize("adapter", list(EMULATORS))
async def test_no_failure_path_leaks_the_key(
    adapter: str,
    emulators: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    emu = emulators[adapter]
    vendor: Any = create_vendor(cfg(adapter, endpoint(adapter, emu)))
    seen: list[str] = [repr(vendor), str(vendor)]
    for name, script in FAILURES.items():
        emu.push(*script)
        with pytest.raises(VendorError) as info:
            await vendor.complete(REQUEST, RubricAnswer)
        err = info.value
        seen += [str(err), repr(err), err.cause, "".join(traceback.format_exception(err)), repr(vars(err))]
        assert err.attempts >= 1, name
    ok = await vendor.complete(REQUEST, RubricAnswer)  # and the success path
    seen += [repr(ok), ok.model_dump_json()]
    seen += [repr(vendor), repr(vars(vendor)), repr(vendor.budget)]
    await vendor.aclose()
    # the key really was sent (so the test would catch a leak of what the SDK holds)
    assert any(SENTINEL in " ".join(r.headers.values()) for r in emu.requests)
    out, err_text = capfd.readouterr()
    assert_clean(*seen, caplog.text, out, err_text)
    assert any("retrying" in r.getMessage() for r in caplog.records)  # the logs were exercised


@pytest.mark.parametrize("adapter", list(EMULATORS))
async def test_an_unreachable_endpoint_does_not_leak_the_key(
    adapter: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ep = f"http://127.0.0.1:{port}" + ("/v1" if adapter == "openai" else "")
    vendor = create_vendor(cfg(adapter, ep))
    with pytest.raises(VendorError) as info:
        await vendor.complete(REQUEST, RubricAnswer)
    await vendor.aclose()
    assert info.value.kind.value in ("transient", "timeout")
    assert_clean(
        str(info.value), repr(info.value), "".join(traceback.format_exception(info.value)), caplog.text
    )


def test_a_missing_key_names_the_variable_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    monkeypatch.delenv(ENV)
    vendor = create_vendor(cfg("openai", "http://127.0.0.1:9/v1"))
    with pytest.raises(VendorError, match=ENV):
        asyncio.run(vendor.complete(REQUEST, RubricAnswer))
