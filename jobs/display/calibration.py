"""A calibration in the terminal: each judge, the panel and the auditor against expert labels."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from evalcore.results.calibrate import Calibration
from evalcore.results.leaderboard import ALL_AREAS
from evalcore.results.repeatability import Repeatability
from evalcore.results.stats import Interval
from jobs.display.leaderboard import CI_MARKUP, interval_cell, interval_column
from jobs.display.tables import Block, Cell, Column, TableFormat, TableSpec, emit


def calibration_blocks(cal: Calibration) -> list[Block]:
    """The calibration as `tribunal calibrate` prints it: judges, panel, auditor, notes."""
    blocks: list[Block] = [Text.from_markup(
        f"[bold]Calibration of run {escape(cal.run_id)}[/] against {escape(cal.labels)}: {cal.labelled_submissions} "
        f"labelled submissions, {cal.matched_submissions} graded complete, {cal.not_in_run} not in the run, "
        f"{cal.not_complete} not complete. 95% bootstrap CIs over submissions.")]
    t = TableSpec([Column("judge", "id"), Column("area", "id"), Column("items", "number"),
                   interval_column("accuracy", "accuracy"), interval_column("Cohen κ", "kappa"),
                   interval_column("false pass", "false_pass_rate"), interval_column("false fail", "false_fail_rate")],
                  title="Judges against the experts", box=box.SIMPLE_HEAVY)
    for r in cal.judges:
        if r.area == ALL_AREAS:
            t.add_row(r.judge, r.area, Cell(str(r.items), r.items), interval_cell(r.accuracy),
                      interval_cell(r.kappa, percent=False, digits=2, ci=" [dim][{low:.2f}–{high:.2f}][/dim]"),
                      interval_cell(r.false_pass_rate), interval_cell(r.false_fail_rate))
    blocks.append(t)
    p = cal.panel
    blocks.append(Text.from_markup(
        f"Panel vs experts' all-pass on {p.submissions} fully labelled submissions "
        f"({p.expert_all_pass} all-pass): panel task-score error {p.task_score_error.text(ci=CI_MARKUP)}, "
        f"majority all-pass error {p.majority_error.text(ci=CI_MARKUP)}; "
        + "; ".join(f"{escape(j)} {e.text(ci=CI_MARKUP)}" for j, e in p.judge_error.items())
        + (f"; panel − best judge ({escape(p.best_judge)}) {p.panel_minus_best_judge.text(ci=CI_MARKUP)}"
           if p.best_judge else "")))
    a = cal.auditor
    t = TableSpec([Column("category", "id"), Column("labelled", "number"), Column("found", "number"),
                   interval_column("recall", "recall"), Column("confirmed", "number"), Column("true", "number"),
                   interval_column("precision", "precision")],
                  title=f"Auditor on {a.audited_submissions} audited labelled submissions", box=box.SIMPLE_HEAVY)
    def recall(iv: Interval) -> Cell:  # review labels are not exhaustive: a recall of them would be 100 % by construction
        return interval_cell(iv) if a.recall_measured else Cell("not measured", None)

    for c in a.by_category:
        t.add_row(c.category, Cell(str(c.labelled), c.labelled), Cell(str(c.found), c.found), recall(c.recall),
                  Cell(str(c.confirmed), c.confirmed), Cell(str(c.true), c.true), interval_cell(c.precision))
    t.add_row(Cell(Text("all", style="bold"), "all"), Cell(str(a.labelled), a.labelled), Cell(str(a.found), a.found),
              recall(a.recall), Cell(str(a.confirmed), a.confirmed),
              Cell(str(a.true_confirmed), a.true_confirmed), interval_cell(a.precision))
    blocks.append(t)
    stage1 = a.stage1_recall.text(ci=CI_MARKUP) if a.recall_measured else "not measured"
    blocks.append(Text.from_markup(
        f"Stage 1 recall {stage1}; Stage 2 rejected {a.stage2_rejected_real} real and "
        f"{a.stage2_rejected_not_real} unreal flags, confirmed {a.stage2_confirmed_not_real} unreal; "
        f"{a.not_audited} labelled hallucination(s) in submissions not audited. "
        f"Materiality (expert → auditor): {escape(materiality_text(a.materiality))}."))
    if cal.truncation:
        blocks.append(truncation_table(cal))
    if cal.reviewers is not None:
        blocks += reviewer_blocks(cal)
    blocks += [Text.assemble(("note: ", "yellow"), note) for note in cal.notes]
    if cal.repeatability is not None:
        blocks += repeatability_blocks(cal.repeatability)
    return blocks


KAPPA_CI = " [dim][{low:.2f}–{high:.2f}][/dim]"


def repeatability_blocks(rep: Repeatability, weak_spots: int = 10) -> list[Block]:
    """The repeatability section: the judges against themselves on a retest's repeats."""
    blocks: list[Block] = [Text.from_markup(
        f"[bold]Repeatability[/]: {rep.submissions} submission(s) graded again, {rep.repeats} repeat(s) compared "
        "with their originals (`tribunal retest`). Flip rate = share of a judge's verdicts that changed when asked "
        "again; 95% bootstrap CIs over the repeated submissions."
        + (" [green]No verdict, score or gate changed: the repeats found no judge noise.[/]" if rep.noise_free
           else ""))]
    t = TableSpec([Column("judge", "id"), Column("pairs", "number"), Column("flips", "number"),
                   interval_column("flip rate", "flip_rate"), interval_column("test-retest κ", "kappa")],
                  title="Judges against themselves", box=box.SIMPLE_HEAVY)
    for j in [*rep.judges, *([rep.panel] if rep.panel else [])]:
        t.add_row(Cell(Text(j.judge, style="bold") if j.judge == "panel" else j.judge, j.judge),
                  Cell(str(j.pairs), j.pairs), Cell(str(j.flips), j.flips), interval_cell(j.flip_rate),
                  interval_cell(j.kappa, percent=False, digits=2, ci=KAPPA_CI))
    blocks.append(t)
    spots = rep.weak_spots(weak_spots)
    if spots:
        w = TableSpec([Column("task", "id"), Column("criterion", "id"), Column("pairs", "number"),
                       Column("flips", "number"), interval_column("flip rate", "flip_rate"),
                       Column("flipped by", "text")],
                      title="Criteria that flip most (the rubric's weak spots)", box=box.SIMPLE_HEAVY)
        for spot in spots:
            by = ", ".join(f"{j} {n}" for j, n in spot.flips_by_judge.items())
            w.add_row(spot.task_id, spot.criterion_id, Cell(str(spot.pairs), spot.pairs),
                      Cell(str(spot.flips), spot.flips), interval_cell(spot.flip_rate), Cell(by, by))
        blocks.append(w)
    changed = [s for s in rep.per_submission if s.task_score_changes or s.gate_changes]
    text = (f"Across repeats the task score changed in {rep.task_score_change_rate.text(ci=CI_MARKUP)} and the gate in "
            f"{rep.gate_change_rate.text(ci=CI_MARKUP)} of repeats; {len(changed)} of {len(rep.per_submission)} "
            "submission(s) changed at least once.")
    if rep.auditor is not None:
        a = rep.auditor
        text += (f" Auditor: of {a.flags} material flag(s), {a.recurred} of {a.pairs} (flag, audited repeat) pairs "
                 f"recurred ({a.rate.text(ci=CI_MARKUP)}).")
    else:
        text += " Auditor: not repeated (retest without --audit: a repeat's gate is its original's)."
    blocks.append(Text.from_markup(text))
    if changed:
        moved = TableSpec([Column("submission", "id"), Column("task score", "number"),
                       Column("repeats", "text"), Column("gated", "text"),
                       Column("repeats gated", "text")],
                      title="Submissions whose score or gate changed", box=box.SIMPLE_HEAVY)
        for s in changed:
            scores = " ".join(f"{x:.2f}" for x in s.repeat_task_scores)
            gated = " ".join("yes" if g else "no" for g in s.repeat_gated)
            moved.add_row(s.submission_id, Cell(f"{s.task_score:.2f}", s.task_score), Cell(scores, scores),
                          Cell("yes" if s.gated else "no", s.gated), Cell(gated, gated))
        blocks.append(moved)
    return blocks


