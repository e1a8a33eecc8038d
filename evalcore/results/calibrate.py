"""Calibration: a run's judges and auditor against expert labels (`tribunal calibrate`).

Why: a leaderboard is only as true as its graders. Before paying for a leaderboard run, an
operator grades an expert-labelled subset and asks, per judge, how often it agrees with the experts
and which way it errs; whether the three-judge panel beats each judge alone; and how many real
hallucinations the auditor confirms, how many of its confirmations are real, and what Stage 2
changes. Pure: arrow tables in (the run's current gradings), a pydantic `Calibration` out.

Rules (each figure names its population):

* **Judges** — on criterion items the experts labelled and the judge rated (pass/fail) in a
  complete current grading: accuracy; Cohen's κ with the experts; false-pass rate (passed what the
  experts failed, over expert fails); false-fail rate (failed what they passed, over expert
  passes). Overall and per practice area.
* **Panel** — on complete gradings whose every criterion is labelled: the experts' all-pass (every
  criterion passes) against each judge's all-pass and against the panel's task score (the share
  of judges passing everything), and against the panel's majority (task score ≥ 2/3). Error = mean
  |score − expert all-pass|; the panel beats a judge when its error is lower. `panel_minus_best_judge` is the paired difference with the best
  single judge (negative: the panel is better).
* **Auditor** — on labelled submissions the run audited: a confirmed flag is *true* when it
  matches a labelled hallucination (same deliverable, overlapping span: `labels.spans_match`).
  Precision = true confirmed / confirmed; recall = labelled hallucinations matched by a confirmed
  flag / labelled hallucinations; by category (the label's for recall, the flag's for
  precision); a material/minor confusion of matched pairs (unmatched labels are `missed`,
  unmatched confirmations `not real`); Stage 2's effect: Stage 1 flags it rejected that were real,
  and confirmed that were not, with Stage 1's own recall. Labelled hallucinations in submissions
  that were not audited (score 0, not complete, or not in the run) are counted apart: no audit
  could find them. With labels from review decisions (not exhaustive: `Labels.exhaustive`), only
  reviewed flags are scored: an upheld flag is true, an overturned one (`FalseFlagLabel`) not
  real, and a flag nobody reviewed is neither (`AuditorCalibration.not_reviewed`).
* **Truncation** — per vendor entry (judges and auditor) and purpose, from the run's `calls` table
  when given: the share of calls whose answer stopped at its output-token cap and was retried
  with a larger one, with the tokens and USD those truncated attempts cost
  (`evalcore.grading.calls.truncation_rates`, the rule the estimate's `--calibrate` uses). Not
  against labels: a high rate says raise that entry's `max_output_tokens` (the cap's floor).
* **Intervals** — percentile bootstrap over submissions, as on the leaderboard
  (`evalcore.results.stats`), seeded from the run's seed and the name of the figure.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
from pydantic import BaseModel, Field

from evalcore.grading.calls import TruncationRate, truncation_rates
from evalcore.grading.scoring import counted_materiality
from evalcore.results import stats
from evalcore.results.agreement import Agreement
from evalcore.results.labels import Labels, label_matches_flag
from evalcore.results.leaderboard import ALL_AREAS, interval_fields
from evalcore.results.reduce import TableSource, current_gradings_sql, with_repeat
from evalcore.results.repeatability import Repeatability
from evalcore.results.stats import Interval
from evalcore.storage.store import RunRecord

PANEL = "panel"
"""The `judge` name of the panel's rows."""


class JudgeCalibration(BaseModel):
    """One judge against the experts, over the whole labelled set (`area` = ALL) or one area."""

    judge: str
    family: str | None = None
    model: str | None = None
    area: str
    items: int = Field(description="Labelled criterion items the judge rated pass or fail.")
    expert_passes: int
    expert_fails: int
    accuracy: Interval
    kappa: Interval = Field(description="Cohen's κ with the experts.")
    false_pass_rate: Interval = Field(description="Passed / items the experts failed.")
    false_fail_rate: Interval = Field(description="Failed / items the experts passed.")


