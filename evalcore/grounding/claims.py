"""The number/date check: which values are claims, and which source occurrences support them.

Why one module: which values are claims and which source occurrences support them are one decision, tested as one.

Amounts, percentages, dates and numbers with a unit must occur in the sources, compared as
normalised values (`normalise`), or be one typed arithmetic step from supported figures
(`derived`). A value found nowhere is ``unsupported_specific``, or a ``contradiction`` when a
source passage about the same thing (shared keywords around the value) gives a different value of
the same type - that passage is the evidence (`value_finding`).

A value the sources *do* state is still checked in context (`why_not`): it is not support when it
appears only in a document about another deal (`matter`), when an amendment replaced it
(`amendments`) and the deliverable does not report the change, when it is a duration running the
other way ("24 months after he leaves" against "the last twenty-four (24) months of employment"),
or when the deliverable calls it current and it is a row of a schedule not in force on the as-of
day. Such a value is a ``contradiction`` with the amendment, the row in force or the passage of
this matter as evidence (`misattributed_finding`). A figure computed from such a value in the same
sentence is one finding spanning both.

Deliberately not done: judging a value by context alone ("the best-matching passage gives another
figure") when no such rule applies. Measured on the sample, the values that rule would flag first
are faithful restatements whose source passage is worded differently (a definition two steps
away, a date in another sentence) - it raised false flags and caught nothing the rules above miss.
Context is only used to choose among a value's occurrences (`rejected`).

Not claims, so never flagged: trivial numbers (integers below 10 with no unit, years on their own
(1900-2100, checked only as part of a full date), list numbering at the start of a line, clock
times, numbers that are part of a section/exhibit label - the reference check handles those;
`trivial_number`); numbers that are part of a file name or an identifier
("Summit_response_2025-12-01.txt", "INV-1057"); the deliverable's own dateline and the deadlines
it asks for (`own_date`); and time limits it sets for its reader ("If you sign within forty-five
(45) days, ..."; `own_term`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal, cast

from evalcore.grounding.findings import CheckName, GroundingFinding, location
from evalcore.grounding.index import Passage, SourceIndex, SourceValue
from evalcore.grounding.labels import DOC_TYPE_STEMS, REF_RE
from evalcore.grounding.text import overlaps
from evalcore.grounding.values import (
    LIST_NUMBER_RE,
    TIME_UNITS,
    UNITS,
    Value,
    duration_direction,
    value_family,
    value_key,
)
from evalcore.schema import Category, Materiality

#: IDF-weighted keyword overlap above which a source value is "about the same thing" (contradiction).
CONTRADICTION_CONTEXT_SCORE = 1.0


def _kw_score(a: Iterable[str], b: Iterable[str], idf: Mapping[str, float]) -> tuple[float, list[str]]:
    shared = sorted(set(a) & set(b))
    return sum(idf.get(t, 1.0) for t in shared), shared


def _value_found(v: Value, index: SourceIndex) -> bool:
    if v.kind == "date":
        return v.value in index.dates
    if v.kind == "monthday":
        return any((d.month, d.day) == v.value for d in index.dates) or v.value in index.monthdays
    if v.kind == "month":
        # "December 2025" is coarse: a source date in that month or the next/previous one is
        # support enough (arrears "for December and January" next to a January 12 notice).
        y, m = v.value
        near = {(y + (m + d - 1) // 12, (m + d - 1) % 12 + 1) for d in (-1, 0, 1)}
        return bool(near & index.months)
    if v.kind == "amount":
        return v.value in index.amounts or v.value in index.bare
    if v.kind == "percent":
        return v.value in index.percents or v.value in index.bare or (v.value / 100).normalize() in index.bare
    if v.unit:
        return (v.value, v.unit) in index.unit_values or v.value in index.bare
    return v.value in index.all_numbers


def _same_type(a: Value, b: Value) -> bool:
    if a.kind in ("date", "month", "monthday"):
        return b.kind in ("date", "month", "monthday")
    if a.kind != b.kind:
        return False
    if a.kind == "number":
        return a.unit == b.unit
    return True


# --------------------------------------------------------------------------------------------
# Which values of a deliverable are claims (not labels, not the deliverable's own terms)
# --------------------------------------------------------------------------------------------


def trivial_number(v: Value, text: str, sentence: str) -> bool:
    """Numbers that are not claims: below 10 or a year, with no unit; list numbering at the start of a
    line; page, item and "No." numbers; and numbers inside an identifier."""
    if v.kind != "number":
        return False
    if v.unit is None and v.value < 10:
        return True
    if v.unit is None and v.value == v.value.to_integral_value() and 1900 <= v.value <= 2100:
        return True
    line_start = text.rfind("\n", 0, v.start) + 1
    if LIST_NUMBER_RE.match(text[line_start : v.end + 2]) and not text[line_start : v.start].strip(" \t(#*-"):
        return True
    before = text[max(0, v.start - 14) : v.start]
    if re.search(r"(?:No\.|Nos\.|#|Tab|Page|page|p\.|pp\.|Item|Step|Question|Q)\s*$", before):
        return True
    return _in_identifier(v, text)


_IDENTIFIER = re.compile(r"[\w.]*_[\w.-]*|[\w-]+\.(?:pdf|docx?|xlsx?|eml|txt|md|csv|pptx?)|[A-Za-z]+\d*-[\w-]*\d[\w-]*")


def _in_identifier(v: Value, text: str) -> bool:
    """Whether a number is part of a file name or an identifier ("Summit_response_2025-12-01.txt",
    "PO-4471", "INV-1057"): a label, not a quantity."""
    s, e = v.start, v.end
    while s > 0 and not text[s - 1].isspace() and text[s - 1] not in "([\"'“‘":
        s -= 1
    while e < len(text) and not text[e].isspace() and text[e] not in ")]\"'”’,;":
        e += 1
    token = text[s:e].rstrip(".:")
    return bool(_IDENTIFIER.fullmatch(token))


# A "Date:" field at the start of a line, or after a "|" in a header line of fields
# ("**Client:** Pinecrest | **Date:** February 16, 2026").
_DATELINE = re.compile(r"(?:^|\|)[ \t>*_#-]*(?:Date|Dated|Sent|As of)[*_]*\s*:[*_]*\s*$", re.I)
_REQUEST = re.compile(
    r"\b(?:please|kindly|we (?:ask|request|require|expect)|you (?:must|should|are asked to)|let us know|"
    r"we propose|we will|we intend to|request that|ask that)\b",
    re.I,
)


# A sentence that is an instruction to its reader ("Send us your assurance ... by February 20").
_IMPERATIVE = re.compile(
    r"^[\W\d]*(?:please\s+)?(?:send|provide|deliver|confirm|respond|reply|return|sign|let|tell|contact|advise|notify|"
    r"submit|furnish|give|pay|cure|remedy|forward|call|arrange|complete|execute|acknowledge|countersign|ensure|"
    r"make|schedule|share|identify)\b",
    re.I,
)


def own_date(v: Value, text: str, sentence: str) -> bool:
    """Dates the deliverable sets itself, not claims about the record: its own dateline
    ("Date: February 16, 2026", also as a field of a header line after "|") and a deadline it
    asks for ("please confirm by February 20"; "Send us a mitigation plan by February 20")."""
    line_start = text.rfind("\n", 0, v.start) + 1
    if _DATELINE.search(text[line_start : v.start]):
        return True
    before = text[max(0, v.start - 25) : v.start]
    return bool(re.search(r"\b(?:by|before|no later than|on or before|until)\s*$", before, re.I)) and bool(
        _REQUEST.search(sentence) or _IMPERATIVE.match(sentence)
    )


_READER_TERM = re.compile(r"\bif\s+you\b|\byou\s+(?:must|should|may|will|have\s+to|need\s+to)\b|\bplease\b", re.I)
_RECORD_TERM = re.compile(r"\b(?:under|pursuant\s+to|per|as\s+required\s+by|as\s+provided\s+in)\s+(?:the|this|your|its|our)\b", re.I)


def own_term(v: Value, text: str, sentence: str) -> bool:
    """A time limit the deliverable itself gives its reader ("If you sign a general release
    within forty-five (45) days, ..."; "please respond within 10 days"): the deliverable's own
    term, like a deadline it asks for (`own_date`), not a claim about the record. A sentence
    that ties the limit to the record ("within 21 days under Section 7.2", "as required by the
    Agreement") is a claim and is checked."""
    if v.kind != "number" or v.unit not in TIME_UNITS:
        return False
    if not re.search(r"\b(?:within|by|before|no\s+later\s+than|on\s+or\s+before)\s*$", text[max(0, v.start - 25) : v.start], re.I):
        return False
    if REF_RE.search(sentence) or _RECORD_TERM.search(sentence):
        return False
    return bool(_READER_TERM.search(sentence) or _REQUEST.search(sentence) or _IMPERATIVE.match(sentence))


# --------------------------------------------------------------------------------------------
# Claim context: which source occurrences of a value support what the deliverable says
# --------------------------------------------------------------------------------------------

PRESENT = re.compile(
    r"(?<![\w-])(?:current(?:ly)?|now|today|presently|at\s+present|in\s+effect|in\s+force)(?![\w-])", re.I
)
HISTORICAL = re.compile(
    r"\b(?:original(?:ly)?|previous(?:ly)?|former(?:ly)?|earlier|amend\w*|supersed\w*|replac\w*|"
    r"(?:was|were|been)\s+(?:changed|extended|moved|shortened|reduced|increased|deleted))\b",
    re.I,
)
_NAME_NUMBER = re.compile(r"^\s+(?:[A-Z][a-z]+)(?:\s+(?:Street|St\.|Avenue|Ave\.|Road|Rd\.|Boulevard|Blvd\.|Drive|Way|Lane|Plaza))?")


@dataclass(frozen=True)
class Claim:
    """A value as the deliverable states it: what it is said about, and how."""

    value: Value
    sentence: str
    context: frozenset[str]
    direction: str | None
    present: bool
    historical: bool
    keys: frozenset[tuple[str, Any]]  # the values stated in the same sentence


@dataclass(frozen=True)
class Reason:
    """Why one source occurrence of a value does not support the claim."""

    kind: Literal["superseded", "not_current", "other_period", "other_matter"]
    occurrence: SourceValue
    evidence: Passage | None
    explanation: str


_REASON_ORDER = {"superseded": 0, "not_current": 1, "other_period": 2, "other_matter": 3}


def source_occurrences(v: Value, index: SourceIndex) -> list[SourceValue]:
    """Every source value that states `v` (normalised; the same equivalences as `_value_found`,
    except that a bare number supports a percentage or a duration only when its table column
    says so - a "2" in a file name is not "2%", a "49" in a list is not "49 days")."""
    if v.kind == "date":
        return list(index.by_date.get(v.value, []))
    if v.kind == "monthday":
        return [sv for d in sorted(index.by_date) if (d.month, d.day) == v.value for sv in index.by_date[d]] + [
            sv for sv in index.values if sv.value.kind == "monthday" and sv.value.value == v.value
        ]
    if v.kind == "month":
        y, m = v.value
        near = {(y + (m + d - 1) // 12, (m + d - 1) % 12 + 1) for d in (-1, 0, 1)}
        return [sv for d in sorted(index.by_date) if (d.year, d.month) in near for sv in index.by_date[d]] + [
            sv for sv in index.values if sv.value.kind == "month" and sv.value.value in near
        ]
    nums = index.by_number.get(v.value, [])
    if v.kind == "amount":
        return [sv for sv in nums if sv.value.kind == "amount" or (sv.value.kind == "number" and sv.value.unit is None)]
    if v.kind == "percent":
        fractions = index.by_number.get((v.value / 100).normalize(), []) if v.value < 100 else []
        return [sv for sv in nums if sv.value.kind == "percent"] + [
            sv for sv in fractions if sv.value.kind == "number" and sv.value.unit is None and sv.value.value < 1
        ]
    if v.unit:
        return [sv for sv in nums if sv.value.kind == "number" and (sv.value.unit == v.unit or _column_unit(sv, index) == v.unit)]
    return list(nums)


def _column_unit(sv: SourceValue, index: SourceIndex) -> str | None:
    """The unit a bare number of a table has by its column header ("Duration (days)", "RSF") or
    its row label ("Leased RSF | 90400")."""
    row = sv.passage.row
    if row is None or sv.column is None or sv.value.unit is not None:
        return None
    header = index.tables[row.table].header
    labels = [header[sv.column] if sv.column < len(header) else ""]
    if sv.column > 0 and row.cells:
        a, b = row.cells[0]
        labels.append(index.texts[sv.doc][a:b])
    for label in labels:
        for form, unit in UNITS.items():
            if re.search(rf"(?<![\w]){re.escape(form)}(?![\w])", label.casefold()):
                return unit
    return None


def as_of_day(text: str, values: Sequence[Value], index: SourceIndex, off: frozenset[str]) -> date | None:
    """The day the deliverable speaks from: its own dateline, else the latest date a document of
    the matter bears (a file is read as of its newest document)."""
    for v in values:
        if v.kind == "date":
            line_start = text.rfind("\n", 0, v.start) + 1
            if _DATELINE.search(text[line_start : v.start]):
                return cast(date, v.value)
    dates = [d for doc, d in index.doc_dates.items() if doc not in off]
    return max(dates) if dates else None


def why_not(claim: Claim, sv: SourceValue, index: SourceIndex, off: frozenset[str], as_of: date | None) -> Reason | None:
    """None when this source occurrence supports the claim; otherwise the reason it does not.

    * other matter - the document is about another deal (`matter_index`, `off_matter`);
    * superseded - an amendment replaced the value (`superseded`), and the deliverable does not
      say so: a sentence that also states the new value, or speaks of the original / previous
      value or of the amendment, reports the change faithfully;
    * other period - a duration running the other way ("24 months after he leaves" against
      "the last twenty-four (24) months of employment");
    * not current - the claim says current / now / in effect, the value is a row of a schedule
      (consecutive periods) that is not in force on the as-of day, and the row that is in force
      gives a different value in the same column.
    """
    v = claim.value
    if sv.doc in off:
        return Reason(
            "other_matter", sv, None,
            f"{v.describe()} appears only in {sv.doc}, which concerns another matter (it shares no names or figures "
            "with the other documents beyond one).",
        )
    ch = index.superseded.get(sv.ident)
    if ch is not None and not claim.historical and not (claim.keys & ch.new):
        return Reason(
            "superseded", sv, ch.passage,
            f"{v.describe()} is the value {ch.doc} replaced; the amendment puts {ch.new_text!r} in force.",
        )
    if claim.direction and sv.direction and claim.direction != sv.direction:
        return Reason(
            "other_period", sv, None,
            f"In the sources, {sv.value.text!r} is a period {sv.direction} its reference point, not {claim.direction} it.",
        )
    row = sv.passage.row
    if claim.present and as_of is not None and row is not None and sv.column is not None:
        table = index.tables[row.table]
        if table.schedule and row.period is not None and not row.period[0] <= as_of <= row.period[1]:
            current = next((r for r in table.rows if r.period is not None and r.period[0] <= as_of <= r.period[1]), None)
            if current is not None:
                other = [
                    u for u in index.values
                    if u.passage.row is current and u.column == sv.column and value_family(u.value) == value_family(sv.value)
                    and u.value.value != sv.value.value
                ]
                if other:
                    return Reason(
                        "not_current", sv, other[0].passage,
                        f"{sv.value.text!r} is the value for {row.period[0].isoformat()} to {row.period[1].isoformat()}; "
                        f"on {as_of.isoformat()} the schedule gives {other[0].value.text!r}.",
                    )
    return None


def rejected(claim: Claim, accepted: Sequence[SourceValue], reasons: Sequence[Reason], index: SourceIndex) -> bool:
    """Whether the sources, read in context, do not support the claim.

    Not when any occurrence supports it - unless every supporting occurrence is about something
    unrelated to the claim (shares no keyword with it) while one rejected as superseded, not
    current or running the other way is about the claim's subject: "the lease expiration date is August 31, 2026" after an amendment extended it is not
    supported by the same date ending the last row of the rent schedule. Context only chooses
    between occurrences of the value here; it never condemns a value on its own (measured on the
    sample, that raises false flags on faithful restatements).
    """
    if not reasons:
        return False
    if not accepted:
        return True
    # Another matter's document never outweighs this matter's: only a value found *only* there
    # is unsupported.
    reasons = [r for r in reasons if r.kind != "other_matter"]
    if not reasons:
        return False
    # Generous to the supporting side: its whole passage counts, not only the words next to it.
    # Words naming a document type ("lease", "agreement") say nothing about the subject.
    subject = claim.context - DOC_TYPE_STEMS
    best_accepted = max(_kw_score(subject, sv.context | sv.passage.keywords, index.idf)[0] for sv in accepted)
    best_rejected = max(_kw_score(subject, r.occurrence.context, index.idf)[0] for r in reasons)
    return best_accepted == 0.0 and best_rejected >= CONTRADICTION_CONTEXT_SCORE


def is_operand(v: Value, text: str, ref_spans: Iterable[tuple[int, int]]) -> bool:
    """Whether a value can be an operand of a derivation: a quantity, not a label. Section
    numbers, years, list numbers and numbers that are part of a name or an address ("88 Mission",
    "1200 Harbor Boulevard") are not quantities."""
    if overlaps(v.start, v.end, ref_spans):
        return False
    if v.kind != "number":
        return True
    if v.unit is None and v.value == v.value.to_integral_value() and 1900 <= v.value <= 2100:
        return False
    if v.unit is None and _NAME_NUMBER.match(text[v.end : v.end + 30]):
        return False
    line_start = text.rfind("\n", 0, v.start) + 1
    if LIST_NUMBER_RE.match(text[line_start : v.end + 2]) and not text[line_start : v.start].strip(" \t(#*-"):
        return False
    if _in_identifier(v, text):
        return False
    return not re.search(r"(?:No\.|Nos\.|#|Tab|Page|page|p\.|pp\.|Item|Step|Question|Q)\s*$", text[max(0, v.start - 14) : v.start])


# --------------------------------------------------------------------------------------------
# Findings
# --------------------------------------------------------------------------------------------


def _best_other_value(
    v: Value, ctx: frozenset[str], index: SourceIndex, off: frozenset[str], direction: str | None = None
) -> tuple[float, SourceValue, list[str]] | None:
    """The source value of the same type, other than `v`, whose context best matches the claim's
    (IDF-weighted shared keywords); values of off-matter documents and superseded values are
    never evidence."""
    best: tuple[float, SourceValue, list[str]] | None = None
    key = value_key(v)
    for sv in index.values:
        if sv.doc in off or sv.ident in index.superseded or not _same_type(v, sv.value) or value_key(sv.value) == key:
            continue
        if direction is not None and sv.direction is not None and sv.direction != direction:
            continue
        score, shared = _kw_score(ctx, sv.context, index.idf)
        if best is None or score > best[0]:
            best = (score, sv, shared)
    return best


def _number_materiality(v: Value) -> Materiality:
    if v.kind in ("amount", "percent", "date", "month", "monthday"):
        return "material"
    if v.unit in ("day", "business_day", "week", "month", "year", "hour", "sqft", "share"):
        return "material"
    return "minor"


def value_finding(
    v: Value, ctx: frozenset[str], name: str, text: str, index: SourceIndex, off: frozenset[str] = frozenset()
) -> GroundingFinding:
    """A value no source states: a contradiction when a source passage about the same subject
    gives another value of the same type (that passage is the evidence), else unsupported."""
    check: CheckName = "date" if v.kind in ("date", "month", "monthday") else "number"
    best = _best_other_value(v, ctx, index, off)
    if best is not None and best[0] >= CONTRADICTION_CONTEXT_SCORE:
        _, sv, shared = best
        return GroundingFinding(
            check=check,
            deliverable=name,
            span=v.text,
            start=v.start,
            end=v.end,
            location=location(text, v.start),
            category="contradiction",
            evidence_document=sv.doc,
            evidence_passage=sv.passage.text,
            explanation=(
                f"{v.describe()} appears in no source; the source passage about the same subject "
                f"({', '.join(shared[:4])}) gives {sv.value.text!r}."
            ),
            confidence=0.85,
            suggested_materiality=_number_materiality(v),
        )
    return GroundingFinding(
        check=check,
        deliverable=name,
        span=v.text,
        start=v.start,
        end=v.end,
        location=location(text, v.start),
        category="unsupported_specific",
        evidence_document=None,
        evidence_passage=None,
        explanation=f"{v.describe()} appears in no source document.",
        confidence=0.7,
        suggested_materiality=_number_materiality(v),
    )


def misattributed_finding(
    v: Value,
    claim: Claim,
    reasons: Sequence[Reason],
    name: str,
    text: str,
    index: SourceIndex,
    off: frozenset[str],
    operand: Value | None = None,
) -> GroundingFinding:
    """A value the sources state, but not about what the deliverable says (see `why_not`).

    Evidence: the amendment that replaced it; the schedule row in force; the source duration
    running the claimed way that best matches the claim; or, for another matter's figure, the
    passage of this matter about the same subject (a contradiction) - without one, the claim is
    unsupported. With `operand`, `v` was computed from a misattributed figure of the same
    sentence: one finding spans both."""
    r = min(reasons, key=lambda x: (_REASON_ORDER[x.kind], x.occurrence.ident))
    check: CheckName = "date" if v.kind in ("date", "month", "monthday") else "number"
    start, end = v.start, v.end
    explanation = r.explanation
    if operand is not None:
        start, end = min(v.start, operand.start), max(v.end, operand.end)
        explanation = f"{v.describe()} is computed from {operand.text!r}: {r.explanation}"
    evidence: Passage | None = r.evidence
    evidence_doc: str | None = r.evidence.doc if r.evidence is not None else None
    category: Category = "contradiction"
    confidence = 0.8
    subject = operand if operand is not None else v
    if r.kind == "other_matter":
        best = _best_other_value(subject, claim.context, index, off)
        if best is not None and best[0] >= CONTRADICTION_CONTEXT_SCORE:
            evidence, evidence_doc = best[1].passage, best[1].doc
            explanation += f" The passage of this matter about the same subject gives {best[1].value.text!r}."
        else:
            category, confidence = "unsupported_specific", 0.65
    elif r.kind == "other_period":
        d = duration_direction(subject, text)
        best = _best_other_value(subject, claim.context, index, off, d)
        if best is not None and best[1].direction == d:
            evidence = best[1].passage
            explanation += f" The sources' period {d} it is {best[1].value.text!r}."
        else:
            evidence = r.occurrence.passage
        evidence_doc = evidence.doc
    return GroundingFinding(
        check=check,
        deliverable=name,
        span=text[start:end],
        start=start,
        end=end,
        location=location(text, start),
        category=category,
        evidence_document=evidence_doc,
        evidence_passage=evidence.text if evidence is not None else None,
        explanation=explanation,
        confidence=confidence,
        suggested_materiality=_number_materiality(v),
    )


def contains_value(index: SourceIndex, value: Value) -> bool:
    """Whether the indexed texts state this value (normalised; "$1.25m" = "1,250,000")."""
    if _value_found(value, index):
        return True
    return value.kind in ("amount", "number", "percent") and value.value in index.all_numbers
