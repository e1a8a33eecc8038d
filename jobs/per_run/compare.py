"""`tribunal compare RUN_A RUN_B`: read two runs, compare them, show (and optionally write) the result.

The I/O half; the rules live in `evalcore.results.compare` (pure). Both runs are reduced in memory (their
folders are not written to), so comparing never changes a run.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from evalcore.errors import InputError, StorageError
from evalcore.results import adjudications as adj
from evalcore.results.compare import Comparison, compare_tables, decided_items
from evalcore.results.reduce import TableSource, current_gradings
from evalcore.storage import fs
from evalcore.storage.run import open_run
from jobs.per_run.reduce import reduce_run


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
        records.append(open_run(uri, endpoint_override).read_record())
        tables.append(_tables(uri, endpoint_override))
        boards.append(reduce_run(uri, write=False, endpoint_override=endpoint_override))
    cmp = compare_tables(records[0], records[1], tables[0], tables[1], boards[0], boards[1])
    return _checked(cmp, run_b, out, endpoint_override)


def _tables(uri: str, endpoint_override: str | None) -> dict[str, TableSource | None]:
    run = open_run(uri, endpoint_override)
    t = {name: run.dataset(name) for name in ("submissions", "verdicts", "flags")}
    if t["submissions"] is None:
        raise StorageError(f"{run.table('submissions')}: no graded submissions in this run yet")
    return t


def _raw_vs_adjudicated(run: str, out: str | None, endpoint_override: str | None) -> Comparison:
    """Run A = the raw view, run B = the same tables with the decisions in force applied to the scores."""
    opened = open_run(run, endpoint_override)
    record = opened.read_record()
    raw = _tables(run, endpoint_override)
    decisions = opened.read_decisions()
    if not decisions.decisions:
        raise InputError(opened.adjudications, "no adjudications recorded in this run: raw and adjudicated views are the same")
    con = duckdb.connect()
    try:
        for name in ("verdicts", "flags"):
            con.register(f"{name}_in", raw[name] if raw[name] is not None else pa.table(
                {c: pa.array([], pa.string()) for c in ("grading_id", "judge", "criterion_id", "verdict",
                                                        "flag_index", "status", "materiality")}))
        assert raw["submissions"] is not None
        current = current_gradings(raw["submissions"])
        adjudicated, _ = adj.apply(con, current, decisions.latest())
    finally:
        con.close()
    decided = decided_items(current, raw["verdicts"], raw["flags"], decisions.latest())
    board_raw = reduce_run(run, write=False, endpoint_override=endpoint_override, adjudications=False)
    board_adj = reduce_run(run, write=False, endpoint_override=endpoint_override, adjudications=True)
    cmp = compare_tables(record, record, raw, {**raw, "submissions": adjudicated}, board_raw, board_adj,
                         decided_b=decided)
    cmp = cmp.model_copy(update={
        "run_a": f"{record.run_id} (raw)", "run_b": f"{record.run_id} (adjudicated)", "side_a": "raw",
        "side_b": "adjudicated",
        "sides": "raw = the judges' view (verdicts and flags as the judges and the auditor gave them); adjudicated "
                 "= the same run with the experts' decisions in force applied"})
    return _checked(cmp, run, out, endpoint_override)


def _checked(cmp: Comparison, run_b: str, out: str | None, endpoint_override: str | None) -> Comparison:
    if cmp.shared == 0:
        raise InputError(run_b, f"no submission is complete in both runs ({cmp.only_a} in A only, {cmp.only_b} in "
                         "B only): there is nothing to compare")
    if out:
        fs.write_bytes_atomic(out, cmp.model_dump_json(indent=2).encode(), endpoint_override)
    return cmp


