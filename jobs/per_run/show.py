"""`tribunal show RUN --system S --task T`: what a run holds for one submission, read, never re-graded.

Why: `tribunal grade` grades again (other answers, other cost, no personas); a publisher asked
"why did this submission score 0?" needs the grading the leaderboard counted. This reads the
submission's latest grading (the reduction's rule: `evalcore.results.reduce.current_gradings`),
its verdicts, flags and calls from the run's tables (opened as `jobs.per_run.reduce` opens them),
and the experts' decisions in force on its items (`evalcore.results.adjudications`), applied by
the same rules the reduction applies (`adjudications.apply`), so the scores shown "with the
decisions in force" are the ones the leaderboard used. Rendering: `jobs.display.show`.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
from pydantic import BaseModel, Field

from evalcore.call_accounting import CallKind, call_kind
from evalcore.errors import InputError, StorageError
from evalcore.grading import scoring
from evalcore.results import adjudications as adj
from evalcore.results.reduce import TableSource, current_gradings
from evalcore.schema import CallRow
from evalcore.storage.run import open_run
from evalcore.storage.store import arrow_schema

LISTED = 12
"""Names listed when a system or task is not in the run (then "and N more")."""


class DecisionNote(BaseModel):
    """The expert's decision in force on one item: what, who, when, why."""

    decision: str
    materiality: str | None = None
    reviewer: str
    decided_at: str
    reason: str

    @classmethod
    def of(cls, d: adj.Adjudication) -> DecisionNote:
        return cls(decision=d.decision, materiality=d.materiality, reviewer=d.reviewer,
                   decided_at=d.decided_at.strftime("%Y-%m-%d %H:%M UTC"), reason=d.reason)


class ShownVerdict(BaseModel):
    criterion_id: str
    judge: str
    judge_model: str
    verdict: str
    reasoning: str = ""
    abstain_reason: str | None = None
    decision: DecisionNote | None = Field(default=None, description="The expert's decision on this verdict.")


class ShownFlag(BaseModel):
    flag_index: int
    deliverable: str
    span: str
    location: str = ""
    category: str
    evidence_document: str | None = None
    evidence_page: str | None = None
    evidence_passage: str | None = None
    explanation: str = ""
    origin: str = "auditor"
    status: str = Field(description="Stage 2's decision: confirmed | rejected | merged.")
    merged_into: int | None = None
    materiality: str | None = None
    rationale: str = ""
    counts_as: str | None = Field(default=None, description="How it counts with the decisions in force: material | minor | None.")
    decision: DecisionNote | None = None


class ShownCall(BaseModel):
    vendor: str
    model: str
    purpose: str
    criterion_id: str | None = None
    outcome: str
    kind: CallKind = Field(description="Who paid (`evalcore.call_accounting.call_kind`).")
    attempts: int
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    error: str | None = None


class ShownSubmission(BaseModel):
    """One submission of a run as stored: its latest grading, with the decisions in force marked."""

    run_id: str
    run_uri: str
    system: str
    task_id: str
    grading_id: str
    gradings: int = Field(description="Original gradings of this submission in the run (the latest is shown).")
    repeats: int = Field(default=0, description="Repeat gradings of it (`tribunal retest`), not shown here.")
    scores: dict[str, Any] = Field(description="The submission row as graded (the raw view).")
    scores_in_force: dict[str, Any] | None = Field(
        default=None, description="The scores with the decisions in force applied (None: no decision on it).")
    verdicts: list[ShownVerdict]
    criterion_decisions: dict[str, DecisionNote] = Field(default_factory=dict)
    flags: list[ShownFlag]
    calls: list[ShownCall]
    paid_usd: float = Field(description="What this grading's calls cost (reused calls: 0).")
    decisions_in_force: int = 0
    adjudications: bool = Field(default=True, description="False: the raw view was asked (--no-adjudications).")
    unmatched: list[str] = Field(default_factory=list, description="Decisions on this submission naming no item of it.")


def _names(values: list[str]) -> str:
    shown = ", ".join(values[:LISTED])
    return shown + (f" and {len(values) - LISTED} more" if len(values) > LISTED else "")


def _rows(source: TableSource | None, table: str, grading_id: str) -> list[dict[str, Any]]:
    if source is None:
        return []
    if isinstance(source, pads.Dataset):
        out = source.to_table(filter=pc.field("grading_id") == grading_id)
    else:
        out = source.filter(pc.equal(source.column("grading_id"), grading_id))
    rows: list[dict[str, Any]] = out.to_pylist()
    return rows


