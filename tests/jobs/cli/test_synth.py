"""`tribunal synth` writes the manifest and ground truth, and names a missing sample."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from doubles.synth.ground_truth import load_ground_truth
from jobs.cli.app import app

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample"


def test_the_cli_command_writes_the_manifest_and_ground_truth(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["synth", str(tmp_path), "-n", "16", "--sample", str(SAMPLE), "--seed", "5"])
    assert result.exit_code == 0, result.output
    assert "16 submissions" in result.output
    assert len(load_ground_truth(tmp_path / "ground_truth.json").submissions()) == 16


def test_the_cli_command_names_a_missing_sample_and_exits_1(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["synth", str(tmp_path / "out"), "-n", "4", "--sample", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert "ground truth file not found" in result.output.replace("\n", "")


def test_task_copies_writes_a_widened_benchmark_and_spreads_the_submissions_over_its_tasks(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["synth", str(tmp_path), "-n", "48", "--sample", str(SAMPLE), "--task-copies", "3"])
    assert result.exit_code == 0, result.output
    assert "3 copies of each task" in result.output.replace("\n", " ")
    gt = load_ground_truth(tmp_path / "ground_truth.json")
    assert len(gt.task_ids()) == 24 and len(gt.systems) == 2
    assert len(load_ground_truth(tmp_path / "benchmark" / "ground_truth.json").task_ids()) == 24
    again = CliRunner().invoke(app, ["synth", str(tmp_path), "-n", "48", "--sample", str(SAMPLE), "--task-copies", "3"])
    assert again.exit_code == 1 and "not empty" in again.output
