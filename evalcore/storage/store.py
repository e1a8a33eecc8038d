"""Run storage: Parquet table schemas, the shard writer, run records and the resume index.

The run folder's layout is defined in `evalcore.storage.run_folder`; this module writes its tables
(`<table>/part-<shard>-a<attempt>.parquet`, `calls/preflight-<attempt>.parquet`,
`rejected/rejections-<attempt>.parquet`) and its run record.

Why this shape: no file of a run is ever overwritten by a later command. Every table file is
created, never replaced (`fs.write_new`: ``O_EXCL`` + link locally, ``If-None-Match: *`` on S3),
under a name that holds the attempt which wrote it, so a resumed, retried or concurrent writer adds
a file beside an earlier one instead of replacing it (replacing lost paid calls). Each file is
written whole (a reader never sees half a shard). Within a shard `submissions` is written last: a
submission counts as done only once all its rows are stored; an older grading's rows stay, and
readers take each submission's latest grading (`ResumeIndex`, `evalcore.results.reduce`). Shard
names are still deterministic (the shard's index in the task-by-task order of the accepted
submissions plus a hash of the submission ids in it), so a resumed run cuts the same shards. The
files rewritten whole are the derived ones only: `_SUCCESS.json` (a copy of the latest finished
attempt's record) and what `tribunal reduce` computes from the tables.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal, get_args, get_origin

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalcore.config.models import TribunalConfig, VendorMode
from evalcore.errors import StorageError
from evalcore.prompts import PROTOCOL_VERSION
from evalcore.schema import CallRow, FlagRow, Rejection, SubmissionRow, VerdictRow
from evalcore.storage import fs
from evalcore.storage.run_folder import folder_of

TableName = Literal["submissions", "verdicts", "flags", "calls", "rejected"]
TABLE_MODELS: dict[str, type[BaseModel]] = {
    "submissions": SubmissionRow,
    "verdicts": VerdictRow,
    "flags": FlagRow,
    "calls": CallRow,
    "rejected": Rejection,
}
WRITE_ORDER: tuple[TableName, ...] = ("rejected", "calls", "verdicts", "flags", "submissions")
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""A run id is one folder name under the output: no separator, no leading dot (so never `..`)."""


def valid_run_id(run_id: str) -> bool:
    """True when `run_id` names one folder under the output and nothing else."""
    return RUN_ID_PATTERN.fullmatch(run_id) is not None


def _arrow_type(annotation: Any) -> tuple[pa.DataType, bool]:
    """Map a pydantic field annotation to (arrow type, nullable)."""
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        inner, _ = _arrow_type(args[0])
        return inner, True
    if origin is Literal:
        return pa.string(), False
    if annotation is bool:
        return pa.bool_(), False
    if annotation is int:
        return pa.int64(), False
    if annotation is float:
        return pa.float64(), False
    if annotation is str:
        return pa.string(), False
    raise TypeError(f"no arrow type for {annotation!r}")


def arrow_schema(table: str) -> pa.Schema:
    """The documented Parquet schema of a table, derived from its row model (one source of truth)."""
    model = TABLE_MODELS[table]
    fields = []
    for name, f in model.model_fields.items():
        typ, nullable = _arrow_type(f.annotation)
        fields.append(pa.field(name, typ, nullable=nullable, metadata={"doc": f.description or ""}))
    return pa.schema(fields)


Row = BaseModel | Mapping[str, Any]
"""A row as built by the grading path (its table's model) or as a plain mapping (validated here)."""


def _validated(model: type[BaseModel], table: str, row: Row) -> BaseModel:
    if isinstance(row, BaseModel):
        if type(row) is not model:
            raise TypeError(f"a {type(row).__name__} cannot be written to the {table} table ({model.__name__})")
        return row
    return model.model_validate(dict(row))


def rows_to_table(table: str, rows: Sequence[Row]) -> pa.Table:
    """Rows (the table's model, or mappings validated against it) as an arrow table with the fixed schema."""
    model = TABLE_MODELS[table]
    clean = [_validated(model, table, r).model_dump() for r in rows]
    schema = arrow_schema(table)
    return pa.Table.from_pylist(clean, schema=schema)


def shard_name(index: int, submission_ids: Iterable[str], attempt: int | None = None) -> str:
    """Deterministic shard name: stream position plus a hash of exactly which submissions it holds,
    and the attempt that grades it (`-a0002`): a resumed shard is written beside the earlier one."""
    h = hashlib.sha256("\n".join(sorted(submission_ids)).encode()).hexdigest()[:12]
    name = f"part-{index:06d}-{h}"
    return name if attempt is None else f"{name}-a{attempt:04d}"


