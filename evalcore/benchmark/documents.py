"""Document -> plain text, with a conversion cache keyed by the hash of the raw bytes.

Why plain text: judges and the grounding checks compare deliverables with the sources as text, so
every format is flattened once, deterministically (the same bytes always give the same text).
Why a cache: the same task documents are read for every submission of every system; converting a
docx or a PDF is the slow part of loading. The cache key is the SHA-256 of the raw bytes plus the
file kind and the converter version, so a changed converter never serves stale text.

What each converter keeps:
* docx: paragraphs and tables in document order (a table row = cells joined by tabs);
* xlsx: every sheet under a ``## Sheet: <name>`` heading, one tab-separated line per non-empty row;
* pptx: every slide under ``## Slide <n>``, its text frames, tables and grouped shapes;
* eml: From/To/Cc/Date/Subject, the body (text/plain preferred, else HTML as text), attachment names;
* pdf: every page under a ``## Page <n>`` heading: its text layer, or, for a page without one (a
  scan), its OCR text and a `` (OCR)`` mark (`evalcore.benchmark.ocr`); png, jpg, tiff: every frame
  OCR'd as a page. Parser repairs of a damaged file become one warning naming it (`noise`), and
  so does each Python warning a document library raises while it reads the file (PIL's
  decompression-bomb or palette-transparency warnings, openpyxl's style warnings): one line each,
  the document's `warnings`, never a raw ``warnings.warn`` on the terminal;
* txt, md: UTF-8 (BOM stripped; cp1252 as a fallback for legacy files); html: visible text. A
  "text" file with NUL bytes, or with over 1 % control characters or undecodable bytes, is refused
  as binary.

Every file is held to the input limits first (``evalcore.benchmark.limits``: size, unpacked size of
an Office file, workbook rows and cells, a PDF's inflated content streams and extracted text); a
refusal says which limit and how to raise it.

The disk cache entries check themselves (``evalcore.benchmark.cache``): an entry that is damaged,
made from other bytes, or not the text of its kind is discarded with one warning naming it, and the
file converted again. A PDF's text, fresh or cached, is held to the PDF text limits (a file
cached under higher limits is not accepted by a run with lower ones); its content-stream limits
bound the cost of converting, which a cached file does not have.
"""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import io
import os
import re
from collections.abc import Callable, Iterable, Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from evalcore.benchmark import cache, ocr
from evalcore.benchmark import limits as input_limits
from evalcore.benchmark.noise import captured_warnings, damaged_warning, quiet_parsers
from evalcore.config.models import InputLimits
from evalcore.errors import DocumentError
from evalcore.schema import SourceDocument, sha256_bytes

CONVERTER_VERSION = 2
"""Bump when any converter's output changes: it is part of the cache key."""

UNREADABLE_SCAN_REASON = "no text could be read from any page, with or without OCR (blank or illegible scan?)"

_KIND_BY_EXTENSION = {
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".pptx": "pptx",
    ".eml": "eml",
    ".pdf": "pdf",
    ".txt": "txt",
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".png": "png",
    ".jpg": "jpg",
    ".jpeg": "jpg",
    ".tif": "tiff",
    ".tiff": "tiff",
}
SUPPORTED_EXTENSIONS: tuple[str, ...] = tuple(_KIND_BY_EXTENSION)
"""File name endings that can be converted (lower case, with the dot)."""


def kind_of(name: str) -> str | None:
    """The document kind for a file name (by extension, case-insensitive), or None if unsupported."""
    return _KIND_BY_EXTENSION.get(os.path.splitext(name)[1].lower())


def is_supported(name: str) -> bool:
    """True if ``name`` has an extension we can convert."""
    return kind_of(name) is not None


# --------------------------------------------------------------------------------------------
# Text normalisation shared by every converter
# --------------------------------------------------------------------------------------------

_MANY_BLANK_LINES = re.compile(r"\n{3,}")


def _tidy(text: str) -> str:
    """Stable whitespace: unix newlines, no trailing spaces, at most one blank line in a row."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _MANY_BLANK_LINES.sub("\n\n", text).strip()


def _cell_text(value: Any) -> str:
    """A spreadsheet value as a person would read it (no '1500000.0', no '00:00:00' on dates)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value).replace("\t", " ").replace("\n", " ")


def _row_line(cells: Iterable[str]) -> str:
    values = list(cells)
    while values and not values[-1].strip():
        values.pop()
    return "\t".join(values)


# --------------------------------------------------------------------------------------------
# Converters (bytes -> text); each raises whatever its parser raises on a corrupt file
# --------------------------------------------------------------------------------------------


def _docx_table_lines(table: Any) -> Iterator[str]:
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            if cell._tc is previous:  # a merged cell repeats in python-docx: keep it once
                continue
            previous = cell._tc
            cells.append(cell.text.replace("\n", " ").strip())
        line = _row_line(cells)
        if line:
            yield line


