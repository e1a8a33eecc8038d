"""`tribunal compare RUN_A RUN_B`: read two runs, compare them, show (and optionally write) the result.

The I/O half; the rules live in `evalcore.results.compare` (pure). Both runs are reduced in memory (their
folders are not written to), so comparing never changes a run.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from evalcore.errors import InputError, StorageError
from evalcore.results import adjudications as adj
from evalcore.results.compare import Comparison, compare_tables
from evalcore.results.reduce import TableSource, current_gradings
from evalcore.storage import fs
from evalcore.tables import Block, Cell, Column, TableFormat, TableSpec, emit
from jobs.per_run.reduce import interval_cell, interval_column, open_table, read_run_record, reduce_run


def compare_runs(run_a: str, run_b: str | None, *, out: str | None = None, endpoint_override: str | None = None,
                 adjudicated: bool = False) -> Comparison:
    """Compare run B with run A; write the comparison as JSON to `out` when given.

    `adjudicated` (run B None): compare run A's raw view with its adjudicated view — the same
    judges' tables, scored without and with the experts' decisions in force. Runs with no
    submission complete in both are refused: there is nothing to compare.
    """
    if adjudicated:
        if run_b is not None:
            raise InputError(run_b, "--adjudicated compares one run's raw and adjudicated views: give one run")
        return _raw_vs_adjudicated(run_a, out, endpoint_override)
    if run_b is None:
        raise InputError(run_a, "give a second run to compare with, or --adjudicated for this run's decisions")
    records, tables, boards = [], [], []
    for uri in (run_a, run_b):
        records.append(read_run_record(uri, endpoint_override))
        tables.append(_tables(uri, endpoint_override))
        boards.append(reduce_run(uri, write=False, endpoint_override=endpoint_override))
    cmp = compare_tables(records[0], records[1], tables[0], tables[1], boards[0], boards[1])
    return _checked(cmp, run_b, out, endpoint_override)


def _tables(uri: str, endpoint_override: str | None) -> dict[str, TableSource | None]:
    t = {name: open_table(uri, name, endpoint_override) for name in ("submissions", "verdicts", "flags")}
    if t["submissions"] is None:
        raise StorageError(f"{fs.join(uri, 'submissions')}: no graded submissions in this run yet")
    return t


def _raw_vs_adjudicated(run: str, out: str | None, endpoint_override: str | None) -> Comparison:
    """Run A = the raw view, run B = the same tables with the decisions in force applied to the scores."""
    record = read_run_record(run, endpoint_override)
    raw = _tables(run, endpoint_override)
    decisions = adj.load(run, endpoint_override)
    if not decisions.decisions:
        raise InputError(adj.folder(run), "no adjudications recorded in this run: raw and adjudicated views are the same")
    con = duckdb.connect()
    try:
        for name in ("verdicts", "flags"):
            con.register(f"{name}_in", raw[name] if raw[name] is not None else pa.table(
                {c: pa.array([], pa.string()) for c in ("grading_id", "judge", "criterion_id", "verdict",
                                                        "flag_index", "status", "materiality")}))
        assert raw["submissions"] is not None
        adjudicated, _ = adj.apply(con, current_gradings(raw["submissions"]), decisions.latest())
    finally:
        con.close()
    board_raw = reduce_run(run, write=False, endpoint_override=endpoint_override, adjudications=False)
    board_adj = reduce_run(run, write=False, endpoint_override=endpoint_override, adjudications=True)
    cmp = compare_tables(record, record, raw, {**raw, "submissions": adjudicated}, board_raw, board_adj)
    cmp = cmp.model_copy(update={"run_a": f"{record.run_id} (raw)", "run_b": f"{record.run_id} (adjudicated)"})
    return _checked(cmp, run, out, endpoint_override)


def _checked(cmp: Comparison, run_b: str, out: str | None, endpoint_override: str | None) -> Comparison:
    if cmp.shared == 0:
        raise InputError(run_b, f"no submission is complete in both runs ({cmp.only_a} in A only, {cmp.only_b} in "
                         "B only): there is nothing to compare")
    if out:
        fs.write_bytes_atomic(out, cmp.model_dump_json(indent=2).encode(), endpoint_override)
    return cmp


def comparison_blocks(cmp: Comparison) -> list[Block]:
    """The comparison as `tribunal compare` prints it: verdict changes per judge, flags, score
    changes and ranks."""
    blocks: list[Block] = [Text.from_markup(
        f"[bold]Run {escape(cmp.run_b)} against run {escape(cmp.run_a)}[/]: {cmp.shared} submissions complete in "
        f"both ({cmp.only_a} in A only, {cmp.only_b} in B only).")]
    t = TableSpec([Column("judge", "id"), Column("model A → B", "id", ("model_a", "model_b")),
                   Column("compared", "number"), Column("changed", "number"), Column("pass→fail", "number", ("pass_to_fail",)),
                   Column("fail→pass", "number", ("fail_to_pass",)), Column("κ(A,B)", "number", ("kappa",))],
                  title="Verdicts that changed", box=box.SIMPLE_HEAVY)
    for j in cmp.judges:
        model = j.model_a if j.model_a == j.model_b else f"{j.model_a} → {j.model_b}"
        t.add_row(j.judge, Cell(str(model), (j.model_a, j.model_b)), Cell(str(j.compared), j.compared),
                  Cell(str(j.changed), j.changed), Cell(str(j.pass_to_fail), j.pass_to_fail),
                  Cell(str(j.fail_to_pass), j.fail_to_pass), Cell("—" if j.kappa is None else f"{j.kappa:.2f}", j.kappa))
    blocks.append(t)
    if cmp.judges_only_a or cmp.judges_only_b:
        blocks.append(f"judges only in A: {cmp.judges_only_a or '—'}; only in B: {cmp.judges_only_b or '—'}")
    f = cmp.flags
    blocks.append(f"Confirmed hallucinations on {f.audited_both} submissions audited in both "
                  f"(auditor {f.auditor_a} → {f.auditor_b}): A {f.confirmed_a} ({f.material_a} material), "
                  f"B {f.confirmed_b} ({f.material_b} material); upheld by both {f.upheld_both}, "
                  f"by A only {f.only_a}, by B only {f.only_b}. Audited in A only: {f.audited_a_only}, "
                  f"in B only: {f.audited_b_only}.")
    ci = " [dim][{low:+.0f}, {high:+.0f}][/dim]"
    t = TableSpec([Column("system", "id", ("system", "rank_changed")), Column("rank A", "number", ("rank_a",)),
                   Column("rank B", "number", ("rank_b",)), Column("HC A", "number", ("hc_pass_rate_a",)),
                   Column("HC B", "number", ("hc_pass_rate_b",)), interval_column("Δ HC", "delta"),
                   interval_column("Δ all-pass", "all_pass_delta")],
                  title="Scores (HC pass rate, points; Δ = B − A over shared tasks, 95% CI)", box=box.SIMPLE_HEAVY)
    for s in cmp.systems:
        t.add_row(Cell(s.system + (" *" if s.system in cmp.rank_changed else ""), (s.system, s.system in cmp.rank_changed)),
                  Cell("—" if s.rank_a is None else str(s.rank_a), s.rank_a),
                  Cell("—" if s.rank_b is None else str(s.rank_b), s.rank_b),
                  Cell("—" if s.hc_pass_rate_a is None else f"{100 * s.hc_pass_rate_a:.1f}%", s.hc_pass_rate_a),
                  Cell("—" if s.hc_pass_rate_b is None else f"{100 * s.hc_pass_rate_b:.1f}%", s.hc_pass_rate_b),
                  *(interval_cell(d, unit="", signed=True, ci=ci) for d in (s.delta, s.all_pass_delta)))
    blocks.append(t)
    tau = "—" if cmp.kendall_tau is None else f"{cmp.kendall_tau:.2f}"
    blocks.append(f"Kendall τ of the two leaderboards: {tau}"
                  + (f" (p = {cmp.kendall_p:.2g})" if cmp.kendall_p is not None else "")
                  + f"; rank changed (*): {', '.join(cmp.rank_changed) or 'none'}")
    return blocks


def render_comparison(cmp: Comparison, console: Console | None = None, fmt: TableFormat = TableFormat.TABLE) -> None:
    """Print `comparison_blocks` in `fmt`; the tables fit the console's width (never cut)."""
    emit(console or Console(), comparison_blocks(cmp), fmt)
