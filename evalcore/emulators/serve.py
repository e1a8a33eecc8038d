"""`tribunal emulate`: serve the three emulators until interrupted, and say how to use them.

Why print a config snippet: a sweep reaches vendors only through `VendorConfig.endpoint` and the
key's environment variable, so the most direct way to point a sweep at the emulators is a YAML
file passed with `--config` (plus a dummy key in the environment).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

import yaml
from pydantic import SecretStr, ValidationError

from evalcore.config.load import load_config
from evalcore.config.models import RateLimits, TribunalConfig, VendorConfig
from evalcore.emulators._config import (
    BatchSettings,
    EmulatorConfig,
    FaultRates,
    FixedLatency,
    LognormalLatency,
    ServerLimits,
)
from evalcore.emulators._set import EmulatorSet
from evalcore.emulators.responders import Responder
from evalcore.errors import ConfigError

#: Environment variable per adapter holding the (dummy) key in the printed config.
KEY_ENV = {adapter: f"TRIBUNAL_EMULATED_{adapter.upper()}_KEY" for adapter in ("openai", "anthropic", "xai")}


def emulated_config(
    endpoints: Mapping[str, str], base: TribunalConfig | None = None, limits: RateLimits | None = None
) -> dict[str, Any]:
    """The `judges` + `auditor` overrides pointing every vendor of `base` at the emulators.

    Lists replace (not merge) in Tribunal's YAML layering, so the judges are written out whole;
    fields equal to their defaults are omitted. `limits`, when the emulators enforce limits, is
    copied into every entry as its account's limits: entries sharing an emulator (the openai judge
    and the auditor) share one account and the configuration splits it between them
    (`budget_share`), so together they are budgeted at the server's limit, never above.
    """
    cfg = base or load_config()

    def point(v: VendorConfig) -> dict[str, Any]:
        if v.adapter == "offline":
            return v.model_dump(mode="json", exclude_defaults=True)
        endpoint = endpoints[v.adapter]
        if "://" not in endpoint:  # gRPC host:port: the xai adapter reads http:// as "plaintext channel"
            endpoint = "http://" + endpoint
        update: dict[str, Any] = {"endpoint": endpoint, "api_key_env": KEY_ENV[v.adapter]}
        if limits is not None:
            update["limits"] = limits
        out: dict[str, Any] = v.model_copy(update=update).model_dump(
            mode="json", exclude_defaults=True, exclude={"account_fraction"}
        )
        return out

    return {"judges": [point(j) for j in cfg.judges], "auditor": point(cfg.auditor)}


EMULATED_LIMITS = RateLimits(requests_per_minute=6_000, tokens_per_minute=60_000_000)
"""Each emulated vendor's budget: high enough that the sample grades in seconds, and enforced by
the emulators themselves, so every emulated run also exercises the budget against a server that
answers 429 when it is exceeded."""


def point_at_emulators(
    config: TribunalConfig, endpoints: dict[str, str], limits: RateLimits | None = EMULATED_LIMITS
) -> TribunalConfig:
    """Every judge and the auditor aimed at the local emulator of its adapter, with a dummy key."""
    for env in KEY_ENV.values():
        os.environ.setdefault(env, "emulated-key-not-a-secret")
    return TribunalConfig.model_validate({**config.public_dict(), **emulated_config(endpoints, config, limits)})


def emulator_config_from(
    *,
    file: Path | None = None,
    requests_per_minute: int | None = None,
    tokens_per_minute: int | None = None,
    latency_s: float = 0.0,
    fault_rate: float = 0.0,
    seed: int = 0,
    api_key: str | None = None,
    batch_delay_s: float = 0.0,
    batch_errors: float = 0.0,
) -> EmulatorConfig:
    """The config behind `tribunal emulate`'s options (or a YAML file of `EmulatorConfig`).

    `batch_delay_s` is how long a batch takes to end, `batch_errors` the share of batched requests
    answered errored. `latency_s` is the median of a lognormal latency (sigma 0.5); `fault_rate` is split equally
    between 429, 5xx, malformed and truncated answers (hangs are left out: they would only stall a
    sweep for its timeout).
    """
    if file is not None:
        try:
            return EmulatorConfig.model_validate(yaml.safe_load(file.read_text()) or {})
        except (OSError, yaml.YAMLError, ValidationError) as exc:
            raise ConfigError(f"{file}: not a valid emulator configuration: {exc}") from exc
    if not 0.0 <= fault_rate <= 1.0:
        raise ConfigError(f"fault rate must be between 0 and 1, got {fault_rate}")
    share = fault_rate / 4
    return EmulatorConfig(
        api_key=SecretStr(api_key) if api_key else None,
        limits=ServerLimits(requests_per_minute=requests_per_minute, tokens_per_minute=tokens_per_minute),
        latency=LognormalLatency(median=latency_s, sigma=0.5) if latency_s > 0 else FixedLatency(),
        faults=FaultRates(rate_limit=share, server_error=share, malformed=share, truncated=share),
        seed=seed,
        max_recorded=1000,
        batch=BatchSettings(completion_s=batch_delay_s, error_rate=batch_errors),
    )


def budget_limits(config: EmulatorConfig) -> RateLimits | None:
    """The sweep-side limits matching what the emulators enforce (None if they enforce none)."""
    if not (config.limits.requests_per_minute or config.limits.tokens_per_minute):
        return None
    return RateLimits(
        requests_per_minute=config.limits.requests_per_minute or RateLimits().requests_per_minute,
        tokens_per_minute=config.limits.tokens_per_minute or RateLimits().tokens_per_minute,
    )


def usage_text(endpoints: Mapping[str, str], config: EmulatorConfig, config_path: Path | None) -> str:
    """What `tribunal emulate` prints: endpoints, env vars, and the YAML to pass with --config."""
    snippet = yaml.safe_dump(emulated_config(endpoints, limits=budget_limits(config)), sort_keys=False)
    key_value = (
        "<the key in your --api-key-env variable>"
        if config.api_key is not None
        else "emulated-key-not-secret"
    )
    lines = [
        "Tribunal vendor emulators are listening (127.0.0.1 only):",
        f"  openai     {endpoints['openai']}  (Responses + Chat Completions over HTTP)",
        f"  anthropic  {endpoints['anthropic']}  (Messages over HTTP)",
        f"  xai        {endpoints['xai']}  (gRPC xai_api.Chat/GetCompletion, insecure channel)",
        "  batch APIs: OpenAI /v1/files + /v1/batches, Anthropic /v1/messages/batches, xAI BatchMgmt",
        "  retention: data is kept as the vendors keep it (OpenAI store, files.list/delete/expiry,",
        "    Anthropic batches.list/delete, xAI store_messages); each HTTP emulator lists the",
        "    retention settings it received and what it still keeps at GET /_emulator/received",
        "",
        "Environment for the sweep (keys are dummies; the emulators check them only with --api-key-env):",
        *(f"  export {env}={key_value}" for env in KEY_ENV.values()),
        "  # or, for the SDKs directly:",
        f"  export OPENAI_BASE_URL={endpoints['openai']}",
        f"  export ANTHROPIC_BASE_URL={endpoints['anthropic']}",
        "",
    ]
    if config_path is not None:
        lines.append(
            f"Config written to {config_path}; run a sweep with:  tribunal sweep ... --config {config_path}"
        )
    else:
        lines.append("Config to pass with --config (YAML):")
        lines.extend("  " + line for line in snippet.splitlines())
    lines += ["", "Press Ctrl+C to stop."]
    return "\n".join(lines)


async def serve_forever(
    config: EmulatorConfig | None = None,
    *,
    ports: Mapping[str, int] | None = None,
    responder: Responder | None = None,
    config_out: Path | None = None,
    out: TextIO | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve OpenAI, Anthropic and xAI emulators on 127.0.0.1 until `stop` is set or cancelled.

    `ports` maps vendor -> port (0 or missing = any free port). With `config_out`, the YAML to
    point a sweep at the emulators is written there; either way the usage text is printed to `out`.
    """
    cfg = config or EmulatorConfig(max_recorded=1000)  # long-running: bound the request log
    stream = out or sys.stdout
    async with EmulatorSet(cfg, responder=responder, ports=ports) as emulators:
        endpoints = emulators.endpoints()
        if config_out is not None:
            snippet = emulated_config(endpoints, limits=budget_limits(cfg))
            config_out.write_text(yaml.safe_dump(snippet, sort_keys=False))
        print(usage_text(endpoints, cfg, config_out), file=stream, flush=True)
        await (stop or asyncio.Event()).wait()
