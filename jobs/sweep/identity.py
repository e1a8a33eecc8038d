"""A run's identity and its attempts: the run id, run.json, resuming, `--reuse`, one record per attempt.

Why a run id derived from the inputs (`default_run_id`): the same command names the same run, so
running a sweep again resumes it instead of starting over; a run resumes only with the benchmark,
configuration and vendor mode it was made with (`check_resumable`), since its rows would otherwise
mix two gradings. `start_run` is the driver's one step over all of this: it takes the run's lock
(`evalcore.storage.lock`: one writer per run), then creates run.json or checks it, then claims the
attempt's number by creating its record (`claim_attempt`), so no later command, after a kill at
any point or racing this one, can take the same number and overwrite this attempt's files.
`writing_into` is what holds while the sweep writes: the lock, released at the end, and a storage
failure turned into a resumable one (`RunStorageFailed`, exit 3).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evalcore.benchmark.identity import BenchmarkIdentity
from evalcore.config.models import TribunalConfig, VendorMode
from evalcore.errors import StorageError, TribunalError
from evalcore.prompts import template_hashes
from evalcore.schema import Task
from evalcore.storage import fs
from evalcore.storage.lock import RunLock, this_command
from evalcore.storage.run import open_run
from evalcore.storage.run_folder import RUN_RECORD
from evalcore.storage.store import (
    BenchmarkRef,
    ModelRef,
    RunRecord,
    TaskRef,
    write_json,
)
from jobs.sweep.options import SweepOptions, SweepSummary, root_cause

if TYPE_CHECKING:
    from rich.console import Console

    from evalcore.benchmark.loader import BenchmarkLoad


def code_version() -> str:
    """git describe of the checkout when available, else the package version."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
        if out.returncode == 0:
            return out.stdout.strip()
    except OSError:
        pass
    from evalcore import __version__

    return __version__


def config_fingerprint(config: TribunalConfig) -> str:
    """Hash of everything in the configuration that changes what is graded.

    Where a vendor is reached (endpoint, key variable) and how calls are scheduled (cache warming)
    are left out, so a run resumes across a
    moved endpoint; the vendor mode is recorded next to it in run.json and checked separately.
    """
    cfg = config.public_dict()
    cfg.pop("input_limits", None)  # which inputs are accepted, not how they are graded: raising one resumes
    cfg.pop("data_governance", None)  # what the vendors and the disk keep, not what is asked or answered
    for v in [*cfg["judges"], cfg["auditor"]]:
        v.pop("endpoint", None)
        v.pop("api_key_env", None)
        v.pop("warm_prompt_cache", None)  # scheduling only: the same requests, the same rows
        v.pop("actors", None)  # how many processes carry a vendor, not what it is asked
        v.pop("actor_calls_per_s", None)
        v.pop("prompt_cache_retention", None)  # how long the vendor keeps its cache, not what it answers
    for timing in ("flush_interval_s", "poll_interval_s"):  # how often, not what, is asked
        cfg.get("batch", {}).pop(timing, None)
    cfg.get("batch", {}).pop("retention", None)  # how long the vendor keeps the files (data_governance)
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()


def default_run_id(benchmark_hash: str, submissions: str, config: TribunalConfig) -> str:
    """Same command, same run id: re-running a sweep resumes it instead of starting over."""
    key = json.dumps([benchmark_hash, submissions, config_fingerprint(config)], sort_keys=True)
    return "run-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def check_resumable(run_uri: str, previous: RunRecord, opts: SweepOptions, benchmark_hash: str) -> None:
    """A run resumes only with the benchmark, configuration and vendor mode it was made with."""
    fix = "use another --run-id (and --reuse this run to pay only for what changed)"
    if previous.benchmark.content_hash != benchmark_hash:
        raise TribunalError(f"{run_uri}: this run was made from a different benchmark content; {fix}")
    if previous.vendors != opts.vendors:
        raise TribunalError(
            f"{run_uri}: this run was made with --vendors {previous.vendors}, not {opts.vendors}; {fix}"
        )
    if previous.config_fingerprint != config_fingerprint(opts.identity_config or opts.config):
        raise TribunalError(f"{run_uri}: this run was made with a different configuration; {fix}")


