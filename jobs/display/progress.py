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

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.text import Text

from evalcore.storage.run import open_run
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


def _clock_text(seconds: float | None) -> str:
    """h:mm:ss, or "?" while it cannot be known (nothing finished yet)."""
    if seconds is None:
        return "?"
    seconds = max(int(round(seconds)), 0)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def fit_line(
    width: int, *, essentials: Sequence[str], optional: Sequence[Sequence[str]] = (), bar: float | None = None
) -> str:
    """One progress line within `width` columns, nothing cut.

    `essentials` (what the line is for: the phase with its count N/T, the ETA, the cost) are always
    there, whole, even past `width`. Then each of `optional`, most important first, in the first of
    its forms that still fits (a long form, then shorter ones: the per-vendor rates in full, then
    only the rates), else left out. The bar (`bar`: the share done) takes what room is left, after
    the count, when at least `MIN_BAR` columns are. Why not rich's columns: at 100 columns they cut
    the line to ``gra… $7.84 of ~$10.91 | openai 0/s …``, losing the count and the ETA.
    """
    parts = list(essentials)

    def length(items: Sequence[str]) -> int:
        return cell_len(SEPARATOR.join(items))

    for forms in optional:
        fitting = next((f for f in forms if f and length([*parts, f]) <= width), None)
        if fitting is not None:
            parts.append(fitting)
    room = width - length(parts) - 1
    if bar is not None and room >= MIN_BAR:
        n = min(room, MAX_BAR)
        filled = int(round(max(0.0, min(bar, 1.0)) * n))
        head, *rest = parts
        return SEPARATOR.join([f"{head} {'━' * filled}{'╌' * (n - filled)}", *rest])
    return SEPARATOR.join(parts)


SEPARATOR = " | "
MIN_BAR = 10
MAX_BAR = 30

LOG_EVERY_S = 30.0
"""Without a terminal (a log, a pipe, a CI job), one plain progress line at most this often."""