def table_file(run_uri: str, table: str, name: str) -> str:
    """The URI of one file of a table."""
    return folder_of(run_uri).table_file(table, name)


def parquet_bytes(table: pa.Table) -> bytes:
    """A table as the bytes of one zstd-compressed Parquet file (every file of a run is written whole)."""
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def _parquet(table: str, rows: Sequence[Row]) -> bytes:
    return parquet_bytes(rows_to_table(table, rows))


def write_table_file(run_uri: str, table: str, name: str, rows: Sequence[Row]) -> None:
    """Create one file of a table, whole (even with no rows); never replace one.

    An existing file under the name was written by another attempt or writer: it is reported
    (StorageError naming it), not overwritten, since it may hold paid calls.
    """
    uri = table_file(run_uri, table, name)
    if not fs.write_new(uri, _parquet(table, rows)):
        raise StorageError(f"{uri}: already exists (written by an earlier attempt or another command); "
                           "refusing to overwrite it")


MAX_SHARD_COPIES: Final = 100
"""How many executions of one shard within one attempt may store their rows (Ray re-runs a task
whose worker died, possibly after it wrote some of its files)."""


def write_shard(run_uri: str, name: str, tables: Mapping[str, Sequence[Row]]) -> dict[str, int]:
    """Write one shard of every table, `submissions` last; returns rows written per table.

    Every table's file of the shard has the same name (the review queue reads a grading's rows
    from it). When a file of that name already exists (an earlier execution of the shard in this
    attempt wrote it before its worker died; its calls were paid), this execution's files take the
    next free name, `<name>-r1`, `-r2`, ...: both copies' rows are kept, none is overwritten.
    """
    present = [t for t in WRITE_ORDER if tables.get(t)]
    for copy in range(MAX_SHARD_COPIES):
        candidate = name if copy == 0 else f"{name}-r{copy}"
        if any(fs.exists(table_file(run_uri, t, candidate)) for t in present):
            continue
        written: dict[str, int] = {}
        for table in present:
            write_table_file(run_uri, table, candidate, tables[table])
            written[table] = len(tables[table])
        return written
    raise StorageError(f"{table_file(run_uri, present[0], name)}: {MAX_SHARD_COPIES} copies of this shard exist; "
                       "refusing to write another")


REJECTIONS = "rejections"
"""The `rejected` table's files: `rejections-<attempt>.parquet`, one per attempt that finished
(it lists every input refused by that attempt's whole read); readers take the latest only."""


def rejections_name(attempt: int) -> str:
    """The name of an attempt's file of the `rejected` table."""
    return f"{REJECTIONS}-{attempt:04d}"


_REJECTIONS_FILE = re.compile(rf"{REJECTIONS}(?:-(\d+))?\.parquet")


def table_files(run_uri: str, table: str, endpoint_override: str | None = None) -> list[str]:
    """The files of a table a reader takes, sorted (hidden ones are not data).

    Every file, except that of the sweep's `rejected` files (`rejections-<n>`, or a run's older
    single `rejections`) only the latest attempt's counts: a fixed input's rejection disappears,
    and one is never counted twice.
    """
    files = [
        f for f in fs.list_files(folder_of(run_uri).table(table), suffix=".parquet", endpoint_override=endpoint_override)
        if not fs.is_hidden(fs.basename(f), "run")
    ]
    if table != "rejected":
        return files
    by_attempt = {f: int(m.group(1) or 0) for f in files if (m := _REJECTIONS_FILE.fullmatch(fs.basename(f)))}
    latest = [max(by_attempt, key=by_attempt.__getitem__)] if by_attempt else []
    return sorted([f for f in files if f not in by_attempt] + latest)


def read_table(run_uri: str, table: str, columns: list[str] | None = None,
               endpoint_override: str | None = None) -> pa.Table:
    """All shards of one table of a run (empty table with the schema when none exist)."""
    schema = arrow_schema(table)
    files = table_files(run_uri, table, endpoint_override)
    if not files:
        # not `schema.empty_table()`, which imports pandas (0.3-0.8 CPU-s): a vendor actor reads
        # the calls of a new run here before its first call, the sweep's preflight
        empty = pa.Table.from_batches([], schema=schema)
        return empty.select(columns) if columns else empty
    parts = [_read_part(fs.read_bytes(f, endpoint_override), schema, columns) for f in sorted(files)]
    return pa.concat_tables(parts, promote_options="default")


