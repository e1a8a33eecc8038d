"""What a release may show the public: the aggregates (the downloads' model, with its JSON Schema) and
the one rule deciding which task's text may appear at all (`is_public`).

Why a model of its own and not the leaderboard's: leaderboard.json is internal — its notes and
adjudication summary name files, runs' locations and every rescored submission — and a private
benchmark must not leak through its own leaderboard (HELM redacts judge explanations for this).
`PublicRelease` holds only figures and names: systems, practice areas, models, counts, rates with
their intervals; no task, source or deliverable text, no judge reasoning, evidence, reviewer name
or reason. Its JSON Schema (pydantic) is published next to it, and the flat rows (`flat_rows`) are
the CSV and Parquet downloads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalcore.release.compatibility import Difference
from evalcore.release.model import PublishSettings, Release, SystemFacts
from evalcore.results.adjudications import Adjudication
from evalcore.results.leaderboard import ALL_AREAS, Leaderboard, SystemScores
from evalcore.results.stats import Interval

SCHEMA_VERSION: Final = 1
RATES: Final = ("hc_pass_rate", "all_pass_rate", "criterion_pass_rate", "near_pass_1", "near_pass_2",
                "material_per_task", "minor_per_task", "lost_to_gate")


def is_public(task_id: str, settings: PublishSettings) -> bool:
    """Whether a task's text (and its submissions' deliverables, reasoning, evidence and reviewer
    reasons) may reach the site: only when the publisher listed it. The one place this is decided."""
    return task_id in settings.public_tasks


class _Public(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PublicRow(_Public):
    """One system over the whole benchmark (`area` = ALL) or one practice area."""

    system: str
    family: str | None
    area: str = Field(description=f"A practice area, or {ALL_AREAS} for the whole benchmark.")
    rank: int | None = Field(description="Competition rank by the headline rate (1 = best).")
    rank_low: int | None = Field(description="Best rank the data allow (paired bootstrap).")
    rank_high: int | None = Field(description="Worst rank the data allow.")
    tier: int | None = Field(description="Systems in one tier cannot be told apart from its leader.")
    n_tasks: int
    scored: int
    missing: int
    incomplete: int
    too_long: int
    hc_pass_rate: Interval = Field(description="Headline: mean hallucination-controlled score, 95% interval.")
    all_pass_rate: Interval
    criterion_pass_rate: Interval
    near_pass_1: Interval
    near_pass_2: Interval
    audited: int
    material_per_task: Interval
    minor_per_task: Interval
    lost_to_gate: Interval
    cost_usd: float = Field(description="USD paid to grade this system (whole benchmark or area).")


class PublicSystem(_Public):
    """A system's figures beyond its rows: cost and latency per task, hallucinations by category."""

    system: str
    graded: int
    cost_per_task_usd: float | None
    latency_per_task_s: float | None = Field(description="Mean summed latency of a task's judge calls (s).")
    latency_p90_s: float | None
    hallucinations: dict[str, dict[str, int]] = Field(description="category -> {material, minor}: confirmed flags.")


class PublicModel(_Public):
    role: Literal["judge", "auditor"]
    name: str
    family: str | None
    model: str
    effort: str | None


class PublicRun(_Public):
    run_id: str
    created_at: float
    systems: list[str]


class PublicPredecessor(_Public):
    release: str
    date: str


class PublicReview(_Public):
    """What experts decided, by count (reviewers named only when the release says so)."""

    decisions: int = Field(description="Expert decisions in force (each an expert label).")
    by_kind: dict[str, int]
    by_system: dict[str, int]
    reviewers: int = Field(description="How many people decided.")
    reviewer_names: list[str] | None = Field(description="Only when the release names reviewers.")


