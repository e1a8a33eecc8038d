"""Span lookups the checks make once per value: binary searches that answer like a scan."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.grounding.derived import local_values
from evalcore.grounding.labels import REF_RE
from evalcore.grounding.text import Spans, enclosing, overlaps, sentence_bounds
from evalcore.grounding.values import find_values

spans = st.lists(st.tuples(st.integers(0, 200), st.integers(1, 40)).map(lambda t: (t[0], t[0] + t[1])), max_size=30)


@settings(max_examples=200, deadline=None)
@given(taken=spans, start=st.integers(0, 240), length=st.integers(0, 30))
def test_spans_overlap_exactly_when_a_scan_of_every_span_says_so(taken: list[tuple[int, int]], start: int, length: int) -> None:
    end = start + length
    assert Spans(taken).overlaps(start, end) == any(start < e and s < end for s, e in taken)
    assert overlaps(start, end, Spans(taken)) == overlaps(start, end, list(taken))


@settings(max_examples=100, deadline=None)
@given(
    sentences=st.lists(st.sampled_from(["Rent is $8,272.49.", "Term ends 2026.", "See Section 4.1; notice 30 days.", "\n\n"]), max_size=25),
    pos=st.integers(0, 700),
)
def test_enclosing_and_local_values_find_what_a_scan_finds(sentences: list[str], pos: int) -> None:
    text = " ".join(sentences)
    bounds = sentence_bounds(text)
    scan = next(((s, e) for s, e in bounds if s <= pos < e), (pos, pos))
    assert enclosing(bounds, pos) == scan
    values = find_values(text)
    for v in values:
        idx = next((i for i, (s, e) in enumerate(bounds) if s <= v.start < e), None)
        if idx is None:
            assert local_values(values, v, bounds) == []
            continue
        lo, hi = bounds[max(0, idx - 1)][0], bounds[min(len(bounds) - 1, idx + 1)][1]
        assert local_values(values, v, bounds) == [u for u in values if u is not v and lo <= u.start < hi]


_PIECES = [
    "The Cure Period is 30 days (Section 7.2).",
    "The Rent is $1,250 (Section 7. Rent).",
    "It is set out (see Section 7. The Lease controls).",
    "(Section 7.",
    "Tenant pays (as agreed. Landlord accepts) the rent.",
    "See Section 4.1.",
    "Closing is June 30, 2026.",
    "Cal. Civ. Code § 1950.5 applies.",
    "(Exhibit A. Legal Description)",
    ")",
    "\n\n",
    "\n- ",
]


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(_PIECES), max_size=20))
def test_a_sentence_never_ends_inside_an_open_parenthesis_or_a_citation(pieces: list[str]) -> None:
    """Issue 43: a claim cut at "(Section 7." was confirmed as citing a "Section 7" that does not
    exist. A sentence never ends while a parenthesis its paragraph closes later is open, nor in
    the middle of a reference (as the whole text reads it)."""
    text = " ".join(pieces)
    refs = [(m.start(), m.end()) for m in REF_RE.finditer(text)]
    for s, e in sentence_bounds(text):
        para_end = text.find("\n", e)  # every line break of these pieces ends a paragraph
        rest = text[e : para_end if para_end >= 0 else len(text)]
        depth = _depth(text[s:e])
        assert not (depth and rest.count(")") >= depth), (text[s:e], rest)
        assert not any(rs < e < re_ for rs, re_ in refs), text[s:e]


def _depth(text: str) -> int:
    depth = 0
    for c in text:
        depth = depth + 1 if c == "(" else max(0, depth - 1) if c == ")" else depth
    return depth
