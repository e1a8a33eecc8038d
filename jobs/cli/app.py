"""The ``tribunal`` console script: one command per job, help that teaches, exit codes that mean something.

Exit codes (the same for every command; `EXIT_*` below): 0 = done, nothing wrong; 1 = the inputs or
the configuration have problems (each printed as ``file: reason``); 2 = the command line itself is
wrong (typer's usage errors); 3 = some grading is incomplete because calls failed (run again: exactly
those are retried); 4 = inputs were left out (rejected submissions or tasks, or a submission too long
to grade) while the rest was graded; 130 = interrupted by Ctrl-C.
"""

from __future__ import annotations

import os
import sys
from typing import Literal

os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # gRPC's fork notices are noise for a CLI

import typer

from jobs.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_CODES_HELP,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_LEFT_OUT,
    EXIT_OK,
    print_error,
    sweep_exit_code,
)
from jobs.cli.estimate import estimate
from jobs.cli.inputs import grade, validate
from jobs.cli.per_run import calibrate_cmd, compare_cmd, purge, reduce_cmd, report_cmd, show_cmd, status
from jobs.cli.release import publish, release_app
from jobs.cli.review import adjudicate, review, users_app
from jobs.cli.sweep import demo, retest, sweep
from jobs.cli.tools import emulate, synth_cmd

__all__ = [
    "EXIT_BAD_INPUT", "EXIT_CODES_HELP", "EXIT_INCOMPLETE", "EXIT_INTERRUPTED", "EXIT_LEFT_OUT", "EXIT_OK",
    "app", "print_error", "sweep_exit_code",
]

HELP_MARKUP: Literal["markdown"] | None = "markdown" if sys.stdout.isatty() else None
"""Typer's rich help (panels, markdown) on a terminal; click's plain help when the output is piped
(a log, `| less`, a CI job: 80 columns). Rich lays options out in a six-column table and, at 80
columns, cut their help with "…" (`ray://host:1000…`); the plain help wraps every line at spaces and
cuts nothing. Sub-apps (`release`, `review-users`) inherit it."""

app = typer.Typer(
    help=(
        "Tribunal grades AI-written legal work with a three-vendor judge panel and a hallucination "
        "audit, at leaderboard scale on Ray.\n\n"
        "Start with `tribunal validate BENCHMARK` to check a benchmark before a sweep."
    ),
    no_args_is_help=True,
    rich_markup_mode=HELP_MARKUP,
)


@app.callback()
def main() -> None:
    """Tribunal: grade AI-written legal work with a judge panel and a hallucination audit."""



app.command()(validate)
app.command()(grade)
app.command()(sweep)
app.command()(retest)
app.command()(status)
app.command()(purge)
app.command()(estimate)
app.command()(demo)
app.command()(emulate)
app.command("reduce")(reduce_cmd)
app.command("show")(show_cmd)
app.command("report")(report_cmd)
app.command("calibrate")(calibrate_cmd)
app.command("compare")(compare_cmd)
app.command("synth")(synth_cmd)
app.command()(review)
app.command()(adjudicate)
app.add_typer(release_app, name="release")
app.command()(publish)
app.add_typer(users_app, name="review-users")
