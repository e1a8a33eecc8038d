"""The distributed sweep on a real local Ray cluster, real vendor SDKs against our emulators, and a
real S3 protocol server (moto on 127.0.0.1): full sample to s3://, resume, reuse, crash safety.

The whole sample is swept once (`s3_run`): the one place its totals are checked. Everything else
(resume, reuse, a kill, a Ctrl-C, a preflight failure, a bad submission) is about a sweep's
mechanics, which the number of submissions does not change: those run on the small sample
(`tests/jobs/conftest.py::small_sample`, 8 submissions), and share one uninterrupted sweep of it
(`small_run`) where they need a finished run or a reference."""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest
import yaml
from typer.testing import CliRunner

from doubles.emulators import OfflineResponder
from doubles.emulators._set import start_in_thread
from evalcore.benchmark.loader import load_benchmark
from evalcore.prompts import parse_prompt
from evalcore.storage import fs
from evalcore.storage.store import RunRecord, read_json, read_table
from jobs.cli.app import app
from jobs.sweep.driver import run_sweep
from jobs.sweep.options import SweepOptions
from tests.conftest import create_bucket
from tests.jobs.conftest import SAMPLE, SMALL_SUBMISSIONS, WRONG_KEY, WRONG_KEY_ENV, emulated_config
from tests.ray_start import PROGRESS_DEADLINE_S

pytestmark = [pytest.mark.ray, pytest.mark.s3]


@pytest.fixture(scope="module")
def emulators():
    with start_in_thread(responder=OfflineResponder()) as emus:
        yield emus


def _requests(emus) -> dict[str, int]:
    return {k: v.requests for k, v in emus.stats().items()}


def _sweep(cfg, output: str, run_id: str, root: Path = SAMPLE, submissions: Path | None = None, **kw) -> object:
    """An in-process sweep of `root` (the sample's layout: tasks and `submissions/`, unless
    `submissions` names another source) on the session's Ray."""
    kw = {"shard_size": 4, "max_in_flight": 4, **kw}
    opts = SweepOptions(
        benchmark=str(root), submissions=str(submissions or root / "submissions"), output=output, config=cfg,
        vendors="emulated", run_id=run_id, progress=False, **kw,
    )
    return run_sweep(opts)


def _cli_sweep(root: Path, output: str, run_id: str, cfg_file: Path, *, attach: bool = False) -> list[str]:
    """`tribunal sweep` of `root` as a user types it, two submissions a shard, two shards in flight.

    `attach`: on the session's Ray (`--address` of the running cluster, as a sweep attaches to a
    cluster) rather than a Ray of its own, for a test about the driver's handling of Ctrl-C, which
    is the same wherever its shards run (a local start costs ~7 s on a quiet machine, several
    times that on a busy one). A test that kills the driver starts its own: the kill takes that
    Ray with it.
    """
    import ray

    address = ["--address", ray.get_runtime_context().gcs_address] if attach else []
    return [sys.executable, "-m", "jobs.cli", "sweep", str(root), "-s", str(root / "submissions"),
            "-o", output, "--run-id", run_id, "--vendors", "real", "--config", str(cfg_file),
            "--shard-size", "2", "--max-in-flight", "2", "--no-progress", "--no-reduce", *address]


@pytest.fixture(scope="module")
def s3_run(ray_local, s3_server, emulators):
    """One full sweep of the sample to s3://, shared by the assertions below."""
    bucket = create_bucket(s3_server)
    cfg = emulated_config(emulators.endpoints)
    before = _requests(emulators)
    summary = _sweep(cfg, f"s3://{bucket}/runs", "full", shard_size=3)  # 3: a task's 4 submissions span 2 shards
    after = _requests(emulators)
    return {"bucket": bucket, "cfg": cfg, "summary": summary, "sent": {k: after[k] - before[k] for k in after}}