def render_repeatability(rep: Repeatability, console: Console | None = None,
                         fmt: TableFormat = TableFormat.TABLE) -> None:
    """Print `repeatability_blocks` in `fmt` (a run with repeats and no labels to calibrate against)."""
    emit(console or Console(), repeatability_blocks(rep), fmt)


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def reviewer_blocks(cal: Calibration) -> list[Block]:
    """Inter-reviewer agreement over the review campaigns' decisions: the ceiling to read the judges against."""
    r = cal.reviewers
    assert r is not None
    t = TableSpec([Column("items", "id"), Column("n", "number"), Column("Krippendorff α", "number"),
                   Column("95% CI", "text")], title="Reviewers against each other", box=box.SIMPLE_HEAVY)
    for a in r.alphas:
        t.add_row(a.kind, Cell(str(a.n_items), a.n_items), Cell(_num(a.alpha), a.alpha),
                  f"{_num(a.low)}–{_num(a.high)}" if a.low is not None else "—")
    pairs = TableSpec([Column("reviewers", "id"), Column("both decided", "number"), Column("agreed", "number"),
                       Column("Cohen κ", "number")], title="Per pair", box=box.SIMPLE_HEAVY)
    for p in r.pairs:
        pairs.add_row(f"{p.a} · {p.b}", Cell(str(p.n), p.n), Cell(str(p.agreed), p.agreed), Cell(_num(p.kappa), p.kappa))
    machine = TableSpec([Column("reviewer", "id"), Column("items", "number"), Column("agrees", "number"),
                         Column("overturns", "number")], title="Reviewers against the judges and the auditor",
                        box=box.SIMPLE_HEAVY)
    for v in r.vs_machine:
        machine.add_row(v.reviewer, Cell(str(v.n), v.n), Cell(_num(v.agreement), v.agreement),
                        Cell(_num(v.overturn_share), v.overturn_share))
    return [t, pairs, machine]


