"""Comparing two runs over the same submissions (`tribunal compare RUN_A RUN_B`).

Why: the checker-spread experiment. Swap one judge, or the auditor, run again with `--reuse` (only
the swapped vendor's calls are paid), and ask what changed: which verdicts, by which judge; which
hallucinations one auditor upheld and the other did not; how much each system's score moved, with
an interval; and whether the leaderboard's order survives (Kendall τ, systems whose rank moved).
Pure: arrow tables and the two leaderboards in, a pydantic `Comparison` out.

Rules:
* Both runs are read by their current gradings (as the reduction does); only submissions that are
  complete in both are compared (`shared`); the others are counted.
* Verdicts pair by (submission, criterion, judge name): a judge whose name is in one run only is
  listed apart; a judge whose model changed is shown with both models.
* Flags: on submissions audited in both runs, a confirmed flag of one run is *upheld by both*
  when the other run confirmed a flag on the same deliverable with a matching span
  (`labels.spans_match`), else it is upheld by that run only. Submissions audited in one run only
  (their task score changed) are counted apart: their flags differ by scope, not by checker.
* Score change: per system, the mean over shared tasks of (B − A) hallucination-controlled score,
  with a 95% percentile bootstrap over those tasks (paired: the same tasks in both runs).
* Ranks: the leaderboards' ranks by the headline rate; Kendall τ (`scipy.stats.kendalltau`, τ-b)
  of the headline rates of the systems ranked in both.
* Raw against adjudicated (`tribunal compare RUN --adjudicated`): run B is run A's tables with the
  experts' decisions in force on its items (`decided_items`: each decided verdict, criterion and
  flag of a complete current grading, by the reduction's rules in `evalcore.grading.scoring`), so
  an overturned flag is no longer upheld by B, a flag made minor counts as minor, and a decided
  verdict is a changed verdict of its judge.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
from pydantic import BaseModel, Field
from scipy import stats as sps

from evalcore.grading import scoring
from evalcore.results import stats
from evalcore.results.adjudications import Adjudication
from evalcore.results.labels import spans_match
from evalcore.results.leaderboard import Leaderboard
from evalcore.results.reduce import TableSource, current_gradings_sql, with_repeat
from evalcore.results.stats import Interval
from evalcore.storage.store import RunRecord

MAX_EXAMPLES = 50
"""Flags listed by name in a comparison (the counts always cover every flag)."""


class JudgeChange(BaseModel):
    """How one judge's verdicts moved between the runs."""

    judge: str
    model_a: str | None = None
    model_b: str | None = None
    compared: int = Field(description="Criterion items rated pass/fail by this judge in both runs.")
    changed: int
    pass_to_fail: int
    fail_to_pass: int
    kappa: float | None = Field(default=None, description="Cohen's κ between the judge's verdicts in A and in B.")


class FlagDiff(BaseModel):
    """A confirmed flag upheld by one run only."""

    submission_id: str
    deliverable: str
    span: str
    category: str
    materiality: str
    upheld_by: str = Field(description="a or b.")


class FlagChanges(BaseModel):
    """Confirmed hallucinations in A against B, on submissions audited in both."""

    audited_both: int
    audited_a_only: int
    audited_b_only: int
    auditor_a: str | None = None
    auditor_b: str | None = None
    confirmed_a: int
    confirmed_b: int
    upheld_both: int = Field(description="A's confirmed flags that B also confirmed.")
    only_a: int
    only_b: int
    material_a: int
    material_b: int
    examples: list[FlagDiff] = Field(default_factory=list, description=f"At most {MAX_EXAMPLES}.")


class SystemChange(BaseModel):
    """One system's score in A and B."""

    system: str
    rank_a: int | None = None
    rank_b: int | None = None
    hc_pass_rate_a: float | None = None
    hc_pass_rate_b: float | None = None
    delta: Interval = Field(description="Mean (B − A) HC score over shared tasks, with its 95% interval.")
    all_pass_delta: Interval = Field(description="Mean (B − A) task score (before the gate) over shared tasks.")


