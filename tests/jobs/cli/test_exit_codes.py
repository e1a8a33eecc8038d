"""Exit codes a script can act on: 3 when calls failed (grade and sweep), 4 when inputs were left
out while the rest was graded, 1 for a missing API key, found before Ray starts or a run folder is
written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pydantic import SecretStr
from typer.testing import CliRunner

from doubles.emulators import EmulatorConfig, OfflineResponder
from doubles.emulators._set import start_in_thread
from jobs.cli.app import EXIT_BAD_INPUT, EXIT_INCOMPLETE, EXIT_LEFT_OUT, app
from tests.jobs.conftest import SAMPLE, SMALL_TASKS, emulated_config

runner = CliRunner()
TASK = SAMPLE / "tasks" / "real-estate" / "lease-abstract"
ABSTRACT = SAMPLE / "submissions" / "gpt-strong" / "real-estate" / "lease-abstract" / "abstract.md"
ROOT = Path(__file__).resolve().parents[3]


def test_grade_exits_3_when_every_call_failed_and_says_the_submission_is_incomplete(tmp_path) -> None:
    with start_in_thread(EmulatorConfig(api_key=SecretStr("the-right-key")), responder=OfflineResponder()) as emus:
        cfg = tmp_path / "cfg.yaml"  # the emulators' dummy keys, which these emulators refuse (401)
        cfg.write_text(yaml.safe_dump(emulated_config(emus.endpoints).model_dump(mode="json")))
        result = runner.invoke(app, ["grade", str(TASK), "-d", str(ABSTRACT), "--vendors", "real", "--config", str(cfg)],
                               env={"COLUMNS": "200"})
    assert result.exit_code == EXIT_INCOMPLETE, result.output
    text = " ".join(result.output.split())
    assert f"error: {TASK}: the submission is incomplete:" in text and "401" in text


def test_grade_with_a_missing_key_exits_1_naming_the_variable(monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("XAI_API_KEY", "x")
    result = runner.invoke(app, ["grade", str(TASK), "-d", str(ABSTRACT), "--vendors", "real"])
    assert result.exit_code == EXIT_BAD_INPUT
    assert ("anthropic (claude-opus-5-5): no API key: set the environment variable ANTHROPIC_API_KEY"
            in " ".join(result.output.split()))


def test_a_missing_api_key_stops_a_sweep_before_ray_starts_and_leaves_no_run_folder(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["XAI_API_KEY"] = "set-but-not-the-others"
    probe = (
        "import sys, ray\n"
        "from jobs.cli.app import app\n"
        "try:\n"
        "    app(sys.argv[1:])\n"
        "except SystemExit as exc:\n"
        "    print('ray started:', ray.is_initialized(), 'exit:', exc.code)\n"
    )
    out = tmp_path / "runs"
    proc = subprocess.run(
        [sys.executable, "-c", probe, "sweep", str(SAMPLE), "-s", str(SAMPLE / "submissions"), "-o", str(out),
         "--vendors", "real", "--no-progress"],
        env=env, capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert "ray started: False exit: 1" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    err = " ".join(proc.stderr.split())
    assert ("error: openai (gpt-6-sol), auditor (gpt-6-sol): no API key: set the environment variable OPENAI_API_KEY; "
            "anthropic (claude-opus-5-5): no API key: set the environment variable ANTHROPIC_API_KEY") in err
    assert not out.exists()


@pytest.mark.ray
def test_a_sweep_that_left_inputs_out_exits_4_after_grading_the_rest(ray_local, small_sample, tmp_path) -> None:
    broken = SMALL_TASKS[1]  # one of the small sample's two tasks; gpt-strong submitted both
    bench = tmp_path / "bench"
    shutil.copytree(small_sample / "tasks", bench / "tasks")
    (bench / "tasks" / broken / "task.json").write_text("{ not json")
    subs = tmp_path / "subs"
    shutil.copytree(small_sample / "submissions" / "gpt-strong", subs / "gpt-strong")
    (subs / "gpt-strong" / "no-such-area" / "no-such-task").mkdir(parents=True)
    (subs / "gpt-strong" / "no-such-area" / "no-such-task" / "memo.md").write_text("A memo for no task.")
    args = ["sweep", str(bench), "-s", str(subs), "-o", str(tmp_path / "runs"), "--run-id", "left-out",
            "--vendors", "offline", "--no-progress", "--no-reduce"]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == EXIT_LEFT_OUT, result.output
    summary = json.loads((tmp_path / "runs" / "left-out" / "_SUCCESS.json").read_text())
    # the broken task, the submission for it, and the submission for no task; the other task's graded
    assert (summary["rejected"], summary["complete"]) == (3, 1)
    assert "3 input(s) left out" in " ".join(result.output.split())
    # fixed (a new run: the benchmark content changed), the same command exits 0
    shutil.copy(small_sample / "tasks" / broken / "task.json", bench / "tasks" / broken / "task.json")
    shutil.rmtree(subs / "gpt-strong" / "no-such-area")
    again = runner.invoke(app, [*args[:6], "--run-id", "fixed", *args[8:]])
    assert again.exit_code == 0, again.output
