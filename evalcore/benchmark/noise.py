"""Parser noise: document libraries' warnings are captured per conversion, never printed raw.

Why: pypdf logs every robustness fix it applies ("incorrect startxref pointer(1)", "Ignoring wrong
pointing object ...") straight to the terminal, once per fix, from whatever thread read the file;
in a benchmark load of hundreds of documents that is a wall of lines naming no file. Here those
records go to one handler that keeps them for the conversion running in the same thread, and the
converter turns them into ONE warning naming the file ("damaged but readable").

Python warnings (``warnings.warn``) the libraries raise while they read a file -- PIL's
``DecompressionBombWarning`` or its "Palette images with Transparency expressed in bytes" warning,
openpyxl's "Workbook contains no default style" -- are captured the same way (`captured_warnings`):
each becomes one line of the document's warnings, ``<file>: <message> (<category> from
<library>)``, never the two raw lines ``.../PIL/Image.py:1134: UserWarning: ...`` and
``warnings.warn(`` with no file named. Warnings about the libraries themselves rather than the
input (deprecations, resource and import warnings) go to the log at debug level only, as does any
document library's warning outside a conversion (e.g. in a sweep's OCR planning task).

Why not ``warnings.catch_warnings`` around each conversion: it swaps process-wide state, and the
benchmark loader converts on 16 threads at once; one thread's exit would restore another's hook,
and a warning would land on another thread's file. Here one hook is installed once
(`warnings.showwarning`, re-installed when something -- pytest, another library -- replaced it),
and what it catches goes to the sink of the conversion running in the thread that raised it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import warnings
from collections.abc import Iterator
from typing import Any, TextIO

NOISY_LOGGERS = ("pypdf", "PyPDF2", "pdfminer")
"""Loggers of parsers that report repairs as warnings; their records never reach the terminal."""


class _Capture(logging.Handler):
    """Keeps each record for the capture open in the thread that logged it; drops the rest."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        sink: list[str] | None = getattr(self.local, "sink", None)
        if sink is not None and record.levelno >= logging.WARNING:
            with contextlib.suppress(Exception):
                sink.append(record.getMessage())


_handler = _Capture()
_installed = False
_install_lock = threading.Lock()


def _install() -> None:
    global _installed
    with _install_lock:
        if _installed:
            return
        for name in NOISY_LOGGERS:
            logger = logging.getLogger(name)
            logger.addHandler(_handler)
            logger.propagate = False
        _installed = True


@contextlib.contextmanager
def quiet_parsers() -> Iterator[list[str]]:
    """Capture the parsers' warnings logged by this thread inside the block (yielded list)."""
    _install()
    outer = getattr(_handler.local, "sink", None)
    sink: list[str] = []
    _handler.local.sink = sink
    try:
        yield sink
    finally:
        _handler.local.sink = outer
        if outer is not None:
            outer.extend(sink)


def damaged_warning(messages: list[str]) -> str | None:
    """One line summarising a parser's repairs, or None when there were none."""
    if not messages:
        return None
    unique = list(dict.fromkeys(m.strip() for m in messages if m.strip()))
    shown = "; ".join(unique[:2]) + (f"; and {len(unique) - 2} more" if len(unique) > 2 else "")
    return f"damaged but readable ({len(messages)} repair(s) by the parser: {shown})"


# --------------------------------------------------------------------------------------------
# Python warnings raised while a document is converted
# --------------------------------------------------------------------------------------------

DOCUMENT_LIBRARIES = ("PIL", "pypdf", "pypdfium2", "openpyxl", "docx", "pptx", "bs4", "tesserocr", "lxml")
"""Top-level packages of the converters (`evalcore.benchmark.documents`, `ocr`): a warning raised in
one of them, outside a conversion, is their chatter and goes to the log only."""

LIBRARY_CHATTER: tuple[type[Warning], ...] = (
    DeprecationWarning, PendingDeprecationWarning, FutureWarning, ImportWarning, ResourceWarning, SyntaxWarning,
)
"""Categories about a library's own code, not about the file it reads: logged, never shown as the file's warning."""

_ALWAYS = r"^(" + "|".join(DOCUMENT_LIBRARIES) + r")(\..*)?$"
"""The filter that shows each library warning every time (Python's default shows one message once
per code location: a second file with the same problem would go unnamed)."""

log = logging.getLogger(__name__)
_warnings_local = threading.local()
_previous_show: Any = None
_warnings_lock = threading.Lock()


def _library(filename: str) -> str | None:
    """The document library a warning was raised in (by its source file's path), or None."""
    parts = filename.replace("\\", "/").split("/")
    for name in DOCUMENT_LIBRARIES:
        if name in parts[:-1] or parts[-1] == f"{name}.py":
            return name
    return None


def _show(
    message: Warning | str, category: type[Warning], filename: str, lineno: int,
    file: TextIO | None = None, line: str | None = None,
) -> None:
    """`warnings.showwarning` while installed: into the conversion's sink, else to the log, else as before."""
    sink: list[str] | None = getattr(_warnings_local, "sink", None)
    library = _library(filename)
    text = " ".join(str(message).split())
    if sink is not None and not issubclass(category, LIBRARY_CHATTER):
        sink.append(f"{text} ({category.__name__} from {library or filename.rsplit('/', 1)[-1]})")
        return
    if sink is not None or library is not None:
        log.debug("%s from %s (%s:%d): %s", category.__name__, library or "a library", filename, lineno, text)
        return
    previous = _previous_show
    if previous is not None and previous is not _show:
        previous(message, category, filename, lineno, file, line)
    else:
        warnings._showwarning_orig(message, category, filename, lineno, file, line)  # type: ignore[attr-defined]


def _install_warning_hook() -> None:
    """Route warnings through `_show` (again, if something replaced the hook since), and show each
    document library's warning every time it is raised (see `_ALWAYS`)."""
    global _previous_show
    with _warnings_lock:
        if warnings.showwarning is not _show:
            _previous_show = warnings.showwarning
            warnings.showwarning = _show
        if not any(f[0] == "always" and getattr(f[3], "pattern", None) == _ALWAYS for f in warnings.filters):
            warnings.filterwarnings("always", module=_ALWAYS)


@contextlib.contextmanager
def captured_warnings() -> Iterator[list[str]]:
    """Collect the Python warnings raised by this thread inside the block (the yielded list, one
    line each, repeats removed): what a document library said about the file being converted."""
    _install_warning_hook()
    outer = getattr(_warnings_local, "sink", None)
    sink: list[str] = []
    _warnings_local.sink = sink
    try:
        yield sink
    finally:
        _warnings_local.sink = outer
        unique = list(dict.fromkeys(sink))
        sink[:] = unique
        if outer is not None:
            outer.extend(unique)
