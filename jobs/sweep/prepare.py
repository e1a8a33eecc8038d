"""Preparing a run, in one place: the command line (`SweepCommand`) becomes the run's options
(`prepare_run`): the configuration loaded (`run_config`: vendor mode recorded, batch mode on or
off, what data governance refuses checked at once), personas, and the vendors of the mode: `real`
(configured endpoints and keys), `emulated` (our local emulators of each vendor's wire protocol,
started here, answering with the offline heuristics), `offline` (the in-process offline adapter, no
network at all). `sweep` and `demo` prepare through `prepare_run`; `estimate` and `grade` through
`run_config` (they start no run).

Why a context manager: emulated mode owns servers that must outlive the run and stop after it.
They are configured by the one builder `tribunal emulate` uses too
(`doubles.emulators.serve.emulator_config_from`, from the shared `EmulationOptions`), so an
emulated sweep and a sweep against `tribunal emulate` meet the same emulators.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from evalcore.config.models import RateLimits, TribunalConfig, VendorMode
from evalcore.emulation import EmulationOptions, points_at_emulators
from evalcore.errors import ConfigError, InputError
from jobs.sweep.governance import check_batch_allowed, check_prompt_cache_retention

if TYPE_CHECKING:
    from rich.console import Console

    from doubles.emulators._config import EmulatorConfig
    from doubles.emulators.responders import PersonaSet, Responder
    from evalcore.schema import Submission, Task
    from jobs.sweep.options import SweepOptions


def server_limits(config: TribunalConfig, limits: RateLimits | None = None) -> dict[str, RateLimits]:
    """What each emulator enforces: one account's limits per vendor (the openai emulator serves
    the openai judge and the auditor, which share them, as they share one key)."""
    from doubles.emulators.serve import EMULATED_LIMITS  # the CLI's emulated mode: imported only here

    limits = limits or EMULATED_LIMITS
    return {v.adapter: limits for v in config.vendors() if v.adapter != "offline"}


def load_personas(
    spec: str, config: TribunalConfig, benchmark: str | None = None, submissions: str | None = None
) -> PersonaSet:
    """The emulated panel's personas: `demo` (the built-in three), `demo-noisy` (the same with
    noise across gradings, for `tribunal retest`) or a YAML/JSON file.

    The file holds `{seed: int, personas: {<model or vendor>: {leniency, noise, self_bias, family,
    recall, false_flag_rate, upholds_false_flags, rejects_real_flags, retest_flip, flag_recurrence,
    noise_criteria, false_flag_sentences}}}`. The submissions, when
    given (with their benchmark: `tribunal emulate`), are read to fingerprint each one's
    deliverables with its system's family and its task's rubric length (`remember_family`), which
    is how a persona with a self-family bias recognises its own family's work and one with
    `noise_criteria` scales its rates; a sweep does it during intake's one read (`prepare_run`).
    Without either, `self_bias` has nothing to recognise and rates stay per verdict.
    """
    from doubles.emulators.responders import DEMO_PERSONAS, PersonaSet, demo_noisy_personas
    from evalcore.benchmark.loader import load_benchmark
    from evalcore.schema import Submission
    from evalcore.submissions.loader import iter_submissions

    if spec == "demo":
        data: dict[str, object] = {"seed": config.seed, "personas": DEMO_PERSONAS}
    elif spec == "demo-noisy":  # the demo's panel with noise across gradings: what `tribunal retest` measures
        data = {"seed": config.seed, "personas": demo_noisy_personas()}
    else:
        try:
            raw = yaml.safe_load(Path(spec).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(spec, f"cannot read the personas file: {exc}") from exc
        if not isinstance(raw, dict):
            raise InputError(spec, "a personas file is a mapping {seed, personas: {model or vendor: {...}}}")
        data = {"seed": config.seed, **raw}
    try:
        personas = PersonaSet.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise InputError(spec, f"invalid persona at {where}: {first['msg']}") from None
    if benchmark is not None and submissions is not None:  # `tribunal emulate`: a sweep tells them during intake
        bench = load_benchmark(benchmark)
        tasks = bench.task_map()
        for item in iter_submissions(submissions, tasks, excluded=bench.excluded_task_ids()):
            if isinstance(item, Submission):
                remember_family(personas, config, item, tasks[item.task_id])
    return personas


def recorded_mode(config: TribunalConfig, mode: VendorMode) -> VendorMode:
    """The vendor mode a run records: `emulated` for `--vendors real` with a configuration aimed
    at emulators (written by `tribunal emulate --write-config`: `points_at_emulators`), so the
    report says where the answers came from and a run with real vendors never reuses them."""
    if mode == VendorMode.REAL and points_at_emulators(config):
        return VendorMode.EMULATED
    return mode


def emulator_configs(
    emulation: EmulationOptions | None = None, config: TribunalConfig | None = None
) -> dict[str, EmulatorConfig]:
    """What each emulator of emulated mode is configured with: `tribunal emulate`'s builder. They
    serve the model ids the SDKs list and the configuration's `known_newer_models` (an id the
    vendor serves before its SDK lists it); any other id gets the vendor's 404, as it would."""
    from doubles.emulators.serve import emulator_config_from  # the CLI's emulated mode: imported only here

    return emulator_config_from(emulation, accept_models=accepted_models(config))


