"""Sweep options are validated by the CLI before anything starts (usage error, exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalcore.config.load import load_config
from evalcore.errors import TribunalError
from jobs.cli.app import app
from jobs.sweep.options import SweepOptions

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample"


def _sweep(tmp_path: Path, *extra: str):
    args = ["sweep", str(SAMPLE), "-s", str(SAMPLE / "submissions"), "-o", str(tmp_path / "runs"),
            "--vendors", "offline", "--no-progress", "--no-reduce", *extra]
    return CliRunner().invoke(app, args, env={"COLUMNS": "400"})  # no wrapping inside the error box


@pytest.mark.parametrize(
    ("option", "value"), [("--max-in-flight", "0"), ("--shard-size", "0"), ("--shard-size", "-3")]
)
def test_a_zero_or_negative_window_or_shard_size_is_a_usage_error(tmp_path, option, value) -> None:
    result = _sweep(tmp_path, option, value)
    assert result.exit_code == 2, result.output
    assert option in result.output and "greater than or equal to 1" in result.output
    assert not (tmp_path / "runs").exists()  # refused before anything was written


@pytest.mark.parametrize("run_id", ["../../x", "a/b", ".hidden", "..", "/abs", "x" * 129, ""])
def test_a_run_id_that_is_not_one_folder_name_is_a_usage_error(tmp_path, run_id) -> None:
    result = _sweep(tmp_path, "--run-id", run_id)
    assert result.exit_code == 2, result.output
    assert "is not a run id" in result.output
    assert not (tmp_path / "runs").exists() and not (tmp_path / "x").exists()


def test_unknown_vendor_mode_is_a_usage_error_listing_the_choices(tmp_path) -> None:
    result = _sweep(tmp_path, "--vendors", "emulate")
    assert result.exit_code == 2 and "real" in result.output and "emulated" in result.output


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("shard_size", 0, "shard_size: must be at least 1"), ("max_in_flight", 0, "max_in_flight: must be at least 1"),
     ("run_id", "../x", "run_id: '../x' is not one folder name")],
)
def test_library_callers_get_the_same_refusals(field, value, message) -> None:
    with pytest.raises(TribunalError, match=message):
        SweepOptions(benchmark="b", submissions="s", output="o", config=load_config(vendors="offline"),
                     **{field: value})


@pytest.mark.parametrize("value", ["0", "-5"])
def test_a_spending_cap_must_be_positive_and_is_refused_before_anything_starts(tmp_path, value) -> None:
    result = _sweep(tmp_path, "--max-cost", value)
    assert result.exit_code == 2, result.output
    assert "is not a spending cap" in result.output
    assert not (tmp_path / "runs").exists()  # no run folder, no Ray


def test_status_of_a_path_with_markup_characters_is_one_error_line_not_a_traceback(tmp_path) -> None:
    result = CliRunner().invoke(app, ["status", str(tmp_path / "x[/]y")], env={"COLUMNS": "400"})
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert "x[/]y: not a run folder (no run.json)" in result.output


def test_status_of_a_truncated_run_record_names_the_file(tmp_path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text('{"run_id": "r')
    result = CliRunner().invoke(app, ["status", str(run)], env={"COLUMNS": "400"})
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{run}/run.json: not a readable run record" in result.output
