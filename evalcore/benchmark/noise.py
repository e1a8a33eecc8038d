"""Parser noise: document libraries' warnings are captured per conversion, never printed raw.

Why: pypdf logs every robustness fix it applies ("incorrect startxref pointer(1)", "Ignoring wrong
pointing object ...") straight to the terminal, once per fix, from whatever thread read the file;
in a benchmark load of hundreds of documents that is a wall of lines naming no file. Here those
records go to one handler that keeps them for the conversion running in the same thread, and the
converter turns them into ONE warning naming the file ("damaged but readable").
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

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
