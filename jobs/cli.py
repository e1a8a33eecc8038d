"""The ``tribunal`` console script: one command per job, help that teaches, exit codes that mean something.

Exit codes (the same for every command; `EXIT_*` below): 0 = done, nothing wrong; 1 = the inputs or
the configuration have problems (each printed as ``file: reason``); 2 = the command line itself is
wrong (typer's usage errors); 3 = some grading is incomplete because calls failed (run again: exactly
those are retried); 4 = inputs were left out (rejected submissions or tasks, or a submission too long
to grade) while the rest was graded; 130 = interrupted by Ctrl-C.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # gRPC's fork notices are noise for a CLI

import typer
from rich.console import Console
from rich.text import Text

from evalcore.benchmark.validate import render
from evalcore.benchmark.validate import validate as run_validation
from evalcore.config.models import VendorMode
from evalcore.errors import TribunalError
from evalcore.grading.scoring import AuditMode
from evalcore.storage.store import valid_run_id

if TYPE_CHECKING:
    from jobs.sweep import SweepSummary

app = typer.Typer(
    help=(
        "Tribunal grades AI-written legal work with a three-vendor judge panel and a hallucination "
        "audit, at leaderboard scale on Ray.\n\n"
        "Start with `tribunal validate BENCHMARK` to check a benchmark before a sweep."
    ),
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


@app.callback()
def main() -> None:
    """Tribunal: grade AI-written legal work with a judge panel and a hallucination audit."""


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
    """Interrupted beats incomplete beats left out: the most urgent thing to act on."""
    if summary.interrupted:
        return EXIT_INTERRUPTED
    if summary.incomplete or summary.failed_shards or summary.cost_capped:
        return EXIT_INCOMPLETE
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


@app.command()
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
        bool, typer.Option("--json", help="Print the full report as JSON (every missing deliverable).")
    ] = False,
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

    try:
        cfg = load_config(config, vendors=VendorMode.OFFLINE)
    except TribunalError as exc:
        Console(stderr=True).print(str(exc), markup=False, highlight=False)
        raise typer.Exit(code=1) from None
    report = run_validation(benchmark, submissions, endpoint_override=endpoint_url, limits=cfg.input_limits,
                            low_confidence=cfg.ocr.low_confidence)
    console = Console()
    if as_json:
        console.print_json(report.model_dump_json())
    else:
        render(report, console)
    raise typer.Exit(code=0 if report.ok else 1)


# ----------------------------------------------------------------------------------------------
# grade / sweep / demo
# ----------------------------------------------------------------------------------------------

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


def _check_run_id(value: str | None) -> str | None:
    """A run id is one folder name under --output: it can never name a path outside it."""
    if value is not None and not valid_run_id(value):
        raise typer.BadParameter(
            f"{value!r} is not a run id: use 1-128 letters, digits, '.', '_' or '-', starting with a letter "
            "or digit (a run id is one folder under --output, never a path)"
        )
    return value


@app.command()
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


@app.command()
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
            "--run-id", callback=_check_run_id,
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
    personas: Annotated[
        str | None,
        typer.Option(
            "--personas",
            help="Emulated vendors only: `demo` or a YAML file of per-model/vendor biases "
            "(leniency, noise, self_bias, recall, false_flag_rate) the emulated judges answer with.",
        ),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option("--max-cost", min=0.0, help="Stop before any call could make this command spend more than USD (exit 3; run again to continue)."),
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
) -> None:
    """Grade every submission of a benchmark on Ray and write the run's tables.

    Re-running the same command resumes: completed submissions are skipped and no judge call
    whose request is already stored is sent again. `--reuse RUN` also serves calls stored in
    another run (swap one judge: only that judge's calls are paid). Ctrl-C stops after flushing
    the shards in flight; a second Ctrl-C cancels them (their submissions are graded by the next
    run). A missing API key is reported before anything starts. `--max-cost USD` stops cleanly
    before a call could make this command spend more (progress shows spent vs the estimate).

    Exit codes: 0 done; 1 bad input or configuration; 2 usage error; 3 incomplete submissions,
    failed shards or the cost cap (run again to continue with exactly what is left); 4 inputs left
    out (rejected submissions, or tasks dropped from the benchmark; the rest was graded);
    130 interrupted.

    Example:

        tribunal sweep examples/sample -s examples/sample/submissions -o runs --vendors emulated
    """
    from evalcore.config.load import load_config
    from jobs.batch import with_batch
    from jobs.modes import load_personas, vendor_mode
    from jobs.sweep import SweepOptions, run_sweep

    if endpoint_url:
        import os

        os.environ["AWS_ENDPOINT_URL_S3"] = endpoint_url
    console = Console(stderr=True)
    try:
        cfg = with_batch(load_config(config, vendors=vendors), batch, emulated=vendors == "emulated")
        if detach and not cfg.batch.enabled:
            raise typer.BadParameter("--detach needs batch mode (--batch, or batch.enabled in the config)")
        panel = load_personas(personas, cfg, benchmark, submissions) if personas else None
        with vendor_mode(cfg, vendors, panel) as run_cfg:
            opts = SweepOptions(
                benchmark=benchmark, submissions=submissions, output=output, config=run_cfg,
                vendors=vendors, run_id=run_id, address=address, reuse=list(reuse or []),
                shard_size=shard_size, max_in_flight=max_in_flight, progress=progress, max_cost_usd=max_cost,
                detach=detach,
            )
            summary = run_sweep(opts, console)
    except TribunalError as exc:
        print_error(exc, console)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except KeyboardInterrupt as exc:  # Ctrl-C before the shards started (loading, Ray, preflight)
        print_error("interrupted before grading started; nothing was graded", console)
        raise typer.Exit(EXIT_INTERRUPTED) from exc
    _print_summary(summary, console)
    if summary.cost_message:
        console.print(f"[yellow]{summary.cost_message}[/]")
    if detach and summary.incomplete:
        console.print(f"[yellow]--detach:[/] batches submitted; `tribunal status {summary.run_uri}` shows them; "
                      "run the same command again to collect")
        raise typer.Exit(3)
    if reduce_after and not summary.interrupted:
        _reduce_and_show(summary.run_uri)
    code = sweep_exit_code(summary)
    if code == EXIT_LEFT_OUT:
        print_error(f"{summary.rejected} input(s) left out (see above and the run's rejected/ table); "
                    "the rest was graded", console)
    raise typer.Exit(code)


@app.command()
def status(
    run: Annotated[str, typer.Argument(help="A run folder (local or s3://), e.g. runs/run-2f1c….")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
) -> None:
    """Show a run: every batch per vendor (submitted, in progress, done, failed, expires at) and
    the run's progress. Reads only the run folder (the batch journal and the submissions table);
    no vendor is contacted.

    Example:

        tribunal status runs/run-2f1c0a9b3d4e
    """
    from jobs.batch import render_status, run_status

    if endpoint_url:
        os.environ["AWS_ENDPOINT_URL_S3"] = endpoint_url
    try:
        report = run_status(run)
    except TribunalError as exc:
        Console(stderr=True).print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc
    if as_json:
        import json as _json

        print(_json.dumps(report.as_dict(), indent=1, default=str))
    else:
        render_status(report, Console())


def _print_summary(summary: SweepSummary, console: Console) -> None:
    from rich.table import Table

    s = summary.as_dict()
    t = Table(title=Text(f"sweep {s['run_id']} -> {s['run_uri']}"), show_header=False)
    for key in ("attempt", "submissions_total", "skipped_done", "graded", "complete", "incomplete", "too_long",
                "failed_shards", "cancelled_shards",
                "rejected", "paid_calls", "reused_calls", "rate_limited", "batches_submitted", "cost_usd",
                "estimated_cost_usd", "wall_s"):
        value = s[key]
        if isinstance(value, list):
            value = len(value)
        t.add_row(key, f"{value:,.4f}" if isinstance(value, float) else f"{value:,}")
    if s.get("ocr", {}).get("documents"):
        o = s["ocr"]
        t.add_row("ocr_pages", f"{o['pages_ocred']:,} recognised, {o['pages_cached']:,} cached ({o['wall_s']:.1f} s)")
    console.print(t)
    if s["rejections"]:
        console.print(f"[yellow]{s['rejected']} input(s) rejected (the rest of the sweep went on):[/]")
        for line in s["rejections"][:20]:
            console.print(f"  {line}", markup=False, highlight=False)
        if s["rejected"] > 20:
            console.print(f"  ... and {s['rejected'] - 20} more: see the run's rejected/ table")


def _reduce_and_show(run_uri: str) -> None:
    from jobs.reduce import reduce_run, render_leaderboard

    lb = reduce_run(run_uri)
    render_leaderboard(lb, Console())


@app.command()
def estimate(
    benchmark: Annotated[str, typer.Argument(help="Benchmark root (local or s3://).")],
    submissions: Annotated[
        str, typer.Option("--submissions", "-s", help="Results folder or .jsonl/.parquet manifest.")
    ],
    config: ConfigOpt = None,
    calibrate: Annotated[
        str | None,
        typer.Option(help="A finished run (e.g. a pilot on a few submissions): take output sizes and the audited share from it."),
    ] = None,
    audited_share: Annotated[
        float | None,
        typer.Option(min=0.0, max=1.0, help="Share of submissions expected to pass Stage A and be audited (default 1: upper bound)."),
    ] = None,
    fast: Annotated[bool, typer.Option(help="Skip the grounding checks (Stage 1's candidates) for speed.")] = False,
    batch: Annotated[
        bool,
        typer.Option("--batch", help="Price batch mode (the vendors' batch APIs; cache warming off), as `sweep --batch`."),
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the estimate as JSON.")] = False,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
) -> None:
    """What a sweep will cost before it starts: every request built as the sweep builds it, not sent.

    Counts calls and input tokens per vendor, the share of input tokens the vendors' caches will
    serve (their caching rules replayed in the sweep's order, with cache warming as configured),
    prices them per pricing mode, and prints the lower bound on wall time set by the configured
    rate limits. Output sizes and the audited share are assumptions (printed); `--calibrate RUN`
    measures them on an earlier run. `--batch` (or batch.enabled in the configuration) prices the
    sweep `sweep --batch` would run: batch prices, cache warming off.

    Example:

        tribunal estimate runs/lab -s runs/lab/submissions --calibrate runs/pilot/run-1a2b
    """
    import json

    from rich.table import Table

    from evalcore.benchmark.loader import load_benchmark
    from evalcore.config.load import load_config
    from evalcore.grading.estimate import OutputModel, render_table
    from evalcore.grading.estimate import estimate as build_estimate
    from evalcore.schema import Submission
    from evalcore.submissions.loader import iter_submissions
    from jobs.batch import with_batch

    if endpoint_url:
        os.environ["AWS_ENDPOINT_URL_S3"] = endpoint_url
    console = Console(stderr=True)
    try:
        cfg = with_batch(load_config(config), True if batch else None)
        model = OutputModel.from_run(calibrate) if calibrate else OutputModel()
        if audited_share is not None:
            model.audited_share = audited_share
        bench = load_benchmark(benchmark)
        tasks = bench.task_map()
        if not tasks:
            raise TribunalError(f"{benchmark}: no loadable tasks ({len(bench.problems)} problem(s)); "
                                "`tribunal validate` lists them")
        subs = (s for s in iter_submissions(submissions, tasks, excluded=bench.excluded_task_ids())
                if isinstance(s, Submission))
        est = build_estimate(tasks, subs, cfg, model, fast=fast)
    except TribunalError as exc:
        print_error(exc, console)
        raise typer.Exit(1) from exc
    if json_out:
        data = est.model_dump(mode="json")
        data.update(cost_usd=est.cost_usd, cached_share=est.cached_share, min_wall_s=est.min_wall_s,
                    usd_per_submission=est.per_submission())
        print(json.dumps(data, indent=1))
        return
    modes = list(est.cost_usd)
    t = Table(title=f"estimate ({est.pricing}): {est.submissions:,} submissions ({est.too_long} too long), "
                    f"cache warming {'on' if est.warm else 'off'}")
    for col in ("vendor", "model", "calls", "input tokens", "cached", "output tokens",
                *(f"USD {m}" for m in modes), "min wall"):
        t.add_column(col, justify="left" if col in ("vendor", "model") else "right")
    for row in render_table(est):
        t.add_row(*row)
    out = Console()
    out.print(t)
    a = est.assumptions
    out.print("USD per graded submission: " + ", ".join(f"{m} ${est.per_submission(m):,.4f}" for m in modes))
    out.print(f"assumed: audited share {a.audited_share:.2f}, Stage 2 share {a.verify_share:.2f}, output tokens "
              + ("measured in " + a.calibrated_from if a.calibrated_from else "per purpose + reasoning effort (defaults)"))


@app.command()
def demo(
    output: Annotated[str, typer.Option("--output", "-o", help="Where runs go.")] = "runs",
    address: Annotated[str, typer.Option("--address", help="Ray address (local starts one here).")] = "local",
) -> None:
    """The whole product on the sample benchmark with no keys: local Ray, emulated vendors.

    Starts the three vendor emulators on 127.0.0.1 (answering with the offline heuristics, each
    judge with its own persona: a noisy OpenAI judge and auditor, a lenient xAI judge, an Anthropic
    judge biased toward its own family), sweeps examples/sample on a local Ray cluster into
    ./runs/, reduces, and prints the leaderboard. Run it twice: the second run resumes and sends
    zero judge calls. Then try `tribunal calibrate runs/demo --labels examples/sample/ground_truth.json`.
    """
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "examples" / "sample"
    if not root.exists():
        print_error(f"{root}: sample benchmark not found (run from a checkout)")
        raise typer.Exit(1)
    sweep(
        benchmark=str(root), submissions=str(root / "submissions"), output=output, vendors=VendorMode.EMULATED,
        address=address, run_id="demo", reuse=None, config=None, shard_size=4, max_in_flight=8,
        endpoint_url=None, progress=True, reduce_after=True, personas="demo",
    )


@app.command()
def emulate(
    openai_port: Annotated[int, typer.Option(help="Port of the OpenAI emulator (0 = any free port).")] = 0,
    anthropic_port: Annotated[int, typer.Option(help="Port of the Anthropic emulator (0 = any free port).")] = 0,
    xai_port: Annotated[int, typer.Option(help="Port of the xAI gRPC emulator (0 = any free port).")] = 0,
    rpm: Annotated[
        int | None, typer.Option("--rpm", help="Server-side requests/min limit of each emulator (429 beyond).")
    ] = None,
    tpm: Annotated[
        int | None, typer.Option("--tpm", help="Server-side tokens/min limit of each emulator (429 beyond).")
    ] = None,
    latency: Annotated[float, typer.Option(help="Median answer latency in seconds (lognormal); 0 = instant.")] = 0.0,
    faults: Annotated[
        float, typer.Option(help="Share of requests failing (429, 5xx, malformed, truncated in equal parts).")
    ] = 0.0,
    seed: Annotated[int, typer.Option(help="Seed of fault injection and latency.")] = 0,
    batch_delay: Annotated[
        float, typer.Option(help="Seconds a batch takes to end (batch APIs; past 24 h it expires).")
    ] = 0.0,
    batch_errors: Annotated[float, typer.Option(help="Share of batched requests answered errored.")] = 0.0,
    api_key_env: Annotated[
        str | None, typer.Option(help="Require the key held in this environment variable (401 otherwise).")
    ] = None,
    emulator_config: Annotated[
        str | None, typer.Option("--emulator-config", help="YAML of an EmulatorConfig (replaces the options above).")
    ] = None,
    write_config: Annotated[
        str | None, typer.Option("--write-config", help="Write the sweep YAML pointing at the emulators to this file.")
    ] = None,
) -> None:
    """Serve local emulators of the OpenAI, Anthropic and xAI APIs on 127.0.0.1 until Ctrl+C.

    The real SDKs work against them unchanged. They answer with the offline heuristics, enforce
    the limits you give, inject faults at the rate you give, and print the endpoints, the
    environment variables and the YAML (for `tribunal sweep --config`) that point a sweep at them.

    Example:

        tribunal emulate --rpm 600 --latency 0.5 --faults 0.02 --write-config emulated.yaml

    They also serve the three batch APIs (`--batch-delay`, `--batch-errors`) for `tribunal sweep --batch`.
    """
    import asyncio
    import os
    from pathlib import Path

    from evalcore.emulators.serve import emulator_config_from, serve_forever

    console = Console(stderr=True)
    try:
        key = os.environ.get(api_key_env) if api_key_env else None
        if api_key_env and not key:
            raise TribunalError(f"--api-key-env {api_key_env}: that environment variable is not set")
        cfg = emulator_config_from(
            file=Path(emulator_config) if emulator_config else None,
            requests_per_minute=rpm,
            tokens_per_minute=tpm,
            latency_s=latency,
            fault_rate=faults,
            seed=seed,
            api_key=key,
            batch_delay_s=batch_delay,
            batch_errors=batch_errors,
        )
        ports = {"openai": openai_port, "anthropic": anthropic_port, "xai": xai_port}
        asyncio.run(serve_forever(cfg, ports=ports, config_out=Path(write_config) if write_config else None))
    except TribunalError as exc:
        print_error(exc, console)
        raise typer.Exit(1) from exc
    except OSError as exc:  # e.g. a port already in use
        print_error(f"cannot start the emulators: {exc}", console)
        raise typer.Exit(1) from exc
    except KeyboardInterrupt:
        console.print("emulators stopped")



@app.command("reduce")
def reduce_cmd(
    run: Annotated[str, typer.Argument(help="Run folder written by `sweep`: a local path or s3://bucket/prefix/<run_id>.")],
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print leaderboard.json instead of the table.")] = False,
) -> None:
    """Build the leaderboard of a run: per-system rates with 95% intervals, judge analysis, cost.

    Writes `leaderboard.json`, `leaderboard.parquet` and `leaderboard_areas.parquet` into the run
    folder and prints the leaderboard. Reducing the same run again gives identical files.

    Example: `tribunal reduce runs/<run_id>`
    """
    from jobs.reduce import reduce_run, render_leaderboard

    console = Console()
    try:
        lb = reduce_run(run, endpoint_override=endpoint_url)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    if json_out:
        console.print_json(lb.model_dump_json())
    else:
        render_leaderboard(lb, console)


@app.command("report")
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


@app.command("calibrate")
def calibrate_cmd(
    run: Annotated[str, typer.Argument(help="Run folder written by `sweep` (local or s3://).")],
    labels: Annotated[
        str,
        typer.Option("--labels", "-l", help="Expert labels: .jsonl, .parquet, or a ground-truth .json (local or s3://)."),
    ],
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print calibration.json instead of the tables.")] = False,
) -> None:
    """Calibrate a run's judges and auditor against expert labels.

    Per judge: accuracy, Cohen's κ with the experts, false-pass and false-fail rates (overall and
    per practice area); whether the panel's task score beats each judge's all-pass against the
    experts' all-pass; the auditor's precision and recall by category, its material/minor
    confusion, and what Stage 2 rejected that was real or confirmed that was not. 95% bootstrap
    intervals over submissions. Writes calibration.json and calibration.parquet into the run;
    `tribunal report RUN` then shows a calibration section.

    Labels: one JSON object per line, `{"type": "verdict", system, task_id, criterion_id,
    verdict}` or `{"type": "hallucination", system, task_id, deliverable, span, category,
    materiality}` (or the same as Parquet rows, or a ground-truth JSON like the sample's).

    Example: `tribunal calibrate runs/demo --labels examples/sample/ground_truth.json`
    """
    from jobs.calibrate import calibrate_run, render_calibration

    try:
        cal = calibrate_run(run, labels, endpoint_override=endpoint_url)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    if json_out:
        Console().print_json(cal.model_dump_json())
    else:
        render_calibration(cal, Console())


@app.command("compare")
def compare_cmd(
    run_a: Annotated[str, typer.Argument(help="The reference run folder (local or s3://).")],
    run_b: Annotated[str, typer.Argument(help="The run to compare with it (e.g. one judge or the auditor swapped).")],
    out: Annotated[str | None, typer.Option("--out", "-o", help="Also write the comparison as JSON here.")] = None,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON instead of tables.")] = False,
) -> None:
    """Compare two runs over the same submissions: what swapping a judge or the auditor changed.

    Verdicts that changed, per judge (pass→fail, fail→pass, κ between the runs); confirmed
    hallucinations upheld by one run and not the other; each system's score change (B − A) with a
    95% interval; Kendall τ of the two leaderboards and the systems whose rank changed. Make run B
    with `tribunal sweep … --config swapped.yaml --reuse RUN_A`: only the swapped vendor's calls are paid.

    Example: `tribunal compare runs/<run_a> runs/<run_b> --out compare.json`
    """
    from jobs.compare import compare_runs, render_comparison

    try:
        cmp = compare_runs(run_a, run_b, out=out, endpoint_override=endpoint_url)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    if json_out:
        Console().print_json(cmp.model_dump_json())
    else:
        render_comparison(cmp, Console())


@app.command("synth")
def synth_cmd(
    out: Annotated[str, typer.Argument(help="Output folder: results/, manifest.jsonl and ground_truth.json go here.")],
    n: Annotated[int, typer.Option("--n", "-n", min=1, help="Number of synthetic submissions.")] = 2000,
    sample: Annotated[str, typer.Option(help="Sample benchmark with submissions/ and ground_truth.json.")] = "examples/sample",
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives identical files.")] = 0,
    profile: Annotated[
        str, typer.Option(help="sample: N submissions derived from the sample; lab: a realistic-size benchmark.")
    ] = "sample",
    tasks: Annotated[int, typer.Option(min=1, help="lab profile: number of tasks (4 systems each).")] = 8,
) -> None:
    """Generate N synthetic submissions with known ground truth from the sample, for scale tests.

    Each one copies a sample submission under a new system name (`synth-0001`, ...), spread evenly
    over the sample's tasks, and clones it, alters a grounded date/amount/party/quote, appends a
    fabricated sentence, or empties it, recording every planted hallucination and verdict.

    Example: `tribunal synth runs/synth -n 2000` then
    `tribunal sweep examples/sample -s runs/synth/manifest.jsonl ...`

    `--profile lab` instead writes a whole benchmark at the published protocol's size (44-90
    criteria, 5-15 docx/pdf/xlsx/eml sources of 20k-150k tokens, 1-5k-word memos) with its
    submissions and ground truth: `tribunal synth runs/lab --profile lab --tasks 8` then
    `tribunal sweep runs/lab -s runs/lab/submissions ...`
    """
    if profile not in ("sample", "lab"):
        Console(stderr=True).print(f"[red]error:[/] --profile: {profile!r} is not one of sample, lab")
        raise typer.Exit(2)
    if profile == "lab":
        from evalcore.synth.lab import generate_lab, lab_summary

        lab = generate_lab(out, tasks=tasks, seed=seed)
        Console().print(f"wrote {out}/tasks, {out}/submissions and {out}/ground_truth.json\n{lab_summary(lab)}")
        return
    from evalcore.synth.scale import summary, synthesize

    try:
        gt = synthesize(sample, None, n, out, seed=seed)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    Console().print(f"wrote {out}/manifest.jsonl and {out}/ground_truth.json\n{summary(gt)}", markup=False)


if __name__ == "__main__":
    app()
