"""A run's files are safe from the commands that write into it (issue 24, items 2 and 4):

* two sweeps started on one run: the second is refused naming the holder, and every call the
  first paid for is in its tables (the tester's run recorded $0.04 of $7.47 paid);
* a sweep killed with SIGKILL at any point (its attempt claimed, mid-shards, its tables written
  but not its summary): the resume takes the next attempt number and no file of the run is ever
  overwritten (the tester's resume reused attempt 2 and overwrote its preflight calls);
* a full disk: exit 3 naming the file and the cause in one line (was `RayTaskError(StorageError)`,
  then a traceback from the reduction, exit 1), and the run, copied elsewhere and resumed, gives
  the same leaderboard as an uninterrupted run.

Real local Ray, the real CLI (a child process where a kill or a full disk must reach the Ray
workers, in-process for the resumes), real vendor SDKs against the emulators, moto S3. Every sweep
here grades the small sample (`small_sample`: 8 submissions): what these tests check is the run's
files, the lock and the exit codes, which the number of submissions does not change.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow.compute as pc
import pytest
import yaml
from typer.testing import CliRunner

from doubles.emulators import OfflineResponder
from doubles.emulators._set import start_in_thread
from evalcore.storage import fs
from evalcore.storage.lock import lease_uri
from evalcore.storage.store import ResumeIndex, read_table
from jobs.cli.app import EXIT_BAD_INPUT, EXIT_INCOMPLETE, app
from jobs.sweep.identity import KILL_AT_ENV
from tests.conftest import create_bucket
from tests.jobs.conftest import SMALL_SUBMISSIONS, emulated_config
from tests.ray_start import PROGRESS_DEADLINE_S

pytestmark = [pytest.mark.ray]

ROOT = Path(__file__).resolve().parents[3]
TOTAL = SMALL_SUBMISSIONS
"""Submissions in the small sample (4 systems x 2 tasks)."""
runner = CliRunner()


def _child_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "RAY_AUTH_MODE": "disabled", "GRPC_VERBOSITY": "ERROR", **extra}


def _run_child(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`tribunal <args>` in a child process with its own local Ray; whatever of its session is left
    when it ends (a killed driver's Ray agents) is killed with it."""
    proc = subprocess.Popen([sys.executable, "-m", "jobs.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, cwd=ROOT)
    try:
        out, err = proc.communicate(timeout=900)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.fixture(scope="module")
def output(tmp_path_factory) -> Path:
    """One output folder for the local runs here: its document cache is converted once."""
    return tmp_path_factory.mktemp("runs")


def _offline(sample: Path, output: Path, run_id: str, *more: str) -> list[str]:
    return ["sweep", str(sample), "-s", str(sample / "submissions"), "-o", str(output), "--run-id", run_id,
            "--vendors", "offline", "--shard-size", "2", "--max-in-flight", "2", "--no-progress", *more]


def _files(run: Path) -> dict[str, tuple[int, bytes]]:
    """Every file of a run (temporary files of a write in progress aside): inode and bytes."""
    return {str(p.relative_to(run)): (p.stat().st_ino, p.read_bytes()) for p in sorted(run.rglob("*"))
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(run).parts)}


def _all_complete(run: str) -> bool:
    index = ResumeIndex.load(run)
    return len(index.done) == TOTAL


# --------------------------------------------------------------------------------------------
# Two sweeps on one run
# --------------------------------------------------------------------------------------------


class _StallAfterPreflight:
    """Answers the preflight calls, then holds every other request until released: the first sweep
    is certainly still running (holding its lock, its preflight paid and stored) when the second
    starts."""

    def __init__(self) -> None:
        self.inner = OfflineResponder()
        self.stalled = threading.Event()
        self._release: asyncio.Event | None = None

    async def __call__(self, request):  # type: ignore[no-untyped-def]
        if set((request.json_schema or {}).get("properties", {})) == {"ok"}:  # PreflightAnswer
            return self.inner(request)
        if self._release is None:
            self._release = asyncio.Event()
        self.stalled.set()
        await self._release.wait()
        return self.inner(request)

    async def release(self) -> None:
        if self._release is None:
            self._release = asyncio.Event()
        self._release.set()


def test_a_second_sweep_on_a_running_run_is_refused_and_every_call_the_first_paid_is_in_its_tables(
    ray_local, s3_server, small_sample: Path, tmp_path
) -> None:
    bucket = create_bucket(s3_server)
    cfg_file = tmp_path / "cfg.yaml"
    run = f"s3://{bucket}/runs/twice"
    args = ["sweep", str(small_sample), "-s", str(small_sample / "submissions"), "-o", f"s3://{bucket}/runs",
            "--run-id", "twice", "--vendors", "real", "--config", str(cfg_file), "--shard-size", "2",
            "--max-in-flight", "2", "--no-progress", "--no-reduce"]
    stall = _StallAfterPreflight()
    with start_in_thread(responder=stall) as emus:
        cfg_file.write_text(yaml.safe_dump(emulated_config(emus.endpoints).model_dump(mode="json")))
        first = subprocess.Popen([sys.executable, "-m", "jobs.cli", *args], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True, cwd=ROOT,
                                 env=_child_env(AWS_ENDPOINT_URL=s3_server))
        try:
            assert stall.stalled.wait(timeout=PROGRESS_DEADLINE_S), "the first sweep never reached the vendors"
            assert fs.exists(lease_uri(run, 1))  # it holds the run: its lease is there
            paid_preflight = fs.read_bytes(fs.join(run, "calls", "preflight-0001.parquet"))
            second = runner.invoke(app, args, env={"COLUMNS": "300"})
        finally:
            emus.call(stall.release)
            try:
                _, err = first.communicate(timeout=600)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(first.pid, signal.SIGKILL)
        sent = sum(v.requests for v in emus.stats().values())
    message = " ".join(second.output.split())
    assert second.exit_code == EXIT_BAD_INPUT, message
    assert f"error: {run} is locked by another command: `tribunal sweep {small_sample}" in message
    assert f"(pid {first.pid} on host " in message and " since " in message and "lock-000001.json" in message
    assert f"Pid {first.pid} is still running on this host" in message
    assert "Traceback" not in message
    assert first.returncode == 0, err[-3000:]
    # the refused command wrote nothing: one attempt, one preflight (unchanged), one lease
    assert [fs.basename(f) for f in fs.list_files(fs.join(run, "_attempts"))] == ["attempt-0001.json"]
    assert fs.read_bytes(fs.join(run, "calls", "preflight-0001.parquet")) == paid_preflight
    assert [fs.basename(f) for f in fs.list_files(fs.join(run, "_lock"))] == ["lock-000001.json"]
    # every request the vendors answered is a paid row of the run's calls table
    calls = read_table(run, "calls")
    paid = calls.filter(pc.is_null(calls.column("reused_from")))
    assert paid.num_rows == sent and sent > 4  # the preflight (4 entries) and every grading call
    assert _all_complete(run)


# --------------------------------------------------------------------------------------------
# Killed at any point
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("point", ["attempt", "shard:2", "tables"])
def test_a_sweep_killed_at_any_point_then_resumed_never_overwrites_a_file_of_the_run(
    ray_local, small_sample: Path, output: Path, point: str
) -> None:
    run_id = f"killed-{point.replace(':', '')}"
    args = _offline(small_sample, output, run_id, "--no-reduce")
    killed = _run_child(args, _child_env(**{KILL_AT_ENV: point}))
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    run = output / run_id
    before = _files(run)
    claim = json.loads(before["_attempts/attempt-0001.json"][1])
    assert claim["status"] == "running" and claim["attempt"] == 1  # claimed, never summarised
    if point == "attempt":
        assert set(before) == {"run.json", "_attempts/attempt-0001.json", "_lock/lock-000001.json"}
    if point == "tables":
        assert "rejected/rejections-0001.parquet" in before and not (run / "_SUCCESS.json").exists()

    resumed = runner.invoke(app, args, env={"COLUMNS": "300"})
    assert resumed.exit_code == 0, resumed.output[-3000:]
    assert "took over the run from" in resumed.output and "which is no longer running" in resumed.output
    after = _files(run)
    changed = sorted(name for name, seen in before.items() if after.get(name) != seen)
    assert changed == [], f"overwritten or removed by the resume: {changed}"
    summary = json.loads(after["_attempts/attempt-0002.json"][1])
    assert summary["attempt"] == 2 and summary["complete"] + summary["skipped_done"] == TOTAL
    # the resume's own files: its preflight (none when everything was done: it sends no call), its lease
    assert ("calls/preflight-0002.parquet" in after) == (point != "tables")
    assert json.loads(after["_lock/lock-000002.json"][1])["took_over"] == 1
    assert json.loads((run / "_SUCCESS.json").read_text())["attempt"] == 2
    assert _all_complete(str(run))


# --------------------------------------------------------------------------------------------
# A full disk
# --------------------------------------------------------------------------------------------


def _scores(lb: dict) -> dict:
    """The leaderboard but the calls tallied per vendor and per vendor and purpose (a resumed run
    has its second attempt's preflight and reused rows besides: counted, free)."""
    tallies = ("cost_by_vendor", "cost_by_purpose")

    def strip(rows: list[dict]) -> list[dict]:
        return [{k: v for k, v in r.items() if k not in tallies} for r in rows]

    return {**{k: v for k, v in lb.items() if k not in tallies},
            "systems": strip(lb["systems"]), "by_area": strip(lb["by_area"])}


def test_a_full_disk_exits_3_naming_the_file_and_a_copy_resumed_elsewhere_gives_the_same_leaderboard(
    ray_local, small_sample: Path, output: Path, tmp_path: Path, monkeypatch
) -> None:
    full = output / "full"
    failed = _run_child(_offline(small_sample, output, "full"),
                        _child_env(**{fs.FULL_DISK_ENV: str(full / "verdicts")}))
    err = " ".join(failed.stderr.split())
    assert failed.returncode == EXIT_INCOMPLETE, err[-3000:]
    assert f"error: {full}/verdicts/part-" in err and ".parquet: no space left on the device; the sweep stopped" in err
    assert "shard not stored (" in err and "run the same command again to resume" in err
    assert "Traceback" not in err and "RayTaskError" not in err
    assert not (full / "_SUCCESS.json").exists() and not (full / "leaderboard.json").exists()
    assert list((full / "verdicts").iterdir()) == []  # nothing half-written under a name a resume trusts
    assert read_table(str(full), "calls").num_rows > 0  # what was paid before the disk filled is kept

    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(full, elsewhere / "full")
    resumed = runner.invoke(app, _offline(small_sample, elsewhere, "full"), env={"COLUMNS": "300"})
    assert resumed.exit_code == 0, resumed.output[-3000:]
    assert _all_complete(str(elsewhere / "full"))
    calls = read_table(str(elsewhere / "full"), "calls")
    assert pc.sum(pc.invert(pc.is_null(calls.column("reused_from")))).as_py() > 0  # attempt 1's calls served

    # an uninterrupted run of the same command; its end-of-sweep reduction meets a full disk: exit 3,
    # the file named, no traceback; `tribunal reduce` once there is room
    clean = tmp_path / "clean"
    monkeypatch.setenv(fs.FULL_DISK_ENV, str(clean / "full" / "leaderboard.json"))
    reduce_failed = runner.invoke(app, _offline(small_sample, clean, "full"), env={"COLUMNS": "300"})
    text = " ".join(reduce_failed.output.split())
    assert reduce_failed.exit_code == EXIT_INCOMPLETE, text[-3000:]
    assert f"error: {clean}/full/leaderboard.json: no space left on the device" in text
    assert reduce_failed.exception is None or isinstance(reduce_failed.exception, SystemExit)
    monkeypatch.delenv(fs.FULL_DISK_ENV)
    assert runner.invoke(app, ["reduce", str(clean / "full")], env={"COLUMNS": "300"}).exit_code == 0

    resumed_lb = json.loads((elsewhere / "full" / "leaderboard.json").read_text())
    clean_lb = json.loads((clean / "full" / "leaderboard.json").read_text())
    assert _scores(resumed_lb) == _scores(clean_lb)
    assert resumed_lb["cost_usd"] == clean_lb["cost_usd"]
