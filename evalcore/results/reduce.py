"""The reduction: a run's raw tables in, the leaderboard out (docs/METHODOLOGY.md, "Leaderboard").

Why one module: rates, costs, judge analysis and audit counts all query one DuckDB session (`_Reducer`).

Pure: it reads only the arrow tables / datasets it is given (`jobs/per_run/reduce.py` does the I/O) and
returns a `Leaderboard` (the model, and its flat Parquet form, are in `evalcore.results.leaderboard`).

At scale (docs/PERFORMANCE.md, "The reduction at scale": 500 systems × 2,000 tasks is 1 M
submissions and 165 M verdict rows) the work is bounded in memory by construction:

* The group-bys over verdict and call rows run in an in-process DuckDB with a memory limit (by
  default a share of the machine's memory) and a temporary directory to spill to, so a run
  larger than memory reduces instead of failing; local Parquet shards are read by DuckDB's own
  reader (`evalcore.results.session`). Only aggregates leave DuckDB: one row per current grading,
  per (grading, verdict pattern), per (system, task, vendor).
* Per-grading work is numpy over columns, never a Python object per row: systems, tasks and
  areas become integer codes (`pyarrow.compute.index_in`), the headline scores a systems × tasks
  matrix the ranking reads directly (`ranking.rank_matrix`).
* The bootstraps draw their resamples a block at a time (`stats.resample_chunks`) and run on a
  pool of `threads` threads (numpy releases the GIL); each interval has its own generator, so the
  figures do not depend on the order they are computed in.

Rules implemented here, each in one function named after it:

* `current_gradings` — a submission graded more than once in a run (an incomplete submission is
  re-graded on resume) counts by its latest grading (`graded_at`, ties broken by `grading_id`);
  verdicts and flags of superseded gradings are ignored. Calls are *all* counted for cost: they
  were paid. A call with `reused_from` set was paid by an earlier run and costs 0 here.
* Scored population — only `complete` submissions are scored. A benchmark task with no submission
  is `missing` (never scored 0); `incomplete` and `too_long` submissions are counted separately, so
  n_tasks = scored + incomplete + too_long + missing for every system.
* Rates are means over their own population: the pass rates over scored tasks, hallucinations per
  task over audited tasks, "lost to the gate" over passing tasks (task score > 0). Their 95%
  intervals come from one percentile bootstrap over the system's scored tasks (`evalcore.results.stats`).
* Judge analyses use the criterion verdicts of the current gradings on items (submission ×
  criterion) where every judge of the panel gave pass or fail; see `JudgeAnalysis`.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from itertools import combinations
from typing import Any, TypeAlias, TypeVar

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

from evalcore.call_accounting import paid_sum
from evalcore.grading.scoring import FlagOutcome, counted_materiality, is_passing
from evalcore.results import adjudications as adj
from evalcore.results import corrected, judge_noise, stats
from evalcore.results import repeatability as rep
from evalcore.results.labels import Labels
from evalcore.results.leaderboard import (
    ALL_AREAS,
    AdjudicationSummary,
    AuditorStats,
    FlagCount,
    JudgeAnalysis,
    JudgeRates,
    Leaderboard,
    PairAgreement,
    Pairwise,
    PurposeCost,
    SelfPreference,
    SystemChange,
    SystemScores,
    VendorCost,
)
from evalcore.results.ranking import rank_matrix
from evalcore.results.session import Session
from evalcore.storage.store import RunRecord, arrow_schema

TableSource: TypeAlias = pa.Table | pads.Dataset
"""What the reduction accepts for a table: an in-memory table or a (lazily scanned) dataset."""


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


_COLUMNS: dict[str, list[str]] = {
    "submissions": [
        "grading_id", "submission_id", "system", "task_id", "area", "status", "task_score",
        "criterion_pass_rate", "near_pass_1", "near_pass_2", "audited", "material_flags",
        "minor_flags", "gated", "hc_score", "graded_at", "repeat",
    ],
    "verdicts": ["grading_id", "criterion_id", "judge", "judge_family", "judge_model", "verdict"],
    "flags": ["grading_id", "flag_index", "system", "origin", "status", "category", "materiality",
              "span"],  # span: a decision on a flag holds only while the flag is the claim decided
    "calls": [
        "system", "task_id", "vendor", "purpose", "reused_from", "cost_usd", "input_tokens",
        "cached_input_tokens", "output_tokens", "reasoning_tokens", "cache_write_tokens", "cache_write_usd",
    ],
    "rejected": ["system", "task_id"],
}


def columns_read(table: str) -> list[str]:
    """The columns the reduction reads of `table`: a caller assembling its input (a release's union of
    runs) reads only these."""
    return list(_COLUMNS[table])


def _source(name: str, source: TableSource | None) -> TableSource:
    """The given table/dataset, or an empty one with the documented schema."""
    if source is None:
        return arrow_schema(name).empty_table().select(_COLUMNS[name])
    return source


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------


def current_gradings_sql(source: str = "submissions") -> str:
    """SQL selecting each submission's current grading: its latest `graded_at` (ties: grading_id)
    among its original gradings (`repeat` 0 or null: a run before the column). A retest's repeats
    never replace the original: they are read apart (`evalcore.results.repeatability`). `source`
    must have the `repeat` column (the run tables' schema has it; `current_gradings` adds it to a
    table without)."""
    return (
        f"SELECT * EXCLUDE (_rn) FROM (SELECT *, row_number() OVER (PARTITION BY submission_id "
        f"ORDER BY graded_at DESC, grading_id DESC) AS _rn FROM {source} WHERE coalesce(repeat, 0) = 0) WHERE _rn = 1"
    )


def with_repeat(table: pa.Table) -> pa.Table:
    """`table` with a `repeat` column (0 for every row when it had none: written before repeats existed)."""
    if "repeat" in table.column_names:
        return table
    return table.append_column("repeat", pa.array([0] * table.num_rows, pa.int64()))


def current_gradings(submissions: TableSource) -> pa.Table:
    """The current grading of every submission (the rule in the module docstring), as a table."""
    con = duckdb.connect()
    try:
        if isinstance(submissions, pa.Table):
            submissions = with_repeat(submissions)
        con.register("submissions", submissions)
        return con.sql(current_gradings_sql()).to_arrow_table()
    finally:
        con.close()


def _rank(values: Sequence[float | None]) -> list[int | None]:
    """Competition ranking (1, 2, 2, 4) by value, best first; None values are unranked."""
    known = np.asarray([v for v in values if v is not None], dtype=np.float64)
    known = np.sort(known[~np.isnan(known)])  # NaN is greater than nothing, as in a comparison
    return [None if v is None else 1 + int(known.size - np.searchsorted(known, v, side="right")) for v in values]


def _np(table: pa.Table, column: str, dtype: Any = np.float64, fill: float = 0.0) -> npt.NDArray[Any]:
    col = table.column(column)
    if col.null_count:
        col = col.fill_null(fill)
    return np.asarray(col.to_numpy(), dtype=dtype)


def _codes(column: pa.ChunkedArray | pa.Array, values: Sequence[str]) -> npt.NDArray[np.int64]:
    """Each row's position in `values` (-1 where absent): strings to integers without a Python object per row."""
    found = pc.index_in(column, value_set=pa.array(values, type=pa.string()))
    return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def _distinct(column: pa.ChunkedArray | pa.Array) -> list[str]:
    """The distinct non-null strings of a column, sorted."""
    return sorted(str(v) for v in pc.unique(column.drop_null() if column.null_count else column).to_pylist())


