"""`tribunal retest` (issue 39): repeats through the sweep engine, with the sweep's guarantees.

* a retest of emulated judges, one of them noisy across gradings (a persona's `retest_flip`),
  writes repeats 1..K beside the originals, which it never replaces; the repeatability section
  finds the noisy judge's flips and none for the others; running the same command again pays 0
  calls;
* a retest killed with SIGKILL after its first shard, then run again, loses nothing (every repeat
  complete) and pays for no request twice; a third run pays nothing.

Real local Ray, the real CLI (a child process where the kill must reach the Ray workers,
in-process otherwise), real vendor SDKs against the emulators; the small sample (8 submissions).
"""

from __future__ import annotations

import json
import os
import signal
from collections import Counter
from pathlib import Path

import pyarrow.compute as pc
import pytest
import yaml
from typer.testing import CliRunner

from evalcore.storage.store import ResumeIndex, read_table
from jobs.cli.app import app
from jobs.per_run.reduce import reduce_run
from jobs.sweep.identity import KILL_AT_ENV
from tests.jobs.sweep.test_run_safety import _child_env, _run_child

pytestmark = [pytest.mark.ray]

runner = CliRunner()
PERSONAS = {"seed": 5, "personas": {"xai": {"retest_flip": 0.3}}}
"""The xAI judge flips each verdict with probability 0.3 in every grading; the others never do."""


def _attempt(run: Path, n: int) -> dict:
    return json.loads((run / "_attempts" / f"attempt-{n:04d}.json").read_text())


