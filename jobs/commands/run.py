"""The grading commands: validate, grade, sweep, status and demo."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

import typer
from rich.console import Console

from evalcore.benchmark.validate import render
from evalcore.benchmark.validate import validate as run_validation
from evalcore.config.models import TribunalConfig, VendorMode
from evalcore.emulation import EmulationOptions
from evalcore.errors import StorageError, TribunalError
from evalcore.grading.scoring import AuditMode
from evalcore.tables import TableFormat
from jobs.commands.common import (
    EMULATION_DEFAULTS,
    EXIT_BAD_INPUT,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_LEFT_OUT,
    S3_HELP,
    BatchDelayOpt,
    BatchErrorsOpt,
    ConfigOpt,
    EmulatorConfigOpt,
    EmulatorSeedOpt,
    FaultsOpt,
    FormatOpt,
    LatencyOpt,
    PersonasOpt,
    RpmOpt,
    TpmOpt,
    VendorsOpt,
    check_max_cost,
    check_run_id,
    emulation_options,
    output_format,
    print_error,
    sweep_exit_code,
    use_endpoint,
)
from jobs.commands.sweep_report import print_detached
from jobs.commands.sweep_report import print_summary as _print_summary


def validate(
    benchmark: Annotated[
        str,
        typer.Argument(
            help="Benchmark root (the folder holding tasks/) or its tasks/ folder; a local path or s3://bucket/prefix.",
            show_default=False,
        ),
    ],
    submissions: Annotated[
        str | None,
        typer.Option(
            "--submissions",
            "-s",
            help=(
                "Also check submissions: a results folder `<system>/<task id>/<files>` or a "
                ".jsonl/.parquet manifest of {system, task_id, deliverables}."
            ),
        ),
    ] = None,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the full report as JSON (every missing deliverable; = --format json).")
    ] = False,
    fmt: FormatOpt = TableFormat.TABLE,
    config: Annotated[
        str | None,
        typer.Option("--config", "-c", help="YAML overriding evalcore/config/defaults.yaml (its input_limits and ocr.low_confidence apply)."),
    ] = None,
) -> None:
    """Check a benchmark (and its submissions) and list every problem, before paying for a sweep.

    Loads the tasks exactly as a sweep would (`tasks/<area>/<task>[/<scenario>]/task.json` +
    `documents/`), converts every source document to text, and prints: tasks by area, criteria per
    task, documents by type, per PDF and image its pages, pages OCR'd and mean OCR confidence,
    submissions by system, deliverables missing. Then warnings (a damaged but readable file, an
    OCR'd page under `ocr.low_confidence`: graded, worth a look) and every problem as
    `file: reason`: bad JSON (with line and column), a missing field, a duplicate criterion id, a
    deliverable escaping its folder, a scan with no readable text, an unknown task id, a
    duplicate submission...

    A task with a problem is left out of a sweep; a missing deliverable is not a problem (the
    submission is graded and fails what it cannot satisfy).

    Exit code: 0 when nothing is wrong, 1 when any problem was found.

    Examples:

        tribunal validate examples/sample

        tribunal validate s3://my-bucket/bench --submissions s3://my-bucket/results/ --endpoint-url http://127.0.0.1:9000
    """
    from evalcore.config.load import load_config

    fmt = output_format(fmt, as_json)
    try:
        cfg = load_config(config, vendors=VendorMode.OFFLINE)
    except TribunalError as exc:
        Console(stderr=True).print(str(exc), markup=False, highlight=False)
        raise typer.Exit(code=1) from None
    report = run_validation(benchmark, submissions, endpoint_override=endpoint_url, limits=cfg.input_limits,
                            low_confidence=cfg.ocr.low_confidence)
    console = Console()
    if fmt is TableFormat.JSON:
        console.print_json(report.model_dump_json())
    else:
        render(report, console, fmt=fmt)
    raise typer.Exit(code=0 if report.ok else 1)


def grade(
    task_dir: Annotated[str, typer.Argument(help="A task folder (holding task.json and documents/).")],
    deliverable: Annotated[
        list[str], typer.Option("--deliverable", "-d", help="A deliverable file (repeat for several).")
    ],
    vendors: VendorsOpt = VendorMode.OFFLINE,
    audit: Annotated[
        AuditMode,
        typer.Option("--audit", case_sensitive=False, help="scored: audit only when task score > 0 (the rule); always: debug."),
    ] = AuditMode.SCORED,
    config: ConfigOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print every row as JSON.")] = False,
) -> None:
    """Grade ONE submission and print every verdict (per judge, with reasoning) and every flag.

    The tool a rubric author uses to debug one task. Deliverable files are matched to the task's
    deliverables by file name (or stem); a single file for a single-deliverable task always matches.
    `--audit always` audits even a score-0 submission (never the default in a sweep).

    Exit codes: 0 graded; 1 bad input or configuration; 3 incomplete (calls failed, e.g. a wrong
    key: every judge abstained); 4 too long to grade within the prompt budget.

    Example:

        tribunal grade examples/sample/tasks/real-estate/psa-key-terms/scenario-01 -d memo.md --vendors emulated
    """
    from jobs.grade_one import grade_one, render_grade

    try:
        result = grade_one(task_dir, deliverable, vendors, audit, config)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    if as_json:
        import json as _json

        print(_json.dumps({"submission": result.submission.model_dump(mode="json"),
                           "verdicts": [v.model_dump(mode="json") for v in result.verdicts],
                           "flags": [f.model_dump(mode="json") for f in result.flags],
                           "calls": [c.model_dump(mode="json") for c in result.calls]}, indent=1, default=str))
    else:
        render_grade(result, Console())
    status = result.submission.status
    if status != "complete":  # nothing, or not everything, was graded: say so and exit non-zero
        print_error(f"{task_dir}: the submission is {status}: {result.submission.status_reason}")
        raise typer.Exit(EXIT_INCOMPLETE if status == "incomplete" else EXIT_LEFT_OUT)


def sweep(
    benchmark: Annotated[str, typer.Argument(help="Benchmark root (local or s3://).")],
    submissions: Annotated[
        str, typer.Option("--submissions", "-s", help="Results folder or .jsonl/.parquet manifest.")
    ],
    output: Annotated[str, typer.Option("--output", "-o", help="Folder or s3:// prefix for runs.")] = "runs",
    vendors: VendorsOpt = VendorMode.REAL,
    address: Annotated[
        str, typer.Option("--address", help="local (start Ray here), auto (attach), or ray://host:10001.")
    ] = "local",
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run-id", callback=check_run_id,
            help="A folder name under --output (letters, digits, . _ -). Default: derived from benchmark, "
            "submissions and config.",
        ),
    ] = None,
    reuse: Annotated[
        list[str] | None,
        typer.Option("--reuse", help="Reuse paid calls of another run (id under --output, or a URI). Repeatable."),
    ] = None,
    config: ConfigOpt = None,
    shard_size: Annotated[int, typer.Option(min=1, help="Submissions per Ray task and per Parquet shard.")] = 8,
    max_in_flight: Annotated[int, typer.Option(min=1, help="Shards in flight at once (bounds memory).")] = 8,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    progress: Annotated[bool, typer.Option(help="Live progress (off: one plain line per shard).")] = True,
    reduce_after: Annotated[bool, typer.Option("--reduce/--no-reduce", help="Build the leaderboard at the end.")] = True,
    personas: PersonasOpt = None,
    max_cost: Annotated[
        float | None,
        typer.Option("--max-cost", callback=check_max_cost, help="Stop before any call could make this command spend more than USD (exit 3; run again to continue)."),
    ] = None,
    batch: Annotated[
        bool | None,
        typer.Option("--batch/--online", help="Judge calls through the vendors' batch APIs (half price, "
                     "up to 24 h) or online. Default: `batch.enabled` in the configuration (off)."),
    ] = None,
    detach: Annotated[
        bool, typer.Option("--detach", help="Batch mode: submit what can be submitted and exit; run the same "
                           "command again later to collect (and submit the next stage).")
    ] = False,
    rpm: RpmOpt = EMULATION_DEFAULTS.requests_per_minute,
    tpm: TpmOpt = EMULATION_DEFAULTS.tokens_per_minute,
    latency: LatencyOpt = EMULATION_DEFAULTS.latency_s,
    faults: FaultsOpt = EMULATION_DEFAULTS.fault_rate,
    seed: EmulatorSeedOpt = EMULATION_DEFAULTS.seed,
    batch_delay: BatchDelayOpt = EMULATION_DEFAULTS.batch_delay_s,
    batch_errors: BatchErrorsOpt = EMULATION_DEFAULTS.batch_errors,
    emulator_config: EmulatorConfigOpt = None,
    take_over_lock: Annotated[
        bool, typer.Option("--take-over-lock", help="Take the run over from a command that holds its lock and is "
                           "gone: allowed once that command's lease expired (a holder on this host whose process "
                           "ended is taken over without it). A running holder is never taken over.")
    ] = False,
) -> None:
    """Grade every submission of a benchmark on Ray and write the run's tables.

    Re-running the same command resumes: completed submissions are skipped and no judge call
    whose request is already stored is sent again. `--reuse RUN` also serves calls stored in
    another run (swap one judge: only that judge's calls are paid). Ctrl-C stops after flushing
    the shards in flight; a second Ctrl-C cancels them (their submissions are graded by the next
    run). A missing API key is reported before anything starts. `--max-cost USD` stops cleanly
    before a call could make this command spend more (progress shows spent vs the estimate).
    One sweep writes into a run at a time: a second one on the same run exits 1 naming the holder
    (its pid, host, command and since when) and when `--take-over-lock` becomes possible.

    Exit codes: 0 done; 1 bad input or configuration, or the run is locked by another command;
    2 usage error; 3 incomplete submissions, failed shards, the cost cap or a storage failure (a
    full disk: the file and the cause are named; run again to continue with exactly what is left);
    4 inputs left out (rejected submissions, or tasks dropped from the benchmark; the rest was
    graded); 130 interrupted.

    `--vendors emulated` takes the options of `tribunal emulate` (latency, limits enforced in each
    vendor's own bucket, faults, batch timing, personas); a run against emulators, this way or with
    `--config` written by `tribunal emulate --write-config`, records `vendors: emulated`.

    Example:

        tribunal sweep examples/sample -s examples/sample/submissions -o runs --vendors emulated

        tribunal sweep examples/sample -s examples/sample/submissions --vendors emulated --latency 2 --rpm 600
    """
    use_endpoint(endpoint_url)
    run_sweep_command(SweepCommand(
        benchmark=benchmark, submissions=submissions, output=output, vendors=vendors, address=address,
        run_id=run_id, reuse=list(reuse or []), config=config, shard_size=shard_size, max_in_flight=max_in_flight,
        progress=progress, reduce_after=reduce_after, personas=personas, max_cost=max_cost, batch=batch,
        detach=detach, endpoint_url=endpoint_url, take_over_lock=take_over_lock,
        emulation=emulation_options(rpm=rpm, tpm=tpm, latency=latency, faults=faults, seed=seed,
                                    batch_delay=batch_delay, batch_errors=batch_errors,
                                    emulator_config=emulator_config),
    ))


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
    """`--take-over-lock`: take the run's lock from a holder whose lease expired (`jobs.run_lock`)."""


def run_sweep_command(cmd: SweepCommand) -> None:
    """Load the configuration, start the vendors the mode asks for, sweep, print, exit with the code."""
    from evalcore.config.load import load_config
    from jobs.batch import with_batch
    from jobs.modes import load_personas, recorded_mode, vendor_mode
    from jobs.run_identity import RunStorageFailed
    from jobs.sweep import SweepOptions, run_sweep

    console = Console(stderr=True)
    try:
        cfg = load_config(cmd.config, vendors=cmd.vendors)
        mode = recorded_mode(cfg, cmd.vendors)  # emulated too for a config written by `tribunal emulate`
        if mode != cmd.vendors:
            console.print(f"the configuration points at emulators (TRIBUNAL_EMULATED_* key variables): "
                          f"this run is recorded as vendors: {mode}", markup=False, highlight=False)
        cfg = with_batch(cfg, cmd.batch, emulated=mode == VendorMode.EMULATED)
        if cmd.detach and not cfg.batch.enabled:
            raise typer.BadParameter("--detach needs batch mode (--batch, or batch.enabled in the config)")
        panel = load_personas(cmd.personas, cfg, cmd.benchmark, cmd.submissions) if cmd.personas else None
        with vendor_mode(cfg, cmd.vendors, panel, cmd.emulation) as run_cfg:
            opts = SweepOptions(
                benchmark=cmd.benchmark, submissions=cmd.submissions, output=cmd.output, config=run_cfg,
                vendors=mode, run_id=cmd.run_id, address=cmd.address, reuse=cmd.reuse,
                shard_size=cmd.shard_size, max_in_flight=cmd.max_in_flight, progress=cmd.progress,
                max_cost_usd=cmd.max_cost, detach=cmd.detach,
            )
            summary = run_sweep(opts, console, take_over_lock=cmd.take_over_lock)
    except RunStorageFailed as exc:  # the run holds what was stored, whole: resumable
        print_error(exc, console)
        raise typer.Exit(EXIT_INCOMPLETE) from exc
    except TribunalError as exc:
        print_error(exc, console)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except KeyboardInterrupt as exc:  # Ctrl-C before the shards started (loading, Ray, preflight)
        print_error("interrupted before grading started; nothing was graded", console)
        raise typer.Exit(EXIT_INTERRUPTED) from exc
    _print_summary(summary, console)
    if summary.cost_message:
        console.print(f"[yellow]{summary.cost_message}[/]")
    if cmd.detach and summary.awaiting_batches:
        print_detached(summary, cmd, console)
        raise typer.Exit(EXIT_INCOMPLETE)
    if cmd.reduce_after and not summary.interrupted:
        try:
            _reduce_and_show(summary.run_uri)
        except TribunalError as exc:  # the tables are whole: `tribunal reduce` once the cause is fixed
            print_error(exc, console)
            raise typer.Exit(EXIT_INCOMPLETE if isinstance(exc, StorageError) else EXIT_BAD_INPUT) from exc
    code = sweep_exit_code(summary)
    if code == EXIT_LEFT_OUT:
        print_error(f"{summary.rejected} input(s) left out (see above and the run's rejected/ table); "
                    "the rest was graded", console)
    raise typer.Exit(code)


VendorsConfigOpt = Annotated[
    str | None,
    typer.Option("--config", "-c", help="YAML whose vendor entries (endpoints, key variables) reach the vendors. "
                 "Default: the configuration recorded in the run's run.json."),
]


def status(
    run: Annotated[str, typer.Argument(help="A run folder (local or s3://), e.g. runs/run-2f1c….")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON (= --format json).")] = False,
    fmt: FormatOpt = TableFormat.TABLE,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Ask the vendors whether they still hold each object the run "
                           "folder says they do (needs the keys).")
    ] = False,
    config: VendorsConfigOpt = None,
) -> None:
    """Show a run: every batch per vendor (submitted, in progress, done, failed, expires at), the
    run's progress, and what each vendor still holds of it (OpenAI batch files, Anthropic and xAI
    batches: held, in use by the run, deleted, or -- xAI -- undeletable). Reads only the run folder
    (the batch journal, purge records and the submissions table); no vendor is contacted unless
    `--check`.

    Example:

        tribunal status runs/run-2f1c0a9b3d4e

        tribunal status runs/run-2f1c0a9b3d4e --check
    """
    from jobs.batch import render_status, run_status

    fmt = output_format(fmt, as_json)
    use_endpoint(endpoint_url)
    try:
        report = run_status(run)
        if check and report.holdings:
            from jobs.purge import check_at_vendors

            report.holdings = check_at_vendors(_vendors_config(run, config), report.holdings)
            report.checked = True
    except TribunalError as exc:
        print_error(exc)  # plain text: a run path may hold "[/]", which rich markup would choke on
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    if fmt is TableFormat.JSON:
        import json as _json

        print(_json.dumps(report.as_dict(), indent=1, default=str))
    else:
        render_status(report, Console(), fmt)


def purge(
    run: Annotated[str, typer.Argument(help="A run folder (local or s3://), e.g. runs/run-2f1c….")],
    config: VendorsConfigOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the purge record as JSON.")] = False,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
) -> None:
    """Delete what a run's batches left at the vendors: OpenAI input, output and error files,
    Anthropic message batches. A sweep does this itself once its tables are written
    (`data_governance.purge`); this command does it later or again.

    Only what the run no longer needs is deleted: batches whose answers are in the run's tables
    (collected before its latest finished attempt ended), and files of batches never created.
    Safe to repeat and on a half-purged run (an object already gone counts as gone); every purge
    is recorded in the run (`_purge/`). xAI batches cannot be deleted (xAI has no delete): they
    are reported. `tribunal status RUN` shows what each vendor still holds.

    Exit codes: 0 nothing deletable is left; 1 not a run, or a bad configuration; 3 some objects
    could not be deleted yet (a failed call, or the run still needs them): run it again later.

    Example:

        tribunal purge runs/run-2f1c0a9b3d4e
    """
    from jobs.purge import purge_counts, purge_run, render_purge, written_at

    use_endpoint(endpoint_url)
    console = Console(stderr=True)
    try:
        cfg = _vendors_config(run, config)
        record = purge_run(run, cfg, trigger="command", at=written_at(run))
    except TribunalError as exc:
        print_error(exc, console)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    if as_json:
        print(record.model_dump_json(indent=1) if record is not None else "null")
    if record is None:
        console.print("nothing to purge: the run's batches left nothing at the vendors (or it has none)",
                      markup=False, highlight=False)
        raise typer.Exit(0)
    render_purge(record, run, console)
    counts = purge_counts(record)
    if not counts["deleted"] and not counts["gone"] and not counts["failed"] and not counts["in_use"]:
        console.print("nothing left to delete", markup=False, highlight=False)
    raise typer.Exit(EXIT_INCOMPLETE if counts["failed"] or counts["in_use"] else 0)


def _vendors_config(run: str, path: str | None) -> TribunalConfig:
    """The configuration whose vendor entries reach the vendors a run used: `--config`, else its run.json."""
    if path is not None:
        from evalcore.config.load import load_config

        return load_config(path, vendors=VendorMode.REAL)
    from jobs.purge import run_config

    return run_config(run)


def _reduce_and_show(run_uri: str) -> None:
    from jobs.reduce import reduce_run, render_leaderboard

    lb = reduce_run(run_uri)
    render_leaderboard(lb, Console())


def demo(
    output: Annotated[str, typer.Option("--output", "-o", help="Where runs go.")] = "runs",
    address: Annotated[str, typer.Option("--address", help="Ray address (local starts one here).")] = "local",
) -> None:
    """The whole product on the sample benchmark with no keys: local Ray, emulated vendors.

    Starts the three vendor emulators on 127.0.0.1 (answering with the offline heuristics, each
    judge with its own persona: a lenient OpenAI judge (also the auditor, missing some findings and
    raising a few false flags), a noisy xAI judge, an Anthropic judge biased toward its own family), sweeps examples/sample on a local Ray cluster into
    ./runs/, reduces, and prints the leaderboard. Run it twice: the second run resumes and sends
    zero judge calls. Then try `tribunal calibrate runs/demo --labels examples/sample/ground_truth.json`.
    """
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "examples" / "sample"
    if not root.exists():
        print_error(f"{root}: sample benchmark not found (run from a checkout)")
        raise typer.Exit(1)
    run_sweep_command(SweepCommand(
        benchmark=str(root), submissions=str(root / "submissions"), output=output, vendors=VendorMode.EMULATED,
        address=address, run_id="demo", shard_size=4, max_in_flight=8, personas="demo",
    ))
