"""`tribunal reduce RUN`: read a run folder (local or s3://), write its leaderboard, show it.

The I/O half of the reduction; the rules live in `evalcore.results.reduce` (pure). Tables are opened as
lazy pyarrow datasets over the run's shards (hidden files are not data: `fs.is_hidden`), so the
reduction reads only the columns it needs, streaming, from a local folder or S3 alike.

Writes into the run folder:
* ``leaderboard.json``         — the whole `Leaderboard` (judge analysis, auditor statistics, notes);
* ``leaderboard.parquet``      — one row per system (whole benchmark), rates with `_low`/`_high`;
* ``leaderboard_areas.parquet`` — one row per (system, practice area).
The JSON holds nothing time-dependent, so reducing the same run twice gives identical bytes.
"""

from __future__ import annotations

import io
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
from rich import box
from rich.console import Console
from rich.text import Text

from evalcore.errors import StorageError
from evalcore.results import adjudications as adj
from evalcore.results.leaderboard import Leaderboard, SystemScores, scores_table
from evalcore.results.reduce import TableSource, reduce_tables
from evalcore.results.stats import Interval
from evalcore.storage import fs
from evalcore.storage.run_folder import open_run
from evalcore.storage.store import RunRecord, arrow_schema, table_files
from evalcore.tables import Block, Cell, Column, TableFormat, TableSpec, emit

TABLES = ("submissions", "verdicts", "flags", "calls", "rejected")


def open_table(run_uri: str, table: str, endpoint_override: str | None = None) -> TableSource | None:
    """One table of a run as a lazy dataset over its shards (the files a reader takes:
    `store.table_files`); None when the run has no shard of it."""
    files = table_files(run_uri, table, endpoint_override)
    if not files:
        return None
    filesystem, _ = fs.resolve(files[0], endpoint_override)
    paths = [fs.resolve(f, endpoint_override)[1] for f in files]
    try:
        return pads.dataset(paths, schema=arrow_schema(table), format="parquet", filesystem=filesystem)
    except (OSError, pa.ArrowInvalid) as exc:
        raise StorageError(f"{fs.join(run_uri, table)}: cannot open the {table} shards: {exc}") from exc


def read_run_record(run_uri: str, endpoint_override: str | None = None) -> RunRecord:
    """run.json of a run, validated, with an actionable error when the folder is not a run."""
    return RunRecord.read(run_uri, endpoint_override)


def reduce_run(
    run_uri: str,
    *,
    write: bool = True,
    endpoint_override: str | None = None,
    threads: int | None = None,
    memory_limit: str | None = None,
    temp_directory: str | None = None,
    adjudications: bool = True,
) -> Leaderboard:
    """Reduce a run folder to its leaderboard and (by default) write the leaderboard files into it.

    The experts' decisions recorded in the run (``adjudications/``) are applied unless
    `adjudications` is False (the raw view: exactly the leaderboard of the raw tables).

    `endpoint_override` is the S3 endpoint for s3:// runs (else AWS_ENDPOINT_URL[_S3] is used);
    `threads` / `memory_limit` / `temp_directory` bound the reduction (e.g. 2, "4GB", a folder to
    spill to; defaults: every core, a share of the machine's memory, a fresh temporary folder:
    `evalcore.results.reduce.reduce_tables`).
    """
    record = read_run_record(run_uri, endpoint_override)
    tables = {name: open_table(run_uri, name, endpoint_override) for name in TABLES}
    submissions = tables.pop("submissions")
    if submissions is None:
        raise StorageError(f"{fs.join(run_uri, 'submissions')}: no graded submissions in this run yet")
    decisions = adj.load(run_uri, endpoint_override) if adjudications else None
    try:
        lb = reduce_tables(record, submissions=submissions, threads=threads, memory_limit=memory_limit,
                           temp_directory=temp_directory, decisions=decisions, **tables)
    except (OSError, pa.ArrowInvalid, duckdb.IOException) as exc:  # a shard unreadable, the disk full (spilling)
        raise StorageError(f"{run_uri}: cannot read the run's tables: {exc}") from exc
    if write:
        write_leaderboard(run_uri, lb, endpoint_override)
    return lb


def _parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def write_leaderboard(run_uri: str, lb: Leaderboard, endpoint_override: str | None = None) -> None:
    """leaderboard.json + leaderboard.parquet + leaderboard_areas.parquet, each written whole."""
    run = open_run(run_uri)
    files = {
        run.leaderboard_parquet: _parquet_bytes(scores_table(lb.systems)),
        run.leaderboard_areas_parquet: _parquet_bytes(scores_table(lb.by_area)),
        run.leaderboard_json: lb.model_dump_json(indent=2).encode(),
    }
    for uri, data in files.items():
        fs.write_bytes_atomic(uri, data, endpoint_override)


def load_leaderboard(run_uri: str, endpoint_override: str | None = None) -> Leaderboard:
    """leaderboard.json of a reduced run."""
    return Leaderboard.model_validate_json(fs.read_bytes(open_run(run_uri).leaderboard_json, endpoint_override))


# --------------------------------------------------------------------------------------------
# Terminal
# --------------------------------------------------------------------------------------------


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
    long), cost. Laid out by `evalcore.tables`: whole at any width (stacked when narrow).
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
    blocks += [Text.assemble(("note: ", "yellow"), note) for note in lb.notes]
    blocks += adjudication_lines(lb)
    return blocks


def render_leaderboard(lb: Leaderboard, console: Console | None = None, fmt: TableFormat = TableFormat.TABLE) -> None:
    """Print the leaderboard (`leaderboard_blocks`) in `fmt`; the table fits the console's width."""
    emit(console or Console(), leaderboard_blocks(lb), fmt)


def _rank_range(r: SystemScores) -> str:
    if r.rank_low is None or r.rank_high is None:
        return "—"
    return str(r.rank_low) if r.rank_low == r.rank_high else f"{r.rank_low}–{r.rank_high}"


def adjudication_lines(lb: Leaderboard) -> list[Block]:
    """What the experts' decisions changed: items per system, headline rate and rank before → after."""
    a = lb.adjudication
    if a is None:
        return []
    lines: list[Block] = [f"adjudicated: {a.decisions_in_force} item(s) decided ({a.decisions_recorded} decision(s) "
                          "recorded); `--no-adjudications` gives the raw view"]
    for c in a.changes:
        before = "—" if c.hc_pass_rate_before is None else f"{100 * c.hc_pass_rate_before:.1f}%"
        after = "—" if c.hc_pass_rate_after is None else f"{100 * c.hc_pass_rate_after:.1f}%"
        lines.append(f"  {c.system}: {c.decisions} item(s); HC pass {before} -> {after}; "
                     f"rank {c.rank_before or '—'} -> {c.rank_after or '—'}")
    lines += [Text.assemble(("note: ", "yellow"), line) for line in [*a.unmatched, *a.problems]]
    return lines
