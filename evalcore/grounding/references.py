"""The reference check: a cited section, exhibit or document must exist in the sources.

"Section 14.3", "Clause 9(b)", "Article IV", "Exhibit D", "Schedule 2" must name a label the
sources contain (`labels.LabelIndex`); a named document ("the Side Letter dated ...", "the First
Amendment") must be a document the sources mention or include. Otherwise ``fabricated_source``.
Labels in a sentence of general legal knowledge (`legal`) belong to the law, not the matter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from evalcore.grounding.findings import GroundingFinding, location
from evalcore.grounding.index import SourceIndex
from evalcore.grounding.labels import DISTINCTIVE_DOC, DOC_REF_RE, REF_RE, ref_kind, ref_labels
from evalcore.grounding.legal import authority_context
from evalcore.grounding.normalise import normalise_quote_text
from evalcore.grounding.text import enclosing, in_unclosed_parenthesis, overlaps


def reference_findings(
    name: str, text: str, bounds: Sequence[tuple[int, int]], index: SourceIndex, skip: Iterable[tuple[int, int]]
) -> tuple[list[GroundingFinding], list[tuple[int, int]]]:
    """Findings for labels and named documents the sources do not have, and the span of every
    reference in the text (labels, not figures, for the value check)."""
    findings: list[GroundingFinding] = []
    ref_spans: list[tuple[int, int]] = []
    for m in REF_RE.finditer(text):
        labels = ref_labels(m)
        ref_end = m.start("labels") + labels[-1].end() if labels else m.end()
        ref_spans.append((m.start(), ref_end))
        if overlaps(m.start(), ref_end, skip):
            continue
        if cut_citation(text, m.start(), ref_end):
            continue
        s, e = enclosing(bounds, m.start())
        sentence = text[s:e]
        after = text[m.end() : min(e, m.end() + 70)]
        before = text[max(s, m.start() - 30) : m.start()]
        if authority_context(sentence):
            # A statute/case sentence: the label belongs to law, unless tied to "this Agreement".
            if not re.match(r"\s*(?:of|in|under)\s+(?:this|the)\s+(?:[A-Z][a-z]+\s+){0,3}(?:Agreement|Lease|Contract|PSA|APA|Note)\b", after):
                continue
        if re.search(r"U\.\s?S\.\s?C\.?\s*$|C\.\s?F\.\s?R\.?\s*$|\b(?:UCC|IRC|Code|Act|Stat\.|Law)\s*$", before):
            continue
        if m.group("kw").startswith("§") and not index.labels.section_sign:
            continue  # sources that never write "§" are not what a "§ 15.51" cites: that is law
        kind = ref_kind(m.group("kw"))
        missing = [lm.group() for lm in labels if not index.labels.has(kind, lm.group())]
        if kind == "article" and m.group("kw").casefold().startswith("part"):
            missing = [lab for lab in missing if not index.labels.has("section", lab)]
        if not missing:
            continue
        findings.append(
            GroundingFinding(
                check="reference",
                deliverable=name,
                span=text[m.start() : ref_end],
                start=m.start(),
                end=ref_end,
                location=location(text, m.start()),
                category="fabricated_source",
                evidence_document=None,
                evidence_passage=None,
                explanation=(
                    f"{m.group('kw')} {', '.join(missing)} does not exist in any source document "
                    "(no such heading or label in the sources)."
                ),
                confidence=0.8,
                suggested_materiality="material",
            )
        )
    for m in DOC_REF_RE.finditer(text):
        if overlaps(m.start(), m.end(), skip):
            continue
        doc = m.group("doc")
        if len(doc.split()) < 2 or not (DISTINCTIVE_DOC.search(doc) or m.group("dated")):
            continue
        s, e = enclosing(bounds, m.start())
        if authority_context(text[s:e]):
            continue
        doc_norm = normalise_quote_text(doc)
        if doc_norm in index.all_norm or doc_norm in index.labels.names:
            continue
        findings.append(
            GroundingFinding(
                check="reference",
                deliverable=name,
                span=m.group("doc"),
                start=m.start("doc"),
                end=m.end("doc"),
                location=location(text, m.start()),
                category="fabricated_source",
                evidence_document=None,
                evidence_passage=None,
                explanation=f"No source document is or mentions a {doc!r}.",
                confidence=0.7,
                suggested_materiality="material",
            )
        )
    return findings, ref_spans


def cut_citation(text: str, start: int, end: int) -> bool:
    """Whether the reference at [start, end) is a citation the text was cut in: the last thing in
    the text, with at most a full stop after it, inside a parenthesis never closed ("... 30 days
    (Section 7." cut from "(Section 7.2)"). Its label may be the head of a longer one, so it is
    not checked: the claim it belongs to is checked where the whole text is (issue 43: such a
    span was confirmed as citing a "Section 7" that does not exist)."""
    return not text[end:].strip(" \t\n.") and in_unclosed_parenthesis(text, start)


def contains_reference(index: SourceIndex, reference: str) -> bool:
    """Whether every label of a reference ("Sections 4.2 and 4.3") exists in the indexed texts."""
    m = REF_RE.search(reference)
    if m is None:
        return False
    kind = ref_kind(m.group("kw"))
    return all(index.labels.has(kind, lm.group()) for lm in ref_labels(m))
