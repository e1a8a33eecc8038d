"""Batch mode end to end on a real local Ray cluster, the real SDKs and the emulated batch APIs:
online and batch sweeps agree to the leaderboard at half the price; a driver SIGKILLed between
submitting and collecting is re-run and submits nothing twice; --detach submits and exits and a
later run collects; `tribunal status` shows every batch.

Every sweep here grades the small sample (`small_sample` in `tests/jobs/conftest.py`: two tasks with
documents of every kind, the four systems, 8 submissions): what these tests check is batch mode's
mechanics and its price, the same for 8 submissions as for the whole sample's 32."""

from __future__ import annotations

import json
import math
import os
import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest
import yaml
from typer.testing import CliRunner

from doubles.emulators import BatchSettings, EmulatorConfig, OfflineResponder
from doubles.emulators._set import EmulatorThread, start_in_thread
from doubles.emulators.ground_truth import ground_truth_responder
from doubles.synth.ground_truth import load_ground_truth
from evalcore.benchmark.loader import load_benchmark
from evalcore.config.models import TribunalConfig
from evalcore.storage import fs
from evalcore.storage.store import read_table
from evalcore.submissions.loader import load_submissions
from evalcore.vendors.batch.journal import load_all
from jobs.cli.app import app
from jobs.per_run.reduce import reduce_run
from jobs.sweep.driver import run_sweep
from jobs.sweep.options import SweepOptions
from jobs.sweep.prepare import with_batch
from tests.jobs.conftest import SAMPLE, SMALL_SUBMISSIONS, emulated_config
from tests.ray_start import PROGRESS_DEADLINE_S

pytestmark = [pytest.mark.ray]
REPO = Path(__file__).resolve().parents[3]
FAST = {"flush_interval_s": 0.3, "poll_interval_s": 0.1}


def _config(emus: EmulatorThread, *, batch: bool, caching: bool = True) -> TribunalConfig:
    cfg = emulated_config(emus.endpoints)
    if not caching:  # prompt-cache hits depend on arrival order, which differs between the modes
        cfg = cfg.model_copy(update={
            "judges": [j.model_copy(update={"prompt_caching": False}) for j in cfg.judges],
            "auditor": cfg.auditor.model_copy(update={"prompt_caching": False}),
        })
    cfg = with_batch(cfg, batch)
    return cfg.model_copy(update={"batch": cfg.batch.model_copy(update=FAST)})


def _sweep(cfg: TribunalConfig, root: Path, output: str, run_id: str, **kw: Any) -> Any:
    """An in-process sweep of the benchmark at `root` (`root/tasks`, `root/submissions`) on the session's Ray."""
    opts = SweepOptions(benchmark=str(root), submissions=str(root / "submissions"), output=output,
                        config=cfg, vendors="emulated", run_id=run_id, progress=False,
                        **{"shard_size": 8, "max_in_flight": 4, **kw})
    return run_sweep(opts)


def _without_cost(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cost(v) for k, v in value.items() if "cost" not in k and k != "run_id"}
    if isinstance(value, list):
        return [_without_cost(v) for v in value]
    return value


def _paid(run: str) -> float:
    """USD of the judge calls (preflight calls go online in both modes and are left out)."""
    calls = read_table(run, "calls", columns=["purpose", "cost_usd"])
    mask = pc.not_equal(calls.column("purpose"), "preflight")
    return float(pc.sum(pc.filter(calls.column("cost_usd"), mask)).as_py())


def test_batch_and_online_sweeps_give_identical_leaderboards_and_batch_costs_half(
    ray_local, small_sample, tmp_path
) -> None:
    gt = load_ground_truth(SAMPLE / "ground_truth.json")  # the sample's: it covers the small sample's tasks
    tasks = load_benchmark(str(small_sample)).task_map()
    subs = load_submissions(str(small_sample / "submissions"), tasks).submissions
    assert len(subs) == SMALL_SUBMISSIONS
    owner = {d.text: (s.system, s.task_id) for s in subs for d in s.deliverables.values() if not d.missing}
    responder = ground_truth_responder(gt, owner)
    out = str(tmp_path / "runs")
    # reasoning fixed per effort: the emulators draw it from each prompt, whose fence is random per
    # grading, so the two modes' bills would differ by their draws, not by their prices
    fixed = EmulatorConfig(reasoning_tokens={"low": 128, "medium": 512, "high": 2048, "xhigh": 4096, "max": 8192})
    with start_in_thread(fixed, responder=responder) as emus:
        online = _sweep(_config(emus, batch=False, caching=False), small_sample, out, "online")
    with start_in_thread(fixed, responder=responder) as emus:
        batch = _sweep(_config(emus, batch=True, caching=False), small_sample, out, "batch")
        created = {k: s.creates for k, s in emus.batch_stores().items()}
    assert online.complete == batch.complete == SMALL_SUBMISSIONS and not batch.failed_shards
    lb_online, lb_batch = reduce_run(online.run_uri), reduce_run(batch.run_uri)
    assert _without_cost(lb_batch.model_dump()) == _without_cost(lb_online.model_dump())
    assert _paid(batch.run_uri) == pytest.approx(_paid(online.run_uri) / 2, rel=1e-9)
    calls = read_table(batch.run_uri, "calls", columns=["purpose", "batch_id"])
    judged = pc.not_equal(calls.column("purpose"), "preflight")
    assert pc.all(pc.is_valid(pc.filter(calls.column("batch_id"), judged))).as_py()  # every call names its batch
    # each stage is batched across submissions: fewer batches than submissions per vendor
    assert all(0 < n < SMALL_SUBMISSIONS for n in created.values()), created


