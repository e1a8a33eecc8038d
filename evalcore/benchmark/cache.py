"""The benchmark's local caches: where they live, the converted-text LRU, and its disk folder.

Why one module: converted documents (`evalcore.benchmark.documents`) and OCR pages
(`evalcore.benchmark.ocr`) share one cache root (``TRIBUNAL_CACHE_DIR``); each asks this module for
its folder instead of asking the other.

Why every disk entry checks itself: the default cache folder is shared by every run on a machine
(and the OCR cache of a sweep by every machine), so an entry may be truncated by a full disk,
edited by hand, copied under another name or written by a buggy version. Each entry is a JSON
envelope (`seal`) holding its content with the SHA-256 of the input it was made from, what it
holds (``key``) and the SHA-256 of the content; `unseal` refuses an entry that is not such an
envelope, was made from another input or for another key, or whose content does not match its
hash, and the caller also refuses content it cannot parse. A refused entry is discarded and
rebuilt from the input, with one warning naming the entry file (`discard`), never a traceback and
never its text used. The check is against damage, not an adversary: whoever can write the cache
folder can write a consistent entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalcore.config.models import DataGovernance

# --------------------------------------------------------------------------------------------
# The cache: in-memory LRU, plus an optional on-disk folder shared by processes on one machine
# --------------------------------------------------------------------------------------------


_root_override: tuple[Path | None] | None = None
"""Set by `use_root` (a sweep's governed cache folder): wins over the environment while set."""


def cache_root() -> Path | None:
    """The root of Tribunal's local caches, or None when the disk cache is off.

    Inside `use_root` (a sweep: ``data_governance.cache_dir``), the folder it names. Otherwise
    ``TRIBUNAL_CACHE_DIR`` sets the root (converted documents in ``<root>/docs/v<N>/``, OCR pages in ``<root>/ocr/``); set it to ``off`` (or ``0``, or
    empty) to disable. Default: ``$XDG_CACHE_HOME/tribunal`` or ``~/.cache/tribunal``.
    """
    if _root_override is not None:
        return _root_override[0]
    configured = os.environ.get("TRIBUNAL_CACHE_DIR")
    if configured is not None:
        if configured.strip().lower() in {"", "0", "off", "none", "false"}:
            return None
        root = Path(configured).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = (Path(xdg) if xdg else Path.home() / ".cache") / "tribunal"
    return root


def is_off(value: str) -> bool:
    """A cache setting that turns the disk cache off (``off``, ``0``, ``none``, ``false``, empty)."""
    return value.strip().lower() in {"", "0", "off", "none", "false"}


def governed_root(governance: DataGovernance) -> tuple[bool, Path | None]:
    """(whether the data governance decides where the caches live, their root or None for memory
    only): the one rule every command follows (the sweep, `validate`, `grade`, `estimate`, and
    `tribunal purge --local` finding where a run's caches were).

    `cache_dir` named: that folder (``docs/``, ``ocr/``), or memory only for ``off``; else, under the
    private preset, memory only: the preset writes the benchmark's text to no folder it was not
    given (a sweep's ``<output>/_cache`` and ``_ocr`` outlive the run folder, ``~/.cache`` every
    run). Otherwise the governance does not decide: (False, None)."""
    if governance.cache_dir is not None:
        return True, None if is_off(governance.cache_dir) else Path(governance.cache_dir).expanduser()
    if governance.preset == "private":
        return True, None
    return False, None


def entry_input(name: str) -> str | None:
    """The SHA-256 of the input a cache entry file was made from, read from its name, or None.

    Every entry is named by its input's hash first: a converted document ``<sha>.<kind>.json``
    (`entry_file`), an OCR page ``<sha>-p<NNNNN>.json`` (`evalcore.benchmark.ocr`). Why it
    matters: `tribunal purge --local` removes a run's entries by the hashes of its files."""
    if not name.endswith(ENTRY_SUFFIX) or len(name) < 66 or name[64] not in ".-":
        return None
    sha = name[:64]
    return sha if all(c in "0123456789abcdef" for c in sha) else None


@contextlib.contextmanager
def use_root(root: Path | None) -> Iterator[None]:
    """Use ``root`` (None: memory only) as the cache root for everything inside the block (every thread).

    Why: a sweep keeps the converted text of a private benchmark where its operator says
    (``data_governance.cache_dir``, or the sweep's output folder), not in the user's home. The
    folder is created 0700 and every entry written 0600 (`private_folder`, `write_private`).
    """
    global _root_override
    previous = _root_override
    if root is not None:
        private_folder(root)
    _root_override = (root,)
    try:
        yield
    finally:
        _root_override = previous


def private_folder(folder: Path) -> Path:
    """Create ``folder`` and its missing parents readable by this user only (0700); an existing
    folder is left as it is."""
    missing = []
    for part in (folder, *folder.parents):
        if part.exists():
            break
        missing.append(part)
    for part in reversed(missing):
        with contextlib.suppress(FileExistsError):
            part.mkdir(mode=0o700)
            os.chmod(part, 0o700)  # mkdir's mode is reduced by the umask; 0700 is what is meant
    return folder


def write_private(uri: str, data: bytes, endpoint_override: str | None = None) -> None:
    """Write a cache entry atomically: a local file 0600 in a 0700 folder; an ``s3://`` object as is."""
    from evalcore.storage import fs

    path = fs.local_path(uri)
    if path is None:
        fs.write_bytes_atomic(uri, data, endpoint_override)
        return
    folder = private_folder(Path(path).parent)
    fd, tmp = tempfile.mkstemp(prefix=".entry.", suffix=".tmp", dir=folder)  # 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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


# --------------------------------------------------------------------------------------------
# Entries that check themselves: a header line with the input's and the content's hashes
# --------------------------------------------------------------------------------------------

ENTRY_FORMAT = 1
"""Version of the entry layout (the JSON envelope below); part of every entry."""

ENTRY_SUFFIX = ".json"
"""File name ending of entries."""

log = logging.getLogger("evalcore.benchmark.cache")


class DamagedEntry(ValueError):
    """A cache entry that fails its checks; ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def _digest(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


def seal(input_sha: str, key: str, content: str) -> bytes:
    """An entry: a JSON envelope holding ``content`` with the input's hash, ``key`` and its own hash.

    ``key`` names what the entry holds (e.g. ``docs/v2/pdf``, ``ocr/v1-eng-300dpi/p00003``), so an
    entry copied to another name is refused even when its input hash matches.
    """
    envelope = {
        "tribunal_cache": ENTRY_FORMAT,
        "input_sha256": input_sha,
        "key": key,
        "content_sha256": _digest(content),
        "content": content,
    }
    return json.dumps(envelope, ensure_ascii=False).encode("utf-8", "surrogatepass")


def unseal(entry: bytes, input_sha: str, key: str) -> str:
    """The content of an entry made by `seal` from ``input_sha`` for ``key``; DamagedEntry otherwise."""
    try:
        envelope = json.loads(entry)
    except (ValueError, UnicodeDecodeError):
        raise DamagedEntry("not valid JSON (truncated, or not a Tribunal cache entry)") from None
    if not isinstance(envelope, dict) or envelope.get("tribunal_cache") != ENTRY_FORMAT:
        raise DamagedEntry(f"not a format-{ENTRY_FORMAT} Tribunal cache entry (no envelope with both hashes)")
    made_from = envelope.get("input_sha256")
    if made_from != input_sha:
        raise DamagedEntry(f"made from another input (sha256 {str(made_from)[:16]}..., expected {input_sha[:16]}...)")
    if envelope.get("key") != key:
        raise DamagedEntry(f"holds {envelope.get('key')!r}, expected {key!r}")
    content = envelope.get("content")
    if not isinstance(content, str) or _digest(content) != envelope.get("content_sha256"):
        raise DamagedEntry("its content does not match the hash in it: damaged or edited")
    return content


_warned: set[str] = set()
_warned_lock = threading.Lock()


def discard(entry_file: str, reason: str) -> None:
    """Warn (once per entry file and process) that a damaged entry is discarded and rebuilt."""
    with _warned_lock:
        if entry_file in _warned:
            return
        _warned.add(entry_file)
    log.warning("%s: damaged cache entry discarded and rebuilt from its input (%s)", entry_file, reason)


def entry_file(folder: Path, sha: str, kind: str) -> Path:
    """Where the converted text of the input ``sha`` as ``kind`` is kept in ``folder``."""
    return folder / f"{sha}.{kind}{ENTRY_SUFFIX}"


def disk_get(
    folder: Path | None, sha: str, kind: str, *, key: str, check: Callable[[str], object] | None = None
) -> str | None:
    """The converted text cached for ``(sha, kind)``, or None: absent, or damaged (discarded).

    ``key`` is what the entry must say it holds (see `seal`); ``check`` parses the text as its kind must be (raising ValueError when it cannot): an entry
    that is intact but holds something else is refused like a damaged one.
    """
    if folder is None:
        return None
    path = entry_file(folder, sha, kind)
    try:
        entry = path.read_bytes()
    except OSError:
        return None
    try:
        text = unseal(entry, sha, key)
        if check is not None:
            check(text)
    except DamagedEntry as exc:
        discard(str(path), exc.reason)
        return None
    except ValueError as exc:  # a pydantic ValidationError, ...
        discard(str(path), f"its content is not valid: {_first_line(exc)}")
        return None
    return text


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]


def disk_put(folder: Path | None, sha: str, kind: str, text: str, *, key: str) -> None:
    """Seal ``text`` (see `seal`) and store it; best effort, atomic (temp file + rename): a failed
    cache write never fails a conversion, and a reader never sees half an entry."""
    if folder is None:
        return
    tmp: str | None = None
    try:
        private_folder(folder)
        fd, tmp = tempfile.mkstemp(prefix=f".{sha}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "wb") as f:
            f.write(seal(sha, key, text))
        os.replace(tmp, entry_file(folder, sha, kind))
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
