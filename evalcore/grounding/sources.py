"""Building the source index: passages, tables read row by row, sections, document dates.

Why: the checks ask the same questions of the sources for every deliverable ("does any source
state $1.25 million?", "which passages share these keywords?"), so the sources are indexed once
per set (`index_sources`, cached) - normalised words and token positions, sentence passages,
table rows, values with their contexts, labels, per-document dates, amendments (`amendments`) and
documents of another matter (`matter`).

Tables: a row is one fact, read with its header (`_find_tables`); a bare number in a column
headed "%" is a percentage; a table whose rows carry consecutive periods is a schedule, where
exactly one row is in force on a given day (`_mark_schedules`).
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import Any

from evalcore.grounding.amendments import find_changes, superseded
from evalcore.grounding.derived import rates
from evalcore.grounding.index import NormalisedDoc, Passage, Row, SourceIndex, SourceValue, Table
from evalcore.grounding.labels import REF_RE, index_labels
from evalcore.grounding.matter import matter_index
from evalcore.grounding.normalise import normalise_date
from evalcore.grounding.text import keywords, overlaps, sentence_bounds, tokens_with_offsets
from evalcore.grounding.values import Value, duration_direction, find_values, value_contexts, value_key
from evalcore.schema import SourceDocument


def _as_pairs(sources: Sequence[SourceDocument] | Mapping[str, str]) -> list[tuple[str, str]]:
    if isinstance(sources, Mapping):
        return [(str(k), str(v)) for k, v in sources.items()]
    return [(d.name, d.text) for d in sources]


def index_sources(sources: Sequence[SourceDocument] | Mapping[str, str]) -> SourceIndex:
    """Index a set of texts (source documents, or any name -> text mapping), kept in a small
    per-process cache.

    A sweep does not rely on the cache: at real size an index costs 0.15-0.5 s per task to build
    and its pickle 0.01-0.06 s to load, and a task's submissions land in several shards and
    worker processes, so the sweep builds each task's index once and passes it down as an
    argument (`grade_submission(..., source_index=...)` → `check(..., index=...)`)."""
    return _build_index_cached(tuple(_as_pairs(sources)))


# --------------------------------------------------------------------------------------------
# Tables: a row is one fact, read with its header
# --------------------------------------------------------------------------------------------

# A column of percentages: "Availability (%)", "Share %", "Percentage" - not "Tenant Share (11.2%)",
# whose "%" belongs to a figure of the label.
_PERCENT_HEADER = re.compile(r"(?<![\d.\s])\s*%|^\s*%|\(\s*%\s*\)|\bper\s?cent(?:age)?\b", re.I)
_MONEY_HEADER = re.compile(r"USD|EUR|GBP|\$|€|£|amount|fee|price|rent|cost|value", re.I)


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    pos = 0
    for line in text.split("\n"):
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def _cells(text: str, s: int, e: int) -> list[tuple[int, int]] | None:
    """Cell spans of a table line (tab-separated, or a Markdown pipe row); None if not a row."""
    line = text[s:e]
    if "\t" in line.strip(" \t"):
        out, pos = [], s
        for part in line.split("\t"):
            out.append((pos, pos + len(part)))
            pos += len(part) + 1
        return out
    stripped = line.strip()
    if stripped.startswith("|") and stripped.count("|") >= 2:
        lead = s + line.index("|")
        parts = stripped.strip("|").split("|")
        out, pos = [], lead + 1
        for part in parts:
            out.append((pos, pos + len(part)))
            pos += len(part) + 1
        return out
    return None


def _find_tables(
    name: str, text: str
) -> list[tuple[Table, tuple[int, int], list[tuple[int, int]], list[list[tuple[int, int]]]]]:
    """Tables of a document: runs of >= 2 consecutive table lines. Returns each table with its
    span, its data row line spans and their cells. The line right above a table, when short, is
    its title (an exported sheet's "## Sheet: Revenue by Customer 2025")."""
    lines = _line_spans(text)
    out = []
    i = 0
    while i < len(lines):
        first = _cells(text, *lines[i])
        if first is None:
            i += 1
            continue
        j = i
        run: list[tuple[tuple[int, int], list[tuple[int, int]]]] = []
        while j < len(lines):
            c = _cells(text, *lines[j])
            if c is None:
                break
            run.append((lines[j], c))
            j += 1
        if len(run) >= 2:
            title = ""
            k = i - 1
            while k >= 0 and not text[lines[k][0] : lines[k][1]].strip():
                k -= 1
            if k >= 0 and len(text[lines[k][0] : lines[k][1]].strip()) <= 80:
                title = re.sub(r"^[#\s]*(?:Sheet\s*:\s*)?", "", text[lines[k][0] : lines[k][1]].strip())
            # The first line names the columns unless it holds figures itself: a two-column
            # "Initial Deposit | $1,500,000" list has no header, every line is a row.
            has_header = not re.search(r"\d", text[run[0][0][0] : run[0][0][1]])
            header = tuple(text[a:b].strip() for a, b in run[0][1]) if has_header else ()
            body = [(ls, c) for ls, c in run[1 if has_header else 0 :] if not re.fullmatch(r"[\s|:\-]*", text[ls[0] : ls[1]])]
            span = (run[0][0][0], run[-1][0][1])
            out.append((Table(name, title, header), span, [ls for ls, _c in body], [c for _ls, c in body]))
        i = j
    return out


def _mark_schedules(tables: Sequence[Table]) -> None:
    """A table is a schedule when >= 2 rows carry a period and the periods follow one another
    (each starts within a week after the previous one ends): a rent, fee or payment schedule,
    where exactly one row is in force on a given day."""
    for t in tables:
        periods = [r.period for r in t.rows if r.period is not None]
        if len(periods) < 2:
            continue
        ordered = sorted(periods)
        t.schedule = all(0 < (b[0] - a[1]).days <= 7 for a, b in zip(ordered, ordered[1:], strict=False))


# --------------------------------------------------------------------------------------------
# Numbered sections and document dates
# --------------------------------------------------------------------------------------------

_SECTION_START = re.compile(r"^\s*(?:(?:Section|SECTION|Article|ARTICLE|Clause|CLAUSE)\s+)?(\d+(?:\.\d+)*)[.)]?\s")
_DOC_DATE = re.compile(
    r"(?:^|\n)[ \t>*_#-]*(?:Date|Dated|Sent|Date of report|Commitment Date)[*_]*\s*:[*_]*\s*(?P<a>[^\n]{4,60})"
    r"|\b(?:dated|made as of|entered into as of|effective as of|is made on)\s+(?P<b>[^\n]{4,40})",
    re.I,
)


def _doc_date(text: str) -> date | None:
    """The document's own date: a "Date:" header, "dated ..." / "made as of ..." near the top, or
    a line at the top that is only a date (a letter's dateline). None when it states none."""
    head = text[:600]
    for m in _DOC_DATE.finditer(head):
        d = normalise_date(m.group("a") or m.group("b") or "")
        if d is not None:
            return d
    for line in head.split("\n")[:6]:
        d = normalise_date(line)
        if d is not None and len(line.strip()) <= 24:
            return d
    return None


# --------------------------------------------------------------------------------------------
# The index
# --------------------------------------------------------------------------------------------


def _keyword_set(text: str) -> frozenset[str]:
    """The keywords of a passage or a value's context, each one shared string (`sys.intern`).

    Why shared: the same few thousand stems recur in thousands of passages, and pickle writes a
    string object it has already written as a reference to it. Every grading worker unpickles the
    index of each task it grades: with the stems shared, that took ~25 % less CPU on the lab
    benchmark's tasks (and each worker holds one copy of each stem)."""
    return frozenset(map(sys.intern, keywords(text)))


@lru_cache(maxsize=16)
def _build_index_cached(pairs: tuple[tuple[str, str], ...]) -> SourceIndex:
    """Index of the sources; cached because Stage 2 asks for passages flag after flag.

    Prose is cut into sentence passages; each data row of a table is a passage of its own (its
    words plus the header's and the table title's), because a row is one fact - "Norland ...
    31.0%" - and a whole table as one passage would make every figure in it look like it is
    about every row. A bare number in a column headed "%" is a percentage."""
    docs = list(pairs)
    norm: list[NormalisedDoc] = []
    passages: list[Passage] = []
    values: list[SourceValue] = []
    tables: list[Table] = []
    for name, text in docs:
        toks, offs = tokens_with_offsets(text)
        norm.append(NormalisedDoc.of(name, toks, offs))
        found_tables = _find_tables(name, text)
        masked = text
        row_passages: list[Passage] = []
        for table, (t_start, t_end), row_lines, row_cells in found_tables:
            t_id = len(tables)
            tables.append(table)
            header_line = "\t".join(table.header)
            for row_no, ((s, e), cells) in enumerate(zip(row_lines, row_cells, strict=True)):
                row = Row(t_id, row_no, tuple(cells))
                table.rows.append(row)
                shown = "\n".join(x for x in (table.title, header_line, text[s:e].strip()) if x)
                kw = _keyword_set(text[s:e] + " " + header_line + " " + table.title)
                row_passages.append(Passage(name, s, e, shown, kw, row=row))
            # The header and rows are blanked out of the prose (offsets kept) so no sentence
            # passage swallows a table.
            masked = masked[:t_start] + re.sub(r"[^\n]", " ", masked[t_start:t_end]) + masked[t_end:]
        # Trimmed to their text, so no sentence starts inside a blanked table.
        bounds = [
            (a + len(masked[a:b]) - len(masked[a:b].lstrip()), b - len(masked[a:b]) + len(masked[a:b].rstrip()))
            for a, b in sentence_bounds(masked)
        ]
        doc_passages: list[Passage] = []
        section: str | None = None
        for s, e in bounds:
            m = _SECTION_START.match(text[s:e])
            if m:
                section = m.group(1)
            doc_passages.append(Passage(name, s, e, text[s:e].strip(), _keyword_set(text[s:e]), section=section))
        all_doc = sorted(doc_passages + row_passages, key=lambda p: p.start)
        passages.extend(all_doc)
        ref_spans = [(m.start(), m.end()) for m in REF_RE.finditer(text)]
        # "Section 14" is a label, not the number 14.
        doc_values = [v for v in find_values(text) if not overlaps(v.start, v.end, ref_spans)]
        contexts = value_contexts(masked, doc_values, bounds)
        for v, ctx in zip(doc_values, contexts, strict=True):
            found = next((p for p in all_doc if p.start <= v.start < p.end), None)
            vp = found if found is not None else Passage(name, v.start, v.end, text[v.start : v.end], frozenset())
            column: int | None = None
            if vp.row is not None:
                column = next((c for c, (a, b) in enumerate(vp.row.cells) if a <= v.start < b), None)
                table = tables[vp.row.table]
                head = table.header[column] if column is not None and column < len(table.header) else ""
                if v.kind == "number" and v.unit is None and _PERCENT_HEADER.search(head) and not _MONEY_HEADER.search(head):
                    v = Value("percent", v.value, v.start, v.end, v.text)
                row_text = text[vp.start : vp.end]
                ctx = _keyword_set(row_text + " " + head + " " + table.title)
            vp.values.append(v)
            values.append(SourceValue(v, name, vp, ctx, len(values), column, duration_direction(v, text)))
    for p in passages:
        if p.row is not None:
            dates_in_row = sorted({v.value for v in p.values if v.kind == "date"})
            if len(dates_in_row) == 2:
                p.row.period = (dates_in_row[0], dates_in_row[1])
    _mark_schedules(tables)
    positions: list[dict[str, list[int]]] = []
    for doc in norm:
        pos: dict[str, list[int]] = {}
        for i, t in enumerate(doc.tokens):
            pos.setdefault(t, []).append(i)
        positions.append(pos)
    by_keyword: dict[str, list[int]] = {}
    by_value: dict[tuple[str, Any], list[int]] = {}
    for i, p in enumerate(passages):
        for k in p.keywords:
            by_keyword.setdefault(k, []).append(i)
        for v in p.values:
            by_value.setdefault(value_key(v), []).append(i)
    by_number: dict[Decimal, list[SourceValue]] = {}
    by_date: dict[date, list[SourceValue]] = {}
    for sv in values:
        if sv.value.kind in ("amount", "percent", "number"):
            by_number.setdefault(sv.value.value, []).append(sv)
        elif sv.value.kind == "date":
            by_date.setdefault(sv.value.value, []).append(sv)
    df: Counter[str] = Counter()
    for p in passages:
        df.update(p.keywords)
    n = max(1, len(passages))
    idf = {t: math.log((n + 1) / (c + 0.5)) for t, c in df.items()}
    amounts = {sv.value.value for sv in values if sv.value.kind == "amount"}
    percents = {sv.value.value for sv in values if sv.value.kind == "percent"}
    bare = {sv.value.value for sv in values if sv.value.kind == "number" and sv.value.unit is None}
    numbers = {sv.value.value for sv in values if sv.value.kind in ("amount", "percent", "number")}
    unit_values = {(sv.value.value, sv.value.unit) for sv in values if sv.value.kind == "number" and sv.value.unit}
    dates = {sv.value.value for sv in values if sv.value.kind == "date"}
    months = {(d.year, d.month) for d in dates} | {sv.value.value for sv in values if sv.value.kind == "month"}
    index = SourceIndex(
        docs=docs,
        norm=norm,
        passages=passages,
        idf=idf,
        values=values,
        amounts=amounts,
        percents=percents,
        bare=bare,
        all_numbers=numbers,
        unit_values=unit_values,
        dates=dates,
        months=months,
        monthdays={sv.value.value for sv in values if sv.value.kind == "monthday"},
        labels=index_labels(docs),
        all_norm="\n".join(doc.text for doc in norm),
        positions=positions,
        by_keyword=by_keyword,
        by_value=by_value,
        tables=tables,
        by_number=by_number,
        by_date=by_date,
        doc_dates={name: d for name, text in docs if (d := _doc_date(text)) is not None},
        texts=dict(docs),
    )
    index.rates = rates(index)
    index.changes = find_changes(index)
    index.superseded = superseded(index)
    index.matter = matter_index(index)
    return index