def show_submission(
    run_uri: str, system: str, task_id: str, *, endpoint_override: str | None = None, adjudications: bool = True,
) -> ShownSubmission:
    """What the run holds for `system`'s submission to `task_id` (module doc). Raises `InputError`
    naming the run and what is missing (with the systems or tasks it has) when there is none."""
    run = open_run(run_uri, endpoint_override)
    record = run.read_record()
    submissions = run.dataset("submissions")
    if submissions is None:
        raise StorageError(f"{run.table('submissions')}: no graded submissions in this run yet")
    raw = submissions.to_table() if isinstance(submissions, pads.Dataset) else submissions
    systems = sorted(set(raw.column("system").to_pylist()))
    if system not in systems:
        raise InputError(run_uri, f"run {record.run_id} has no system {system!r} (its systems: {_names(systems)})")
    mine = raw.filter(pc.equal(raw.column("system"), system))
    tasks = sorted(set(mine.column("task_id").to_pylist()))
    if task_id not in tasks:
        raise InputError(run_uri, f"run {record.run_id} has no submission of {system} to task {task_id!r} "
                                  f"({system}'s tasks: {_names(tasks)})")
    gradings = mine.filter(pc.equal(mine.column("task_id"), task_id))
    current = current_gradings(gradings)
    repeats = pc.sum(pc.greater(pc.fill_null(gradings.column("repeat"), 0), 0)).as_py() or 0
    row: dict[str, Any] = current.to_pylist()[0]
    gid = str(row["grading_id"])
    verdict_rows = _rows(run.dataset("verdicts"), "verdicts", gid)
    flag_rows = _rows(run.dataset("flags"), "flags", gid)
    call_rows = _rows(run.dataset("calls"), "calls", gid)

    latest: dict[tuple[str, ...], adj.Adjudication] = {}
    if adjudications:
        latest = {k: d for k, d in run.read_decisions().latest().items()
                  if d.system == system and d.task_id == task_id}
    in_force = None
    unmatched: list[str] = []
    if latest and row["status"] == "complete":
        con = duckdb.connect()
        try:
            con.register("verdicts_in", _table("verdicts", verdict_rows))
            con.register("flags_in", _table("flags", flag_rows))
            out, effect = adj.apply(con, current, latest)
        finally:
            con.close()
        in_force = out.to_pylist()[0]
        unmatched = effect.unmatched
    elif latest:
        unmatched = [f"{d.kind} {'/'.join(d.item[1:])}: the current grading is {row['status']} (regraded, not "
                     "adjudicated)" for d in latest.values()]

    def decided(key: tuple[str, ...]) -> DecisionNote | None:
        d = latest.get(key)
        return None if d is None else DecisionNote.of(d)

    verdicts = [ShownVerdict(criterion_id=v["criterion_id"], judge=v["judge"], judge_model=v["judge_model"],
                             verdict=v["verdict"], reasoning=v["reasoning"] or "", abstain_reason=v["abstain_reason"],
                             decision=decided(("verdict", system, task_id, v["criterion_id"], v["judge"])))
                for v in sorted(verdict_rows, key=lambda v: (v["criterion_id"], v["judge"]))]
    criteria = {d.criterion_id or "": DecisionNote.of(d) for d in latest.values() if d.kind == "criterion"}
    flags = []
    for f in sorted(flag_rows, key=lambda f: f["flag_index"]):
        d = latest.get(("flag", system, task_id, str(f["flag_index"])))
        outcome = scoring.adjudicated_flag(scoring.FlagOutcome(str(f["status"]), f["materiality"]),
                                           d.decision if d else None,  # type: ignore[arg-type]
                                           d.materiality if d else None)
        flags.append(ShownFlag(**{k: f[k] for k in ShownFlag.model_fields if k in f},
                               counts_as=scoring.counted_materiality(outcome.status, outcome.materiality),
                               decision=None if d is None else DecisionNote.of(d)))
    calls = []
    for c in sorted(call_rows, key=lambda c: (c["started_at"], c["vendor"], c["purpose"], c["criterion_id"] or "")):
        call = CallRow.model_validate(c)
        calls.append(ShownCall(vendor=call.vendor, model=call.model, purpose=call.purpose, criterion_id=call.criterion_id,
                               outcome=call.outcome, kind=call_kind(call), attempts=call.attempts,
                               input_tokens=call.input_tokens, cached_input_tokens=call.cached_input_tokens,
                               output_tokens=call.output_tokens, cost_usd=call.cost_usd if call.reused_from is None else 0.0,
                               latency_s=call.latency_s, error=call.error))
    return ShownSubmission(
        run_id=record.run_id, run_uri=run_uri, system=system, task_id=task_id, grading_id=gid,
        gradings=gradings.num_rows - repeats, repeats=repeats, scores=row, scores_in_force=in_force, verdicts=verdicts,
        criterion_decisions=criteria, flags=flags, calls=calls, paid_usd=sum(c.cost_usd for c in calls),
        decisions_in_force=len(latest), adjudications=adjudications, unmatched=unmatched,
    )


def _table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    schema = arrow_schema(name)
    return pa.Table.from_pylist(rows, schema=schema) if rows else schema.empty_table()