class PanelCalibration(BaseModel):
    """Does the three-judge panel beat each judge alone on the experts' all-pass?"""

    submissions: int = Field(description="Complete gradings with every criterion labelled.")
    expert_all_pass: int = Field(description="Of them, all-pass by the experts.")
    task_score_error: Interval = Field(description="Mean |panel task score − expert all-pass|.")
    majority_error: Interval = Field(
        description="Mean |panel majority all-pass (task score ≥ 2/3) − expert all-pass|: the panel as one verdict."
    )
    judge_error: dict[str, Interval] = Field(description="Per judge: mean |judge all-pass − expert all-pass|.")
    best_judge: str | None = None
    panel_minus_best_judge: Interval = Field(description="Paired difference of errors (< 0: the panel is better).")


class CategoryCalibration(BaseModel):
    """The auditor on one hallucination category."""

    category: str
    labelled: int = Field(description="Labelled hallucinations of this category in audited submissions.")
    found: int = Field(description="Of them, matched by a confirmed flag.")
    recall: Interval
    confirmed: int = Field(description="Confirmed flags of this category (the flag's category).")
    true: int = Field(description="Of them, matching a labelled hallucination.")
    precision: Interval


class AuditorCalibration(BaseModel):
    """The two-stage audit against the experts' hallucination labels."""

    audited_submissions: int = Field(description="Labelled submissions the run audited.")
    labelled: int = Field(description="Labelled hallucinations in audited submissions.")
    not_audited: int = Field(description="Labelled hallucinations in labelled submissions that were not audited.")
    confirmed: int
    true_confirmed: int
    found: int
    precision: Interval
    recall: Interval
    stage1_recall: Interval = Field(description="Labelled hallucinations matched by any Stage 1 flag.")
    by_category: list[CategoryCalibration]
    materiality: dict[str, dict[str, int]] = Field(
        description="Expert materiality (or `not real`) -> auditor's (material | minor | missed)."
    )
    stage2_rejected_real: int = Field(description="Stage 1 flags matching a label that Stage 2 rejected.")
    stage2_rejected_not_real: int = Field(description="Stage 1 flags matching no label that Stage 2 rejected.")
    stage2_confirmed_not_real: int = Field(description="Confirmed flags matching no label.")
    not_reviewed: int = Field(
        default=0, description="Confirmed flags no label says anything about (review labels only): not scored.")
    recall_measured: bool = Field(
        default=True, description="False with labels from review decisions (not exhaustive): a hallucination "
        "nobody flagged is never labelled, so `recall` and `stage1_recall` count only the flags reviewers upheld and "
        "say nothing; shown as not measured.")


class Calibration(BaseModel):
    """Everything `tribunal calibrate` reports for one run and one labels file."""

    run_id: str
    labels: str = Field(description="Where the labels came from.")
    seed: int
    bootstrap_samples: int
    labelled_submissions: int
    matched_submissions: int = Field(description="Labelled submissions with a complete current grading in the run.")
    not_in_run: int = Field(description="Labelled submissions the run has no grading of.")
    not_complete: int = Field(description="Labelled submissions whose current grading is not complete.")
    judges: list[JudgeCalibration]
    panel: PanelCalibration
    auditor: AuditorCalibration
    truncation: list[TruncationRate] = Field(
        default_factory=list,
        description="Per vendor entry and purpose: how often answers stopped at the output-token cap and were "
        "retried (empty when the calls table was not given).",
    )
    reviewers: Agreement | None = Field(
        default=None, description="Inter-reviewer agreement over the decisions made in review campaigns "
        "(`evalcore.results.agreement`): Cohen's κ per pair, Krippendorff's α with intervals, each reviewer "
        "against the judges and the auditor; None when no campaign decided anything.")
    notes: list[str] = Field(default_factory=list)
    repeatability: Repeatability | None = Field(
        default=None, description="The test-retest figures of the run's repeats (`tribunal retest`), whatever the "
        "labels: the judges against themselves (`evalcore.results.repeatability`); None without repeats.")


