"""A sweep under the configuration's `data_governance`: which batch APIs it may use, where its local caches live.

Why in the driver: both are decided once per sweep, before anything is loaded or sent. A vendor
whose batch API is refused (`batch_allowed`, e.g. xAI under the private preset: its batches cannot
be deleted) stops the sweep with a `ConfigError` naming the vendor before a key is checked or Ray
started. The converted text of the benchmark's documents and deliverables, and the OCR of its
scans, are cached where the operator says (`cache_dir`) or in the sweep's output folder, never in
the user's home (`evalcore.benchmark.cache.use_root`). What a purge deletes at the vendors once
the tables are written is `jobs.per_run.purge`. Every copy a sweep makes: docs/DATA.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from evalcore.benchmark import cache
from evalcore.config.models import TribunalConfig
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


@dataclass(frozen=True)
class LocalCaches:
    """Where a sweep keeps converted text (None: memory only) and the OCR of its scans."""

    documents: Path | None
    ocr_uri: str
    governed: bool
    """True when the sweep chose the documents' folder (else ``TRIBUNAL_CACHE_DIR`` decides)."""


def local_caches(config: TribunalConfig, output: str) -> LocalCaches:
    """`data_governance.cache_dir` if named; else ``TRIBUNAL_CACHE_DIR`` if set; else the output folder.

    A named folder holds both caches (``docs/``, ``ocr/``); ``off`` keeps converted text in memory. Otherwise the OCR pages stay next to the
    runs (``<output>/_ocr``, shared by every node when the output is on S3) and converted documents
    go to ``<output>/_cache`` for a local output, or stay in memory for an ``s3://`` one.
    """
    named = config.data_governance.cache_dir
    if named is not None and cache.is_off(named):
        return LocalCaches(documents=None, ocr_uri=ocr_cache_uri(output), governed=True)
    if named is not None:
        root = Path(named).expanduser()
        return LocalCaches(documents=root, ocr_uri=str(root / "ocr"), governed=True)
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