def test_full_sample_sweep_to_s3_writes_every_table(s3_run) -> None:
    bench = load_benchmark(str(SAMPLE))
    n_criteria = {t.id: len(t.criteria) for t in bench.tasks}
    run = s3_run["summary"].run_uri
    assert run.startswith("s3://")
    subs = read_table(run, "submissions")
    systems = {p.name for p in (SAMPLE / "submissions").iterdir() if p.is_dir()}
    assert subs.num_rows == len(systems) * len(n_criteria)
    assert set(subs.column("status").to_pylist()) == {"complete"}
    verdicts = read_table(run, "verdicts")
    assert verdicts.num_rows == 3 * sum(n_criteria[t] for t in subs.column("task_id").to_pylist())
    calls = read_table(run, "calls")
    rubric_calls = pc.sum(pc.equal(calls.column("purpose"), "rubric")).as_py()
    assert rubric_calls == verdicts.num_rows
    # every audited submission has a detect call; only score > 0 submissions are audited
    audited = {s for s, a in zip(subs.column("submission_id").to_pylist(), subs.column("audited").to_pylist(), strict=False) if a}
    detect = {s for s, p in zip(calls.column("submission_id").to_pylist(), calls.column("purpose").to_pylist(), strict=False) if p == "detect"}
    assert detect == audited
    zero = {s for s, sc in zip(subs.column("submission_id").to_pylist(), subs.column("task_score").to_pylist(), strict=False) if sc == 0}
    assert not (zero & audited)
    # run record: what produced the run, without secrets; a finished run is marked
    record = read_json(fs.join(run, "run.json"))
    assert record["format_version"] == RunRecord.read(run).format_version == 1
    assert record["benchmark"]["content_hash"] == bench.content_hash()
    assert set(record["prompt_hashes"]) >= {"rubric.v1", "detect.v1", "verify.v1"}
    assert "emulated-key-not-a-secret" not in json.dumps(record)
    assert fs.exists(fs.join(run, "_SUCCESS.json"))
    # the vendors saw exactly the calls recorded, the preflight (one per vendor) included; the
    # summary's calls and cost are the tables'
    paid = calls.filter(pc.is_null(calls.column("reused_from")))
    assert sum(s_ for s_ in s3_run["sent"].values()) == paid.num_rows
    preflight = calls.filter(pc.equal(calls.column("purpose"), "preflight"))
    assert sorted(preflight.column("vendor").to_pylist()) == ["anthropic", "auditor", "openai", "xai"]
    assert set(preflight.column("submission_id").to_pylist()) == {""}
    summary = s3_run["summary"]
    assert summary.paid_calls + summary.reused_calls == calls.num_rows
    assert summary.cost_usd == pytest.approx(pc.sum(calls.column("cost_usd")).as_py(), rel=1e-9)


@pytest.fixture(scope="module")
def small_run(ray_local, s3_server, small_sample, emulators, tmp_path_factory):
    """One uninterrupted sweep of the small sample, two submissions a shard and two in flight (as
    the interrupted sweeps below), from a source with one more submission, for a task that does not
    exist: the sweep that must reject it by name and grade the rest, the reference a killed and
    resumed run must equal, the run a swapped judge reuses, and (fixed) the run `small_rerun` finds
    done. `sent`: the requests it cost; `rejected`: its `rejected` table as it wrote it."""
    import shutil

    subs = tmp_path_factory.mktemp("small-run") / "submissions"
    shutil.copytree(small_sample / "submissions", subs)
    bad = subs / "gpt-strong" / "no-such-area" / "no-such-task"
    bad.mkdir(parents=True)
    (bad / "memo.md").write_text("A memo for a task that does not exist.")
    bucket = create_bucket(s3_server)
    cfg = emulated_config(emulators.endpoints)
    before = _requests(emulators)
    summary = _sweep(cfg, f"s3://{bucket}/runs", "clean", root=small_sample, submissions=subs,
                     shard_size=2, max_in_flight=2)
    sent = sum(_requests(emulators).values()) - sum(before.values())
    return {"bucket": bucket, "cfg": cfg, "summary": summary, "sent": sent, "submissions": subs, "bad": bad,
            "rejected": read_table(summary.run_uri, "rejected")}


