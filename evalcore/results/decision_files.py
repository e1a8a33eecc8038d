"""Decisions from a file (`tribunal adjudicate RUN --file F`): CSV as a spreadsheet saves it, or JSONL, every row checked before one is recorded.

Why apart from `adjudications`: reading a file a person edited (byte-order marks, CRLF, `;` or tab
separators, fields past csv's limit, a folder named like a file) is its own concern; the decisions
themselves, their store and how the reduction applies them stay in `evalcore.results.adjudications`."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from pydantic import ValidationError

from evalcore.errors import InputError
from evalcore.results.adjudications import MAX_REASON_CHARS, Adjudication, first_line
from evalcore.storage import fs


def parse_rows(rows: Sequence[dict[str, object]], *, source: str, run_id: str) -> list[Adjudication]:
    """Decisions imported from a CSV or JSONL file: every row validated, errors name the row. A row
    recorded for another run is refused (its decisions are about other gradings)."""
    out: list[Adjudication] = []
    problems: list[str] = []
    for k, row in enumerate(rows, start=1):
        data = {key: value for key, value in row.items() if value not in ("", None)}
        if "run_id" in data and data["run_id"] != run_id:
            problems.append(f"{source}: row {k}: recorded for run {data['run_id']}, not {run_id}")
            continue
        data.setdefault("run_id", run_id)
        try:
            out.append(Adjudication.model_validate(data))
        except ValidationError as exc:
            problems.append(f"{source}: row {k}: {first_line(exc)}")
    first_row: dict[str, int] = {}
    for k, row in enumerate(rows, start=1):
        given = row.get("decision_id")
        if not isinstance(given, str) or not given:
            continue
        if given in first_row:
            problems.append(f"{source}: row {k}: decision_id {given!r} is also row {first_row[given]}'s "
                            "(decision ids must be unique)")
        first_row.setdefault(given, k)
    if problems:
        raise InputError(source, "\n".join(p.removeprefix(f"{source}: ") for p in problems))
    return out


def read_file(path: str, *, run_id: str, endpoint_override: str | None = None) -> list[Adjudication]:
    """Decisions from a .jsonl (one object per line) or .csv file (a header row of field names)."""
    if not (path.endswith(".csv") or path.endswith(".jsonl")):
        raise InputError(path, "decisions are read from .jsonl or .csv files")
    if fs.is_dir(path, endpoint_override):
        raise InputError(path, "a folder, not a decisions file")
    try:
        raw = fs.read_bytes(path, endpoint_override)
    except FileNotFoundError as exc:
        raise InputError(path, "decisions file not found") from exc
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from exc
    try:
        text = raw.decode("utf-8-sig")  # a spreadsheet's CSV starts with a byte-order mark
    except UnicodeDecodeError as exc:
        raise InputError(path, "not UTF-8 text") from exc
    rows = _csv_rows(path, text) if path.endswith(".csv") else _jsonl_rows(path, text)
    return parse_rows(rows, source=path, run_id=run_id)


_FIELDS = frozenset(Adjudication.model_fields)


MAX_CSV_FIELD_CHARS = MAX_REASON_CHARS + 1_000
"""The csv reader's field limit for a decisions file: room for the longest reason, so a longer one is
refused with the reason's own limit rather than csv's."""


def _csv_rows(path: str, text: str) -> list[dict[str, object]]:
    """Rows of a CSV as a spreadsheet writes it: the separator (`,`, `;` or tab) taken from the
    header row (csv.Sniffer), CRLF or LF line ends; a header naming no known field is refused as such."""
    header = text.lstrip("\r\n").split("\n", 1)[0]
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(header, delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.DictReader(io.StringIO(text, newline=""), dialect=dialect)
    limit = csv.field_size_limit()
    rows: list[dict[str, object]] = []
    try:
        csv.field_size_limit(MAX_CSV_FIELD_CHARS)
        for row in reader:
            if None in row:
                raise InputError(path, f"row {len(rows) + 1}: more values than the header row has columns")
            rows.append({str(k).strip(): v for k, v in row.items()})
    except csv.Error as exc:
        why = str(exc)
        if "field larger than field limit" in why:
            why = f"a field is longer than {MAX_CSV_FIELD_CHARS:,} characters (a reason may have {MAX_REASON_CHARS:,})"
        raise InputError(path, f"row {len(rows) + 1}: not readable as CSV ({why})") from None
    finally:
        csv.field_size_limit(limit)
    names = [n for n in (reader.fieldnames or []) if n]
    unknown = [n for n in names if n.strip() not in _FIELDS]
    if not names or len(unknown) == len(names):
        raise InputError(path, f"the header row names no decision field ({', '.join(repr(n) for n in names[:3]) or 'empty'}"
                               f"); expected a header such as kind,system,task_id,... separated by , ; or tab")
    if unknown:
        raise InputError(path, f"unknown column(s) {', '.join(repr(n) for n in unknown)} in the header row")
    return rows


def _jsonl_rows(path: str, text: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for k, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"line {k}: not JSON ({exc.msg})") from exc
        if not isinstance(value, dict):
            raise InputError(path, f"line {k}: expected an object")
        rows.append(value)
    return rows
