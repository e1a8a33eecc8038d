"""The check: every quote, value, reference and party of a deliverable, against the sources.

`check` indexes the sources once, decides which documents belong to another matter, and runs the
checks over each deliverable (`_check_deliverable`): quotes first (a value inside a quotation the
quote check already flagged is not flagged again - one finding per claim), then references and
parties, then values in two passes - what the sources say about each value (`claims`), then
whether a value no source states is computed from supported ones (`derived`).

Also the two views the audit needs: `as_candidates` (findings as the Stage 1 candidate flags)
and `relevant_passages` (what the sources say about a flag, for Stage 2).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.benchmark.pages import locate_page
from evalcore.grounding.claims import (
    HISTORICAL,
    PRESENT,
    Claim,
    Reason,
    as_of_day,
    is_operand,
    misattributed_finding,
    own_date,
    own_term,
    rejected,
    source_occurrences,
    trivial_number,
    value_finding,
    why_not,
)
from evalcore.grounding.derived import derivable, local_values
from evalcore.grounding.findings import GroundingFinding
from evalcore.grounding.index import SourceIndex, SourceValue
from evalcore.grounding.legal import authority_context
from evalcore.grounding.matter import off_matter
from evalcore.grounding.parties import party_findings
from evalcore.grounding.quotes import MIN_DOUBLE_QUOTE_WORDS, best_alignment, find_quotes, quote_finding
from evalcore.grounding.references import reference_findings
from evalcore.grounding.sources import index_sources
from evalcore.grounding.text import Spans, enclosing, keywords, sentence_bounds, tokens_with_offsets
from evalcore.grounding.values import Value, duration_direction, find_values, value_contexts, value_key
from evalcore.schema import SourceDocument


def _check_deliverable(name: str, text: str, index: SourceIndex, off: frozenset[str] = frozenset()) -> list[GroundingFinding]:
    """All findings of one deliverable, in order of position (the order of the checks: see the
    module docstring)."""
    if not text.strip():
        return []
    bounds = sentence_bounds(text)
    findings: list[GroundingFinding] = []
    flagged_quotes: list[tuple[int, int]] = []
    for q in find_quotes(text):
        # A quotation of a statute or case is legal knowledge; judge by the words around the
        # quote (a quoted contract clause that itself names an Act is still checked).
        s, e = enclosing(bounds, q.start)
        s, e = min(s, q.start), max(e, q.end)
        if authority_context(text[s : q.start] + " " + text[q.end : e]):
            continue
        f = quote_finding(q, name, text, index)
        if f is not None:
            findings.append(f)
            flagged_quotes.append((q.start, q.end))
    quoted = Spans(flagged_quotes)
    ref_findings, ref_list = reference_findings(name, text, bounds, index, quoted)
    ref_spans = Spans(ref_list)
    findings.extend(ref_findings)
    findings.extend(party_findings(name, text, bounds, index, quoted))
    values = find_values(text)
    starts = [v.start for v in values]  # in order: a sentence's values are one bisect away
    as_of = as_of_day(text, values, index, off)
    # Section numbers are labels, not values: a claim's context runs past them.
    figures = [v for v in values if not ref_spans.overlaps(v.start, v.end)]
    contexts = dict(zip((v.start for v in figures), value_contexts(text, figures, bounds), strict=True))
    checked: list[tuple[Value, frozenset[str], Claim]] = []
    for v in figures:
        ctx = contexts[v.start]
        if quoted.overlaps(v.start, v.end):
            continue
        s, e = enclosing(bounds, v.start)
        sentence = text[s:e]
        if trivial_number(v, text, sentence):
            continue
        if authority_context(sentence):
            continue
        if v.kind in ("date", "month", "monthday") and own_date(v, text, sentence):
            continue
        if own_term(v, text, sentence):
            continue
        same_sentence = values[bisect.bisect_left(starts, s) : bisect.bisect_left(starts, e)]
        keys = frozenset(value_key(u) for u in same_sentence if u is not v)
        claim = Claim(v, sentence, ctx, duration_direction(v, text), bool(PRESENT.search(sentence)),
                       bool(HISTORICAL.search(sentence)), keys)
        checked.append((v, ctx, claim))
    # Pass 1: what the sources say about each value.
    status: dict[int, tuple[str, list[Reason]]] = {}
    for v, _ctx, claim in checked:
        occurrences = source_occurrences(v, index)
        if not occurrences:
            status[v.start] = ("missing", [])
            continue
        reasons: list[Reason] = []
        accepted: list[SourceValue] = []
        for sv in occurrences:
            r = why_not(claim, sv, index, off, as_of)
            if r is None:
                accepted.append(sv)
            else:
                reasons.append(r)
        status[v.start] = ("misattributed", reasons) if rejected(claim, accepted, reasons, index) else ("ok", [])

    def usable(u: Value) -> bool:
        # A figure the sources state in another sense cannot ground a computation; one they do
        # not state at all may (a consistent "10% = $9,500" of a $95,000 fee).
        return is_operand(u, text, ref_spans) and status.get(u.start, ("ok", []))[0] != "misattributed"

    # Pass 2: a value no source states may be computed from supported ones.
    pending: list[tuple[Value, frozenset[str], Claim, list[Reason], Value | None]] = []
    derived: set[tuple[str, Any]] = set()
    consumed: set[int] = set()
    for v, ctx, claim in checked:
        st, reasons = status[v.start]
        if st == "ok":
            continue
        if st == "misattributed":
            pending.append((v, ctx, claim, reasons, None))
            continue
        local = local_values(values, v, bounds)
        good = [u for u in local if usable(u)]
        if derivable(v, good, index, text):
            derived.add(value_key(v))
            continue
        # Computed from a figure of the same sentence that the sources state only in another
        # sense (a superseded notice period, say): one claim, reported once.
        s, e = enclosing(bounds, v.start)
        via = next(
            (u for u in local if s <= u.start < e and status.get(u.start, ("", []))[0] == "misattributed"
             and is_operand(u, text, ref_spans) and derivable(v, [*good, u], index, text)),
            None,
        )
        if via is not None:
            consumed.add(via.start)
            pending.append((v, ctx, claim, status[via.start][1], via))
        else:
            pending.append((v, ctx, claim, [], None))
    # A figure the deliverable derives once ("20 days after March 16 = April 5") may be repeated
    # without its working elsewhere in the same deliverable.
    for v, ctx, claim, reasons, via in pending:
        if v.start in consumed:
            continue
        if reasons:
            findings.append(misattributed_finding(v, claim, reasons, name, text, index, off, via))
        elif value_key(v) not in derived:
            findings.append(value_finding(v, ctx, name, text, index, off))
    findings.sort(key=lambda f: f.start)
    return findings


def check(
    sources: Sequence[SourceDocument] | Mapping[str, str],
    deliverables: Mapping[str, str],
    index: SourceIndex | None = None,
) -> list[GroundingFinding]:
    """Every quote, value and reference in the deliverables that the sources do not support.

    `sources` are the task's documents (or a name -> text mapping); `deliverables` maps each
    deliverable's name to its text. Findings are ordered by deliverable name, then position.
    `index` is the sources' index when the caller has it (a sweep builds one per task and hands
    it to every shard of the task); else it is built here (`index_sources`).
    """
    index = index if index is not None else index_sources(sources)
    off = off_matter(index, deliverables)
    out: list[GroundingFinding] = []
    for name in sorted(deliverables):
        out.extend(_with_page(f, index) for f in _check_deliverable(name, deliverables[name], index, off))
    return out


def _with_page(finding: GroundingFinding, index: SourceIndex) -> GroundingFinding:
    """The finding with the page its evidence is on (the heading above the passage in its document)."""
    if finding.evidence_document is None or finding.evidence_page is not None:
        return finding
    page = locate_page(index.texts.get(finding.evidence_document, ""), finding.evidence_passage)
    return finding.model_copy(update={"evidence_page": page}) if page else finding


def relevant_passages(
    sources: Sequence[SourceDocument] | Mapping[str, str], claim: str, k: int = 2, index: SourceIndex | None = None
) -> list[tuple[str, str]]:
    """The `k` source passages most relevant to a claim: (document name, passage text).

    Used by Stage 2 to put each flag next to what the sources say about it. A quotation's closest
    source window ranks first; then passages sharing a normalised value with the claim (same
    amount, date, percentage); then passages sharing rare keywords (IDF-weighted). `index`: as
    for `check`.
    """
    index = index if index is not None else index_sources(sources)
    if not index.passages or k <= 0:
        return []
    scored: dict[int, float] = {}
    claim_tokens = tokens_with_offsets(claim)[0]
    if len(claim_tokens) >= MIN_DOUBLE_QUOTE_WORDS:
        al = best_alignment(claim_tokens, index)
        if al is not None and al.similarity >= 0.5:
            for i, p in enumerate(index.passages):
                if p.doc == al.doc and p.start <= al.start < p.end:
                    scored[i] = scored.get(i, 0.0) + 100.0 * al.similarity
    # Only passages sharing a keyword or a value with the claim can score (inverted indexes).
    claim_kw = set(keywords(claim))
    for t in claim_kw:
        for i in index.by_keyword.get(t, ()):
            scored[i] = scored.get(i, 0.0) + index.idf.get(t, 1.0)
    for cv in find_values(claim):
        for i in index.by_value.get(value_key(cv), ()):
            scored[i] = scored.get(i, 0.0) + 20.0
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(index.passages[i].doc, index.passages[i].text) for i, _score in ranked[:k]]


def as_candidates(findings: Sequence[GroundingFinding]) -> list[dict[str, Any]]:
    """Findings as JSON-able candidate flags for the Stage 1 prompt (the auditor decides)."""
    return [
        {
            "check": f.check,
            "deliverable": f.deliverable,
            "span": f.span,
            "location": f.location,
            "category": f.category,
            "evidence_document": f.evidence_document,
            "evidence_passage": f.evidence_passage,
            "evidence_page": f.evidence_page,
            "explanation": f.explanation,
            "confidence": f.confidence,
            "suggested_materiality": f.suggested_materiality,
        }
        for f in findings
    ]
