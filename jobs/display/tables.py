"""Terminal tables that survive any width, and the same tables as csv or markdown.

Why: rich's `Table`, given less room than its content, cuts cells with "…" and squeezes columns
down to nothing. At 80 columns (what a pipe, a log file, a CI job or a Ray job's log gets) the
leaderboard lost its system column and printed costs as `$11.…`. A wrong number in a log is worse
than no number, so every table of the CLI is described once here (`TableSpec`: columns, and rows
of cells that carry both the text a person reads and the value a machine reads) and laid out by
one rule (`emit`):

* as a rich table when every identifier, every number and every header line fits whole at the
  console's width (prose columns wrap at spaces, never inside a word);
* else in bands: the columns split over a few tables one under the other, each repeating the key
  column (the system, the vendor) so a row can be followed across them;
* else *stacked*: one block per row, ``column: value`` lines, which fits any width;
* or, for a machine or a document, as csv (the cells' values) or markdown (the cells' texts).

Nothing here truncates: prose lines (titles, captions, notes) wrap at spaces and a word longer than
the line is printed whole. The commands' ``--format json`` prints their own models (it predates
these tables and carries more than they show), so JSON is not produced here.

Why one module (over 500 lines): the table model, the layout that keeps every number whole and
the csv and markdown forms are one contract — a cell's text and value, laid out or exported — and
each form is tested against the same `TableSpec`; split, a rule (never cut, neutralise what a
spreadsheet would evaluate) would have to be kept in step across modules.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum
from typing import Literal

from rich import box as rich_box
from rich.box import Box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

Scalar = str | int | float | bool | None
"""What a cell holds for a machine: csv writes it as is (None as an empty field)."""

Kind = Literal["id", "number", "text"]
"""How a column may be laid out: `id` and `number` cells are never broken (a name, a count, a
price, a date: each line printed whole), `text` cells are prose and wrap at spaces."""


class TableFormat(StrEnum):
    """The output formats of the commands whose main output is a table (`--format`)."""

    TABLE = "table"
    JSON = "json"
    CSV = "csv"
    MARKDOWN = "markdown"


@dataclass(frozen=True)
class Column:
    """One column: its header (``\\n`` splits it over lines in the wide layout), its kind, and the
    names of the value(s) its cells carry in csv (default: the header, flattened and snake_cased)."""

    header: str
    kind: Kind = "text"
    fields: tuple[str, ...] = ()
    style: str | None = None

    @property
    def name(self) -> str:
        """The header on one line, as the stacked layout, csv and markdown show it."""
        return flatten_header(self.header)

    @property
    def keys(self) -> tuple[str, ...]:
        """The csv field name(s) of this column."""
        return self.fields or (re.sub(r"[^0-9a-z]+", "_", self.name.lower()).strip("_") or "value",)


class _Same(Enum):
    """The default of `Cell.value`: the cell's text is its value."""

    TEXT = 0


@dataclass(frozen=True)
class Cell:
    """A cell: `text` is what a person reads (a `Text` may carry styles; a `str` is literal, never
    markup), `value` what a machine reads: a scalar, or a tuple matching the column's `fields`
    (e.g. a rate and its interval bounds). By default the value is the text."""

    text: str | Text
    value: Scalar | tuple[Scalar, ...] | Literal[_Same.TEXT] = _Same.TEXT

    @property
    def plain(self) -> str:
        return self.text.plain if isinstance(self.text, Text) else self.text

    def renderable(self) -> Text:
        return self.text.copy() if isinstance(self.text, Text) else Text(self.text)

    def values(self, column: Column) -> tuple[Scalar, ...]:
        """The cell's value(s), one per field of its column."""
        value = self.plain if self.value is _Same.TEXT else self.value
        values = value if isinstance(value, tuple) else (value,)
        if len(values) != len(column.keys):
            raise ValueError(f"column {column.name!r}: {len(values)} value(s) for fields {column.keys}")
        return values


CellLike = Cell | str | Text


