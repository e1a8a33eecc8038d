"""The quote check: a quotation must occur in a source.

A quotation (straight or curly double quotes of >= 3 words, single-quoted passages of >= 4
words, ``>`` block quotes) must occur in a source after normalisation (case, whitespace, quote
style and punctuation are ignored; ``...`` and ``[...]`` split a quote into segments that must
each occur). Otherwise the best-matching source window is found by token alignment
(`best_alignment`): a close match (similarity >= `MISQUOTE_SIMILARITY`) is a ``contradiction`` (a
misquote) with that passage as evidence; no close match is a ``fabricated_source`` with no
evidence.

Deliberately not flagged: short quoted strings (one or two words, and defined terms such as
``(the "Buyer")``) - these are terms, not quotations.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher

from evalcore.grounding.findings import GroundingFinding, location
from evalcore.grounding.index import SourceIndex
from evalcore.grounding.normalise import normalise_quote_text
from evalcore.grounding.text import STOPWORDS, overlaps, tokens_with_offsets

#: A quotation whose best source window is at least this similar is a misquote (contradiction).
MISQUOTE_SIMILARITY = 0.7

#: Double-quoted strings shorter than this (in words) are terms, not quotations.
MIN_DOUBLE_QUOTE_WORDS = 3
#: Single-quoted passages need this many words (apostrophes make shorter ones ambiguous).
MIN_SINGLE_QUOTE_WORDS = 4


@dataclass(frozen=True)
class _Quote:
    start: int
    end: int
    text: str


_DOUBLE_QUOTES = [
    re.compile(r"“([^”“\n]+(?:\n(?!\s*\n)[^”“\n]+)*)”"),
    re.compile(r'(?<![\w])"([^"\n]+(?:\n(?!\s*\n)[^"\n]+)*)"'),
    re.compile(r"«\s?([^»\n]+)\s?»"),
]
_SINGLE_QUOTES = [
    re.compile(r"‘([^‘\n]+?)’(?![A-Za-z])"),
    re.compile(r"(?<![\w'])'(?=\S)([^'\n]+?)(?<=\S)'(?![\w'])"),
]
_DEFINED_TERM_BEFORE = re.compile(r"(?:\(|\bas\s+|\bthe\s+term\s+|\bcalled\s+|\breferred\s+to\s+as\s+)(?:the\s+|each\s+|a\s+|an\s+)?[\"“‘']?$", re.I)


def find_quotes(text: str) -> list[_Quote]:
    """The quotations of a text in order of position: block quotes, then double- and single-quoted
    passages long enough to be quotations (`MIN_DOUBLE_QUOTE_WORDS`, `MIN_SINGLE_QUOTE_WORDS`) that
    are not defined terms."""
    quotes: list[_Quote] = []
    taken: list[tuple[int, int]] = []
    # Block quotes: consecutive lines starting with '>'.
    for m in re.finditer(r"(?:^[ \t]*>[^\n]*(?:\n|$))+", text, re.M):
        inner_lines = [re.sub(r"^[ \t]*>+\s?", "", ln) for ln in m.group().splitlines()]
        inner = " ".join(ln for ln in inner_lines if ln.strip())
        if len(tokens_with_offsets(inner)[0]) >= MIN_DOUBLE_QUOTE_WORDS:
            body_start = m.start() + (len(m.group()) - len(m.group().lstrip(" \t>")))
            body_end = m.start() + len(m.group().rstrip())
            quotes.append(_Quote(body_start, body_end, inner))
            taken.append((m.start(), m.end()))
    for patterns, minimum in ((_DOUBLE_QUOTES, MIN_DOUBLE_QUOTE_WORDS), (_SINGLE_QUOTES, MIN_SINGLE_QUOTE_WORDS)):
        for pattern in patterns:
            for m in pattern.finditer(text):
                s, e = m.start(1), m.end(1)
                if overlaps(m.start(), m.end(), taken):
                    continue
                body = m.group(1)
                n_words = len(tokens_with_offsets(body)[0])
                if n_words < minimum:
                    continue
                if n_words <= 4 and _DEFINED_TERM_BEFORE.search(text[max(0, m.start() - 30) : m.start() + 1]):
                    continue
                quotes.append(_Quote(s, e, body))
                taken.append((m.start(), m.end()))
    # Block quotes may hold inner quotation marks; those are checked as part of the block.
    quotes.sort(key=lambda q: q.start)
    return quotes


_ELLIPSIS = re.compile(r"\.\s?\.\s?\.|…|\[[^\]]*\]")


def quote_segments(body: str) -> list[str]:
    """A quotation's parts between ellipses (`...`, `…`, `[...]`), each normalised (`normalise_quote_text`)."""
    segs = [normalise_quote_text(s) for s in _ELLIPSIS.split(body)]
    return [s for s in segs if s]


@dataclass(frozen=True)
class _Alignment:
    similarity: float
    doc: str
    passage: str
    matched: int
    differing: tuple[str, ...]
    start: int = 0  # character offset of the passage in its document