# --------------------------------------------------------------------------------------------


def _by_unit(units: Sequence[str], values: Sequence[Sequence[float]]) -> npt.NDArray[np.float64]:
    """Sum k per-row quantities per unit: (k, n_units), units in first-seen order."""
    index: dict[str, int] = {}
    for u in units:
        index.setdefault(u, len(index))
    out = np.zeros((len(values), len(index)))
    cols = np.fromiter((index[u] for u in units), dtype=np.int64, count=len(units))
    for k, row in enumerate(values):
        np.add.at(out[k], cols, np.asarray(row, dtype=np.float64))
    return out


class _Calibrator:
    def __init__(self, seed: int, samples: int) -> None:
        self.seed = seed
        self.samples = samples

    def rng(self, *keys: str) -> np.random.Generator:
        return stats.rng_for(self.seed, "calibrate", *keys)

    def ratio(self, num: npt.NDArray[np.float64], den: npt.NDArray[np.float64], *keys: str) -> Interval:
        return stats.bootstrap_ratio(num, den, rng=self.rng(*keys), n_resamples=self.samples)[0]

    def judge_rows(self, rows: list[dict[str, Any]]) -> list[JudgeCalibration]:
        """Per judge and area: accuracy, κ, false-pass and false-fail rates (bootstrap over submissions)."""
        groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        meta: dict[str, tuple[str | None, str | None]] = {}
        for r in rows:
            meta[r["judge"]] = (r["judge_family"], r["judge_model"])
            groups[(r["judge"], ALL_AREAS)].append(r)
            groups[(r["judge"], r["area"])].append(r)
        out = []
        for (judge, area), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != ALL_AREAS, kv[0][1])):
            jp = [r["verdict"] == "pass" for r in rs]
            ep = [r["expert"] == "pass" for r in rs]
            cells = _by_unit([r["submission_id"] for r in rs], [
                [a and b for a, b in zip(jp, ep, strict=True)], [a and not b for a, b in zip(jp, ep, strict=True)],
                [b and not a for a, b in zip(jp, ep, strict=True)], [not a and not b for a, b in zip(jp, ep, strict=True)],
            ])
            pp, pf, fp, ff = cells
            kappa = stats.bootstrap_statistic(cells, stats.kappa_from_cells, rng=self.rng(judge, area, "kappa"),
                                              n_resamples=self.samples)
            family, model = meta[judge]
            out.append(JudgeCalibration(
                judge=judge, family=family, model=model, area=area, items=len(rs),
                expert_passes=int(sum(ep)), expert_fails=len(ep) - int(sum(ep)),
                accuracy=self.ratio(pp + ff, pp + pf + fp + ff, judge, area, "accuracy"),
                kappa=kappa,
                false_pass_rate=self.ratio(pf, pf + ff, judge, area, "false_pass"),
                false_fail_rate=self.ratio(fp, fp + pp, judge, area, "false_fail"),
            ))
        return out

    def panel(self, rows: list[dict[str, Any]], graded: Mapping[str, tuple[int, float]]) -> PanelCalibration:
        """Experts' all-pass against each judge's all-pass and the panel's task score."""
        labelled: dict[str, int] = defaultdict(int)
        expert_fail: dict[str, bool] = defaultdict(bool)
        judge_fail: dict[tuple[str, str], bool] = defaultdict(bool)
        judges = sorted({r["judge"] for r in rows})
        seen: set[tuple[str, str]] = set()
        for r in rows:
            sid = r["submission_id"]
            if (sid, r["criterion_id"]) not in seen:
                seen.add((sid, r["criterion_id"]))
                labelled[sid] += 1
                expert_fail[sid] |= r["expert"] == "fail"
            judge_fail[(sid, r["judge"])] |= r["verdict"] == "fail"
        subs = sorted(s for s, n in labelled.items() if s in graded and n == graded[s][0])
        expert = np.asarray([0.0 if expert_fail[s] else 1.0 for s in subs])
        scores = np.asarray([graded[s][1] for s in subs])
        panel_err = np.abs(scores - expert)
        majority_err = np.abs((scores >= 2 / 3 - 1e-9).astype(np.float64) - expert)
        judge_err = {j: np.abs(np.asarray([0.0 if judge_fail[(s, j)] else 1.0 for s in subs]) - expert) for j in judges}
        errors = {j: self.ratio(e, np.ones_like(e), PANEL, j) for j, e in judge_err.items()}
        best = min(judges, key=lambda j: (float(judge_err[j].mean()) if len(subs) else 0.0, j)) if judges else None
        diff = panel_err - judge_err[best] if best is not None else np.zeros(0)
        return PanelCalibration(
            submissions=len(subs), expert_all_pass=int(expert.sum()),
            task_score_error=self.ratio(panel_err, np.ones_like(panel_err), PANEL, "task_score"),
            majority_error=self.ratio(majority_err, np.ones_like(majority_err), PANEL, "majority"),
            judge_error=errors, best_judge=best,
            panel_minus_best_judge=stats.bootstrap_mean(diff, rng=self.rng(PANEL, "diff"), n_resamples=self.samples),
        )

    def auditor(
        self, labels: Labels, audited: Mapping[tuple[str, str], str], labelled_subs: set[tuple[str, str]],
        flags: Mapping[str, list[dict[str, Any]]],
    ) -> AuditorCalibration:
        """Confirmed flags against labelled hallucinations, in the labelled submissions the run audited."""
        by_sub: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for h in labels.hallucinations:
            by_sub[(h.system, h.task_id)].append(h)
        false_by_sub: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for n in labels.false_flags:
            false_by_sub[(n.system, n.task_id)].append(n)
        not_reviewed = 0
        not_audited = sum(len(v) for k, v in by_sub.items() if k not in audited)
        cats = ("contradiction", "fabricated_source", "unsupported_specific")
        units: list[str] = []
        cols: dict[str, list[float]] = defaultdict(list)
        confusion: dict[str, dict[str, int]] = {m: {"material": 0, "minor": 0, "missed": 0}
                                               for m in ("material", "minor")}
        confusion["not real"] = {"material": 0, "minor": 0}
        s2 = {"rejected_real": 0, "rejected_not_real": 0, "confirmed_not_real": 0}
        for key in sorted(k for k in labelled_subs if k in audited):
            gid = audited[key]
            halls = by_sub.get(key, [])
            every = [f for f in flags.get(gid, []) if f["status"] != "merged"]
            found = [next((f for f in every if f["status"] == "confirmed" and label_matches_flag(h, f)), None)
                     for h in halls]
            stage1 = [any(label_matches_flag(h, f) for f in every) for h in halls]
            # only flags a label speaks about are scored: with exhaustive labels every flag is (no
            # match = not real); with review labels, only the flags an expert upheld or overturned
            fl, real = [], []
            for flag in every:
                is_real = any(label_matches_flag(h, flag) for h in halls)
                if is_real or labels.exhaustive or any(label_matches_flag(n, flag) for n in false_by_sub.get(key, [])):
                    fl.append(flag)
                    real.append(is_real)
                elif flag["status"] == "confirmed":
                    not_reviewed += 1
            confirmed = [f for f in fl if f["status"] == "confirmed"]
            units.append(f"{key[0]}::{key[1]}")
            row = {
                "labelled": len(halls), "found": sum(f is not None for f in found), "stage1": sum(stage1),
                "confirmed": len(confirmed),
                "true": sum(r for f, r in zip(fl, real, strict=True) if f["status"] == "confirmed"),
            }
            for c in cats:
                row[f"labelled:{c}"] = sum(h.category == c for h in halls)
                row[f"found:{c}"] = sum(h.category == c and f is not None for h, f in zip(halls, found, strict=True))
                row[f"confirmed:{c}"] = sum(f["category"] == c for f in confirmed)
                row[f"true:{c}"] = sum(f["category"] == c and f["status"] == "confirmed" and r
                                       for f, r in zip(fl, real, strict=True))
            for k, v in row.items():
                cols[k].append(float(v))
            for h, f in zip(halls, found, strict=True):
                confusion[h.materiality]["missed" if f is None else _materiality(f)] += 1
            for f, r in zip(fl, real, strict=True):
                if f["status"] == "confirmed" and not r:
                    confusion["not real"][_materiality(f)] += 1
                    s2["confirmed_not_real"] += 1
                elif f["status"] == "rejected":
                    s2["rejected_real" if r else "rejected_not_real"] += 1

        def a(name: str) -> npt.NDArray[np.float64]:
            return np.asarray(cols.get(name, []), dtype=np.float64)

        by_category = [
            CategoryCalibration(
                category=c, labelled=int(a(f"labelled:{c}").sum()), found=int(a(f"found:{c}").sum()),
                recall=self.ratio(a(f"found:{c}"), a(f"labelled:{c}"), "auditor", c, "recall"),
                confirmed=int(a(f"confirmed:{c}").sum()), true=int(a(f"true:{c}").sum()),
                precision=self.ratio(a(f"true:{c}"), a(f"confirmed:{c}"), "auditor", c, "precision"),
            )
            for c in cats
        ]
        return AuditorCalibration(
            audited_submissions=len(units), labelled=int(a("labelled").sum()), not_audited=not_audited,
            confirmed=int(a("confirmed").sum()), true_confirmed=int(a("true").sum()), found=int(a("found").sum()),
            precision=self.ratio(a("true"), a("confirmed"), "auditor", "precision"),
            recall=self.ratio(a("found"), a("labelled"), "auditor", "recall"),
            stage1_recall=self.ratio(a("stage1"), a("labelled"), "auditor", "stage1_recall"),
            by_category=by_category, materiality=confusion,
            stage2_rejected_real=s2["rejected_real"], stage2_rejected_not_real=s2["rejected_not_real"],
            stage2_confirmed_not_real=s2["confirmed_not_real"], not_reviewed=not_reviewed,
            recall_measured=labels.exhaustive,
        )