@pytest.fixture(scope="module")
def small_rerun(small_run, small_sample, emulators):
    """`small_run`'s bad submission removed (fixed), and the same sweep again: it finds every
    submission done. `before`/`after`: the emulators' request counts around it."""
    import shutil

    shutil.rmtree(small_run["bad"].parent)
    before = _requests(emulators)
    summary = _sweep(small_run["cfg"], f"s3://{small_run['bucket']}/runs", "clean", root=small_sample,
                     submissions=small_run["submissions"], shard_size=2, max_in_flight=2)
    return {"summary": summary, "before": before, "after": _requests(emulators)}


def test_each_tasks_grounding_index_is_built_once_however_many_shards_grade_the_task(s3_run) -> None:
    run = s3_run["summary"].run_uri
    subs = read_table(run, "submissions")
    per_task = Counter(subs.column("task_id").to_pylist())
    # shards of 3 cut task by task: a task's 4 submissions are graded in two shards (by two workers)
    assert set(per_task.values()) == {4} and len(per_task) > 4
    assert s3_run["summary"].source_indexes_built == len(per_task)


def test_second_run_of_a_finished_sweep_sends_zero_vendor_calls(small_run, small_rerun) -> None:
    summary = small_rerun["summary"]
    assert small_rerun["after"] == small_rerun["before"]
    assert summary.graded == 0 and summary.skipped_done == small_run["summary"].submissions_total
    assert read_table(summary.run_uri, "submissions").num_rows == small_run["summary"].submissions_total
    # one summary per attempt: the one that did the work is kept next to the resumed one
    first = read_json(fs.join(summary.run_uri, "_attempts", "attempt-0001.json"))
    second = read_json(fs.join(summary.run_uri, "_attempts", "attempt-0002.json"))
    assert (first["attempt"], first["graded"], second["attempt"], second["graded"]) == (1, SMALL_SUBMISSIONS, 2, 0)
    assert first["paid_calls"] > 0 and second["paid_calls"] == 0
    assert read_json(fs.join(summary.run_uri, "_SUCCESS.json"))["attempt"] == 2


def test_reuse_with_one_judge_swapped_pays_only_that_judges_calls(small_run, small_sample, emulators) -> None:
    cfg = small_run["cfg"]
    swapped = cfg.model_copy(update={"judges": [
        j.model_copy(update={"model": "grok-4.8"}) if j.name == "xai" else j for j in cfg.judges
    ]})
    before = _requests(emulators)
    summary = _sweep(swapped, f"s3://{small_run['bucket']}/runs", "swapped", root=small_sample, reuse=["clean"])
    sent = {k: v - before[k] for k, v in _requests(emulators).items()}
    verdicts = read_table(summary.run_uri, "verdicts")
    xai_rubric = pc.sum(pc.equal(verdicts.column("judge"), "xai")).as_py()
    assert sent["xai"] == xai_rubric + 1  # every xai rubric call is new, plus its preflight
    assert sent["anthropic"] == 1  # preflight only: all its rubric calls were reused
    # the openai emulator serves the openai judge and the auditor: it saw exactly their unpaid-before
    # calls (none for the judge, whose rubric calls were all reused) plus their two preflights
    calls = read_table(summary.run_uri, "calls")
    reused = calls.filter(pc.invert(pc.is_null(calls.column("reused_from"))))
    assert set(reused.column("reused_from").to_pylist()) == {"clean"}
    paid = calls.filter(pc.and_(pc.is_null(calls.column("reused_from")),
                                pc.not_equal(calls.column("purpose"), "preflight")))
    paid_by_vendor = {v: paid.column("vendor").to_pylist().count(v) for v in ("openai", "auditor", "xai", "anthropic")}
    assert paid_by_vendor["openai"] == paid_by_vendor["anthropic"] == 0
    assert sent["openai"] == 2 + paid_by_vendor["auditor"]
    assert paid_by_vendor["xai"] == xai_rubric


