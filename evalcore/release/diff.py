"""What changed from one release to the next: systems added or removed, ranks and rates with their
intervals, what the runs were graded with, and the expert decisions added or withdrawn.

Why its own rule: a publisher announces a release by what it moved, and a retired judge's
replacement is judged by the same question (did the new judge move anyone?). Pure: two releases,
their leaderboards and frozen decisions in, a `ReleaseDiff` out (`tribunal release diff` shows
it; the site's system pages show each system's part of it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evalcore.release.model import Release
from evalcore.results.adjudications import Adjudication
from evalcore.results.leaderboard import Leaderboard, SystemScores
from evalcore.results.stats import Interval


class SystemChange(BaseModel):
    """One system from the old release to the new (None: not in that release)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: str
    change: Literal["added", "removed", "kept"]
    rank_before: int | None = None
    rank_after: int | None = None
    rank_interval_before: tuple[int, int] | None = None
    rank_interval_after: tuple[int, int] | None = None
    tier_before: int | None = None
    tier_after: int | None = None
    hc_pass_rate_before: Interval | None = None
    hc_pass_rate_after: Interval | None = None
    rate_change: float | None = Field(default=None, description="After − before, headline rate (None if either is).")
    run_before: str | None = Field(default=None, description="The run it was ranked from in the old release.")
    run_after: str | None = None

    @property
    def moved(self) -> bool:
        """Anything a reader of the leaderboard would see changed."""
        return (self.change != "kept" or self.rank_before != self.rank_after
                or self.rank_interval_before != self.rank_interval_after or self.tier_before != self.tier_after
                or self.hc_pass_rate_before != self.hc_pass_rate_after)


class DecisionChange(BaseModel):
    """An expert decision in force in one release and not the other (no reviewer name, no reason)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    change: Literal["added", "withdrawn"]
    decision_id: str
    kind: str
    system: str
    task_id: str
    item: str = Field(description="The item decided: flag index, criterion, or criterion/judge.")
    decision: str


class ReleaseDiff(BaseModel):
    """`tribunal release diff OLD NEW`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    old: str
    new: str
    old_date: str
    new_date: str
    added: list[str]
    removed: list[str]
    systems: list[SystemChange] = Field(description="Every system of either release, in the new release's order.")
    graded_with: dict[str, tuple[str, str]] = Field(
        default_factory=dict, description="Key -> (old, new) for each thing the runs were graded with that changed "
        "(a retired judge's replacement shows here as `judges`).")
    decisions: list[DecisionChange] = Field(default_factory=list)


def _item(d: Adjudication) -> str:
    if d.kind == "flag":
        return f"flag {d.flag_index}"
    if d.kind == "verdict":
        return f"{d.criterion_id}/{d.judge}"
    return str(d.criterion_id)


def _interval(row: SystemScores | None) -> tuple[int, int] | None:
    if row is None or row.rank_low is None or row.rank_high is None:
        return None
    return (row.rank_low, row.rank_high)


def diff_releases(old: Release, old_board: Leaderboard, old_decisions: Sequence[Adjudication],
                  new: Release, new_board: Leaderboard, new_decisions: Sequence[Adjudication]) -> ReleaseDiff:
    """Every system of either release with its rank, rank interval, tier and headline rate before and
    after; the graded-with keys whose agreed value changed; the decisions in force added or withdrawn."""
    before = {r.system: r for r in old_board.systems}
    after = {r.system: r for r in new_board.systems}
    order = [r.system for r in new_board.systems] + [s for s in (r.system for r in old_board.systems) if s not in after]
    systems = []
    for s in order:
        b, a = before.get(s), after.get(s)
        rate_b = b.hc_pass_rate.value if b else None
        rate_a = a.hc_pass_rate.value if a else None
        systems.append(SystemChange(
            system=s, change="added" if b is None else "removed" if a is None else "kept",
            rank_before=b.rank if b else None, rank_after=a.rank if a else None,
            rank_interval_before=_interval(b), rank_interval_after=_interval(a),
            tier_before=b.tier if b else None, tier_after=a.tier if a else None,
            hc_pass_rate_before=b.hc_pass_rate if b else None, hc_pass_rate_after=a.hc_pass_rate if a else None,
            rate_change=None if rate_a is None or rate_b is None else rate_a - rate_b,
            run_before=old.systems.get(s), run_after=new.systems.get(s),
        ))
    graded_with = {k: (old.facts[k], new.facts[k]) for k in new.facts
                   if k in old.facts and old.facts[k] != new.facts[k]}
    old_ids = {d.decision_id: d for d in old_decisions}
    new_ids = {d.decision_id: d for d in new_decisions}
    sides: tuple[tuple[Literal["added", "withdrawn"], dict[str, Adjudication], dict[str, Adjudication]], ...] = (
        ("added", new_ids, old_ids), ("withdrawn", old_ids, new_ids))
    decisions = [
        DecisionChange(change=change, decision_id=d.decision_id, kind=d.kind, system=d.system, task_id=d.task_id,
                       item=_item(d), decision=d.decision if d.decision != "materiality" else f"{d.materiality}")
        for change, pool, other in sides
        for i, d in sorted(pool.items()) if i not in other
    ]
    return ReleaseDiff(
        old=old.name, new=new.name, old_date=old.date, new_date=new.date,
        added=sorted(set(after) - set(before)), removed=sorted(set(before) - set(after)),
        systems=systems, graded_with=graded_with, decisions=decisions,
    )
