"""`tribunal emulate`: serve the three emulators until interrupted, and say how to use them.

Why print a config snippet: a sweep reaches vendors only through `VendorConfig.endpoint` and the
key's environment variable, so the most direct way to point a sweep at the emulators is a YAML
file passed with `--config` (plus a dummy key in the environment). Its key variables
(`evalcore.emulation.KEY_ENV`) mark it as emulated: a run made with it records `vendors: emulated`.

`emulator_config_from` is the one builder of the emulators' configuration from the options
`tribunal emulate` and `tribunal sweep --vendors emulated` share (`EmulationOptions`): both
commands emulate alike, and every emulator enforces its vendor's own bucket.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

import yaml
from pydantic import SecretStr, ValidationError

from doubles.emulators._config import (
    BatchSettings,
    EmulatorConfig,
    FaultRates,
    FixedLatency,
    LognormalLatency,
    ServerLimits,
)
from doubles.emulators._models import default_newer_models
from doubles.emulators._set import VENDORS, EmulatorSet
from doubles.emulators.responders import Responder
from evalcore.config.load import load_config
from evalcore.config.models import RateLimits, TribunalConfig, VendorConfig
from evalcore.emulation import (
    DEFAULT_REQUESTS_PER_MINUTE,
    DEFAULT_TOKENS_PER_MINUTE,
    EMULATED_KEY,
    KEY_ENV,
    EmulationOptions,
)
from evalcore.errors import ConfigError
from evalcore.vendors.budget import VENDOR_BURST_S

__all__ = [
    "CONFIG_HEADER",
    "EMULATED_LIMITS",
    "KEY_ENV",
    "budget_limits",
    "emulated_config",
    "emulator_config_from",
    "per_vendor",
    "point_at_emulators",
    "serve_forever",
    "usage_text",
]

EmulatorConfigs = Mapping[str, EmulatorConfig]
"""One configuration per emulator, keyed like `VendorConfig.adapter` (openai, anthropic, xai)."""


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


EMULATED_LIMITS = RateLimits(
    requests_per_minute=DEFAULT_REQUESTS_PER_MINUTE, tokens_per_minute=DEFAULT_TOKENS_PER_MINUTE
)
"""Each emulated vendor's budget by default (`evalcore.emulation.DEFAULT_REQUESTS_PER_MINUTE`)."""


def point_at_emulators(
    config: TribunalConfig, endpoints: dict[str, str], limits: RateLimits | None = EMULATED_LIMITS
) -> TribunalConfig:
    """Every judge and the auditor aimed at the local emulator of its adapter, with a dummy key."""
    for env in KEY_ENV.values():
        os.environ.setdefault(env, EMULATED_KEY)
    return TribunalConfig.model_validate({**config.public_dict(), **emulated_config(endpoints, config, limits)})


def emulator_config_from(
    options: EmulationOptions | None = None, *, api_key: str | None = None, accept_models: Iterable[str] = ()
) -> dict[str, EmulatorConfig]:
    """Each emulator's configuration for `options`: the one builder behind `tribunal emulate` and
    `tribunal sweep --vendors emulated`.

    `latency_s` is the median of a lognormal latency (sigma 0.5); `fault_rate` is split equally
    between 429, 5xx, malformed and truncated answers (hangs are left out: they would only stall a
    sweep for its timeout); `batch_delay_s` is how long a batch takes to end, `batch_errors` the
    share of batched requests answered errored. A `file` (YAML of an `EmulatorConfig`) replaces
    those knobs. Either way each emulator enforces the limits as its vendor does
    (`evalcore.vendors.budget.VENDOR_BURST_S`: OpenAI in one-second slices of the per-minute limit,
    Anthropic and xAI over the whole minute), the bucket the sweep's budget models, unless the file
    sets `limits.burst_s` itself; and it answers a model id it does not serve with the vendor's 404
    (`refuse_unknown_models`, unless the file turns it off), serving the SDKs' model lists, the
    default configuration's `known_newer_models`, the file's `accept_models` and `accept_models`
    (a run's own configuration's `known_newer_models`, say).
    `api_key`, if given, must be presented (401 otherwise).
    """
    opts = options or EmulationOptions()
    if opts.file is not None:
        try:
            base = EmulatorConfig.model_validate(yaml.safe_load(Path(opts.file).read_text()) or {})
        except (OSError, yaml.YAMLError, ValidationError) as exc:
            raise ConfigError(f"{opts.file}: not a valid emulator configuration: {exc}") from exc
    else:
        share = opts.fault_rate / 4
        base = EmulatorConfig(
            limits=ServerLimits(
                requests_per_minute=opts.requests_per_minute, tokens_per_minute=opts.tokens_per_minute
            ),
            latency=LognormalLatency(median=opts.latency_s, sigma=0.5) if opts.latency_s > 0 else FixedLatency(),
            faults=FaultRates(rate_limit=share, server_error=share, malformed=share, truncated=share),
            seed=opts.seed,
            max_recorded=1000,  # long-running or in the driver's process: bound the request log
            batch=BatchSettings(completion_s=opts.batch_delay_s, error_rate=opts.batch_errors),
        )
    if api_key:
        base = base.model_copy(update={"api_key": SecretStr(api_key)})
    served = _serving_known_models(base, accept_models)
    return {vendor: _with_vendor_bucket(served, vendor) for vendor in VENDORS}