def check_reusable(reuse_uris: list[str], vendors: VendorMode) -> None:
    """`--reuse` serves stored answers as this run's: never emulated or offline ones in a real run."""
    for uri in reuse_uris:
        if not fs.exists(open_run(uri).record):
            raise TribunalError(f"{uri}: --reuse names no run (no {RUN_RECORD} there)")
        mode = RunRecord.read(uri).vendors
        if vendors == VendorMode.REAL and mode != VendorMode.REAL:
            raise TribunalError(
                f"{uri}: made with --vendors {mode}; its answers cannot be reused in a run with real vendors"
            )


def resolve_run_uri(output: str, run: str) -> str:
    """A `--reuse` value may be a run id under the output folder or a full run URI."""
    if "://" in run or run.startswith("/") or run.startswith("."):
        return run
    return fs.join(output, run)


# `_attempts/` holds one record per attempt (`attempt-0001.json`, ...): created when the attempt
# starts (its claim on the number), replaced by the attempt's summary when it ends; a resumed run
# adds its own instead of overwriting the record of the run that did the work.
_ATTEMPT_NAME = re.compile(r"attempt-(\d{4,})\.json")


def attempt_uri(run_uri: str, attempt: int) -> str:
    """The record of one attempt."""
    return open_run(run_uri).attempt(attempt)


def next_attempt(run_uri: str) -> int:
    """1 for a new run; one more than the highest attempt recorded (claimed or finished) for a resumed one."""
    names = (fs.basename(f) for f in fs.list_files(open_run(run_uri).attempts, suffix=".json"))
    numbers = [int(m.group(1)) for n in names if (m := _ATTEMPT_NAME.fullmatch(n))]
    return max(numbers, default=0) + 1


def claim_attempt(run_uri: str, run_id: str) -> int:
    """This attempt's number, claimed by creating its record (create-only): the next number whose
    record does not exist; a number another command claimed first is skipped, never shared.

    Why at the start: the number names the attempt's files (`calls/preflight-<n>.parquet`, its
    shards, its rejections); claimed only at the end, a killed attempt left no record and the next
    command took its number and overwrote its files."""
    attempt = next_attempt(run_uri)
    for _ in range(1000):
        claim = {"attempt": attempt, "run_id": run_id, "run_uri": run_uri, "status": "running",
                 "started_at": time.time(), "pid": os.getpid(), "host": socket.gethostname(),
                 "command": this_command()}
        if fs.write_new(attempt_uri(run_uri, attempt), json.dumps(claim, indent=2, sort_keys=True).encode()):
            return attempt
        attempt += 1
    raise StorageError(f"{open_run(run_uri).attempts}: no free attempt number after {attempt - 1}")


def write_attempt_summary(summary: SweepSummary) -> None:
    """`_attempts/attempt-<n>.json`, for every attempt (finished, interrupted or with failed shards):
    the attempt's own record, claimed by `claim_attempt`, replaced by its summary."""
    write_json(attempt_uri(summary.run_uri, summary.attempt), summary.as_dict())


KILL_AT_ENV = "TRIBUNAL_TEST_KILL_AT"
"""Test seam: `attempt` (the attempt claimed), `shard:N` (the N-th shard collected) or `tables`
(every table written, before the attempt's summary): the driver SIGKILLs itself there, as a
``kill -9`` or a lost machine would stop it, so a test can check what a resume finds."""


def kill_point(point: str, count: int | None = None) -> None:
    """SIGKILL this process when `KILL_AT_ENV` names this point (unset in production: one lookup)."""
    wanted = os.environ.get(KILL_AT_ENV)
    if wanted and wanted == (point if count is None else f"{point}:{count}"):
        os.kill(os.getpid(), signal.SIGKILL)


class RunStorageFailed(StorageError):
    """Writing into the run failed mid-sweep (a full disk, S3 unreachable): resumable (exit 3).

    Every file written is whole and no file was overwritten, so the run holds exactly what was
    stored; the same command, once the cause is fixed, resumes from there (also from a copy of
    the run folder elsewhere)."""


def resumable(exc: StorageError, note: str = "") -> RunStorageFailed:
    """A storage failure of a sweep as one line: the file, the cause, and what to do."""
    return RunStorageFailed(f"{exc}{note}; every file written is whole: fix the cause (or copy the run folder "
                            "elsewhere) and run the same command again to resume")


def storage_failure(exc: BaseException) -> StorageError | None:
    """The StorageError behind a failed Ray task (`RayTaskError(StorageError)`), or None."""
    cause = root_cause(exc)
    return cause if isinstance(cause, StorageError) else None


