"""`tribunal reduce`: a run folder (local or s3://) in, leaderboard files and a terminal table out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from rich.console import Console

from evalcore.errors import StorageError
from evalcore.results.leaderboard import Leaderboard
from evalcore.storage.run import open_run
from evalcore.storage.run_folder import LEADERBOARD_AREAS_PARQUET, LEADERBOARD_JSON, LEADERBOARD_PARQUET
from jobs.display.leaderboard import render_leaderboard
from jobs.per_run.reduce import reduce_run
from tests.conftest import create_bucket, s3_client, upload_tree
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    truth = synthetic_ground_truth(seed=11, n_tasks=9, n_criteria=4)
    tasks = sorted(truth["verdicts"]["gpt-strong"])
    run = tmp_path_factory.mktemp("runs") / "run-test"
    build_run(
        str(run),
        truth,
        RunSpec(superseded={("gpt-strong", tasks[0])}, incomplete={("grok-weak", tasks[1])},
                missing={("claude-average", tasks[2])}),
    )
    return run


def _copy(run: Path, dest: Path) -> Path:
    out = dest / run.name
    shutil.copytree(run, out)
    return out


def test_reduce_writes_the_leaderboard_files_into_the_run_folder(run_dir: Path, tmp_path: Path) -> None:
    run = _copy(run_dir, tmp_path)
    lb = reduce_run(str(run))
    assert open_run(str(run)).read_leaderboard() == lb
    systems = pq.read_table(run / LEADERBOARD_PARQUET)
    assert sorted(systems.column("system").to_pylist()) == sorted(r.system for r in lb.systems)
    assert systems.column("hc_pass_rate").to_pylist() == [r.hc_pass_rate.value for r in lb.systems]
    areas = pq.read_table(run / LEADERBOARD_AREAS_PARQUET)
    assert areas.num_rows == len(lb.systems) * len(lb.areas)
    assert set(areas.column("area").to_pylist()) == set(lb.areas)


def test_reducing_the_same_run_twice_gives_identical_files(run_dir: Path, tmp_path: Path) -> None:
    run = _copy(run_dir, tmp_path)
    reduce_run(str(run))
    first = (run / LEADERBOARD_JSON).read_bytes(), (run / LEADERBOARD_PARQUET).read_bytes()
    reduce_run(str(run))
    assert ((run / LEADERBOARD_JSON).read_bytes(), (run / LEADERBOARD_PARQUET).read_bytes()) == first


def test_files_starting_with_a_dot_or_underscore_are_not_data(run_dir: Path, tmp_path: Path) -> None:
    run = _copy(run_dir, tmp_path)
    before = reduce_run(str(run), write=False)
    for table in ("submissions", "verdicts"):
        shard = sorted((run / table).glob("part-*.parquet"))[0]
        shutil.copy(shard, run / table / f".{shard.name}.tmp.parquet")
        shutil.copy(shard, run / table / f"_{shard.name}")
    assert reduce_run(str(run), write=False) == before


def test_a_folder_without_run_json_is_refused_with_the_file_named(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match=r"run\.json: not found"):
        reduce_run(str(tmp_path))


def test_a_run_with_no_graded_submission_is_refused(run_dir: Path, tmp_path: Path) -> None:
    run = _copy(run_dir, tmp_path)
    shutil.rmtree(run / "submissions")
    with pytest.raises(StorageError, match="no graded submissions"):
        reduce_run(str(run))


@pytest.mark.s3
def test_reduce_reads_and_writes_a_run_on_s3(run_dir: Path, s3_server: str) -> None:
    bucket = create_bucket(s3_server)
    upload_tree(s3_server, run_dir, bucket, "runs/run-test")
    uri = f"s3://{bucket}/runs/run-test"
    lb = reduce_run(uri, endpoint_override=s3_server)
    assert lb == reduce_run(str(run_dir), write=False)
    keys = {o["Key"] for o in s3_client(s3_server).list_objects_v2(Bucket=bucket)["Contents"]}
    for name in (LEADERBOARD_JSON, LEADERBOARD_PARQUET, LEADERBOARD_AREAS_PARQUET):
        assert f"runs/run-test/{name}" in keys
    assert open_run(uri, s3_server).read_leaderboard() == lb


def test_the_terminal_table_shows_every_system_with_its_interval(run_dir: Path) -> None:
    lb: Leaderboard = reduce_run(str(run_dir), write=False)
    console = Console(record=True, width=220, color_system=None)
    render_leaderboard(lb, console)
    text = console.export_text()
    for row in lb.systems:
        assert row.system in text
        if row.hc_pass_rate.value is not None and row.hc_pass_rate.low is not None:
            assert f"{100 * row.hc_pass_rate.value:.1f}% [{100 * row.hc_pass_rate.low:.0f}–" in text
    for header in ("HC pass", "[95% CI]", "crit.", "material", "lost to", "missing/", "cost"):
        assert header in text
    assert "0/1/0" in text  # grok-weak: one incomplete submission


def test_cli_reduce_prints_the_leaderboard_and_exits_0(run_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from jobs.cli.app import app

    run = _copy(run_dir, tmp_path)
    result = CliRunner().invoke(app, ["reduce", str(run)], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    for system in ("gpt-strong", "claude-average", "grok-weak", "fluent-hallucinator"):
        assert system in result.output
    assert (run / LEADERBOARD_JSON).exists()


def test_cli_reduce_of_a_folder_that_is_not_a_run_exits_1_and_says_why(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from jobs.cli.app import app

    result = CliRunner().invoke(app, ["reduce", str(tmp_path)])
    assert result.exit_code == 1
    assert "run.json: not found" in " ".join(result.output.split())