@dataclass
class TableSpec:
    """A table, independent of how it will be shown. `key` is the column that heads each block of
    the stacked layout (default: the first `id` column)."""

    columns: list[Column]
    title: str | Text | None = None
    caption: str | Text | None = None
    rows: list[list[Cell]] = field(default_factory=list)
    show_header: bool = True
    show_lines: bool = False
    box: Box | None = rich_box.HEAVY_HEAD
    padding: tuple[int, int] = (0, 1)
    pad_edge: bool = True
    key: int | None = None
    max_bands: int | None = None
    """At most this many bands (`layout`) before the table is stacked; None: `MAX_BANDS`. 1 for a
    table whose rows are records read one at a time (a batch, an object): bands would repeat the
    key in every piece, one block per row reads better."""

    def add_row(self, *cells: CellLike) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cell(s) for {len(self.columns)} column(s)")
        self.rows.append([c if isinstance(c, Cell) else Cell(c) for c in cells])

    @property
    def key_index(self) -> int:
        if self.key is not None:
            return self.key
        return next((i for i, c in enumerate(self.columns) if c.kind == "id"), 0)

    def records(self) -> list[dict[str, Scalar]]:
        """One dict per row, the cells' values under their columns' field names (what csv writes)."""
        out = []
        for row in self.rows:
            record: dict[str, Scalar] = {}
            for column, cell in zip(self.columns, row, strict=True):
                record.update(zip(column.keys, cell.values(column), strict=True))
            out.append(record)
        return out


MIN_PROSE_WIDTH = 16
"""The narrowest a prose column may be squeezed to in a wide table (else the table is stacked)."""


@dataclass(frozen=True)
class WholeLine:
    """A line printed unbroken whatever the width (e.g. a `file: reason` someone will grep for)."""

    text: str | Text


Block = TableSpec | WholeLine | Text | str
"""What a command prints, in order: tables, and prose wrapped at spaces (a `str` is literal, never
markup) or kept on one line (`WholeLine`)."""


def flatten_header(header: str) -> str:
    """A multi-line header on one line: lines joined by a space, or directly after a line ending
    in "-" or "/" ("all-\\npass" -> "all-pass", "material\\n/task" -> "material/task")."""
    lines = [line.strip() for line in header.split("\n")]
    out = lines[0]
    for line in lines[1:]:
        out += line if out.endswith(("-", "/")) or line.startswith("/") else " " + line
    return out


# --------------------------------------------------------------------------------------------
# Terminal
# --------------------------------------------------------------------------------------------


def emit(console: Console, blocks: Iterable[Block], fmt: TableFormat = TableFormat.TABLE) -> None:
    """Print the blocks in the format asked for (JSON is the commands' own; see the module doc)."""
    blocks = list(blocks)
    if fmt is TableFormat.CSV:
        _print_verbatim(console, to_csv(blocks))
    elif fmt is TableFormat.MARKDOWN:
        _print_verbatim(console, to_markdown(blocks))
    elif fmt is TableFormat.TABLE:
        for block in blocks:
            if isinstance(block, TableSpec):
                print_table(console, block)
            elif isinstance(block, WholeLine):
                console.print(_text(block.text), soft_wrap=True)
            else:
                print_prose(console, block)
    else:
        raise ValueError(f"{fmt}: not a format of the table layer (the command prints its own JSON)")


def _print_verbatim(console: Console, text: str) -> None:
    """Machine-readable output byte for byte: written to the console's file, not rendered (rich would
    expand tabs and drop control characters inside values)."""
    console.file.write(text)
    console.file.flush()