def run_record(opts: SweepOptions, run_id: str, tasks: list[Task], benchmark_hash: str,
               identity: BenchmarkIdentity | None = None) -> RunRecord:
    """run.json: everything that produced the run, and nothing secret."""
    cfg = opts.identity_config or opts.config
    return RunRecord(
        run_id=run_id,
        created_at=time.time(),
        code_version=code_version(),
        vendors=opts.vendors,
        config_fingerprint=config_fingerprint(cfg),
        config=cfg.as_sent(),  # the prompt-cache retention each request sends, never `shortest`
        judges=[ModelRef(name=j.name, family=j.family, model=j.model, effort=j.reasoning_effort) for j in cfg.judges],
        auditor=ModelRef(name=cfg.auditor.name, model=cfg.auditor.model, effort=cfg.auditor.reasoning_effort),
        prompt_hashes=template_hashes(),
        benchmark=BenchmarkRef(
            uri=opts.benchmark,
            content_hash=benchmark_hash,
            tasks=[TaskRef(id=t.id, area=t.area, n_criteria=len(t.criteria)) for t in tasks],
            name=identity.name if identity else None,
            version=identity.version if identity else None,
        ),
        submissions_uri=opts.submissions,
        reuse=opts.reuse,
    )


@dataclass(frozen=True)
class OpenedRun:
    """The run a sweep writes into, the runs it may take stored answers from, and its lock."""

    run_id: str
    run_uri: str
    reuse_uris: list[str]
    attempt: int
    lock: RunLock | None = None


def check_named_run_record(opts: SweepOptions) -> None:
    """Read the run.json of a run named by ``--run-id`` now, if it exists: a damaged or foreign one is
    refused (`RunRecord.read`: `<run>/run.json: damaged: ...`) before OCR, Ray or a vendor starts,
    not after minutes of work. `start_run` reads it again to check what it says (a default run id
    needs the loaded benchmark's hash, so only a named run can be checked this early)."""
    if opts.run_id is None:
        return
    run_uri = fs.join(opts.output, opts.run_id)
    if fs.exists(open_run(run_uri).record):
        RunRecord.read(run_uri)


def start_run(
    opts: SweepOptions, bench: BenchmarkLoad, *, take_over_lock: bool = False, console: Console | None = None
) -> OpenedRun:
    """Name the run, take its lock, refuse what cannot be resumed or reused, create run.json for a
    new run, and claim this attempt's number. On any failure here the lock is released."""
    benchmark_hash = bench.content_hash()
    run_id = opts.run_id or default_run_id(benchmark_hash, opts.submissions, opts.identity_config or opts.config)
    run_uri = fs.join(opts.output, run_id)
    reuse_uris = [resolve_run_uri(opts.output, r) for r in opts.reuse]
    check_reusable(reuse_uris, opts.vendors)
    from rich.console import Console
    from rich.text import Text

    out = console or Console(stderr=True)
    lock = RunLock.acquire(run_uri, take_over=take_over_lock,
                           warn=lambda message: out.print(Text(message, style="yellow"), soft_wrap=True))
    try:
        try:
            created = not fs.exists(open_run(run_uri).record) and run_record(
                opts, run_id, bench.tasks, benchmark_hash, bench.identity).create(run_uri)
        except StorageError as exc:
            raise resumable(exc) from exc
        if not created:  # an unreadable or foreign run.json is bad input (exit 1), not a write failure
            check_resumable(run_uri, RunRecord.read(run_uri), opts, benchmark_hash)
        try:
            attempt = claim_attempt(run_uri, run_id)
        except StorageError as exc:
            raise resumable(exc) from exc
    except BaseException:
        lock.release()
        raise
    kill_point("attempt")
    return OpenedRun(run_id, run_uri, reuse_uris, attempt, lock)


@contextmanager
def writing_into(run: OpenedRun) -> Iterator[None]:
    """While a sweep writes into its run: the lock stays held (released at the end, also on Ctrl-C
    or an error), and a storage failure is `RunStorageFailed` (resumable, exit 3)."""
    try:
        yield
    except RunStorageFailed:
        raise
    except StorageError as exc:
        raise resumable(exc) from exc
    finally:
        if run.lock is not None:
            run.lock.release()
