"""Deterministic grounding checks: what a deliverable states that the sources do not contain.

Why this exists: the hallucination audit (docs/METHODOLOGY.md, Stage B) is done by an LLM auditor, but
the cheapest and most reliable evidence of a hallucination is mechanical: a quotation that is not
in the sources, an amount or date that appears nowhere in them, a "Section 14.3" the contract does
not have. These checks run twice: their findings are the *candidate flags* given to the Stage 1
auditor (who decides), and they are the whole audit of the offline vendor (`doubles.offline_judge`).

Four checks, each finding (`findings.GroundingFinding`) carrying its evidence - each module's
docstring states its rules in full:

* **quote** (`quotes`) - a quotation must occur in a source after normalisation; a close match is
  a misquote (``contradiction``), none is ``fabricated_source``.
* **number / date** (`claims`) - amounts, percentages, dates and numbers with a unit must occur in
  the sources as normalised values (`normalise`, `values`), or be one typed arithmetic step from
  supported figures (`derived`); a stated value is still no support when it comes from another
  deal (`matter`), was replaced by an amendment (`amendments`), is a duration running the other
  way, or is a schedule row not in force.
* **reference** (`references`, syntax in `labels`) - a cited section, exhibit or named document
  must exist in the sources.
* **party** (`parties`) - a company named with a corporate suffix must be named in the sources.

What is deliberately NOT flagged (documented decisions, with the module holding each rule):

* General legal knowledge (`legal`): anything in a sentence that cites a statute, regulation,
  code, rule, restatement or case - references, numbers and quotes alike.
* Trivial numbers, identifiers and file names, the deliverable's own dateline, the deadlines and
  time limits it sets for its reader (`claims`).
* Short quoted strings and defined terms (`quotes`).
* Values inside a quotation that the quote check already flagged: one finding per claim (`check`).

Modules, from the bottom up (each imports only modules above it):

=============  ==============================================================================
`findings`     `GroundingFinding`, `CheckName`, `location`
`text`         tokens, stems and keywords, sentence bounds, spans
`normalise`    `normalise_quote_text`, `words_to_number`, amounts, percentages, dates
`legal`        the general-legal-knowledge context (`authority_context`)
`values`       `Value`, `find_values`, duration direction, value keys and contexts
`labels`       reference syntax, the labels a set of texts contains, named documents
`index`        `SourceIndex` and its parts (passages, table rows, source values, changes)
`amendments`   which source values a later document replaced
`matter`       which source documents are about another deal
`derived`      figures one arithmetic step from the record; per-step rates of the sources
`quotes`       the quote check, token alignment, `contains_text`
`references`   the reference check, `contains_reference`
`parties`      the party check
`claims`       the number/date check: which values are claims and what supports them
`sources`      `index_sources` (tables, sections, dates)
`check`        `check`, `relevant_passages`, `as_candidates`
=============  ==============================================================================

Everything here is a pure function of its inputs: same sources and deliverables, same findings.
"""

from evalcore.grounding.check import as_candidates, check, relevant_passages
from evalcore.grounding.claims import CONTRADICTION_CONTEXT_SCORE, contains_value
from evalcore.grounding.findings import CheckName, GroundingFinding
from evalcore.grounding.index import SourceIndex
from evalcore.grounding.labels import find_references
from evalcore.grounding.normalise import (
    normalise_amount,
    normalise_date,
    normalise_percent,
    normalise_quote_text,
    words_to_number,
)
from evalcore.grounding.quotes import (
    MIN_DOUBLE_QUOTE_WORDS,
    MIN_SINGLE_QUOTE_WORDS,
    MISQUOTE_SIMILARITY,
    contains_text,
)
from evalcore.grounding.references import contains_reference
from evalcore.grounding.sources import index_sources
from evalcore.grounding.text import keywords, stem
from evalcore.grounding.values import Value, ValueKind, find_values

__all__ = [
    "CONTRADICTION_CONTEXT_SCORE",
    "MIN_DOUBLE_QUOTE_WORDS",
    "MIN_SINGLE_QUOTE_WORDS",
    "MISQUOTE_SIMILARITY",
    "CheckName",
    "GroundingFinding",
    "SourceIndex",
    "Value",
    "ValueKind",
    "as_candidates",
    "check",
    "contains_reference",
    "contains_text",
    "contains_value",
    "find_references",
    "find_values",
    "index_sources",
    "keywords",
    "normalise_amount",
    "normalise_date",
    "normalise_percent",
    "normalise_quote_text",
    "relevant_passages",
    "stem",
    "words_to_number",
]
