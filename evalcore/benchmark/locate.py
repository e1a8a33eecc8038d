"""Where a quoted passage sits in a source document, said the way a reader would look it up.

Why: a confirmed hallucination is checked by reading its evidence in the source, and a passage is
only useful with a place to find it. The converted text keeps pages (``## Page 4``), sheets and
slides as headings (`evalcore.benchmark.pages`), but a Word file's headings and paragraph numbers,
a workbook's rows and cells and an e-mail's headers are lost or ambiguous in it. So a `Locator`
reads the document once, as units that each know how they are cited, and finds a passage in them:

* pdf, png, jpg, tiff: ``Page 4``, or ``Page 4 (OCR)`` when the page's text was read from its image;
* pptx: ``Slide 2``;
* xlsx (the original bytes): ``Sheet: Credit Claims, cell C2`` when one cell holds the passage, else
  ``Sheet: Credit Claims, row 2 (A2:D2)``;
* docx (the original bytes): ``under "12. Term and Termination", paragraph 11``, ``heading "5. Fees"
  (paragraph 3)`` or ``under "5. Fees", table 1, row 2``. Paragraphs are counted as a reader counts
  them in Word: every non-empty paragraph outside tables, headings and title included;
* eml (the converted text keeps the headers): ``message "Renewal" from Brett Lawson, header Date``,
  ``... body paragraph 2``, ``quoted message from Ann Lee (3 Oct 2025), paragraph 1``, ``...,
  attachment list``;
* txt, md, html: ``line 12`` of the converted text.

A passage is matched ignoring case, runs of white space (a table row's tabs) and curly quotes; one
the auditor trimmed or wrapped is found by its last line, then by its longest line (as
`pages.locate_page` does). Pure: the caller reads the bytes.
"""

from __future__ import annotations

import bisect
import email.utils
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass

from evalcore.benchmark import pages
from evalcore.schema import SourceDocument

PAGED = frozenset({"pdf", "png", "jpg", "tiff", "pptx"})
"""Kinds whose converted text is cut into pages or slides by heading lines."""

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
_MIN_LINE = 8
"""A passage line shorter than this is too common to place the passage by."""
_LABEL_CHARS = 60


@dataclass(frozen=True)
class Unit:
    """One citable piece of a document: its text, how it is cited, and the page it is on."""

    text: str
    where: str
    page: str | None = None


@dataclass(frozen=True)
class Located:
    """Where a passage was found (`where`), or None; `page` is the page/sheet/slide it is on."""

    where: str | None
    page: str | None = None

    @property
    def found(self) -> bool:
        """True when the passage was found in the document."""
        return self.where is not None


def normalise(text: str) -> str:
    """Text as passages are compared: straight quotes, one space for any white space, case-folded."""
    return " ".join(text.translate(_QUOTES).split()).casefold()


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1].rstrip() + "…"


def _candidates(passage: str) -> list[str]:
    """The passage itself, then its last line, then its other lines longest first (each once)."""
    lines = [ln.strip() for ln in passage.strip().split("\n") if len(ln.strip()) >= _MIN_LINE]
    out = [passage]
    if lines:
        out.append(lines[-1])
    out.extend(sorted(lines, key=len, reverse=True))
    seen: set[str] = set()
    result: list[str] = []
    for c in out:
        n = normalise(c)
        if n and n not in seen:
            seen.add(n)
            result.append(n)
    return result


# --------------------------------------------------------------------------------------------
# Units per kind
# --------------------------------------------------------------------------------------------


def _paged_units(text: str) -> list[Unit]:
    """One unit per page/sheet/slide (label from its heading); text before the first heading has none."""
    units: list[Unit] = []
    headings = list(pages.HEADING.finditer(text))
    if not headings:
        return [Unit(text, "", None)] if text.strip() else []
    if text[: headings[0].start()].strip():
        units.append(Unit(text[: headings[0].start()], "", None))
    for k, m in enumerate(headings):
        end = headings[k + 1].start() if k + 1 < len(headings) else len(text)
        label = m.group("label")
        ocr = m.group(0).rstrip().endswith(pages.OCR_MARK.strip())
        units.append(Unit(text[m.end():end], label + (pages.OCR_MARK if ocr else ""), label))
    return units


