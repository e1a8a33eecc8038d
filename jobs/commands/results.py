"""The commands on a finished run: reduce, report, calibrate and compare."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from evalcore.errors import TribunalError
from evalcore.tables import TableFormat
from jobs.commands.common import S3_HELP, FormatOpt, output_format, print_error


def reduce_cmd(
    run: Annotated[str, typer.Argument(help="Run folder written by `sweep`: a local path or s3://bucket/prefix/<run_id>.")],
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print leaderboard.json instead of the table (= --format json).")] = False,
    fmt: FormatOpt = TableFormat.TABLE,
    adjudications: Annotated[
        bool,
        typer.Option("--adjudications/--no-adjudications",
                     help="Apply the experts' decisions recorded in the run (default), or show the raw view."),
    ] = True,
) -> None:
    """Build the leaderboard of a run: per-system rates with 95% intervals, judge analysis, cost.

    Writes `leaderboard.json`, `leaderboard.parquet` and `leaderboard_areas.parquet` into the run
    folder and prints the leaderboard. Reducing the same run again gives identical files.

    Example: `tribunal reduce runs/<run_id>`
    """
    from jobs.reduce import reduce_run, render_leaderboard

    fmt = output_format(fmt, json_out)
    console = Console()
    try:
        lb = reduce_run(run, endpoint_override=endpoint_url, adjudications=adjudications)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    if fmt is TableFormat.JSON:
        console.print_json(lb.model_dump_json())
    else:
        render_leaderboard(lb, console, fmt)


def report_cmd(
    run: Annotated[str, typer.Argument(help="Run folder written by `sweep`: a local path or s3://bucket/prefix/<run_id>.")],
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    max_detailed: Annotated[int, typer.Option(help="Submissions embedded with every verdict and flag.")] = 300,
    max_listed: Annotated[int, typer.Option(help="Per-task rows listed in the drill-down.")] = 5000,
) -> None:
    """Write `report.html` into the run folder: one self-contained page that works offline.

    Leaderboard with confidence intervals (gated vs. ungated), per-area heatmap, judge agreement,
    self-family preference, hallucinations by category, cost by vendor, and a drill-down from a
    system to a task to each judge's verdict and reasoning and the confirmed hallucinations.
    The run is reduced first, so the page always matches the run's tables.

    Example: `tribunal report runs/<run_id>` then open runs/<run_id>/report.html
    """
    from jobs.report import ReportLimits, write_report

    try:
        uri = write_report(
            run, endpoint_override=endpoint_url, limits=ReportLimits(max_listed=max_listed, max_detailed=max_detailed)
        )
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    Console().print(f"report written: {uri}", markup=False, highlight=False)


def calibrate_cmd(
    run: Annotated[str, typer.Argument(help="Run folder written by `sweep` (local or s3://).")],
    labels: Annotated[
        str | None,
        typer.Option("--labels", "-l", help="Expert labels: .jsonl, .parquet, or a ground-truth .json (local or s3://). "
                     "Default: the run's adjudications (`tribunal review`, `tribunal adjudicate`)."),
    ] = None,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print calibration.json instead of the tables (= --format json).")] = False,
    fmt: FormatOpt = TableFormat.TABLE,
    sample_only: Annotated[
        bool, typer.Option("--sample-only", help="With adjudications as labels: only the seeded random sample (unbiased).")
    ] = False,
) -> None:
    """Calibrate a run's judges and auditor against expert labels.

    Per judge: accuracy, Cohen's κ with the experts, false-pass and false-fail rates (overall and
    per practice area); whether the panel's task score beats each judge's all-pass against the
    experts' all-pass; the auditor's precision and recall by category, its material/minor
    confusion, and what Stage 2 rejected that was real or confirmed that was not. 95% bootstrap
    intervals over submissions. Writes calibration.json and calibration.parquet into the run (a later
    calibration gets calibration-0002.json and so on: none is overwritten); `tribunal report RUN`
    then shows the latest. Labels that match no graded submission are refused (exit 1).

    Without `--labels`, the run's adjudications are the labels (from `tribunal review` or
    `tribunal adjudicate`): the auditor's precision on reviewed flags and the judges' accuracy on
    reviewed verdicts. Only decisions from the review page's seeded random sample are unbiased
    (`--sample-only`); the material-first queue over-represents disputed items, and the output says so.

    Labels: one JSON object per line, `{"type": "verdict", system, task_id, criterion_id,
    verdict}` or `{"type": "hallucination", system, task_id, deliverable, span, category,
    materiality}` (or the same as Parquet rows, or a ground-truth JSON like the sample's).

    Example: `tribunal calibrate runs/demo --labels examples/sample/ground_truth.json`
    """
    from jobs.calibrate import calibrate_run, render_calibration

    fmt = output_format(fmt, json_out)
    try:
        cal = calibrate_run(run, labels, endpoint_override=endpoint_url, sample_only=sample_only)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    if fmt is TableFormat.JSON:
        Console().print_json(cal.model_dump_json())
    else:
        render_calibration(cal, Console(), fmt)


def compare_cmd(
    run_a: Annotated[str, typer.Argument(help="The reference run folder (local or s3://).")],
    run_b: Annotated[
        str | None, typer.Argument(help="The run to compare with it (e.g. one judge or the auditor swapped).")
    ] = None,
    out: Annotated[str | None, typer.Option("--out", "-o", help="Also write the comparison as JSON here.")] = None,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON instead of tables (= --format json).")] = False,
    fmt: FormatOpt = TableFormat.TABLE,
    adjudicated: Annotated[
        bool, typer.Option("--adjudicated", help="Compare RUN_A's raw view with its adjudicated view (no RUN_B).")
    ] = False,
) -> None:
    """Compare two runs over the same submissions: what swapping a judge or the auditor changed.

    Verdicts that changed, per judge (pass→fail, fail→pass, κ between the runs); confirmed
    hallucinations upheld by one run and not the other; each system's score change (B − A) with a
    95% interval; Kendall τ of the two leaderboards and the systems whose rank changed. Make run B
    with `tribunal sweep … --config swapped.yaml --reuse RUN_A`: only the swapped vendor's calls are paid.

    `--adjudicated` compares one run's raw leaderboard with its adjudicated one (what the experts'
    decisions changed). Runs with no submission complete in both are refused (exit 1).

    Example: `tribunal compare runs/<run_a> runs/<run_b> --out compare.json`
    """
    from jobs.compare import compare_runs, render_comparison

    fmt = output_format(fmt, json_out)
    try:
        cmp = compare_runs(run_a, run_b, out=out, endpoint_override=endpoint_url, adjudicated=adjudicated)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    if fmt is TableFormat.JSON:
        Console().print_json(cmp.model_dump_json())
    else:
        render_comparison(cmp, Console(), fmt)