STABLE = {
    "submissions": ["submission_id", "status", "task_score", "hc_score", "material_flags", "minor_flags", "audited"],
    "verdicts": ["submission_id", "criterion_id", "judge", "verdict", "reasoning"],
    "flags": ["submission_id", "flag_index", "span", "status", "materiality"],
}


def _rows(run: str, table: str) -> list[tuple]:
    t = read_table(run, table, columns=STABLE[table])
    return sorted(zip(*(t.column(c).to_pylist() for c in STABLE[table]), strict=False), key=repr)


class _HoldRequests:
    """Answers as the offline vendors do, except while `holding`: then it holds every request but a
    preflight until released, as a vendor that stopped answering. Held from the start, no shard
    can ever finish; held from the moment the test sees a shard written, the shards then in flight
    cannot finish before the test has killed or interrupted the driver, however fast or slow the
    machine (a driver that finished first would leave nothing to check)."""

    def __init__(self, holding: bool = False) -> None:
        self.inner = OfflineResponder()
        self.holding = threading.Event()
        if holding:
            self.holding.set()
        self.stalled = threading.Event()
        """Set once a request is held."""
        self.both_shards = threading.Event()
        """Set once requests of more than one shard's submissions are held (two a shard: three or
        more deliverables), so both shards of the window are in flight at the vendors."""
        self._held: list[asyncio.Event] = []
        self._deliverables: set[str] = set()

    async def __call__(self, request):  # type: ignore[no-untyped-def]
        preflight = set((request.json_schema or {}).get("properties", {})) == {"ok"}  # PreflightAnswer
        if self.holding.is_set() and not preflight:
            held = asyncio.Event()
            self._held.append(held)
            self.stalled.set()
            self._deliverables.update(b.text for b in parse_prompt(request.system, request.user).of_kind("deliverable"))
            if len(self._deliverables) > 2:
                self.both_shards.set()
            await held.wait()
        return self.inner(request)

    def stop_holding(self) -> None:
        """Answer the requests that come from now on; the ones held stay held (until `release`)."""
        self.holding.clear()

    async def release(self) -> None:
        """Answer the held requests too."""
        self.stop_holding()
        for held in self._held:
            held.set()
        self._held.clear()


def _kill_driver_and_wait_for_its_ray(sid: int, deadline_s: float = 120.0) -> int:
    """SIGKILL the driver's process group (the driver, and the GCS and raylet of the local Ray it
    started), then wait until every process of its session has exited; returns how many were left.

    Each Ray worker runs in a process group of its own, out of the kill's reach: it exits when it
    notices its raylet is gone, about a second later, and a worker that was writing a shard goes
    on writing it meanwhile (the same command rerun at once, in this process, could read the run
    before that shard landed and grade it again: seen once, duplicate rows). So the rerun
    waits for those exits: on each process's pidfd, never on time. The workers are not killed
    here: a worker killed mid-write leaves part of a shard's tables, which a rerun grades again.

    Except a worker still starting (its command line still Ray's `default_worker.py` or
    `setup_worker.py`, not yet a `ray::` title): it has run no task, so it writes nothing, and it
    waits for its dead raylet until the patient registration timeout (`tests/ray_start.py`: ~25 s
    of this test's minute) before it exits. It is killed with the driver.
    """
    os.killpg(sid, signal.SIGKILL)
    fds = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            state, _ppid, _pgrp, session = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[:4]
            if int(session) != sid or state == "Z":
                continue
            fd = os.pidfd_open(int(entry))
            command = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            if any(part.endswith((b"/default_worker.py", b"/setup_worker.py")) for part in command[:3]):
                signal.pidfd_send_signal(fd, signal.SIGKILL)  # still starting: it holds no write
            fds.append(fd)
        except (OSError, ValueError):  # exited meanwhile
            continue
    try:
        for fd in fds:
            readable, _, _ = select.select([fd], [], [], deadline_s)
            assert readable, f"a Ray process of the killed driver (session {sid}) was still running after {deadline_s} s"
    finally:
        for fd in fds:
            os.close(fd)
    return len(fds)


