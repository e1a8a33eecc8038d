"""What an emulated run is asked to be like (`EmulationOptions`), and how a configuration says it
points at emulators (`KEY_ENV`, `points_at_emulators`).

Why apart from `doubles.emulators`: `tribunal sweep` and `tribunal emulate` parse these options
for every run, real ones included, and the run record is decided from them; importing the
emulators themselves (aiohttp, gRPC, the vendor protos) costs seconds, and production code imports
them only in emulated mode (the import contract in pyproject.toml). This module is data only: the
one builder of the emulators' configuration from these options is
`doubles.emulators.serve.emulator_config_from`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from evalcore.config.models import TribunalConfig
from evalcore.errors import ConfigError

DEFAULT_REQUESTS_PER_MINUTE = 6_000
DEFAULT_TOKENS_PER_MINUTE = 60_000_000
"""Each emulated vendor's account limits unless told otherwise: high enough that the sample grades
in seconds, and enforced by the emulators themselves, so every emulated run also exercises the
budget against a server that answers 429 when it is exceeded."""

KEY_ENV = {adapter: f"TRIBUNAL_EMULATED_{adapter.upper()}_KEY" for adapter in ("openai", "anthropic", "xai")}
"""Environment variable per adapter holding the (dummy) key of an emulator. A vendor entry reading
its key from one of these is aimed at an emulator: that is how a configuration written by
`tribunal emulate --write-config` (or built by the emulated mode) marks its endpoints."""

EMULATED_KEY = "emulated-key-not-a-secret"
"""The key the emulated mode puts in `KEY_ENV`'s variables: no secret, so unlike a real key it may
travel to Ray's workers in their runtime environment (`jobs.sweep.startup._env_for_workers`)."""

FLAGS = {
    "requests_per_minute": "--rpm",
    "tokens_per_minute": "--tpm",
    "latency_s": "--latency",
    "fault_rate": "--faults",
    "seed": "--seed",
    "batch_delay_s": "--batch-delay",
    "batch_errors": "--batch-errors",
    "file": "--emulator-config",
}
"""The command-line option of each field (the same for `tribunal sweep` and `tribunal emulate`)."""


@dataclass(frozen=True)
class EmulationOptions:
    """How the emulators behave: the options `tribunal sweep --vendors emulated` and
    `tribunal emulate` share, turned into each emulator's configuration by one builder
    (`doubles.emulators.serve.emulator_config_from`), so the two commands emulate alike.

    Limits are one account's per vendor, enforced as that vendor enforces them (OpenAI in
    one-second slices of the per-minute limit, Anthropic and xAI over the whole minute). `file` is
    a YAML `EmulatorConfig` replacing every other knob (its limits, unless it sets `burst_s`, are
    still enforced as each vendor does).
    """

    requests_per_minute: int = DEFAULT_REQUESTS_PER_MINUTE
    tokens_per_minute: int = DEFAULT_TOKENS_PER_MINUTE
    latency_s: float = 0.0
    """Median answer latency (lognormal, sigma 0.5); 0 = instant."""
    fault_rate: float = 0.0
    """Share of requests failing: 429, 5xx, malformed and truncated answers in equal parts."""
    seed: int = 0
    """Seeds fault injection, latency and batch outcomes."""
    batch_delay_s: float = 0.0
    """Seconds a batch takes to end (past 24 h it expires)."""
    batch_errors: float = 0.0
    """Share of batched requests answered errored."""
    file: str | None = None

    def __post_init__(self) -> None:
        """The CLI bounds these too; a library caller gets the same refusal, naming the option."""
        if self.requests_per_minute < 1 or self.tokens_per_minute < 1:
            raise ConfigError(
                f"--rpm/--tpm: the emulated limits must be positive, got {self.requests_per_minute:,} "
                f"requests and {self.tokens_per_minute:,} tokens per minute"
            )
        for name in ("fault_rate", "batch_errors"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{FLAGS[name]}: a share between 0 and 1, got {value:g}")
        for name in ("latency_s", "batch_delay_s"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{FLAGS[name]}: seconds, at least 0, got {getattr(self, name):g}")

    def given(self) -> list[str]:
        """The options set to something other than their default, as command-line flags."""
        default = EmulationOptions()
        return [FLAGS[f.name] for f in fields(self) if getattr(self, f.name) != getattr(default, f.name)]


def points_at_emulators(config: TribunalConfig) -> bool:
    """True when any judge or the auditor reads its key from an emulator's variable (`KEY_ENV`).

    Such a run's answers come (at least partly) from emulators, whatever `--vendors` said: it is
    recorded as emulated, so the report says so and a run with real vendors never reuses them.
    """
    marks = set(KEY_ENV.values())
    return any(v.api_key_env in marks for v in config.vendors() if v.adapter != "offline")
