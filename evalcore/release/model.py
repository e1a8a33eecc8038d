"""A release: the record of an immutable, dated leaderboard built from one or more runs.

Why a record apart from the leaderboard: a release says what it was made of (which run graded
which system, what the runs agreed on, what the publisher accepted that they did not, which
decisions were in force) and what may be published (`PublishSettings`). The leaderboard itself is
the reduction's (`evalcore.results.leaderboard.Leaderboard`), computed by the same code as a run's
over the union of the runs' rows (`jobs.release.create`).

Pure rules here, each one function: which run a system is ranked from (`assign_systems`), and
where the `latest` pointer may move (`advance_latest`: only forward).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalcore.errors import ReleaseError
from evalcore.release.compatibility import Difference
from evalcore.storage.store import ModelRef

RELEASE_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""A release name is one folder name (no separator, no leading dot or underscore): `2026-12`, `v3.1`."""
RELEASE_VERSION: Final = 1


def check_name(name: str) -> str:
    """`name` if it can name a release folder, else a `ReleaseError` saying what a name may hold."""
    if not RELEASE_NAME.fullmatch(name):
        raise ReleaseError(name, "not a release name: 1-100 letters, digits, '.', '_' or '-', starting with a "
                           "letter or digit (it names the release's folder)")
    return name


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PublishSettings(_Frozen):
    """What the public site may show beyond the aggregates (private by default)."""

    public_tasks: list[str] = Field(
        default_factory=list, description="Task ids whose text, sources, deliverables, judge reasoning, evidence "
        "and reviewer reasons the site may show; every other task's text stays private.")
    show_reviewers: bool = Field(default=False, description="Name the reviewers; by default they are shown by count.")


class ReleaseRun(_Frozen):
    """One run of a release and what it contributes."""

    run_id: str
    uri: str = Field(description="Where the run was read from when the release was made.")
    created_at: float = Field(description="When the run was created (unix s).")
    code_version: str
    systems: list[str] = Field(description="The systems ranked from this run's rows.")
    paid_calls: int = Field(description="Calls of those systems this run paid for (calls table, not reused).")
    paid_usd: float = Field(description="What those calls cost.")
    decisions: int = Field(description="Expert decisions in force on those systems, frozen into the release.")


class Release(_Frozen):
    """release.json: what a release is made of. Written once, never replaced."""

    format_version: Literal[1] = RELEASE_VERSION
    name: str
    created_at: float = Field(description="When the release was made (unix s): its date.")
    predecessor: str | None = Field(default=None, description="The latest release when this one was made.")
    runs: list[ReleaseRun]
    systems: dict[str, str] = Field(description="System -> the run it is ranked from.")
    chosen: dict[str, str] = Field(default_factory=dict, description="Systems graded in several runs, and the run "
                                   "the publisher named for each (--system SYSTEM=RUN).")
    facts: dict[str, str] = Field(description="What the runs agree on (evalcore.release.compatibility.run_facts), "
                                  "the first run's value where a difference was accepted.")
    allowed: list[Difference] = Field(default_factory=list, description="Differences accepted with --allow KEY.")
    benchmark_name: str | None
    benchmark_version: str | None
    benchmark_hash: str
    judges: list[ModelRef]
    auditor: ModelRef
    protocol_version: str
    settings: PublishSettings = Field(default_factory=PublishSettings)

    @property
    def date(self) -> str:
        """The release's date (UTC), as the site and `release list` show it."""
        return dt.datetime.fromtimestamp(self.created_at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")

    def run_of(self, system: str) -> ReleaseRun | None:
        run_id = self.systems.get(system)
        return next((r for r in self.runs if r.run_id == run_id), None)


class SystemFacts(_Frozen):
    """What the site shows of one system beyond its leaderboard row (systems.json of a release)."""

    system: str
    graded: int = Field(description="Current gradings of the system's submissions.")
    paid_calls: int = Field(description="Judge and auditor calls paid for them (not reused).")
    cost_per_task_usd: float | None = Field(description="Mean USD paid per graded task.")
    latency_per_task_s: float | None = Field(
        description="Mean summed latency of a task's paid calls (judge time; calls overlap, so wall time is less).")
    latency_p90_s: float | None = Field(description="90th percentile of the same.")


class LatestPointer(_Frozen):
    """One position of the `latest` pointer: the n-th release it named."""

    seq: int = Field(ge=1, description="1 for the first release named latest, then +1 per move.")
    release: str
    created_at: float = Field(description="The release's own created_at: the pointer never goes to an older one.")


def advance_latest(current: LatestPointer | None, release: Release) -> LatestPointer:
    """The pointer's next position, naming `release` — only forward: a release made before (or at the
    same moment as) the one `latest` names now is refused, so readers of `latest` never go back."""
    if current is None:
        return LatestPointer(seq=1, release=release.name, created_at=release.created_at)
    if release.name == current.release:
        raise ReleaseError(release.name, "is already the latest release")
    if release.created_at <= current.created_at:
        raise ReleaseError(release.name, f"made {release.date}, before the latest release {current.release}: "
                           "latest only moves forward (make a new release from its runs instead)")
    return LatestPointer(seq=current.seq + 1, release=release.name, created_at=release.created_at)


def assign_systems(systems_by_run: Mapping[str, Iterable[str]], named: Mapping[str, str]) -> dict[str, str]:
    """Which run each system is ranked from: the one run that graded it, or the run the publisher
    named (`named`: system -> run id) for a system graded in several. Refused, naming the fix:
    a system in several runs and not named, a named run that did not grade the system, and a run
    left contributing nothing (its place in the release would say it counts when it does not)."""
    graded: dict[str, list[str]] = {}
    for run, systems in systems_by_run.items():
        for system in systems:
            graded.setdefault(system, []).append(run)
    problems: list[str] = []
    for system, run in sorted(named.items()):
        if system not in graded:
            problems.append(f"--system {system}={run}: no run of the release graded {system}")
        elif run not in graded[system]:
            problems.append(f"--system {system}={run}: {run} did not grade {system} (graded by {', '.join(graded[system])})")
    out: dict[str, str] = {}
    for system, runs in sorted(graded.items()):
        if system in named:
            out[system] = named[system]
        elif len(runs) > 1:
            problems.append(f"system {system} is graded in runs {', '.join(sorted(runs))}: name the one to rank "
                            f"with --system {system}=RUN")
        else:
            out[system] = runs[0]
    if not problems:
        idle = sorted(set(systems_by_run) - set(out.values()))
        problems += [f"run {run} contributes no system (each of its systems is ranked from another run): leave it out"
                     for run in idle]
    if problems:
        raise ReleaseError("release", "; ".join(problems))
    return out