def _line_units(text: str) -> list[Unit]:
    return [Unit(line, f"line {k}") for k, line in enumerate(text.split("\n"), start=1) if line.strip()]


def _column_letter(index: int) -> str:
    """1 -> A, 27 -> AA (spreadsheet column names)."""
    letters = ""
    while index > 0:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def _xlsx_units(data: bytes) -> tuple[list[Unit], list[Unit]]:
    """(cells, rows) of every sheet, cited as the workbook names them (rows and columns from A1)."""
    import openpyxl

    from evalcore.benchmark.documents import _cell_text  # the converter's own rendering of a value

    cells: list[Unit] = []
    rows: list[Unit] = []
    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        for sheet in workbook.worksheets:
            label = f"Sheet: {sheet.title}"
            for r, values in enumerate(sheet.iter_rows(min_row=1, min_col=1, values_only=True), start=1):
                texts = [_cell_text(v) for v in values]
                filled = [c for c, t in enumerate(texts, start=1) if t.strip()]
                if not filled:
                    continue
                for c in filled:
                    cells.append(Unit(texts[c - 1], f"{label}, cell {_column_letter(c)}{r}", label))
                first, last = _column_letter(filled[0]), _column_letter(filled[-1])
                span = f"{first}{r}" if first == last else f"{first}{r}:{last}{r}"
                rows.append(Unit("\t".join(texts[: filled[-1]]), f"{label}, row {r} ({span})", label))
    finally:
        workbook.close()
    return cells, rows


def _docx_units(data: bytes) -> list[Unit]:
    import docx
    from docx.table import Table

    document = docx.Document(io.BytesIO(data))
    units: list[Unit] = []
    heading: str | None = None
    paragraph = table = 0
    for block in document.iter_inner_content():
        under = f'under "{_short(heading)}", ' if heading else ""
        if isinstance(block, Table):
            table += 1
            for r, row in enumerate(block.rows, start=1):
                texts: list[str] = []
                previous = None
                for cell in row.cells:
                    if cell._tc is previous:  # a merged cell repeats in python-docx: keep it once
                        continue
                    previous = cell._tc
                    texts.append(cell.text.replace("\n", " ").strip())
                if any(texts):
                    units.append(Unit("\t".join(texts), f"{under}table {table}, row {r}"))
            continue
        text = block.text
        if not text.strip():
            continue
        paragraph += 1
        style = str(getattr(block.style, "name", "") or "")
        if style.startswith("Heading"):
            heading = text
            units.append(Unit(text, f'heading "{_short(text)}" (paragraph {paragraph})'))
        elif style == "Title":
            units.append(Unit(text, f'title "{_short(text)}" (paragraph {paragraph})'))
        else:
            units.append(Unit(text, f"{under}paragraph {paragraph}"))
    return units


_QUOTED_START = re.compile(
    r"^\s*(?:>\s*)?(?:-{2,}\s*(?:original message|forwarded message)\s*-*|on .{4,200} wrote:|from:\s*\S.*)\s*$",
    re.IGNORECASE,
)
_HEADER_LINE = re.compile(r"^\s*(?:>\s*)?(?P<name>from|sent|date|to|cc|subject):\s*(?P<value>.*)$", re.IGNORECASE)


def _person(value: str) -> str:
    name, address = email.utils.parseaddr(value)
    return name or address or value.strip()


def _eml_units(text: str) -> list[Unit]:
    """Header lines, body paragraphs and quoted messages of a converted e-mail (`documents._eml`)."""
    head, _, body = text.partition("\n\n")
    headers: dict[str, str] = {}
    units: list[Unit] = []
    header_lines: list[tuple[str, str]] = []
    for line in head.split("\n"):
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
            header_lines.append((name.strip(), line))
    message = "message"
    if headers.get("subject"):
        message += f' "{_short(headers["subject"])}"'
    if headers.get("from"):
        message += f" from {_person(headers['from'])}"
    units.extend(Unit(line, f"{message}, header {name}") for name, line in header_lines)
    current, number = message + ", body", 0
    for paragraph in re.split(r"\n\s*\n", body):
        if not paragraph.strip():
            continue
        first = paragraph.strip().split("\n")[0]
        if first.startswith("Attachments: "):
            units.append(Unit(paragraph, f"{message}, attachment list"))
            continue
        if _QUOTED_START.match(first):
            found = {m.group("name").lower(): m.group("value").strip()
                     for m in map(_HEADER_LINE.match, paragraph.split("\n")) if m}
            who = _person(found["from"]) if found.get("from") else _short(first.strip("> -"))
            when = found.get("sent") or found.get("date")
            current, number = f"quoted message from {who}" + (f" ({_short(when)})" if when else ""), 0
            if found:
                units.append(Unit(paragraph, f"{current}, headers"))
                continue
        number += 1
        units.append(Unit(paragraph, f"{current} paragraph {number}" if current.endswith(", body")
                          else f"{current}, paragraph {number}"))
    return units