def _serving_known_models(config: EmulatorConfig, extra: Iterable[str] = ()) -> EmulatorConfig:
    """`config` answering an unknown model id as the vendor does (unless it says otherwise) and
    serving, besides the SDKs' lists and its own `accept_models`, the default configuration's
    `known_newer_models` (ids the vendor serves that the installed SDK does not list yet)."""
    accepted = list(dict.fromkeys([*config.accept_models, *default_newer_models(), *extra]))
    refuse = config.refuse_unknown_models if "refuse_unknown_models" in config.model_fields_set else True
    return config.model_copy(update={"refuse_unknown_models": refuse, "accept_models": accepted})


def _with_vendor_bucket(config: EmulatorConfig, vendor: str) -> EmulatorConfig:
    """`config` enforcing its limits in `vendor`'s bucket (unless it states `burst_s` itself)."""
    if "burst_s" in config.limits.model_fields_set:
        return config
    limits = config.limits.model_copy(update={"burst_s": VENDOR_BURST_S.get(vendor, 60.0)})
    return config.model_copy(update={"limits": limits})


def per_vendor(configs: EmulatorConfig | EmulatorConfigs | None) -> dict[str, EmulatorConfig]:
    """One configuration per emulator: the builder's defaults for None, and one configuration given
    for all three enforcing each vendor's own bucket (unless it states `burst_s`)."""
    if configs is None:
        return emulator_config_from()
    if isinstance(configs, EmulatorConfig):
        return {vendor: _with_vendor_bucket(configs, vendor) for vendor in VENDORS}
    return dict(configs)


def budget_limits(configs: EmulatorConfig | EmulatorConfigs) -> RateLimits | None:
    """The sweep-side limits matching what the emulators enforce (None if they enforce none).

    The bucket's size is left to each vendor's own (`VENDOR_BURST_S`), as each emulator enforces
    it, unless the emulators were all told one size (`burst_s` in an emulator configuration file).
    """
    config = configs if isinstance(configs, EmulatorConfig) else next(iter(configs.values()))
    if not (config.limits.requests_per_minute or config.limits.tokens_per_minute):
        return None
    return RateLimits(
        requests_per_minute=config.limits.requests_per_minute or RateLimits().requests_per_minute,
        tokens_per_minute=config.limits.tokens_per_minute or RateLimits().tokens_per_minute,
        burst_s=_stated_burst(configs),
    )


def _stated_burst(configs: EmulatorConfig | EmulatorConfigs) -> float | None:
    """The bucket size every emulator was told (None: each enforces its vendor's own)."""
    if isinstance(configs, EmulatorConfig):
        return configs.limits.burst_s if "burst_s" in configs.limits.model_fields_set else None
    if all(c.limits.burst_s == VENDOR_BURST_S.get(v, 60.0) for v, c in configs.items()):
        return None
    bursts = {c.limits.burst_s for c in configs.values()}
    return bursts.pop() if len(bursts) == 1 else None


def usage_text(
    endpoints: Mapping[str, str],
    configs: EmulatorConfig | EmulatorConfigs,
    config_path: Path | None,
    base: TribunalConfig | None = None,
) -> str:
    """What `tribunal emulate` prints: endpoints, env vars, and the YAML to pass with --config."""
    per = per_vendor(configs)
    snippet = yaml.safe_dump(emulated_config(endpoints, base, limits=budget_limits(per)), sort_keys=False)
    key_value = (
        "<the key in your --api-key-env variable>"
        if any(c.api_key is not None for c in per.values())
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
        lines.append(f"  (its {', '.join(sorted(KEY_ENV.values()))} key variables mark it as emulated:")
        lines.append("  a run made with it records vendors: emulated)")
    else:
        lines.append("Config to pass with --config (YAML):")
        lines.extend("  " + line for line in snippet.splitlines())
    lines += ["", "Press Ctrl+C to stop."]
    return "\n".join(lines)


CONFIG_HEADER = (
    "# Written by `tribunal emulate`: every vendor aimed at a local emulator. The TRIBUNAL_EMULATED_*\n"
    "# key variables mark these endpoints as emulated: a run made with this file records vendors: emulated.\n"
)


async def serve_forever(
    config: EmulatorConfig | EmulatorConfigs | None = None,
    *,
    ports: Mapping[str, int] | None = None,
    responder: Responder | None = None,
    config_out: Path | None = None,
    out: TextIO | None = None,
    stop: asyncio.Event | None = None,
    base: TribunalConfig | None = None,
) -> None:
    """Serve OpenAI, Anthropic and xAI emulators on 127.0.0.1 until `stop` is set or cancelled.

    `config` is one configuration per emulator (`emulator_config_from`) or one for all three,
    enforced in each vendor's own bucket (`per_vendor`). `ports` maps vendor -> port (0 or missing
    = any free port). With `config_out`, the YAML pointing `base`'s vendors (default: the default
    configuration's) at the emulators is written there; either way the usage text is printed to `out`.
    """
    configs = per_vendor(config)
    stream = out or sys.stdout
    emulators = EmulatorSet(
        openai=configs.get("openai"), anthropic=configs.get("anthropic"), xai=configs.get("xai"),
        responder=responder, ports=ports,
    )
    async with emulators:
        endpoints = emulators.endpoints()
        if config_out is not None:
            snippet = emulated_config(endpoints, base, limits=budget_limits(configs))
            config_out.write_text(CONFIG_HEADER + yaml.safe_dump(snippet, sort_keys=False))
        print(usage_text(endpoints, configs, config_out, base), file=stream, flush=True)
        await (stop or asyncio.Event()).wait()
