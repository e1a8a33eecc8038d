"""What the CLI prints about user inputs: `file: reason` instead of tracebacks, and user text
(paths, system names) printed verbatim, never read as rich markup."""

from __future__ import annotations

import shutil
import socket

import pytest
from rich.console import Console
from typer.testing import CliRunner

from jobs.cli.app import app
from jobs.display.leaderboard import render_leaderboard
from jobs.per_run.reduce import reduce_run
from tests.jobs.conftest import SAMPLE
from tests.runfolder import build_run, synthetic_ground_truth

runner = CliRunner()


@pytest.fixture(autouse=True)
def _restore_the_s3_endpoint_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """`sweep --endpoint-url` sets AWS_ENDPOINT_URL_S3 for the whole process (so Ray workers inherit
    it); in-process CLI runs must not leave it to the tests that follow."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "restored-after-the-test")
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _no_traceback(result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output


@pytest.fixture
def dead_endpoint():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


def test_sweep_into_a_folder_under_a_regular_file_exits_1_naming_the_file(tmp_path) -> None:
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "runs"
    result = runner.invoke(app, ["sweep", str(SAMPLE), "-s", str(SAMPLE / "submissions"), "-o", str(out),
                                 "--run-id", "r1", "--vendors", "offline", "--no-progress"])
    _no_traceback(result)
    assert result.exit_code == 1
    assert (f"error: {out}: not a directory: {tmp_path / 'afile'} is a regular file, not a folder; choose another "
            "output folder") in _flat(result.output)
    assert not out.exists()


@pytest.mark.s3
def test_validate_with_an_unreachable_s3_endpoint_says_it_is_unreachable_not_not_found(dead_endpoint) -> None:
    result = runner.invoke(app, ["validate", "s3://bench/legal-v1", "--endpoint-url", dead_endpoint])
    _no_traceback(result)
    assert result.exit_code == 1
    text = _flat(result.output)
    assert f"s3://bench/legal-v1/tasks: S3 endpoint {dead_endpoint} is unreachable (" in text
    assert "not found" not in text


@pytest.mark.s3
def test_sweep_with_an_unreachable_s3_output_exits_1_naming_the_endpoint(dead_endpoint) -> None:
    result = runner.invoke(app, ["sweep", str(SAMPLE), "-s", str(SAMPLE / "submissions"), "-o", "s3://runs/x",
                                 "--run-id", "r1", "--vendors", "offline", "--endpoint-url", dead_endpoint])
    _no_traceback(result)
    assert result.exit_code == 1
    assert f"error: s3://runs/x: S3 endpoint {dead_endpoint} is unreachable (" in _flat(result.output)


@pytest.mark.s3
def test_validate_of_a_bucket_the_endpoint_does_not_have_names_the_bucket_and_endpoint(s3_server) -> None:
    result = runner.invoke(app, ["validate", "s3://no-such-bucket-x/bench", "--endpoint-url", s3_server])
    assert result.exit_code == 1
    assert (f"s3://no-such-bucket-x/bench: benchmark not found: there is no bucket 'no-such-bucket-x' at S3 "
            f"endpoint {s3_server}") in _flat(result.output)


@pytest.mark.parametrize("command", ["sweep", "reduce", "report", "validate"])
def test_a_path_with_rich_markup_characters_is_printed_verbatim(tmp_path, command) -> None:
    odd = str(tmp_path / "runs[/]x" / "[bold]r1")
    args = {
        "sweep": ["sweep", odd, "-s", str(SAMPLE / "submissions"), "-o", str(tmp_path), "--vendors", "offline"],
        "reduce": ["reduce", odd],
        "report": ["report", odd],
        "validate": ["validate", odd],
    }[command]
    result = runner.invoke(app, args)
    _no_traceback(result)
    assert result.exit_code == 1
    assert odd in result.output.replace("\n", "")


def _renamed(truth: dict, old: str, new: str) -> dict:
    truth["verdicts"][new] = truth["verdicts"].pop(old)
    for h in truth["hallucinations"]:
        if h["system"] == old:
            h["system"] = new
    return truth


def test_the_terminal_leaderboard_shows_a_system_name_with_brackets_whole(tmp_path) -> None:
    truth = _renamed(synthetic_ground_truth(seed=3, n_tasks=3, n_criteria=2), "gpt-strong", "gpt-5[beta]")
    build_run(str(tmp_path / "run"), truth)
    console = Console(record=True, width=200, color_system=None)
    render_leaderboard(reduce_run(str(tmp_path / "run"), write=False), console)
    assert "gpt-5[beta]" in console.export_text()


def test_validate_shows_a_system_name_with_brackets_whole(tmp_path) -> None:
    subs = tmp_path / "submissions"
    shutil.copytree(SAMPLE / "submissions" / "gpt-strong", subs / "gpt-5[beta]")
    shutil.copytree(SAMPLE / "submissions" / "grok-weak", subs / "[red]grok")
    result = runner.invoke(app, ["validate", str(SAMPLE), "-s", str(subs)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "gpt-5[beta]" in result.output and "[red]grok" in result.output