def _materiality(flag: Mapping[str, Any]) -> str:
    """How a confirmed flag counts: the gate's rule (`scoring.counted_materiality`), no materiality = material."""
    return counted_materiality("confirmed", flag.get("materiality")) or "material"


def _empty(table: TableSource | None, columns: Sequence[tuple[str, pa.DataType]]) -> TableSource:
    return table if table is not None else pa.table({n: pa.array([], t) for n, t in columns})


def calibrate_tables(
    run: RunRecord,
    labels: Labels,
    *,
    submissions: TableSource,
    verdicts: TableSource | None = None,
    flags: TableSource | None = None,
    calls: TableSource | None = None,
) -> Calibration:
    """Calibrate a run (its run.json and tables, as `tribunal reduce` reads them) against labels;
    with its `calls` table, also each entry's truncation rate (`Calibration.truncation`)."""
    seed, samples = run.config.seed, run.config.bootstrap_samples
    cal = _Calibrator(seed, samples)
    con = duckdb.connect()
    try:
        con.register("submissions_in", with_repeat(submissions) if isinstance(submissions, pa.Table) else submissions)
        con.register("verdicts_in", _empty(verdicts, [(c, pa.string()) for c in (
            "grading_id", "criterion_id", "judge", "judge_family", "judge_model", "verdict")]))
        con.register("flags_in", _empty(flags, [
            ("grading_id", pa.string()), ("flag_index", pa.int64()), ("deliverable", pa.string()),
            ("span", pa.string()), ("category", pa.string()), ("status", pa.string()),
            ("materiality", pa.string())]))
        keys = labels.submissions()
        con.register("label_subs", pa.table({"system": [k[0] for k in keys], "task_id": [k[1] for k in keys]},
                                            schema=pa.schema([("system", pa.string()), ("task_id", pa.string())])))
        con.register("label_verdicts", pa.Table.from_pylist(
            [v.model_dump() for v in labels.verdicts],
            schema=pa.schema([(c, pa.string()) for c in ("system", "task_id", "criterion_id", "verdict")])))
        cols = ("grading_id, submission_id, system, task_id, area, status, n_criteria, task_score, audited, graded_at, "
                "repeat")
        con.execute(
            f"CREATE TEMP TABLE cur AS SELECT c.* FROM ({current_gradings_sql(f'(SELECT {cols} FROM submissions_in)')}) c "
            "JOIN label_subs l USING (system, task_id)"
        )
        cur = con.sql("SELECT system, task_id, grading_id, submission_id, status, n_criteria, task_score, audited "
                      "FROM cur ORDER BY submission_id").fetchall()
        rows = [dict(zip(("submission_id", "area", "judge", "judge_family", "judge_model", "criterion_id",
                          "verdict", "expert"), r, strict=True)) for r in con.sql(
            "SELECT c.submission_id, c.area, v.judge, v.judge_family, v.judge_model, v.criterion_id, v.verdict, "
            "l.verdict FROM verdicts_in v JOIN cur c USING (grading_id) JOIN label_verdicts l "
            "ON l.system = c.system AND l.task_id = c.task_id AND l.criterion_id = v.criterion_id "
            "WHERE c.status = 'complete' AND v.verdict IN ('pass', 'fail') "
            "ORDER BY c.submission_id, v.criterion_id, v.judge").fetchall()]
        flag_rows = con.sql(
            "SELECT f.grading_id, f.flag_index, f.deliverable, f.span, f.category, f.status, f.materiality "
            "FROM flags_in f JOIN cur c USING (grading_id) ORDER BY f.grading_id, f.flag_index").fetchall()
    finally:
        con.close()
    flags_by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for gid, idx, deliverable, span, category, status, materiality in flag_rows:
        flags_by[str(gid)].append({"flag_index": idx, "deliverable": deliverable, "span": span,
                                   "category": category, "status": status, "materiality": materiality})
    complete = {(s, t): (g, sid, int(n), float(ts or 0.0), bool(a))
                for s, t, g, sid, st, n, ts, a in cur if st == "complete"}
    in_run = {(s, t) for s, t, *_ in cur}
    graded = {sid: (n, ts) for g, sid, n, ts, a in complete.values()}
    audited = {k: v[0] for k, v in complete.items() if v[4]}
    notes = []
    if not labels.verdicts:
        notes.append("the labels have no verdicts: judges and panel are not calibrated")
    if not labels.hallucinations:
        notes.append("the labels have no hallucinations: the auditor's recall is undefined")
    labelled = set(keys)
    return Calibration(
        run_id=run.run_id, labels=labels.source, seed=seed, bootstrap_samples=samples,
        labelled_submissions=len(keys), matched_submissions=len(labelled & set(complete)),
        not_in_run=len(labelled - in_run), not_complete=len((labelled & in_run) - set(complete)),
        judges=cal.judge_rows(rows), panel=cal.panel(rows, graded),
        auditor=cal.auditor(labels, audited, labelled, flags_by),
        truncation=truncation_rates(calls) if calls is not None else [], notes=notes,
    )


_FLAT_ESTIMATES = ("accuracy", "kappa", "false_pass_rate", "false_fail_rate")


def judges_table(rows: Sequence[JudgeCalibration]) -> pa.Table:
    """Judge calibration rows as a flat table (each estimate → value, `_low`, `_high`, `_n`)."""
    records = []
    for r in rows:
        rec: dict[str, Any] = r.model_dump(exclude=set(_FLAT_ESTIMATES))
        for name in _FLAT_ESTIMATES:
            rec.update(getattr(r, name).columns(name))
        records.append(rec)
    fields = [pa.field("judge", pa.string()), pa.field("family", pa.string()), pa.field("model", pa.string()),
              pa.field("area", pa.string()), pa.field("items", pa.int64()), pa.field("expert_passes", pa.int64()),
              pa.field("expert_fails", pa.int64())]
    for name in _FLAT_ESTIMATES:
        fields += interval_fields(name)
    return pa.Table.from_pylist(records, schema=pa.schema(fields))
