"""A run's identity and its attempts: the run id, run.json, resuming, `--reuse`, one summary per attempt.

Why a run id derived from the inputs (`default_run_id`): the same command names the same run, so
running a sweep again resumes it instead of starting over; a run resumes only with the benchmark,
configuration and vendor mode it was made with (`check_resumable`), since its rows would otherwise
mix two gradings. `open_run` is the driver's one step over all of this.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evalcore.config.models import TribunalConfig, VendorMode
from evalcore.errors import TribunalError
from evalcore.prompts import template_hashes
from evalcore.schema import Task
from evalcore.storage import fs
from evalcore.storage.store import (
    RUN_RECORD,
    BenchmarkRef,
    ModelRef,
    RunRecord,
    TaskRef,
    write_json,
)
from jobs.sweep_options import SweepOptions, SweepSummary

if TYPE_CHECKING:
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
    if previous.config_fingerprint != config_fingerprint(opts.config):
        raise TribunalError(f"{run_uri}: this run was made with a different configuration; {fix}")


def check_reusable(reuse_uris: list[str], vendors: VendorMode) -> None:
    """`--reuse` serves stored answers as this run's: never emulated or offline ones in a real run."""
    for uri in reuse_uris:
        if not fs.exists(fs.join(uri, RUN_RECORD)):
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


ATTEMPTS = "_attempts"
"""Folder of the run holding one summary per attempt (`attempt-0001.json`, ...): a resumed run
adds its own instead of overwriting the summary of the run that did the work."""


def next_attempt(run_uri: str) -> int:
    """1 for a new run; one more than the attempts already recorded for a resumed one."""
    return len(fs.list_files(fs.join(run_uri, ATTEMPTS), suffix=".json")) + 1


def write_attempt_summary(summary: SweepSummary) -> None:
    """`_attempts/attempt-<n>.json`, for every attempt (finished, interrupted or with failed shards)."""
    write_json(fs.join(summary.run_uri, ATTEMPTS, f"attempt-{summary.attempt:04d}.json"), summary.as_dict())


def run_record(opts: SweepOptions, run_id: str, tasks: list[Task], benchmark_hash: str) -> RunRecord:
    """run.json: everything that produced the run, and nothing secret."""
    cfg = opts.config
    return RunRecord(
        run_id=run_id,
        created_at=time.time(),
        code_version=code_version(),
        vendors=opts.vendors,
        config_fingerprint=config_fingerprint(cfg),
        config=cfg,
        judges=[ModelRef(name=j.name, family=j.family, model=j.model, effort=j.reasoning_effort) for j in cfg.judges],
        auditor=ModelRef(name=cfg.auditor.name, model=cfg.auditor.model, effort=cfg.auditor.reasoning_effort),
        prompt_hashes=template_hashes(),
        benchmark=BenchmarkRef(
            uri=opts.benchmark,
            content_hash=benchmark_hash,
            tasks=[TaskRef(id=t.id, area=t.area, n_criteria=len(t.criteria)) for t in tasks],
        ),
        submissions_uri=opts.submissions,
        reuse=opts.reuse,
    )


@dataclass(frozen=True)
class OpenedRun:
    """The run a sweep writes into, and the runs it may take stored answers from."""

    run_id: str
    run_uri: str
    reuse_uris: list[str]
    attempt: int


def open_run(opts: SweepOptions, bench: BenchmarkLoad) -> OpenedRun:
    """Name the run, refuse what cannot be resumed or reused, write run.json for a new run, and number this attempt."""
    benchmark_hash = bench.content_hash()
    run_id = opts.run_id or default_run_id(benchmark_hash, opts.submissions, opts.config)
    run_uri = fs.join(opts.output, run_id)
    reuse_uris = [resolve_run_uri(opts.output, r) for r in opts.reuse]
    check_reusable(reuse_uris, opts.vendors)
    if fs.exists(fs.join(run_uri, RUN_RECORD)):
        check_resumable(run_uri, RunRecord.read(run_uri), opts, benchmark_hash)
    else:
        run_record(opts, run_id, bench.tasks, benchmark_hash).write(run_uri)
    return OpenedRun(run_id, run_uri, reuse_uris, next_attempt(run_uri))
