"""How a text is cut up for comparison: word tokens, stems and keywords, sentences, spans.

Why shared: the checks, the source index and the offline rubric judge must cut texts the same
way, or "the same words" would not match. Tokens are casefolded NFKC words with their offsets (so
a match in normalised text maps back to the original characters); keywords are crude stems of
the content words (enough to tell whether two passages are about the same thing); sentences are
split at blank lines, bullets and sentence ends, but not after the abbreviations of citations
("U.S.C.", "v.", "Cal. App.") - a sentence is the unit of the legal-knowledge rule (`legal`) and
of a value's context.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence

_TOKEN = re.compile(r"[^\W_]+")


def tokens_with_offsets(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Casefolded word tokens of `text` with their character offsets in `text`."""
    toks: list[str] = []
    offs: list[tuple[int, int]] = []
    for m in _TOKEN.finditer(text):
        toks.append(unicodedata.normalize("NFKC", m.group()).casefold())
        offs.append((m.start(), m.end()))
    return toks, offs


STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers him his how i if in into is it its itself just me more most my no nor
    not now of off on once only or other our out over own same she should so some such than that the
    their them then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your shall may must per upon thereof herein
    hereof hereunder including include includes within without said such any each every either neither
    one two three four five six seven eight nine ten dated date dates day days month months year years""".split()
)


_SUFFIXES = ("ations", "ation", "itions", "ition", "ings", "ing", "ments", "ment", "ities", "ity", "ives", "ive",
             "edly", "ed", "es", "ly", "s", "e")


def stem(word: str) -> str:
    """A crude, stable stem: one common suffix off, six letters kept ("leased", "leasing",
    "lease" -> "leas"; "compete", "competition" -> "compet"). Enough to compare contexts."""
    w = word.casefold()
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    return w[:6]


def keywords(text: str) -> list[str]:
    """Stems of the content words of a text (stopwords, short words and digits dropped)."""
    return [
        stem(t) for t in tokens_with_offsets(text)[0] if len(t) > 2 and t not in STOPWORDS and not t.isdigit()
    ]


_ABBREVIATION_END = re.compile(
    r"(?:\b[A-Z]\.|\bv\.|\bvs\.|\b(?:No|Nos|Inc|Co|Corp|Ltd|Sec|St|Mr|Ms|Mrs|Dr|al|App|Cal|Civ|Proc|Supp|"
    r"Stat|Assn|Ass'n|Art|Fed|Com|Comm|Corps|Admin|Regs|Cir|Ct|Ch|Del|Pa|Ill|Tex|Fla|Mass|Rev|Ann|Reg|Bus|Prof|Gov|Gen|Lab|Pen|Evid|Ins|"
    r"Fin|Ed|Jr|Sr|Bros|Dept|Div|Cl|Para|Subd|Pt|Vol|Tit|Cong|Sess|Pub|Cf|cf|e\.g|i\.e|etc|approx|Ex|Sch)\.|§)$"
)


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """Sentence-ish spans: split at blank lines, line breaks before bullets, and sentence ends.

    Never inside a parenthesis that the paragraph closes later: "(Section 7. Assignment)" or
    "(the Rent is $1,250. See above)" is one aside, and a sentence cut at "(Section 7." leaves a
    citation whose label reads as "Section 7" - a section that does not exist (issue 43: a
    claim cut there was confirmed as a fabricated source).
    """
    bounds: list[tuple[int, int]] = []
    for para in re.finditer(r"[^\n]+(?:\n(?![ \t]*\n)(?![ \t]*(?:[-*•>#|]|\d+[.)]|\([a-z0-9]+\))\s)[^\n]+)*", text):
        start = para.start()
        chunk = para.group()
        last = 0
        for m in re.finditer(r"(?<=[.!?;])(?P<close>[\"”’')]*)\s+(?=[\"“‘(]*[A-Z0-9])", chunk):
            before = chunk[max(0, m.start() - 8) : m.start()]
            # Do not split after abbreviations (U.S.C., v., No., Inc., Cal. App. 3d, Civ. Code).
            if _ABBREVIATION_END.search(before):
                continue
            end = m.end("close")  # a closing quote or parenthesis belongs to the sentence it closes
            depth = _open_depth(chunk[last:end])
            if depth and chunk.count(")", end) >= depth:
                continue
            bounds.append((start + last, start + end))
            last = m.end()
        bounds.append((start + last, start + len(chunk)))
    return [(s, e) for s, e in bounds if text[s:e].strip()]


def _open_depth(text: str) -> int:
    """How many parentheses are open at the end of `text` (a ")" with none open is ignored)."""
    depth = 0
    for c in text:
        if c == "(":
            depth += 1
        elif c == ")" and depth:
            depth -= 1
    return depth


def in_unclosed_parenthesis(text: str, pos: int) -> bool:
    """Whether `pos` lies inside a parenthesis that `text` opens before it and never closes: the
    mark of a text cut mid-aside ("The Cure Period is 30 days (Section 7.")."""
    open_at: list[int] = []
    for i, c in enumerate(text):
        if c == "(":
            open_at.append(i)
        elif c == ")" and open_at:
            open_at.pop()
    return bool(open_at) and open_at[0] < pos


def enclosing(bounds: Sequence[tuple[int, int]], pos: int) -> tuple[int, int]:
    """The span of `bounds` that contains `pos`; (pos, pos) when none does.

    `bounds` are sentence spans in order (as `sentence_bounds` returns them), so this is a binary
    search: the checks ask it for every value of a deliverable, and a linear scan made the whole
    check quadratic in the deliverable's length.
    """
    i = bisect.bisect_right(bounds, pos, key=lambda b: b[0]) - 1
    if i >= 0:
        s, e = bounds[i]
        if s <= pos < e:
            return s, e
    return pos, pos


class Spans:
    """A fixed set of spans that answers "does [start, end) overlap any of them?" in O(log n).

    Why: the checks ask it once per value, quote or reference of a deliverable; scanning every
    taken span each time grew with the square of the deliverable's length.
    """

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        ordered = sorted(spans)
        self._starts = [s for s, _ in ordered]
        self._max_end: list[int] = []  # the largest end among the spans up to each position
        top = -1
        for _, e in ordered:
            top = max(top, e)
            self._max_end.append(top)
        self._spans = ordered

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)

    def overlaps(self, start: int, end: int) -> bool:
        """Whether [start, end) overlaps one of the spans (every span starting before `end` is a
        candidate; one of them reaches past `start` iff the largest end among them does)."""
        n = bisect.bisect_left(self._starts, end)
        return n > 0 and self._max_end[n - 1] > start


def overlaps(start: int, end: int, taken: Iterable[tuple[int, int]]) -> bool:
    """Whether the span [start, end) overlaps any of the `taken` spans (`Spans` answers at once)."""
    if isinstance(taken, Spans):
        return taken.overlaps(start, end)
    return any(start < e and s < end for s, e in taken)


# A double-quoted string (a defined term, a quoted clause): read by the amendment and matter rules.
QUOTED_TEXT = re.compile(r"[\"“]([^\"”]{3,200})[\"”]")
