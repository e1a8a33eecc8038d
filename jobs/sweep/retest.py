"""`tribunal retest RUN`: grade a seeded sample of a run's complete submissions K more times.

Why through the sweep engine: a repeat is a grading like any other, so it gets everything a sweep
guarantees (the estimate before it starts and `--max-cost`, Ray, batch mode, the reuse cache,
resume after a kill, one writer per run) by being one. `prepare_retest` turns the command into
`SweepOptions` for the run it repeats: the run's own benchmark, submissions, vendor mode and run
id, and a `RetestPlan` (`evalcore.grading.repeats`) that makes intake read each sampled submission
as its K repeats (`jobs.sweep.intake.SubmissionPass`). The repeats' rows land in the run's tables
with `repeat` = 1..K; the original gradings (repeat 0) are never replaced.

What differs from a sweep, and why:
* the grading configuration is the run's own, with the audit off unless `--audit` (a repeat of the
  panel only: its gate is the original's, `scoring.repeat_hc_score`) and, with `--judges`, only
  those judges asked afresh (the others' requests keep the original's identity and are answered
  from its stored calls, at no cost); the run's identity is checked against the configuration it
  was made with (`SweepOptions.identity_config`), so a retest resumes the run rather than making
  another;
* the estimate is calibrated from the run itself (`OutputModel.from_run`: the output tokens its
  calls returned; the share of the sampled originals that were audited), so the bill shown
  before the first call is the one these submissions' repeats will cost.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from rich.console import Console

from evalcore.config.models import TribunalConfig, VendorMode
from evalcore.cost.estimate import OutputModel
from evalcore.emulation import EmulationOptions
from evalcore.errors import ConfigError, InputError, StorageError
from evalcore.grading.repeats import RetestPlan, sample_plan
from evalcore.grading.scoring import AuditMode
from evalcore.results.reduce import current_gradings
from evalcore.storage import fs
from evalcore.storage.store import RunRecord, read_table
from jobs.sweep.options import SweepOptions
from jobs.sweep.prepare import (
    DetachWithoutBatch,
    load_personas,
    remember_family,
    vendor_mode,
    with_batch,
)


@dataclass(frozen=True)
class RetestCommand:
    """What `tribunal retest` was asked to do."""

    run: str
    repeats: int
    sample: int
    seed: int = 0
    judges: list[str] = field(default_factory=list)
    audit: bool = False
    address: str = "local"
    shard_size: int = 8
    max_in_flight: int = 8
    progress: bool = True
    max_cost: float | None = None
    batch: bool | None = None
    detach: bool = False
    personas: str | None = None
    emulation: EmulationOptions = field(default_factory=EmulationOptions)
    take_over_lock: bool = False


@dataclass(frozen=True)
class OriginalGradings:
    """A run's complete original gradings: what a retest samples from."""

    content: dict[str, str]
    """Submission id -> the content hash its original graded."""
    audited: set[str]
    """The ones the original audited (task score > 0)."""


def complete_originals(run_uri: str) -> OriginalGradings:
    """The run's complete current original gradings (repeat 0), from its submissions table."""
    table = read_table(run_uri, "submissions", ["grading_id", "submission_id", "content_hash", "status", "audited",
                                                "graded_at", "repeat"])
    rows = current_gradings(table).to_pylist()
    done = [r for r in rows if r["status"] == "complete"]
    return OriginalGradings({str(r["submission_id"]): str(r["content_hash"]) for r in done},
                            {str(r["submission_id"]) for r in done if r["audited"]})


def retest_config(config: TribunalConfig, cmd: RetestCommand, *, emulated: bool) -> TribunalConfig:
    """The configuration the repeats are graded with: the run's, the audit by the rule with
    `--audit` and off without, batch mode as asked."""
    names = [j.name for j in config.judges]
    unknown = [j for j in cmd.judges if j not in names]
    if unknown:
        raise ConfigError(f"--judges: no judge named {', '.join(unknown)} in this run's panel ({', '.join(names)})")
    audit = config.audit.model_copy(update={"mode": AuditMode.SCORED if cmd.audit else AuditMode.NEVER})
    return with_batch(config.model_copy(update={"audit": audit}), cmd.batch, emulated=emulated)


def plan_retest(run_uri: str, cmd: RetestCommand) -> tuple[RetestPlan, OriginalGradings]:
    """The seeded sample of the run's complete originals and their repeats."""
    originals = complete_originals(run_uri)
    if not originals.content:
        raise InputError(run_uri, "no complete submission to retest (sweep the run to completion first)")
    plan = sample_plan(originals.content, n=cmd.sample, repeats=cmd.repeats, seed=cmd.seed, judges=cmd.judges,
                       audit=cmd.audit)
    return plan, originals


def retest_output_model(run_uri: str, plan: RetestPlan, originals: OriginalGradings) -> OutputModel:
    """The estimate's assumptions, from the run: its calls' output tokens, and (with `--audit`) the
    share of the sampled originals that were audited (a repeat is audited when its panel passes,
    as its original's mostly did)."""
    model = OutputModel.from_run(run_uri)
    share = sum(1 for s in plan.sampled if s in originals.audited) / len(plan.sampled)
    return model.model_copy(update={"audited_share": share})


@contextmanager
def prepare_retest(cmd: RetestCommand, console: Console) -> Iterator[SweepOptions]:
    """The retest's `SweepOptions` for `run_sweep`, with the run's vendors running for as long as the
    block lasts (emulators for an emulated run, with `--personas`)."""
    run_uri = cmd.run.rstrip("/")
    record = RunRecord.read(run_uri)
    if fs.basename(run_uri) != record.run_id:
        raise StorageError(f"{run_uri}: the folder is not named after its run id {record.run_id!r} (run.json); "
                           "a retest writes into the run as a resumed sweep does: give the run's own folder")
    emulated = record.vendors == VendorMode.EMULATED
    cfg = retest_config(record.config, cmd, emulated=emulated)
    if cmd.detach and not cfg.batch.enabled:
        raise DetachWithoutBatch("--detach needs batch mode (--batch, or batch.enabled in the run's configuration)")
    plan, originals = plan_retest(run_uri, cmd)
    model = retest_output_model(run_uri, plan, originals)
    personas = load_personas(cmd.personas, cfg) if cmd.personas else None
    with vendor_mode(cfg, record.vendors, personas, cmd.emulation if emulated else None) as run_cfg:
        yield SweepOptions(
            benchmark=record.benchmark.uri, submissions=record.submissions_uri, output=fs.parent(run_uri),
            config=run_cfg, vendors=record.vendors, run_id=record.run_id, address=cmd.address,
            reuse=list(record.reuse), shard_size=cmd.shard_size, max_in_flight=cmd.max_in_flight,
            progress=cmd.progress, max_cost_usd=cmd.max_cost, detach=cmd.detach,
            on_submission=(lambda s, t: remember_family(personas, cfg, s, t)) if personas is not None else None,
            retest=plan, identity_config=record.config, output_model=model,
        )
