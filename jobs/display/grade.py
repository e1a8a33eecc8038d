"""One grading in the terminal: every verdict per judge with its reasoning, every flag with its evidence, the scores."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from evalcore.grading.grade import GradeResult
from jobs.display.tables import Block, Cell, Column, TableSpec, emit


def flags_table() -> TableSpec:
    """The empty table of a grading's flags (`tribunal grade` and `tribunal show` fill it)."""
    return TableSpec([Column("#", "number", ("flag_index",)), Column("span", "text"), Column("category", "id"),
                      Column("evidence", "text"), Column("stage 2", "text"), Column("rationale", "text")],
                     title="Stage B: hallucination flags (stage 1 as raised, stage 2 decision)", show_lines=True, key=0)


def render_grade(result: GradeResult, console: Console) -> None:
    """Every verdict per judge with its reasoning, every flag with its evidence, then the scores.

    Laid out by `jobs.display.tables`: ids whole at any width, prose wrapped at spaces, stacked (one
    block per verdict or flag) when the console is too narrow for the columns.
    """
    verdicts = TableSpec([Column("criterion", "id"), Column("judge", "id"), Column("verdict", "id"),
                          Column("reasoning", "text")], title="Stage A: rubric verdicts", show_lines=True)
    style = {"pass": "green", "fail": "red", "abstain": "yellow"}
    for v in sorted(result.verdicts, key=lambda r: (r.criterion_id, r.judge)):
        verdicts.add_row(  # ids and the judge's reasoning are text, never markup
            v.criterion_id, v.judge, Cell(Text(v.verdict, style=style[v.verdict]), v.verdict),
            v.reasoning or v.abstain_reason or "",
        )
    blocks: list[Block] = [verdicts]
    sub = result.submission
    if not sub.audited:
        blocks.append(Text("Stage B: not audited (task score 0, or incomplete); use --audit always to debug.", style="dim"))
    elif not result.flags:
        blocks.append(Text("Stage B: no flags raised.", style="green"))
    else:
        flags = flags_table()
        for f in result.flags:
            evidence = evidence_text(f.evidence_document, f.evidence_page, f.evidence_passage)
            decision = f.status + (f" / {f.materiality}" if f.materiality else "")
            flags.add_row(Cell(str(f.flag_index), f.flag_index), f.span, f.category, evidence, decision, f.rationale)
        blocks.append(flags)
    blocks.append(scores_table(sub.model_dump()))
    emit(console, blocks)


def _share(value: float) -> str:
    return f"{100 * value:.1f}%"


def score_text(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


SCORE_ROWS: list[tuple[str, Callable[[Any], str]]] = [
    ("status", str),
    ("status_reason", str),
    ("task_score", score_text),
    ("all_pass_judges", str),
    ("criterion_pass_rate", _share),
    ("near_pass_1", _share),
    ("near_pass_2", _share),
    ("audited", lambda v: "yes" if v else "no"),
    ("material_flags", str),
    ("minor_flags", str),
    ("gated", lambda v: "yes" if v else "no"),
    ("hc_score", score_text),
    ("cost_usd", lambda v: f"${v:,.4f}"),
]
"""The scores of one grading as a person reads them: each with its own form (a share as a percent, a
score to 3 decimals, a flag as yes/no, cost in dollars), never a Python repr. A value that is None is
shown as "—", except `status_reason`, shown only when there is one."""


def scores_table(row: Mapping[str, Any], title: str = "Scores") -> TableSpec:
    """A grading's scores (`SCORE_ROWS`) from a submission row (a `Submission` dumped, or a row of
    the run's submissions table); the csv value of each is the raw value."""
    scores = TableSpec([Column("score", "id"), Column("value", "text")], title=title, show_header=False)
    for key, form in SCORE_ROWS:
        if key not in row:
            continue
        value = row[key]
        if value is None and key == "status_reason":
            continue
        scores.add_row(key, Cell("—" if value is None else form(value), value))
    return scores


def evidence_text(document: str | None, page: str | None, passage: str | None) -> str:
    """A flag's evidence as one reads it: the document, its page, the passage (or that there is none)."""
    if not document:
        return "(no support in the sources)"
    return f"{document}{f', {page}' if page else ''}: {passage}"