# --------------------------------------------------------------------------------------------
# The locator
# --------------------------------------------------------------------------------------------


class Locator:
    """One document read as citable units; `locate` finds a passage in them.

    `raw` is the original file: the structure of a .docx (headings, paragraphs, tables) and of a
    .xlsx (rows, cells) is read from it. Without it a workbook is located by sheet only and a Word
    file by line of its converted text.
    """

    def __init__(self, document: SourceDocument, raw: bytes | None = None) -> None:
        self.document = document
        self.kind = document.kind
        self._groups: list[list[Unit]] = []
        if self.kind == "xlsx" and raw is not None:
            cells, rows = _xlsx_units(raw)
            self._groups = [cells, rows]
        elif self.kind == "docx" and raw is not None:
            self._groups = [_docx_units(raw)]
        elif self.kind == "eml":
            self._groups = [_eml_units(document.text)]
        elif self.kind in PAGED or self.kind == "xlsx":
            self._groups = [_paged_units(document.text)]
        else:
            self._groups = [_line_units(document.text)]
        # each group's units joined by a separator no passage holds: one `str.find` scans a whole
        # workbook, and the unit is found by bisecting the start offsets (a report locates many passages)
        self._joined: list[tuple[str, list[int]]] = []
        for group in self._groups:
            texts = [normalise(u.text) for u in group]
            starts, at = [], 0
            for t in texts:
                starts.append(at)
                at += len(t) + 1
            self._joined.append(("\0".join(texts), starts))

    def _search(self, candidate: str, page: str | None) -> Unit | None:
        if "\0" in candidate:
            return None
        wanted = page.casefold() if page is not None else None
        for group, (joined, starts) in zip(self._groups, self._joined, strict=True):
            at = joined.find(candidate)
            while at >= 0:
                unit = group[bisect.bisect_right(starts, at) - 1]
                if wanted is None or unit.page is None or unit.page.casefold() == wanted:
                    return unit
                at = joined.find(candidate, at + 1)
        return None

    def _matches(self, passage: str, page: str | None) -> Iterator[Unit]:
        for candidate in _candidates(passage):
            if page is not None:
                unit = self._search(candidate, page)
                if unit is not None:
                    yield unit
            unit = self._search(candidate, None)
            if unit is not None:
                yield unit

    def locate(self, passage: str | None, page: str | None = None) -> Located:
        """Where `passage` is; `page` (the flag's cited page/sheet/slide) is searched first.

        Found elsewhere than the cited page: the location says so (``Page 5 (cited as Page 4)``).
        Not found: `Located(None)`; the caller shows the cited page, if any, as the flag gave it.
        """
        if not passage or not passage.strip():
            return Located(None)
        for unit in self._matches(passage, page):
            where = unit.where or (unit.page or "")
            if not where:
                continue
            if page and unit.page and unit.page.casefold() != page.casefold():
                where += f" (cited as {page})"
            return Located(where, unit.page)
        return Located(None)


def locate(document: SourceDocument, passage: str | None, page: str | None = None, raw: bytes | None = None) -> Located:
    """Where `passage` is in `document` (one-off; build a `Locator` to look up several passages)."""
    return Locator(document, raw).locate(passage, page)


def units_of(document: SourceDocument, raw: bytes | None = None) -> list[Unit]:
    """Every citable unit of a document, in reading order (for inspection and tests)."""
    return [u for group in Locator(document, raw)._groups for u in group]
