"""Run storage: fixed schemas, whole-or-nothing shards with deterministic names, resume index."""

from __future__ import annotations

import re

import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

from evalcore.storage.store import (
    ResumeIndex,
    arrow_schema,
    read_table,
    rows_to_table,
    shard_name,
    stored_calls,
    write_shard,
)


def _sub(sid: str, status: str, at: float, chash: str = "h") -> dict:
    return {
        "run_id": "r", "grading_id": f"g-{sid}-{at}", "submission_id": sid, "system": sid.split("::")[0],
        "task_id": "a/t", "area": "a", "content_hash": chash, "status": status, "n_criteria": 2, "graded_at": at,
    }


def _call(h: str, vendor: str = "openai", outcome: str = "ok", reused: str | None = None) -> dict:
    return {
        "run_id": "r1", "grading_id": "g", "submission_id": "s::a/t", "system": "s", "task_id": "a/t",
        "request_hash": h, "vendor": vendor, "family": vendor, "model": "m", "purpose": "rubric",
        "outcome": outcome, "reused_from": reused, "response_json": '{"verdict":"pass","reasoning":"x"}',
    }


def test_table_schema_is_derived_from_the_row_model() -> None:
    schema = arrow_schema("verdicts")
    assert schema.field("verdict").type == "string"
    assert schema.field("abstain_reason").nullable
    assert not schema.field("criterion_id").nullable
    assert arrow_schema("submissions").field("hc_score").type == "double"


def test_rows_are_validated_before_they_are_written() -> None:
    bad = _sub("s::a/t", "complete", 1.0)
    bad["status"] = "finished"
    with pytest.raises(ValidationError):
        rows_to_table("submissions", [bad])


def test_shard_name_is_deterministic_and_order_independent() -> None:
    assert shard_name(3, ["b", "a"]) == shard_name(3, ["a", "b"])
    assert shard_name(3, ["a"]) != shard_name(3, ["a", "b"])
    assert shard_name(3, ["a"]).startswith("part-000003-")


def test_writing_a_shard_again_never_overwrites_it_the_second_copy_takes_the_next_free_name(tmp_path) -> None:
    run = str(tmp_path / "run")
    rows = {"submissions": [_sub("s::a/t", "complete", 1.0)], "calls": [_call("h1")]}
    first = (tmp_path / "run" / "calls" / "part-000000-x.parquet")
    write_shard(run, "part-000000-x", rows)
    before = (first.stat().st_ino, first.read_bytes())
    write_shard(run, "part-000000-x", rows)  # a shard re-run whose first execution had stored its rows
    assert (first.stat().st_ino, first.read_bytes()) == before
    # both executions' rows are kept (the calls were paid twice); readers take the latest grading
    assert read_table(run, "calls").num_rows == 2
    # no temp files left behind; every table of one execution under one name; normal parquet files
    files = sorted(p.name for p in (tmp_path / "run" / "submissions").iterdir())
    assert files == ["part-000000-x-r1.parquet", "part-000000-x.parquet"]
    assert sorted(p.name for p in (tmp_path / "run" / "calls").iterdir()) == files
    assert pq.read_schema(tmp_path / "run" / "submissions" / files[0]).field("status").type == "string"


def test_a_table_file_that_exists_is_reported_not_overwritten(tmp_path) -> None:
    from evalcore.errors import StorageError
    from evalcore.storage.store import write_table_file

    run = str(tmp_path / "run")
    write_table_file(run, "calls", "preflight-0001", [_call("h1")])
    path = tmp_path / "run" / "calls" / "preflight-0001.parquet"
    before = path.read_bytes()
    with pytest.raises(StorageError, match=r"preflight-0001\.parquet: already exists .* refusing to overwrite it"):
        write_table_file(run, "calls", "preflight-0001", [])
    assert path.read_bytes() == before


def test_shard_names_hold_the_attempt_so_a_resumed_shard_is_written_beside_the_earlier_one() -> None:
    assert shard_name(3, ["a"], 2) == shard_name(3, ["a"]) + "-a0002"
    assert shard_name(3, ["a"], 2) != shard_name(3, ["a"], 3)


def test_the_rejected_table_is_the_latest_finished_attempts_file_only(tmp_path) -> None:
    from evalcore.storage.store import rejections_name, write_table_file

    run = str(tmp_path / "run")
    bad = {"file": "x/memo.md", "reason": "unknown task id", "system": "s", "task_id": "a/t"}
    write_table_file(run, "rejected", rejections_name(1), [bad, {**bad, "file": "y/memo.md"}])
    assert read_table(run, "rejected").num_rows == 2
    write_table_file(run, "rejected", rejections_name(3), [bad])  # attempt 2 was interrupted: no file
    assert read_table(run, "rejected").column("file").to_pylist() == ["x/memo.md"]
    write_table_file(run, "rejected", rejections_name(10), [])  # fixed: the rejections are gone
    assert read_table(run, "rejected").num_rows == 0


