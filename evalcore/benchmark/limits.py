"""Input limits: what reading one file may cost, checked before and while it is converted.

Why a module of its own: every input file (a task's source document, a submitted deliverable) is
converted in the process that loads all the others - the sweep driver, ``tribunal validate``. One
file that inflates to gigabytes (a decompression bomb: a 3 MB .docx whose XML unpacks to 1 GB), a
million-row spreadsheet or a source too long to index must be refused with a reason, naming the
limit and how to raise it, before it can take that process down.

What is checked, and when (the ceilings are ``evalcore.config.models.InputLimits``):

* before conversion, from the bytes alone: the file's size; for docx/xlsx/pptx (zip archives) the
  number of parts and their total *declared* uncompressed size, read from the archive's directory
  without inflating anything. Declared sizes can be trusted as a bound: Python's ``zipfile`` (which
  python-docx, openpyxl and python-pptx read through) never returns more bytes than a part
  declares, and a part that inflates to more fails its CRC check as a corrupt file;
* for a workbook, its rows and cells, counted in the sheets' XML as it streams out of the archive
  (a regular expression over 1 MB chunks: ~0.1 s for a million rows, flat memory), because
  openpyxl parses a whole sheet that declares no dimensions before it yields its first row; and
  again while rows are read (``SheetBudget``), so no path reads past the limit;
* after conversion: the text length of a task document (``check_source_text``); every source is
  indexed for the grounding checks, whose memory grows with the text;
* parser errors that are really limits (libxml2's "Text node too long, try XML_PARSE_HUGE") are
  said in plain words (``explain``).

A deliverable is not held to the source text limit: a deliverable longer than a prompt can hold is
graded ``too_long`` (the methodology's rule), which costs nothing and needs no grounding work.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable, Iterator
from typing import Any

from evalcore.config.models import InputLimits
from evalcore.storage import fs

ARCHIVE_KINDS = frozenset({"docx", "xlsx", "pptx"})
"""Document kinds stored as zip archives (Office Open XML)."""


_CHUNK = 2**20
"""Bytes read or inflated at a time."""


class LimitExceeded(Exception):
    """An input is over one of the limits; ``reason`` says which, by how much, and how to raise it."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def size_text(n: int) -> str:
    """A byte count as people read it (``1.1 GB``, ``640 KB``)."""
    value = float(n)
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _raise_hint(name: str, needed: int | None = None) -> str:
    example = f"{needed:_}".replace("_", "") if needed is not None else "<larger value>"
    return f"if the file is genuine, raise it in --config (input_limits: {{{name}: {example}}})"


def _over(what: str, amount: str, name: str, limit: str, needed: int | None = None) -> LimitExceeded:
    return LimitExceeded(f"{what} {amount}, over input_limits.{name} = {limit}; {_raise_hint(name, needed)}")


def read_limited(uri: str, endpoint: str | None, limits: InputLimits) -> bytes:
    """A file's bytes, reading at most one byte more than ``max_file_bytes``: a huge file is refused
    without being read whole. Raises OSError like ``fs.read_bytes``, LimitExceeded when too big."""
    filesystem, path = fs.resolve(uri, endpoint)
    data = bytearray()
    with filesystem.open_input_stream(path) as stream:
        # In chunks: a read of n bytes allocates n bytes up front, whatever the file's size.
        while chunk := stream.read(min(_CHUNK, limits.max_file_bytes + 1 - len(data))):
            data += chunk
            if len(data) > limits.max_file_bytes:
                raise LimitExceeded(
                    f"file is larger than input_limits.max_file_bytes = {size_text(limits.max_file_bytes)}; "
                    f"{_raise_hint('max_file_bytes')}"
                )
    return bytes(data)


def check_file(kind: str, data: bytes, limits: InputLimits) -> None:
    """Refuse a file whose size, or (for an Office file) whose unpacked size, is over the limits.

    Reads only the zip directory of an archive, never its content. A file that is not a valid zip
    passes: the converter then reports it as corrupt in its own words.
    """
    if len(data) > limits.max_file_bytes:
        raise _over("file is", size_text(len(data)), "max_file_bytes", size_text(limits.max_file_bytes), len(data))
    if kind not in ARCHIVE_KINDS:
        return
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return
    if len(members) > limits.max_archive_members:
        raise _over(
            f"{kind} archive has", f"{len(members):,} parts", "max_archive_members",
            f"{limits.max_archive_members:,}", len(members),
        )
    unpacked = sum(m.file_size for m in members)
    if unpacked > limits.max_unpacked_bytes:
        biggest = max(members, key=lambda m: m.file_size)
        raise LimitExceeded(
            f"{kind} unpacks to {size_text(unpacked)} from {size_text(len(data))} "
            f"({biggest.filename} alone: {size_text(biggest.file_size)}), over input_limits.max_unpacked_bytes = "
            f"{size_text(limits.max_unpacked_bytes)}: refused as a possible decompression bomb; "
            f"{_raise_hint('max_unpacked_bytes', unpacked)}"
        )
    if kind == "xlsx":
        _count_sheet_cells(data, [m for m in members if _SHEET_PART.match(m.filename)], limits)