def _wait_submitted_and_polled(emus: EmulatorThread, driver: subprocess.Popen[str]) -> bool:
    """Every judge vendor has a batch, and every batch has been polled (so it is journalled).

    The wait also ends when the driver exits (a thread wakes it), so a driver that failed is
    reported at once, and one that is only slow on a loaded machine is waited for."""

    def ready(stores: dict[str, Any]) -> bool:
        return all(s.batches for s in stores.values()) and all(
            b.polls > 0 for s in stores.values() for b in s.batches.values())

    def wake_when_the_driver_exits() -> None:
        driver.wait()
        with emus.emulators.changed:
            emus.emulators.changed.notify_all()

    threading.Thread(target=wake_when_the_driver_exits, daemon=True).start()
    emus.wait_batches(lambda stores: driver.poll() is not None or ready(stores), timeout_s=PROGRESS_DEADLINE_S)
    return ready(emus.batch_stores())


def test_driver_sigkilled_between_submit_and_results_is_rerun_and_submits_nothing_twice(
    ray_local, small_sample, tmp_path
) -> None:
    slow = EmulatorConfig(batch=BatchSettings(completion_s=86_000))  # nothing ends until the test says so
    with start_in_thread(slow, responder=OfflineResponder()) as emus:
        cfg = _config(emus, batch=True)
        cfg = cfg.model_copy(update={"batch": cfg.batch.model_copy(update={"flush_interval_s": 2.0})})
        cfg_file = tmp_path / "cfg.yaml"
        cfg_file.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
        env = {**os.environ, "RAY_AUTH_MODE": "disabled", "GRPC_VERBOSITY": "ERROR"}
        cmd = [sys.executable, "-m", "jobs.cli", "sweep", str(small_sample), "-s", str(small_sample / "submissions"),
               "-o", str(tmp_path / "runs"), "--run-id", "killed", "--vendors", "real", "--config", str(cfg_file),
               "--batch", "--shard-size", str(SMALL_SUBMISSIONS), "--max-in-flight", "1", "--no-progress",
               "--no-reduce"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, cwd=REPO)
        try:
            reached = _wait_submitted_and_polled(emus, proc)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
        assert reached, f"the driver never submitted its Stage A batches: {err[-2000:]}"
        run = str(tmp_path / "runs" / "killed")
        before = {k: (s.creates, dict(s.submitted)) for k, s in emus.batch_stores().items()}
        # labels: a batch whose submit was on the wire at the kill has no vendor id in the journal yet
        stage_a = {v: [r.label for r in rs] for v, rs in load_all(run).items()}
        assert set(stage_a) == {"openai", "xai", "anthropic"}  # journalled before the driver waited
        assert not fs.exists(fs.join(run, "submissions"))  # killed before any result

        for store in emus.batch_stores().values():  # the vendors finish the batches while no driver runs
            store.settings.completion_s = 0.0
        # the same command again; in this process, on the session's Ray: the re-run is not what is
        # killed, and a second Ray start would be most of its time
        resumed = CliRunner().invoke(app, cmd[3:])
        assert resumed.exit_code == 0, resumed.output[-3000:]

        for vendor, store in emus.batch_stores().items():
            creates, submitted = before[vendor]
            # the re-run submitted the audit stages (the auditor is on the openai emulator) ...
            assert store.creates > creates if vendor == "openai" else store.creates >= creates
            assert max(store.submitted.values()) == 1, vendor  # ...and no request was ever submitted twice
            assert all(store.submitted[c] == n for c, n in submitted.items())
    journal = load_all(run)
    for vendor, labels in stage_a.items():
        records = {r.label: r for r in journal[vendor]}
        # polled and collected, not resubmitted (or, if its submit never reached the vendor, abandoned)
        assert all(records[label].phase in ("collected", "abandoned") for label in labels)
        assert any(records[label].phase == "collected" for label in labels)
    calls = read_table(run, "calls", columns=["vendor", "purpose", "batch_id", "outcome"])
    rows = calls.to_pylist()
    assert all(r["outcome"] == "ok" for r in rows)
    pre_kill = {r.batch_id for v, labels in stage_a.items() for r in journal[v] if r.label in labels and r.batch_id}
    rubric_batches = {r["batch_id"] for r in rows if r["purpose"] == "rubric"}
    assert pre_kill <= rubric_batches  # the pre-kill batches answered the rubric calls
    subs = read_table(run, "submissions", columns=["submission_id", "status"]).to_pylist()
    assert {r["status"] for r in subs} == {"complete"}
    # each submission graded by the re-run; the killed attempt's shard may have been finished by its
    # Ray worker after the driver died (the worker outlives it until Ray reaps the job): its rows are
    # a second grading under attempt 1's name, paid by the same batches (nothing was submitted twice,
    # above), and the reduction takes each submission's latest (docs/OUTPUT.md)
    assert len({r["submission_id"] for r in subs}) == SMALL_SUBMISSIONS and len(subs) <= 2 * SMALL_SUBMISSIONS
    assert _attempt(run, 2)["graded"] == SMALL_SUBMISSIONS


