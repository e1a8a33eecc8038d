"""The commands on one run's folder: reduce, show, report, calibrate, compare, status and purge."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console

from evalcore.config.models import TribunalConfig, VendorMode
from evalcore.errors import InputError, TribunalError
from jobs.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_INCOMPLETE,
    S3_HELP,
    FormatOpt,
    output_format,
    print_error,
    use_endpoint,
)
from jobs.display.tables import TableFormat

CorrectedOpt = Annotated[
    bool, typer.Option("--corrected", help="Add each system's rates corrected by expert labels on a uniform random "
                       "sample of whole submissions (prediction-powered inference), beside the judges' own.")]
LabelsOpt = Annotated[
    str | None, typer.Option("--labels", "-l", help="With --corrected: expert labels (.jsonl, .parquet or a "
                             "ground-truth .json) instead of the review's full section; every criterion of each "
                             "labelled submission labelled.")]
LabelSeedOpt = Annotated[
    int | None, typer.Option("--label-seed", help="With --labels: the seed of the random order the labelled "
                             "submissions were taken in (default: the run's seed; the review's --full order).")]


def reduce_cmd(
    run: Annotated[str, typer.Argument(help="Run folder written by `sweep`: a local path or s3://bucket/prefix/<run_id>.")],
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print leaderboard.json instead of the table (= --format json).")] = False,
    fmt: FormatOpt = TableFormat.TABLE,
    adjudications: Annotated[
        bool,
        typer.Option("--adjudications/--no-adjudications",
                     help="Apply the experts' decisions recorded in the run (default), or show the raw view: "
                     "written apart as leaderboard_raw.json, leaderboard_raw.parquet and leaderboard_raw_areas.parquet "
                     "(the files in force are left as they are)."),
    ] = True,
    corrected: CorrectedOpt = False,
    labels: LabelsOpt = None,
    label_seed: LabelSeedOpt = None,
) -> None:
    """Build the leaderboard of a run: per-system rates with 95% intervals, judge analysis, cost.

    Writes `leaderboard.json`, `leaderboard.parquet` and `leaderboard_areas.parquet` into the run
    folder and prints the leaderboard. Reducing the same run again gives identical files. With
    `--no-adjudications`, the raw view goes to `leaderboard_raw.json`, `leaderboard_raw.parquet` and
    `leaderboard_raw_areas.parquet` instead: the files in force are never replaced by it.

    `--corrected` adds, per system, its headline rate, criterion pass rate and material
    hallucinations per audited task corrected by expert labels (prediction-powered inference),
    beside the judges' own, with how many labels each rests on: from the whole submissions the
    review's full section labelled (`tribunal review RUN --full K`), or from `--labels FILE`
    (every criterion of each labelled submission; its submissions the first of the seeded order
    `--label-seed`). A sample that is not uniform (a submission skipped or half-labelled before a
    later one) is refused with the submission named (exit 1, nothing written).

    Example: `tribunal reduce runs/<run_id>`, `tribunal reduce runs/<run_id> --corrected`
    """
    from evalcore.storage.run import open_run
    from jobs.display.leaderboard import render_leaderboard
    from jobs.per_run.reduce import reduce_run

    fmt = output_format(fmt, json_out)
    console = Console()
    try:
        lb = reduce_run(run, endpoint_override=endpoint_url, adjudications=adjudications, corrected=corrected,
                        labels=labels, label_seed=label_seed)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    warn_if_partial(run, endpoint_url)
    if fmt is TableFormat.JSON:
        console.print_json(lb.model_dump_json())
    else:
        render_leaderboard(lb, console, fmt)
        if not adjudications:
            console.print(f"raw view written apart: {', '.join(open_run(run).leaderboard_files(raw=True))} "
                          "(the leaderboard files in force are unchanged)", markup=False, highlight=False)


def show_cmd(
    run: Annotated[str, typer.Argument(help="Run folder written by `sweep`: a local path or s3://bucket/prefix/<run_id>.")],
    system: Annotated[str, typer.Option("--system", "-s", help="The system, as in the run's tables.")],
    task: Annotated[str, typer.Option("--task", "-t", help="The task id, e.g. real-estate/lease-abstract/scenario-01.")],
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the grading as JSON (= --format json).")] = False,
    fmt: FormatOpt = TableFormat.TABLE,
    adjudications: Annotated[
        bool,
        typer.Option("--adjudications/--no-adjudications",
                     help="Mark and apply the experts' decisions in force (default), or show the grading raw."),
    ] = True,
) -> None:
    """Show what a run holds for one submission: its latest grading, read from the run, not graded again.

    Every judge's verdict on each criterion with its reasoning, every flag (Stage 1 as raised,
    Stage 2's decision, the evidence and its page), the scores, and each call with what it cost.
    The experts' decisions in force are marked EXPERT where they apply, and the scores are shown
    as graded and with the decisions in force (what `tribunal reduce` counts). Writes nothing.

    Example: `tribunal show runs/demo --system fluent-hallucinator --task real-estate/lease-abstract`
    """
    from jobs.display.show import render_show
    from jobs.per_run.show import show_submission

    fmt = output_format(fmt, json_out)
    try:
        shown = show_submission(run, system, task, endpoint_override=endpoint_url, adjudications=adjudications)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    if fmt is TableFormat.JSON:
        Console().print_json(shown.model_dump_json())
    else:
        render_show(shown, Console(), fmt)


def report_cmd(
    run: Annotated[str, typer.Argument(help="Run folder written by `sweep`: a local path or s3://bucket/prefix/<run_id>.")],
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    max_detailed: Annotated[int, typer.Option(help="Submissions embedded with every verdict and flag.")] = 300,
    max_listed: Annotated[int, typer.Option(help="Per-task rows listed in the drill-down.")] = 5000,
    corrected: CorrectedOpt = False,
    labels: LabelsOpt = None,
    label_seed: LabelSeedOpt = None,
) -> None:
    """Write `report.html` into the run folder: one self-contained page that works offline.

    Leaderboard with confidence intervals (gated vs. ungated), per-area heatmap, judge agreement,
    self-family preference, hallucinations by category, cost by vendor, and a drill-down from a
    system to a task to each judge's verdict and reasoning and the confirmed hallucinations.
    The run is reduced first, so the page always matches the run's tables.

    Example: `tribunal report runs/<run_id>` then open runs/<run_id>/report.html
    """
    from jobs.per_run.report import ReportLimits, write_report

    try:
        uri = write_report(
            run, endpoint_override=endpoint_url, limits=ReportLimits(max_listed=max_listed, max_detailed=max_detailed),
            corrected=corrected, labels=labels, label_seed=label_seed,
        )
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    warn_if_partial(run, endpoint_url)
    Console().print(f"report written: {uri}", markup=False, highlight=False)


def warn_if_partial(run: str, endpoint_url: str | None) -> None:
    """Say, on stderr, when the run's tables hold only part of it: a sweep holds its lock now
    (`Run.lock_holder`), or its latest attempt has not finished (`Run.unfinished`).

    Why: reduce and report read the shards written so far; without a word, a leaderboard of the
    finished part passes for the run's."""
    from rich.text import Text

    from evalcore.storage.run import open_run

    opened = open_run(run, endpoint_url)
    try:
        holder = opened.lock_holder()
        why = f"a sweep is still writing into it: {holder}" if holder else opened.unfinished()
    except (TribunalError, OSError):  # the run was read a moment ago: what is unreadable now says nothing
        return
    if why:
        Console(stderr=True).print(Text.assemble(("warning: ", "yellow"), f"{run}: {why}; the leaderboard covers only "
                                                 "the submissions graded so far"), soft_wrap=True)


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

    A run with repeats (`tribunal retest`) also gets a repeatability section, labels or not: per
    judge and for the panel the flip rate and test-retest κ, the criteria that flip most, how often
    a submission's task score and gate changed, and how often a material flag recurred
    (repeatability.json in the run; docs/CALIBRATION.md).

    Example: `tribunal calibrate runs/demo --labels examples/sample/ground_truth.json`
    """
    from jobs.display.calibration import render_calibration, render_repeatability
    from jobs.per_run.calibrate import calibrate_run, run_repeatability

    fmt = output_format(fmt, json_out)
    try:
        cal = calibrate_run(run, labels, endpoint_override=endpoint_url, sample_only=sample_only)
    except InputError as exc:  # no labels: a run with repeats still has its repeatability section
        rep = run_repeatability(run, endpoint_override=endpoint_url) if labels is None else None
        if rep is None:
            print_error(exc)
            raise typer.Exit(1) from exc
        if fmt is TableFormat.JSON:
            Console().print_json(json.dumps({"repeatability": rep.model_dump(mode="json")}))
            return
        render_repeatability(rep, Console(), fmt)
        Console(stderr=True).print(f"note: against expert labels: not computed ({exc})", markup=False,
                                   highlight=False)
        return
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
    from jobs.display.comparison import render_comparison
    from jobs.per_run.compare import compare_runs

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
    from jobs.display.status import render_status
    from jobs.per_run.status import run_status

    fmt = output_format(fmt, as_json)
    use_endpoint(endpoint_url)
    try:
        report = run_status(run)
        if check and report.holdings:
            from jobs.per_run.purge import check_at_vendors

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
    local: Annotated[
        bool,
        typer.Option("--local", help="Delete instead the run's entries in the local caches (converted text, OCR "
                     "pages): every entry made from a file of its benchmark or submissions, found by the file's "
                     "SHA-256, in its data_governance.cache_dir and its output folder's _cache/ and _ocr/. "
                     "No vendor is contacted."),
    ] = False,
) -> None:
    """Delete what a run's batches left at the vendors: OpenAI input, output and error files,
    Anthropic message batches. A sweep does this itself once its tables are written
    (`data_governance.purge`); this command does it later or again. With `--local`, delete the
    run's entries in the local caches instead (docs/DATA.md says exactly which).

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
    from jobs.display.purge import render_purge
    from jobs.per_run.purge import purge_counts, purge_run, written_at

    use_endpoint(endpoint_url)
    console = Console(stderr=True)
    if local:
        _purge_local(run, console, as_json)
        return
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


def _purge_local(run: str, console: Console, as_json: bool) -> None:
    """`tribunal purge RUN --local`: the run's entries in the local caches (`jobs.per_run.purge.purge_local`)."""
    from jobs.display.purge import render_local_purge
    from jobs.per_run.purge import purge_local

    try:
        result = purge_local(run)
    except TribunalError as exc:
        print_error(exc, console)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    if as_json:
        import dataclasses
        import json as _json

        print(_json.dumps(dataclasses.asdict(result), indent=1))
    render_local_purge(result, console)


def _vendors_config(run: str, path: str | None) -> TribunalConfig:
    """The configuration whose vendor entries reach the vendors a run used: `--config`, else its run.json."""
    if path is not None:
        from evalcore.config.load import load_config

        return load_config(path, vendors=VendorMode.REAL)
    from jobs.per_run.purge import run_config

    return run_config(run)
