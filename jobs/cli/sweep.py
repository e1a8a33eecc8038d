"""The sweep commands: `sweep` (the distributed job) and `demo` (the sample with emulated vendors)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from evalcore.config.models import VendorMode
from evalcore.errors import StorageError, TribunalError
from jobs.cli.common import (
    EMULATION_DEFAULTS,
    EXIT_BAD_INPUT,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_LEFT_OUT,
    EXIT_OK,
    S3_HELP,
    BatchDelayOpt,
    BatchErrorsOpt,
    ConfigOpt,
    EmulatorConfigOpt,
    EmulatorSeedOpt,
    FaultsOpt,
    LatencyOpt,
    PersonasOpt,
    RpmOpt,
    TpmOpt,
    VendorsOpt,
    check_max_cost,
    check_run_id,
    emulation_options,
    print_error,
    sweep_exit_code,
    use_endpoint,
)
from jobs.display.sweep_summary import print_detached, print_summary
from jobs.sweep.options import SweepSummary
from jobs.sweep.prepare import SweepCommand

if TYPE_CHECKING:
    from jobs.sweep.retest import RetestCommand


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


def run_sweep_command(cmd: SweepCommand) -> None:
    """Prepare the run (`jobs.sweep.prepare.prepare_run`), sweep, print, exit with the code."""
    from jobs.sweep.driver import NothingToGrade, run_sweep
    from jobs.sweep.identity import RunStorageFailed
    from jobs.sweep.prepare import DetachWithoutBatch, prepare_run

    console = Console(stderr=True)
    try:
        with prepare_run(cmd, console) as opts:
            summary = run_sweep(opts, console, take_over_lock=cmd.take_over_lock)
    except DetachWithoutBatch as exc:
        raise typer.BadParameter(str(exc)) from exc
    except NothingToGrade as exc:  # done: the one line, and no run made
        console.print(str(exc), markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_OK) from exc
    except RunStorageFailed as exc:  # the run holds what was stored, whole: resumable
        print_error(exc, console)
        raise typer.Exit(EXIT_INCOMPLETE) from exc
    except TribunalError as exc:
        print_error(exc, console)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except KeyboardInterrupt as exc:  # Ctrl-C before the shards started (loading, Ray, preflight)
        print_error("interrupted before grading started; nothing was graded", console)
        raise typer.Exit(EXIT_INTERRUPTED) from exc
    print_summary(summary, console)
    if summary.cost_message:
        console.print(f"[yellow]{summary.cost_message}[/]")
    if cmd.detach and summary.awaiting_batches:
        print_detached(summary, cmd, console)
        raise typer.Exit(EXIT_INCOMPLETE)
    if summary.submissions_total == 0 and not summary.interrupted:  # no leaderboard to reduce
        _say_nothing_graded(summary, cmd.submissions, console)
        raise typer.Exit(sweep_exit_code(summary))
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


def _say_nothing_graded(summary: SweepSummary, submissions: str, console: Console) -> None:
    """The one line of a sweep that had no submission to grade but rejected ones (a source that holds
    nothing stops before any run is made: `jobs.sweep.driver.NothingToGrade`)."""
    print_error(f"{submissions}: no submission could be graded: {summary.rejected} input(s) left out (see above "
                "and the run's rejected/ table)", console)


def _reduce_and_show(run_uri: str) -> None:
    from jobs.display.leaderboard import render_leaderboard
    from jobs.per_run.reduce import reduce_run

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


def retest(
    run: Annotated[str, typer.Argument(help="The run folder to retest (local or s3://).")],
    repeats: Annotated[int, typer.Option("--repeats", "-k", min=1, help="K: how many more times each sampled "
                                         "submission is graded.")] = 2,
    sample: Annotated[int, typer.Option("--sample", "-n", min=1, help="N: how many complete submissions, drawn "
                                        "uniformly at random (all when N is at least their number).")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="The sample's seed: the same seed, the same sample.")] = 0,
    judges: Annotated[
        list[str] | None,
        typer.Option("--judges", help="Repeat only these judges (names in the run's panel; repeatable); the "
                     "others' answers are the original's, served from its stored calls. Default: all three."),
    ] = None,
    audit: Annotated[bool, typer.Option("--audit", help="Repeat the audit's two stages too (by the rule: a "
                                        "repeat whose panel passes is audited). Default: the panel only.")] = False,
    address: Annotated[
        str, typer.Option("--address", help="local (start Ray here), auto (attach), or ray://host:10001.")
    ] = "local",
    shard_size: Annotated[int, typer.Option(min=1, help="Gradings per Ray task and per Parquet shard.")] = 8,
    max_in_flight: Annotated[int, typer.Option(min=1, help="Shards in flight at once (bounds memory).")] = 8,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    progress: Annotated[bool, typer.Option(help="Live progress (off: one plain line per shard).")] = True,
    reduce_after: Annotated[bool, typer.Option("--reduce/--no-reduce", help="Build the leaderboard at the end "
                                               "(its intervals then include judge noise).")] = True,
    personas: PersonasOpt = None,
    max_cost: Annotated[
        float | None,
        typer.Option("--max-cost", callback=check_max_cost, help="Stop before any call could make this command "
                     "spend more than USD (exit 3; run again to continue)."),
    ] = None,
    batch: Annotated[
        bool | None,
        typer.Option("--batch/--online", help="Through the vendors' batch APIs (half price) or online. Default: "
                     "the run's configuration."),
    ] = None,
    detach: Annotated[bool, typer.Option("--detach", help="Batch mode: submit and exit; the same command "
                                         "collects.")] = False,
    take_over_lock: Annotated[bool, typer.Option("--take-over-lock", help="As for `tribunal sweep`.")] = False,
) -> None:
    """Grade a seeded random sample of a run's complete submissions K more times: judge noise.

    Each repeat is a fresh, paid grading (the repeat index is part of each request's identity), run
    as a sweep of the same run: estimated before it starts and capped by `--max-cost`, on Ray,
    batch mode included, resumable; running the same command again pays nothing twice. The rows
    land in the run's tables with `repeat` = 1..K (the original grading is 0). Then
    `tribunal calibrate RUN` shows the repeatability section (flip rates and test-retest κ per
    judge and criterion), and the leaderboard's intervals include judge noise.

    Exit codes: as `tribunal sweep`.

    Example:

        tribunal retest runs/demo --repeats 2 --sample 8 --personas demo-noisy
    """
    from jobs.sweep.retest import RetestCommand

    use_endpoint(endpoint_url)
    run_retest_command(RetestCommand(
        run=run, repeats=repeats, sample=sample, seed=seed, judges=list(judges or []), audit=audit, address=address,
        shard_size=shard_size, max_in_flight=max_in_flight, progress=progress, max_cost=max_cost, batch=batch,
        detach=detach, personas=personas, take_over_lock=take_over_lock,
    ), reduce_after=reduce_after)


def run_retest_command(cmd: RetestCommand, *, reduce_after: bool = True) -> None:
    """Prepare the retest (`jobs.sweep.retest.prepare_retest`), sweep its repeats, print, exit with the code."""
    from jobs.sweep.driver import run_sweep
    from jobs.sweep.identity import RunStorageFailed
    from jobs.sweep.prepare import DetachWithoutBatch
    from jobs.sweep.retest import prepare_retest

    console = Console(stderr=True)
    try:
        with prepare_retest(cmd, console) as opts:
            assert opts.retest is not None
            console.print(f"retest of {cmd.run}: {len(opts.retest.sampled)} submission(s) × {cmd.repeats} repeat(s) "
                          f"(seed {cmd.seed}; judges: {', '.join(cmd.judges) or 'all'}; audit: "
                          f"{'yes' if cmd.audit else 'no'})", markup=False, highlight=False)
            summary = run_sweep(opts, console, take_over_lock=cmd.take_over_lock)
    except DetachWithoutBatch as exc:
        raise typer.BadParameter(str(exc)) from exc
    except RunStorageFailed as exc:
        print_error(exc, console)
        raise typer.Exit(EXIT_INCOMPLETE) from exc
    except TribunalError as exc:
        print_error(exc, console)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except KeyboardInterrupt as exc:
        print_error("interrupted before grading started; nothing was graded", console)
        raise typer.Exit(EXIT_INTERRUPTED) from exc
    print_summary(summary, console)
    if summary.retest_changed:
        print_error(f"{len(summary.retest_changed)} sampled submission(s) not repeated: their content changed since "
                    f"the original grading ({', '.join(summary.retest_changed[:5])})", console)
    if summary.cost_message:
        console.print(f"[yellow]{summary.cost_message}[/]")
    if cmd.detach and summary.awaiting_batches:
        raise typer.Exit(EXIT_INCOMPLETE)
    if reduce_after and not summary.interrupted:
        try:
            _reduce_and_show(summary.run_uri)
        except TribunalError as exc:
            print_error(exc, console)
            raise typer.Exit(EXIT_INCOMPLETE if isinstance(exc, StorageError) else EXIT_BAD_INPUT) from exc
    raise typer.Exit(sweep_exit_code(summary))
