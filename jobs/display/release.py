"""Releases in the terminal: what `release create` made, `release list`, `release diff`."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console

from evalcore.release.diff import ReleaseDiff, SystemChange
from evalcore.release.model import LatestPointer, Release
from evalcore.results.leaderboard import Leaderboard
from evalcore.results.stats import Interval
from jobs.display.leaderboard import leaderboard_blocks
from jobs.display.tables import Block, Cell, Column, TableFormat, TableSpec, emit


def created_blocks(release: Release, uri: str, allowed: Sequence[str], latest: LatestPointer | None,
                   board_blocks: list[Block]) -> list[Block]:
    """The release's runs (what each contributes and paid), the accepted differences, then its leaderboard."""
    runs = TableSpec([Column("run", "id", ("run_id",)), Column("systems", "text"), Column("paid calls", "number", ("paid_calls",)),
                      Column("paid", "number", ("paid_usd",)), Column("decisions", "number", ("decisions",))],
                     title=f"Release {release.name} — {release.date} → {uri}", box=box.SIMPLE_HEAVY, pad_edge=False)
    for r in release.runs:
        runs.add_row(r.run_id, ", ".join(r.systems), Cell(str(r.paid_calls), r.paid_calls),
                     Cell(f"${r.paid_usd:,.2f}", r.paid_usd), Cell(str(r.decisions), r.decisions))
    blocks: list[Block] = [runs]
    blocks += [f"accepted difference (--allow): {line}" for line in allowed]
    blocks.append(f"latest → {latest.release}" if latest else "latest not moved (--no-latest)")
    return blocks + board_blocks


def render_created(release: Release, uri: str, allowed: Sequence[str], latest: LatestPointer | None,
                   board: Leaderboard, console: Console, fmt: TableFormat = TableFormat.TABLE) -> None:
    emit(console, created_blocks(release, uri, allowed, latest, leaderboard_blocks(board)), fmt)


def render_list(releases: Sequence[Release], latest: LatestPointer | None, console: Console,
                fmt: TableFormat = TableFormat.TABLE) -> None:
    """Every release, oldest first: date, runs, systems, the predecessor, which one is `latest`."""
    table = TableSpec([Column("release", "id", ("name",)), Column("date", "text"), Column("latest", "text"),
                       Column("runs", "number", ("runs",)), Column("systems", "number", ("systems",)),
                       Column("benchmark", "text"), Column("predecessor", "text")],
                      title="Releases", box=box.SIMPLE_HEAVY, pad_edge=False)
    for r in releases:
        bench = f"{r.benchmark_name or '?'} {r.benchmark_version or ''}".strip()
        table.add_row(r.name, r.date, "latest" if latest and latest.release == r.name else "",
                      Cell(str(len(r.runs)), len(r.runs)), Cell(str(len(r.systems)), len(r.systems)), bench,
                      r.predecessor or "—")
    emit(console, [table] if releases else ["no release yet"], fmt)


def _rate(iv: Interval | None) -> str:
    return "—" if iv is None else iv.text(ci=" [{low:.0f}–{high:.0f}]")


def _rank(c: SystemChange, after: bool) -> str:
    rank = c.rank_after if after else c.rank_before
    interval = c.rank_interval_after if after else c.rank_interval_before
    tier = c.tier_after if after else c.tier_before
    if rank is None:
        return "—"
    span = "" if interval is None else f" ({interval[0]}–{interval[1]})" if interval[0] != interval[1] else f" ({interval[0]})"
    return f"{rank}{span} t{tier if tier is not None else '—'}"


def diff_blocks(d: ReleaseDiff) -> list[Block]:
    """Systems added or removed, then each system's rank (interval, tier) and rate before → after, then
    what the runs were graded with that changed, then the decisions added or withdrawn."""
    blocks: list[Block] = [f"{d.old} ({d.old_date}) → {d.new} ({d.new_date}): "
                           f"{len(d.added)} system(s) added, {len(d.removed)} removed"]
    table = TableSpec([Column("system", "id"), Column("change", "text"),
                       Column("rank (interval) tier\nbefore", "text", ("rank_before",)),
                       Column("rank (interval) tier\nafter", "text", ("rank_after",)),
                       Column("HC pass [95% CI]\nbefore", "text", ("hc_pass_rate_before",)),
                       Column("HC pass [95% CI]\nafter", "text", ("hc_pass_rate_after",)),
                       Column("Δ rate", "number", ("rate_change",))],
                      title="Systems", box=box.SIMPLE_HEAVY, pad_edge=False)
    for c in d.systems:
        change = c.change if c.change != "kept" else ("moved" if c.moved else "same")
        table.add_row(c.system, change, Cell(_rank(c, False), c.rank_before), Cell(_rank(c, True), c.rank_after),
                      Cell(_rate(c.hc_pass_rate_before), c.hc_pass_rate_before.value if c.hc_pass_rate_before else None),
                      Cell(_rate(c.hc_pass_rate_after), c.hc_pass_rate_after.value if c.hc_pass_rate_after else None),
                      Cell("—" if c.rate_change is None else f"{100 * c.rate_change:+.1f} pts", c.rate_change))
    blocks.append(table)
    if d.graded_with:
        changed = TableSpec([Column("graded with", "id", ("key",)), Column("before", "text"), Column("after", "text")],
                            title="What the runs were graded with that changed", box=box.SIMPLE_HEAVY, pad_edge=False)
        for key, (old, new) in d.graded_with.items():
            changed.add_row(key, old, new)
        blocks.append(changed)
    if d.decisions:
        dec = TableSpec([Column("decision", "text", ("change",)), Column("kind", "text"), Column("system", "id"),
                         Column("task", "text", ("task_id",)), Column("item", "text"), Column("outcome", "text", ("decision",))],
                        title="Expert decisions in force", box=box.SIMPLE_HEAVY, pad_edge=False)
        for x in d.decisions:
            dec.add_row(x.change, x.kind, x.system, x.task_id, x.item, x.decision)
        blocks.append(dec)
    else:
        blocks.append("no expert decision added or withdrawn")
    return blocks


def render_diff(d: ReleaseDiff, console: Console, fmt: TableFormat = TableFormat.TABLE) -> None:
    if fmt is TableFormat.JSON:
        console.print_json(d.model_dump_json())
        return
    emit(console, diff_blocks(d), fmt)
