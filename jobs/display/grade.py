"""One grading in the terminal: every verdict per judge with its reasoning, every flag with its evidence, the scores."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from evalcore.grading.grade import GradeResult
from evalcore.tables import Block, Cell, Column, TableSpec, emit


def render_grade(result: GradeResult, console: Console) -> None:
    """Every verdict per judge with its reasoning, every flag with its evidence, then the scores.

    Laid out by `evalcore.tables`: ids whole at any width, prose wrapped at spaces, stacked (one
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
        flags = TableSpec([Column("#", "number", ("flag_index",)), Column("span", "text"), Column("category", "id"),
                           Column("evidence", "text"), Column("stage 2", "text"), Column("rationale", "text")],
                          title="Stage B: hallucination flags (stage 1 as raised, stage 2 decision)", show_lines=True,
                          key=0)
        for f in result.flags:
            page = f", {f.evidence_page}" if f.evidence_page else ""
            evidence = f"{f.evidence_document}{page}: {f.evidence_passage}" if f.evidence_document else "(no support in the sources)"
            decision = f.status + (f" / {f.materiality}" if f.materiality else "")
            flags.add_row(Cell(str(f.flag_index), f.flag_index), f.span, f.category, evidence, decision, f.rationale)
        blocks.append(flags)
    scores = TableSpec([Column("score", "id"), Column("value", "text")], title="Scores", show_header=False)
    shown = sub.model_dump(include={"status", "status_reason", "task_score", "all_pass_judges", "criterion_pass_rate",
                                    "near_pass_1", "near_pass_2", "audited", "material_flags", "minor_flags", "gated",
                                    "hc_score", "cost_usd"})
    for key, value in shown.items():
        scores.add_row(key, str(value))
    blocks.append(scores)
    emit(console, blocks)
