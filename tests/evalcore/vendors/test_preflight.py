"""Preflight: one minimal call per vendor; a failure names the vendor, model and cause, never the key."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import SecretStr

from doubles.emulators import AuthError, EmulatorConfig, EmulatorSet, ServerError
from evalcore.config.models import VendorConfig
from evalcore.errors import PreflightError
from evalcore.vendors.preflight import preflight, raise_if_failed
from evalcore.vendors.registry import create_vendor

KEY = "pf-key-not-a-real-key-77"
ENV = {"openai": "TRIBUNAL_PF_OPENAI", "anthropic": "TRIBUNAL_PF_ANTHROPIC", "xai": "TRIBUNAL_PF_XAI"}
FAST_RETRY = {"max_attempts": 10, "deadline_s": 30, "base_delay_s": 0.01, "max_delay_s": 0.02}


def vendor_cfg(adapter: str, endpoint: str | None, **overrides: Any) -> VendorConfig:
    data: dict[str, Any] = {
        "adapter": adapter,
        "name": f"{adapter}-judge",
        "family": adapter,
        "model": f"{adapter}-model-x",
        "endpoint": endpoint,
        "api_key_env": ENV.get(adapter),
        "timeout_s": 5,
        "retry": FAST_RETRY,
    }
    data.update(overrides)
    return VendorConfig.model_validate(data)


@pytest.fixture
async def emus(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[EmulatorSet]:
    for env in ENV.values():
        monkeypatch.setenv(env, KEY)
    async with EmulatorSet(EmulatorConfig(api_key=SecretStr(KEY))) as emus:
        yield emus


def all_cfgs(emus: EmulatorSet) -> list[VendorConfig]:
    ep = emus.endpoints()
    return [
        vendor_cfg("openai", ep["openai"]),
        vendor_cfg("anthropic", ep["anthropic"]),
        vendor_cfg("xai", "http://" + ep["xai"]),
        vendor_cfg("offline", None),
    ]


async def test_every_configured_vendor_passes_with_one_call_each(emus: EmulatorSet) -> None:
    results = await preflight(all_cfgs(emus))
    assert [r.ok for r in results] == [True, True, True, True]
    assert [r.vendor for r in results] == ["openai-judge", "anthropic-judge", "xai-judge", "offline-judge"]
    assert [len(e.requests) for e in emus.by_vendor().values()] == [1, 1, 1]
    assert results[3].offline is True
    raise_if_failed(results)


async def test_a_failed_vendor_aborts_naming_vendor_model_and_cause_but_not_the_key(
    emus: EmulatorSet,
) -> None:
    emus.anthropic.push(AuthError())
    results = await preflight(all_cfgs(emus))
    assert [r.ok for r in results] == [True, False, True, True]
    with pytest.raises(PreflightError) as info:
        raise_if_failed(results)
    text = str(info.value)
    assert "anthropic-judge (anthropic-model-x): fatal" in text and "401" in text
    assert "1 of 4" in text
    assert KEY not in text


async def test_a_missing_key_names_the_environment_variable(
    emus: EmulatorSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV["xai"])
    results = await preflight(all_cfgs(emus))
    with pytest.raises(PreflightError, match="xai-judge .*TRIBUNAL_PF_XAI"):
        raise_if_failed(results)
    assert emus.xai.requests == []


async def test_preflight_retries_briefly_whatever_the_vendors_policy(emus: EmulatorSet) -> None:
    emus.openai.push(*[ServerError(503)] * 5)
    (result,) = await preflight([all_cfgs(emus)[0]])
    assert not result.ok and result.kind == "transient" and result.attempts == 3


async def test_an_unreachable_endpoint_is_reported_as_such() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = vendor_cfg("openai", f"http://127.0.0.1:{port}/v1", api_key_env="TRIBUNAL_PF_UNREACHABLE")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRIBUNAL_PF_UNREACHABLE", KEY)
        (result,) = await preflight([cfg])
    assert not result.ok and result.kind == "transient"
    assert "Connection" in (result.cause or "")


async def test_live_vendors_can_be_checked_in_place(emus: EmulatorSet) -> None:
    cfg = all_cfgs(emus)[0]
    live: Any = create_vendor(cfg)
    (result,) = await preflight([cfg], vendors={cfg.name: live})
    assert result.ok
    assert live._client is not None  # not closed: the caller owns it
    await live.aclose()


async def test_every_preflight_call_has_its_calls_row_with_usage(emus: EmulatorSet) -> None:
    cfgs = all_cfgs(emus)[:3]  # the offline one is free
    results = await preflight(cfgs, run_id="r-1")
    rows = [r.call for r in results]
    assert all(row is not None for row in rows)
    for cfg, row in zip(cfgs, rows, strict=True):
        assert row is not None
        assert (row.run_id, row.vendor, row.model, row.purpose, row.outcome) == ("r-1", cfg.name, cfg.model, "preflight", "ok")
        assert (row.submission_id, row.system, row.task_id) == ("", "", "")
        assert row.input_tokens > 0 and row.output_tokens > 0 and row.request_id


def test_a_missing_key_is_refused_before_any_call_naming_every_vendor_and_variable(monkeypatch) -> None:
    from evalcore.errors import ConfigError
    from evalcore.vendors.preflight import require_keys

    for env in ENV.values():
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv(ENV["xai"], KEY)
    cfgs = [vendor_cfg("openai", None), vendor_cfg("openai", None, name="auditor"), vendor_cfg("xai", None),
            vendor_cfg("anthropic", None), vendor_cfg("offline", None, api_key_env=None, name="off")]
    with pytest.raises(ConfigError) as info:
        require_keys(cfgs)
    assert str(info.value) == (
        "openai-judge (openai-model-x), auditor (openai-model-x): no API key: set the environment variable "
        "TRIBUNAL_PF_OPENAI; anthropic-judge (anthropic-model-x): no API key: set the environment variable "
        "TRIBUNAL_PF_ANTHROPIC"
    )
    assert KEY not in str(info.value)
    monkeypatch.setenv(ENV["openai"], KEY)
    monkeypatch.setenv(ENV["anthropic"], KEY)
    require_keys(cfgs)  # every key set: nothing to say


def test_the_registry_knows_which_adapters_need_a_key_without_importing_them() -> None:
    from evalcore.vendors import registry

    for adapter in registry.adapters():  # the doubles plugged in through entry points too
        loader = registry._loader(adapter)
        assert loader is not None
        adapter_class = loader()
        assert registry.needs_key(adapter) is adapter_class.needs_key, adapter  # type: ignore[attr-defined]


@pytest.mark.parametrize("adapter", ["openai", "anthropic"])
async def test_a_model_the_vendor_does_not_have_stops_the_preflight_naming_vendor_and_model_and_what_to_set(
    emus: EmulatorSet, adapter: str
) -> None:
    """A 404 to the preflight's one request: the configured model does not exist at the vendor."""
    getattr(emus, adapter).push(ServerError(404))
    cfg = next(c for c in all_cfgs(emus) if c.adapter == adapter).model_copy(update={"model": "claude-opus-5.5"})
    [result] = await preflight([cfg])
    assert (result.ok, result.kind, result.attempts) == (False, "unknown_model", 1)  # a 404 is never retried
    assert result.call is not None and result.call.outcome == "fatal"
    with pytest.raises(PreflightError) as info:
        raise_if_failed([result])
    text = str(info.value)
    assert f"{adapter}-judge (claude-opus-5.5): unknown_model: the vendor has no model 'claude-opus-5.5'" in text
    assert f"set {adapter}-judge's model to an id the vendor serves (HTTP 404 NotFoundError" in text
    assert KEY not in text