def _read_part(data: bytes, schema: pa.Schema, columns: list[str] | None) -> pa.Table:
    """One file of a table; a column the file was written without (it predates the column) reads
    as null, as in a dataset opened with the table's schema, instead of failing the read."""
    buf = io.BytesIO(data)
    present = pq.ParquetFile(buf).schema_arrow.names
    wanted = columns if columns is not None else present
    table = pq.read_table(buf, columns=[c for c in wanted if c in present])
    for c in wanted:
        if c not in present and c in schema.names:
            table = table.append_column(schema.field(c), pa.nulls(table.num_rows, schema.field(c).type))
    return table.select([c for c in wanted if c in table.column_names])


def write_json(uri: str, data: Mapping[str, Any]) -> None:
    """Write a JSON document whole (run.json, _SUCCESS.json, leaderboard.json)."""
    fs.write_bytes_atomic(uri, json.dumps(data, indent=2, sort_keys=True, default=str).encode())


def read_json(uri: str) -> dict[str, Any]:
    """Read a JSON document written by `write_json`."""
    data: dict[str, Any] = json.loads(fs.read_bytes(uri))
    return data


# --------------------------------------------------------------------------------------------
# run.json: the run record
# --------------------------------------------------------------------------------------------

RUN_RECORD_VERSION: Final = 1
"""Bumped whenever run.json changes shape; a reader refuses a version it does not know."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TaskRef(_Record):
    """One benchmark task as the run saw it."""

    id: str
    area: str
    n_criteria: int


class BenchmarkRef(_Record):
    """Which benchmark content the run graded (a run resumes only with the same content hash)."""

    uri: str
    content_hash: str
    tasks: list[TaskRef] = Field(description="Every loadable task: the leaderboard's denominator.")
    name: str | None = Field(default=None, description="The benchmark's name (benchmark.json, else its folder's); "
                             "None in runs recorded before it was kept.")
    version: str | None = Field(default=None, description="The benchmark's version (benchmark.json); None when "
                                "it states none, or in runs recorded before it was kept.")


class ModelRef(_Record):
    """A judge or the auditor: name, model and reasoning effort (family for judges)."""

    name: str
    family: str | None = None
    model: str
    effort: str | None = None


class RunRecord(_Record):
    """run.json: everything that produced a run, and nothing secret; written and read by this model only.

    Why one model: the sweep writes it, resume and `--reuse` check it, the reduction reads its
    configuration and task list. A record that does not validate is an error naming the file,
    never a partial record patched with defaults. Records written before the version field was
    added have the same shape as version 1 and read as such.
    """

    format_version: Literal[1] = RUN_RECORD_VERSION
    run_id: str
    created_at: float
    code_version: str
    vendors: VendorMode
    config_fingerprint: str
    config: TribunalConfig
    judges: list[ModelRef]
    auditor: ModelRef
    prompt_hashes: dict[str, str]
    benchmark: BenchmarkRef
    submissions_uri: str
    reuse: list[str] = Field(default_factory=list)
    protocol_version: str = Field(
        default=PROTOCOL_VERSION, description="The grading protocol's version (evalcore.prompts.PROTOCOL_VERSION); "
        "runs recorded before it was kept graded by 1.1, the only one there was.")

    def write(self, run_uri: str) -> None:
        """Write `<run_uri>/run.json` whole."""
        fs.write_bytes_atomic(folder_of(run_uri).record, self.model_dump_json(indent=2).encode())

    def create(self, run_uri: str) -> bool:
        """Create `<run_uri>/run.json`, never replacing one; False when the run already has a record."""
        return fs.write_new(folder_of(run_uri).record, self.model_dump_json(indent=2).encode())

    @classmethod
    def read(cls, run_uri: str, endpoint_override: str | None = None) -> RunRecord:
        """`<run_uri>/run.json`, validated; a missing or invalid record is a `StorageError` naming the file."""
        uri = folder_of(run_uri).record
        try:
            raw = fs.read_bytes(uri, endpoint_override)
        except FileNotFoundError as exc:
            raise StorageError(f"{uri}: not found — is {run_uri} a run folder written by `tribunal sweep`?") from exc
        except OSError as exc:
            raise StorageError(f"{uri}: unreadable run record: {exc}") from exc
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            why = (f"{exc.msg}: line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError)
                   else f"not UTF-8: {exc.reason}")
            raise StorageError(
                f"{uri}: damaged: not valid JSON ({why}); the file was cut short or "
                "edited: restore it, or start another run (another --run-id)"
            ) from exc
        if not isinstance(data, dict):
            raise StorageError(f"{uri}: damaged: a run record is a JSON object, this is a {type(data).__name__}")
        if data.get("format_version", RUN_RECORD_VERSION) != RUN_RECORD_VERSION:
            raise StorageError(
                f"{uri}: run record of format version {data['format_version']!r}; this tribunal reads version "
                f"{RUN_RECORD_VERSION}: it was written by another version of tribunal"
            )
        try:
            return cls.model_validate_json(raw)  # JSON mode, as it was written
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}" for e in exc.errors(include_url=False)[:5]
            )
            raise StorageError(
                f"{uri}: damaged: not a run record of format version {RUN_RECORD_VERSION} ({problems}); "
                "it was edited, or written by another version of tribunal"
            ) from exc


class ResumeIndex:
    """What a run already holds: completed submissions and paid judge calls.

    A submission is done when its latest row is `complete` (or `too_long`, which no retry can
    fix) with the same content hash; incomplete submissions are graded again, and their paid calls
    are served from the stored call rows instead of being sent again. Each repeat of a retest is a
    grading of its own (`repeat` k > 0), done or not apart from the original (repeat 0).
    """

    def __init__(self, done: Mapping[tuple[str, int], str]) -> None:
        self.done = dict(done)

    @classmethod
    def load(cls, run_uri: str) -> ResumeIndex:
        """One listing and one read of the `submissions` table."""
        t = read_table(run_uri, "submissions",
                       columns=["submission_id", "content_hash", "status", "graded_at", "repeat"])
        latest: dict[tuple[str, int], tuple[float, str, str]] = {}
        for sid, chash, status, at, repeat in zip(
            t.column("submission_id").to_pylist(),
            t.column("content_hash").to_pylist(),
            t.column("status").to_pylist(),
            t.column("graded_at").to_pylist(),
            t.column("repeat").to_pylist(),
            strict=True,
        ):
            key = (sid, int(repeat or 0))
            if key not in latest or at >= latest[key][0]:
                latest[key] = (at, chash, status)
        return cls({key: ch for key, (_, ch, st) in latest.items() if st in ("complete", "too_long")})

    def is_done(self, submission_id: str, content_hash: str, repeat: int = 0) -> bool:
        """True when this exact submission content is already graded to completion (its `repeat`-th repeat: k > 0)."""
        return self.done.get((submission_id, repeat)) == content_hash


def stored_calls(run_uris: Iterable[str], vendor: str) -> dict[str, tuple[str, str]]:
    """request_hash -> (paying run id, response JSON) of successful calls of one vendor.

    Feeds `evalcore.vendors.reuse.ReusingVendor`: a call whose hash is here is never sent again. A row
    that was itself reused points at the run that paid for it. Preflight calls are never served:
    their point is to reach the vendor now.
    """
    out: dict[str, tuple[str, str]] = {}
    for uri in run_uris:
        t = read_table(uri, "calls", columns=["request_hash", "vendor", "purpose", "outcome", "run_id", "reused_from",
                                              "response_json"])
        if not t.num_rows:  # a new run: nothing to filter (Arrow's compute imports pandas on its first call)
            continue
        # filter in Arrow: every vendor actor reads the table, and only its own successes matter
        t = t.filter(
            pc.and_(
                pc.and_(pc.equal(t.column("vendor"), vendor), pc.equal(t.column("outcome"), "ok")),
                pc.and_(pc.is_valid(t.column("response_json")), pc.not_equal(t.column("purpose"), "preflight")),
            )
        )
        for h, run_id, reused, resp in zip(
            t.column("request_hash").to_pylist(),
            t.column("run_id").to_pylist(),
            t.column("reused_from").to_pylist(),
            t.column("response_json").to_pylist(),
            strict=True,
        ):
            out.setdefault(h, (reused or run_id, resp))
    return out


def schema_markdown() -> str:
    """The table schemas as Markdown (the README's copy is checked against this by a test)."""
    out = []
    for table, model in TABLE_MODELS.items():
        out.append(f"#### `{table}` — {(model.__doc__ or '').strip().splitlines()[0]}\n")
        out.append("| column | type | null | meaning |\n|---|---|---|---|")
        for f in arrow_schema(table):
            doc = (f.metadata or {}).get(b"doc", b"").decode().replace("|", "\\|")  # a cell, not a column
            out.append(f"| `{f.name}` | {f.type} | {'yes' if f.nullable else ''} | {doc} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(schema_markdown())
