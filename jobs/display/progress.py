"""What the sweep driver shows and how it listens: the live progress view, the per-shard lines,
the Ctrl-C handling (`Interrupt`), and what happened to the run's batches (`journal_events`).

Kept out of the driver so `run_sweep` reads as its steps; the summary a finished sweep prints is
the CLI's (`jobs.cli.app`), from the `SweepSummary` the driver returns.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

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

from evalcore.storage.run_folder import open_run
from jobs.sweep.options import root_cause

if TYPE_CHECKING:
    from evalcore.vendors.batch.journal import BatchRecord
    from jobs.sweep.options import SweepSummary


def print_warnings(console: Console, warnings: Iterable[object]) -> None:
    """The benchmark's warnings, one line each, before anything is graded."""
    for warning in warnings:
        console.print(Text.assemble(("warning: ", "yellow"), str(warning)))


JournalSnapshot = dict[tuple[str, str], tuple[str, str]]
"""Per (vendor entry, batch label): (phase, note) of each readable record of a run's batch journal."""


def journal_snapshot(journal: dict[str, list[BatchRecord]]) -> JournalSnapshot:
    """What the run's batch journal said before this command (`evalcore.vendors.batch.journal.read_all`)."""
    return {(vendor, r.label): (r.phase, r.note) for vendor, records in journal.items() for r in records}


def journal_events(before: JournalSnapshot, journal: dict[str, list[BatchRecord]]) -> list[str]:
    """What this command's batch recovery did, one line each, from the journal it leaves.

    Why from the journal: recovery happens inside the vendor actors, whose log is not forwarded to
    the driver (`log_to_driver` is off), so without this the operator would see nothing of a lost
    batch or of a record set aside. Each record whose phase or note changed since `before` (or
    that is new) and says why (`BatchRecord.note`): a lost batch with its reason (its requests were
    sent again), a record that could not be read as ``file: reason`` (set aside, and what became
    of its batch), a batch found again by its label or refused by the vendor's queue limit.
    """
    lines = []
    for vendor, records in sorted(journal.items()):
        for r in records:
            if not r.note or before.get((vendor, r.label)) == (r.phase, r.note):
                continue
            batch = r.batch_id or r.label
            if "set aside as " in r.note:  # the note starts with the unreadable file and why (`Damaged.line`)
                lines.append(f"{vendor}: journal record set aside: {r.note}")
            elif r.phase == "lost":
                lines.append(f"{vendor}: batch {batch} lost: {r.note}")
            else:
                lines.append(f"{vendor}: batch {batch}: {r.note}")
    return lines


def print_journal_events(console: Console, run_uri: str, events: Sequence[str]) -> None:
    """The batch recovery's lines (`journal_events`), verbatim (paths are printed as they are)."""
    if not events:
        return
    console.print(Text.assemble(
        (f"{len(events)} batch journal event(s)", "yellow"),
        f" in this command (from {open_run(run_uri).journal}/; `tribunal status` shows every batch):",
    ), soft_wrap=True)
    for line in events:
        console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)


def print_failed_shard(console: Console, submission_ids: Sequence[str], exc: BaseException) -> None:
    """A shard that failed after its retries: which submissions, the error behind Ray's wrappers
    (its message names the file or the call), and that the next run retries them."""
    cause = root_cause(exc)
    console.print(Text.assemble(
        ("shard failed", "red"), f" ({', '.join(submission_ids)}): {type(cause).__name__}: {cause}; "
        "its submissions stay pending and are retried by the next run",
    ))


def print_cancelled(console: Console, cancelled: int) -> None:
    """After the second Ctrl-C: how many shards were cancelled, and how to finish them."""
    console.print(
        f"[yellow]cancelled {cancelled} shard(s) in flight; "
        "their submissions are graded by the next run (run the same command again)[/]"
    )


class SweepProgress:
    """Live view: submissions done/total, calls/s and 429s per vendor, cost so far, ETA.

    `phase` names what the bar counts: "grading", or "submitting batches" for a `--detach` pass,
    whose submissions mostly end waiting on their batches (shown as `awaiting batches`, never as
    graded). In batch mode the cost shown is what this command paid (`SweepSummary.cost_usd`, from
    the rows of finished shards), and what it collected from batches an earlier command paid for
    is shown apart: the actors' live figure counts collected results as paid.
    """

    def __init__(self, console: Console, enabled: bool, total: int | None, phase: str = "grading") -> None:
        self.enabled = enabled
        self.console = console
        self.phase = phase
        self.progress = Progress(
            TextColumn(f"[bold]{phase}"),
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
        """Calls per second per vendor at the last update, as shown (the driver's Ray metrics: `jobs.sweep.metrics`)."""
        self.cost_text: Callable[[float], str] = lambda cost: f"${cost:,.2f}"

    def __enter__(self) -> SweepProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def update(
        self, done: int, stats: dict[str, dict[str, float]], cost: float, summary: SweepSummary | None = None
    ) -> None:
        """`done` of the total, the cost (`cost`: the actors' live figure) and each vendor's rate; with
        the sweep's `summary`, the bar counts submissions left waiting on batches too, and in batch
        mode the cost is what this command paid, with what it collected and what waits beside it."""
        parts = []
        head = self._head(stats, cost, summary)
        if summary is not None:
            done = summary.handled
        now = time.time()
        for name, s in stats.items():
            calls = s.get("paid_calls", 0) + s.get("reused_calls", 0) + s.get("failed_calls", 0)
            prev_t, prev_c = self.last.get(name, (now, calls))
            rate = (calls - prev_c) / (now - prev_t) if now > prev_t else 0.0
            self.last[name] = (now, calls)
            self.rates[name] = rate
            if "batch_batches_submitted" in s:  # batch mode: batches sent by this command, and still awaited
                parts.append(f"{name} batches={int(s['batch_batches_submitted'])} "
                             f"requests={int(s.get('batch_requests_submitted', 0))} "
                             f"open={int(s.get('batch_watching', 0))} queued={int(s.get('batch_queued', 0))}")
                continue
            # the in-flight cap, not the rate budget, holds calls back (evalcore.vendors.in_flight)
            bound = f" cap-bound {int(s.get('in_flight', 0))}/{int(s.get('in_flight_cap', 0))}" if s.get("cap_bound") else ""
            parts.append(f"{name} {rate:,.0f}/s 429s={int(s.get('rate_limited', 0))}{bound}")
        self.progress.update(self.task, completed=done, detail=" | ".join([*head, *parts]))

    def _head(self, stats: dict[str, dict[str, float]], cost: float, summary: SweepSummary | None) -> list[str]:
        """Cost, then (with the summary) collected, graded and awaiting, each only when it says something."""
        if summary is None:
            return [self.cost_text(cost)]
        batch = any("batch_batches_submitted" in s for s in stats.values())
        head = [("paid " if batch else "") + self.cost_text(summary.cost_usd if batch else cost)]
        if summary.collected_calls:
            head.append(f"collected {summary.collected_calls:,} (${summary.collected_usd:,.2f}, paid before)")
        if summary.awaiting_batches:
            head.append(f"graded {summary.graded:,}, awaiting batches {summary.awaiting_batches:,}")
        return head


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
