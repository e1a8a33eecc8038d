"""The reduction out of core: under a memory limit that forces DuckDB to spill to disk, a run
reduces to exactly the leaderboard of an in-memory reduction (the JSON byte for byte).

The run is generated here, vectorised (numpy/pyarrow), shard by shard as a sweep writes it, with
what the reduction's rules must handle: missing, incomplete and too_long submissions (so systems
are ranked over the tasks they share), superseded gradings, a shard written twice (duplicated
verdict rows), reused and preflight calls, flags and rejected files. ~1 M verdict rows: large
enough that 24 MB is well below what the reduction needs in memory, small enough to take seconds.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

from evalcore.config.load import load_config
from evalcore.results import session as session_mod
from evalcore.results.leaderboard import Leaderboard, scores_table
from evalcore.results.reduce import TableSource, reduce_tables
from evalcore.results.session import default_memory_limit
from evalcore.storage.store import RunRecord, arrow_schema, read_table, write_json
from tests.runfolder import JUDGES, test_record

TABLES = ("submissions", "verdicts", "flags", "calls", "rejected")
AREAS = ("real-estate", "employment", "litigation", "tax")
FAMILIES = ("gpt", "claude", "grok", "other")
SPILLING_LIMIT = "24MB"
"""About half of what this run needs in memory with one thread (it spills at 32 MB, not at 48 MB)."""


def _strings(values: list[str], idx: npt.ArrayLike) -> pa.Array:
    """A string column as a `take` from a few distinct values (no Python object per row)."""
    return pa.array(values, type=pa.string()).take(pa.array(np.asarray(idx, dtype=np.int64)))


CACHE_WRITE_COLUMNS = ("cache_write_tokens", "cache_write_usd")


def _write(run: Path, table: str, name: str, columns: dict[str, pa.Array], *, before_cache_writes: bool = False) -> None:
    """One shard; `before_cache_writes`: as written before the calls table had its cache-write columns."""
    schema = arrow_schema(table)
    if before_cache_writes:
        schema = pa.schema([f for f in schema if f.name not in CACHE_WRITE_COLUMNS])
    n = len(next(iter(columns.values())))
    # a column the generator leaves out: null, or 0 for `repeat` (not nullable: every row here is an original)
    arrays = [columns[f.name] if f.name in columns else pa.nulls(n, f.type) if f.nullable else pa.array([0] * n, f.type)
              for f in schema]
    (run / table).mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema), run / table / f"{name}.parquet")


def generate_run(run: Path, n_tasks: int = 200, n_systems: int = 30, n_criteria: int = 55, seed: int = 5) -> None:
    """A finished run's folder: run.json, shards of every table, _SUCCESS.json."""
    rng = np.random.default_rng(seed)
    tasks = [f"{AREAS[i % len(AREAS)]}/task-{i:04d}/scenario-01" for i in range(n_tasks)]
    systems = [f"{FAMILIES[s % len(FAMILIES)]}-sys-{s:02d}" for s in range(n_systems)]
    criteria = [f"C-{c:03d}" for c in range(1, n_criteria + 1)]
    judges = [j[0] for j in JUDGES]
    cfg = load_config(vendors="offline", overrides={"bootstrap_samples": 300})
    test_record("run-ooc", cfg, [{"id": t, "area": t.split("/")[0], "n_criteria": n_criteria} for t in tasks]).write(str(run))
    strength = rng.uniform(0.97, 0.999, n_systems)
    pairs = np.arange(n_tasks * n_systems)
    pairs = pairs[rng.random(pairs.size) >= 0.02]  # 2 % of (system, task) never submitted
    for shard, start in enumerate(range(0, pairs.size, 300)):
        sub = pairs[start : start + 300]
        again = sub[rng.random(sub.size) < 0.03]  # an earlier grading, superseded
        g_sub = np.concatenate([sub, again])
        attempt = np.concatenate([np.ones(sub.size, dtype=np.int64), np.zeros(again.size, dtype=np.int64)])
        g = g_sub.size
        g_s, g_t = g_sub // n_tasks, g_sub % n_tasks
        roll = rng.random(g)
        status = np.where(attempt == 0, 1, np.where(roll < 0.02, 1, np.where(roll < 0.03, 2, 0)))  # complete/incomplete/too_long
        verdict = np.where(rng.random((g, n_criteria, len(judges))) < strength[g_s][:, None, None], 0, 1)
        verdict[status == 1, 0, 2] = 2  # an abstention: the grading is incomplete
        passed = verdict == 0
        task_score = passed.all(axis=1).sum(axis=1) / len(judges)
        complete = status == 0
        audited = complete & (task_score > 0)
        material = np.where(audited, rng.poisson(0.2, g), 0)
        minor = np.where(audited, rng.poisson(0.4, g), 0)
        gated = audited & (material > 0)
        sub_ids = [f"{systems[a]}::{tasks[b]}" for a, b in zip(g_s, g_t, strict=True)]
        grading_ids = [f"g{k}-{x:07d}" for k, x in zip(attempt, g_sub, strict=True)]
        common = {
            "run_id": _strings(["run-ooc"], np.zeros(g)), "grading_id": pa.array(grading_ids),
            "submission_id": pa.array(sub_ids), "system": _strings(systems, g_s), "task_id": _strings(tasks, g_t),
            "area": _strings(list(AREAS), g_t % len(AREAS)),
        }
        fails = (~passed).sum(axis=1)
        scored = np.where(status == 0, 1.0, np.nan)
        name = f"part-{shard:06d}"
        _write(run, "submissions", name, {
            **common, "content_hash": _strings(["c"], np.zeros(g)),
            "status": _strings(["complete", "incomplete", "too_long"], status),
            "n_criteria": pa.array(np.full(g, n_criteria)), "task_score": pa.array(task_score * scored, from_pandas=True),
            "all_pass_judges": pa.array(passed.all(axis=1).sum(axis=1)),
            "criterion_pass_rate": pa.array(passed.mean(axis=(1, 2))),
            "near_pass_1": pa.array((fails <= 1).mean(axis=1)), "near_pass_2": pa.array((fails <= 2).mean(axis=1)),
            "audited": pa.array(audited), "material_flags": pa.array(material), "minor_flags": pa.array(minor),
            "gated": pa.array(gated), "hc_score": pa.array(np.where(gated, 0.0, task_score) * scored, from_pandas=True),
            "cost_usd": pa.array(np.zeros(g)), "graded_at": pa.array(100.0 + attempt),
        })
        rows = g * n_criteria * len(judges)
        r_g = np.repeat(np.arange(g), n_criteria * len(judges))
        r_c = np.tile(np.repeat(np.arange(n_criteria), len(judges)), g)
        r_j = np.tile(np.arange(len(judges)), g * n_criteria)
        v = verdict.reshape(-1)
        take = {k: a.take(pa.array(r_g)) for k, a in common.items()}
        verdicts = {
            **take, "criterion_id": _strings(criteria, r_c), "judge": _strings(judges, r_j),
            "judge_family": _strings([j[1] for j in JUDGES], r_j), "judge_model": _strings([j[2] for j in JUDGES], r_j),
            "verdict": _strings(["pass", "fail", "abstain"], v), "reasoning": _strings(["r"], np.zeros(rows)),
            "request_hash": pa.array(np.arange(rows) + start * 10**6).cast(pa.string()),
        }
        _write(run, "verdicts", name, verdicts)
        if shard % 7 == 3:  # this shard's worker died after writing: its re-run wrote the rows again
            _write(run, "verdicts", f"{name}-r1", verdicts)
        a_g = np.repeat(np.flatnonzero(audited), 2)
        c_g = np.concatenate([r_g, a_g])
        vendor = np.concatenate([r_j, np.full(a_g.size, 3)])
        n_calls = c_g.size
        reused = rng.random(n_calls) < 0.05
        _write(run, "calls", name, {
            **{k: a.take(pa.array(c_g)) for k, a in common.items() if k != "area"},
            "request_hash": pa.array(np.arange(n_calls) + start * 10**6).cast(pa.string()),
            "vendor": _strings([*judges, "auditor"], vendor), "family": _strings(["openai", "xai", "anthropic", "openai"], vendor),
            "model": _strings(["m"], np.zeros(n_calls)),
            "purpose": _strings(["rubric", "detect"], (vendor == 3).astype(np.int64)),
            "outcome": _strings(["ok"], np.zeros(n_calls)), "attempts": pa.array(np.ones(n_calls, dtype=np.int64)),
            "rate_limited": pa.array(np.zeros(n_calls, dtype=np.int64)),
            "input_tokens": pa.array(rng.integers(1000, 9000, n_calls)), "cached_input_tokens": pa.array(np.zeros(n_calls, dtype=np.int64)),
            "output_tokens": pa.array(rng.integers(50, 400, n_calls)), "reasoning_tokens": pa.array(np.zeros(n_calls, dtype=np.int64)),
            "cache_write_tokens": pa.array(rng.integers(0, 1000, n_calls)),
            "cache_write_usd": pa.array(np.where(reused, 0.0, rng.uniform(0.0, 0.001, n_calls))),
            "cost_usd": pa.array(np.where(reused, 0.0, rng.uniform(0.001, 0.01, n_calls))),
            "latency_s": pa.array(np.ones(n_calls)),
            "reused_from": pa.array(np.where(reused, "run-earlier", None).tolist(), type=pa.string()),
            "offline": pa.array(np.ones(n_calls, dtype=bool)), "started_at": pa.array(np.zeros(n_calls)),
            "ended_at": pa.array(np.ones(n_calls)),
        })
        f_g = np.concatenate([np.repeat(np.arange(g), material), np.repeat(np.arange(g), minor), np.flatnonzero(audited)])
        kind = np.concatenate([np.zeros(material.sum(), dtype=np.int64), np.ones(minor.sum(), dtype=np.int64),
                               np.full(int(audited.sum()), 2)])
        n_flags = f_g.size
        _write(run, "flags", name, {
            **{k: a.take(pa.array(f_g)) for k, a in common.items()}, "flag_index": pa.array(np.arange(n_flags)),
            "deliverable": _strings(["memo"], np.zeros(n_flags)), "span": _strings(["s"], np.zeros(n_flags)),
            "location": _strings(["p"], np.zeros(n_flags)),
            "category": _strings(["contradiction", "fabricated_source", "unsupported_specific"], rng.integers(0, 3, n_flags)),
            "explanation": _strings([""], np.zeros(n_flags)),
            "origin": _strings(["auditor", "grounding"], (rng.random(n_flags) < 0.3).astype(np.int64)),
            "status": _strings(["confirmed", "confirmed", "rejected"], kind),
            "materiality": pa.array(np.where(kind < 2, np.array(["material", "minor", ""])[kind], None).tolist(),
                                    type=pa.string()),
            "rationale": _strings([""], np.zeros(n_flags)), "auditor": _strings(["auditor"], np.zeros(n_flags)),
            "auditor_model": _strings(["m"], np.zeros(n_flags)),
        })
    _write(run, "rejected", "rejections-1", {
        "file": pa.array(["a.docx", "b.docx"]), "reason": pa.array(["not a docx file"] * 2),
        "system": pa.array([systems[0], systems[5]]), "task_id": pa.array([tasks[1], tasks[2]]),
    })
    _write(run, "calls", "part-preflight", {
        "run_id": pa.array(["run-ooc"] * 3), "grading_id": pa.array([""] * 3), "submission_id": pa.array([""] * 3),
        "system": pa.array([""] * 3), "task_id": pa.array([""] * 3), "request_hash": pa.array(["p1", "p2", "p3"]),
        "vendor": pa.array(judges), "family": pa.array([j[1] for j in JUDGES]), "model": pa.array(["m"] * 3),
        "purpose": pa.array(["preflight"] * 3), "outcome": pa.array(["ok"] * 3), "attempts": pa.array([1] * 3),
        "rate_limited": pa.array([0] * 3), "input_tokens": pa.array([10] * 3), "cached_input_tokens": pa.array([0] * 3),
        "output_tokens": pa.array([1] * 3), "reasoning_tokens": pa.array([0] * 3), "cost_usd": pa.array([1e-5] * 3),
        "latency_s": pa.array([0.1] * 3), "offline": pa.array([True] * 3), "started_at": pa.array([0.0] * 3),
        "ended_at": pa.array([0.1] * 3),
    }, before_cache_writes=True)
    write_json(str(run / "_SUCCESS.json"), {"run_id": "run-ooc"})


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ooc") / "run-ooc"
    generate_run(folder)
    return folder