def test_missing_table_reads_as_empty_with_schema(tmp_path) -> None:
    t = read_table(str(tmp_path / "nothing"), "flags")
    assert t.num_rows == 0 and "span" in t.schema.names


def test_resume_index_uses_latest_grading_and_retries_incomplete(tmp_path) -> None:
    run = str(tmp_path / "run")
    write_shard(run, "p0", {"submissions": [_sub("a::a/t", "incomplete", 1.0), _sub("b::a/t", "complete", 1.0)]})
    write_shard(run, "p1", {"submissions": [_sub("a::a/t", "complete", 2.0), _sub("c::a/t", "incomplete", 2.0)]})
    idx = ResumeIndex.load(run)
    assert idx.is_done("a::a/t", "h") and idx.is_done("b::a/t", "h")
    assert not idx.is_done("c::a/t", "h")
    assert not idx.is_done("b::a/t", "changed-content")


def test_stored_calls_keep_only_successes_of_that_vendor_and_credit_the_paying_run(tmp_path) -> None:
    run = str(tmp_path / "run")
    write_shard(
        run,
        "p0",
        {"calls": [_call("h1"), _call("h2", outcome="timeout"), _call("h3", vendor="xai"), _call("h4", reused="r0")]},
    )
    got = stored_calls([run], "openai")
    assert set(got) == {"h1", "h4"}
    assert got["h1"][0] == "r1" and got["h4"][0] == "r0"


def test_stored_preflight_calls_are_never_served_again(tmp_path) -> None:
    run = str(tmp_path / "run")
    preflight = {**_call("hp"), "purpose": "preflight", "submission_id": "", "system": "", "task_id": ""}
    write_shard(run, "p0", {"calls": [_call("h1"), preflight]})
    assert set(stored_calls([run], "openai")) == {"h1"}


def test_tables_open_in_duckdb_with_their_schema(tmp_path) -> None:
    import duckdb

    run = str(tmp_path / "run")
    write_shard(run, "p0", {"submissions": [_sub("a::a/t", "complete", 1.0)], "calls": [_call("h1"), _call("h2")]})
    write_shard(run, "p1", {"submissions": [_sub("b::a/t", "incomplete", 2.0)]})
    con = duckdb.connect()
    rows = con.sql(f"select status, count(*) from '{run}/submissions/*.parquet' group by status order by status").fetchall()
    assert rows == [("complete", 1), ("incomplete", 1)]
    assert con.sql(f"select count(distinct request_hash) from '{run}/calls/*.parquet'").fetchall() == [(2,)]


def test_the_run_record_round_trips_through_run_json_with_its_format_version(tmp_path) -> None:
    from evalcore.storage.store import RUN_RECORD_VERSION, RunRecord, read_json
    from tests.runfolder import test_record

    record = test_record("r1", tasks=[{"id": "a/t", "area": "a", "n_criteria": 2}])
    record.write(str(tmp_path))
    assert read_json(str(tmp_path / "run.json"))["format_version"] == RUN_RECORD_VERSION
    assert RunRecord.read(str(tmp_path)) == record


@pytest.mark.parametrize(
    ("change", "said"),
    [({"format_version": 2}, r"run record of format version 2; this tribunal reads version 1: it was written by "
                             r"another version of tribunal"),
     ({"config": {"seed": 1}}, r"damaged: not a run record of format version 1 \(.*config.judges: Field required"),
     ({"vendors": "simulated"}, r"damaged: not a run record of format version 1 \(.*vendors")],
)
def test_a_run_record_that_does_not_validate_is_refused_naming_the_file(tmp_path, change, said) -> None:
    from evalcore.errors import StorageError
    from evalcore.storage.store import RunRecord, write_json
    from tests.runfolder import test_record

    write_json(str(tmp_path / "run.json"), {**test_record("r1").model_dump(mode="json"), **change})
    with pytest.raises(StorageError, match=rf"run\.json: {said}"):
        RunRecord.read(str(tmp_path))


@pytest.mark.parametrize("text", ['{"run_id": "r', "", "[1, 2]", "\xff\xfe"])
def test_a_cut_short_or_garbled_run_record_is_a_damaged_file_not_another_version(tmp_path, text) -> None:
    from evalcore.errors import StorageError
    from evalcore.storage.store import RunRecord

    (tmp_path / "run.json").write_bytes(text.encode("latin-1"))
    with pytest.raises(StorageError, match=rf"^{re.escape(str(tmp_path / 'run.json'))}: damaged: ") as info:
        RunRecord.read(str(tmp_path))
    assert "another version" not in str(info.value)
