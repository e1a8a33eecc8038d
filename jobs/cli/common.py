"""What every command shares: exit codes, the error line, common options and their checks."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from evalcore.config.models import VendorMode
from evalcore.emulation import EmulationOptions
from evalcore.storage.store import valid_run_id
from jobs.display.tables import TableFormat

if TYPE_CHECKING:
    from jobs.sweep.options import SweepSummary

EXIT_OK = 0
EXIT_BAD_INPUT = 1
EXIT_INCOMPLETE = 3
"""Calls failed (a judge abstained, an audit failed) or a shard failed: running again retries exactly those."""
EXIT_LEFT_OUT = 4
"""Finished, but inputs were left out: submissions or tasks rejected by the loaders, or (grade) too long."""
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = (
    "Exit codes: 0 done; 1 bad input or configuration; 2 usage error; 3 incomplete (calls or shards "
    "failed: run the same command again to retry exactly those); 4 inputs left out (rejected "
    "submissions or tasks, or a submission too long to grade; the rest was graded); 130 interrupted."
)



def sweep_exit_code(summary: SweepSummary) -> int:
    """Interrupted beats incomplete beats left out: the most urgent thing to act on.

    A sweep that found no submission to grade is done (0) when the folder holds none, and bad
    input (1) when it holds only rejected ones: nothing was graded, so it is not "inputs left out
    while the rest was graded" (4), and running it again retries nothing (3)."""
    if summary.interrupted:
        return EXIT_INTERRUPTED
    if summary.incomplete or summary.failed_shards or summary.cost_capped:
        return EXIT_INCOMPLETE
    if summary.submissions_total == 0:
        return EXIT_BAD_INPUT if summary.rejected else EXIT_OK
    if summary.rejected:
        return EXIT_LEFT_OUT
    return EXIT_OK


def print_error(error: object, console: Console | None = None) -> None:
    """``error: <message>`` on stderr, the message as plain text.

    Messages quote user paths, system names and file content; printed as rich markup, a path with
    ``[/]`` in it raises a MarkupError and ``gpt-5[beta]`` loses its ``[beta]``.
    """
    (console or Console(stderr=True)).print(Text.assemble(("error: ", "red"), str(error)), soft_wrap=True)


S3_HELP = (
    "S3 endpoint (e.g. http://127.0.0.1:9000) for s3:// URIs. "
    "Default: $AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL, else AWS itself."
)


VendorsOpt = Annotated[
    VendorMode,
    typer.Option(
        "--vendors",
        case_sensitive=False,
        help="real: the configured vendors (keys from the env vars named in the config); "
        "emulated: local emulators of each vendor's wire protocol, started for this command, answering "
        "with the offline heuristics; offline: in-process offline judges, no network.",
    ),
]
ConfigOpt = Annotated[
    str | None, typer.Option("--config", "-c", help="YAML overriding evalcore/config/defaults.yaml.")
]
FormatOpt = Annotated[
    TableFormat,
    typer.Option(
        "--format", case_sensitive=False,
        help="table: laid out for the terminal's (or a log's: 80 columns) width, split into bands or stacked "
        "one block per row when narrow, never cut; json: everything (as --json); csv: the tables' values "
        "(several tables: one section each after a `# title` line); markdown: tables and notes as a document.",
    ),
]


def output_format(fmt: TableFormat, json_flag: bool) -> TableFormat:
    """The format asked for: `--json` is kept as the alias of `--format json`."""
    if json_flag and fmt not in (TableFormat.TABLE, TableFormat.JSON):
        raise typer.BadParameter(f"--json is --format json: give one of --json and --format {fmt.value}")
    return TableFormat.JSON if json_flag else fmt

# --------------------------------------------------------------------------------------------
# Emulated vendors: the options `tribunal sweep --vendors emulated` and `tribunal emulate` share
# (defaults from `EmulationOptions`; `emulation_options` makes the one typed value of them).
# --------------------------------------------------------------------------------------------

EMULATED_PANEL = "Emulated vendors (--vendors emulated; tribunal emulate)"
EMULATION_DEFAULTS = EmulationOptions()

