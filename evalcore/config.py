"""Configuration: one model for the whole run, loaded from YAML and the environment.

Secrets live only in the environment: a vendor names the variable holding its key
(`api_key_env`), the key is read when the client is created and is never stored in a config
object, serialised into run.json, logged or put into an exception.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator

from evalcore.errors import ConfigError
from evalcore.scoring import PANEL_SIZE, AuditMode

DEFAULTS_FILE = Path(__file__).with_name("config") / "defaults.yaml"


class Price(BaseModel):
    """USD per 1M tokens."""

    input: float = 0.0
    cached_input: float = 0.0
    output: float = 0.0

    def cost(self, input_tokens: int, cached_input_tokens: int, output_tokens: int) -> float:
        """Cost of one call; cached input tokens are a subset of input tokens, priced separately."""
        uncached = max(input_tokens - cached_input_tokens, 0)
        return (
            uncached * self.input + cached_input_tokens * self.cached_input + output_tokens * self.output
        ) / 1_000_000


class RateLimits(BaseModel):
    """A vendor's published limits for this account and model (the budget stays just under them)."""

    requests_per_minute: int = Field(default=600, gt=0)
    tokens_per_minute: int = Field(default=2_000_000, gt=0)


class RetryPolicy(BaseModel):
    """One retry policy for every vendor (SDK retries are off)."""

    max_attempts: int = Field(default=6, ge=1)
    deadline_s: float = Field(default=900.0, gt=0)
    base_delay_s: float = Field(default=0.5, ge=0)
    max_delay_s: float = Field(default=60.0, gt=0)
    bad_output_retries: int = Field(default=2, ge=0)


class VendorConfig(BaseModel):
    """One judge or auditor: which adapter, which model, its settings, limits and prices."""

    adapter: Literal["openai", "anthropic", "xai", "offline"] = Field(
        description="Registry key of the adapter (evalcore.vendors.registry)."
    )
    name: str = Field(description="Name of this judge in tables (usually the vendor).")
    family: str = Field(description="Model family, for self-family preference (openai, xai, anthropic).")
    model: str
    reasoning_effort: str | None = None
    max_output_tokens: int = Field(default=2048, gt=0)
    timeout_s: float = Field(default=120.0, gt=0)
    endpoint: str | None = Field(default=None, description="Base URL (HTTP) or host:port (gRPC).")
    api_key_env: str | None = Field(default=None, description="Environment variable holding the key.")
    limits: RateLimits = Field(default_factory=RateLimits)
    price: Price = Field(default_factory=Price)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    prompt_caching: bool = True
    max_in_flight: int = Field(
        default=64, gt=0, description="Attempts on the wire at once per vendor client (the budget sets the rate)."
    )

    def api_key(self) -> SecretStr | None:
        """Read the key from the environment at the moment a client is built; never stored."""
        if not self.api_key_env:
            return None
        value = os.environ.get(self.api_key_env)
        return SecretStr(value) if value else None


class AuditConfig(BaseModel):
    """Stage B settings."""

    mode: AuditMode = Field(
        default=AuditMode.SCORED, description="scored: audit only task score > 0 (the rule); always: debug."
    )
    grounding_candidates: bool = Field(default=True, description="Give Stage 1 the grounding flags.")


class PromptBudget(BaseModel):
    """Token budgets per prompt (estimated at 4 characters per token); over budget -> too_long."""

    rubric_tokens: int = 180_000
    audit_tokens: int = 180_000
    chars_per_token: float = 4.0


class TribunalConfig(BaseModel):
    """Everything a run needs besides its inputs; recorded (without secrets) in run.json."""

    judges: list[VendorConfig]
    auditor: VendorConfig
    audit: AuditConfig = Field(default_factory=AuditConfig)
    prompt_budget: PromptBudget = Field(default_factory=PromptBudget)
    family_map: dict[str, str] = Field(
        default_factory=dict, description="Evaluated system name (or prefix) -> model family."
    )
    bootstrap_samples: int = 2000
    seed: int = 20261130

    @field_validator("judges")
    @classmethod
    def _three_judges(cls, value: list[VendorConfig]) -> list[VendorConfig]:
        if len(value) != PANEL_SIZE:
            raise ValueError(f"the panel needs exactly {PANEL_SIZE} judges, got {len(value)}")
        names = [v.name for v in value]
        if len(set(names)) != PANEL_SIZE:
            raise ValueError(f"judge names must be distinct, got {names}")
        return value

    @model_validator(mode="after")
    def _auditor_name_distinct(self) -> TribunalConfig:
        if self.auditor.name in {j.name for j in self.judges}:
            raise ValueError(f"auditor name {self.auditor.name!r} must differ from the judges' names")
        return self

    def vendors(self) -> list[VendorConfig]:
        """Judges then the auditor: each gets its own client and rate budget (one actor each).

        The auditor is a separate entry even when it is the same vendor as a judge: it runs a
        different model setting (high effort) and its own budget line, so a sweep's audit
        traffic is visible and limited on its own.
        """
        return [*self.judges, self.auditor]

    def family_of(self, system: str) -> str | None:
        """Family of an evaluated system: exact name first, then the longest matching prefix."""
        if system in self.family_map:
            return self.family_map[system]
        best = None
        for prefix, fam in self.family_map.items():
            if system.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
                best = (prefix, fam)
        return best[1] if best else None

    def public_dict(self) -> dict[str, Any]:
        """The configuration as recorded in run.json (no secrets exist in it by construction)."""
        return self.model_dump(mode="json")


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def load_config(
    path: str | Path | None = None,
    *,
    vendors: Literal["real", "emulated", "offline"] = "real",
    overrides: dict[str, Any] | None = None,
) -> TribunalConfig:
    """Load defaults.yaml, then the user's YAML, then overrides; `vendors` picks a preset.

    `offline` swaps every judge and the auditor to the in-process offline adapter (keeping
    names and families so tables look the same); `emulated` keeps the real adapters and expects
    endpoints to be filled in by whoever started the emulators.
    """
    try:
        data: dict[str, Any] = yaml.safe_load(DEFAULTS_FILE.read_text()) or {}
        if path is not None:
            user = yaml.safe_load(Path(path).read_text()) or {}
            if not isinstance(user, dict):
                raise ConfigError(f"{path}: top level must be a mapping")
            data = _deep_merge(data, user)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path or DEFAULTS_FILE}: {exc}") from exc
    if overrides:
        data = _deep_merge(data, overrides)
    try:
        cfg = TribunalConfig.model_validate(data)
    except Exception as exc:
        raise ConfigError(f"{path or DEFAULTS_FILE}: invalid configuration: {exc}") from exc
    if vendors == "offline":
        cfg = cfg.model_copy(
            update={
                "judges": [j.model_copy(update={"adapter": "offline"}) for j in cfg.judges],
                "auditor": cfg.auditor.model_copy(update={"adapter": "offline"}),
            }
        )
    return cfg
