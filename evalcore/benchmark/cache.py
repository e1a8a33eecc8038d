"""The benchmark's local caches: where they live, the converted-text LRU, and its disk folder.

Why one module: converted documents (`evalcore.benchmark.documents`) and OCR pages
(`evalcore.benchmark.ocr`) share one cache root (``TRIBUNAL_CACHE_DIR``); each asks this module for
its folder instead of asking the other.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

# --------------------------------------------------------------------------------------------
# The cache: in-memory LRU, plus an optional on-disk folder shared by processes on one machine
# --------------------------------------------------------------------------------------------


def cache_root() -> Path | None:
    """The root of Tribunal's local caches, or None when the disk cache is off.

    ``TRIBUNAL_CACHE_DIR`` sets the root (converted documents in ``<root>/docs/v<N>/``, OCR pages in ``<root>/ocr/``); set it to ``off`` (or ``0``, or
    empty) to disable. Default: ``$XDG_CACHE_HOME/tribunal`` or ``~/.cache/tribunal``.
    """
    configured = os.environ.get("TRIBUNAL_CACHE_DIR")
    if configured is not None:
        if configured.strip().lower() in {"", "0", "off", "none", "false"}:
            return None
        root = Path(configured).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = (Path(xdg) if xdg else Path.home() / ".cache") / "tribunal"
    return root


class _TextCache:
    """Thread-safe LRU of converted texts by (sha256, kind)."""

    def __init__(self, max_entries: int = 4096) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[str, str]) -> str | None:
        with self._lock:
            text = self._items.get(key)
            if text is not None:
                self._items.move_to_end(key)
            return text

    def count(self, hit: bool) -> None:
        with self._lock:
            if hit:
                self.hits += 1
            else:
                self.misses += 1

    def put(self, key: tuple[str, str], text: str) -> None:
        with self._lock:
            self._items[key] = text
            self._items.move_to_end(key)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0


memory = _TextCache()


def clear_cache() -> None:
    """Empty the in-memory cache (the disk cache is left alone)."""
    memory.clear()


def cache_stats() -> dict[str, int]:
    """Conversions served from the cache vs done, since the last ``clear_cache``."""
    return {"hits": memory.hits, "misses": memory.misses}


def disk_get(folder: Path | None, sha: str, kind: str) -> str | None:
    if folder is None:
        return None
    try:
        return (folder / f"{sha}.{kind}.txt").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def disk_put(folder: Path | None, sha: str, kind: str, text: str) -> None:
    """Best effort, atomic (temp file + rename): a failed cache write never fails a conversion."""
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{sha}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, folder / f"{sha}.{kind}.txt")
    except OSError:
        pass
