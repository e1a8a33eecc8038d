"""A sweep under the configuration's `data_governance`: which batch APIs it may use, where its local caches live.

Why in the driver: both are decided once per sweep, before anything is loaded or sent. A vendor
whose batch API is refused (`batch_allowed`, e.g. xAI under the private preset: its batches cannot
be deleted) stops the sweep with a `ConfigError` naming the vendor before a key is checked or Ray
started. The converted text of the benchmark's documents and deliverables, and the OCR of its
scans, are cached where the operator says (`cache_dir`), in memory only under the private preset
when no folder is named, else in the sweep's output folder; never in the user's home
(`evalcore.benchmark.cache.use_root`). What a purge deletes at the vendors once
the tables are written is `jobs.per_run.purge`. Every copy a sweep makes: docs/DATA.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from evalcore.benchmark import cache
from evalcore.config.models import TribunalConfig, VendorConfig
from evalcore.errors import ConfigError
from evalcore.storage import fs
from evalcore.storage.run_folder import shared_cache
from evalcore.vendors.registry import has_batch_api
from jobs.sweep.ocr_step import ocr_cache_uri


def check_batch_allowed(config: TribunalConfig) -> None:
    """Refuse batch mode for a vendor whose batch API the data governance does not allow."""
    if not config.batch.enabled:
        return
    gov = config.data_governance
    refused = [v for v in config.vendors() if has_batch_api(v) and gov.batch_refused(v.adapter)]
    if refused:
        names = ", ".join(f"{v.name!r} ({v.adapter}, {v.model})" for v in refused)
        adapters = sorted({v.adapter for v in refused})
        why = " xAI's batch API has no delete: a batch would stay at xAI." if "xai" in adapters else ""
        raise ConfigError(
            f"data_governance.batch_allowed ({', '.join(f'{a}: false' for a in adapters)}, preset {gov.preset}) "
            f"refuses batch mode for vendor {names}.{why} Run online (--online), or put another vendor on the panel."
        )


def check_prompt_cache_retention(config: TribunalConfig) -> list[VendorConfig]:
    """Refuse, under the private preset, an OpenAI entry whose requests would carry a 24 h
    `prompt_cache_retention` (`VendorConfig.cache_retention`: gpt-5.5 and later accept nothing
    shorter) unless `data_governance.prompt_cache_24h_allowed` names it; return the entries so
    allowed, for the sweep to say so.

    Why refuse rather than send it: a publisher who chose `private` expects the shortest retention
    everywhere, and a model that accepts only a day would otherwise lengthen it silently (it did:
    every request of a private run carried `24h`). Checked where the vendors are chosen (an offline
    entry sends nothing), before anything is read or sent."""
    gov = config.data_governance
    if gov.preset != "private":
        return []
    day = [v for v in config.vendors() if v.adapter == "openai" and v.cache_retention() == "24h"]
    refused = [v for v in day if v.name not in gov.prompt_cache_24h_allowed]
    if refused:
        names = ", ".join(f"{v.name!r} (model {v.model})" for v in refused)
        raise ConfigError(
            f"data_governance.preset private: OpenAI would keep the cached prompts of {names} for 24 h (the model "
            "accepts no shorter prompt_cache_retention), which private refuses. Choose a model that accepts "
            "in_memory (before gpt-5.5), or allow it with data_governance.prompt_cache_24h_allowed: "
            f"[{', '.join(v.name for v in refused)}]"
        )
    return day


def say_allowed_retention(allowed: list[VendorConfig], console: Console) -> None:
    """One line per entry the private preset lets keep its cached prompts a day (`check_prompt_cache_retention`)."""
    for v in allowed:
        console.print(f"data_governance: {v.name} ({v.model}) sends prompt_cache_retention 24h, allowed by "
                      "prompt_cache_24h_allowed: OpenAI keeps its cached prompt prefixes up to 24 h (run.json records "
                      "24h)", markup=False, highlight=False, soft_wrap=True)


@dataclass(frozen=True)
class LocalCaches:
    """Where a sweep keeps converted text and the OCR of its scans (None: memory only)."""

    documents: Path | None
    ocr_uri: str | None
    governed: bool
    """True when the sweep chose the documents' folder (else ``TRIBUNAL_CACHE_DIR`` decides)."""


def local_caches(config: TribunalConfig, output: str) -> LocalCaches:
    """`cache.governed_root` when it decides; else ``TRIBUNAL_CACHE_DIR`` if set; else the output folder.

    A named folder holds both caches (``docs/``, ``ocr/``); memory only (``off``, or the private
    preset with no folder named) writes neither: the OCR tasks send their pages back through Ray
    (`jobs.sweep.ocr_step`). Otherwise the OCR pages stay next to the runs (``<output>/_ocr``,
    shared by every node when the output is on S3) and converted documents go to
    ``<output>/_cache`` for a local output, or stay in memory for an ``s3://`` one.
    """
    decided, root = cache.governed_root(config.data_governance)
    if decided:
        return LocalCaches(documents=root, ocr_uri=None if root is None else str(root / "ocr"), governed=True)
    if os.environ.get("TRIBUNAL_CACHE_DIR") is not None:
        return LocalCaches(documents=cache.cache_root(), ocr_uri=ocr_cache_uri(output), governed=False)
    local = fs.local_path(output)
    documents = Path(shared_cache(local)) if local is not None else None
    return LocalCaches(documents=documents, ocr_uri=ocr_cache_uri(output), governed=True)


@contextmanager
def governed_caches(caches: LocalCaches) -> Iterator[None]:
    """Every cache read or written inside the block uses the sweep's folders (`local_caches`)."""
    if not caches.governed:
        yield
        return
    with cache.use_root(caches.documents):
        yield


@contextmanager
def governed_command_caches(config: TribunalConfig) -> Iterator[None]:
    """The local caches of a command with no output folder (`validate`, `grade`, `estimate`) under
    the configuration's data governance (`cache.governed_root`), for everything inside the block.

    It did not: `validate --config private.yaml` left converted documents in ``~/.cache``. Where the
    governance does not decide, the environment does as before (``TRIBUNAL_CACHE_DIR``,
    ``TRIBUNAL_OCR_CACHE``, else ``~/.cache``)."""
    from evalcore.benchmark import ocr

    decided, root = cache.governed_root(config.data_governance)
    if not decided:
        yield
        return
    with cache.use_root(root), ocr.use_cache(None if root is None else str(root / "ocr")):
        yield