_T = TypeVar("_T")
_R = TypeVar("_R")


class _Reducer:
    """One reduction: holds the DuckDB connection, the run's settings and the bootstrap's threads."""

    def __init__(self, record: RunRecord, threads: int | None, memory_limit: str | None,
                 temp_directory: str | None) -> None:
        self.record = record
        self.config = record.config
        self.seed = int(self.config.seed)
        self.pairwise: Pairwise | None = None
        self.samples = int(self.config.bootstrap_samples)
        self.notes: list[str] = []
        self.threads = int(threads) if threads else (os.cpu_count() or 1)
        self.session = Session(threads, memory_limit, temp_directory)
        self.con = self.session.con
        self.repeats: dict[str, list[float]] = {}
        """Submission id -> its repeats' headline scores (`repeat_scores`): none without a retest."""

    def family(self, system: str) -> str | None:
        return self.config.family_of(system) if self.config.family_map else None

    def map(self, fn: Callable[[_T], _R], items: Iterable[_T]) -> list[_R]:
        """`fn` over `items` on the reduction's threads, results in order (the bootstraps: numpy
        releases the GIL while it draws, counts and sums; each interval has its own generator)."""
        work = list(items)
        if self.threads <= 1 or len(work) <= 1:
            return [fn(x) for x in work]
        with ThreadPoolExecutor(max_workers=self.threads) as pool:
            return list(pool.map(fn, work))

    # -- inputs ---------------------------------------------------------------------------

    def register(self, tables: Mapping[str, TableSource | None]) -> pa.Table:
        """Register the inputs; build `cur` (current gradings, numbered by `gidx`) and return it."""
        for name in _COLUMNS:
            self.session.register(f"{name}_in", name, _COLUMNS[name], _source(name, tables.get(name)))
        cols = ", ".join(_COLUMNS["submissions"])
        current = current_gradings_sql(f"(SELECT {cols} FROM submissions_in)")
        self.con.execute(
            "CREATE TEMP TABLE cur AS SELECT *, "
            f"(row_number() OVER (ORDER BY submission_id) - 1)::INTEGER AS gidx FROM ({current})"
        )
        return self.con.sql("SELECT * FROM cur ORDER BY gidx").to_arrow_table()

    def tasks(self, cur: pa.Table) -> dict[str, str]:
        """Benchmark task id -> area (from run.json; from the submissions if the record has none)."""
        refs = self.record.benchmark.tasks
        if refs:
            return {t.id: t.area for t in refs}
        self.notes.append(
            "run.json lists no benchmark tasks: the task list is taken from the submissions, so "
            "tasks no system submitted cannot be counted as missing"
        )
        return dict(zip(cur.column("task_id").to_pylist(), cur.column("area").to_pylist(), strict=True))

    def repeat_scores(self, submissions: TableSource) -> dict[str, list[float]]:
        """Each repeated submission's repeats' headline scores (`repeatability.grading_scores`,
        the original's left out: the current grading, adjudicated, is the first), read only for
        the submissions a retest repeated."""
        self.session.register("graded_in", "submissions", rep.SUBMISSION_COLUMNS, submissions)
        rows = self.con.sql(
            "SELECT * FROM graded_in WHERE submission_id IN "
            "(SELECT submission_id FROM graded_in WHERE coalesce(repeat, 0) > 0)").to_arrow_table()
        return {sid: scores[1:] for sid, scores in rep.grading_scores(rows).items()}

    # -- per-system scores -------------------------------------------------------------------

    def system_rows(
        self, cur: pa.Table, tasks: Mapping[str, str]
    ) -> tuple[list[SystemScores], list[SystemScores]]:
        """Every system's row over the whole benchmark and per area, ranked.

        Rows are grouped by integer codes (system, task, area) and every (system, area) row is one
        bootstrap on the reduction's threads; the headline scores go into a systems × tasks matrix
        for the ranking.
        """
        rejected = self.con.sql(
            "SELECT system, count(*) AS n FROM rejected_in WHERE system IS NOT NULL GROUP BY system"
        ).fetchall()
        rejected_by_system = {str(s): int(n) for s, n in rejected}
        task_list = sorted(tasks)
        task_code = _codes(cur.column("task_id"), task_list)
        in_bench = task_code >= 0
        outside = int((~in_bench).sum())
        if outside:
            self.notes.append(
                f"{outside} graded submission(s) are for tasks not in the benchmark and were ignored"
            )
        cur = cur.filter(pa.array(in_bench))
        task_code = task_code[in_bench]
        areas = sorted(set(tasks.values()))
        area_code = {a: i for i, a in enumerate(areas)}
        area_of_task = np.asarray([area_code[tasks[t]] for t in task_list], dtype=np.int64)
        tasks_per_area = np.bincount(area_of_task, minlength=len(areas))
        area_of_row = area_of_task[task_code]
        systems = sorted(set(_distinct(cur.column("system"))) | set(rejected_by_system))
        sys_of_row = _codes(cur.column("system"), systems)
        status = cur.column("status")
        cols = _Columns(
            complete=_np(cur.append_column("c", pc.equal(status, "complete")), "c", bool, False),
            incomplete=_np(cur.append_column("c", pc.equal(status, "incomplete")), "c", bool, False),
            too_long=_np(cur.append_column("c", pc.equal(status, "too_long")), "c", bool, False),
            hc=_np(cur, "hc_score"),
            task=_np(cur, "task_score"),
            crit=_np(cur, "criterion_pass_rate"),
            np1=_np(cur, "near_pass_1"),
            np2=_np(cur, "near_pass_2"),
            material=_np(cur, "material_flags"),
            minor=_np(cur, "minor_flags"),
            audited=_np(cur, "audited", bool, False),
            gated=_np(cur, "gated", bool, False),
        )
        order = np.argsort(sys_of_row, kind="stable")
        bounds = np.searchsorted(sys_of_row[order], np.arange(len(systems) + 1))
        # the headline score of every (system, task) scored: rows in the order above, the last one
        # kept if a system has two (as a dict built in that order would)
        scored = order[cols.complete[order] & (sys_of_row[order] >= 0)]
        hc = np.zeros((len(systems), len(task_list)), dtype=np.float64)
        hc_mask = np.zeros_like(hc)
        hc[sys_of_row[scored], task_code[scored]] = cols.hc[scored]
        hc_mask[sys_of_row[scored], task_code[scored]] = 1.0
        noise = judge_noise.cells(self.repeats, cur.column("submission_id").to_pylist(), scored, sys_of_row,
                                  task_code, hc)

        cost_all, cost_area = self.costs(tasks)
        jobs: list[tuple[int, int, npt.NDArray[np.int64]]] = []  # (system, area or -1, rows)
        for k in range(len(systems)):
            rows = order[bounds[k] : bounds[k + 1]]
            jobs.append((k, -1, rows))
            row_area = area_of_row[rows]
            jobs += [(k, a, rows[row_area == a]) for a in range(len(areas))]

        def score(job: tuple[int, int, npt.NDArray[np.int64]]) -> SystemScores:
            k, a, rows = job
            system = systems[k]
            if a < 0:
                return self._scores(system, self.family(system), ALL_AREAS, len(tasks), cols.take(rows),
                                    rejected_by_system.get(system, 0), cost_all.get(system, {}))
            return self._scores(system, self.family(system), areas[a], int(tasks_per_area[a]), cols.take(rows), 0,
                                cost_area.get((system, areas[a]), {}))

        rows_out = self.map(score, jobs)
        overall = [r for r, (_, a, _) in zip(rows_out, jobs, strict=True) if a < 0]
        per_area = [r for r, (_, a, _) in zip(rows_out, jobs, strict=True) if a >= 0]
        task_area = {ALL_AREAS: np.ones(len(task_list), dtype=bool)}
        task_area |= {area: area_of_task == a for a, area in enumerate(areas)}
        return (self._ranked(overall, systems, hc, hc_mask, task_area, noise),
                self._ranked(per_area, systems, hc, hc_mask, task_area, noise))

    def _scores(
        self,
        system: str,
        family: str | None,
        area: str,
        n_tasks: int,
        c: _Columns,
        rejected: int,
        costs: Mapping[str, VendorCost],
    ) -> SystemScores:
        """One row: counts, then every rate with one paired bootstrap over the scored tasks.

        Rates over a sub-population (hallucinations per *audited* task, share of *passing* tasks
        lost to the gate) are ratios Σ(x·in_subset) / Σ(in_subset) over the resampled scored
        tasks: the size of the sub-population varies with the resample, as it does in reality.
        """
        ok = c.complete
        scored = int(ok.sum())
        audited = c.audited[ok].astype(np.float64)
        passing = is_passing(c.task[ok]).astype(np.float64)
        ones = np.ones(scored)
        num = np.vstack([
            c.hc[ok], c.task[ok], c.crit[ok], c.np1[ok], c.np2[ok],
            c.material[ok] * audited, c.minor[ok] * audited, c.gated[ok] * passing,
        ])
        den = np.vstack([ones, ones, ones, ones, ones, audited, audited, passing])
        est = stats.bootstrap_ratio(num, den, rng=stats.rng_for(self.seed, system, area), n_resamples=self.samples)
        vendors = sorted(costs.values(), key=lambda v: v.vendor)
        return SystemScores(
            rank=None, system=system, family=family, area=area, n_tasks=n_tasks, scored=scored,
            missing=n_tasks - int(c.complete.size), incomplete=int(c.incomplete.sum()),
            too_long=int(c.too_long.sum()), rejected=rejected,
            hc_pass_rate=est[0], all_pass_rate=est[1], criterion_pass_rate=est[2],
            near_pass_1=est[3], near_pass_2=est[4],
            audited=int(audited.sum()), material_per_task=est[5], minor_per_task=est[6],
            passing=int(passing.sum()), gated=int((c.gated[ok] * passing).sum()), lost_to_gate=est[7],
            cost_usd=round(sum(v.cost_usd for v in vendors), COST_DECIMALS),
            tokens=sum(v.input_tokens + v.output_tokens for v in vendors),
            cost_by_vendor=vendors,
        )

    def _ranked(
        self,
        rows: list[SystemScores],
        systems: Sequence[str],
        hc: npt.NDArray[np.float64],
        hc_mask: npt.NDArray[np.float64],
        task_area: Mapping[str, npt.NDArray[np.bool_]],
        noise: judge_noise.Gradings | None = None,
    ) -> list[SystemScores]:
        """Rank rows within each area by the headline rate, with rank intervals and tiers; sort them.

        The competition rank orders by the point estimate; the rank interval and the tier come from
        one paired bootstrap of every two systems over their shared tasks (`evalcore.results.ranking`),
        on the area's columns of the headline matrix that some ranked system was scored on. With
        repeats (`noise`), they come from the two-level bootstrap (`judge_noise.with_judge_noise`), the task-only
        ones kept beside them.
        """
        out: list[SystemScores] = []
        by_area: dict[str, list[SystemScores]] = defaultdict(list)
        for r in rows:
            by_area[r.area].append(r)
        code = {s: k for k, s in enumerate(systems)}
        for area in sorted(by_area):
            group = by_area[area]
            ranks = _rank([r.hc_pass_rate.value for r in group])
            ranked = sorted(r.system for r, k in zip(group, ranks, strict=True) if k is not None)
            idx = np.asarray([code[s] for s in ranked], dtype=np.int64)
            m = hc_mask[idx][:, task_area[area]]
            used = m.any(axis=0)
            # C order, as `rank_systems` builds them: a row's sum is pairwise only along contiguous memory
            x = np.ascontiguousarray(hc[idx][:, task_area[area]][:, used])
            ranking = rank_matrix(ranked, x, np.ascontiguousarray(m[:, used]),
                                  rng=stats.rng_for(self.seed, "ranking", area), n_resamples=self.samples)
            tiers = ranking.tiers()
            position = {s: i for i, s in enumerate(ranking.systems)}
            better = ranking.separable.sum(axis=0)
            worse = ranking.separable.sum(axis=1)
            if area == ALL_AREAS:
                self.pairwise = Pairwise(
                    systems=ranking.systems, beats=[[round(p, 3) for p in row] for row in ranking.beats.tolist()],
                    separable=ranking.separable.tolist(),
                )
            out_area = []
            for r, k in zip(group, ranks, strict=True):
                i = position.get(r.system)
                # `Ranking.rank_interval`, from the column and row sums taken once
                low, high = (None, None) if i is None else (1 + int(better[i]), len(ranking.systems) - int(worse[i]))
                out_area.append(r.model_copy(update={"rank": k, "rank_low": low, "rank_high": high,
                                                     "tier": tiers.get(r.system)}))
            if noise is not None:
                out_area = judge_noise.with_judge_noise(
                    out_area, ranked, noise.area(idx, task_area[area], np.asarray(used)), np.ascontiguousarray(m[:, used]),
                    seed=self.seed, area=area, samples=self.samples)
            out_area.sort(key=lambda r: (r.rank is None, r.rank or 0, r.system))
            out.extend(out_area)
        return out

    # -- cost --------------------------------------------------------------------------------

    # what the run paid, by the one accounting of calls (`evalcore.call_accounting`); the
    # cache-write columns are NULL in shards written before they existed: nothing itemised then
    _COST_AGG = ", ".join([
        "count(*) AS calls, count(reused_from) AS reused_calls",
        paid_sum("cost_usd", fsum=True), paid_sum("input_tokens"), paid_sum("cached_input_tokens"),
        paid_sum("output_tokens"), paid_sum("reasoning_tokens"), paid_sum("cache_write_tokens"),
        paid_sum("cache_write_usd", fsum=True),
    ])
    _COST_SUM = (
        "sum(calls) AS calls, sum(reused_calls) AS reused_calls, fsum(cost_usd) AS cost_usd, "
        "sum(input_tokens) AS input_tokens, sum(cached_input_tokens) AS cached_input_tokens, "
        "sum(output_tokens) AS output_tokens, sum(reasoning_tokens) AS reasoning_tokens, "
        "sum(cache_write_tokens) AS cache_write_tokens, fsum(cache_write_usd) AS cache_write_usd"
    )

    def costs(
        self, tasks: Mapping[str, str]
    ) -> tuple[dict[str, dict[str, VendorCost]], dict[tuple[str, str], dict[str, VendorCost]]]:
        """Cost per (system, vendor) and per (system, area, vendor), from every call row."""
        task_table = pa.table(
            {"task_id": list(tasks), "area": list(tasks.values())},
            schema=pa.schema([("task_id", pa.string()), ("area", pa.string())]),
        )
        self.con.register("task_areas", task_table)
        self.con.execute(
            "CREATE OR REPLACE TEMP TABLE cost_sta AS SELECT system, task_id, vendor, "
            f"{self._COST_AGG} FROM calls_in GROUP BY system, task_id, vendor"
        )
        by_area: dict[tuple[str, str], dict[str, VendorCost]] = defaultdict(dict)
        for row in self.con.sql(
            f"SELECT c.system, t.area, c.vendor, {self._COST_SUM} FROM cost_sta c "
            "JOIN task_areas t USING (task_id) GROUP BY c.system, t.area, c.vendor"
        ).fetchall():
            by_area[(str(row[0]), str(row[1]))][str(row[2])] = _vendor_cost(row[2:])
        overall: dict[str, dict[str, VendorCost]] = defaultdict(dict)
        for row in self.con.sql(
            f"SELECT system, vendor, {self._COST_SUM} FROM cost_sta GROUP BY system, vendor"
        ).fetchall():
            overall[str(row[0])][str(row[1])] = _vendor_cost(row[1:])
        return overall, by_area

    def run_costs(self) -> list[VendorCost]:
        """Every call of the run by vendor (including calls with no system, e.g. preflight)."""
        rows = self.con.sql(
            f"SELECT vendor, {self._COST_SUM} FROM cost_sta GROUP BY vendor ORDER BY vendor"
        ).fetchall()
        return [_vendor_cost(r) for r in rows]

    def purpose_costs(self) -> list[PurposeCost]:
        """Every call of the run by vendor and purpose (rubric, detect, verify, preflight): what the
        report itemises, with the cache writes inside each."""
        rows = self.con.sql(
            f"SELECT vendor, purpose, {self._COST_AGG} FROM calls_in GROUP BY vendor, purpose ORDER BY vendor, purpose"
        ).fetchall()
        return [PurposeCost(purpose=str(r[1]), **_vendor_cost((r[0], *r[2:])).model_dump()) for r in rows]

    # -- judges ------------------------------------------------------------------------------

    def judge_names(self) -> tuple[list[str], dict[str, tuple[str | None, str | None]]]:
        """The panel's judges (configuration order first) with their family and model."""
        rows = self.con.sql(
            "SELECT judge, any_value(judge_family), any_value(judge_model) FROM verdicts_in GROUP BY judge"
        ).fetchall()
        seen = {str(j): (f, m) for j, f, m in rows}
        order = [j.name for j in (self.config.judges or [])]
        names = [j for j in order if j in seen] + sorted(j for j in seen if j not in order)
        if len(names) > 16:
            raise ValueError(f"{len(names)} distinct judges in the verdict table; the analysis supports 16")
        return names, seen

    def verdict_patterns(self, names: Sequence[str]) -> dict[str, npt.NDArray[np.int64]]:
        """(gidx, pass mask, rated mask, abstain mask) -> number of criteria, for current gradings.

        One scan of the verdict table: each judge is a bit; an item (grading × criterion) becomes
        three masks. Bit-or makes a duplicated verdict row harmless.
        """
        case = " ".join(f"WHEN ? THEN {1 << i}" for i in range(len(names)))
        bit = f"(CASE judge {case} ELSE 0 END)" if names else "0"
        return self.con.sql(
            f"""
            WITH items AS (
                SELECT c.gidx,
                       bit_or(CASE WHEN v.verdict = 'pass' THEN v.b ELSE 0 END) AS pass_mask,
                       bit_or(CASE WHEN v.verdict IN ('pass', 'fail') THEN v.b ELSE 0 END) AS rated_mask,
                       bit_or(CASE WHEN v.verdict = 'abstain' THEN v.b ELSE 0 END) AS abstain_mask
                FROM (SELECT grading_id, criterion_id, verdict, {bit} AS b FROM verdicts_in) v
                JOIN cur c USING (grading_id)
                GROUP BY c.gidx, v.criterion_id
            )
            SELECT gidx::BIGINT AS gidx, pass_mask::BIGINT AS pass_mask, rated_mask::BIGINT AS rated_mask,
                   abstain_mask::BIGINT AS abstain_mask, count(*)::BIGINT AS n
            FROM items GROUP BY ALL ORDER BY ALL
            """,
            params=list(names),
        ).fetchnumpy()

    def judges(self, cur: pa.Table) -> JudgeAnalysis:
        """Per-judge rates, Cohen's κ per pair, Fleiss' κ, self-family preference."""
        names, meta = self.judge_names()
        m = len(names)
        p = self.verdict_patterns(names)
        gidx, pass_mask, rated, abstain, n = (np.asarray(p[k], dtype=np.int64) for k in
                                              ("gidx", "pass_mask", "rated_mask", "abstain_mask", "n"))
        bits = np.array([1 << i for i in range(m)], dtype=np.int64)
        full = int(bits.sum())
        rated_by = (rated[:, None] & bits) > 0  # (rows, m)
        pass_by = (pass_mask[:, None] & bits) > 0
        abst_by = (abstain[:, None] & bits) > 0
        common = rated == full
        n_items = int(n[common].sum())
        judge_rates = []
        for i, name in enumerate(names):
            passes = int(n[pass_by[:, i]].sum())
            fails = int(n[rated_by[:, i] & ~pass_by[:, i]].sum())
            abstentions = int(n[abst_by[:, i]].sum())
            family, model = meta[name]
            judge_rates.append(JudgeRates(
                judge=name, family=family, model=model, verdicts=passes + fails + abstentions,
                passes=passes, fails=fails, abstentions=abstentions,
                pass_rate=passes / (passes + fails) if passes + fails else None,
                pass_rate_common=float(n[common & pass_by[:, i]].sum() / n_items) if n_items else None,
            ))
        # agreement on the common items: aggregate by pass pattern
        total = np.bincount(pass_mask[common], weights=n[common], minlength=1 << m) if m else np.zeros(1)
        passed = np.stack([(np.arange(1 << m) >> i) & 1 for i in range(m)]) if m else np.zeros((0, 1), dtype=np.int64)
        cohen = []
        for i, j in combinations(range(m), 2):
            table = np.array([[total[(passed[i] == a) & (passed[j] == b)].sum() for b in (1, 0)] for a in (1, 0)])
            cohen.append(PairAgreement(
                judge_a=names[i], judge_b=names[j], kappa=stats.cohen_kappa_from_table(table),
                agreement=float(np.trace(table) / n_items) if n_items else None, n_items=n_items,
            ))
        fleiss = None
        if m >= 2:
            n_pass = passed.sum(axis=0)
            fleiss = stats.fleiss_kappa(np.stack([n_pass, m - n_pass], axis=1), weights=total)
        return JudgeAnalysis(
            judges=judge_rates, n_items=n_items, n_items_partial=int(n[~common].sum()), cohen=cohen,
            fleiss_kappa=fleiss,
            self_preference=self.self_preference(cur, judge_rates, gidx[common], pass_by[common], n[common]),
        )

    def self_preference(
        self,
        cur: pa.Table,
        judges: Sequence[JudgeRates],
        gidx: npt.NDArray[np.int64],
        pass_by: npt.NDArray[np.bool_],
        n: npt.NDArray[np.int64],
    ) -> list[SelfPreference]:
        """Per judge: its pass rate minus the other judges' mean, on its own family's systems.

        Families are looked up once per system and spread to the gradings by system code; the 2 × m
        bootstraps over submissions (the largest of the reduction: 2,000 resamples of up to 750,000
        submissions each at 500 systems) run on the reduction's threads.
        """
        m = len(judges)
        n_sub = cur.num_rows
        items = np.bincount(gidx, weights=n, minlength=n_sub)  # common items per grading
        passes = np.stack([np.bincount(gidx, weights=n * pass_by[:, i], minlength=n_sub) for i in range(m)], axis=1) \
            if m else np.zeros((n_sub, 0))
        systems = _distinct(cur.column("system"))
        sys_of_row = _codes(cur.column("system"), systems)  # -1 (no system): the None appended below
        fam_of_system = np.asarray([*(self.family(s) for s in systems), None], dtype=object)
        fam = fam_of_system[sys_of_row]
        known = np.asarray([f is not None for f in fam_of_system], dtype=bool)[sys_of_row]
        has_items = items > 0
        masks: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]] = []
        for i, jr in enumerate(judges):
            others = (passes.sum(axis=1) - passes[:, i]) / max(m - 1, 1)
            diff = passes[:, i] - others
            own = has_items & (fam == jr.family) if jr.family is not None else np.zeros(n_sub, dtype=bool)
            masks.append((diff, others, own, has_items & known & ~own))

        def interval(job: tuple[int, str]) -> stats.Interval:
            i, kind = job
            diff, _, own, ctl = masks[i]
            sel = own if kind == "self" else ctl
            return stats.bootstrap_ratio(diff[sel], items[sel], rng=stats.rng_for(self.seed, judges[i].judge, kind),
                                         n_resamples=self.samples)[0]

        deltas = self.map(interval, [(i, kind) for i in range(m) for kind in ("self", "control")])
        out = []
        for i, jr in enumerate(judges):
            _, others, own, _ = masks[i]
            n_own = float(items[own].sum())
            out.append(SelfPreference(
                judge=jr.judge, family=jr.family, systems=[systems[k] for k in np.unique(sys_of_row[own])],
                n_items=int(n_own),
                judge_pass_rate=float(passes[own, i].sum() / n_own) if n_own else None,
                others_pass_rate=float(others[own].sum() / n_own) if n_own else None,
                delta=deltas[2 * i], control_delta=deltas[2 * i + 1],
            ))
        return out

    # -- label-corrected rates ------------------------------------------------------------------

    def expert_sample(self, raw: pa.Table, source: Labels | adj.AdjudicationLoad, seed: int,
                      decisions_source: str) -> corrected.ExpertSample:
        """The experts' whole-labelled submissions (`corrected.experts_from_decisions` / `_from_labels`),
        with the criteria and flags of the raw current gradings they are checked against."""
        complete = raw.filter(pc.equal(raw.column("status"), "complete").fill_null(False))
        gradings = {(str(s), str(t)): str(g) for s, t, g in zip(
            complete.column("system").to_pylist(), complete.column("task_id").to_pylist(),
            complete.column("grading_id").to_pylist(), strict=True)}
        criteria: dict[str, list[str]] = defaultdict(list)
        for gid, cid in self.con.sql(
            "SELECT DISTINCT v.grading_id, v.criterion_id FROM verdicts_in v JOIN cur c USING (grading_id) "
            "WHERE c.status = 'complete' ORDER BY ALL"
        ).fetchall():
            criteria[str(gid)].append(str(cid))
        if isinstance(source, Labels):
            return corrected.experts_from_labels(source, seed, gradings, criteria)
        flags: dict[str, dict[int, FlagOutcome]] = defaultdict(dict)
        for gid, index, status, materiality in self.con.sql(
            "SELECT f.grading_id, f.flag_index, f.status, f.materiality FROM flags_in f JOIN cur c USING (grading_id) "
            "WHERE c.status = 'complete' AND f.status <> 'merged'"
        ).fetchall():
            flags[str(gid)][int(index)] = FlagOutcome(str(status), None if materiality is None else str(materiality))
        return corrected.experts_from_decisions(decisions_source, gradings, criteria, flags, source.latest())

    # -- auditor -----------------------------------------------------------------------------

    def auditor(self, cur: pa.Table) -> AuditorStats:
        """Flags of current gradings by origin, status, category and materiality."""
        rows = self.con.sql(
            "SELECT f.origin, f.status, f.category, f.materiality, c.system, count(*) FROM flags_in f "
            "JOIN cur c USING (grading_id) GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        counts: dict[tuple[str, str, str, str | None], int] = defaultdict(int)
        by_origin: dict[str, int] = defaultdict(int)
        by_status: dict[str, int] = defaultdict(int)
        by_cat: dict[str, dict[str, int]] = defaultdict(lambda: {"material": 0, "minor": 0})
        by_sys: dict[str, dict[str, dict[str, int]]] = defaultdict(
            lambda: defaultdict(lambda: {"material": 0, "minor": 0})
        )
        for origin, status, category, materiality, system, n in rows:
            counts[(origin, status, category, materiality)] += n
            by_origin[origin] += n
            by_status[status] += n
            kind = counted_materiality(status, materiality)
            if kind is not None:
                by_cat[category][kind] += n
                by_sys[system][category][kind] += n
        complete = pc.equal(cur.column("status"), "complete")
        audited = int(pc.sum(pc.and_(complete, pc.fill_null(cur.column("audited"), False))).as_py() or 0)
        return AuditorStats(
            audited_submissions=audited,
            flags_raised=sum(by_origin.values()),
            by_origin=dict(sorted(by_origin.items())),
            by_status=dict(sorted(by_status.items())),
            confirmed_by_category={k: dict(v) for k, v in sorted(by_cat.items())},
            confirmed_by_system={
                s: {c: dict(v) for c, v in sorted(cs.items())} for s, cs in sorted(by_sys.items())
            },
            counts=[
                FlagCount(origin=o, status=s, category=c, materiality=mt, count=n)
                for (o, s, c, mt), n in counts.items()
            ],
        )


@dataclass(frozen=True)
class _Columns:
    """The per-grading numbers one system row needs, as aligned numpy arrays."""

    complete: npt.NDArray[np.bool_]
    incomplete: npt.NDArray[np.bool_]
    too_long: npt.NDArray[np.bool_]
    hc: npt.NDArray[np.float64]
    task: npt.NDArray[np.float64]
    crit: npt.NDArray[np.float64]
    np1: npt.NDArray[np.float64]
    np2: npt.NDArray[np.float64]
    material: npt.NDArray[np.float64]
    minor: npt.NDArray[np.float64]
    audited: npt.NDArray[np.bool_]
    gated: npt.NDArray[np.bool_]

    def take(self, rows: npt.NDArray[np.int64]) -> _Columns:
        return _Columns(**{f.name: getattr(self, f.name)[rows] for f in fields(self)})


COST_DECIMALS = 9
"""Costs are rounded to nano-dollars: DuckDB adds floats in parallel, in no fixed order, and the
leaderboard must come out byte-identical every time (compensated sums + rounding make it so)."""


def _vendor_cost(row: Sequence[Any]) -> VendorCost:
    vendor, calls, reused, cost, tin, tcached, tout, treason, twrite, write_usd = row
    return VendorCost(
        vendor=str(vendor), calls=int(calls or 0), reused_calls=int(reused or 0), cost_usd=round(float(cost or 0.0), COST_DECIMALS),
        input_tokens=int(tin or 0), cached_input_tokens=int(tcached or 0), output_tokens=int(tout or 0),
        reasoning_tokens=int(treason or 0), cache_write_tokens=int(twrite or 0),
        cache_write_usd=round(float(write_usd or 0.0), COST_DECIMALS),
    )


def reduce_tables(
    record: RunRecord,
    *,
    submissions: TableSource,
    verdicts: TableSource | None = None,
    flags: TableSource | None = None,
    calls: TableSource | None = None,
    rejected: TableSource | None = None,
    threads: int | None = None,
    memory_limit: str | None = None,
    temp_directory: str | None = None,
    decisions: adj.AdjudicationLoad | None = None,
    correct_with: Labels | adj.AdjudicationLoad | None = None,
    label_seed: int | None = None,
    decisions_source: str = "the run's decisions",
) -> Leaderboard:
    """Reduce a run's tables to its leaderboard.

    `correct_with` adds the label-corrected rates (`evalcore.results.corrected`): the experts'
    labels of a uniform random sample of whole submissions, from the review's `full` section (the
    run's decisions) or a labels file covering the first submissions of the seeded order
    `label_seed` (default: the run's seed). Refused (`corrected.SampleRefused`) when the sample is
    not uniform. `decisions_source` names the decisions' folder in messages.

    `decisions` are the experts' recorded decisions (`evalcore.results.adjudications.load`): the
    decided submissions are rescored by the rules in `scoring` before the rates are computed, and
    the leaderboard says what changed. None (or no decision) gives the raw view.

    `record` is the run's run.json (`RunRecord`); each table is an arrow Table or Dataset with (at least) the
    columns of its row model in `evalcore.schema`; a missing table means "no rows". Only the
    columns the reduction needs are read.

    Bounds: `threads` for DuckDB and the bootstraps (default: every core); `memory_limit` for
    DuckDB (e.g. "4GB"; default `session.default_memory_limit()`), beyond which it spills to
    `temp_directory` (default: a fresh directory in the system's temporary directory, deleted at
    the end). Any bounds give the same leaderboard.
    """
    red = _Reducer(record, threads, memory_limit, temp_directory)
    try:
        cur = red.register(
            {"submissions": submissions, "verdicts": verdicts, "flags": flags, "calls": calls, "rejected": rejected}
        )
        tasks = red.tasks(cur)
        summary = None
        raw = cur
        if decisions is not None and (decisions.decisions or decisions.problems):
            cur, effect = adj.apply(red.con, raw, decisions.latest())
            summary = _adjudication_summary(raw, cur, tasks, effect, decisions)
        red.repeats = red.repeat_scores(submissions)
        corrected_summary = None
        # the judges' own rates beside the corrected ones are the raw panel's (computed apart only
        # when decisions changed the current gradings)
        raw_rows = red.system_rows(raw, tasks)[0] if correct_with is not None and raw is not cur else None
        overall, per_area = red.system_rows(cur, tasks)
        if correct_with is not None:
            sample = red.expert_sample(raw, correct_with, red.seed if label_seed is None else label_seed,
                                       decisions_source)
            judges_rates: dict[str, dict[str, stats.Interval]] = {
                r.system: {str(name): getattr(r, name) for name in corrected.RATES} for r in raw_rows or overall}
            corrected_summary = corrected.corrected_rates(raw, tasks, sample, judges_rates)
        judges = red.judges(cur)
        auditor = red.auditor(cur)
        run_costs = red.run_costs()
        purpose_costs = red.purpose_costs()
    finally:
        red.session.close()
    return Leaderboard(
        run_id=record.run_id,
        code_version=record.code_version,
        vendors=record.vendors,
        benchmark_uri=record.benchmark.uri,
        benchmark_hash=record.benchmark.content_hash,
        n_tasks=len(tasks),
        areas=sorted(set(tasks.values())),
        seed=red.seed,
        bootstrap_samples=red.samples,
        systems=overall,
        by_area=per_area,
        judges=judges,
        auditor=auditor,
        cost_by_vendor=run_costs,
        cost_usd=round(sum(c.cost_usd for c in run_costs), COST_DECIMALS),
        cost_by_purpose=purpose_costs,
        cache_write_usd=round(sum(c.cache_write_usd for c in run_costs), COST_DECIMALS),
        notes=red.notes,
        pairwise=red.pairwise,
        adjudication=summary,
        corrected=corrected_summary,
    )


def _headline(cur: pa.Table, tasks: Mapping[str, str]) -> dict[str, float]:
    """Each system's headline rate (mean hc score over its complete submissions of benchmark tasks).

    Sums in row order (`np.bincount`), as a running Python sum would.
    """
    systems = _distinct(cur.column("system"))
    code = _codes(cur.column("system"), systems)
    hc = cur.column("hc_score")
    ok = (np.asarray(pc.equal(cur.column("status"), "complete").fill_null(False).to_numpy(zero_copy_only=False))
          & (_codes(cur.column("task_id"), list(tasks)) >= 0)
          & np.asarray(hc.is_valid().to_numpy(zero_copy_only=False)))
    values = np.asarray(hc.fill_null(0.0).to_numpy(zero_copy_only=False), dtype=np.float64)
    total = np.bincount(code[ok], weights=values[ok], minlength=len(systems))
    count = np.bincount(code[ok], minlength=len(systems))
    return {s: float(total[k] / count[k]) for k, s in enumerate(systems) if count[k]}


def _adjudication_summary(raw: pa.Table, adjudicated: pa.Table, tasks: Mapping[str, str], effect: adj.Effect,
                          decisions: adj.AdjudicationLoad) -> AdjudicationSummary:
    """Per system: decisions in force, and the headline rate and rank raw → adjudicated."""
    before, after = _headline(raw, tasks), _headline(adjudicated, tasks)
    systems = sorted(set(before) | set(after))
    rank_before = dict(zip(systems, _rank([before.get(s) for s in systems]), strict=True))
    rank_after = dict(zip(systems, _rank([after.get(s) for s in systems]), strict=True))
    changes = [
        SystemChange(system=s, decisions=effect.by_system.get(s, 0), hc_pass_rate_before=before.get(s),
                     hc_pass_rate_after=after.get(s), rank_before=rank_before[s], rank_after=rank_after[s])
        for s in systems
        if effect.by_system.get(s) or rank_before[s] != rank_after[s]
    ]
    return AdjudicationSummary(
        decisions_in_force=effect.decisions_in_force, decisions_recorded=len(decisions.decisions),
        by_system=effect.by_system, changes=changes, rescored=effect.rescored, unmatched=effect.unmatched,
        problems=decisions.problems,
    )
