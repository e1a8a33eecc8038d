"""One run, read and written through one API: `open_run(uri)` → `Run`, a typed reader and writer
of every part of the run folder (its layout is `evalcore.storage.run_folder`).

    run = open_run("runs/demo")                     # or "s3://bucket/runs/demo", endpoint_override=…
    run.read_record()                               # run.json → RunRecord
    run.dataset("verdicts"), run.read_table("calls")  # the tables: lazy dataset, or read whole
    run.attempt_numbers(), run.unfinished()         # _attempts/ and _SUCCESS.json
    run.lock_holder()                               # _lock/: who writes into it right now
    run.read_journal(), run.read_purges()           # _batches/ and _purge/
    run.read_leaderboard(), run.write_leaderboard(lb)
    run.read_decisions(), run.record_decisions([...])  # adjudications/

Why one handle: every command read these parts through helpers of its own (the reduction's module
doubled as the reader the other commands imported, one of them taking its private Parquet helper);
Inspect AI gives its one artefact one API (`read_eval_log`, `write_eval_log`), and so does a run
here. Each part's format stays with its owner — the run record and tables `evalcore.storage.store`,
the journal and purge records `evalcore.vendors.batch.journal`, the lock `evalcore.storage.lock`,
the decisions `evalcore.results.adjudications`, the leaderboard model `evalcore.results.leaderboard`
— and `Run` is where a command reaches all of them, by one name, with one endpoint for S3.

Why not methods of `RunFolder`: the owners above take their paths from `RunFolder`; were it to
import them back, the modules would import each other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalcore.errors import StorageError
from evalcore.storage import fs
from evalcore.storage.run_folder import RunFolder, attempt_number, folder_of
from evalcore.storage.store import RunRecord, arrow_schema, parquet_bytes, read_table, table_files

if TYPE_CHECKING:
    import pyarrow as pa

    from evalcore.results.adjudications import Adjudication, AdjudicationLoad
    from evalcore.results.leaderboard import Leaderboard
    from evalcore.results.reduce import TableSource
    from evalcore.vendors.batch.journal import BatchRecord, PurgeRecord


@dataclass(frozen=True)
class Run(RunFolder):
    """A run folder (local or s3://), with a reader and a writer for each of its parts.

    `endpoint_override` is the S3 endpoint for s3:// runs (else AWS_ENDPOINT_URL[_S3] is used)."""

    endpoint_override: str | None = None

    # ------------------------------------------------------------------ run.json
    def read_record(self) -> RunRecord:
        """run.json, validated, with an actionable error when the folder is not a run."""
        return RunRecord.read(self.uri, self.endpoint_override)

    def has_record(self) -> bool:
        """Whether run.json exists (a run that was started)."""
        return fs.exists(self.record, self.endpoint_override)

    # ------------------------------------------------------------------ tables
    def table_files(self, table: str) -> list[str]:
        """The Parquet files a reader of `table` takes (`store.table_files`: superseded shards left out)."""
        return table_files(self.uri, table, self.endpoint_override)

    def dataset(self, table: str) -> TableSource | None:
        """One table as a lazy dataset over its shards, so a reader streams only the columns it
        needs; None when the run has no shard of it."""
        import pyarrow as pa
        import pyarrow.dataset as pads

        files = self.table_files(table)
        if not files:
            return None
        filesystem, _ = fs.resolve(files[0], self.endpoint_override)
        paths = [fs.resolve(f, self.endpoint_override)[1] for f in files]
        try:
            return pads.dataset(paths, schema=arrow_schema(table), format="parquet", filesystem=filesystem)
        except (OSError, pa.ArrowInvalid) as exc:
            raise StorageError(f"{self.table(table)}: cannot open the {table} shards: {exc}") from exc

    def read_table(self, table: str, columns: list[str] | None = None) -> pa.Table:
        """One table read whole (an empty table of its schema when the run has none of it)."""
        return read_table(self.uri, table, columns, self.endpoint_override)

    # ------------------------------------------------------------------ attempts
    def attempt_numbers(self) -> list[int]:
        """The numbers of the attempts recorded in `_attempts/`, in order."""
        files = fs.list_files(self.attempts, suffix=".json", endpoint_override=self.endpoint_override)
        return sorted(n for f in files if (n := attempt_number(fs.basename(f))) is not None)

    def unfinished(self) -> str | None:
        """Why the run's tables may hold only part of it — no attempt finished (no `_SUCCESS.json`),
        or a later attempt than the finished one has not — or None when its latest attempt finished.

        Why: reduce and report read whatever shards are written; a leaderboard of a run still being
        swept (or stopped midway) covers the graded part only, and must say so rather than pass for the run."""
        if not fs.exists(self.success, self.endpoint_override):
            return f"no sweep of this run has finished ({self.success} is missing)"
        try:
            finished = json.loads(fs.read_bytes(self.success, self.endpoint_override)).get("attempt")
        except (ValueError, AttributeError):  # not a summary: what it says of the attempts is unknown
            finished = None
        latest = max(self.attempt_numbers(), default=None)
        if isinstance(finished, int) and latest is not None and latest > finished:
            return f"its latest sweep attempt ({latest}) has not finished (the last finished one is attempt {finished})"
        return None

    # ------------------------------------------------------------------ lock
    def lock_holder(self) -> str | None:
        """Who writes into the run right now (`evalcore.storage.lock.live_holder`), or None."""
        from evalcore.storage.lock import live_holder

        return live_holder(self.uri, self.endpoint_override)

    # ------------------------------------------------------------------ batch journal, purges
    def read_journal(self) -> dict[str, list[BatchRecord]]:
        """Every readable batch record, per vendor entry (`journal.load_all`)."""
        from evalcore.vendors.batch.journal import load_all

        return load_all(self.uri, self.endpoint_override)

    def read_purges(self) -> list[PurgeRecord]:
        """What each purge deleted at the vendors (`journal.load_purges`)."""
        from evalcore.vendors.batch.journal import load_purges

        return load_purges(self.uri, self.endpoint_override)

    # ------------------------------------------------------------------ leaderboard
    def read_leaderboard(self, *, raw: bool = False) -> Leaderboard:
        """leaderboard.json of a reduced run (`raw`: the raw view's, `leaderboard_raw.json`)."""
        from evalcore.results.leaderboard import Leaderboard

        json_uri = self.leaderboard_files(raw=raw)[0]
        return Leaderboard.model_validate_json(fs.read_bytes(json_uri, self.endpoint_override))

    def write_leaderboard(self, lb: Leaderboard, *, raw: bool = False) -> None:
        """leaderboard.json + leaderboard.parquet + leaderboard_areas.parquet, each written whole
        (`raw`: the raw view's files beside them, so that looking at it never replaces the files in
        force). The JSON holds nothing time-dependent: reducing the same run twice gives identical bytes."""
        from evalcore.results.leaderboard import scores_table

        json_uri, parquet_uri, areas_uri = self.leaderboard_files(raw=raw)
        files = {
            parquet_uri: parquet_bytes(scores_table(lb.systems)),
            areas_uri: parquet_bytes(scores_table(lb.by_area)),
            json_uri: lb.model_dump_json(indent=2).encode(),
        }
        for uri, data in files.items():
            fs.write_bytes_atomic(uri, data, self.endpoint_override)

    # ------------------------------------------------------------------ the experts' decisions
    def read_decisions(self) -> AdjudicationLoad:
        """Every decision recorded in the run, and the files that could not be read (`adjudications.load`)."""
        from evalcore.results import adjudications

        return adjudications.load(self.uri, self.endpoint_override)

    def record_decisions(self, decisions: Sequence[Adjudication]) -> list[str]:
        """Record decisions create-only, all or none (`adjudications.record_all`); their URIs."""
        from evalcore.results import adjudications

        return adjudications.record_all(self.uri, decisions, self.endpoint_override)


def open_run(uri: str, endpoint_override: str | None = None) -> Run:
    """The run at `uri` (local folder or s3://): nothing is read until a part is asked for."""
    return Run(folder_of(uri).uri, endpoint_override)