def best_alignment(quote_tokens: list[str], index: SourceIndex) -> _Alignment | None:
    """The source window most similar to the quote (token-level, order-aware)."""
    m = len(quote_tokens)
    if m == 0:
        return None
    best: _Alignment | None = None
    for doc_i, (doc, (_n, text)) in enumerate(zip(index.norm, index.docs, strict=True)):
        toks = doc.tokens
        n = len(toks)
        if n == 0:
            continue
        # 1) candidate regions by diagonal voting: every occurrence of a quote token at source
        #    position p votes for a window starting at p - (its position in the quote). Very
        #    common tokens ("the") are skipped when rarer ones exist.
        positions = index.positions[doc_i]
        slack = max(3, m // 5)
        common = max(50, n // 50)
        usable = [j for j, t in enumerate(quote_tokens) if t in positions]
        rare = [j for j in usable if len(positions[quote_tokens[j]]) <= common]
        voters = rare if len(rare) >= 2 else usable
        if not voters:
            continue
        votes: Counter[int] = Counter()
        for j in voters:
            for p in positions[quote_tokens[j]][:5000]:
                votes[p - j] += 1
        diagonals = sorted(votes)
        smoothed: list[tuple[int, int]] = []
        lo_i = hi_i = running = 0
        for d in diagonals:
            while hi_i < len(diagonals) and diagonals[hi_i] <= d + slack:
                running += votes[diagonals[hi_i]]
                hi_i += 1
            while diagonals[lo_i] < d - slack:
                running -= votes[diagonals[lo_i]]
                lo_i += 1
            smoothed.append((running, d))
        smoothed.sort(key=lambda x: (-x[0], x[1]))
        candidates: list[int] = []
        floor = max(2, len(voters) // 4) if len(voters) >= 2 else 1
        for score, st in smoothed:
            if score < floor or len(candidates) >= 4:
                break
            if all(abs(st - c) > slack for c in candidates):
                candidates.append(max(0, st))
        # 2) order-aware alignment around each candidate: the matched region of the source is
        #    the window; similarity = 2 * matched / (quote length + window length).
        for st in candidates:
            lo, hi = max(0, st - slack), min(n, st + m + slack)
            window = toks[lo:hi]
            sm = SequenceMatcher(None, quote_tokens, window, autojunk=False)
            blocks = [bl for bl in sm.get_matching_blocks() if bl.size]
            if not blocks:
                continue
            matched = sum(bl.size for bl in blocks)
            a = lo + blocks[0].b
            b = lo + blocks[-1].b + blocks[-1].size
            ratio = 2.0 * matched / (m + (b - a))
            if best is None or ratio > best.similarity:
                matched_q = {i for bl in blocks for i in range(bl.a, bl.a + bl.size)}
                matched_s = {lo + j for bl in blocks for j in range(bl.b, bl.b + bl.size)}
                diff = tuple(t for i, t in enumerate(quote_tokens) if i not in matched_q) + tuple(
                    toks[j] for j in range(a, b) if j not in matched_s
                )
                best = _Alignment(ratio, doc.name, text[doc.start(a) : doc.end(b - 1)], matched, diff, doc.start(a))
    return best


def quote_finding(q: _Quote, name: str, text: str, index: SourceIndex) -> GroundingFinding | None:
    """The finding for one quotation; None when every segment of it occurs in one source."""
    segments = quote_segments(q.text)
    if not segments:
        return None
    for doc in index.norm:
        if all(seg in doc.text for seg in segments):
            return None
    tokens = [t for seg in segments for t in seg.split()]
    al = best_alignment(tokens, index)
    span = text[q.start : q.end]
    if al is not None and al.similarity >= MISQUOTE_SIMILARITY:
        trivial = all(t in STOPWORDS for t in al.differing)
        return GroundingFinding(
            check="quote",
            deliverable=name,
            span=span,
            start=q.start,
            end=q.end,
            location=location(text, q.start),
            category="contradiction",
            evidence_document=al.doc,
            evidence_passage=al.passage,
            explanation=(
                f"Quotation differs from the source ({al.similarity:.0%} similar); words that differ: "
                f"{', '.join(sorted(set(al.differing))[:8])}."
            ),
            confidence=round(min(0.95, 0.6 + al.similarity / 3), 2),
            suggested_materiality="minor" if trivial else "material",
        )
    return GroundingFinding(
        check="quote",
        deliverable=name,
        span=span,
        start=q.start,
        end=q.end,
        location=location(text, q.start),
        category="fabricated_source",
        evidence_document=None,
        evidence_passage=None,
        explanation=(
            "Quotation occurs in no source document"
            + (f" (closest passage only {al.similarity:.0%} similar)." if al is not None else ".")
        ),
        confidence=0.8 if al is None or al.similarity < 0.5 else 0.7,
        suggested_materiality="material",
    )


def contains_text(index: SourceIndex, text: str, min_similarity: float | None = None) -> bool:
    """Whether the indexed texts contain `text` after quote normalisation; with `min_similarity`,
    a close token alignment (a lightly reworded passage) also counts."""
    needle = normalise_quote_text(text)
    if not needle or needle in index.all_norm:
        return True
    if min_similarity is None:
        return False
    al = best_alignment(needle.split(), index)
    return al is not None and al.similarity >= min_similarity
