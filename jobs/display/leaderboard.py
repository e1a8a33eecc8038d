"""The leaderboard in the terminal (and as csv, markdown or JSON): rates with their 95% intervals, ranks with their range and tier, and what the experts' decisions changed."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.text import Text

from evalcore.results.leaderboard import Leaderboard, SystemScores
from evalcore.results.stats import Interval
from jobs.display.tables import Block, Cell, Column, TableFormat, TableSpec, emit

CI_MARKUP = " [dim][{low:.0f}–{high:.0f}][/dim]"
"""How a terminal table shows a rate's interval after its value (`Interval.text(ci=...)`): dimmed."""


def interval_column(header: str, name: str) -> Column:
    """A column of intervals: in csv `<name>`, `<name>_low`, `<name>_high` (as in the Parquet tables)."""
    return Column(header, "number", (name, f"{name}_low", f"{name}_high"))


def interval_cell(iv: Interval, *, ci: str | None = CI_MARKUP, **text: Any) -> Cell:
    """An interval as its text (`Interval.text`, its bounds dimmed) and its three values."""
    return Cell(Text.from_markup(iv.text(ci=ci, **text)), (iv.value, iv.low, iv.high))


def _not_scored(r: SystemScores) -> str:
    return f"{r.missing}/{r.incomplete}/{r.too_long}"


LEADERBOARD_COLUMNS = [
    Column("#", "number", ("rank",)),
    Column("rank\nrange", "number", ("rank_low", "rank_high")),
    Column("tier", "number", ("tier",)),
    Column("system", "id", ("system",), style="bold"),
    interval_column("HC pass\n[95% CI]", "hc_pass_rate"),
    Column("all-\npass", "number", ("all_pass_rate",)),
    Column("crit.\npass", "number", ("criterion_pass_rate",)),
    Column("material\n/task", "number", ("material_per_task",)),
    Column("lost to\ngate", "number", ("lost_to_gate", "gated", "passing")),
    Column("missing/\nincompl./\ntoo long", "number", ("missing", "incomplete", "too_long")),
    Column("cost", "number", ("cost_usd",)),
]
"""The leaderboard's columns; in csv each carries the values it shows, under leaderboard.parquet's names."""


def leaderboard_blocks(lb: Leaderboard) -> list[Block]:
    """The leaderboard as `sweep`, `demo` and `reduce` print it: the table, then notes and what
    the experts' decisions changed.

    Columns: rank, rank range, tier, system, headline hallucination-controlled pass rate with its
    95% interval, all-pass before the gate, criterion pass rate, material hallucinations per
    audited task, share of passing tasks lost to the gate, not scored (missing / incomplete / too
    long), cost. Laid out by `jobs.display.tables`: whole at any width (stacked when narrow).
    """
    table = TableSpec(
        LEADERBOARD_COLUMNS,
        title=f"Leaderboard — run {lb.run_id} ({lb.n_tasks} tasks)",
        caption=(
            "HC = hallucination-controlled (gated); material/task = per audited task; "
            f"95% bootstrap CIs over tasks (seed {lb.seed}, {lb.bootstrap_samples} resamples)"
            + (f"; panel Fleiss κ = {lb.judges.fleiss_kappa:.2f}" if lb.judges.fleiss_kappa is not None else "")
        ),
        box=box.SIMPLE_HEAVY,
        pad_edge=False,
    )
    for r in lb.systems:
        table.add_row(
            Cell("—" if r.rank is None else str(r.rank), r.rank),
            Cell(_rank_range(r), (r.rank_low, r.rank_high)),
            Cell("—" if r.tier is None else str(r.tier), r.tier),
            r.system,  # a system name is user text, never markup: gpt-5[beta] stays whole
            interval_cell(r.hc_pass_rate),
            Cell(r.all_pass_rate.text(), r.all_pass_rate.value),
            Cell(r.criterion_pass_rate.text(), r.criterion_pass_rate.value),
            Cell(r.material_per_task.text(percent=False, digits=2), r.material_per_task.value),
            Cell("—" if r.lost_to_gate.value is None else f"{r.lost_to_gate.text(digits=0)} {r.gated}/{r.passing}",
                 (r.lost_to_gate.value, r.gated, r.passing)),
            Cell(_not_scored(r), (r.missing, r.incomplete, r.too_long)),
            Cell(f"${r.cost_usd:,.2f}", r.cost_usd),
        )
    blocks: list[Block] = [table]
    blocks += judge_noise_lines(lb)
    blocks += [Text.assemble(("note: ", "yellow"), note) for note in lb.notes]
    blocks += adjudication_lines(lb)
    blocks += corrected_lines(lb)
    return blocks


_RATE_NAMES = {"hc_pass_rate": "HC pass", "criterion_pass_rate": "crit. pass", "material_per_task": "material/task"}


