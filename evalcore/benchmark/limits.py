"""Input limits: what reading one file may cost, checked before and while it is converted.

Why one module: every limit is checked before the bytes are inflated, with one message style; the PDF, Office and workbook checks share that discipline.

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
* for a PDF (``pdf_page_texts``), before any page is parsed: every page's content streams, the
  form XObjects they may draw and the fonts' maps and programs pypdf would read, each decoded at
  most one byte past what the limits leave (pypdf's decoders take an output cap) and dropped, per
  page and per file. pypdf otherwise inflates a content stream whole (up to 75 MB each) and keeps
  it for the file's lifetime: 40 pages of 70 MB of spaces took a validate to 3.1 GB. A page whose
  fonts map one code to many characters (a ToUnicode entry can hold 256) is held to its content
  times that expansion, since pypdf builds a text run whole; then the text is counted as pypdf
  extracts it (a visitor), per page and per file;
* in task.json: the number of criteria (``check_criteria``);
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
from dataclasses import dataclass
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


# --------------------------------------------------------------------------------------------
# PDFs: content streams measured before any is parsed, text counted while it is extracted
# --------------------------------------------------------------------------------------------

_NAME_TOKEN = re.compile(rb"/([^\s/\[\]()<>{}%]+)")
_HEX_STRING = re.compile(rb"<([0-9A-Fa-f\s]*)>")
_TEXT_OPERATORS = (b"Tj", b"TJ", b"Do", b"'", b'"')
"""What pypdf looks for before it parses a content stream for text (any of them: it parses)."""
TEXT_EXPANSION = 4
"""Characters one character code of an ordinary font can become (the longest Adobe glyph name
value is 4; a ToUnicode ligature 3): a page's content may expand to this many times its bytes."""
_FORM_DEPTH = 16


class _Spent(BaseException):
    """Raised from pypdf's text visitor when the text budget is spent. A BaseException, because
    pypdf catches every Exception raised while it extracts a form XObject and carries on."""


@dataclass
class _PdfPage:
    """What a page costs to extract, measured from its content streams before any is parsed."""

    content_bytes: int = 0
    expansion: int = 1
    expansion_font: str = ""
    shows_text: bool = False