class SweepProgress:
    """Progress while the sweep runs: submissions done of the total, the ETA, the cost so far, then
    (room allowing) what the summary adds, the time elapsed, calls/s and 429s per vendor.

    In a terminal: one live line that fits the console's width (`fit_line`: the count, the ETA and
    the cost are never cut; the vendors' rates are shortened or left out first). Without a
    terminal (a log): a plain line when the count first moves and then at most every
    `log_every` seconds, and the last one when the sweep ends, so a log shows the sweep advancing
    (rich's live view printed only one final, cut line there).

    `phase` names what is counted: "grading", or "submitting batches" for a `--detach` pass,
    whose submissions mostly end waiting on their batches (shown as `awaiting batches`, never as
    graded). In batch mode the cost shown is what this command paid (`SweepSummary.cost_usd`, from
    the rows of finished shards), and what it collected from batches an earlier command paid for
    is shown apart: the actors' live figure counts collected results as paid.
    """

    def __init__(self, console: Console, enabled: bool, total: int | None, phase: str = "grading", *,
                 clock: Callable[[], float] = time.monotonic, log_every: float = LOG_EVERY_S) -> None:
        self.enabled = enabled
        self.console = console
        self.phase = phase
        self.total = total
        self.clock = clock
        self.log_every = log_every
        self.live_view = enabled and console.is_terminal and not console.is_dumb_terminal
        self.started = clock()
        self.done = 0
        self.first_done: tuple[float, int] | None = None
        """When and at what count the first update came: the ETA's rate is measured from it."""
        self.head: list[str] = []
        self.vendors_full: list[str] = []
        self.vendors_short: list[str] = []
        self.logged: tuple[float, int] | None = None
        """When and at what count the last plain line was printed (no terminal)."""
        self._live: Live | None = None
        self.last: dict[str, tuple[float, float]] = {}
        self.rates: dict[str, float] = {}
        """Calls per second per vendor at the last update, as shown (the driver's Ray metrics: `jobs.sweep.metrics`)."""
        self.cost_text: Callable[[float], str] = lambda cost: f"${cost:,.2f}"

    def __enter__(self) -> SweepProgress:
        if self.live_view:
            self._live = Live(_LiveLine(self), console=self.console, refresh_per_second=2, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)
            self._live = None
        elif self.enabled and self.first_done is not None and (self.logged is None or self.logged[1] != self.done):
            self._log()  # the last count, in the log too

    def eta_seconds(self) -> float | None:
        """Seconds left at the pace since the first update; None until that pace is known (0 when done)."""
        if self.total is None:
            return None
        if self.done >= self.total:
            return 0.0
        if self.first_done is None:
            return None
        t0, d0 = self.first_done
        moved, spent = self.done - d0, self.clock() - t0
        if moved <= 0 or spent <= 0:
            return None
        return (self.total - self.done) * spent / moved

    def line(self, width: int | None = None) -> str:
        """The progress as one line: fitted to `width` columns (the live view), or whole (a log)."""
        total = "?" if self.total is None else f"{self.total:,}"
        essentials = [f"{self.phase} {self.done:,}/{total}", f"ETA {_clock_text(self.eta_seconds())}",
                      *self.head[:1]]
        optional: list[list[str]] = [[h] for h in self.head[1:]]
        optional.append([f"elapsed {_clock_text(self.clock() - self.started)}"])
        optional.append([" ".join(self.vendors_full), " ".join(self.vendors_short)])
        if width is None:
            return SEPARATOR.join([*essentials, *(o[0] for o in optional if o[0])])
        share = self.done / self.total if self.total else None
        return fit_line(width, essentials=essentials, optional=optional, bar=share)

    def _log(self) -> None:
        self.logged = (self.clock(), self.done)
        self.console.print(self.line(), markup=False, highlight=False, soft_wrap=True)

    def update(
        self, done: int, stats: dict[str, dict[str, float]], cost: float, summary: SweepSummary | None = None
    ) -> None:
        """`done` of the total, the cost (`cost`: the actors' live figure) and each vendor's rate; with
        the sweep's `summary`, the bar counts submissions left waiting on batches too, and in batch
        mode the cost is what this command paid, with what it collected and what waits beside it."""
        self.head = self._head(stats, cost, summary)
        self.done = summary.handled if summary is not None else done
        now = time.time()
        self.vendors_full, self.vendors_short = [], []
        for name, s in stats.items():
            calls = s.get("paid_calls", 0) + s.get("reused_calls", 0) + s.get("failed_calls", 0)
            prev_t, prev_c = self.last.get(name, (now, calls))
            rate = (calls - prev_c) / (now - prev_t) if now > prev_t else 0.0
            self.last[name] = (now, calls)
            self.rates[name] = rate
            if "batch_batches_submitted" in s:  # batch mode: batches sent by this command, and still awaited
                self.vendors_full.append(f"{name} batches={int(s['batch_batches_submitted'])} "
                                         f"requests={int(s.get('batch_requests_submitted', 0))} "
                                         f"open={int(s.get('batch_watching', 0))} queued={int(s.get('batch_queued', 0))}")
                self.vendors_short.append(f"{name} open={int(s.get('batch_watching', 0))}")
                continue
            # the in-flight cap, not the rate budget, holds calls back (evalcore.vendors.in_flight)
            bound = f" cap-bound {int(s.get('in_flight', 0))}/{int(s.get('in_flight_cap', 0))}" if s.get("cap_bound") else ""
            self.vendors_full.append(f"{name} {rate:,.0f}/s 429s={int(s.get('rate_limited', 0))}{bound}")
            self.vendors_short.append(f"{name} {rate:,.0f}/s")
        if self.first_done is None:
            self.first_done = (self.clock(), self.done)
        if self._live is not None:
            self._live.refresh()
        elif self.enabled and (self.logged is None or (self.done != self.logged[1]
                                                       and self.clock() - self.logged[0] >= self.log_every)):
            self._log()

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


class _LiveLine:
    """The live view's renderable: the progress line fitted to the width it is drawn at."""

    def __init__(self, progress: SweepProgress) -> None:
        self.progress = progress

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(self.progress.line(options.max_width), no_wrap=True, overflow="ignore")


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