def corrected_lines(lb: Leaderboard) -> list[Block]:
    """The label-corrected rates (`reduce --corrected`): per system and rate, the judges' own, the
    corrected one and the labels' alone, each with its interval, and the labels it rests on."""
    c = lb.corrected
    if c is None:
        return []
    table = TableSpec(
        [Column("system", "id", ("system",), style="bold"), Column("rate", "id", ("rate",)),
         interval_column("judges'\nown", "judges"), interval_column("corrected\n[95% CI]", "corrected"),
         interval_column("labels\nalone", "labels_only"), Column("labels", "number", ("n_labels",)),
         Column("judged\nonly", "number", ("n_unlabelled",))],
        title=f"Corrected by expert labels — {c.n_labels} whole submission(s) labelled, seed {c.seed}",
        caption=f"prediction-powered inference; labels: {c.source}", box=box.SIMPLE_HEAVY, pad_edge=False)
    for s in c.systems:
        for r in s.rates:
            count = r.rate == "material_per_task"
            text: dict[str, Any] = {"percent": False, "digits": 2} if count else {}
            ci = " [dim][{low:.2f}–{high:.2f}][/dim]" if count else CI_MARKUP
            table.add_row(s.system, _RATE_NAMES[r.rate], interval_cell(r.judges, ci=ci, **text),
                          interval_cell(r.corrected, ci=ci, **text), interval_cell(r.labels_only, ci=ci, **text),
                          Cell(str(r.n_labels), r.n_labels), Cell(str(r.n_unlabelled), r.n_unlabelled))
    return [table, *(Text.assemble(("note: ", "yellow"), note) for note in c.notes)]


def render_leaderboard(lb: Leaderboard, console: Console | None = None, fmt: TableFormat = TableFormat.TABLE) -> None:
    """Print the leaderboard (`leaderboard_blocks`) in `fmt`; the table fits the console's width.
    In csv only the leaderboard's table: one plain table a spreadsheet or pandas reads as is."""
    blocks = leaderboard_blocks(lb)
    if fmt is TableFormat.CSV:  # csv is the leaderboard's rows (one plain table), as before the change table
        blocks = blocks[:1]
    emit(console or Console(), blocks, fmt)


def judge_noise_lines(lb: Leaderboard) -> list[Block]:
    """With repeats (`tribunal retest`): each system's headline interval over tasks beside the one that
    includes judge noise (two-level), and the task-only rank range and tier beside the ones the table
    above shows (two-level)."""
    if not any(r.repeated_tasks for r in lb.systems):
        return []
    table = TableSpec([Column("system", "id", ("system",)), Column("repeated\ntasks", "number", ("repeated_tasks",)),
                       interval_column("HC pass\n[tasks only]", "hc_pass_rate"),
                       Column("[with judge\nnoise]", "number", ("hc_with_judge_noise_low", "hc_with_judge_noise_high")),
                       Column("rank range\ntasks only", "number", ("rank_low_tasks_only", "rank_high_tasks_only")),
                       Column("tier\ntasks only", "number", ("tier_tasks_only",))],
                      title="Intervals with judge noise (two-level bootstrap: tasks, then a grading of each)",
                      caption="the rank range and tier of the leaderboard above include judge noise; "
                              "here those over tasks only, for comparison",
                      box=box.SIMPLE_HEAVY, pad_edge=False)
    for r in lb.systems:
        low, high = r.hc_with_judge_noise_low, r.hc_with_judge_noise_high
        noisy = "—" if low is None or high is None else f"[{100 * low:.0f}–{100 * high:.0f}]"
        only = ("—" if r.rank_low_tasks_only is None or r.rank_high_tasks_only is None else
                str(r.rank_low_tasks_only) if r.rank_low_tasks_only == r.rank_high_tasks_only else
                f"{r.rank_low_tasks_only}–{r.rank_high_tasks_only}")
        table.add_row(r.system, Cell(str(r.repeated_tasks), r.repeated_tasks), interval_cell(r.hc_pass_rate),
                      Cell(noisy, (low, high)), Cell(only, (r.rank_low_tasks_only, r.rank_high_tasks_only)),
                      Cell("—" if r.tier_tasks_only is None else str(r.tier_tasks_only), r.tier_tasks_only))
    return [table]


def _rank_range(r: SystemScores) -> str:
    if r.rank_low is None or r.rank_high is None:
        return "—"
    return str(r.rank_low) if r.rank_low == r.rank_high else f"{r.rank_low}–{r.rank_high}"


def adjudication_lines(lb: Leaderboard) -> list[Block]:
    """What the experts' decisions changed: a line, then a table of items per system with its headline
    rate and rank before → after (a table, so markdown gets a pipe table, not one paragraph per system)."""
    a = lb.adjudication
    if a is None:
        return []
    lines: list[Block] = [f"adjudicated: {a.decisions_in_force} item(s) decided ({a.decisions_recorded} decision(s) "
                          "recorded); `--no-adjudications` gives the raw view"]
    if a.changes:
        table = TableSpec([Column("system", "id"), Column("items", "number", ("decisions",)),
                           Column("HC pass\nbefore", "number", ("hc_pass_rate_before",)),
                           Column("HC pass\nafter", "number", ("hc_pass_rate_after",)),
                           Column("rank\nbefore", "number", ("rank_before",)),
                           Column("rank\nafter", "number", ("rank_after",))],
                          title="What the decisions changed", box=box.SIMPLE_HEAVY, pad_edge=False)
        for c in a.changes:
            table.add_row(c.system, Cell(str(c.decisions), c.decisions),
                          Cell(_percent(c.hc_pass_rate_before), c.hc_pass_rate_before),
                          Cell(_percent(c.hc_pass_rate_after), c.hc_pass_rate_after),
                          Cell(str(c.rank_before or "—"), c.rank_before), Cell(str(c.rank_after or "—"), c.rank_after))
        lines.append(table)
    lines += [Text.assemble(("note: ", "yellow"), line) for line in [*a.unmatched, *a.problems]]
    return lines


def _percent(rate: float | None) -> str:
    return "—" if rate is None else f"{100 * rate:.1f}%"