class Comparison(BaseModel):
    """Everything `tribunal compare` reports."""

    run_a: str
    run_b: str
    side_a: str = Field(default="A", description="What the output calls run A's side (`--adjudicated`: raw).")
    side_b: str = Field(default="B", description="What the output calls run B's side (`--adjudicated`: adjudicated).")
    sides: str = Field(default="", description="What each side is, in words (`--adjudicated`: the judges' view and "
                       "the experts' decisions applied); empty for two runs.")
    shared: int = Field(description="Submissions complete in both runs (what is compared).")
    only_a: int = Field(description="Submissions complete in A only.")
    only_b: int = Field(description="Submissions complete in B only.")
    judges: list[JudgeChange]
    judges_only_a: list[str] = Field(default_factory=list)
    judges_only_b: list[str] = Field(default_factory=list)
    flags: FlagChanges
    systems: list[SystemChange]
    kendall_tau: float | None = None
    kendall_p: float | None = None
    rank_changed: list[str] = Field(default_factory=list, description="Systems whose rank differs.")


@dataclass(frozen=True)
class DecidedItems:
    """The verdict and flag rows the experts' decisions change, as the adjudicated view reads them."""

    verdicts: pa.Table
    """grading_id, judge, criterion_id, verdict: each decided judge verdict (a criterion decision: every judge's)."""
    flags: pa.Table
    """grading_id, flag_index, status, materiality: each decided flag as it then counts."""


_DECIDED_VERDICTS = pa.schema([(c, pa.string()) for c in ("grading_id", "judge", "criterion_id", "verdict")])
_DECIDED_FLAGS = pa.schema([("grading_id", pa.string()), ("flag_index", pa.int64()), ("status", pa.string()),
                            ("materiality", pa.string())])


def decided_items(
    current: pa.Table, verdicts: TableSource | None, flags: TableSource | None,
    latest: Mapping[tuple[str, ...], Adjudication],
) -> DecidedItems:
    """The rows the decisions in force change in the complete current gradings (`current`: one row per
    submission, as `reduce.current_gradings` gives), by the reduction's rules: a decided flag as
    `scoring.adjudicated_flag` counts it, each judge's verdict as `scoring.adjudicated_panel` sets it."""
    complete = {sid: str(g) for sid, g, st in zip(current.column("submission_id").to_pylist(),
                                                   current.column("grading_id").to_pylist(),
                                                   current.column("status").to_pylist(), strict=True)
                if st == "complete"}
    by_grading: dict[str, list[Adjudication]] = defaultdict(list)
    for d in latest.values():  # a decision made on a grading a later sweep replaced is set aside
        if d.submission_id in complete and d.grading_id in (None, complete[d.submission_id]):
            by_grading[complete[d.submission_id]].append(d)
    verdict_rows: list[dict[str, Any]] = []
    flag_rows: list[dict[str, Any]] = []
    if by_grading:
        con = duckdb.connect()
        try:
            con.register("_decided", pa.table({"grading_id": sorted(by_grading)}))
            raw_verdicts: dict[str, dict[str, list[tuple[str, scoring.Verdict, str | None]]]] = defaultdict(dict)
            if verdicts is not None:
                con.register("_verdicts", verdicts)
                for gid, judge, cid, verdict in con.sql(
                        "SELECT grading_id, judge, criterion_id, verdict FROM _verdicts "
                        "WHERE grading_id IN (SELECT grading_id FROM _decided)").fetchall():
                    raw_verdicts[str(gid)].setdefault(str(judge), []).append((str(cid), verdict, None))
            raw_flags: dict[tuple[str, int], scoring.FlagOutcome] = {}
            if flags is not None:
                con.register("_flags", flags)
                for gid, index, status, materiality in con.sql(
                        "SELECT grading_id, flag_index, status, materiality FROM _flags "
                        "WHERE grading_id IN (SELECT grading_id FROM _decided)").fetchall():
                    raw_flags[(str(gid), int(index))] = scoring.FlagOutcome(str(status), materiality)
        finally:
            con.close()
        for gid, decisions in sorted(by_grading.items()):
            panel = raw_verdicts.get(gid, {})
            decided = scoring.adjudicated_panel(
                panel, {(str(d.judge), str(d.criterion_id)): d.decision for d in decisions if d.kind == "verdict"},  # type: ignore[misc]
                {str(d.criterion_id): d.decision for d in decisions if d.kind == "criterion"},  # type: ignore[misc]
            )
            for judge, rows in decided.items():
                for (cid, verdict, _), (_, before, _) in zip(rows, panel[judge], strict=True):
                    if verdict != before:
                        verdict_rows.append({"grading_id": gid, "judge": judge, "criterion_id": cid, "verdict": verdict})
            for d in decisions:
                raw = raw_flags.get((gid, int(d.flag_index or 0))) if d.kind == "flag" else None
                if raw is not None:
                    outcome = scoring.adjudicated_flag(raw, d.decision, d.materiality)  # type: ignore[arg-type]
                    flag_rows.append({"grading_id": gid, "flag_index": d.flag_index, "status": outcome.status,
                                      "materiality": outcome.materiality})
    return DecidedItems(pa.Table.from_pylist(verdict_rows, schema=_DECIDED_VERDICTS),
                        pa.Table.from_pylist(flag_rows, schema=_DECIDED_FLAGS))


