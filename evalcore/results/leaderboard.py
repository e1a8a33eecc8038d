"""The leaderboard model: the pydantic rows and summary a reduction produces (leaderboard.json) and
their flat Parquet form (leaderboard.parquet, leaderboard_areas.parquet).

Both forms are public: field names, their order and the flat column names are the schema readers
rely on. `evalcore.results.reduce` fills the model; report, compare and calibrate read it. Every
rate is a `stats.Interval` (value, low, high, n).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, Field

from evalcore.results import stats
from evalcore.results.adjudications import Rescored
from evalcore.results.corrected import CorrectedRates
from evalcore.results.stats import Interval

ALL_AREAS = "ALL"
"""The `area` value of a system's whole-benchmark row."""

CI_METHOD = (
    "95% percentile bootstrap over each system's scored tasks (one paired resample for all its "
    "rates; per-audited-task and lost-to-gate rates are ratios within the same resamples), seeded "
    "from the run's seed and the system/area names; self-family preference: bootstrap over "
    "submissions (each submission's criteria resampled together)")


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


class VendorCost(BaseModel):
    """What one vendor's calls cost (only calls paid in this run; reused calls are counted apart)."""

    vendor: str
    calls: int = 0
    reused_calls: int = Field(default=0, description="Calls served from an earlier run: cost 0 here.")
    cost_usd: float = 0.0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_tokens: int = Field(default=0, description="Input tokens written to the vendor's prompt cache.")
    cache_write_usd: float = Field(
        default=0.0, description="The part of cost_usd paid for those writes (Anthropic: 1.25x input; the calls "
        "table's cache_write_usd): what warming the cache cost beyond reading it.",
    )


class PurposeCost(VendorCost):
    """One vendor's calls of one purpose (rubric, detect, verify, preflight), for the report's itemised bill."""

    purpose: str


class SystemScores(BaseModel):
    """One evaluated system's row, over the whole benchmark (`area` = ALL) or one practice area."""

    rank: int | None = Field(description="Competition rank by the headline rate (1 = best); None if unscored.")
    rank_low: int | None = Field(
        default=None, description="Best rank the data allow: 1 + systems separably better (evalcore.results.ranking)."
    )
    rank_high: int | None = Field(
        default=None, description="Worst rank the data allow: systems in the area − those this one is separably better than."
    )
    tier: int | None = Field(
        default=None, description="Tier (1 = top): systems in one tier cannot be told apart from its leader."
    )
    system: str
    family: str | None = Field(description="Model family from the run's family_map (None if unmapped).")
    area: str
    n_tasks: int = Field(description="Benchmark tasks in scope.")
    scored: int = Field(description="Tasks with a complete submission (the scored population).")
    missing: int = Field(description="Benchmark tasks with no submission in the run.")
    incomplete: int = Field(description="Current gradings marked incomplete (a judge abstained).")
    too_long: int = Field(description="Submissions over the prompt budget.")
    rejected: int = Field(description="Submission files the loader refused (their tasks count as missing).")
    hc_pass_rate: Interval = Field(description="Headline: mean hallucination-controlled score.")
    all_pass_rate: Interval = Field(description="Mean task score before the hallucination gate.")
    criterion_pass_rate: Interval
    near_pass_1: Interval
    near_pass_2: Interval
    audited: int = Field(description="Scored tasks that went through the hallucination audit.")
    material_per_task: Interval = Field(description="Confirmed material hallucinations per audited task.")
    minor_per_task: Interval = Field(description="Confirmed minor hallucinations per audited task.")
    passing: int = Field(description="Scored tasks with task score > 0.")
    gated: int = Field(description="Passing tasks zeroed by the gate.")
    lost_to_gate: Interval = Field(description="Share of passing tasks lost to the gate.")
    cost_usd: float = 0.0
    tokens: int = Field(default=0, description="Input + output tokens paid in this run.")
    cost_by_vendor: list[VendorCost] = Field(default_factory=list)
    repeated_tasks: int = Field(
        default=0, description="Scored tasks with repeats (`tribunal retest`): their judge noise is in the "
        "two-level interval, rank interval and tier (0: none; those are then the task-only ones).")
    hc_with_judge_noise_low: float | None = Field(
        default=None, description="Headline's 95 % two-level interval (tasks, then a grading within each task), "
        "low bound; None without repeats.")
    hc_with_judge_noise_high: float | None = Field(default=None, description="Its high bound.")
    rank_low_tasks_only: int | None = Field(
        default=None, description="With repeats: the task-only best rank (rank_low is then the two-level one).")
    rank_high_tasks_only: int | None = Field(default=None, description="With repeats: the task-only worst rank.")
    tier_tasks_only: int | None = Field(default=None, description="With repeats: the task-only tier.")


