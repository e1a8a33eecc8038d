"""The sweep's progress reads whole at 80 columns and in a log: the count N/T, the ETA and the cost
are never cut (the per-vendor rates are shortened or dropped first), and without a terminal the
progress is printed as plain lines as the sweep advances, not only once at the end (issue 43)."""

from __future__ import annotations

import io
import re

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from jobs.display.progress import SweepProgress, fit_line

COST = "$7.84 of ~$10.91 (cap $20.00)"
STATS = {
    "openai": {"paid_calls": 100.0, "rate_limited": 3.0},
    "xai": {"paid_calls": 50.0},
    "anthropic": {"paid_calls": 70.0, "cap_bound": 1.0, "in_flight": 8.0, "in_flight_cap": 8.0},
}


class Clock:
    """A clock the test moves (no sleeps)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _sweep(console: Console, clock: Clock, total: int = 32, step_s: float = 20.0) -> None:
    progress = SweepProgress(console, True, total, clock=clock)
    progress.cost_text = lambda cost: COST
    with progress:
        for done in range(0, total + 1, 4):
            clock.now += step_s
            progress.update(done, STATS, 7.84)


def test_progress_at_80_columns_keeps_the_count_eta_and_cost_whole() -> None:
    console = Console(record=True, width=80, force_terminal=True, file=io.StringIO())
    _sweep(console, Clock())
    text = console.export_text()
    assert "…" not in text, text
    assert "grading 32/32" in text and "ETA 0:00:00" in text and COST in text, text


def test_progress_line_fits_80_columns_with_count_and_eta_midway() -> None:
    clock = Clock()
    progress = SweepProgress(Console(width=80, file=io.StringIO()), True, 32, clock=clock)
    progress.cost_text = lambda cost: "$7.84 of ~$10.91"
    assert progress.line(80).startswith("grading 0/32")  # labelled before anything finished
    progress.update(0, STATS, 7.84)
    clock.now += 60
    progress.update(12, STATS, 7.84)
    line = progress.line(80)
    assert len(line) <= 80 and "grading 12/32" in line and "ETA 0:01:40" in line and "$7.84 of ~$10.91" in line, line
    assert "429s" not in line  # the per-vendor rates give way first
    assert "openai 0/s xai 0/s anthropic 0/s" in progress.line(120)  # shortened where they fit so
    assert "openai 0/s 429s=3 xai 0/s 429s=0 anthropic 0/s 429s=0 cap-bound 8/8" in progress.line(200)  # whole


def test_piped_progress_prints_periodic_plain_lines_with_count_eta_and_cost() -> None:
    console = Console(record=True, file=io.StringIO())  # no terminal: a log
    assert not console.is_terminal
    _sweep(console, Clock(), step_s=20.0)  # 8 updates over 160 s: a line at most every 30 s
    lines = [line for line in console.export_text().splitlines() if line.startswith("grading ")]
    assert len(lines) >= 4, lines
    assert lines[0].startswith("grading 0/32 | ETA ? | ")  # the start, before any pace is known
    counts = [int(m.group(1)) for line in lines[1:] if (m := re.match(r"grading (\d+)/32 \| ETA \d+:\d\d:\d\d \| ", line))]
    assert len(counts) == len(lines) - 1, lines
    assert counts == sorted(counts) and counts[-1] == 32 and len(set(counts)) == len(counts), lines
    assert all(COST in line for line in lines), lines


@given(width=st.integers(min_value=20, max_value=220), done=st.integers(min_value=0, max_value=10**6),
       extra=st.lists(st.text(alphabet="abcxyz 0123456789/=$.", min_size=1, max_size=60), max_size=5))
def test_fit_line_never_cuts_an_essential_and_keeps_to_the_width_when_they_fit(
    width: int, done: int, extra: list[str]
) -> None:
    essentials = [f"grading {done:,}/{10**6:,}", "ETA 1:23:45", "$1,234.56 of ~$9,999.99"]
    line = fit_line(width, essentials=essentials, optional=[[e, e[:5]] for e in extra], bar=done / 10**6)
    for part in essentials:
        assert part in line
    if len(" | ".join(essentials)) <= width:
        assert len(line) <= width, line
