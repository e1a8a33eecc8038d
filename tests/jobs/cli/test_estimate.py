"""`tribunal estimate`: the bill of a sweep before it starts, as a table or JSON; `synth --profile lab`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.cost.estimate import estimate
from evalcore.submissions.loader import load_submissions
from jobs.cli.app import app
from tests.jobs.conftest import SAMPLE


def test_estimate_json_counts_every_rubric_call_of_the_sample_and_prices_it() -> None:
    result = CliRunner().invoke(app, ["estimate", str(SAMPLE), "-s", str(SAMPLE / "submissions"), "--fast", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    tasks = load_benchmark(str(SAMPLE)).task_map()
    subs = load_submissions(str(SAMPLE / "submissions"), tasks).submissions
    rubric = sum(len(tasks[s.task_id].criteria) for s in subs)
    by_vendor = {v["vendor"]: v for v in out["vendors"]}
    assert out["submissions"] == len(subs) == 32
    assert all(by_vendor[j]["calls_by_purpose"]["rubric"] == rubric for j in ("openai", "xai", "anthropic"))
    expected = estimate(tasks, subs, load_config(), fast=True)
    assert out["cost_usd"]["online"] == expected.cost_usd["online"] > 0
    assert out["usd_per_submission"] > 0 and out["min_wall_s"] > 0


def test_estimate_table_shows_cost_cache_share_wall_time_and_the_assumptions() -> None:
    result = CliRunner().invoke(app, ["estimate", str(SAMPLE), "-s", str(SAMPLE / "submissions"), "--fast",
                                      "--audited-share", "0.5"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for text in ("USD online", "cached", "min wall", "USD per graded submission", "audited share 0.50"):
        assert text in result.output


def test_estimate_itemises_what_warming_the_prompt_caches_costs() -> None:
    """The cache writes are inside the USD (Anthropic bills a write at 1.25x input): said apart."""
    result = CliRunner().invoke(app, ["estimate", str(SAMPLE), "-s", str(SAMPLE / "submissions"), "--fast"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    tasks = load_benchmark(str(SAMPLE)).task_map()
    expected = estimate(tasks, load_submissions(str(SAMPLE / "submissions"), tasks).submissions, load_config(), fast=True)
    assert expected.cache_write_usd["online"] > 0
    assert f"of which prompt-cache writes (warming): online ${expected.cache_write_usd['online']:,.2f}" in result.output


def test_estimate_batch_prices_the_expected_hits_below_a_cold_bound_at_half_the_online_bill_of_no_hits() -> None:
    args = ["estimate", str(SAMPLE), "-s", str(SAMPLE / "submissions"), "--fast", "--json"]
    result = CliRunner().invoke(app, [*args, "--batch"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    tasks = load_benchmark(str(SAMPLE)).task_map()
    subs = load_submissions(str(SAMPLE / "submissions"), tasks).submissions
    cfg = load_config()
    cold = cfg.model_copy(update={"judges": [j.model_copy(update={"warm_prompt_cache": False}) for j in cfg.judges],
                                  "auditor": cfg.auditor.model_copy(update={"warm_prompt_cache": False})})
    online_cold = estimate(tasks, subs, cold, fast=True)
    assert out["pricing"] == "batch" and out["warm"] is False and list(out["cost_usd"]) == ["batch"]
    assert out["cost_usd_cold"]["batch"] == pytest.approx(online_cold.cost_usd_cold["online"] / 2)
    assert 0 < out["cost_usd"]["batch"] <= out["cost_usd_cold"]["batch"]
    assert out["usd_per_submission"] == pytest.approx(out["cost_usd"]["batch"] / len(subs))
    wall = out["batch_wall_time"]
    assert out["min_wall_s"] is None and wall["rounds"] == 3 and wall["upper_bound_s"] >= 3 * 86_400
    table = CliRunner().invoke(app, [*args[:-1], "--batch"], env={"COLUMNS": "200"})
    assert table.exit_code == 0 and "USD batch cold" in table.output and "USD online" not in table.output
    assert "batch wall time: at most 72.1 h" in table.output and "min wall" not in table.output


def test_estimate_of_a_missing_benchmark_is_an_error_naming_it(tmp_path) -> None:
    result = CliRunner().invoke(app, ["estimate", str(tmp_path / "nope"), "-s", str(tmp_path)], env={"COLUMNS": "300"})
    assert result.exit_code == 1 and "nope: no loadable tasks" in result.output


def test_synth_profile_lab_writes_a_benchmark_with_ground_truth(tmp_path) -> None:
    result = CliRunner().invoke(app, ["synth", str(tmp_path), "--profile", "lab", "--tasks", "1", "--seed", "2"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ground_truth.json").is_file() and list((tmp_path / "tasks").rglob("task.json"))
    assert "criteria per task" in result.output
    bad = CliRunner().invoke(app, ["synth", str(tmp_path), "--profile", "huge"])
    assert bad.exit_code == 2


def test_estimate_applies_the_configured_input_limits_and_lists_what_it_left_out(tmp_path) -> None:
    """The estimate loads through the sweep's path and limits: it never prices what a sweep rejects."""
    import shutil

    subs_dir = tmp_path / "submissions"
    shutil.copytree(SAMPLE / "submissions", subs_dir)
    big = next(p for p in sorted(subs_dir.rglob("*.md")))
    big.write_text(big.read_text() + "\n" + "padding " * 20_000)  # ~160 kB: over the cap below
    config = tmp_path / "limits.yaml"
    config.write_text("input_limits:\n  max_file_bytes: 100000\n")  # above every source and other deliverable
    result = CliRunner().invoke(app, ["estimate", str(SAMPLE), "-s", str(subs_dir), "--fast",
                                      "--json", "-c", str(config)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    limited = load_submissions(str(subs_dir), load_benchmark(str(SAMPLE)).task_map(),
                               limits=load_config(config).input_limits)
    assert len(limited.rejected) == 1, "the cap rejects exactly the padded deliverable"
    body = result.stdout[result.stdout.index("{"):]
    assert json.loads(body)["submissions"] == len(limited.submissions) == 31
    assert "left out of the estimate (a sweep would leave them out too): 1 input(s)" in result.output
    assert str(limited.rejected[0]) in result.output