def materiality_text(confusion: dict[str, dict[str, int]]) -> str:
    """The expert → auditor materiality counts as a reader says them ("material → 3 material, 1
    missed; not real → 1 minor"), never a Python dict; "none labelled" when empty."""
    parts = [f"{expert} → " + ", ".join(f"{n} {auditor}" for auditor, n in sorted(counts.items()) if n)
             for expert, counts in sorted(confusion.items()) if any(counts.values())]
    return "; ".join(parts) or "none labelled"


TRUNCATION_HINT = 0.02
"""A truncation rate above which `tribunal calibrate` suggests a larger `max_output_tokens`: each
truncated attempt is paid and then sent again at twice its cap."""


def truncation_table(cal: Calibration) -> TableSpec:
    """Per vendor entry and purpose: calls, answers that stopped at their token cap (each retried
    once at a larger cap, `evalcore.vendors.output_cap`), the rate, and what those attempts cost."""
    t = TableSpec([Column("vendor", "id"), Column("purpose", "id"), Column("calls", "number"),
                   Column("truncated", "number"), Column("rate", "number"), Column("truncated USD", "number"),
                   Column("", "text")],
                  title="Answers stopped at their output-token cap (each retried once at a larger cap)",
                  box=box.SIMPLE_HEAVY)
    for r in cal.truncation:
        hint = f"raise {r.vendor}'s max_output_tokens" if r.rate > TRUNCATION_HINT else ""
        t.add_row(r.vendor, r.purpose, Cell(f"{r.calls:,}", r.calls), Cell(f"{r.truncated:,}", r.truncated),
                  Cell(f"{100 * r.rate:.1f}%", r.rate), Cell(f"${r.truncated_usd:,.4f}", r.truncated_usd), hint)
    return t


def render_calibration(cal: Calibration, console: Console | None = None, fmt: TableFormat = TableFormat.TABLE) -> None:
    """Print `calibration_blocks` in `fmt`; the tables fit the console's width (never cut)."""
    emit(console or Console(), calibration_blocks(cal), fmt)
