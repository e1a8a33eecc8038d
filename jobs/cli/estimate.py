"""`tribunal estimate`: what a sweep will cost before it starts, and how the estimate is shown."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from evalcore.errors import TribunalError
from evalcore.tables import TableFormat
from jobs.cli.common import S3_HELP, ConfigOpt, FormatOpt, output_format, print_error, use_endpoint

if TYPE_CHECKING:
    from evalcore.grading.estimate import Estimate
    from evalcore.tables import Block


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
    measures them on an earlier run. `--batch` (or batch.enabled in the configuration) prices the
    sweep `sweep --batch` would run: batch prices, the cache hits expected inside a batch with the
    cold bound beside, and the wall time from the batches' 24 h completion window.

    Example:

        tribunal estimate runs/lab -s runs/lab/submissions --calibrate runs/pilot/run-1a2b
    """
    import json

    from evalcore.benchmark.loader import load_benchmark
    from evalcore.config.models import VendorMode
    from evalcore.grading.estimate import OutputModel
    from evalcore.grading.estimate import estimate as build_estimate
    from evalcore.schema import Submission
    from evalcore.submissions.loader import iter_submissions
    from jobs.sweep.prepare import run_config

    use_endpoint(endpoint_url)
    fmt = output_format(fmt, json_out)
    console = Console(stderr=True)
    try:
        cfg, _ = run_config(config, VendorMode.REAL, batch=True if batch else None)
        model = OutputModel.from_run(calibrate) if calibrate else OutputModel()
        if audited_share is not None:
            model.audited_share = audited_share
        # the sweep's own loading path and input limits: the estimate prices what a sweep would grade
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


def estimate_json(est: Estimate) -> dict[str, Any]:
    """The estimate as `--json` prints it: the model plus its derived figures."""
    data = est.model_dump(mode="json")
    data.update(cost_usd=est.cost_usd, cost_usd_cold=est.cost_usd_cold, cached_share=est.cached_share,
                min_wall_s=est.min_wall_s, usd_per_submission=est.per_submission())
    if est.batch_wall_time is not None:
        w = est.batch_wall_time
        data["batch_wall_time"].update(rounds=w.rounds, upper_bound_s=w.upper_bound_s, expected_s=w.expected_s)
    return data


def estimate_blocks(est: Estimate) -> list[Block]:
    """The estimate as a table per vendor (and the total), the cost per graded submission, and its
    assumptions. Texts are `evalcore.grading.estimate.render_table`'s, values the estimate's own."""
    from evalcore.grading.estimate import batch_summary, render_table
    from evalcore.tables import Cell, Column, TableSpec

    modes = list(est.cost_usd)
    batch = est.batch_wall_time is not None  # batch mode: each cost with its cold bound, no rate-limit wall time
    cost_columns = [c for m in modes for c in (
        Column(f"USD {m}", "number", (f"usd_{m}",)),
        *([Column(f"USD {m} cold", "number", (f"usd_{m}_cold",))] if batch else []))]
    t = TableSpec(
        [Column("vendor", "id"), Column("model", "id"), Column("calls", "number"),
         Column("input tokens", "number"), Column("cached", "number", ("cached_share",)),
         Column("output tokens", "number"), *cost_columns,
         *([] if batch else [Column("min wall", "number", ("min_wall_s",))])],
        title=f"estimate ({est.pricing}): {est.submissions:,} submissions ({est.too_long} too long), "
              f"cache warming {'on' if est.warm else 'off'}",
    )

    def costs(expected: dict[str, float], cold: dict[str, float]) -> list[float]:
        return [x for m in modes for x in ((expected.get(m, 0.0), cold.get(m, 0.0)) if batch else (expected.get(m, 0.0),))]

    values: list[list[Any]] = [
        [v.vendor, v.model, v.calls, v.input_tokens, v.cached_input_tokens / v.input_tokens if v.input_tokens else 0.0,
         v.output_tokens, *costs(v.cost_usd, v.cost_usd_cold), *([] if batch else [v.min_wall_s])]
        for v in est.vendors
    ]
    values.append(["total", "", sum(v.calls for v in est.vendors), sum(v.input_tokens for v in est.vendors),
                   est.cached_share, sum(v.output_tokens for v in est.vendors), *costs(est.cost_usd, est.cost_usd_cold),
                   *([] if batch else [est.min_wall_s])])
    for texts, row in zip(render_table(est), values, strict=True):
        t.add_row(*(Cell(text, value) for text, value in zip(texts, row, strict=True)))
    a = est.assumptions
    return [
        t,
        *batch_summary(est),
        "USD per graded submission: " + ", ".join(f"{m} ${est.per_submission(m):,.4f}" for m in modes),
        "of which prompt-cache writes (warming): " + ", ".join(f"{m} ${est.cache_write_usd.get(m, 0.0):,.2f}" for m in modes)
        + f" ({round(sum(v.cache_write_tokens for v in est.vendors)):,} input tokens written)",
        f"assumed: audited share {a.audited_share:.2f}, Stage 2 share {a.verify_share:.2f}, output tokens "
        + ("measured in " + a.calibrated_from if a.calibrated_from else "per purpose + reasoning effort (defaults)"),
    ]


def render_estimate(est: Estimate, out: Console, fmt: TableFormat = TableFormat.TABLE) -> None:
    """Print `estimate_blocks` in `fmt`; the table fits the console's width (stacked when narrow)."""
    from evalcore.tables import emit

    emit(out, estimate_blocks(est), fmt)