_SHEET_PART = re.compile(r"xl/worksheets/[^/]+\.xml$", re.IGNORECASE)
_ROW_OR_CELL = re.compile(rb"<(?:\w+:)?(row|c)[\s>/]")


def _count_sheet_cells(
    data: bytes, sheets: list[zipfile.ZipInfo], limits: InputLimits, chunk_size: int = _CHUNK
) -> None:
    """Count ``<row>`` and ``<c>`` elements of every sheet as it inflates, stopping at a limit.

    A match never contains ``<`` after its first character, so every match starting before the
    chunk's last ``<`` is complete: it is counted, and the rest is carried into the next chunk.
    """
    budget = SheetBudget(limits)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in sheets:
            carry = b""
            with archive.open(info) as stream:
                while chunk := stream.read(chunk_size):
                    buffer = carry + chunk
                    cut = buffer.rfind(b"<")
                    if cut < 0 or len(buffer) - cut > 64:  # no tag can still be open: count it all
                        cut = len(buffer)
                    budget.count(info.filename, _ROW_OR_CELL.findall(buffer, 0, cut))
                    carry = buffer[cut:]
            budget.count(info.filename, _ROW_OR_CELL.findall(carry))


class SheetBudget:
    """Counts the rows and cells read from one workbook and stops at the limits.

    Why while reading: a workbook's size is only known by reading it; counting as rows stream out
    of openpyxl's read-only reader stops a million-row sheet at the limit, with flat memory.
    """

    def __init__(self, limits: InputLimits) -> None:
        self.limits = limits
        self.rows = 0
        self.cells = 0

    def count(self, sheet: str, elements: list[bytes]) -> None:
        """Count a sheet's XML elements (``row`` and ``c``, as the prescan finds them)."""
        rows = elements.count(b"row")
        self.rows += rows
        self.cells += len(elements) - rows
        self._check(sheet)

    def rows_of(self, sheet_title: str, rows: Iterable[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
        """The rows of one sheet, counted against the workbook's budget."""
        for row in rows:
            self.rows += 1
            self.cells += len(row)
            self._check(sheet_title)
            yield row

    def _check(self, sheet_title: str) -> None:
        if self.rows > self.limits.max_sheet_rows:
            raise LimitExceeded(
                f"workbook has more than {self.limits.max_sheet_rows:,} rows (reached in sheet {sheet_title!r}), "
                f"over input_limits.max_sheet_rows = {self.limits.max_sheet_rows:,}; "
                f"{_raise_hint('max_sheet_rows')}"
            )
        if self.cells > self.limits.max_sheet_cells:
            raise LimitExceeded(
                f"workbook has more than {self.limits.max_sheet_cells:,} cells (reached in sheet "
                f"{sheet_title!r}, row {self.rows:,}), over input_limits.max_sheet_cells = "
                f"{self.limits.max_sheet_cells:,}; {_raise_hint('max_sheet_cells')}"
            )


def check_source_text(text: str, limits: InputLimits) -> None:
    """Refuse a task document whose text is longer than the grounding index is allowed to hold."""
    if len(text) > limits.max_source_chars:
        raise _over(
            "text after conversion is", f"{len(text):,} characters", "max_source_chars",
            f"{limits.max_source_chars:,}", len(text),
        )


_XML_LIMIT_MARKERS = ("XML_PARSE_HUGE", "Resource limit exceeded", "huge input lookup", "Excessive depth")


def explain(kind: str, exc: BaseException) -> str | None:
    """Plain words for a parser error that is really a size limit; None for any other error.

    libxml2 (behind python-docx, python-pptx and openpyxl) refuses a text node over 10 MB or a very
    deep nesting, in its own jargon; a MemoryError means the file needs more memory than the
    process has, whatever the limits above allowed.
    """
    if isinstance(exc, MemoryError):
        return (
            f"ran out of memory converting this {kind} file; it is far larger than a normal document "
            "(lower input_limits in --config so such files are refused before conversion)"
        )
    message = str(exc)
    if any(marker in message for marker in _XML_LIMIT_MARKERS):
        return (
            f"the {kind} file's XML holds a single text run or nesting beyond what the XML parser accepts "
            "(over 10 MB of text in one node, or thousands of nested elements); no real document "
            "does that: re-save it from its application, or provide a text version"
        )
    return None


__all__ = [
    "ARCHIVE_KINDS",
    "LimitExceeded",
    "SheetBudget",
    "check_file",
    "check_source_text",
    "explain",
    "read_limited",
    "size_text",
]
