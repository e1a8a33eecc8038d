"""Derived values: a figure computed from the record is supported by the record.

Why: deliverables compute ("12 months after separation ... expires March 31, 2027", "4% on
$1,140,000 = $45,600", "62,400 + 18,200 of 90,400 RSF = 89%"). A value no source states is not
flagged when it is one typed arithmetic step from values in its context and the sources
(`derivable`). At least one operand must come from the deliverable's context and operands are
typed, which keeps a changed figure from hiding behind arithmetic.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from datetime import date

from evalcore.grounding.index import SourceIndex
from evalcore.grounding.normalise import SCALES
from evalcore.grounding.values import TIME_UNITS, Value

_APPROX = re.compile(r"(?:about|approximately|approx\.?|roughly|around|nearly|almost|some|~|c\.)\s*$", re.I)


def _add_months(d: date, months: int) -> date | None:
    y, m = divmod(d.month - 1 + months, 12)
    year, month = d.year + y, m + 1
    if not 1 <= year <= 9999:
        return None
    last = _month_end(year, month)
    day = last if d.day == _month_end(d.year, d.month) else min(d.day, last)
    return date(year, month, day)


def _month_end(year: int, month: int) -> int:
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    return (nxt - date(year, month, 1)).days


def _shift(d: date, n: int, unit: str) -> date | None:
    from datetime import timedelta

    try:
        if unit == "day":
            return d + timedelta(days=n)
        if unit == "week":
            return d + timedelta(weeks=n)
        if unit == "month":
            return _add_months(d, n)
        if unit == "year":
            return _add_months(d, 12 * n)
        if unit == "business_day":
            step = 1 if n >= 0 else -1
            out, left = d, abs(n)
            while left:
                out += timedelta(days=step)
                if out.weekday() < 5:
                    left -= 1
            return out
    except OverflowError:
        return None
    return None


def _precision(v: Value, text: str) -> float:
    """The rounding unit a value was written with ("$1.3 million" -> 100,000; "69%" -> 1)."""
    m = re.search(r"\d[\d,]*(?:\.(\d+))?", v.text)
    decimals = len(m.group(1)) if m and m.group(1) else 0
    unit = 10.0**-decimals
    if v.kind == "amount" or v.kind == "number":
        mag = re.search(r"(?i)\b(thousand|million|billion|mil|mn|mm|bn)\b|\d\s?([kKmMbB])\b", v.text)
        if mag:
            unit *= SCALES[(mag.group(1) or mag.group(2)).casefold()]
    approx = bool(_APPROX.search(text[max(0, v.start - 16) : v.start]))
    return unit * (2.0 if approx else 1.0)


def _close(candidate: float, target: float, unit: float) -> bool:
    return abs(candidate - target) <= unit * 0.5 + 1e-9 * max(1.0, abs(target))


_CONVERSIONS = (12.0, 52.0, 4.0)  # monthly <-> annual, weekly <-> annual, quarterly <-> annual
_TIME_IN_DAYS = {"day": 1.0, "business_day": 1.0, "week": 7.0, "month": 30.44, "year": 365.25}


def _family_of_operand(v: Value) -> str:
    return "percent" if v.kind == "percent" else ("amount" if v.kind == "amount" else f"number:{v.unit or ''}")


def derivable(v: Value, local: Sequence[Value], index: SourceIndex, text: str) -> bool:
    """Whether `v` is one arithmetic step from values in its local context and the sources.

    Dates: a date in the context or the sources plus/minus a duration stated in the context
    ("12 months after separation ... expires March 31, 2027"), within a day. Durations: the gap
    between two dates ("five weeks later"), or another duration converted (18 months = 1.5 years).
    Amounts: a sum or difference of amounts; an amount times a percentage, or grown/cut by one
    ("4% on $1,140,000"); an amount times or divided by a count or period ("12/52 of the salary");
    a monthly/weekly/quarterly <-> annual conversion. Percentages: the ratio or change of two
    figures of the same kind (amount/amount, square feet/square feet), a sum or difference of
    percentages, or (a + b) / c of three context figures ("62,400 + 18,200 of 90,400 RSF = 89%").
    Plain numbers: sums, differences, products and ratios.

    Equality is at the precision the value is written with, and at least one operand must come
    from the context (the other from the context or the sources) - without a context operand
    nothing is derivable, which keeps a changed figure from hiding behind arithmetic. Operands are
    typed: an amount is never "derived" from a section number or a day count by coincidence, which
    is what an untyped search over every pair of figures in the file does for most small values.
    """
    if v.kind in ("date", "month", "monthday"):
        durations = [u for u in local if u.kind == "number" and u.unit in TIME_UNITS]
        bases = {u.value for u in local if u.kind == "date"} | index.dates
        for base in sorted(bases):
            for dur in durations:
                n = int(dur.value)
                for sign in (1, -1):
                    got = _shift(base, sign * n, str(dur.unit))
                    if got is None:
                        continue
                    if v.kind == "date" and abs((got - v.value).days) <= 1:
                        return True
                    if v.kind == "month" and (got.year, got.month) == v.value:
                        return True
                    if v.kind == "monthday" and (got.month, got.day) == v.value:
                        return True
        return False
    target = float(v.value)
    unit = _precision(v, text)

    def close(c: float) -> bool:
        return _close(c, target, unit)

    by_family: dict[str, list[float]] = {}
    for u in local:
        if u.kind in ("amount", "number", "percent"):
            by_family.setdefault(_family_of_operand(u), []).append(float(u.value))
    src: dict[str, list[float]] = {}
    for sv in index.values:
        if sv.value.kind in ("amount", "number", "percent"):
            fam = _family_of_operand(sv.value)
            # A bare figure of a spreadsheet cell is as good as an amount.
            if fam == "number:" and sv.value.value >= 100:
                src.setdefault("amount", []).append(float(sv.value.value))
            src.setdefault(fam, []).append(float(sv.value.value))
    src = {k: sorted(set(vs)) for k, vs in src.items()}
    loc = {k: sorted(set(vs)) for k, vs in by_family.items()}

    def pairs(fa: str, fb: str) -> Iterable[tuple[float, float]]:
        """(a, b) with a from the context and b from the context or the sources, and the
        mirror pair when the families differ - one operand is always from the context."""
        for a in loc.get(fa, []):
            for b in loc.get(fb, []) + src.get(fb, []):
                yield a, b
        if fa != fb:
            for b in loc.get(fb, []):
                for a in src.get(fa, []):
                    yield a, b

    fam = _family_of_operand(v)
    time_units = sorted(f for f in set(loc) | set(src) if f.partition(":")[2] in TIME_UNITS)
    if v.kind == "number" and v.unit in TIME_UNITS:
        local_dates = [u.value for u in local if u.kind == "date"]
        per = _TIME_IN_DAYS[str(v.unit)]
        for a in local_dates:
            for b in list(local_dates) + sorted(index.dates):
                if a != b and abs(abs((a - b).days) / per - target) <= max(0.5, unit * 0.5) + (0.5 if per > 7 else 0):
                    return True
        for f in time_units:
            other = _TIME_IN_DAYS[f.partition(":")[2]]
            for a in loc.get(f, []):
                if f != fam and abs(a * other / per - target) <= max(0.5, unit * 0.5) + (0.5 if max(per, other) > 7 else 0):
                    return True
    if v.kind == "amount":
        for a in loc.get("amount", []) + src.get("amount", []):
            for k in _CONVERSIONS:
                if close(a * k) or close(a / k):
                    return True
        for a, b in pairs("amount", "amount"):
            if close(a + b) or close(abs(a - b)):
                return True
        for a, p in pairs("amount", "percent"):
            if close(a * p / 100) or close(a * (1 + p / 100)) or close(a * (1 - p / 100)) or (p and close(a / (p / 100))):
                return True
        # A per-step rate of the sources ("5% of the monthly fee for each full 0.1%", "1% ... for
        # each full week") times a whole number of steps, of an amount.
        for p in index.rates:
            for a in loc.get("amount", []) + src.get("amount", []):
                if any(close(a * k * p / 100) for k in range(1, 13)):
                    return True
        # A count or period multiplies an amount only when the deliverable states it.
        for f in [f for f in loc if f.startswith("number:")]:
            for count in loc[f]:
                for a in loc.get("amount", []) + src.get("amount", []):
                    if close(a * count) or (count and close(a / count)) or close(a * count / 12) or close(a * count / 52):
                        return True
        return False
    if v.kind == "percent":
        same_kinds = sorted(f for f in set(loc) if f != "percent")
        for f in same_kinds:
            # Unitless figures are too common in a file to pair with: both from the context (where
            # a unit is often written once: "62,400 of 90,400 RSF").
            if f == "number:":
                ctx = sorted({x for g in same_kinds if g.startswith("number:") for x in loc[g]})
                ratio_pairs: Iterable[tuple[float, float]] = ((a, b) for a in loc[f] for b in ctx)
            else:
                ratio_pairs = pairs(f, f)
            for a, b in ratio_pairs:
                if b and (close(100 * a / b) or close(100 * (a - b) / b) or close(100 * (b - a) / b)):
                    return True
                if a and (close(100 * b / a) or close(100 * (b - a) / a)):
                    return True
            vals = loc.get(f, [])
            for a in vals:
                for b in vals:
                    for c in vals:
                        if c and close(100 * (a + b) / c):
                            return True
        for a, b in pairs("percent", "percent"):
            if close(a + b) or close(abs(a - b)):
                return True
        for a in loc.get("number:", []):
            if a < 1 and close(a * 100):
                return True
        return False
    # Plain numbers and other units: sums, differences, products and ratios of the same unit.
    if fam == "number:":
        number_pairs: Iterable[tuple[float, float]] = ((a, b) for a in loc.get(fam, []) for b in loc.get(fam, []))
    else:
        number_pairs = pairs(fam, fam)
    for a, b in number_pairs:
        if close(a + b) or close(abs(a - b)) or close(a * b) or (b and close(a / b)) or (a and close(b / a)):
            return True
    return False


def local_values(values: Sequence[Value], v: Value, bounds: Sequence[tuple[int, int]]) -> list[Value]:
    """The other values of `v`'s sentence and the sentences right before and after it.

    `values` and `bounds` are in text order, so both lookups are binary searches (a scan per value
    made the check quadratic in the deliverable's length).
    """
    idx = bisect.bisect_right(bounds, v.start, key=lambda b: b[0]) - 1
    if idx < 0 or not bounds[idx][0] <= v.start < bounds[idx][1]:
        return []
    lo = bounds[max(0, idx - 1)][0]
    hi = bounds[min(len(bounds) - 1, idx + 1)][1]
    first = bisect.bisect_left(values, lo, key=lambda u: u.start)
    last = bisect.bisect_left(values, hi, key=lambda u: u.start)
    return [u for u in values[first:last] if u is not v]


# --------------------------------------------------------------------------------------------
# Per-step rates of the sources (computed when the index is built)
# --------------------------------------------------------------------------------------------

_RATE_AFTER = re.compile(r"^[^.;]{0,80}?\b(?:for\s+each|for\s+every|per|each)\b", re.I)


def rates(index: SourceIndex) -> list[float]:
    """Percentages the sources state per step ("five percent (5%) of the monthly fee for each
    full 0.1%", "one percent (1%) of the price ... for each full week of delay")."""
    return sorted({
        float(sv.value.value) for sv in index.values
        if sv.value.kind == "percent" and _RATE_AFTER.match(index.texts[sv.doc][sv.value.end : sv.value.end + 100])
    })