def accepted_models(config: TribunalConfig | None) -> list[str]:
    """The ids a configuration declares newer than the SDKs' lists (`known_newer_models`)."""
    return sorted({m for ids in config.known_newer_models.values() for m in ids}) if config is not None else []


def emulated_responder(personas: PersonaSet | None = None) -> Responder:
    """What the emulators answer with: the offline heuristics, bent by `personas` if given."""
    from doubles.emulators import OfflineResponder

    return OfflineResponder(personas)


@contextmanager
def vendor_mode(
    config: TribunalConfig,
    mode: VendorMode,
    personas: PersonaSet | None = None,
    emulation: EmulationOptions | None = None,
) -> Iterator[TribunalConfig]:
    """Yield the configuration to run with in `mode` (starting and stopping emulators if needed).

    Emulated mode only: `personas` bend the emulators' offline answers (`load_personas`);
    `emulation` sets their latency, limits, faults and batch timing (`EmulationOptions`), and the
    vendors' budgets are set to the limits the emulators enforce.
    """
    if mode != VendorMode.EMULATED:
        if personas is not None:
            raise ConfigError("personas apply to emulated judges only: use --vendors emulated")
        if emulation is not None and (given := emulation.given()):
            raise ConfigError(f"{', '.join(given)}: these shape emulated vendors only: use --vendors emulated")
        yield config
        return
    from doubles.emulators._set import start_in_thread
    from doubles.emulators.serve import budget_limits, point_at_emulators

    configs = emulator_configs(emulation, config)  # a bounded request log: the emulators live in the driver's process
    emus = start_in_thread(configs, responder=emulated_responder(personas))
    try:
        yield point_at_emulators(config, emus.endpoints, budget_limits(configs))
    finally:
        emus.stop()


@dataclass(frozen=True)
class SweepCommand:
    """What `tribunal sweep` was asked to do: its options, named once for `sweep` and `demo`."""

    benchmark: str
    submissions: str
    output: str = "runs"
    vendors: VendorMode = VendorMode.REAL
    address: str = "local"
    run_id: str | None = None
    reuse: list[str] = field(default_factory=list)
    config: str | None = None
    shard_size: int = 8
    max_in_flight: int = 8
    progress: bool = True
    reduce_after: bool = True
    personas: str | None = None
    max_cost: float | None = None
    batch: bool | None = None
    detach: bool = False
    emulation: EmulationOptions = field(default_factory=EmulationOptions)
    """`--vendors emulated` only: how the emulators behave (the options `tribunal emulate` shares)."""
    endpoint_url: str | None = None
    """`--endpoint-url` (already applied by `sweep`; kept to spell the command out again: `again_command`)."""
    take_over_lock: bool = False
    """`--take-over-lock`: take the run's lock from a holder whose lease expired (`evalcore.storage.lock`)."""


EMULATED_TIMING = {"flush_interval_s": 0.5, "poll_interval_s": 0.2}
"""Batch timing when the vendors are our emulators (their batches end as soon as they are due)."""