def _datasets(run: Path) -> dict[str, TableSource]:
    """Every table as the sweep's reader opens it: a lazy dataset over its local shards."""
    return {name: pads.dataset(sorted(str(f) for f in (run / name).glob("*.parquet")), schema=arrow_schema(name),
                               format="parquet") for name in TABLES}


def _json(lb: Leaderboard) -> str:
    return lb.model_dump_json(indent=2)


def test_a_reduction_that_spills_to_disk_gives_the_in_memory_leaderboard_byte_for_byte(run: Path, tmp_path: Path) -> None:
    record = RunRecord.read(str(run))
    in_memory = reduce_tables(record, **{name: read_table(str(run), name) for name in TABLES},
                              memory_limit="8GB")
    spill = tmp_path / "spill"
    bounded = reduce_tables(record, **_datasets(run), threads=1, memory_limit=SPILLING_LIMIT,
                            temp_directory=str(spill))
    assert _json(bounded) == _json(in_memory)
    assert scores_table(bounded.by_area).equals(scores_table(in_memory.by_area))
    # what was checked is what a leaderboard at scale reports: systems ranked over their shared
    # tasks (some were never submitted), the pairwise matrix, judges, auditor, costs
    assert in_memory.pairwise is not None and len(in_memory.pairwise.systems) == 30
    assert {r.missing for r in in_memory.systems} != {0} and in_memory.judges.n_items_partial > 0
    assert in_memory.auditor.flags_raised > 0 and in_memory.cost_usd > 0


def test_the_limit_forces_spilling_a_reduction_without_a_usable_spill_directory_fails(run: Path, tmp_path: Path) -> None:
    record = RunRecord.read(str(run))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(duckdb.IOException):
        reduce_tables(record, **_datasets(run), threads=1, memory_limit=SPILLING_LIMIT,
                      temp_directory=str(blocker / "spill"))


def test_threads_do_not_change_the_leaderboard(run: Path) -> None:
    record = RunRecord.read(str(run))
    one, two = (_json(reduce_tables(record, **_datasets(run), threads=t)) for t in (1, 2))
    assert one == two


def test_the_spill_directory_a_reduction_makes_is_deleted(run: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_mod.tempfile, "tempdir", str(tmp_path))
    reduce_tables(RunRecord.read(str(run)), **_datasets(run), threads=1, memory_limit=SPILLING_LIMIT)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("machine", "limit"), [(24 << 30, "3072MB"), (8 << 30, "1024MB"), (1 << 30, "256MB"),
                                                (None, "3072MB")])
def test_the_default_memory_limit_is_a_share_of_the_machine_within_bounds(
    machine: int | None, limit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_mod, "machine_memory", lambda: machine)
    assert default_memory_limit() == limit