class _PdfMeasure:
    """Measures a PDF's content streams (and the fonts' maps and programs pypdf reads) page by page,
    decoding each stream at most one byte past what the limits leave (pypdf's decoders stop there),
    so nothing larger than the limits is ever allocated or parsed.
    """

    def __init__(self, limits: InputLimits) -> None:
        self.limits = limits
        self.total = 0  # every page's content (a form drawn on n pages counts n times) + fonts once
        self.fonts: dict[int, tuple[int, str]] = {}  # id of a font dictionary -> (expansion, name)

    def _decode(self, stream: Any, room: int) -> bytes | None:
        """The stream's decoded bytes, or None when they are more than ``room``."""
        from pypdf import apply_configuration
        from pypdf.errors import LimitReachedError
        from pypdf.filters import decode_stream_data
        from pypdf.generic import EncodedStreamObject

        cap = max(1, room + 1)  # 0 would mean "no limit" to pypdf
        with apply_configuration(
            zlib_maximum_output_length=cap, lzw_maximum_output_length=cap,
            run_length_maximum_output_length=cap, brotli_maximum_output_length=cap,
        ):
            try:
                data = decode_stream_data(stream) if isinstance(stream, EncodedStreamObject) else stream.get_data()
            except LimitReachedError as exc:
                if "decompress" in str(exc):
                    return None
                raise
        return None if len(data) > room else bytes(data)

    def _file_room(self) -> int:
        return self.limits.max_pdf_content_bytes - self.total

    def _over_file(self, number: int, what: str) -> LimitExceeded:
        return LimitExceeded(
            f"PDF content streams inflate to more than {size_text(self.limits.max_pdf_content_bytes)} "
            f"(reached at page {number}, {what}), over input_limits.max_pdf_content_bytes = "
            f"{size_text(self.limits.max_pdf_content_bytes)}: refused as a possible decompression bomb; "
            f"{_raise_hint('max_pdf_content_bytes')}"
        )

    def _over_page(self, number: int) -> LimitExceeded:
        cap = self.limits.max_pdf_page_content_bytes
        return LimitExceeded(
            f"page {number}'s content streams inflate to more than {size_text(cap)}, over "
            f"input_limits.max_pdf_page_content_bytes = {size_text(cap)}: refused as a possible "
            f"decompression bomb; {_raise_hint('max_pdf_page_content_bytes')}"
        )

    def page(self, number: int, page: Any) -> _PdfPage:
        """Measure one page: its content, the forms it names, their fonts. Raises LimitExceeded."""
        measured = _PdfPage()
        contents = _resolved(page.get("/Contents"))
        streams = list(contents) if _is_array(contents) else [contents]
        own = bytearray()
        for item in streams:
            stream = _resolved(item)
            if not _is_stream(stream):
                continue
            data = self._charge(number, measured, stream, "its own content")
            own += data
        measured.shows_text = any(op in own for op in _TEXT_OPERATORS)
        self._resources(number, measured, _resolved(page.get("/Resources")), bytes(own), set(), 0)
        return measured

    def _charge(self, number: int, measured: _PdfPage, stream: Any, what: str) -> bytes:
        room = min(self.limits.max_pdf_page_content_bytes - measured.content_bytes, self._file_room())
        data = self._decode(stream, room)
        if data is None:
            if self._file_room() < self.limits.max_pdf_page_content_bytes - measured.content_bytes:
                raise self._over_file(number, what)
            raise self._over_page(number)
        measured.content_bytes += len(data)
        self.total += len(data)
        return data

    def _resources(
        self, number: int, measured: _PdfPage, resources: Any, content: bytes, seen: set[int], depth: int
    ) -> None:
        """Fonts of ``resources`` and the forms ``content`` may draw (every name it mentions that is a
        form: a comment or an escape between the name and ``Do`` cannot hide one), recursively.

        Each form is measured once per page (``seen``), however often it is drawn: pypdf keeps one
        decoded copy of it, and the text of repeated drawings is counted as it is extracted."""
        if not _is_dict(resources) or depth > _FORM_DEPTH:
            return
        fonts = _resolved(resources.get("/Font"))
        if _is_dict(fonts):
            for name, font in fonts.items():
                expansion, font_name = self._font(number, _resolved(font), str(name))
                if expansion > measured.expansion:
                    measured.expansion, measured.expansion_font = expansion, font_name
        xobjects = _resolved(resources.get("/XObject"))
        if not _is_dict(xobjects) or not content:
            return
        named = _names_in(content, {str(k) for k in xobjects})
        for name in sorted(named):
            form = _resolved(xobjects.get(name))
            if not _is_stream(form) or form.get("/Subtype") != "/Form" or id(form) in seen:
                continue
            seen.add(id(form))
            try:
                data = self._charge(number, measured, form, f"form {name}")
            except LimitExceeded:
                raise
            except Exception:  # a form pypdf cannot decode: it skips it with a warning, and so do we
                continue
            measured.shows_text = measured.shows_text or any(op in data for op in _TEXT_OPERATORS)
            inner = _resolved(form.get("/Resources"))
            self._resources(number, measured, inner if _is_dict(inner) else resources, data, seen, depth + 1)

    def _font(self, number: int, font: Any, name: str) -> tuple[int, str]:
        """(characters one code of this font can become, its name), charging its maps and program once."""
        if not _is_dict(font):
            return 1, name
        known = self.fonts.get(id(font))
        if known is None:
            try:
                known = self._font_expansion(number, font, name)
            except LimitExceeded:
                raise
            except Exception:  # a map or program pypdf cannot decode: it fails or skips the font itself
                known = (1, name)
            self.fonts[id(font)] = known
        return known

    def _font_expansion(self, number: int, font: Any, name: str) -> tuple[int, str]:
        expansion = 1
        to_unicode = _resolved(font.get("/ToUnicode"))
        if _is_stream(to_unicode):
            cmap = self._font_stream(number, to_unicode, f"font {name}'s ToUnicode map")
            for match in _HEX_STRING.finditer(cmap):
                digits = len(match.group(1)) - sum(match.group(1).count(c) for c in b" \t\r\n\f")
                expansion = max(expansion, (digits + 3) // 4)
        elif font.get("/Subtype") == "/Type1":  # pypdf reads the encoding of a Type1 font program
            descriptor = _resolved(font.get("/FontDescriptor"))
            if _is_dict(descriptor):
                for key in ("/FontFile", "/FontFile3"):
                    program = _resolved(descriptor.get(key))
                    if _is_stream(program):
                        self._font_stream(number, program, f"font {name}'s program")
        encoding = _resolved(font.get("/Encoding"))
        differences = _resolved(encoding.get("/Differences")) if _is_dict(encoding) else []
        if _is_array(differences):
            expansion = max([expansion] + [_glyph_chars(str(g)) for g in differences if isinstance(g, str)])
        return expansion, name

    def _font_stream(self, number: int, stream: Any, what: str) -> bytes:
        data = self._decode(stream, self._file_room())
        if data is None:
            raise self._over_file(number, what)
        self.total += len(data)
        return data

    def check_expansion(self, number: int, measured: _PdfPage) -> None:
        """Refuse a page whose fonts could expand its content to more text than pypdf may build at
        once (`TEXT_EXPANSION` times the page limit): one code of a font can be mapped to hundreds of
        characters, and pypdf builds a text run whole before the budget sees it."""
        cap = self.limits.max_pdf_page_content_bytes
        possible = measured.content_bytes * measured.expansion
        if measured.expansion > TEXT_EXPANSION and possible > TEXT_EXPANSION * cap:
            needed = -(-possible // TEXT_EXPANSION)
            raise LimitExceeded(
                f"page {number}'s font {measured.expansion_font} turns one character code into up to "
                f"{measured.expansion:,} characters, so its {size_text(measured.content_bytes)} of content "
                f"could become {possible:,} characters of text, over the {TEXT_EXPANSION * cap:,} allowed "
                f"({TEXT_EXPANSION} per byte of input_limits.max_pdf_page_content_bytes = {size_text(cap)}): "
                f"refused as a possible text bomb; "
                f"{_raise_hint('max_pdf_page_content_bytes', needed)}"
            )


def _glyph_chars(glyph: str) -> int:
    """Characters pypdf makes of one glyph name of an encoding: a known name or ``uniXXXX`` becomes
    at most `TEXT_EXPANSION`, an unknown one its own name."""
    try:
        from pypdf._codecs import adobe_glyphs
    except ImportError:  # a future pypdf: count the name itself, the longest it can give
        return len(glyph)
    if glyph in adobe_glyphs or re.fullmatch(r"/u(?:ni)?[0-9A-Fa-f]{4,6}", glyph):
        return min(len(glyph), TEXT_EXPANSION)
    return len(glyph)


def _names_in(content: bytes, wanted: set[str]) -> set[str]:
    """The names in ``wanted`` that appear in ``content`` as name tokens (``#xx`` escapes decoded as
    pypdf decodes them)."""
    from pypdf.generic import NameObject

    found: set[str] = set()
    for match in _NAME_TOKEN.finditer(content):
        token = match.group(0)
        if b"#" in token:
            try:
                name = str(NameObject.read_from_stream(io.BytesIO(token + b" "), None))
            except Exception:  # an escape pypdf cannot read: it cannot name a form either
                continue
        else:
            name = token.decode("utf-8", "replace")
        if name in wanted:
            found.add(name)
            if found == wanted:
                break
    return found


def _resolved(value: Any) -> Any:
    return value.get_object() if hasattr(value, "get_object") else value


def _is_stream(value: Any) -> bool:
    from pypdf.generic import StreamObject

    return isinstance(value, StreamObject)


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


def _is_array(value: Any) -> bool:
    return isinstance(value, list)


def _page_text_over(number: int, limits: InputLimits) -> LimitExceeded:
    return _over(
        f"page {number}'s text is", f"more than {limits.max_pdf_page_chars:,} characters",
        "max_pdf_page_chars", f"{limits.max_pdf_page_chars:,}",
    )


def _file_text_over(number: int, limits: InputLimits) -> LimitExceeded:
    return _over(
        "PDF text is", f"more than {limits.max_pdf_text_chars:,} characters (reached at page {number})",
        "max_pdf_text_chars", f"{limits.max_pdf_text_chars:,}",
    )


def check_pdf_text(page_lengths: Iterable[int], limits: InputLimits) -> None:
    """Refuse a PDF's pages (their text lengths, in order) over the page or file text limits.

    Applied to a PDF's converted text as well, whether it was just extracted or came from the cache:
    a file converted once under higher limits is not accepted by a run with lower ones.
    """
    total = 0
    for number, length in enumerate(page_lengths, start=1):
        if length > limits.max_pdf_page_chars:
            raise _page_text_over(number, limits)
        total += length
        if total > limits.max_pdf_text_chars:
            raise _file_text_over(number, limits)


class _PdfText:
    """Counts the text pypdf extracts, page by page, and stops it at the limits: a visitor sees
    every run of text as pypdf completes it, so a page drawing a form thousands of times is stopped
    at the limit, not after."""

    def __init__(self, limits: InputLimits) -> None:
        self.limits = limits
        self.total = 0
        self.page = 0

    def _visit(self, text: Any, *_: Any) -> None:
        self.page += len(text) if isinstance(text, str) else 0
        if self.page > self.limits.max_pdf_page_chars or self.total + self.page > self.limits.max_pdf_text_chars:
            raise _Spent

    def extract(self, number: int, page: Any, shows_text: bool) -> str:
        """The text layer of one page (pypdf's ``extract_text``), within the page and file limits."""
        self.page = 0
        try:
            # No visitor for a page without text operators: pypdf then skips parsing it, as it would.
            text: str | None = page.extract_text(visitor_text=self._visit) if shows_text else page.extract_text()
        except _Spent:
            text = None
        if text is not None:  # the exact length; the visitor's count only stops a page early
            self.page = len(text)
        if self.page > self.limits.max_pdf_page_chars:
            raise _page_text_over(number, self.limits)
        if text is None or self.total + self.page > self.limits.max_pdf_text_chars:
            raise _file_text_over(number, self.limits)
        self.total += len(text)
        return text


def pdf_page_texts(data: bytes, limits: InputLimits) -> list[str]:
    """Every page's text layer (pypdf), reading the PDF within the limits.

    First every page's content streams, the forms they may draw and their fonts' maps are measured
    (`_PdfMeasure`: decoded at most one byte past what the limits leave, then dropped), so a file
    that would inflate past ``max_pdf_page_content_bytes`` or ``max_pdf_content_bytes`` is refused
    before any page is parsed; then the text is extracted page by page, counted as it comes
    (``max_pdf_page_chars``, ``max_pdf_text_chars``). Raises LimitExceeded; ValueError for a file
    that needs a password; pypdf's own errors for a corrupt file.
    """
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted and not reader.decrypt(""):
        raise ValueError("PDF is encrypted with a password; provide an unencrypted copy")
    pages = list(reader.pages)
    measure = _PdfMeasure(limits)
    measured = []
    for number, page in enumerate(pages, start=1):
        facts = measure.page(number, page)
        measure.check_expansion(number, facts)
        measured.append(facts)
    text = _PdfText(limits)
    return [text.extract(n, page, facts.shows_text) for n, (page, facts) in enumerate(zip(pages, measured, strict=True), 1)]


def check_criteria(count: int, limits: InputLimits) -> None:
    """Refuse a task with more criteria than ``max_task_criteria`` (each is judged per submission)."""
    if count > limits.max_task_criteria:
        raise LimitExceeded(
            f"task has {count:,} criteria, over input_limits.max_task_criteria = {limits.max_task_criteria:,} "
            f"(every criterion is judged for every submission by every judge); "
            f"if the task is genuine, raise it in --config (input_limits: {{max_task_criteria: {count}}})"
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
    "check_criteria",
    "check_file",
    "check_pdf_text",
    "check_source_text",
    "explain",
    "pdf_page_texts",
    "read_limited",
    "size_text",
]
