"""Model ids checked where they are configured: against the installed SDK's own list of model names.

Why: every test talks to emulators that accept any model string, so a misspelled id
(`claude-opus-5.5` for Anthropic's `claude-opus-5-5`) passes them all and stops the first real run.
The vendors' SDKs publish the ids they know as `Literal` types; a configured id that none of them
lists draws a warning when the configuration is loaded (`evalcore.config.load.load_config`), naming
the entry, the id, the SDK and version, and the closest ids it does list.

A warning, not a refusal: vendors ship models before their SDKs list them. An id known to be
newer than the installed SDK goes into the configuration's `known_newer_models` (per adapter), which
silences the warning; the preflight (`evalcore.vendors.preflight`) still proves the model answers
before a sweep pays for anything.

Cheap: importing `anthropic` takes over a second, and the sweep's start-up time matters, so the
lists are read from the SDKs' type modules as source text (`ast`, found through the import system
without importing the packages) and cached per process: a few milliseconds, once.
"""

from __future__ import annotations

import ast
import difflib
import importlib.metadata
import importlib.util
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from evalcore.config.models import TribunalConfig, VendorConfig

log = logging.getLogger("evalcore.config")


@dataclass(frozen=True)
class ModelList:
    """Where one adapter's SDK lists its model ids: the distribution and its type modules."""

    package: str
    distribution: str
    modules: tuple[str, ...]
    """Paths inside the package of the modules whose string literals are model ids."""


MODEL_LISTS: Mapping[str, ModelList] = {
    "openai": ModelList(
        "openai", "openai", ("types/shared/chat_model.py", "types/shared/responses_model.py")
    ),
    "anthropic": ModelList("anthropic", "anthropic", ("types/model.py",)),
    "xai": ModelList("xai_sdk", "xai-sdk", ("types/model.py",)),
}
"""Adapters whose SDK publishes its model ids (OpenAI: chat and Responses models; Anthropic: `Model`;
xAI: `ChatModel` and its image and video lists, which share the module). An adapter not here
(offline, zero, one registered by a user) is not checked."""


@dataclass(frozen=True)
class KnownModels:
    """The ids one SDK lists, and which SDK version said so."""

    sdk: str
    version: str
    ids: frozenset[str]


def _literals(source: str) -> set[str]:
    """Every string inside a `Literal[...]` of a module's source."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
            for item in ast.walk(node.slice):
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    found.add(item.value)
    return found


@cache
def known_models(adapter: str) -> KnownModels | None:
    """The model ids the installed SDK of `adapter` lists, or None (no list, or the SDK is not installed).

    `importlib.util.find_spec` of a top-level package locates it without running its `__init__`.
    """
    spec = MODEL_LISTS.get(adapter)
    if spec is None:
        return None
    found = importlib.util.find_spec(spec.package)
    if found is None or not found.submodule_search_locations:
        return None
    root = Path(next(iter(found.submodule_search_locations)))
    ids: set[str] = set()
    for module in spec.modules:
        try:
            ids |= _literals((root / module).read_text())
        except (OSError, SyntaxError):
            continue  # a layout this SDK version does not have: no list, no warning
    if not ids:
        return None
    try:
        version = importlib.metadata.version(spec.distribution)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return KnownModels(spec.distribution, version, frozenset(ids))


def unknown_model(entry: VendorConfig, known_newer: Iterable[str] = ()) -> str | None:
    """Why `entry`'s model id may not exist at its vendor, or None when its SDK lists it (or has no
    list, or the id is in `known_newer`)."""
    known = known_models(entry.adapter)
    if known is None or entry.model in known.ids or entry.model in set(known_newer):
        return None
    close = difflib.get_close_matches(entry.model, sorted(known.ids), n=3, cutoff=0.6)
    hint = f"; closest listed: {', '.join(close)}" if close else ""
    return (
        f"{entry.name}: model {entry.model!r} is not in {known.sdk} {known.version}'s list of {entry.adapter} model "
        f"ids{hint}. If the vendor serves it (vendors ship models before their SDKs list them), add it to "
        f"known_newer_models.{entry.adapter} in the configuration; the preflight checks that it answers."
    )


def unknown_models(config: TribunalConfig) -> list[str]:
    """One line per judge or auditor whose model id its SDK does not list (`unknown_model`)."""
    problems = []
    for entry in config.vendors():
        why = unknown_model(entry, config.known_newer_models.get(entry.adapter, ()))
        if why is not None:
            problems.append(why)
    return problems


_warned: set[str] = set()


def warn_unknown_models(config: TribunalConfig) -> list[str]:
    """Log a warning per unknown model id (once per process: a command that loads its configuration
    twice warns once) and return them all."""
    problems = unknown_models(config)
    for line in problems:
        if line not in _warned:
            _warned.add(line)
            log.warning("warning: %s", line)
    return problems