def _register(
    con: duckdb.DuckDBPyConnection, side: str, tables: Mapping[str, TableSource | None],
    decided: DecidedItems | None = None,
) -> None:
    """Views `sub_<side>`, `ver_<side>`, `flag_<side>` and `cur_<side>`; with `decided`, the verdict
    and flag views show the decided items in their decided state (the raw tables are not changed)."""
    subs = tables["submissions"]
    con.register(f"sub_{side}", with_repeat(subs) if isinstance(subs, pa.Table) else subs)
    verdicts = tables.get("verdicts")
    con.register(f"ver_{side}_in", verdicts if verdicts is not None else pa.table(
        {c: pa.array([], pa.string()) for c in ("grading_id", "criterion_id", "judge", "judge_model", "verdict")}))
    flags = tables.get("flags")
    con.register(f"flag_{side}_in", flags if flags is not None else pa.table(
        {c: pa.array([], pa.int64() if c == "flag_index" else pa.string()) for c in (
            "grading_id", "flag_index", "deliverable", "span", "category", "status", "materiality", "auditor_model")}))
    if decided is None:
        con.execute(f"CREATE TEMP VIEW ver_{side} AS SELECT * FROM ver_{side}_in")
        con.execute(f"CREATE TEMP VIEW flag_{side} AS SELECT * FROM flag_{side}_in")
    else:
        con.register(f"ver_{side}_decided", decided.verdicts)
        con.register(f"flag_{side}_decided", decided.flags)
        con.execute(
            f"CREATE TEMP VIEW ver_{side} AS SELECT v.* REPLACE (coalesce(d.verdict, v.verdict) AS verdict) "
            f"FROM ver_{side}_in v LEFT JOIN ver_{side}_decided d "
            "ON v.grading_id = d.grading_id AND v.judge = d.judge AND v.criterion_id = d.criterion_id")
        con.execute(
            f"CREATE TEMP VIEW flag_{side} AS SELECT f.* REPLACE ("
            "CASE WHEN d.grading_id IS NULL THEN f.status ELSE d.status END AS status, "
            "CASE WHEN d.grading_id IS NULL THEN f.materiality ELSE d.materiality END AS materiality) "
            f"FROM flag_{side}_in f LEFT JOIN flag_{side}_decided d "
            "ON f.grading_id = d.grading_id AND f.flag_index = d.flag_index")
    cols = "grading_id, submission_id, system, task_id, status, task_score, hc_score, audited, graded_at, repeat"
    con.execute(f"CREATE TEMP TABLE cur_{side} AS "
                + current_gradings_sql(f"(SELECT {cols} FROM sub_{side} WHERE status = 'complete')"))


