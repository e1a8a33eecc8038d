"""An estimate in the terminal (and as JSON): calls, tokens, cached share and USD per vendor, the wall-time bound, the assumptions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console

from jobs.display.tables import TableFormat

if TYPE_CHECKING:
    from evalcore.cost.estimate import Estimate
    from jobs.display.tables import Block


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
    assumptions. Texts are `evalcore.cost.estimate.render_table`'s, values the estimate's own."""
    from evalcore.cost.estimate import batch_summary, render_table
    from jobs.display.tables import Cell, Column, TableSpec

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
    from jobs.display.tables import emit

    emit(out, estimate_blocks(est), fmt)
