"""The one place that maps a configuration's `adapter` name to the class that implements it.

Why a decorator over small factory functions (as Inspect AI registers its model providers):
adding a vendor is one adapter module plus one decorated function here, and importing this
module imports no SDK — each factory imports its adapter module (and so its SDK) only when a
vendor of that kind is created. anthropic alone costs over a second to import.

Adapters that are not vendors — `offline` (heuristic answers in-process) and `zero` (a fixed
answer at once) — live with the other doubles in the `doubles` package, which the library never
imports: they plug in through the `tribunal.adapters` entry points (`PLUGIN_GROUP`, declared in
pyproject.toml), loaded like the vendors here, only when named.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from evalcore.errors import ConfigError
from evalcore.vendors.batch.protocol import BatchAPI
from evalcore.vendors.protocol import Vendor

if TYPE_CHECKING:  # the configuration validates `adapter:` against this registry, so it imports us
    from evalcore.config.models import VendorConfig

AdapterFactory = Callable[..., Vendor]

_REGISTRY: dict[str, Callable[[], AdapterFactory]] = {}
_NEEDS_KEY: dict[str, bool] = {}

PLUGIN_GROUP = "tribunal.adapters"
"""Entry-point group of adapters other packages plug in (`name = "module:Class"`)."""


@functools.cache
def _plugged() -> dict[str, Callable[[], AdapterFactory]]:
    """The adapters of `PLUGIN_GROUP`, each loaded (imported) only when asked for; a name the
    registry has already is not replaced."""
    return {ep.name: ep.load for ep in entry_points(group=PLUGIN_GROUP) if ep.name not in _REGISTRY}


def _loader(name: str) -> Callable[[], AdapterFactory] | None:
    return _REGISTRY.get(name) or _plugged().get(name)


def register(
    name: str, *, needs_key: bool = True
) -> Callable[[Callable[[], AdapterFactory]], Callable[[], AdapterFactory]]:
    """Register a function that imports and returns the adapter class for `name`.

    This is the only step to add a vendor: from then on a configuration may say `adapter: name`
    (the configuration validates adapter names against `adapters()`). `needs_key` says whether
    its vendors need an API key; it is declared here so a missing key is found before any SDK
    is imported (a test keeps it equal to the adapter class's own `needs_key`).
    """

    def wrap(loader: Callable[[], AdapterFactory]) -> Callable[[], AdapterFactory]:
        if name in _REGISTRY:
            raise ValueError(f"adapter {name!r} is registered twice")
        _REGISTRY[name] = loader
        _NEEDS_KEY[name] = needs_key
        return loader

    return wrap


def needs_key(adapter: str) -> bool:
    """True when vendors of this adapter need an API key (unknown adapters: True). A plugged-in
    adapter says so itself (its class's `needs_key`), read when first asked."""
    if adapter not in _NEEDS_KEY and adapter in _plugged():
        _NEEDS_KEY[adapter] = bool(getattr(_plugged()[adapter](), "needs_key", True))
    return _NEEDS_KEY.get(adapter, True)


def adapters() -> list[str]:
    """Names a configuration may use in `adapter:` (the registered ones and the plugged-in ones)."""
    return sorted({*_REGISTRY, *_plugged()})


def create_vendor(cfg: VendorConfig, **kwargs: Any) -> Vendor:
    """Build the vendor for one configuration entry (no network, no client yet).

    Keyword arguments go to the adapter (`budget=` a shared `RateBudget`, and `clock`, `sleep`,
    `rng` for tests). The SDK client is created lazily inside the event loop of the first call.
    """
    loader = _loader(cfg.adapter)
    if loader is None:
        raise ConfigError(
            f"vendor {cfg.name!r}: unknown adapter {cfg.adapter!r}; known adapters: {', '.join(adapters())}"
        )
    return loader()(cfg, **kwargs)


def import_adapter(name: str) -> None:
    """Import adapter `name`'s module (and so its SDK) now, without creating anything.

    Why: importing an SDK costs 0.2-1.5 CPU-s (anthropic the most); a sweep's vendor actor does it
    as it starts, while the driver reads the submissions and prices them, instead of on its first
    call, which is the preflight every grading call waits for. Unknown names are left to
    `create_vendor`, which names them."""
    loader = _loader(name)
    if loader is not None:
        loader()


@register("openai")
def _openai() -> AdapterFactory:
    from evalcore.vendors.adapters.openai import OpenAIVendor

    return OpenAIVendor


@register("anthropic")
def _anthropic() -> AdapterFactory:
    from evalcore.vendors.adapters.anthropic import AnthropicVendor

    return AnthropicVendor


@register("xai")
def _xai() -> AdapterFactory:
    from evalcore.vendors.adapters.xai import XAIVendor

    return XAIVendor


_BATCH_REGISTRY: dict[str, Callable[[], Callable[..., BatchAPI]]] = {}


def register_batch(name: str) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Register a function that imports and returns the batch adapter class for `name`."""

    def wrap(loader: Callable[[], Any]) -> Callable[[], Any]:
        if name in _BATCH_REGISTRY:
            raise ValueError(f"batch adapter {name!r} is registered twice")
        _BATCH_REGISTRY[name] = loader
        return loader

    return wrap


def has_batch_api(cfg: VendorConfig) -> bool:
    """True when the adapter has a batch API (the offline adapter has none: it costs nothing)."""
    return cfg.adapter in _BATCH_REGISTRY


def create_batch_api(cfg: VendorConfig) -> BatchAPI:
    """The batch adapter for one configuration entry (no network, no client yet)."""
    loader = _BATCH_REGISTRY.get(cfg.adapter)
    if loader is None:
        raise ConfigError(
            f"vendor {cfg.name!r}: adapter {cfg.adapter!r} has no batch API; "
            f"batch adapters: {', '.join(sorted(_BATCH_REGISTRY))}"
        )
    api: BatchAPI = loader()(cfg)
    return api


@register_batch("openai")
def _openai_batch() -> Any:
    from evalcore.vendors.batch.openai import OpenAIBatch

    return OpenAIBatch


@register_batch("anthropic")
def _anthropic_batch() -> Any:
    from evalcore.vendors.batch.anthropic import AnthropicBatch

    return AnthropicBatch


@register_batch("xai")
def _xai_batch() -> Any:
    from evalcore.vendors.batch.xai import XAIBatch

    return XAIBatch