def _judges(con: duckdb.DuckDBPyConnection) -> tuple[list[JudgeChange], list[str], list[str]]:
    rows = con.sql(
        """
        WITH va AS (SELECT c.submission_id, v.criterion_id, v.judge, v.judge_model, v.verdict
                    FROM ver_a v JOIN cur_a c USING (grading_id) WHERE v.verdict IN ('pass', 'fail')),
             vb AS (SELECT c.submission_id, v.criterion_id, v.judge, v.judge_model, v.verdict
                    FROM ver_b v JOIN cur_b c USING (grading_id) WHERE v.verdict IN ('pass', 'fail'))
        SELECT va.judge, any_value(va.judge_model), any_value(vb.judge_model),
               count(*) FILTER (WHERE va.verdict = 'pass' AND vb.verdict = 'pass'),
               count(*) FILTER (WHERE va.verdict = 'pass' AND vb.verdict = 'fail'),
               count(*) FILTER (WHERE va.verdict = 'fail' AND vb.verdict = 'pass'),
               count(*) FILTER (WHERE va.verdict = 'fail' AND vb.verdict = 'fail')
        FROM va JOIN vb USING (submission_id, criterion_id, judge)
        GROUP BY va.judge ORDER BY va.judge
        """
    ).fetchall()
    out = []
    for judge, ma, mb, pp, pf, fp, ff in rows:
        out.append(JudgeChange(
            judge=judge, model_a=ma, model_b=mb, compared=pp + pf + fp + ff, changed=pf + fp,
            pass_to_fail=pf, fail_to_pass=fp,
            kappa=stats.cohen_kappa_from_table(np.array([[pp, pf], [fp, ff]])),
        ))
    ja = {r[0] for r in con.sql("SELECT DISTINCT judge FROM ver_a").fetchall()}
    jb = {r[0] for r in con.sql("SELECT DISTINCT judge FROM ver_b").fetchall()}
    return out, sorted(ja - jb), sorted(jb - ja)


def _flags(con: duckdb.DuckDBPyConnection) -> FlagChanges:
    audited = {
        side: {r[0]: r[1] for r in con.sql(f"SELECT submission_id, grading_id FROM cur_{side} WHERE audited").fetchall()}
        for side in ("a", "b")
    }
    both = sorted(set(audited["a"]) & set(audited["b"]))
    confirmed: dict[str, dict[str, list[dict[str, Any]]]] = {}
    models: dict[str, str | None] = {}
    for side in ("a", "b"):
        per: dict[str, list[dict[str, Any]]] = defaultdict(list)
        rows = con.sql(
            f"SELECT c.submission_id, f.deliverable, f.span, f.category, f.materiality, f.auditor_model "
            f"FROM flag_{side} f JOIN cur_{side} c USING (grading_id) WHERE f.status = 'confirmed' "
            "ORDER BY c.submission_id, f.deliverable, f.span").fetchall()
        for sid, deliverable, span, category, materiality, model in rows:
            per[sid].append({"deliverable": deliverable, "span": span, "category": category,
                             "materiality": "minor" if materiality == "minor" else "material"})
            models.setdefault(side, model)
        confirmed[side] = per
    counts: dict[str, int] = defaultdict(int)
    examples: list[FlagDiff] = []
    for sid in both:
        fa, fb = confirmed["a"].get(sid, []), confirmed["b"].get(sid, [])
        for mine, other, side in ((fa, fb, "a"), (fb, fa, "b")):
            counts[f"confirmed_{side}"] += len(mine)
            counts[f"material_{side}"] += sum(f["materiality"] == "material" for f in mine)
            for f in mine:
                hit = any(g["deliverable"] == f["deliverable"] and spans_match(f["span"], g["span"]) for g in other)
                if hit:
                    counts["both"] += side == "a"
                    continue
                counts[f"only_{side}"] += 1
                if len(examples) < MAX_EXAMPLES:
                    examples.append(FlagDiff(submission_id=sid, upheld_by=side, **f))
    return FlagChanges(
        audited_both=len(both), audited_a_only=len(set(audited["a"]) - set(audited["b"])),
        audited_b_only=len(set(audited["b"]) - set(audited["a"])),
        auditor_a=models.get("a"), auditor_b=models.get("b"),
        confirmed_a=counts["confirmed_a"], confirmed_b=counts["confirmed_b"], upheld_both=counts["both"],
        only_a=counts["only_a"], only_b=counts["only_b"], material_a=counts["material_a"],
        material_b=counts["material_b"], examples=examples,
    )


