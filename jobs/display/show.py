"""`tribunal show` in the terminal: one stored grading of a run, with the experts' decisions marked.

The layout of `tribunal grade` (`jobs.display.grade`): verdicts per criterion and judge with
their reasoning, flags with Stage 1 as raised, Stage 2's decision and the evidence with its page,
the scores; then the calls with their cost. A decision in force is shown where it applies
("EXPERT: fail → pass", who, when, why), and the scores are shown as graded and, when decisions
apply, with them in force (what the leaderboard counts).
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from jobs.display.grade import evidence_text, flags_table, scores_table
from jobs.display.tables import Block, Cell, Column, TableFormat, TableSpec, emit
from jobs.per_run.show import DecisionNote, ShownSubmission

EXPERT = "EXPERT"
"""The mark of an expert's decision in force (grep-able, and plain in csv and markdown)."""


def _note(d: DecisionNote) -> str:
    return f"{d.reviewer}, {d.decided_at}: {d.reason}"


def show_blocks(s: ShownSubmission) -> list[Block]:
    """The submission's grading as `tribunal show` prints it (module doc)."""
    blocks: list[Block] = [Text.assemble(
        (f"{s.system} :: {s.task_id}", "bold"), f" in run {s.run_id} ({s.run_uri}): grading {s.grading_id}"
        + (f" (the latest of {s.gradings})" if s.gradings > 1 else "") + f", {s.scores.get('status')}")]
    if not s.adjudications:
        blocks.append(Text("Raw view: the experts' decisions are not applied (--no-adjudications).", style="dim"))
    elif s.decisions_in_force:
        blocks.append(Text(f"{s.decisions_in_force} expert decision(s) in force on this submission, marked {EXPERT}.",
                           style="yellow"))
    verdicts = TableSpec([Column("criterion", "id"), Column("judge", "id"), Column("verdict", "id"),
                          Column("reasoning", "text")], title="Stage A: rubric verdicts", show_lines=True)
    style = {"pass": "green", "fail": "red", "abstain": "yellow"}
    for v in s.verdicts:
        shown = v.verdict if v.decision is None else f"{v.verdict} → {EXPERT} {v.decision.decision}"
        reasoning = v.reasoning or v.abstain_reason or ""
        if v.decision is not None:
            reasoning += f" [{EXPERT}: {_note(v.decision)}]"
        verdicts.add_row(v.criterion_id, v.judge, Cell(Text(shown, style=style.get(v.verdict, "")), shown), reasoning)
    blocks.append(verdicts)
    for cid, d in sorted(s.criterion_decisions.items()):
        blocks.append(f"{EXPERT}: criterion {cid} decided {d.decision} for the whole panel ({_note(d)})")
    if not s.scores.get("audited"):
        blocks.append(Text("Stage B: not audited (task score 0, or incomplete).", style="dim"))
    elif not s.flags:
        blocks.append(Text("Stage B: no flags raised.", style="green"))
    else:
        flags = flags_table()
        for f in s.flags:
            decision = f.status + (f" / {f.materiality}" if f.materiality else "")
            if f.status == "merged" and f.merged_into is not None:
                decision += f" into #{f.merged_into}"
            if f.decision is not None:
                expert = f.decision.decision + (f" ({f.decision.materiality})" if f.decision.materiality else "")
                decision += f"; {EXPERT} {expert}: counts as {f.counts_as or 'nothing'} ({_note(f.decision)})"
            flags.add_row(Cell(str(f.flag_index), f.flag_index), f.span, f.category,
                          evidence_text(f.evidence_document, f.evidence_page, f.evidence_passage), decision, f.rationale)
        blocks.append(flags)
    blocks.append(scores_table(s.scores, title="Scores as graded"))
    if s.scores_in_force is not None:
        blocks.append(scores_table(s.scores_in_force, title=f"Scores with the decisions in force ({EXPERT})"))
    blocks += [Text.assemble(("note: ", "yellow"), line) for line in s.unmatched]
    calls = TableSpec([Column("vendor", "id"), Column("purpose", "id"), Column("criterion", "id", ("criterion_id",)),
                       Column("outcome", "id"), Column("tokens in/out", "number", ("input_tokens", "output_tokens")),
                       Column("cost", "number", ("cost_usd",))],
                      title=f"Calls: {len(s.calls)}, ${s.paid_usd:,.4f} paid (reused calls cost nothing here)")
    for c in s.calls:
        outcome = c.outcome if c.kind in ("paid", "failed", "truncated", "lost") else f"{c.outcome} ({c.kind})"
        calls.add_row(c.vendor, c.purpose, Cell(c.criterion_id or "—", c.criterion_id), outcome,
                      Cell(f"{c.input_tokens:,}/{c.output_tokens:,}", (c.input_tokens, c.output_tokens)),
                      Cell(f"${c.cost_usd:,.4f}", c.cost_usd))
    blocks.append(calls)
    return blocks


def render_show(s: ShownSubmission, console: Console | None = None, fmt: TableFormat = TableFormat.TABLE) -> None:
    """`show_blocks` in `fmt`; the tables fit the console's width (never cut)."""
    emit(console or Console(), show_blocks(s), fmt)
