"""Span lookups the checks make once per value: binary searches that answer like a scan."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.grounding.derived import local_values
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
