"""`tribunal release create NAME --run RUN…`: an immutable release from one or more runs.

The recipe: read each run's run.json and refuse a run whose sweep has not finished; check that the
runs can be ranked together (`evalcore.release.compatibility`, `--allow KEY` accepts a difference
and records it); decide which run each system is ranked from (`evalcore.release.model.assign_systems`);
take each run's rows of its systems (and its preflight calls), and each run's expert decisions in
force on them; reduce the union with the reduction of a run (`evalcore.results.reduce.reduce_tables`:
no second copy of a scoring rule — a system's rows and rates are those its own run gives, while
the paired ranks and tiers are computed over every system of the release); write it create-only
with the decisions frozen, and move `latest` forward.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from evalcore.call_accounting import PAID_SQL
from evalcore.errors import ReleaseError, StorageError
from evalcore.release.compatibility import Compatibility, compatibility, run_facts
from evalcore.release.model import (
    LatestPointer,
    PublishSettings,
    Release,
    ReleaseRun,
    SystemFacts,
    assign_systems,
    check_name,
)
from evalcore.results import adjudications as adj
from evalcore.results.leaderboard import Leaderboard, scores_table
from evalcore.results.reduce import columns_read, current_gradings, reduce_tables
from evalcore.storage import fs
from evalcore.storage.release_folder import open_release
from evalcore.storage.run import open_run
from evalcore.storage.store import RunRecord
from jobs.per_run.reduce import TABLES
from jobs.release.store import current_latest, move_latest, release_exists, write_release


@dataclass(frozen=True)
class Created:
    """What `release create` made: the release, its leaderboard, the accepted differences, `latest`."""

    release: Release
    board: Leaderboard
    compatibility: Compatibility
    latest: LatestPointer | None
    uri: str


FACT_COLUMNS = ["system", "grading_id", "reused_from", "cost_usd", "latency_s"]
"""What `system_facts` reads of the calls besides what the reduction reads."""


def _table(run_uri: str, name: str, systems: Sequence[str], endpoint_override: str | None) -> pa.Table | None:
    """One table of a run: the columns the reduction (and `system_facts`) read, only the rows of
    `systems` (and, for calls, the run's preflight calls), filtered while the shards are scanned."""
    source = open_run(run_uri, endpoint_override).dataset(name)
    if source is None:
        return None
    columns = list(dict.fromkeys(columns_read(name) + (FACT_COLUMNS if name == "calls" else [])))
    wanted = pc.field("system").isin(list(systems) + ([""] if name == "calls" else []))
    if isinstance(source, pa.Table):
        return source.filter(wanted).select(columns)
    return source.to_table(columns=columns, filter=wanted)


def _union(parts: list[pa.Table | None]) -> pa.Table | None:
    tables = [p for p in parts if p is not None]
    return pa.concat_tables(tables, promote_options="default") if tables else None


def _systems_of(run_uri: str, endpoint_override: str | None) -> set[str]:
    systems: set[str] = set()
    for name in ("submissions", "rejected"):
        source = open_run(run_uri, endpoint_override).dataset(name)
        if source is not None:
            col = source.to_table(columns=["system"]).column("system") if not isinstance(source, pa.Table) \
                else source.column("system")
            systems |= {s for s in col.to_pylist() if s}
    return systems


def system_facts(submissions: pa.Table, calls: pa.Table | None) -> dict[str, SystemFacts]:
    """Per system, over its current gradings: the calls it paid, cost and summed call latency per
    graded task (the judge time one task took; calls run concurrently, so a task's wall time is less)."""
    con = duckdb.connect()
    try:
        con.register("cur", current_gradings(submissions))
        if calls is None:
            calls = pa.table({"grading_id": pa.array([], pa.string()), "reused_from": pa.array([], pa.string()),
                              "cost_usd": pa.array([], pa.float64()), "latency_s": pa.array([], pa.float64())})
        con.register("calls", calls.select(["grading_id", "reused_from", "cost_usd", "latency_s"]))
        rows = con.sql(f"""
            WITH per_task AS (
              SELECT cur.system, cur.grading_id,
                     count(c.grading_id) FILTER (WHERE {PAID_SQL}) AS paid,
                     coalesce(sum(c.cost_usd) FILTER (WHERE {PAID_SQL}), 0) AS cost,
                     coalesce(sum(c.latency_s) FILTER (WHERE {PAID_SQL}), 0) AS latency
              FROM cur LEFT JOIN calls c ON c.grading_id = cur.grading_id
              GROUP BY cur.system, cur.grading_id)
            SELECT system, count(*), sum(paid), avg(cost), avg(latency), quantile_cont(latency, 0.9)
            FROM per_task GROUP BY system ORDER BY system""").fetchall()
    finally:
        con.close()
    return {str(s): SystemFacts(system=str(s), graded=int(n), paid_calls=int(p or 0),
                                cost_per_task_usd=None if c is None else round(float(c), 6),
                                latency_per_task_s=None if lat is None else round(float(lat), 3),
                                latency_p90_s=None if p90 is None else round(float(p90), 3))
            for s, n, p, c, lat, p90 in rows}


def _paid(calls: pa.Table | None) -> tuple[int, float]:
    if calls is None or calls.num_rows == 0:
        return 0, 0.0
    con = duckdb.connect()
    try:
        con.register("calls", calls)
        ((n, usd),) = con.sql(f"SELECT count(*), coalesce(fsum(cost_usd), 0) FROM calls WHERE {PAID_SQL}").fetchall()
    finally:
        con.close()
    return int(n), round(float(usd), 6)


def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def create_release(
    releases: str,
    name: str,
    runs: Sequence[str],
    *,
    allow: Sequence[str] = (),
    named: Mapping[str, str] | None = None,
    settings: PublishSettings | None = None,
    make_latest: bool = True,
    endpoint_override: str | None = None,
    now: float | None = None,
) -> Created:
    """Build release `name` under `releases` from the run folders `runs` (see the module docstring).

    `named`: system -> run id, for systems graded in several runs; `now`: the release's date
    (unix s; default the clock)."""
    check_name(name)
    if not runs:
        raise ReleaseError(name, "a release needs at least one run (--run RUN)")
    if release_exists(releases, name, endpoint_override):
        raise ReleaseError(open_release(releases, name).uri, "this release exists already: a release is never "
                           "overwritten (choose another name)")
    records: dict[str, tuple[str, RunRecord]] = {}
    for uri in runs:
        opened = open_run(uri, endpoint_override)
        record = opened.read_record()
        if record.run_id in records:
            raise ReleaseError(uri, f"run {record.run_id} is given twice ({records[record.run_id][0]})")
        why = opened.unfinished()
        if why is not None:
            raise ReleaseError(uri, f"not a finished run: {why}; finish the sweep (run it again) before releasing it")
        records[record.run_id] = (uri, record)
    compat = compatibility([r for _, r in records.values()], allow)
    if not compat.ok:
        raise ReleaseError(name, compat.refusal())
    assigned = assign_systems({rid: _systems_of(uri, endpoint_override) for rid, (uri, _) in records.items()},
                              dict(named or {}))
    by_run: dict[str, list[str]] = {}
    for system, rid in assigned.items():
        by_run.setdefault(rid, []).append(system)

    tables: dict[str, list[pa.Table | None]] = {t: [] for t in TABLES}
    decisions = adj.AdjudicationLoad()
    release_runs = []
    for rid, (uri, record) in sorted(records.items(), key=lambda kv: (kv[1][1].created_at, kv[0])):
        systems = sorted(by_run[rid])
        for t in TABLES:
            tables[t].append(_table(uri, t, systems, endpoint_override))
        own = open_run(uri, endpoint_override).read_decisions()
        kept = [d for d in own.decisions if d.system in systems]
        decisions.decisions.extend(kept)
        decisions.problems.extend(own.problems)
        run_calls = tables["calls"][-1]
        paid_calls, paid_usd = _paid(run_calls.filter(pc.not_equal(run_calls.column("system"), ""))
                                     if run_calls is not None else None)
        release_runs.append(ReleaseRun(
            run_id=rid, uri=uri, created_at=record.created_at, code_version=record.code_version, systems=systems,
            paid_calls=paid_calls, paid_usd=paid_usd, decisions=len(adj.AdjudicationLoad(decisions=kept).latest()),
        ))
    union = {t: _union(parts) for t, parts in tables.items()}
    submissions = union.pop("submissions")
    if submissions is None:
        raise ReleaseError(name, "the runs hold no graded submission")
    first = records[release_runs[0].run_id][1]
    try:
        board = reduce_tables(first.model_copy(update={"run_id": name}), submissions=submissions,
                              verdicts=union["verdicts"], flags=union["flags"], calls=union["calls"],
                              rejected=union["rejected"], decisions=decisions)
    except (OSError, pa.ArrowInvalid, duckdb.IOException) as exc:
        raise StorageError(f"{name}: cannot read the runs' tables: {exc}") from exc
    in_force = sorted(decisions.latest().values(), key=lambda d: (d.system, d.task_id, d.item, d.decision_id))
    latest = current_latest(releases, endpoint_override)
    release = Release(
        name=name, created_at=now if now is not None else time.time(),
        predecessor=latest.release if latest else None, runs=release_runs, systems=assigned,
        chosen={s: r for s, r in (named or {}).items()},
        facts=run_facts(first), allowed=compat.allowed,
        benchmark_name=first.benchmark.name, benchmark_version=first.benchmark.version,
        benchmark_hash=first.benchmark.content_hash, judges=first.judges, auditor=first.auditor,
        protocol_version=first.protocol_version, settings=settings or PublishSettings(),
    )
    folder = open_release(releases, name)
    facts = system_facts(submissions, union["calls"])
    files = {
        folder.leaderboard_parquet: _parquet(scores_table(board.systems)),
        folder.leaderboard_areas_parquet: _parquet(scores_table(board.by_area)),
        folder.decisions: json.dumps([d.model_dump(mode="json") for d in in_force], indent=1).encode(),
        folder.systems: json.dumps({k: v.model_dump() for k, v in facts.items()}, indent=1, sort_keys=True).encode(),
        folder.leaderboard_json: board.model_dump_json(indent=2).encode(),
    }
    write_release(releases, release, files, endpoint_override)
    pointer = move_latest(releases, release, endpoint_override) if make_latest else None
    return Created(release=release, board=board, compatibility=compat, latest=pointer, uri=fs.join(releases, name))