class PublicRelease(_Public):
    """The public aggregates of one release: `leaderboard.json` of the site (schema alongside)."""

    schema_version: Literal[1] = SCHEMA_VERSION
    release: str
    date: str
    created_at: float
    predecessors: list[PublicPredecessor] = Field(description="Earlier releases, newest first.")
    benchmark_name: str | None
    benchmark_version: str | None
    benchmark_hash: str
    n_tasks: int
    areas: list[str]
    protocol_version: str
    models: list[PublicModel]
    prompt_hashes: str = Field(description="The prompt templates' hashes, as the runs recorded them.")
    confidence: float
    ci_method: str
    seed: int
    bootstrap_samples: int
    systems: list[PublicRow] = Field(description="Whole benchmark, by rank.")
    by_area: list[PublicRow]
    details: list[PublicSystem]
    review: PublicReview
    accepted_differences: list[Difference] = Field(description="What the runs did not agree on, accepted by the publisher.")
    runs: list[PublicRun]
    public_tasks: list[str]


def _row(r: SystemScores) -> PublicRow:
    return PublicRow(**r.model_dump(include=set(PublicRow.model_fields)))


def public_release(release: Release, board: Leaderboard, decisions: Sequence[Adjudication],
                   facts: Mapping[str, SystemFacts], predecessors: Sequence[Release]) -> PublicRelease:
    """The public aggregates of `release` (`predecessors`: earlier releases, newest first)."""
    by_system = board.auditor.confirmed_by_system
    kinds: dict[str, int] = {}
    systems: dict[str, int] = {}
    for d in decisions:
        kinds[d.kind] = kinds.get(d.kind, 0) + 1
        systems[d.system] = systems.get(d.system, 0) + 1
    reviewers = sorted({d.reviewer for d in decisions})
    models = [PublicModel(role="judge", **j.model_dump()) for j in release.judges]
    models.append(PublicModel(role="auditor", **release.auditor.model_dump()))
    return PublicRelease(
        release=release.name, date=release.date, created_at=release.created_at,
        predecessors=[PublicPredecessor(release=p.name, date=p.date) for p in predecessors],
        benchmark_name=release.benchmark_name, benchmark_version=release.benchmark_version,
        benchmark_hash=release.benchmark_hash, n_tasks=board.n_tasks, areas=board.areas,
        protocol_version=release.protocol_version, models=models, prompt_hashes=release.facts.get("prompt_hashes", ""),
        confidence=board.confidence, ci_method=board.ci_method, seed=board.seed, bootstrap_samples=board.bootstrap_samples,
        systems=[_row(r) for r in board.systems], by_area=[_row(r) for r in board.by_area],
        details=[PublicSystem(system=r.system, graded=facts[r.system].graded if r.system in facts else 0,
                              cost_per_task_usd=facts[r.system].cost_per_task_usd if r.system in facts else None,
                              latency_per_task_s=facts[r.system].latency_per_task_s if r.system in facts else None,
                              latency_p90_s=facts[r.system].latency_p90_s if r.system in facts else None,
                              hallucinations=by_system.get(r.system, {}))
                 for r in board.systems],
        review=PublicReview(decisions=len(decisions), by_kind=kinds, by_system=systems, reviewers=len(reviewers),
                            reviewer_names=reviewers if release.settings.show_reviewers else None),
        accepted_differences=release.allowed,
        runs=[PublicRun(run_id=r.run_id, created_at=r.created_at, systems=r.systems) for r in release.runs],
        public_tasks=sorted(release.settings.public_tasks),
    )


def flat_rows(rows: Sequence[PublicRow]) -> list[dict[str, Any]]:
    """The rows as flat records (the CSV and Parquet downloads): each rate as `<rate>`, `_low`,
    `_high`, `_n` (the names of the leaderboard's Parquet files)."""
    out = []
    for r in rows:
        rec: dict[str, Any] = r.model_dump(exclude=set(RATES))
        for name in RATES:
            rec.update(getattr(r, name).columns(name))
        out.append(rec)
    return out


def download_schema() -> dict[str, Any]:
    """The JSON Schema of the JSON download (draft 2020-12, as pydantic generates it)."""
    schema = PublicRelease.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