RpmOpt = Annotated[int, typer.Option(
    "--rpm", min=1, rich_help_panel=EMULATED_PANEL,
    help="Requests/min each emulated vendor's account allows (429 beyond), enforced as the vendor "
    "does: OpenAI in one-second slices of it, Anthropic and xAI over the minute.",
)]
TpmOpt = Annotated[int, typer.Option(
    "--tpm", min=1, rich_help_panel=EMULATED_PANEL,
    help="Tokens/min each emulated vendor's account allows (429 beyond), in the vendor's own bucket.",
)]
LatencyOpt = Annotated[float, typer.Option(
    "--latency", min=0.0, rich_help_panel=EMULATED_PANEL,
    help="Median answer latency of the emulators in seconds (lognormal); 0 = instant.",
)]
FaultsOpt = Annotated[float, typer.Option(
    "--faults", min=0.0, max=1.0, rich_help_panel=EMULATED_PANEL,
    help="Share of emulated requests failing (429, 5xx, malformed, truncated in equal parts).",
)]
EmulatorSeedOpt = Annotated[int, typer.Option(
    "--seed", rich_help_panel=EMULATED_PANEL, help="Seed of the emulators' faults, latency and batch outcomes.",
)]
BatchDelayOpt = Annotated[float, typer.Option(
    "--batch-delay", min=0.0, rich_help_panel=EMULATED_PANEL,
    help="Seconds an emulated batch takes to end (batch APIs; past 24 h it expires).",
)]
BatchErrorsOpt = Annotated[float, typer.Option(
    "--batch-errors", min=0.0, max=1.0, rich_help_panel=EMULATED_PANEL,
    help="Share of emulated batched requests answered errored.",
)]
EmulatorConfigOpt = Annotated[str | None, typer.Option(
    "--emulator-config", rich_help_panel=EMULATED_PANEL,
    help="YAML of an EmulatorConfig for every emulator (replaces --rpm ... --batch-errors; its limits are "
    "still enforced in each vendor's own bucket unless it sets limits.burst_s).",
)]
PersonasOpt = Annotated[str | None, typer.Option(
    "--personas", rich_help_panel=EMULATED_PANEL,
    help="`demo`, `demo-noisy` (the demo's panel, noisy across gradings: for `tribunal retest`) or a YAML file "
    "of per-model/vendor biases (leniency, noise, self_bias, recall, false_flag_rate, retest_flip, "
    "flag_recurrence) the emulated judges answer with, so they disagree as real judges do.",
)]


def emulation_options(
    *,
    rpm: int,
    tpm: int,
    latency: float,
    faults: float,
    seed: int,
    batch_delay: float,
    batch_errors: float,
    emulator_config: str | None,
) -> EmulationOptions:
    """The shared emulation options as one typed value (what both commands hand the builder)."""
    return EmulationOptions(
        requests_per_minute=rpm, tokens_per_minute=tpm, latency_s=latency, fault_rate=faults, seed=seed,
        batch_delay_s=batch_delay, batch_errors=batch_errors, file=emulator_config,
    )



def check_run_id(value: str | None) -> str | None:
    """A run id is one folder name under --output: it can never name a path outside it."""
    if value is not None and not valid_run_id(value):
        raise typer.BadParameter(
            f"{value!r} is not a run id: use 1-128 letters, digits, '.', '_' or '-', starting with a letter "
            "or digit (a run id is one folder under --output, never a path)"
        )
    return value


def use_endpoint(endpoint_url: str | None) -> None:
    """Point every s3:// URI of this command at `endpoint_url` (the variable the filesystems read)."""
    if endpoint_url:
        os.environ["AWS_ENDPOINT_URL_S3"] = endpoint_url


def check_max_cost(value: float | None) -> float | None:
    """A spending cap must be a positive amount: 0 would stop before the first call, after Ray started.

    Checked by the option parser, so a wrong cap is a usage error (exit 2) before anything starts and
    before any run folder is made.
    """
    if value is not None and not value > 0:
        raise typer.BadParameter(f"{value:g} is not a spending cap: give a positive amount in USD (e.g. --max-cost 25)")
    return value
