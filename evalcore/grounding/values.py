"""Value extraction: every date, amount, percentage and number of a text, normalised.

Why one extractor: the number/date check (`claims`), the source index (`sources`), the
derivation rule (`derived`) and the offline rubric judge all need the same values with the same
spans; `find_values` finds them once, in a fixed order of kinds so that "March 3, 2026" is one
date and not the numbers 3 and 2026. Nothing is judged trivial here - `claims` decides.

Also here, because the index and the check both read them: which way a duration runs from its
anchor (`duration_direction`: "24 months after he leaves" is not "the last twenty-four (24)
months of employment"), a value's comparison key and family, and the keywords around a value
(`value_contexts`), which is what "about the same thing" means throughout.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any, Literal

from evalcore.grounding.normalise import (
    AMOUNT_RE,
    DATE_PATTERNS,
    MONTH_DAY_RE,
    MONTH_YEAR_RE,
    MONTHS,
    NUM,
    NUMBER_WORDS,
    PERCENT_RE,
    SCALES,
    date_from_match,
    normalise_amount,
    normalise_percent,
    to_decimal,
    words_to_number,
)
from evalcore.grounding.text import enclosing, keywords

ValueKind = Literal["amount", "percent", "date", "month", "monthday", "number"]

UNITS: dict[str, str] = {}
for _unit, _forms in {
    "day": ("day", "days", "calendar day", "calendar days"),
    "business_day": ("business day", "business days", "working day", "working days"),
    "week": ("week", "weeks"),
    "month": ("month", "months"),
    "year": ("year", "years"),
    "hour": ("hour", "hours"),
    "sqft": ("square feet", "square foot", "sq. ft.", "sq ft", "sf", "rsf", "rentable square feet"),
    "share": ("shares", "share"),
    "employee": ("employees", "employee", "workers", "people", "persons", "staff"),
    "acre": ("acres", "acre"),
    "unit": ("units",),
    "mile": ("miles", "mile"),
    "basis_point": ("basis points", "bps"),
}.items():
    for _f in _forms:
        UNITS[_f] = _unit
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
_UNIT_RE = rf"(?P<unit>{_UNIT_ALT})"
_NUMBER_RE = re.compile(
    rf"(?:(?P<w>\b{NUMBER_WORDS})\s*\((?P<p>{NUM})\)"  # thirty (30)
    rf"|(?P<n>(?<![\w.,/]){NUM}(?:st|nd|rd|th)?)(?![\w/]|\.\d|,\d)(?:\s?(?P<scale>thousand|million|billion)\b)?"
    rf"|(?P<w2>\b{NUMBER_WORDS}\b)(?=[\s-]+(?:{_UNIT_ALT})\b))"
    rf"(?:[\s-]+{_UNIT_RE}\b)?",
    re.I,
)
_TIME_RE = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?", re.I)
LIST_NUMBER_RE = re.compile(r"^\s*\(?\d{1,3}(?:\.\d+)*[.)](?!\d)", re.M)


@dataclass(frozen=True)
class Value:
    """A normalised value found in a text: what kind, what value, where."""

    kind: ValueKind
    value: Any
    start: int
    end: int
    text: str
    unit: str | None = None

    def describe(self) -> str:
        """Human-readable normalised value for explanations."""
        if self.kind == "amount":
            return f"amount {_fmt_decimal(self.value)}"
        if self.kind == "percent":
            return f"{_fmt_decimal(self.value)}%"
        if self.kind == "date":
            return f"date {self.value.isoformat()}"
        if self.kind == "month":
            return f"month {self.value[0]:04d}-{self.value[1]:02d}"
        if self.kind == "monthday":
            return f"day {self.value[0]:02d}-{self.value[1]:02d} (no year)"
        return f"{_fmt_decimal(self.value)}{' ' + self.unit if self.unit else ''}"


def _fmt_decimal(value: Decimal) -> str:
    return format(value.normalize(), "f") if isinstance(value, Decimal) else str(value)


def find_values(text: str) -> list[Value]:
    """Every date, amount, percentage and number in `text`, normalised, in order of position.

    Dates are found first, then amounts, then percentages, then plain numbers, and a later kind
    never claims characters an earlier one took (so "March 3, 2026" is one date, not 3 and 2026).
    Clock times are consumed and dropped. Nothing is filtered as trivial here: `check` decides.

    The last few texts' values are kept (`_values_of`): one deliverable is read for its values by
    the audit's grounding check and again by the offline judge's rubric, detection and verification
    answers (the demo and every emulated run), at ~1 ms per 1,000 characters each time.
    """
    return list(_values_of(text))


@lru_cache(maxsize=16)
def _values_of(text: str) -> tuple[Value, ...]:
    """`find_values`, computed (immutable: `Value` is frozen)."""
    mask = bytearray(len(text) + 1)  # 1 where an earlier kind already took the character
    out: list[Value] = []

    def claimed(start: int, end: int) -> bool:
        return mask.find(1, start, end) != -1

    def claim(start: int, end: int) -> None:
        mask[start:end] = b"\x01" * (end - start)

    def take(v: Value) -> None:
        claim(v.start, v.end)
        out.append(v)

    for pattern in DATE_PATTERNS:
        for m in pattern.finditer(text):
            if claimed(m.start(), m.end()):
                continue
            d = date_from_match(m)
            if d is not None:
                take(Value("date", d, m.start(), m.end(), m.group()))
    for m in MONTH_YEAR_RE.finditer(text):
        if claimed(m.start(), m.end()) or m.group("mon").casefold() == "may" and not m.group("mon")[0].isupper():
            continue
        take(Value("month", (int(m.group("year")), MONTHS[m.group("mon").casefold()]), m.start(), m.end(), m.group()))
    for m in MONTH_DAY_RE.finditer(text):
        if claimed(m.start(), m.end()) or not 1 <= int(m.group("day")) <= 31:
            continue
        take(Value("monthday", (MONTHS[m.group("mon").casefold()], int(m.group("day"))), m.start(), m.end(), m.group()))
    for m in _TIME_RE.finditer(text):
        if not claimed(m.start(), m.end()):
            claim(m.start(), m.end())
    for m in AMOUNT_RE.finditer(text):
        if claimed(m.start(), m.end()):
            continue
        value = normalise_amount(m.group())
        if value is not None:
            take(Value("amount", value, m.start(), m.end(), m.group()))
    for m in PERCENT_RE.finditer(text):
        if claimed(m.start(), m.end()):
            continue
        value = normalise_percent(m.group())
        if value is not None:
            take(Value("percent", value, m.start(), m.end(), m.group()))
    for m in _NUMBER_RE.finditer(text):
        if not m.group().strip() or claimed(m.start(), m.end()):
            continue
        number: Decimal | None
        if m.group("p"):
            number = to_decimal(m.group("p"))
        elif m.group("n"):
            number = to_decimal(re.sub(r"(?:st|nd|rd|th)$", "", m.group("n"), flags=re.I))
            if number is not None and m.group("scale"):
                number *= SCALES[m.group("scale").casefold()]
        else:
            w = words_to_number(m.group("w2") or "")
            number = Decimal(w) if w is not None else None
        if number is None:
            continue
        unit = UNITS.get(re.sub(r"\s+", " ", m.group("unit").casefold())) if m.group("unit") else None
        take(Value("number", number.normalize(), m.start(), m.end(), m.group().rstrip(), unit))
    out.sort(key=lambda v: v.start)
    return tuple(out)


TIME_UNITS = {"day", "business_day", "week", "month", "year"}

_AFTER_WORDS = re.compile(r"^\W{0,3}(?:'s|’s|')?\s*(?:calendar\s+|business\s+)?(?:after|following|from|post)\b", re.I)
_BEFORE_WORDS = re.compile(r"^\W{0,3}(?:'s|’s|')?\s*(?:before|prior\s+to|preceding|in\s+advance\s+of|ahead\s+of)\b", re.I)
_LOOKBACK = re.compile(r"\b(?:last|past|preceding|previous|prior|trailing)\s*$", re.I)


def duration_direction(v: Value, text: str) -> str | None:
    """For a duration, which way it runs from its anchor: "after" ("24 months after he leaves",
    "the twelve (12) months following the Separation Date") or "before" ("ninety (90) days before
    the end of the term", "the last twenty-four (24) months of employment"); None otherwise.

    Why: "N months after X" and "the last N months before X" are different quantities with the
    same number; a source stating one does not support a claim of the other."""
    if v.kind != "number" or v.unit not in TIME_UNITS:
        return None
    after = text[v.end : v.end + 30]
    if _AFTER_WORDS.match(after):
        return "after"
    if _BEFORE_WORDS.match(after):
        return "before"
    if _LOOKBACK.search(text[max(0, v.start - 20) : v.start]):
        return "before"
    return None


def value_key(v: Value) -> tuple[str, Any]:
    """What a value is compared by: (kind, value), with dates, months and month-days all of kind "date"."""
    return ("date", v.value) if v.kind in ("date", "month", "monthday") else (v.kind, v.value)


def value_family(v: Value) -> str:
    """What a value measures, for comparing old and new values: a date, an amount, a percentage,
    or a number of a given unit."""
    if v.kind in ("date", "month", "monthday"):
        return "date"
    if v.kind == "number":
        return f"number:{v.unit or ''}"
    return v.kind


def value_contexts(text: str, values: Sequence[Value], bounds: Sequence[tuple[int, int]], width: int = 60) -> list[frozenset[str]]:
    """Keywords around each value: its own sentence, at most `width` characters either side, and
    never past a neighbouring value - so in "a price of $1.25m and a deposit of $75,000" the
    deposit's context is "and a deposit of", not the price's words."""
    out: list[frozenset[str]] = []
    for i, v in enumerate(values):
        s, e = enclosing(bounds, v.start)
        if s == e:
            s, e = 0, len(text)
        left = max(s, v.start - width, values[i - 1].end if i > 0 else 0)
        right = min(e, v.end + width, values[i + 1].start if i + 1 < len(values) else len(text))
        # Whole words only: a window edge inside "Agreement" must not leave "eement".
        while left > s and text[left - 1].isalnum() and left > (values[i - 1].end if i > 0 else 0):
            left -= 1
        while right < e and text[right].isalnum() and right < (values[i + 1].start if i + 1 < len(values) else len(text)):
            right += 1
        out.append(frozenset(keywords(text[min(left, v.start) : v.start] + " " + text[v.end : max(right, v.end)])))
    return out
