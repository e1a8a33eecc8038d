"""The passages of a deliverable the judges' reasonings quote, marked for the review page.

Why: an expert deciding a criterion item reads the judges' reasonings and then the memo; a judge
that writes `the memo says "rent is payable quarterly"` points at one sentence of a long text,
and finding it by eye is the slow part of the item. The page marks each passage a reasoning
quotes, naming the judge(s) who quoted it, and says so when no quote is found.

What counts as a quote is what the grounding's quote check calls one (`find_quotes`: double or
curly quotes of three words or more, single-quoted passages of four, block quotes; not defined
terms), split at ellipses (`quote_segments`). A part is found in the deliverable after the same
normalisation (`normalise_quote_text`: case, whitespace, quote style and punctuation ignored), on
word boundaries, at its first occurrence; a part of one word is not marked (it would mark every
"rent"). Pure: text in, pieces out.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

from evalcore.grounding.quotes import find_quotes, quote_segments
from evalcore.grounding.text import tokens_with_offsets

MIN_MARKED_WORDS = 2
"""A quoted part shorter than this (in words) is not looked for: one word is found everywhere."""


@dataclass(frozen=True)
class Piece:
    """A run of the deliverable's text: marked when ``judges`` (who quoted it) is not empty."""

    text: str
    judges: tuple[str, ...] = ()


@dataclass(frozen=True)
class Cited:
    """A deliverable's text cut into pieces, and how many of the judges' quotes were found in it."""

    pieces: list[Piece]
    found: int
    quotes: int
    cut: bool = False
    """The text was cut at the page's limit (a passage past it is found but not shown)."""
    missing: list[str] = field(default_factory=list)


def quoted_parts(reasoning: str) -> list[str]:
    """The normalised parts of every quotation in a reasoning (`find_quotes`, `quote_segments`)."""
    return [seg for q in find_quotes(reasoning) for seg in quote_segments(q.text)
            if len(seg.split(" ")) >= MIN_MARKED_WORDS]


def locate(text: str, part: str) -> tuple[int, int] | None:
    """Where the normalised ``part`` first occurs in ``text``, on word boundaries, as character
    offsets in ``text`` (from the first word's start to the last word's end), or None."""
    tokens, offsets = tokens_with_offsets(text)
    joined = " ".join(tokens)
    starts = [0]
    for t in tokens[:-1]:
        starts.append(starts[-1] + len(t) + 1)
    at = joined.find(part)
    while at >= 0:
        end = at + len(part)
        if (at == 0 or joined[at - 1] == " ") and (end == len(joined) or joined[end] == " "):
            first = bisect.bisect_left(starts, at)
            last = first + part.count(" ")
            return offsets[first][0], offsets[last][1]
        at = joined.find(part, at + 1)
    return None


def cite(text: str, reasonings: Sequence[tuple[str, str]], limit: int | None = None) -> Cited:
    """``text`` cut into pieces, each passage quoted by a reasoning (``(judge, reasoning)``) marked
    with the judges who quoted it (overlapping passages split where their judges differ); cut
    after ``limit`` characters (None: whole)."""
    spans: list[tuple[int, int, str]] = []
    quotes = found = 0
    missing: list[str] = []
    for judge, reasoning in reasonings:
        for part in quoted_parts(reasoning or ""):
            quotes += 1
            where = locate(text, part)
            if where is None:
                missing.append(part)
                continue
            found += 1
            spans.append((where[0], where[1], judge))
    shown = text if limit is None else text[:limit]
    points = sorted({0, len(shown), *(min(p, len(shown)) for s, e, _ in spans for p in (s, e))})
    pieces: list[Piece] = []
    for lo, hi in zip(points, points[1:], strict=False):
        judges = tuple(sorted({j for s, e, j in spans if s <= lo and hi <= e}))
        if pieces and pieces[-1].judges == judges:
            pieces[-1] = Piece(pieces[-1].text + shown[lo:hi], judges)
        else:
            pieces.append(Piece(shown[lo:hi], judges))
    return Cited(pieces=pieces, found=found, quotes=quotes, cut=len(shown) < len(text), missing=missing)
