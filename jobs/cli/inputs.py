"""The commands on inputs before any run: `validate` (what a sweep would load) and `grade` (one submission)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from evalcore.benchmark.validate import validate as run_validation
from evalcore.config.models import VendorMode
from evalcore.errors import TribunalError
from evalcore.grading.scoring import AuditMode
from jobs.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_INCOMPLETE,
    EXIT_LEFT_OUT,
    S3_HELP,
    ConfigOpt,
    FormatOpt,
    VendorsOpt,
    output_format,
    print_error,
)
from jobs.display.tables import TableFormat
from jobs.display.validation import render


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
    from jobs.sweep.governance import governed_command_caches

    with governed_command_caches(cfg):  # converted text where data_governance says, never ~/.cache if private
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
    from jobs.cli.grade_one import grade_one
    from jobs.display.grade import render_grade

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
