"""Loading the configuration: defaults.yaml, the user's YAML, TRIBUNAL_* variables and overrides.

pydantic-settings reads and merges the sources (`TribunalSettings`); the result is validated as a
plain `TribunalConfig` (`evalcore.config.models`) with the adapter names checked against the vendor
registry here, where the configuration is loaded — the models themselves import no vendor code.
An error names the file or variable, the key and its closest valid name (`explain`). A model id
the installed SDK does not list is a warning, not an error (`evalcore.config.model_ids`).
"""
from __future__ import annotations

import difflib
import os
import typing
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from evalcore.config.model_ids import warn_unknown_models
from evalcore.config.models import ADAPTERS_CONTEXT, TribunalConfig, VendorMode
from evalcore.errors import ConfigError
from evalcore.vendors.registry import adapters

DEFAULTS_FILE = Path(__file__).with_name("defaults.yaml")
ENV_PREFIX = "TRIBUNAL_"
ENV_NESTED_DELIMITER = "__"
_YAML_FILES: ContextVar[tuple[Path, ...]] = ContextVar("tribunal_config_yaml_files", default=())


class TribunalSettings(BaseSettings, TribunalConfig):
    """`TribunalConfig` read by pydantic-settings: overrides, then the environment, then YAML files.

    Used only by `load_config`: its result is re-validated as a plain `TribunalConfig`, so no other
    code path (a worker validating the run's configuration, the reduction reading run.json) ever
    reads the environment or a file behind the caller's back.
    """

    model_config = SettingsConfigDict(
        extra="forbid", env_prefix=ENV_PREFIX, env_nested_delimiter=ENV_NESTED_DELIMITER, case_sensitive=False
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Highest priority first: explicit overrides, TRIBUNAL_* variables, the user's YAML, the defaults."""
        files = reversed(_YAML_FILES.get())
        return (init_settings, env_settings, *(YamlConfigSettingsSource(settings_cls, yaml_file=f) for f in files))


@contextmanager
def _yaml_files(files: Sequence[Path]) -> Iterator[None]:
    token = _YAML_FILES.set(tuple(files))
    try:
        yield
    finally:
        _YAML_FILES.reset(token)


def _read_mapping(path: Path) -> dict[str, Any]:
    """One YAML file, checked to be a mapping (its errors name the file)."""
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    return data


def _model_at(loc: Sequence[int | str]) -> type[BaseModel] | None:
    """The configuration model that holds the key at `loc` (list indices and dict keys skipped)."""
    model: type[BaseModel] = TribunalConfig
    for part in loc:
        if isinstance(part, int):
            continue
        f = model.model_fields.get(part)
        if f is None:
            return None
        inner = _model_in(f.annotation)
        if inner is None:
            return None
        model = inner
    return model


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _has_key(data: Any, loc: Sequence[int | str]) -> bool:
    for part in loc:
        if isinstance(part, int) and isinstance(data, list) and 0 <= part < len(data):
            data = data[part]
        elif isinstance(part, str) and isinstance(data, Mapping) and part in data:
            data = data[part]
        else:
            return False
    return True


ENV_SOURCE = "environment"


def _env_name(loc: Sequence[int | str]) -> str:
    return ENV_PREFIX + ENV_NESTED_DELIMITER.join(str(p).upper() for p in loc if isinstance(p, str))


def _env_data() -> dict[str, Any]:
    """The TRIBUNAL_* variables as the nested mapping they are read into (for naming a problem's source)."""
    data: dict[str, Any] = {}
    for key, value in os.environ.items():
        if not key.upper().startswith(ENV_PREFIX):
            continue
        *parents, leaf = key[len(ENV_PREFIX):].lower().split(ENV_NESTED_DELIMITER)
        node = data
        for p in parents:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                break
        else:
            node[leaf] = value
    return data


def _source_of(loc: tuple[int | str, ...], sources: Sequence[tuple[str, Mapping[str, Any]]], whole: bool) -> str | None:
    """The highest-priority source holding `loc` (or, unless `whole`, the longest part of it).

    Mappings merge across sources but lists replace: below a list, only the highest-priority
    source holding that list counts.
    """
    live = list(sources)
    for i, part in enumerate(loc):
        if isinstance(part, int):
            owner = next(((name, data) for name, data in live if _has_key(data, loc[:i])), None)
            live = [owner] if owner is not None else []
    lengths = [len(loc)] if whole else list(range(len(loc), 0, -1))
    for n in lengths:
        for name, data in live:
            if n and _has_key(data, loc[:n]):
                return f"{ENV_SOURCE} {_env_name(loc[:n])}" if name == ENV_SOURCE else name
    return None


def explain(exc: ValidationError, sources: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """A validation error as `source: key: reason` lines a user can act on.

    `sources` are (name, data) pairs, highest priority first (the name `environment` stands for the
    TRIBUNAL_* variables, named one by one). An unknown key names the source that set it; a missing
    or bad value the source holding the longest part of its path. An unknown key also gets its
    closest valid name (difflib), so `bootstrap_sample` points at `bootstrap_samples`.
    """
    lines = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        unknown = err["type"] == "extra_forbidden"
        where = _source_of(loc, sources, whole=unknown) or "configuration"
        if unknown and loc:
            model = _model_at(loc[:-1])
            valid = list(model.model_fields) if model is not None else []
            close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; valid keys: {', '.join(valid)}"
            lines.append(f"{where}: unknown key {dotted!r}{hint}")
        else:
            lines.append(f"{where}: {dotted}: {err['msg']}")
    return "\n".join(lines)


def load_config(
    path: str | Path | None = None,
    *,
    vendors: VendorMode = VendorMode.REAL,
    overrides: dict[str, Any] | None = None,
) -> TribunalConfig:
    """Load defaults.yaml, the user's YAML, TRIBUNAL_* variables, then overrides; `vendors` picks a preset.

    `offline` swaps every judge and the auditor to the in-process offline adapter (keeping
    names and families so tables look the same); `emulated` keeps the real adapters and expects
    endpoints to be filled in by whoever started the emulators.
    """
    files = [DEFAULTS_FILE] + ([Path(path)] if path is not None else [])
    data = {str(f): _read_mapping(f) for f in files}
    try:
        with _yaml_files(files):
            loaded = TribunalSettings(**(overrides or {}))
        cfg = TribunalConfig.model_validate(loaded.model_dump(), context={ADAPTERS_CONTEXT: adapters()})
    except ValidationError as exc:
        sources = [("overrides", overrides or {}), (ENV_SOURCE, _env_data()), *reversed(list(data.items()))]
        raise ConfigError(f"invalid configuration:\n{explain(exc, sources)}") from exc
    if vendors != VendorMode.OFFLINE:  # offline judges call no model
        warn_unknown_models(cfg)
    if vendors == VendorMode.OFFLINE:
        cfg = cfg.model_copy(
            update={
                "judges": [j.model_copy(update={"adapter": "offline"}) for j in cfg.judges],
                "auditor": cfg.auditor.model_copy(update={"adapter": "offline"}),
            }
        )
    return cfg
