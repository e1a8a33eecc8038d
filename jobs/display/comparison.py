"""A comparison of two runs (or raw vs adjudicated) in the terminal."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from evalcore.results.compare import Comparison
from jobs.display.leaderboard import interval_cell, interval_column
from jobs.display.tables import Block, Cell, Column, TableFormat, TableSpec, emit


def comparison_blocks(cmp: Comparison) -> list[Block]:
    """The comparison as `tribunal compare` prints it: verdict changes per judge, flags, score
    changes and ranks."""
    a, b = cmp.side_a, cmp.side_b  # "A" and "B", or (--adjudicated) "raw" and "adjudicated"
    blocks: list[Block] = [Text.from_markup(
        f"[bold]Run {escape(cmp.run_b)} against run {escape(cmp.run_a)}[/]: {cmp.shared} submissions complete in "
        f"both ({cmp.only_a} in {escape(a)} only, {cmp.only_b} in {escape(b)} only).")]
    if cmp.sides:
        blocks.append(cmp.sides + ".")
    t = TableSpec([Column("judge", "id"), Column(f"model {a} → {b}", "id", ("model_a", "model_b")),
                   Column("compared", "number"), Column("changed", "number"), Column("pass→fail", "number", ("pass_to_fail",)),
                   Column("fail→pass", "number", ("fail_to_pass",)), Column(f"κ({a},{b})", "number", ("kappa",))],
                  title=f"Verdicts that changed ({a} → {b})", box=box.SIMPLE_HEAVY)
    for j in cmp.judges:
        model = j.model_a if j.model_a == j.model_b else f"{j.model_a} → {j.model_b}"
        t.add_row(j.judge, Cell(str(model), (j.model_a, j.model_b)), Cell(str(j.compared), j.compared),
                  Cell(str(j.changed), j.changed), Cell(str(j.pass_to_fail), j.pass_to_fail),
                  Cell(str(j.fail_to_pass), j.fail_to_pass), Cell("—" if j.kappa is None else f"{j.kappa:.2f}", j.kappa))
    blocks.append(t)
    if cmp.judges_only_a or cmp.judges_only_b:
        blocks.append(f"judges only in {a}: {cmp.judges_only_a or '—'}; only in {b}: {cmp.judges_only_b or '—'}")
    f = cmp.flags
    blocks.append(f"Confirmed hallucinations on {f.audited_both} submissions audited in both "
                  f"(auditor {f.auditor_a} → {f.auditor_b}): {a} {f.confirmed_a} ({f.material_a} material), "
                  f"{b} {f.confirmed_b} ({f.material_b} material); upheld by both {f.upheld_both}, "
                  f"by {a} only {f.only_a}, by {b} only {f.only_b}. Audited in {a} only: {f.audited_a_only}, "
                  f"in {b} only: {f.audited_b_only}.")
    ci = " [dim][{low:+.0f}, {high:+.0f}][/dim]"
    t = TableSpec([Column("system", "id", ("system", "rank_changed")), Column(f"rank {a}", "number", ("rank_a",)),
                   Column(f"rank {b}", "number", ("rank_b",)), Column(f"HC {a}", "number", ("hc_pass_rate_a",)),
                   Column(f"HC {b}", "number", ("hc_pass_rate_b",)), interval_column("Δ HC", "delta"),
                   interval_column("Δ all-pass", "all_pass_delta")],
                  title=f"Scores (HC pass rate, points; Δ = {b} − {a} over shared tasks, 95% CI)", box=box.SIMPLE_HEAVY)
    for s in cmp.systems:
        t.add_row(Cell(s.system + (" *" if s.system in cmp.rank_changed else ""), (s.system, s.system in cmp.rank_changed)),
                  Cell("—" if s.rank_a is None else str(s.rank_a), s.rank_a),
                  Cell("—" if s.rank_b is None else str(s.rank_b), s.rank_b),
                  Cell("—" if s.hc_pass_rate_a is None else f"{100 * s.hc_pass_rate_a:.1f}%", s.hc_pass_rate_a),
                  Cell("—" if s.hc_pass_rate_b is None else f"{100 * s.hc_pass_rate_b:.1f}%", s.hc_pass_rate_b),
                  *(interval_cell(d, unit="", signed=True, ci=ci) for d in (s.delta, s.all_pass_delta)))
    blocks.append(t)
    tau = "—" if cmp.kendall_tau is None else f"{cmp.kendall_tau:.2f}"
    blocks.append(f"Kendall τ of the two leaderboards ({a}, {b}): {tau}"
                  + (f" (p = {cmp.kendall_p:.2g})" if cmp.kendall_p is not None else "")
                  + f"; rank changed (*): {', '.join(cmp.rank_changed) or 'none'}")
    return blocks


def render_comparison(cmp: Comparison, console: Console | None = None, fmt: TableFormat = TableFormat.TABLE) -> None:
    """Print `comparison_blocks` in `fmt`; the tables fit the console's width (never cut)."""
    emit(console or Console(), comparison_blocks(cmp), fmt)
