"""The reduction's DuckDB session: bounded memory, a directory to spill to, the run's tables read in place.

Why: at leaderboard scale (500 systems × 2,000 tasks: 165 M verdict rows, 167 M call rows) the
group-bys of the reduction do not fit in the memory a reduction should take. DuckDB's own default
limit is 80 % of the machine, so it never spills before the machine is nearly full, and the
process holds more than DuckDB's buffers (Parquet reads in flight, the bootstrap's arrays). A
`Session` therefore always has

* a memory limit: given, or `default_memory_limit()`, a share of the machine (of its cgroup, in a
  container) within fixed bounds, 3 GiB on the 24 GiB benchmark machine;
* a temporary directory to spill to beyond it: given, or a fresh one in the system's temporary
  directory, deleted when the session closes;
* DuckDB's own Parquet reader for a dataset of local files (`Session.register`): streamed through
  Arrow, the judge analysis's group-by of 16.7 M verdict rows cost twice the CPU and three times
  the memory (2.4 GB; every string built twice, the Arrow batches outside DuckDB's limit), a plain
  scan four times the CPU. Tables in memory and datasets on other filesystems (S3) are scanned
  through Arrow.

None of this changes a figure: the queries are the same, and their results do not depend on where
DuckDB keeps its intermediate data (`tests/evalcore/results/test_reduce_out_of_core.py`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs

from evalcore.storage.store import arrow_schema

MEMORY_SHARE = 0.125
"""Share of the machine's memory DuckDB may hold before it spills (`default_memory_limit`)."""
MEMORY_LIMIT_RANGE = (256 << 20, 3 << 30)
"""Bounds on the default memory limit: 256 MiB to 3 GiB (at 3 GiB, 165 M verdict rows reduce
within 6 GB of peak RSS; more buys little, as the aggregates spill in partitions)."""

_SQL_TYPES = {"string": "VARCHAR", "large_string": "VARCHAR", "int64": "BIGINT", "int32": "INTEGER",
              "double": "DOUBLE", "float": "FLOAT", "bool": "BOOLEAN"}
"""The SQL type of each Arrow type a run table's columns have (`arrow_schema`)."""


def machine_memory() -> int | None:
    """Bytes of memory this process may use: the machine's, or its cgroup's limit if lower; None if unknown."""
    try:
        total = int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not a POSIX system, or it will not say
        return None
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total if total > 0 else None


def default_memory_limit() -> str:
    """DuckDB's memory limit unless one is given: `MEMORY_SHARE` of `machine_memory()` within
    `MEMORY_LIMIT_RANGE` (the upper bound when the machine's memory is unknown)."""
    total = machine_memory()
    low, high = MEMORY_LIMIT_RANGE
    limit = high if total is None else int(min(high, max(low, total * MEMORY_SHARE)))
    return f"{limit >> 20}MB"


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _sql_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Session:
    """One in-process DuckDB connection with bounded threads and memory and a directory to spill to."""

    def __init__(self, threads: int | None = None, memory_limit: str | None = None,
                 temp_directory: str | None = None) -> None:
        self._spill = None if temp_directory else tempfile.mkdtemp(prefix="tribunal-reduce-")
        self.con = duckdb.connect()
        try:
            if threads:
                self.con.execute(f"SET threads = {int(threads)}")
            self.con.execute("SET memory_limit = ?", [memory_limit or default_memory_limit()])
            self.con.execute("SET temp_directory = ?", [temp_directory or self._spill])
            self.con.execute("SET preserve_insertion_order = false")
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close DuckDB and delete the spill directory this session made (not one it was given)."""
        self.con.close()
        if self._spill:
            shutil.rmtree(self._spill, ignore_errors=True)

    def register(self, view: str, table: str, columns: list[str], source: pa.Table | pads.Dataset) -> None:
        """Make `view` the rows of run table `table` (`columns` of it, with their schema types).

        A dataset of local Parquet files is read by DuckDB itself; a shard without one of the
        columns (written before the column existed) reads it as NULL, as an Arrow dataset with the
        table's schema does. Anything else is scanned through Arrow.
        """
        if not (isinstance(source, pads.FileSystemDataset) and isinstance(source.filesystem, pafs.LocalFileSystem)
                and source.files):
            if isinstance(source, pa.Table):  # a table read before a column existed: the column reads as NULL
                schema = arrow_schema(table)
                for c in columns:
                    if c not in source.column_names:
                        source = source.append_column(schema.field(c), pa.nulls(source.num_rows, schema.field(c).type))
            self.con.register(view, source)
            return
        schema = arrow_schema(table)
        scan = f"read_parquet([{', '.join(_sql_string(f) for f in source.files)}], union_by_name = true)"
        present = {str(row[0]) for row in self.con.sql(f"DESCRIBE SELECT * FROM {scan}").fetchall()}
        select = ", ".join(
            f"CAST({_sql_name(c) if c in present else 'NULL'} AS {_SQL_TYPES[str(schema.field(c).type)]}) AS {_sql_name(c)}"
            for c in columns
        )
        self.con.execute(f"CREATE TEMP VIEW {view} AS SELECT {select} FROM {scan}")