def test_driver_killed_with_sigkill_then_rerun_equals_uninterrupted_run(
    ray_local, s3_server, small_sample, small_run, tmp_path
) -> None:
    bucket = create_bucket(s3_server)
    hold = _HoldRequests()
    with start_in_thread(responder=hold) as emus:
        cfg_file = tmp_path / "cfg.yaml"
        cfg_file.write_text(yaml.safe_dump(emulated_config(emus.endpoints).model_dump(mode="json")))
        env = {**os.environ, "AWS_ENDPOINT_URL": s3_server,
               "RAY_AUTH_MODE": "disabled", "GRPC_VERBOSITY": "ERROR"}
        cmd = _cli_sweep(small_sample, f"s3://{bucket}/runs", "crash", cfg_file)
        base = _requests(emus)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                start_new_session=True, cwd=Path(__file__).resolve().parents[3])
        assert proc.stdout is not None
        shards_seen = 0
        try:
            for line in proc.stdout:  # blocks until the driver reports a written shard: no sleeps
                if line.startswith("shard "):
                    # the first of its four shards: the next two are in flight, and stay so
                    hold.holding.set()
                    shards_seen += 1
                    break
            _kill_driver_and_wait_for_its_ray(proc.pid)
            proc.wait()
            assert shards_seen == 1, "the driver finished or died before it could be killed mid-run"
            run = f"s3://{bucket}/runs/crash"
            assert not fs.exists(fs.join(run, "_SUCCESS.json"))
            partial = read_table(run, "submissions").num_rows

            # the same command again, in this process on the session's Ray (the rerun is not what is
            # killed); the killed driver's requests stay unanswered, to no one
            hold.stop_holding()
            resumed = CliRunner().invoke(app, cmd[3:], env={"COLUMNS": "200"})
            assert resumed.exit_code == 0, resumed.output[-3000:]
            crash_requests = sum(_requests(emus).values()) - sum(base.values())
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            emus.call(hold.release)  # the killed driver's requests, answered to no one

    # the same sweep uninterrupted (the same submissions graded, the same shards and window)
    clean, clean_requests = small_run["summary"], small_run["sent"]
    assert 0 < partial < clean.submissions_total
    for table in STABLE:
        rows = _rows(run, table)
        assert rows == _rows(clean.run_uri, table), table
        if table != "flags":
            assert len(rows) == len(set(rows)), f"duplicate rows in {table}"
    subs = read_table(run, "submissions")
    assert len(set(subs.column("submission_id").to_pylist())) == subs.num_rows == clean.submissions_total
    # calls repeated at most the in-flight amount: 2 shards x 2 submissions x calls per submission,
    # plus one more preflight per vendor for the second driver
    calls = read_table(clean.run_uri, "calls")
    per_submission = calls.num_rows / clean.submissions_total
    assert crash_requests - clean_requests <= 2 * 2 * per_submission * 1.5 + 4


