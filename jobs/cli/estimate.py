"""`tribunal estimate`: what a sweep will cost before it starts, and how the estimate is shown."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from evalcore.errors import TribunalError
from jobs.cli.common import S3_HELP, ConfigOpt, FormatOpt, output_format, print_error, use_endpoint
from jobs.display.estimate import estimate_json, render_estimate
from jobs.display.tables import TableFormat

if TYPE_CHECKING:
    pass


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
    json_out: Annotated[bool, typer.Option("--json", help="Print the estimate as JSON (= --format json).")] = False,
    fmt: FormatOpt = TableFormat.TABLE,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
) -> None:
    """What a sweep will cost before it starts: every request built as the sweep builds it, not sent.

    Counts calls and input tokens per vendor, the share of input tokens the vendors' caches will
    serve (their caching rules replayed in the sweep's order, with cache warming as configured),
    prices them per pricing mode, and prints the lower bound on wall time set by the configured
    rate limits. Output sizes and the audited share are assumptions (printed); `--calibrate RUN`
    measures them on an earlier run. `--batch` (or batch.enabled in the configuration) prices what
    `tribunal sweep --batch` would run: batch prices, the cache hits expected inside a batch with the
    cold bound beside, and the wall time from the batches' 24 h completion window.

    Example:

        tribunal estimate runs/lab -s runs/lab/submissions --calibrate runs/pilot/run-1a2b
    """
    import json

    from evalcore.benchmark.loader import load_benchmark
    from evalcore.config.models import VendorMode
    from evalcore.cost.estimate import OutputModel
    from evalcore.cost.estimate import estimate as build_estimate
    from evalcore.schema import Submission
    from evalcore.submissions.loader import iter_submissions
    from jobs.sweep.governance import governed_command_caches
    from jobs.sweep.prepare import run_config

    use_endpoint(endpoint_url)
    fmt = output_format(fmt, json_out)
    console = Console(stderr=True)
    try:
        cfg, _ = run_config(config, VendorMode.REAL, batch=True if batch else None)
        model = OutputModel.from_run(calibrate) if calibrate else OutputModel()
        if audited_share is not None:
            model.audited_share = audited_share
        # the sweep's own loading path and input limits: the estimate prices what a sweep would grade;
        # converted text where data_governance says (never ~/.cache under the private preset)
        with governed_command_caches(cfg):
            bench = load_benchmark(benchmark, limits=cfg.input_limits)
        tasks = bench.task_map()
        if not tasks:
            raise TribunalError(f"{benchmark}: no loadable tasks ({len(bench.problems)} problem(s)); "
                                "`tribunal validate` lists them")
        left_out = [str(p) for p in bench.problems]

        def accepted() -> Iterator[Submission]:
            for item in iter_submissions(submissions, tasks, excluded=bench.excluded_task_ids(),
                                         limits=cfg.input_limits):
                if isinstance(item, Submission):
                    yield item
                else:
                    left_out.append(str(item))

        with governed_command_caches(cfg):  # deliverables converted as the benchmark's documents
            est = build_estimate(tasks, accepted(), cfg, model, fast=fast)
    except TribunalError as exc:
        print_error(exc, console)
        raise typer.Exit(1) from exc
    if left_out:  # never priced silently short: say what the estimate (and a sweep) leaves out
        console.print(Text(f"left out of the estimate (a sweep would leave them out too): {len(left_out)} input(s)",
                           style="yellow"))
        for line in left_out[:20]:
            console.print(Text(f"  {line}"), soft_wrap=True)  # a path is never broken across lines
        if len(left_out) > 20:
            console.print(Text(f"  ... and {len(left_out) - 20} more (`tribunal validate` lists them all)"))
    if fmt is TableFormat.JSON:
        print(json.dumps(estimate_json(est), indent=1))
    else:
        render_estimate(est, Console(), fmt)


