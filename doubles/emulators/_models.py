"""Which model ids an emulator serves: the installed SDK's own list plus the ids it is told to accept.

Why: a vendor answers a model id it does not serve with a 404 (OpenAI `model_not_found`, Anthropic
`not_found_error`, xAI NOT_FOUND), and an emulator that accepts any string lets a misspelled id
(`claude-opus-5.5` for `claude-opus-5-5`) pass every test and stop the first real run. The SDKs'
lists are the ids the vendor published when the SDK was generated, read by
`evalcore.config.model_ids` (the same lists the configuration's check warns against, so the
emulator refuses exactly what that check warns about, unless the id is accepted). Vendors ship
models before their SDKs list them: `EmulatorConfig.accept_models` adds ids (a newer model, a
test's own), and `emulator_config_from` adds the default configuration's `known_newer_models`.
"""

from __future__ import annotations

from functools import cache

import yaml

from doubles.emulators._config import EmulatorConfig
from evalcore.config.load import DEFAULTS_FILE
from evalcore.config.model_ids import known_models


@cache
def default_newer_models() -> tuple[str, ...]:
    """Every id the default configuration (`evalcore/config/defaults.yaml`) lists in
    `known_newer_models`: models its vendor serves that the installed SDK does not list yet."""
    data = yaml.safe_load(DEFAULTS_FILE.read_text()) or {}
    newer = data.get("known_newer_models") or {}
    return tuple(sorted({model for ids in newer.values() for model in ids or ()}))


class ModelCatalog:
    """The model ids one emulator serves (checked only when `refuse_unknown_models` is on)."""

    def __init__(self, vendor: str, config: EmulatorConfig) -> None:
        self.enforced = config.refuse_unknown_models
        listed = known_models(vendor)
        self.sdk = f"{listed.sdk} {listed.version}" if listed is not None else None
        self.ids = frozenset(listed.ids if listed is not None else ()) | frozenset(config.accept_models)

    def serves(self, model: str) -> bool:
        """True unless refusal is on and `model` is neither listed by the SDK nor accepted."""
        return not self.enforced or model in self.ids
