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
import json

import duckdb
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from evalcore.errors import InputError, StorageError
from evalcore.results import adjudications as adj
from evalcore.results.labels import Labels, load_labels
from evalcore.results.leaderboard import Leaderboard, scores_table
from evalcore.results.reduce import TableSource, reduce_tables
from evalcore.storage import fs
from evalcore.storage.run_folder import attempt_number, open_run
from evalcore.storage.store import RunRecord, arrow_schema, table_files

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
    corrected: bool = False,
    labels: str | None = None,
    label_seed: int | None = None,
) -> Leaderboard:
    """Reduce a run folder to its leaderboard and (by default) write the leaderboard files into it.

    `corrected` adds each system's label-corrected rates (`evalcore.results.corrected`) from the
    review's `full` section, or from the labels file `labels` whose submissions are the first of
    the seeded order `label_seed` (default: the run's seed); a sample that is not uniform is refused
    (`corrected.SampleRefused`, nothing written).

    The experts' decisions recorded in the run (``adjudications/``) are applied unless
    `adjudications` is False (the raw view: exactly the leaderboard of the raw tables). The raw
    view is written apart (``leaderboard_raw.*``): looking at it never replaces the files in force.

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
    loaded = adj.load(run_uri, endpoint_override) if adjudications or (corrected and labels is None) else None
    decisions = loaded if adjudications else None
    correct_with: Labels | adj.AdjudicationLoad | None = None
    if labels is not None and not corrected:
        raise InputError(labels, "labels are read for the corrected rates: add --corrected")
    if corrected:
        correct_with = load_labels(labels, endpoint_override) if labels is not None else loaded
    try:
        lb = reduce_tables(record, submissions=submissions, threads=threads, memory_limit=memory_limit,
                           temp_directory=temp_directory, decisions=decisions, correct_with=correct_with,
                           label_seed=label_seed, decisions_source=adj.folder(run_uri), **tables)
    except (OSError, pa.ArrowInvalid, duckdb.IOException) as exc:  # a shard unreadable, the disk full (spilling)
        raise StorageError(f"{run_uri}: cannot read the run's tables: {exc}") from exc
    if write:
        write_leaderboard(run_uri, lb, endpoint_override, raw=not adjudications)
    return lb


def unfinished(run_uri: str, endpoint_override: str | None = None) -> str | None:
    """Why the run's tables may hold only part of it — no attempt finished (no `_SUCCESS.json`), or
    a later attempt than the finished one has not — or None when its latest attempt finished.

    Why: reduce and report read whatever shards are written; a leaderboard of a run still being
    swept (or stopped midway) covers the graded part only, and must say so rather than pass for the run."""
    run = open_run(run_uri)
    attempts = [n for f in fs.list_files(run.attempts, suffix=".json", endpoint_override=endpoint_override)
                if (n := attempt_number(fs.basename(f))) is not None]
    if not fs.exists(run.success, endpoint_override):
        return f"no sweep of this run has finished ({run.success} is missing)"
    try:
        finished = json.loads(fs.read_bytes(run.success, endpoint_override)).get("attempt")
    except (ValueError, AttributeError):  # not a summary: what it says of the attempts is unknown
        finished = None
    latest = max(attempts, default=None)
    if isinstance(finished, int) and latest is not None and latest > finished:
        return f"its latest sweep attempt ({latest}) has not finished (the last finished one is attempt {finished})"
    return None


def _parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def write_leaderboard(run_uri: str, lb: Leaderboard, endpoint_override: str | None = None, *, raw: bool = False) -> None:
    """leaderboard.json + leaderboard.parquet + leaderboard_areas.parquet, each written whole
    (`raw`: the raw view's files, `RunFolder.leaderboard_files(raw=True)`, beside them)."""
    json_uri, parquet_uri, areas_uri = open_run(run_uri).leaderboard_files(raw=raw)
    files = {
        parquet_uri: _parquet_bytes(scores_table(lb.systems)),
        areas_uri: _parquet_bytes(scores_table(lb.by_area)),
        json_uri: lb.model_dump_json(indent=2).encode(),
    }
    for uri, data in files.items():
        fs.write_bytes_atomic(uri, data, endpoint_override)


def load_leaderboard(run_uri: str, endpoint_override: str | None = None) -> Leaderboard:
    """leaderboard.json of a reduced run."""
    return Leaderboard.model_validate_json(fs.read_bytes(open_run(run_uri).leaderboard_json, endpoint_override))


# --------------------------------------------------------------------------------------------
# Terminal
# --------------------------------------------------------------------------------------------