def compare_tables(
    run_a: RunRecord,
    run_b: RunRecord,
    tables_a: Mapping[str, TableSource | None],
    tables_b: Mapping[str, TableSource | None],
    leaderboard_a: Leaderboard,
    leaderboard_b: Leaderboard,
    decided_b: DecidedItems | None = None,
) -> Comparison:
    """Compare run B with run A (`tables_*`: submissions, verdicts, flags as the run wrote them;
    `decided_b`: run B's verdict and flag rows the experts decided, for the adjudicated view)."""
    seed, samples = run_b.config.seed, run_b.config.bootstrap_samples
    con = duckdb.connect()
    try:
        _register(con, "a", tables_a)
        _register(con, "b", tables_b, decided_b)
        only = con.execute(
            "SELECT (SELECT count(*) FROM cur_a WHERE submission_id NOT IN (SELECT submission_id FROM cur_b)), "
            "(SELECT count(*) FROM cur_b WHERE submission_id NOT IN (SELECT submission_id FROM cur_a))"
        ).fetchall()[0]
        pairs = con.sql(
            "SELECT a.system, a.submission_id, coalesce(b.hc_score, 0) - coalesce(a.hc_score, 0), "
            "coalesce(b.task_score, 0) - coalesce(a.task_score, 0) "
            "FROM cur_a a JOIN cur_b b USING (submission_id) ORDER BY a.system, a.submission_id"
        ).fetchall()
        judges, judges_only_a, judges_only_b = _judges(con)
        flags = _flags(con)
    finally:
        con.close()
    deltas: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for system, _sid, d_hc, d_task in pairs:
        deltas[system].append((float(d_hc), float(d_task)))
    ra = {r.system: r for r in leaderboard_a.systems}
    rb = {r.system: r for r in leaderboard_b.systems}
    systems = []
    for system in sorted(set(ra) | set(rb)):
        d = np.asarray(deltas.get(system, []), dtype=np.float64).reshape(-1, 2).T
        est = stats.bootstrap_ratio(d, None, rng=stats.rng_for(seed, "compare", system), n_resamples=samples)
        a, b = ra.get(system), rb.get(system)
        systems.append(SystemChange(
            system=system, rank_a=a.rank if a else None, rank_b=b.rank if b else None,
            hc_pass_rate_a=a.hc_pass_rate.value if a else None, hc_pass_rate_b=b.hc_pass_rate.value if b else None,
            delta=est[0], all_pass_delta=est[1],
        ))
    ranked = [s for s in systems if s.hc_pass_rate_a is not None and s.hc_pass_rate_b is not None]
    tau = p = None
    if len(ranked) >= 2:
        res = sps.kendalltau([s.hc_pass_rate_a for s in ranked], [s.hc_pass_rate_b for s in ranked])
        tau = None if np.isnan(res.statistic) else float(res.statistic)
        p = None if np.isnan(res.pvalue) else float(res.pvalue)
    return Comparison(
        run_a=leaderboard_a.run_id, run_b=leaderboard_b.run_id, shared=len(pairs),
        only_a=int(only[0]) if only else 0, only_b=int(only[1]) if only else 0,
        judges=judges, judges_only_a=judges_only_a, judges_only_b=judges_only_b, flags=flags,
        systems=systems, kendall_tau=tau, kendall_p=p,
        rank_changed=[s.system for s in systems if s.rank_a != s.rank_b],
    )
