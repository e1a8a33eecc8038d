"""The source index: the data model of everything the checks look up in the sources.

Why a module of its own: the index is built by `sources` (which asks `amendments`, `matter` and
`derived.rates` for the fields they own) and read by every check; keeping the data types apart
from the code that fills them keeps the imports one-way (nothing here imports a rule).

A passage is a sentence of prose or one data row of a table (a row is one fact, read with its
header); a source value is one occurrence of a value with its passage and context, so a check can
ask not only *whether* the sources state a value but *where* and *about what*.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field, fields
from datetime import date
from decimal import Decimal
from typing import Any

from evalcore.grounding.labels import LabelIndex
from evalcore.grounding.values import Value


class _PickledByFields:
    """Pickled as a call of the class with its fields, in order (`__reduce__`).

    Why: every grading worker unpickles the index of each task it grades (built once per sweep and
    shipped through Ray's object store), ~3,000 passages and tens of thousands of tokens at real
    size. Pickle's default for an object (create it empty, then update its `__dict__` from a
    pickled dict) took twice as long per passage as calling the class. None of these types refer
    back to an object that holds them (a passage holds its values, not its source values), so
    rebuilding from the fields never meets a cycle."""

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return type(self), tuple(getattr(self, f.name) for f in fields(self))  # type: ignore[arg-type]


@dataclass(frozen=True)
class NormalisedDoc:
    """One source document as casefolded word tokens (`text.tokens_with_offsets`): the tokens
    joined by single spaces, the tokens, and each token's (start, end) in the document's text.

    The offsets are one flat `array` (start, end, start, end, ...) and the tokens are not pickled
    when `text.split(" ")` gives them back: at real size a document has ~40k tokens, and as lists
    of strings and (start, end) tuples they were about a third of what a grading worker spent
    unpickling an index (measured: ~13 of ~40 ms for a 120k-token task)."""

    name: str
    text: str
    tokens: list[str]
    offsets: array[int]

    @classmethod
    def of(cls, name: str, tokens: list[str], offsets: list[tuple[int, int]]) -> NormalisedDoc:
        """The document `name` from its tokens and their offsets."""
        return cls(name, " ".join(tokens), tokens, array("q", [x for pair in offsets for x in pair]))

    def start(self, token: int) -> int:
        """Where token number `token` starts in the document's text."""
        return self.offsets[2 * token]

    def end(self, token: int) -> int:
        """Where token number `token` ends in the document's text."""
        return self.offsets[2 * token + 1]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # A token may hold a space (NFKC turns some compatibility characters into several words):
        # then splitting the text gives more pieces than there are tokens, and the tokens go too.
        splits = bool(self.tokens) and self.text.count(" ") + 1 == len(self.tokens)
        return _normalised_doc, (self.name, self.text, None if splits or not self.tokens else self.tokens,
                                 self.offsets)


def _normalised_doc(name: str, text: str, tokens: list[str] | None, offsets: array[int]) -> NormalisedDoc:
    """A `NormalisedDoc` from its pickle: its tokens split back out of its text when not pickled."""
    if tokens is None:
        tokens = text.split(" ") if offsets else []
    return NormalisedDoc(name, text, tokens, offsets)


@dataclass
class Row(_PickledByFields):
    """One data row of a source table, read with its table's header and title."""

    table: int  # position of its table in `SourceIndex.tables`
    number: int  # position among the table's data rows
    cells: tuple[tuple[int, int], ...]  # (start, end) of each cell in the document text
    period: tuple[date, date] | None = None  # the row's date range, when it has exactly one


@dataclass
class Table(_PickledByFields):
    """A source table: consecutive tab- or pipe-separated lines; the first one is the header."""

    doc: str
    title: str
    header: tuple[str, ...]
    rows: list[Row] = field(default_factory=list)
    schedule: bool = False  # rows are consecutive periods (a rent or payment schedule)


@dataclass
class Passage(_PickledByFields):
    """A source passage: a sentence of prose or one data row of a table (`row`), with its keywords
    and values."""

    doc: str
    start: int
    end: int
    text: str
    keywords: frozenset[str]
    values: list[Value] = field(default_factory=list)
    row: Row | None = None
    section: str | None = None  # numbered heading the passage falls under ("3.2")


@dataclass
class SourceValue(_PickledByFields):
    """One occurrence of a value in a source, with its passage and context keywords.

    `ident` is its position in `SourceIndex.values`.
    """

    value: Value
    doc: str
    passage: Passage
    context: frozenset[str]
    ident: int = 0
    column: int | None = None  # column in `passage.row`, for a value in a table
    direction: str | None = None  # "after" / "before" for a duration anchored to an event


@dataclass(frozen=True)
class Change(_PickledByFields):
    """A statement of an amending document that replaces one value of the record by another."""

    doc: str
    passage: Passage
    new: frozenset[tuple[str, Any]]  # value keys the change puts in force
    new_text: str  # how the amendment writes them ("six (6) months")
    old: frozenset[tuple[str, Any]]  # value keys it names as replaced (may be empty)
    kind: str  # value family: "date", "amount", "percent", "number:<unit>"
    attribute: frozenset[str]  # keywords of what is changed ("due dilige expira")
    old_text: str  # normalised quoted words it deletes ("" when none)
    sections: frozenset[str]  # section labels it amends ("3.2")


@dataclass(frozen=True)
class MatterIndex(_PickledByFields):
    """Which source documents look unrelated to the rest of the file (see `matter_index`)."""

    unique_names: dict[str, frozenset[str]]  # doc -> proper names no other source uses
    candidates: frozenset[str]  # docs tied to the others by at most one name and no figure


@dataclass
class SourceIndex:
    """Everything the checks look up in a set of texts: normalised words, values, labels, passages.

    Built once per set of sources (`index_sources`); the offline rubric judge builds one over a
    deliverable to ask the same questions ("does it state $1.25 million?", "Section 4.2?").
    """

    docs: list[tuple[str, str]]
    norm: list[NormalisedDoc]  # each of `docs` as casefolded word tokens
    passages: list[Passage]
    idf: dict[str, float]
    values: list[SourceValue]
    amounts: set[Decimal]
    percents: set[Decimal]
    bare: set[Decimal]
    all_numbers: set[Decimal]
    unit_values: set[tuple[Decimal, str]]
    dates: set[date]
    months: set[tuple[int, int]]
    monthdays: set[tuple[int, int]]
    labels: LabelIndex
    all_norm: str
    positions: list[dict[str, list[int]]] = field(default_factory=list)  # per doc: token -> positions
    by_keyword: dict[str, list[int]] = field(default_factory=dict)  # keyword -> passage indexes
    by_value: dict[tuple[str, Any], list[int]] = field(default_factory=dict)  # (kind, value) -> passages
    tables: list[Table] = field(default_factory=list)
    by_number: dict[Decimal, list[SourceValue]] = field(default_factory=dict)  # amounts, percents, numbers
    by_date: dict[date, list[SourceValue]] = field(default_factory=dict)
    doc_dates: dict[str, date] = field(default_factory=dict)  # each document's own date, when it states one
    changes: list[Change] = field(default_factory=list)
    superseded: dict[int, Change] = field(default_factory=dict)  # source value ident -> its amendment
    matter: MatterIndex | None = None
    texts: dict[str, str] = field(default_factory=dict)  # document name -> text
    rates: list[float] = field(default_factory=list)  # per-step percentages (`rates`)