class JudgeRates(BaseModel):
    """One judge's verdict counts and pass rates."""

    judge: str
    family: str | None
    model: str | None
    verdicts: int = Field(description="Verdict rows of current gradings (pass + fail + abstain).")
    passes: int
    fails: int
    abstentions: int
    pass_rate: float | None = Field(description="Pass rate over its own pass/fail verdicts.")
    pass_rate_common: float | None = Field(description="Pass rate on the items every judge rated.")


class PairAgreement(BaseModel):
    """Cohen's κ of two judges on the common items."""

    judge_a: str
    judge_b: str
    kappa: float | None
    agreement: float | None = Field(description="Raw share of items with the same verdict.")
    n_items: int


class SelfPreference(BaseModel):
    """How much more often a judge passes its own family's systems than the other judges do.

    delta = (judge's pass rate) − (mean pass rate of the other judges) on the same items:
    criteria of current gradings of systems whose family is the judge's family. The interval is a
    bootstrap over those submissions (a submission's criteria are resampled together).
    `control_delta` is the same difference on systems of other known families: a judge that is
    simply more lenient shows it there too, a self-preferring one shows delta > control_delta.
    """

    judge: str
    family: str | None
    systems: list[str]
    n_items: int
    judge_pass_rate: float | None
    others_pass_rate: float | None
    delta: Interval
    control_delta: Interval


class JudgeAnalysis(BaseModel):
    """Agreement and bias of the panel, measured on the criterion verdicts of the run."""

    judges: list[JudgeRates]
    n_items: int = Field(description="Items (submission × criterion) every judge rated pass/fail.")
    n_items_partial: int = Field(description="Items left out because some judge abstained or is missing.")
    cohen: list[PairAgreement]
    fleiss_kappa: float | None
    self_preference: list[SelfPreference]


class FlagCount(BaseModel):
    """Flags of current gradings, counted by where they came from and how they ended."""

    origin: str
    status: str
    category: str
    materiality: str | None
    count: int


class AuditorStats(BaseModel):
    """The hallucination audit in numbers."""

    audited_submissions: int
    flags_raised: int
    by_origin: dict[str, int]
    by_status: dict[str, int]
    confirmed_by_category: dict[str, dict[str, int]] = Field(description="category -> {material, minor}.")
    confirmed_by_system: dict[str, dict[str, dict[str, int]]] = Field(
        description="system -> category -> {material, minor} (confirmed flags)."
    )
    counts: list[FlagCount]


class Leaderboard(BaseModel):
    """Everything the reduction produces for one run (leaderboard.json)."""

    run_id: str
    code_version: str | None = None
    vendors: str | None = None
    benchmark_uri: str | None = None
    benchmark_hash: str | None = None
    n_tasks: int
    areas: list[str]
    seed: int
    bootstrap_samples: int
    confidence: float = stats.CONFIDENCE
    ci_method: str = CI_METHOD
    systems: list[SystemScores] = Field(description="One row per system, whole benchmark, by rank.")
    by_area: list[SystemScores] = Field(description="One row per (system, area).")
    judges: JudgeAnalysis
    auditor: AuditorStats
    cost_by_vendor: list[VendorCost] = Field(description="Whole run, every call (incl. preflight).")
    cost_usd: float
    cost_by_purpose: list[PurposeCost] = Field(
        default_factory=list, description="Whole run by vendor and purpose (incl. preflight), cache writes inside each."
    )
    cache_write_usd: float = Field(default=0.0, description="Whole run: USD paid for prompt-cache writes (part of cost_usd).")
    notes: list[str] = Field(default_factory=list)
    pairwise: Pairwise | None = Field(default=None, description="P(row beats column), whole benchmark.")
    adjudication: AdjudicationSummary | None = Field(
        default=None, description="What the experts' decisions in force changed (None: raw view, or no decisions)."
    )
    corrected: CorrectedRates | None = Field(
        default=None, description="Label-corrected rates per system (`tribunal reduce --corrected`; None otherwise)."
    )