def print_table(console: Console, spec: TableSpec) -> None:
    """The table laid out for the console's width, nothing cut (see `layout`)."""
    if spec.title is not None:
        print_prose(console, _styled(spec.title, "italic"))
    bands = layout(spec, console)
    if bands is None:
        _print_stacked(console, spec)
    drawn_edges = spec.box is not None and bool((spec.box.top + spec.box.bottom).strip())
    for n, (band, widths) in enumerate(bands or []):
        if n and drawn_edges:  # a box with blank edges (SIMPLE_HEAVY) already leaves blank lines
            console.print()
        console.print(_rich_table(band, widths), crop=False)
    if spec.caption is not None:
        print_prose(console, _styled(spec.caption, "dim"))


MAX_BANDS = 3
"""A table split into more bands than this is stacked instead (too many pieces to read across)."""


def layout(spec: TableSpec, console: Console) -> list[tuple[TableSpec, list[int]]] | None:
    """How the table fits the console's width with every identifier, number and header line whole:

    * one wide table when it fits;
    * else *bands*: the columns split, in order, over up to `MAX_BANDS` tables printed one under
      the other, each repeating the key column (the system, the vendor...) so a row can be followed;
    * else None: the stacked layout (one block per row), which fits any width.

    Each table comes with its columns' content widths.
    """
    widths = _fit(spec, console)
    if widths is not None:
        return [(spec, widths)]
    if len(spec.columns) < 2:
        return None
    key = spec.key_index
    bands: list[list[int]] = []
    current: list[int] = []
    for i in range(len(spec.columns)):
        if i == key:
            continue
        if current and _fit(_band(spec, [*current, i]), console) is None:
            bands.append(current)
            current = []
        if _fit(_band(spec, [i]), console) is None:
            return None  # this column and the key column alone do not fit
        current.append(i)
    bands.append(current)
    if len(bands) > (MAX_BANDS if spec.max_bands is None else spec.max_bands):
        return None
    out = []
    for band in bands:
        sub = _band(spec, band)
        fitted = _fit(sub, console)
        if fitted is None:  # cannot happen (each band was fitted above); stacked is always safe
            return None
        out.append((sub, fitted))
    return out


def _band(spec: TableSpec, columns: list[int]) -> TableSpec:
    """The table restricted to some columns plus its key column (in their original order)."""
    keep = sorted({spec.key_index, *columns})
    return replace(spec, columns=[spec.columns[i] for i in keep], rows=[[row[i] for i in keep] for row in spec.rows],
                   key=keep.index(spec.key_index), title=None, caption=None)


def print_prose(console: Console, text: str | Text, indent: int = 0) -> None:
    """A line (or lines) of prose, wrapped at spaces to the console's width; a word longer than the
    line is printed whole, never folded or cut. Every line but the first is indented by `indent`."""
    first = True
    for line in _text(text).split("\n", allow_blank=True):
        for piece in line.divide(_word_breaks(line.plain, console.width, 0 if first else indent, indent)):
            piece.rstrip()
            console.print(piece if first else Text(" " * indent) + piece, soft_wrap=True)
            first = False


def _word_breaks(s: str, width: int, start: int, indent: int) -> list[int]:
    """Offsets at which to break `s` so each line fits `width` (its first line starts at column
    `start`, the others at `indent`); never inside a word, and each line holds at least one word."""
    breaks: list[int] = []
    col: int | None = None
    for m in re.finditer(r"\S+\s*", s):
        if col is None:  # the first word, after the line's own leading spaces
            col = start + cell_len(s[: m.end()])
            continue
        if col + cell_len(m.group().rstrip()) > width:
            breaks.append(m.start())
            col = indent
        col += cell_len(m.group())
    return breaks


def _text(text: str | Text) -> Text:
    return Text(text) if isinstance(text, str) else text


def _styled(text: str | Text, style: str) -> Text:
    t = _text(text).copy()
    t.stylize(style)
    return t


