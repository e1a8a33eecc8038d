"""What the sweep driver shows and how it listens: the live progress view, the per-shard lines,
the Ctrl-C handling (`Interrupt`).

Kept out of the driver so `run_sweep` reads as its steps; the summary a finished sweep prints is
the CLI's (`jobs.commands`), from the `SweepSummary` the driver returns.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


def print_warnings(console: Console, warnings: Iterable[object]) -> None:
    """The benchmark's warnings, one line each, before anything is graded."""
    for warning in warnings:
        console.print(Text.assemble(("warning: ", "yellow"), str(warning)))


def print_failed_shard(console: Console, submission_ids: Sequence[str], exc: BaseException) -> None:
    """A shard that failed after its retries: which submissions, and that the next run retries them."""
    console.print(Text.assemble(
        ("shard failed", "red"), f" ({', '.join(submission_ids)}): {type(exc).__name__}; "
        "its submissions stay pending and are retried by the next run",
    ))


def print_cancelled(console: Console, cancelled: int) -> None:
    """After the second Ctrl-C: how many shards were cancelled, and how to finish them."""
    console.print(
        f"[yellow]cancelled {cancelled} shard(s) in flight; "
        "their submissions are graded by the next run (run the same command again)[/]"
    )


class SweepProgress:
    """Live view: submissions done/total, calls/s and 429s per vendor, cost so far, ETA."""

    def __init__(self, console: Console, enabled: bool, total: int | None) -> None:
        self.enabled = enabled
        self.console = console
        self.progress = Progress(
            TextColumn("[bold]grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[detail]}"),
            console=console,
            transient=False,
            disable=not enabled,
        )
        self.task = self.progress.add_task("grading", total=total, detail="")
        self.last: dict[str, tuple[float, float]] = {}
        self.rates: dict[str, float] = {}
        """Calls per second per vendor at the last update, as shown (the driver's Ray metrics: `jobs.metrics`)."""
        self.cost_text: Callable[[float], str] = lambda cost: f"${cost:,.2f}"

    def __enter__(self) -> SweepProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def update(self, done: int, stats: dict[str, dict[str, float]], cost: float) -> None:
        parts = []
        now = time.time()
        for name, s in stats.items():
            calls = s.get("paid_calls", 0) + s.get("reused_calls", 0) + s.get("failed_calls", 0)
            prev_t, prev_c = self.last.get(name, (now, calls))
            rate = (calls - prev_c) / (now - prev_t) if now > prev_t else 0.0
            self.last[name] = (now, calls)
            self.rates[name] = rate
            if "batch_batches_submitted" in s:  # batch mode: batches sent and still awaited
                parts.append(f"{name} batches={int(s['batch_batches_submitted'])} "
                             f"open={int(s.get('batch_watching', 0))} queued={int(s.get('batch_queued', 0))}")
                continue
            # the in-flight cap, not the rate budget, holds calls back (evalcore.vendors.in_flight)
            bound = f" cap-bound {int(s.get('in_flight', 0))}/{int(s.get('in_flight_cap', 0))}" if s.get("cap_bound") else ""
            parts.append(f"{name} {rate:,.0f}/s 429s={int(s.get('rate_limited', 0))}{bound}")
        self.progress.update(self.task, completed=done, detail=f"{self.cost_text(cost)} | " + " | ".join(parts))


class Interrupt:
    """Ctrl-C as a context manager: while active, SIGINT asks the sweep to stop instead of killing it.

    The first Ctrl-C sets `requested`: no new shard is submitted and the ones in flight are
    flushed (their rows written), so nothing paid is lost. The previous handler is restored on
    exit. To react to further presses (e.g. cancel the shards in flight), override `on_interrupt`,
    which receives how many times Ctrl-C was pressed.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.presses = 0
        self._previous: Any = None

    @property
    def requested(self) -> bool:
        """Ctrl-C was pressed at least once."""
        return self.presses > 0

    @property
    def cancelled(self) -> bool:
        """Ctrl-C was pressed again: the shards in flight are cancelled, not flushed."""
        return self.presses > 1

    def on_interrupt(self, presses: int) -> None:
        """What a press does (called from the signal handler, in the driver's main thread).

        First press: finish the shards in flight (nothing paid is lost). Second press: raise
        KeyboardInterrupt wherever the driver is waiting (a shard, the preflight, a listing), so it
        stops within a second; `run_sweep` then cancels the shards in flight, whose submissions
        have no rows yet and are graded by the next run.
        """
        if presses == 1:
            self.console.print(
                "[yellow]Ctrl-C: no new shards; flushing the ones in flight... "
                "(press Ctrl-C again to cancel them now: their submissions are graded by the next run)[/]"
            )
        else:
            self.console.print("[yellow]Ctrl-C again: cancelling the shards in flight...[/]")
            raise KeyboardInterrupt

    def _handle(self, signum: int, frame: object) -> None:
        self.presses += 1
        self.on_interrupt(self.presses)

    def __enter__(self) -> Interrupt:
        self._previous = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._previous)