def _docx(data: bytes) -> str:
    import docx
    from docx.table import Table

    document = docx.Document(io.BytesIO(data))
    lines: list[str] = []
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            lines.append("")
            lines.extend(_docx_table_lines(block))
            lines.append("")
        else:
            lines.append(block.text)
    return "\n".join(lines)


def _xlsx(data: bytes, limits: InputLimits | None = None) -> str:
    import openpyxl

    budget = input_limits.SheetBudget(limits or InputLimits())
    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        parts: list[str] = []
        for sheet in workbook.worksheets:
            parts.append(f"## Sheet: {sheet.title}")
            for row in budget.rows_of(sheet.title, sheet.iter_rows(values_only=True)):
                line = _row_line(_cell_text(v) for v in row)
                if line.strip():
                    parts.append(line)
            parts.append("")
        return "\n".join(parts)
    finally:
        workbook.close()


def _pptx_shape_lines(shape: Any) -> Iterator[str]:
    if getattr(shape, "shapes", None) is not None and shape.shape_type == 6:  # MSO_SHAPE_TYPE.GROUP
        for child in shape.shapes:
            yield from _pptx_shape_lines(child)
        return
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        yield shape.text_frame.text
    if getattr(shape, "has_table", False) and shape.has_table:
        for row in shape.table.rows:
            line = _row_line(cell.text.replace("\n", " ").strip() for cell in row.cells)
            if line:
                yield line


def _pptx(data: bytes) -> str:
    import pptx

    presentation = pptx.Presentation(io.BytesIO(data))
    parts: list[str] = []
    for number, slide in enumerate(presentation.slides, start=1):
        parts.append(f"## Slide {number}")
        for shape in slide.shapes:
            parts.extend(_pptx_shape_lines(shape))
        parts.append("")
    return "\n".join(parts)


_HTML_BLOCKS = (
    "p div li tr table h1 h2 h3 h4 h5 h6 pre blockquote section article header footer title ul ol dt dd"
).split()


def _html_text(markup: str | bytes) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(markup, "html.parser")
    for tag in soup(["script", "style", "head", "template"]):
        tag.decompose()
    # Inline tags (b, a, span) stay inside their line; block tags end a line; cells are tab-separated.
    for tag in soup.find_all(_HTML_BLOCKS):
        tag.append("\n")
    for tag in soup.find_all(["td", "th"]):
        tag.append("\t")
    for tag in soup.find_all("br"):
        tag.replace_with("\n")
    return soup.get_text()


def _eml(data: bytes) -> str:
    message = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    lines = [f"{h}: {message[h]}" for h in ("From", "To", "Cc", "Date", "Subject") if message[h] is not None]
    body_part = message.get_body(preferencelist=("plain", "html"))
    body = ""
    if body_part is not None:
        assert isinstance(body_part, EmailMessage)
        content = body_part.get_content()
        body = content if isinstance(content, str) else bytes(content).decode("utf-8", "replace")
        if body_part.get_content_subtype() == "html":
            body = _html_text(body)
    attachments = [part.get_filename() or "(unnamed)" for part in message.iter_attachments()]
    text = "\n".join(lines) + "\n\n" + body
    if attachments:
        text += "\n\nAttachments: " + ", ".join(attachments)
    return text


def _pdf(data: bytes, limits: InputLimits | None = None) -> ocr.PagedText:
    with quiet_parsers() as repairs:
        layers = input_limits.pdf_page_texts(data, limits or InputLimits())
    if not layers:
        raise ValueError("PDF has no pages")
    paged = ocr.pdf_pages(data, layers)
    warning = damaged_warning(repairs)
    return paged.model_copy(update={"warnings": [warning]}) if warning else paged


def _image(data: bytes) -> ocr.PagedText:
    return ocr.image_pages(data)


_TEXT_CONTROLS = frozenset("\t\n\r\f\v")
BINARY_SHARE = 0.01
"""Share of control characters or undecodable bytes above which a "text" file is taken as binary."""


def binary_share(text: str) -> float:
    """Share of the first 64 K characters that no text has: C0 controls (but whitespace) and the
    replacement character of undecodable bytes. Random bytes score ~12 %, any real text ~0."""
    sample = text[:65536]
    if not sample:
        return 0.0
    odd = sum(1 for c in sample if (c < " " and c not in _TEXT_CONTROLS) or c == "\ufffd")
    return odd / len(sample)


