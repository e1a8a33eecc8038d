"""What a grounding finding is: one unsupported statement, where it is, and its evidence.

Why a module of its own: every check (quotes, numbers and dates, references, parties) produces
the same `GroundingFinding`, and the audit, the offline vendor and the benchmark read it; keeping
the model apart from the rules keeps the checks independent of one another.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from evalcore.schema import Category, Materiality

CheckName = Literal["quote", "number", "date", "reference", "party"]


class GroundingFinding(BaseModel):
    """One thing a deliverable states that the sources do not support, with its evidence."""

    check: CheckName = Field(description="Which check found it.")
    deliverable: str = Field(description="Name of the deliverable it is in.")
    span: str = Field(description="Exact substring of the deliverable text.")
    start: int = Field(description="Character offset of `span` in the deliverable text.")
    end: int = Field(description="End offset (exclusive) of `span`.")
    location: str = Field(description='Where it is, e.g. "paragraph 3, line 12".')
    category: Category
    evidence_document: str | None = Field(default=None, description="Source document of the evidence.")
    evidence_passage: str | None = Field(
        default=None, description="Source passage contradicted or misquoted; None when absent."
    )
    evidence_page: str | None = Field(
        default=None, description='Page of the passage in its document ("Page 3", "Sheet: Rent roll"), if paged.'
    )
    explanation: str
    confidence: float = Field(ge=0.0, le=1.0)
    suggested_materiality: Materiality


def location(text: str, pos: int) -> str:
    """Where `pos` is in `text`, for a reader: "paragraph 3, line 12" (paragraphs end at blank lines)."""
    para = len(re.findall(r"\n[ \t]*\n(?=[ \t]*\S)", text[:pos])) + 1
    line = text.count("\n", 0, pos) + 1
    return f"paragraph {para}, line {line}"