def with_batch(config: TribunalConfig, enabled: bool | None, *, emulated: bool = False) -> TribunalConfig:
    """The configuration with batch mode switched on or off (`None`: as configured)."""
    batch = config.batch
    if enabled is not None:
        batch = batch.model_copy(update={"enabled": enabled})
    if emulated and batch.enabled:
        batch = batch.model_copy(update=EMULATED_TIMING)
    update: dict[str, Any] = {"batch": batch}
    if batch.enabled:
        # Warming sends one call per prefix and waits for its answer before the rest: in batch
        # mode that wait is a whole batch, so Stage A would take two rounds. Off (scheduling only).
        update["judges"] = [j.model_copy(update={"warm_prompt_cache": False}) for j in config.judges]
        update["auditor"] = config.auditor.model_copy(update={"warm_prompt_cache": False})
    return config.model_copy(update=update)


class DetachWithoutBatch(ConfigError):
    """`--detach` asked of a sweep that is not in batch mode: a usage error (exit 2 at the CLI)."""


def run_config(
    path: str | None, vendors: VendorMode, *, batch: bool | None = None, console: Console | None = None
) -> tuple[TribunalConfig, VendorMode]:
    """The configuration a command runs with, and the vendor mode it records.

    Loaded for `vendors` (`load_config`); the mode recorded is `emulated` for a configuration
    aimed at emulators (`recorded_mode`, said on `console`); batch mode switched on or off
    (`batch`; None: as configured); and a batch API that data governance refuses is refused
    now, naming the vendor, before anything is read or started (`governance.check_batch_allowed`).
    """
    from evalcore.config.load import load_config

    cfg = load_config(path, vendors=vendors)
    mode = recorded_mode(cfg, vendors)  # emulated too for a config written by `tribunal emulate`
    if mode != vendors and console is not None:
        console.print(f"the configuration points at emulators (TRIBUNAL_EMULATED_* key variables): "
                      f"this run is recorded as vendors: {mode}", markup=False, highlight=False)
    cfg = with_batch(cfg, batch, emulated=mode == VendorMode.EMULATED)
    check_batch_allowed(cfg)
    if vendors != VendorMode.OFFLINE:  # an offline entry sends nothing
        check_prompt_cache_retention(cfg)
    return cfg, mode


def remember_family(
    personas: PersonaSet, config: TribunalConfig, submission: Submission, task: Task | None = None
) -> None:
    """Fingerprint one submission's deliverables with its system's family (`family_map`): how a
    persona with a self-family bias recognises its own family's work; and, given its task, with
    the task's number of criteria (how a persona's rates stated for a rubric length,
    `Persona.noise_criteria`, are scaled to it). Called by intake's one read of the submissions
    (`SweepOptions.on_submission`), so the source is not read a second time."""
    from doubles.emulators.responders import deliverables_fingerprint

    present = [(n, d.text) for n, d in submission.deliverables.items() if not d.missing]
    fingerprint = deliverables_fingerprint(present)
    if (family := config.family_of(submission.system)) is not None:
        personas.families[fingerprint] = family
    if task is not None:
        personas.rubric_sizes[fingerprint] = len(task.criteria)


@contextmanager
def prepare_run(cmd: SweepCommand, console: Console) -> Iterator[SweepOptions]:
    """`tribunal sweep`'s (and `demo`'s) options for `run_sweep`, with the vendors of its mode
    running for as long as the block lasts (emulators are stopped on the way out).

    Refused here, before anything is read or started: `--detach` without batch mode, a batch API
    data governance refuses, personas or emulator options outside emulated mode."""
    from jobs.sweep.options import SweepOptions

    cfg, mode = run_config(cmd.config, cmd.vendors, batch=cmd.batch, console=console)
    if cmd.detach and not cfg.batch.enabled:
        raise DetachWithoutBatch("--detach needs batch mode (--batch, or batch.enabled in the config)")
    personas = load_personas(cmd.personas, cfg) if cmd.personas else None
    with vendor_mode(cfg, cmd.vendors, personas, cmd.emulation) as run_cfg:
        yield SweepOptions(
            benchmark=cmd.benchmark, submissions=cmd.submissions, output=cmd.output, config=run_cfg,
            vendors=mode, run_id=cmd.run_id, address=cmd.address, reuse=cmd.reuse,
            shard_size=cmd.shard_size, max_in_flight=cmd.max_in_flight, progress=cmd.progress,
            max_cost_usd=cmd.max_cost, detach=cmd.detach,
            on_submission=(lambda s, t: remember_family(personas, cfg, s, t)) if personas is not None else None,
        )