class _Lines:
    """Every line of a child's pipe, read on a thread of its own.

    Why: iterating a pipe's text wrapper reads ahead, and `communicate()` afterwards reads the raw
    descriptor, so lines already in the wrapper's buffer were lost (two shard lines written
    together counted as one). Here every line is kept, and a test waits for one without sleeping.
    """

    def __init__(self, pipe: Any) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._ended = False
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: Any) -> None:
        for line in pipe:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def wait_for(self, text: str, timeout: float) -> bool:
        """True once a line holding `text` was read (False if the pipe ended first)."""
        def seen() -> bool:
            return any(text in line for line in self.lines)

        with self._changed:
            self._changed.wait_for(lambda: self._ended or seen(), timeout)
            return seen()

    def until_the_end(self, timeout: float) -> list[str]:
        """Every line, once the pipe has ended (the child exited and closed it)."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"the pipe was still open after {timeout} s"
        return self.lines


def test_ctrl_c_stops_after_flushing_the_shards_in_flight(ray_local, s3_server, small_sample, tmp_path) -> None:
    bucket = create_bucket(s3_server)
    hold = _HoldRequests()
    with start_in_thread(responder=hold) as emus:
        cfg_file = tmp_path / "cfg.yaml"
        cfg_file.write_text(yaml.safe_dump(emulated_config(emus.endpoints).model_dump(mode="json")))
        env = {**os.environ, "AWS_ENDPOINT_URL": s3_server, "RAY_AUTH_MODE": "disabled", "GRPC_VERBOSITY": "ERROR"}
        cmd = _cli_sweep(small_sample, f"s3://{bucket}/runs", "ctrlc", cfg_file, attach=True)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, cwd=Path(__file__).resolve().parents[3])
        out, err = _Lines(proc.stdout), _Lines(proc.stderr)
        try:
            # the first of four shards written: the next two are in flight ...
            assert out.wait_for("shard ", timeout=600), "the driver wrote no shard"
            hold.holding.set()  # ... and stay in flight until the driver has the Ctrl-C
            proc.send_signal(signal.SIGINT)  # what Ctrl-C sends the driver
            err.wait_for("flushing", timeout=300)  # the driver acknowledges it (checked below)
        finally:
            emus.call(hold.release)  # the shards in flight finish
            proc.wait(timeout=300)
        said, stdout = "".join(err.until_the_end(60)), out.until_the_end(60)
    assert proc.returncode == 130, said[-3000:]
    assert "flushing" in said
    flushed = sum(1 for line in stdout if line.startswith("shard "))
    run = f"s3://{bucket}/runs/ctrlc"
    subs = read_table(run, "submissions")
    assert flushed >= 1 and subs.num_rows == 2 * flushed  # every shard in flight was written whole, nothing after
    assert not fs.exists(fs.join(run, "_SUCCESS.json"))


def test_a_second_ctrl_c_cancels_the_shards_in_flight_and_the_next_run_grades_them(
    ray_local, s3_server, small_sample, tmp_path
) -> None:
    bucket = create_bucket(s3_server)
    env = {**os.environ, "AWS_ENDPOINT_URL": s3_server, "RAY_AUTH_MODE": "disabled", "GRPC_VERBOSITY": "ERROR"}
    cfg_file = tmp_path / "cfg.yaml"
    cmd = _cli_sweep(small_sample, f"s3://{bucket}/runs", "ctrlc2", cfg_file, attach=True)
    cwd = Path(__file__).resolve().parents[3]
    stall = _HoldRequests(holding=True)  # the preflight answered, then nothing: the shards never end
    with start_in_thread(responder=stall) as emus:
        cfg_file.write_text(yaml.safe_dump(emulated_config(emus.endpoints).model_dump(mode="json")))
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, cwd=cwd)
        assert proc.stderr is not None
        try:
            # both shards of the window at the vendors: one is sent before the preflight, the other
            # once it passed, so the first held call may come before the second shard is sent
            assert stall.both_shards.wait(timeout=PROGRESS_DEADLINE_S), "the two shards never reached the vendors"
            proc.send_signal(signal.SIGINT)
            seen = []
            for line in proc.stderr:  # the driver acknowledges the first Ctrl-C, then we press again
                seen.append(line)
                if "flushing" in line:
                    break
            assert "Ctrl-C again" in "".join(seen)  # the user is told how to stop now
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=120)  # a hang here is the defect: the shards never end
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            emus.call(stall.release)
    assert proc.returncode == 130, err[-2000:]
    assert "cancelled 2 shard(s) in flight" in err
    run = f"s3://{bucket}/runs/ctrlc2"
    assert read_table(run, "submissions").num_rows == 0
    assert not fs.exists(fs.join(run, "_SUCCESS.json"))
    # the same command with vendors that answer (in this process, on the session's Ray: the next
    # run is not what is interrupted): every cancelled submission is graded
    with start_in_thread(responder=OfflineResponder()) as emus:
        cfg_file.write_text(yaml.safe_dump(emulated_config(emus.endpoints).model_dump(mode="json")))
        resumed = CliRunner().invoke(app, cmd[3:], env={"COLUMNS": "200"})
    assert resumed.exit_code == 0, resumed.output[-3000:]
    assert read_table(run, "submissions").num_rows == SMALL_SUBMISSIONS
    assert "flushing" in "".join(seen)  # the first press was acknowledged before the second


def test_preflight_failure_aborts_before_grading_naming_vendor_model_and_cause_never_the_key(
    ray_local, s3_server, small_sample, tmp_path
) -> None:
    from doubles.emulators import EmulatorConfig as Cfg
    from evalcore.errors import PreflightError

    sentinel = WRONG_KEY
    configs = {"openai": Cfg(), "xai": Cfg(), "anthropic": Cfg(api_key="the-right-key")}
    with start_in_thread(configs, responder=OfflineResponder()) as emus:
        cfg = emulated_config(emus.endpoints)
        cfg = cfg.model_copy(update={"judges": [
            j.model_copy(update={"api_key_env": WRONG_KEY_ENV}) if j.adapter == "anthropic" else j
            for j in cfg.judges
        ]})
        with pytest.raises(PreflightError) as info:
            _sweep(cfg, str(tmp_path / "runs"), "preflight", root=small_sample)
        anthropic_requests = emus.requests("anthropic")
        sent = {v: [r.schema_name for r in emus.requests(v)] for v in ("openai", "xai", "anthropic")}
    message = str(info.value)
    assert "anthropic (claude-opus-5-5)" in message and "fatal" in message and "401" in message
    assert sentinel not in message and sentinel[:12] not in message
    assert len(anthropic_requests) == 1  # fatal: never retried
    # the first shards were sent before the preflight, waiting on its gate: not one grading call went out
    assert sent == {"openai": ["PreflightAnswer"] * 2, "xai": ["PreflightAnswer"], "anthropic": ["PreflightAnswer"]}
    assert read_table(str(tmp_path / "runs" / "preflight"), "submissions").num_rows == 0
    # the preflight calls were made (and some paid): each has its row, the failure with its cause
    calls = read_table(str(tmp_path / "runs" / "preflight"), "calls")
    outcomes = dict(zip(calls.column("vendor").to_pylist(), calls.column("outcome").to_pylist(), strict=True))
    assert outcomes == {"openai": "ok", "xai": "ok", "auditor": "ok", "anthropic": "fatal"}


def test_a_bad_submission_is_rejected_by_name_and_the_rest_of_the_sweep_goes_on(small_run, small_rerun) -> None:
    summary = small_run["summary"]
    assert summary.complete == SMALL_SUBMISSIONS and summary.rejected == 1
    assert "no-such-area/no-such-task" in summary.rejections[0] and "unknown task id" in summary.rejections[0]
    rejected = small_run["rejected"]
    assert rejected.num_rows == 1 and "unknown task id" in rejected.column("reason")[0].as_py()
    # fixed and run again (`small_rerun`): nothing is regraded, and the rejection is gone (not counted twice)
    again = small_rerun["summary"]
    assert again.graded == 0 and again.rejected == 0
    assert read_table(summary.run_uri, "rejected").num_rows == 0