def _plain(data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise ValueError("file looks binary (contains NUL bytes), not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    share = binary_share(text)
    if share > BINARY_SHARE:
        raise ValueError(
            f"file looks binary, not text ({share:.0%} control characters or undecodable bytes)"
        )
    return text


def _html(data: bytes) -> str:
    return _html_text(data)


_CONVERTERS: dict[str, Callable[[bytes], str | ocr.PagedText]] = {
    "docx": _docx,
    "xlsx": _xlsx,
    "pptx": _pptx,
    "eml": _eml,
    "pdf": _pdf,
    "txt": _plain,
    "md": _plain,
    "html": _html,
    "png": _image,
    "jpg": _image,
    "tiff": _image,
}
_LIMITED: dict[str, Callable[[bytes, InputLimits], str | ocr.PagedText]] = {"xlsx": _xlsx, "pdf": _pdf}
"""Converters that apply input limits while they read (workbook rows and cells; PDF content and text)."""
PAGED_KINDS = frozenset({"pdf"}) | ocr.IMAGE_KINDS
"""Kinds converted page by page: their cached form is `ocr.PagedText` as JSON."""


# --------------------------------------------------------------------------------------------
# The public entry point
# --------------------------------------------------------------------------------------------


def documents_dir() -> Path | None:
    """Where converted text is kept on disk (``<cache root>/docs/v<N>/``), or None when it is off."""
    root = cache.cache_root()
    return None if root is None else root / "docs" / f"v{CONVERTER_VERSION}"


_NOT_CACHED = frozenset({"txt", "md"})
"""Kinds whose conversion is a decode: caching them would only fill the cache with deliverables."""


def convert(name: str, data: bytes, limits: InputLimits | None = None) -> SourceDocument:
    """Convert one file's bytes to a SourceDocument (text + hash of the raw bytes).

    ``name`` is the document's path relative to its ``documents/`` folder (or a deliverable's file
    name); its extension decides the converter. Raises DocumentError naming the file for an
    unsupported extension, a corrupt file (with the parser's reason), a scanned PDF, or a file over
    the input ``limits`` (``evalcore.benchmark.limits``; defaults when None).
    """
    kind = kind_of(name)
    if kind is None:
        extension = os.path.splitext(name)[1] or "(no extension)"
        raise DocumentError(
            name,
            f"unsupported file type {extension!r}; supported: {', '.join(SUPPORTED_EXTENSIONS)}",
        )
    limits = limits or InputLimits()
    try:
        input_limits.check_file(kind, data, limits)
    except input_limits.LimitExceeded as exc:
        raise DocumentError(name, exc.reason) from None
    sha = sha256_bytes(data)
    warned: list[str] = []
    if kind in _NOT_CACHED:
        plain, warned = _convert_uncached(name, kind, data, limits)
        return SourceDocument(name=name, kind=kind, sha256=sha, text=plain, size_bytes=len(data), warnings=warned)
    key = (sha, kind)
    text = cache.memory.get(key)
    if text is None:
        folder = documents_dir()
        entry_key = f"docs/v{CONVERTER_VERSION}/{kind}"
        check = ocr.PagedText.model_validate_json if kind in PAGED_KINDS else None
        text = cache.disk_get(folder, sha, kind, key=entry_key, check=check)
        cache.memory.count(hit=text is not None)
        if text is None:
            text, warned = _convert_uncached(name, kind, data, limits)
            if not warned:  # a plain text that warned is not cached: every load shows its warnings
                cache.disk_put(folder, sha, kind, text, key=entry_key)
        if not warned:
            cache.memory.put(key, text)
    else:
        cache.memory.count(hit=True)
    if kind in PAGED_KINDS:
        paged = ocr.PagedText.model_validate_json(text)
        if kind == "pdf":
            try:
                input_limits.check_pdf_text((len(p.text) for p in paged.pages), limits)
            except input_limits.LimitExceeded as exc:
                raise DocumentError(name, exc.reason) from None
        return SourceDocument(name=name, kind=kind, sha256=sha, text=paged.text(), size_bytes=len(data),
                              pages=paged.infos(), warnings=paged.warnings)
    return SourceDocument(name=name, kind=kind, sha256=sha, text=text, size_bytes=len(data), warnings=warned)


def _convert_uncached(name: str, kind: str, data: bytes, limits: InputLimits) -> tuple[str, list[str]]:
    """The converted text; for a paged kind, its `ocr.PagedText` as JSON (pages tidied one by one).

    With it, what the document libraries warned about the file while reading it
    (`noise.captured_warnings`, one line each): for a paged kind inside the JSON (cached with the
    pages, so a cached conversion warns as the first did), else returned beside the text. A file
    that cannot be converted is refused with its reason alone.
    """
    try:
        with captured_warnings() as warned:
            converted = _LIMITED[kind](data, limits) if kind in _LIMITED else _CONVERTERS[kind](data)
        if isinstance(converted, str):
            return _tidy(converted), list(warned)
        pages = [p.model_copy(update={"text": _tidy(p.text)}) for p in converted.pages]
        if not any(p.text for p in pages):
            raise DocumentError(name, UNREADABLE_SCAN_REASON)
        notes = list(dict.fromkeys([*converted.warnings, *warned]))
        return converted.model_copy(update={"pages": pages, "warnings": notes}).model_dump_json(), []
    except input_limits.LimitExceeded as exc:
        raise DocumentError(name, exc.reason) from None
    except DocumentError:
        raise
    except ocr.OcrUnavailable as exc:
        raise DocumentError(name, str(exc)) from None
    except Exception as exc:  # every parser has its own exception types; all mean "corrupt"
        reason = input_limits.explain(kind, exc)
        if reason is None:
            reason = f"cannot read {kind} file: {str(exc).strip() or type(exc).__name__}"
        raise DocumentError(name, reason) from exc
