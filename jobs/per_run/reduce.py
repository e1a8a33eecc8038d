"""`tribunal reduce RUN`: read a run folder (local or s3://), write its leaderboard, show it.

The I/O half of the reduction; the rules live in `evalcore.results.reduce` (pure). The run is read
and written through `evalcore.storage.run` (tables as lazy pyarrow datasets over the run's shards,
so the reduction reads only the columns it needs, streaming, from a local folder or S3 alike).

Writes into the run folder:
* ``leaderboard.json``         — the whole `Leaderboard` (judge analysis, auditor statistics, notes);
* ``leaderboard.parquet``      — one row per system (whole benchmark), rates with `_low`/`_high`;
* ``leaderboard_areas.parquet`` — one row per (system, practice area).
The JSON holds nothing time-dependent, so reducing the same run twice gives identical bytes.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from evalcore.errors import InputError, StorageError
from evalcore.results import adjudications as adj
from evalcore.results.labels import Labels, load_labels
from evalcore.results.leaderboard import Leaderboard
from evalcore.results.reduce import reduce_tables
from evalcore.storage.run import open_run

TABLES = ("submissions", "verdicts", "flags", "calls", "rejected")


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
    run = open_run(run_uri, endpoint_override)
    record = run.read_record()
    tables = {name: run.dataset(name) for name in TABLES}
    submissions = tables.pop("submissions")
    if submissions is None:
        raise StorageError(f"{run.table('submissions')}: no graded submissions in this run yet")
    loaded = run.read_decisions() if adjudications or (corrected and labels is None) else None
    decisions = loaded if adjudications else None
    correct_with: Labels | adj.AdjudicationLoad | None = None
    if labels is not None and not corrected:
        raise InputError(labels, "labels are read for the corrected rates: add --corrected")
    if corrected:
        correct_with = load_labels(labels, endpoint_override) if labels is not None else loaded
    try:
        lb = reduce_tables(record, submissions=submissions, threads=threads, memory_limit=memory_limit,
                           temp_directory=temp_directory, decisions=decisions, correct_with=correct_with,
                           label_seed=label_seed, decisions_source=run.adjudications, **tables)
    except (OSError, pa.ArrowInvalid, duckdb.IOException) as exc:  # a shard unreadable, the disk full (spilling)
        raise StorageError(f"{run_uri}: cannot read the run's tables: {exc}") from exc
    if write:
        run.write_leaderboard(lb, raw=not adjudications)
    return lb