def _attempt(run: str, n: int) -> dict[str, Any]:
    """An attempt's summary as the run keeps it (`_attempts/`: the summary's JSON form)."""
    return json.loads(Path(run, "_attempts", f"attempt-{n:04d}.json").read_text())


@pytest.fixture(scope="module")
def detached_then_collected(ray_local, small_sample, tmp_path_factory) -> dict[str, Any]:
    """One `--detach` pass and the command it printed to collect, through the CLI in this process,
    with what the vendors and `tribunal status` showed between and after; the two tests below read
    it (each used to make its own pair of sweeps)."""
    slow = EmulatorConfig(batch=BatchSettings(completion_s=86_000))  # nothing ends until this says so
    tmp = tmp_path_factory.mktemp("detach")
    out = str(tmp / "runs")
    with start_in_thread(slow, responder=OfflineResponder()) as emus:
        cfg_file = tmp / "cfg.yaml"
        cfg_file.write_text(yaml.safe_dump(_config(emus, batch=True).model_dump(mode="json")))
        detach = CliRunner().invoke(app, [
            "sweep", str(small_sample), "-s", str(small_sample / "submissions"), "-o", out, "--run-id", "paid",
            "--vendors", "real", "--config", str(cfg_file), "--batch", "--no-progress", "--no-reduce", "--detach"])
        assert detach.exit_code == 3, detach.output
        run = str(Path(out, "paid"))
        journal = load_all(run)
        created = {k: s.creates for k, s in emus.batch_stores().items()}
        status = CliRunner().invoke(app, ["status", run, "--json"])
        text_detached = CliRunner().invoke(app, ["status", run], env={"COLUMNS": "200"})
        again = [line.strip() for line in detach.output.splitlines() if line.strip().startswith("tribunal sweep")]
        assert len(again) == 1, detach.output

        for store in emus.batch_stores().values():
            store.settings.completion_s = 0.0
        collect = CliRunner().invoke(app, shlex.split(again[0])[1:])  # the command the detach pass printed
        submitted_at_most = {vendor: max(store.submitted.values()) for vendor, store in emus.batch_stores().items()}
    text = CliRunner().invoke(app, ["status", run])
    return {"run": run, "detach": detach, "journal": journal, "created": created, "status": status,
            "again": again, "collect": collect, "submitted_at_most": submitted_at_most, "text": text,
            "text_detached": text_detached}