@pytest.fixture(scope="module")
def noisy(ray_local, small_sample: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("retest")
    personas = out / "personas.yaml"
    personas.write_text(yaml.safe_dump(PERSONAS))
    sweep = runner.invoke(app, ["sweep", str(small_sample), "-s", str(small_sample / "submissions"), "-o", str(out),
                                "--run-id", "noisy", "--vendors", "emulated", "--personas", str(personas),
                                "--shard-size", "4", "--no-progress", "--no-reduce"], env={"COLUMNS": "300"})
    assert sweep.exit_code == 0, sweep.output[-3000:]
    run = out / "noisy"
    before = reduce_run(str(run), write=False)
    retest = ["retest", str(run), "--repeats", "2", "--sample", "4", "--seed", "3", "--personas", str(personas),
              "--shard-size", "4", "--no-progress", "--no-reduce"]
    first = runner.invoke(app, retest, env={"COLUMNS": "300"})
    assert first.exit_code == 0, first.output[-3000:]
    calls_after_first = read_table(str(run), "calls").num_rows
    again = runner.invoke(app, retest, env={"COLUMNS": "300"})
    assert again.exit_code == 0, again.output[-3000:]
    return run, before, calls_after_first, first, again


def test_a_retest_writes_k_repeats_of_the_sample_beside_the_originals_each_request_a_new_identity(noisy) -> None:
    run, _, _, first, _ = noisy
    subs = read_table(str(run), "submissions").to_pylist()
    originals = [s for s in subs if s["repeat"] == 0]
    repeats = [s for s in subs if s["repeat"] > 0]
    assert len(originals) == 8 and len(repeats) == 4 * 2 and all(s["status"] == "complete" for s in repeats)
    assert Counter(s["repeat"] for s in repeats) == {1: 4, 2: 4}
    assert len({s["submission_id"] for s in repeats}) == 4
    assert "4 submission(s) × 2 repeat(s)" in first.output
    calls = read_table(str(run), "calls").to_pylist()
    by_repeat: dict[int, set[str]] = {}
    for c in calls:
        if c["purpose"] == "rubric":
            by_repeat.setdefault(c["repeat"], set()).add(c["request_hash"])
    assert not by_repeat[1] & by_repeat[0] and not by_repeat[2] & by_repeat[1]
    # without --audit the repeats are the panel's only
    assert {c["purpose"] for c in calls if c["repeat"] > 0} == {"rubric"}


def test_the_same_retest_run_again_pays_0_calls(noisy) -> None:
    run, _, calls_after_first, _, _ = noisy
    third = _attempt(run, 3)
    assert third["paid_calls"] == 0 and third["graded"] == 0 and third["skipped_done"] == 8
    assert read_table(str(run), "calls").num_rows == calls_after_first


def test_repeats_never_replace_the_originals_headline_and_the_noisy_judge_alone_flips(noisy) -> None:
    run, before, _, _, _ = noisy
    after = reduce_run(str(run), write=False)
    old = {r.system: r.hc_pass_rate for r in before.systems}
    assert {r.system: r.hc_pass_rate for r in after.systems} == old
    assert sum(r.repeated_tasks for r in after.systems) == 4
    shown = runner.invoke(app, ["calibrate", str(run), "--json"])
    assert shown.exit_code == 0, shown.output[-3000:]
    rep = json.loads(shown.stdout)["repeatability"]
    flips = {j["judge"]: j["flips"] for j in rep["judges"]}
    print(f"flips per judge over {rep['repeats']} repeats: {flips}")
    assert flips["openai"] == 0 and flips["anthropic"] == 0 and flips["xai"] > 0
    assert all(set(c["flips_by_judge"]) == {"xai"} for c in rep["criteria"] if c["flips"])
    assert (run / "repeatability.json").is_file()


def test_a_retest_killed_with_sigkill_then_run_again_loses_nothing_and_pays_for_no_request_twice(
        ray_local, small_sample: Path, tmp_path: Path) -> None:
    sweep = runner.invoke(app, ["sweep", str(small_sample), "-s", str(small_sample / "submissions"), "-o", str(tmp_path),
                                "--run-id", "k", "--vendors", "offline", "--shard-size", "4", "--no-progress",
                                "--no-reduce"])
    assert sweep.exit_code == 0, sweep.output[-3000:]
    run = tmp_path / "k"
    args = ["retest", str(run), "--repeats", "2", "--sample", "8", "--shard-size", "2", "--max-in-flight", "1",
            "--no-progress", "--no-reduce"]
    killed = _run_child(args, _child_env(**{KILL_AT_ENV: "shard:1"}))
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    kept = read_table(str(run), "submissions")
    assert 0 < pc.sum(pc.greater(kept.column("repeat"), 0)).as_py() < 16  # killed midway
    resumed = runner.invoke(app, args)
    assert resumed.exit_code == 0, resumed.output[-3000:]
    index = ResumeIndex.load(str(run))
    assert {k for k in index.done if k[1] > 0} == {(sid, r) for sid, _ in index.done for r in (1, 2)}
    calls = read_table(str(run), "calls").to_pylist()
    paid = Counter(c["request_hash"] for c in calls
                   if c["outcome"] == "ok" and c["reused_from"] is None and c["purpose"] != "preflight")
    assert [h for h, n in paid.items() if n > 1] == []
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output[-3000:]
    last = max(int(p.stem.split("-")[1]) for p in (run / "_attempts").glob("attempt-*.json"))
    assert _attempt(run, last)["paid_calls"] == 0
    assert os.path.exists(run / "_SUCCESS.json")


def test_the_report_shows_the_repeatability_section_and_the_intervals_with_judge_noise(noisy) -> None:
    run = noisy[0]
    shown = runner.invoke(app, ["report", str(run)])
    assert shown.exit_code == 0, shown.output[-3000:]
    html = (run / "report.html").read_text()
    section = html.split('<section id="repeatability">')[1].split("</section>")[0]
    assert 'id="repeatability-judges"' in section and "<b>xai</b>" in section and "<b>panel</b>" in section
    assert 'id="judge-noise"' in section and 'id="repeatability-criteria"' in section


def test_show_names_the_original_grading_of_a_repeated_submission_and_counts_its_repeats(noisy) -> None:
    run = noisy[0]
    subs = read_table(str(run), "submissions").to_pylist()
    repeated = next(s for s in subs if s["repeat"] == 1)
    original = next(s for s in subs if s["repeat"] == 0 and s["submission_id"] == repeated["submission_id"])
    shown = runner.invoke(app, ["show", str(run), "--system", repeated["system"], "--task", repeated["task_id"],
                                "--json"])
    assert shown.exit_code == 0, shown.output[-3000:]
    data = json.loads(shown.stdout)
    assert data["grading_id"] == original["grading_id"] and data["gradings"] == 1 and data["repeats"] == 2


def test_a_retest_refuses_a_judge_not_in_the_runs_panel_naming_the_panel(noisy) -> None:
    refused = runner.invoke(app, ["retest", str(noisy[0]), "--judges", "gemini", "--sample", "1", "--no-progress"])
    assert refused.exit_code == 1
    assert "--judges: no judge named gemini in this run's panel (openai, xai, anthropic)" in refused.output
