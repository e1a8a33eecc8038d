"""Tasks without source documents: graded as usual, audited against their instructions alone.

Why: many real legal tasks give no files ("draft a demand letter for a client who ..."); leaving
them out would drop a large share of a real benchmark. The panel grades them like any task. The
audit needs a closed universe of sources, and the only one such a task has is its instructions:
they become the one source (named `SOURCE_NAME`), so a work product that contradicts or misquotes
a fact the instructions state (a party, a date, an amount) is flagged. What the instructions do
not mention is NOT a hallucination there: drafting a document means supplying specifics, and
general legal knowledge (statutes, cases, doctrine) stays out of scope as everywhere. So of the
grounding findings only those with evidence in the instructions are in scope (`in_scope`), and
the Stage 1 prompt states the same rule to the auditor.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from evalcore.grounding.findings import GroundingFinding
from evalcore.schema import SourceDocument, Task, sha256_text

SOURCE_NAME = "task instructions"
"""Name of the one source of a task without documents (no real document can have it: no extension)."""

_F = TypeVar("_F", bound=GroundingFinding)


def audit_sources(task: Task) -> list[SourceDocument]:
    """What the audit checks a submission against: the task's documents, else its instructions."""
    if task.documents:
        return list(task.documents)
    return [
        SourceDocument(
            name=SOURCE_NAME,
            kind="instructions",
            sha256=sha256_text(task.instructions),
            text=task.instructions,
            size_bytes=len(task.instructions.encode()),
        )
    ]


def is_instructions_only(source_names: Iterable[str]) -> bool:
    """True when the sources are exactly a task's instructions (the task had no documents)."""
    return list(source_names) == [SOURCE_NAME]


def in_scope(findings: Sequence[_F]) -> list[_F]:
    """For an instructions-only audit: the findings whose evidence is in the instructions."""
    return [f for f in findings if f.evidence_passage is not None]
