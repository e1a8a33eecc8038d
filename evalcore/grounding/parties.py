"""The party check: a company the deliverable names must be named in the sources.

A company named with a corporate suffix ("Harborview Holdings LLC") must be named in the sources
(suffix style ignored). A name sharing a word with a source party is a ``contradiction`` (wrong
party) with that passage as evidence; otherwise ``fabricated_source``. A party to a cited case
is legal knowledge, not a party to the matter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from evalcore.grounding.findings import GroundingFinding, location
from evalcore.grounding.index import Passage, SourceIndex
from evalcore.grounding.legal import authority_context
from evalcore.grounding.normalise import normalise_quote_text
from evalcore.grounding.text import STOPWORDS, enclosing, overlaps, stem

_ENTITY_SUFFIX = (
    r"(?:L\.L\.C\.|LLC|L\.L\.P\.|LLP|L\.P\.|LP|Inc\.?|Incorporated|Corp\.?|Corporation|Ltd\.?|Limited|"
    r"plc|PLC|GmbH|AG|S\.A\.|N\.A\.|B\.V\.|Pty\.? Ltd\.?|Co\.)"
)
_ENTITY_RE = re.compile(
    r"(?P<name>(?:[A-Z][\w&'.-]*[ \t]+(?:(?:of|&|de|the)[ \t]+)?){0,5}[A-Z][\w&'.-]*?),?[ \t]+(?P<suffix>"
    + _ENTITY_SUFFIX
    + r")(?![\w])"
)
_LEADING_NON_NAME = frozenset(
    {"under", "per", "see", "between", "both", "neither", "either", "because", "although", "since", "whereas",
     "accordingly", "however", "therefore", "thus", "also", "note", "notably", "here", "there", "pursuant"}
)


def _entity_core(name: str) -> list[str]:
    """The distinctive words of an entity name: leading sentence words ("Under", "The") dropped."""
    words = normalise_quote_text(name).split()
    while words and (words[0] in STOPWORDS or words[0] in _LEADING_NON_NAME):
        words = words[1:]
    return words


def _known_entity(core: Sequence[str], index: SourceIndex) -> bool:
    """Whether the sources name this entity: its words, or its last >= 2 words ("Tenant Nimbus
    Analytics" is "Nimbus Analytics")."""
    for i in range(len(core)):
        tail = core[i:]
        if len(tail) < min(2, len(core)):
            break
        if " ".join(tail) in index.all_norm:
            return True
    return False


def party_findings(
    name: str, text: str, bounds: Sequence[tuple[int, int]], index: SourceIndex, skip: Iterable[tuple[int, int]]
) -> list[GroundingFinding]:
    """Companies named with a corporate suffix ("Harborview Holdings LLC") that no source names.

    The suffix is not compared ("L.P." vs "LP"), only the name's words. A name sharing a
    distinctive word with a source entity is a contradiction (a wrong party), with that passage
    as evidence; otherwise it is an invented party.
    """
    out: list[GroundingFinding] = []
    for m in _ENTITY_RE.finditer(text):
        if overlaps(m.start(), m.end(), skip):
            continue
        core = _entity_core(m.group("name"))
        if not core or _known_entity(core, index):
            continue
        s, e = enclosing(bounds, m.start())
        if authority_context(text[s:e]):
            continue  # a party to a cited case, not to the matter
        distinctive = [stem(w) for w in core if w not in STOPWORDS and len(w) > 2 and index.idf.get(stem(w), 0.0) > 0.0]
        passage: Passage | None = None
        for p in index.passages:
            if any(w in p.keywords for w in distinctive) and re.search(_ENTITY_SUFFIX, p.text):
                passage = p
                break
        start = m.start("name") + (len(m.group("name")) - len(m.group("name").lstrip()))
        words_dropped = len(normalise_quote_text(m.group("name")).split()) - len(core)
        for _ in range(words_dropped):
            nxt = re.search(r"\s+", text[start : m.end()])
            if nxt is None:
                break
            start += nxt.end()
        out.append(
            GroundingFinding(
                check="party",
                deliverable=name,
                span=text[start : m.end()],
                start=start,
                end=m.end(),
                location=location(text, start),
                category="contradiction" if passage is not None else "fabricated_source",
                evidence_document=passage.doc if passage is not None else None,
                evidence_passage=passage.text if passage is not None else None,
                explanation=(
                    f"No source names a party {' '.join(core)!r}"
                    + ("; a source names a similar party." if passage is not None else ".")
                ),
                confidence=0.75,
                suggested_materiality="material",
            )
        )
    return out