class Pairwise(BaseModel):
    """The paired comparison of every two systems over their shared tasks (whole benchmark)."""

    systems: list[str] = Field(description="In leaderboard order.")
    beats: list[list[float]] = Field(description="beats[i][j] = P(systems[i] beats systems[j]), 3 decimals.")
    separable: list[list[bool]] = Field(description="systems[i] is separably better than systems[j].")


class SystemChange(BaseModel):
    """One system's headline rate and rank, raw and with the decisions in force."""

    system: str
    decisions: int
    hc_pass_rate_before: float | None
    hc_pass_rate_after: float | None
    rank_before: int | None
    rank_after: int | None


class AdjudicationSummary(BaseModel):
    """Decisions applied by the reduction (evalcore.results.adjudications)."""

    decisions_in_force: int
    decisions_recorded: int
    by_system: dict[str, int]
    changes: list[SystemChange]
    rescored: list[Rescored]
    unmatched: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)


Leaderboard.model_rebuild()


# --------------------------------------------------------------------------------------------
# Flat tables (leaderboard.parquet)
# --------------------------------------------------------------------------------------------

def interval_fields(name: str) -> list[pa.Field]:
    """The arrow fields of an interval's flat columns (`Interval.columns`): float rates, int count."""
    return [pa.field(name, pa.float64()), pa.field(f"{name}_low", pa.float64()),
            pa.field(f"{name}_high", pa.float64()), pa.field(f"{name}_n", pa.int64())]


_ESTIMATES = (
    "hc_pass_rate", "all_pass_rate", "criterion_pass_rate", "near_pass_1", "near_pass_2",
    "material_per_task", "minor_per_task", "lost_to_gate",
)


def scores_table(rows: Sequence[SystemScores]) -> pa.Table:
    """Leaderboard rows as a flat arrow table: each rate becomes `<rate>`, `_low`, `_high`, `_n`.

    Cost per vendor becomes `cost_usd_<vendor>` / `tokens_<vendor>` columns, so the Parquet file
    reads naturally in any dataframe tool.
    """
    vendors = sorted({c.vendor for r in rows for c in r.cost_by_vendor})
    fields: list[pa.Field] = []
    for name, info in SystemScores.model_fields.items():
        if name == "cost_by_vendor":
            continue
        if name in _ESTIMATES:
            fields += interval_fields(name)
            continue
        ann = str(info.annotation)
        typ = pa.string() if "str" in ann else pa.float64() if "float" in ann else pa.int64()
        fields.append(pa.field(name, typ))
    for v in vendors:
        fields += [pa.field(f"cost_usd_{v}", pa.float64()), pa.field(f"tokens_{v}", pa.int64())]
    records: list[dict[str, Any]] = []
    for r in rows:
        rec: dict[str, Any] = r.model_dump(exclude={"cost_by_vendor", *_ESTIMATES})
        for name in _ESTIMATES:
            rec.update(getattr(r, name).columns(name))
        by_vendor = {c.vendor: c for c in r.cost_by_vendor}
        for v in vendors:
            c = by_vendor.get(v)
            rec[f"cost_usd_{v}"] = c.cost_usd if c else 0.0
            rec[f"tokens_{v}"] = (c.input_tokens + c.output_tokens) if c else 0
        records.append(rec)
    return pa.Table.from_pylist(records, schema=pa.schema(fields))