def _content_widths(spec: TableSpec) -> tuple[list[int], list[int]]:
    """Per column, the narrowest and the widest content width that keeps everything whole."""
    mins, maxs = [], []
    for i, column in enumerate(spec.columns):
        header_lines = column.header.split("\n") if spec.show_header else []
        lo = hi = max((cell_len(h) for h in header_lines), default=1)
        for row in spec.rows:
            lines = row[i].plain.split("\n")
            widest = max(cell_len(line) for line in lines)
            hi = max(hi, widest)
            if column.kind == "text":
                lo = max(lo, max((cell_len(w) for line in lines for w in line.split()), default=0))
            else:
                lo = max(lo, widest)
        if column.kind == "text":  # a sliver of prose, a word a line, is unreadable: stack instead
            lo = max(lo, min(hi, MIN_PROSE_WIDTH))
        mins.append(lo)
        maxs.append(hi)
    return mins, maxs


def _overhead(spec: TableSpec, console: Console) -> int:
    """Columns of the console a rich table of this spec spends on borders and padding."""
    probe = _rich_table(spec, [1] * len(spec.columns), with_rows=False)
    measured = Measurement.get(console, console.options.update_width(1_000_000), probe)
    return measured.minimum - len(spec.columns)


def _fit(spec: TableSpec, console: Console) -> list[int] | None:
    """Each column's content width for a wide table at the console's width, or None when it cannot
    fit without breaking an identifier, a number or a header line (then the table is stacked).

    Prose columns get what is left, in proportion to how much wider their content is than their
    longest word, so they wrap at spaces only.
    """
    mins, maxs = _content_widths(spec)
    room = console.width - _overhead(spec, console)
    if sum(mins) > room:
        return None
    if sum(maxs) <= room:
        return maxs
    spare = room - sum(mins)
    stretch = [hi - lo for lo, hi in zip(mins, maxs, strict=True)]
    total = sum(stretch) or 1
    widths = [lo + (spare * s) // total for lo, s in zip(mins, stretch, strict=True)]
    left = room - sum(widths)
    for i in sorted(range(len(widths)), key=lambda i: -stretch[i]):  # hand out the rounding
        if left <= 0:
            break
        if widths[i] < maxs[i]:
            widths[i] += 1
            left -= 1
    return widths


def _rich_table(spec: TableSpec, widths: Sequence[int], *, with_rows: bool = True) -> Table:
    table = Table(box=spec.box, show_header=spec.show_header, show_lines=spec.show_lines,
                  padding=spec.padding, pad_edge=spec.pad_edge, show_edge=spec.box is not None)
    for column, width in zip(spec.columns, widths, strict=True):
        table.add_column(Text(column.header), justify="right" if column.kind == "number" else "left",
                         no_wrap=column.kind != "text", overflow="fold", width=width, style=column.style)
    if with_rows:
        for row in spec.rows:
            table.add_row(*(cell.renderable() for cell in row))
    return table


def _print_stacked(console: Console, spec: TableSpec) -> None:
    """One block per row: the key column's `name: value` first, then the others indented, aligned
    (an empty cell is left out: a label with nothing after it reads as something missing)."""
    key = spec.key_index
    others = [i for i in range(len(spec.columns)) if i != key]
    pad = max((cell_len(spec.columns[i].name) for i in others), default=0) if spec.show_header else 0
    if pad + 4 > console.width // 2:  # aligned values would start too far right: don't align
        pad = 0
    for n, row in enumerate(spec.rows):
        if n and (len(others) > 1 or spec.show_lines):
            console.print()
        head = row[key].renderable()
        head.stylize("bold")
        if not spec.show_header:  # a key/value table: `key: value` per row
            values = Text("  ").join(row[i].renderable() for i in others)
            print_prose(console, Text.assemble(head, ": ", values), indent=2)
            continue
        console.print(Text.assemble(f"{spec.columns[key].name}: ", head), soft_wrap=True)
        for i in others:
            if not row[i].plain:  # nothing in this row's cell: no `column:` line with nothing after it
                continue
            label = f"  {spec.columns[i].name + ':':<{pad + 1}} "
            line = Text.assemble(label, row[i].renderable())
            if spec.columns[i].kind == "text":
                print_prose(console, line, indent=len(label))
            else:  # a name or a number stays on its line, whatever the width
                console.print(line, soft_wrap=True)
    if not spec.rows and spec.show_header:
        print_prose(console, "(none) — columns: " + ", ".join(c.name for c in spec.columns))


# --------------------------------------------------------------------------------------------
# csv, markdown
# --------------------------------------------------------------------------------------------


def _tables(blocks: Iterable[Block]) -> list[TableSpec]:
    return [b for b in blocks if isinstance(b, TableSpec)]


def _title(spec: TableSpec, n: int) -> str:
    if spec.title is None:
        return f"table {n}"
    return spec.title.plain if isinstance(spec.title, Text) else spec.title


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection"): a text field
beginning with one of these is evaluated when the file is opened (`=HYPERLINK(...)`, `@SUM(...)`)."""


def csv_field(value: Scalar) -> Scalar:
    """A value as csv writes it: a text beginning with a formula character is prefixed with a
    single quote, as OWASP recommends, so a spreadsheet shows it as text and evaluates nothing.

    Why here: a system name, a task id or a reason is user text and may begin with `=`; numbers
    (a negative score) are written as numbers. None: an empty field."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def to_csv(blocks: Iterable[Block]) -> str:
    """The tables' values as csv (prose is left out). One table: plain csv (a header row, then a row
    per record). Several: one section each, a `# title` line first, sections separated by a blank line.
    A text that a spreadsheet would evaluate is neutralised (`csv_field`)."""
    tables = _tables(blocks)
    sections = []
    for n, spec in enumerate(tables, 1):
        buf = io.StringIO()
        if len(tables) > 1:
            buf.write(f"# {_title(spec, n)}\n")
        # every text quoted: Python's writer leaves a carriage return unquoted with a "\n" line end,
        # so a name holding one would start a new row (one a spreadsheet could evaluate)
        writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
        writer.writerow([k for c in spec.columns for k in c.keys])
        for record in spec.records():
            writer.writerow([csv_field(v) for v in record.values()])
        sections.append(buf.getvalue())
    return "\n".join(sections)


BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""The Unicode bidirectional controls (marks, embeddings, overrides, isolates): inside user text
they reorder what a reader sees of the text around them (Trojan Source, CVE-2021-42574)."""


def _md_text(s: str) -> str:
    """User text made inert in markdown: raw HTML shown as text (``&``, ``<``, ``>`` as entities),
    and each bidirectional control shown as its code point (``\\u202E``) instead of acting."""
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "".join(f"\\u{ord(ch):04X}" if ch in BIDI_CONTROLS else ch for ch in s)


def _md_cell(s: str) -> str:
    return _md_text(s.replace("\\", "\\\\").replace("|", "\\|")).replace("\n", "<br>")


def to_markdown(blocks: Iterable[Block]) -> str:
    """Everything as a markdown document: prose as paragraphs, each table as a pipe table of the
    cells' texts (its title in bold above, its caption in italics below). User text never acts as
    markup: raw HTML and bidirectional controls are escaped (`_md_text`)."""
    parts = []
    for n, block in enumerate(blocks, 1):
        if isinstance(block, TableSpec):
            lines = []
            if block.title is not None:
                lines += [f"**{_md_cell(_title(block, n))}**", ""]
            lines.append("| " + " | ".join(_md_cell(c.name) for c in block.columns) + " |")
            lines.append("|" + "|".join("---:" if c.kind == "number" else "---" for c in block.columns) + "|")
            lines += ["| " + " | ".join(_md_cell(cell.plain) for cell in row) + " |" for row in block.rows]
            if block.caption is not None:
                caption = block.caption.plain if isinstance(block.caption, Text) else block.caption
                lines += ["", f"*{_md_cell(caption)}*"]
            parts.append("\n".join(lines))
        else:
            text = _text(block.text if isinstance(block, WholeLine) else block).plain.strip("\n")
            if text:
                parts.append(_md_text(text).replace("\n", "  \n"))
    return "\n\n".join(parts) + "\n"