def test_detach_submits_and_exits_and_a_later_run_collects_with_status_showing_every_batch(
    detached_then_collected
) -> None:
    d = detached_then_collected
    first = _attempt(d["run"], 1)
    assert d["detach"].exit_code == 3  # submitted, and exited with work left
    assert first["complete"] == first["graded"] == 0 and first["awaiting_batches"] == SMALL_SUBMISSIONS  # nothing waited for
    assert all(n > 0 for n in d["created"].values()), d["created"]

    status = d["status"]
    assert status.exit_code == 0, status.output
    report = json.loads(status.output)
    assert report["batch_mode"] and not report["finished"]
    assert set(report["batches"]) == {"openai", "xai", "anthropic"}
    for batches in report["batches"].values():
        assert all(b["phase"] != "collected" and b["expires_at"] for b in batches)
    # the detach pass recorded every submission incomplete, awaiting its batches: none is called graded,
    # nor incomplete (nothing failed)
    said = " ".join(d["text_detached"].output.split())
    assert f"submissions: 0 of {SMALL_SUBMISSIONS} complete ({SMALL_SUBMISSIONS} awaiting their batch (detached))" in said, said
    assert report["submissions"] == {"awaiting_batch": SMALL_SUBMISSIONS}

    assert d["collect"].exit_code == 0, d["collect"].output
    second = _attempt(d["run"], 2)
    assert second["complete"] == SMALL_SUBMISSIONS and not second["failed_shards"]
    assert all(n == 1 for n in d["submitted_at_most"].values()), d["submitted_at_most"]
    text = d["text"]
    assert text.exit_code == 0 and "every batch collected" in text.output
    assert f"submissions: {SMALL_SUBMISSIONS} of {SMALL_SUBMISSIONS} complete" in " ".join(text.output.split())


_ROLES = ("paid_calls", "failed_calls", "collected_calls", "reused_calls", "awaiting_calls")


def test_detach_then_collect_each_report_what_they_paid_collected_and_graded_and_add_up_to_the_calls_table(
    detached_then_collected
) -> None:
    d = detached_then_collected
    detach, run, journal = d["detach"], d["run"], d["journal"]
    assert detach.exit_code == 3, detach.output
    first = _attempt(run, 1)
    mine = [r for rs in journal.values() for r in rs if r.live]
    # the detach pass: nothing graded, every submission waiting, and what it submitted per vendor
    assert (first["graded"], first["complete"], first["awaiting_batches"]) == (0, 0, SMALL_SUBMISSIONS)
    assert first["batches_submitted"] == len(mine) and first["batch_requests_submitted"] == sum(
        len(r.requests) for r in mine) > 0
    assert first["collected_calls"] == 0 and first["awaiting_calls"] > 0
    sent = {v: b for v, b in first["batches"].items() if b["batches_submitted"]}
    assert set(sent) == set(journal) == {"openai", "xai", "anthropic"}  # Stage A: the judges
    assert all(b["open"] == b["batches_submitted"] and b["ends_by"] for b in sent.values())
    text = " ".join(detach.output.split())
    assert f"--detach: {SMALL_SUBMISSIONS} submission(s) wait on their batches (0 graded by this command)" in text
    assert f"tribunal status {run}" in text
    again = d["again"]
    assert len(again) == 1 and "--detach" not in again[0] and "--run-id paid" in again[0]
    assert d["collect"].exit_code == 0, d["collect"].output  # the command the detach pass printed

    second = _attempt(run, 2)
    assert (second["graded"], second["complete"], second["awaiting_batches"]) == (SMALL_SUBMISSIONS, SMALL_SUBMISSIONS, 0)
    calls = read_table(run, "calls", columns=["request_hash", "purpose", "started_at", "cost_usd", "batch_id",
                                              "reused_from"]).to_pylist()
    # paid by the detach pass: only its preflight calls (its batches are priced when collected)
    assert first["paid_calls"] == sum(1 for c in calls if c["purpose"] == "preflight"
                                      and c["started_at"] < second["started_at"]) > 0
    # paid by the collecting command = the rows of calls it started (online, or in batches it submitted)
    own = [c for c in calls if c["started_at"] >= second["started_at"] and c["reused_from"] is None]
    assert second["paid_calls"] + second["failed_calls"] == len(own) > 0
    assert second["cost_usd"] == pytest.approx(math.fsum(c["cost_usd"] for c in own), rel=1e-9)
    # collected = the results of exactly the requests the detach pass submitted (paid then)
    collected = [c for c in calls if c["batch_id"] and c["reused_from"] is None
                 and c["started_at"] < second["started_at"]]
    assert {c["request_hash"] for c in collected} == {h for r in mine for h in r.requests}
    assert second["collected_calls"] == len(collected)
    assert second["collected_usd"] > 0
    assert second["collected_usd"] == pytest.approx(math.fsum(c["cost_usd"] for c in collected), rel=1e-9)
    # the two commands add up to the run's calls table: every row, and the USD of the rows not reused
    assert sum(a[k] for a in (first, second) for k in _ROLES) == len(calls)
    assert first["cost_usd"] + second["cost_usd"] + second["collected_usd"] == pytest.approx(
        math.fsum(c["cost_usd"] for c in calls if c["reused_from"] is None), rel=1e-9)
