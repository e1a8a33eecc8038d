"""One API per run (`evalcore.storage.run.open_run`): every part of a run folder is read and written
through `Run`, typed, the same on a local folder and on S3 (moto's server on 127.0.0.1)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from evalcore.results import adjudications as adj
from evalcore.results.leaderboard import Leaderboard
from evalcore.results.reduce import reduce_tables
from evalcore.storage import fs
from evalcore.storage.lock import RunLock
from evalcore.storage.run import Run, open_run
from evalcore.storage.store import RunRecord
from evalcore.vendors.batch.journal import BatchJournal, BatchRecord
from tests.conftest import upload_tree
from tests.runfolder import build_run, synthetic_ground_truth

TABLES = ("verdicts", "flags", "calls", "rejected")


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("api") / "run"
    build_run(str(run), synthetic_ground_truth(n_tasks=4, n_criteria=3))
    return run


def _reduced(run: Run) -> Leaderboard:
    submissions = run.dataset("submissions")
    assert submissions is not None
    return reduce_tables(run.read_record(), submissions=submissions, **{t: run.dataset(t) for t in TABLES})


def _decision(run_id: str, system: str, task_id: str) -> adj.Adjudication:
    return adj.Adjudication(run_id=run_id, kind="flag", system=system, task_id=task_id, flag_index=0,
                            decision="overturned", reviewer="Ada", reason="the lease says so",
                            decided_at=dt.datetime(2026, 12, 1, tzinfo=dt.UTC))


def _every_part_round_trips(run: Run) -> None:
    record = run.read_record()
    assert isinstance(record, RunRecord) and run.has_record()
    calls = run.read_table("calls")
    assert isinstance(calls, pa.Table) and calls.num_rows > 0
    assert run.dataset("calls") is not None and run.dataset("no_such_table") is None
    assert run.table_files("submissions") and all(f.endswith(".parquet") for f in run.table_files("submissions"))

    lb = _reduced(run)
    run.write_leaderboard(lb)
    assert run.read_leaderboard() == lb
    run.write_leaderboard(lb.model_copy(update={"notes": ["raw"]}), raw=True)  # the raw view, apart
    assert run.read_leaderboard() == lb and run.read_leaderboard(raw=True).notes == ["raw"]

    row = calls.to_pylist()[0]
    decision = _decision(record.run_id, row["system"], row["task_id"])
    [uri] = run.record_decisions([decision])
    assert uri.startswith(run.adjudications)
    loaded = run.read_decisions()
    assert [d.decision_id for d in loaded.decisions] == [decision.decision_id] and not loaded.problems

    assert run.read_journal() == {} and run.read_purges() == [] and run.lock_holder() is None


def test_a_local_run_reads_and_writes_every_part_through_one_handle(local_run: Path) -> None:
    _every_part_round_trips(open_run(str(local_run)))


def test_an_s3_run_reads_and_writes_every_part_through_one_handle(
    local_run: Path, s3_server: str, s3_bucket: str, tmp_path: Path
) -> None:
    copy = tmp_path / "run"
    build_run(str(copy), synthetic_ground_truth(n_tasks=4, n_criteria=3))
    upload_tree(s3_server, copy, s3_bucket, "runs/r1")
    run = open_run(f"s3://{s3_bucket}/runs/r1/", s3_server)
    assert run.uri == f"s3://{s3_bucket}/runs/r1"  # one spelling of the run, whatever the caller typed
    _every_part_round_trips(run)


def test_a_run_is_unfinished_until_its_latest_attempt_writes_its_success_record(tmp_path: Path) -> None:
    run = open_run(str(tmp_path / "run"))
    fs.write_bytes_atomic(run.attempt(1), b'{"status": "running"}')
    assert run.attempt_numbers() == [1] and "no sweep of this run has finished" in (run.unfinished() or "")
    fs.write_bytes_atomic(run.success, json.dumps({"attempt": 1}).encode())
    assert run.unfinished() is None
    fs.write_bytes_atomic(run.attempt(2), b'{"status": "running"}')
    assert run.attempt_numbers() == [1, 2]
    assert run.unfinished() == ("its latest sweep attempt (2) has not finished (the last finished one is attempt 1)")


def test_a_run_names_the_command_holding_its_lock_and_nobody_once_released(tmp_path: Path) -> None:
    run = open_run(str(tmp_path / "run"))
    assert run.lock_holder() is None
    said: list[str] = []
    lock = RunLock.acquire(run.uri, command="tribunal sweep bench -s subs", renew_every_s=None, warn=said.append)
    try:
        assert "`tribunal sweep bench -s subs`" in (run.lock_holder() or "")
    finally:
        lock.release()
    assert run.lock_holder() is None and said == []


def test_the_journal_of_a_run_is_read_per_vendor_as_batch_records(tmp_path: Path) -> None:
    run = open_run(str(tmp_path / "run"))
    journal = BatchJournal.load(run.uri, "openai")
    record: Any = BatchRecord(vendor="openai", model="m", label="l1", submitted_at=1.0, requests=["h1"],
                              batch_id="batch_1")
    journal.save(record)
    [(vendor, [read])] = run.read_journal().items()
    assert vendor == "openai" and isinstance(read, BatchRecord) and read.batch_id == "batch_1"
