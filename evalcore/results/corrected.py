"""Label-corrected rates: each system's rates re-estimated from expert labels on a uniform random sample.

Why: the leaderboard's rates are the judges'. With experts' labels on a *uniform random* sample of
submissions, prediction-powered inference (`evalcore.results.ppi`) gives rates that are unbiased
with respect to the experts and intervals that stay valid, using the judges' scores of every other
submission to narrow them. `tribunal reduce --corrected` puts them beside the judges' own.

What is corrected, per system (the leaderboard's populations, so the two sit side by side):

* the headline rate (hc pass rate): the judges' hc score of a submission against the expert's,
  which is the protocol's rules applied to a single perfect rater: 1 when the expert passes every
  criterion and upholds no material hallucination, else 0 (`scoring.all_pass`, `scoring.gate`);
* the criterion pass rate: the panel's share of passed verdicts against the expert's share of
  passed criteria;
* material hallucinations per audited task: the audit's confirmed material flags against the
  expert's material count, over the submissions the audit ran on.

The judges' scores are the raw panel's (no decision applied): they are the predictions, and an
expert decision on an unlabelled submission would make them partly expert (the leaderboard row in
force has them applied; both are shown).

**Only a uniform random sample counts.** The order is seeded (`sample_order`: an md5 of the seed,
the system and the task, per system), and a system's labelled submissions must be the first K of
its order, every one of them labelled whole: K is the furthest position the sample reached, and a
submission skipped before it (or left half-labelled) makes the sample the reviewers' choice, not
chance. That is refused with the submission named (`SampleRefused`), never estimated. Whatever
was decided outside the sample — the material-first queue's flags, the split criteria — never
counts: it is selected by what the judges said, the very thing being corrected.

A submission is labelled **whole** when every criterion of its current grading has an expert
verdict and every flag the audit raised (merged ones aside) an expert decision: from the review's
`full` section (`experts_from_decisions`), or from a labels file that labels every criterion
(`experts_from_labels`; its hallucination labels are exhaustive, so it also counts hallucinations
the audit never raised — decisions can only judge the flags that were raised).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field

from evalcore.errors import InputError
from evalcore.grading import scoring
from evalcore.results.adjudications import Adjudication
from evalcore.results.labels import Labels
from evalcore.results.ppi import COUNT, RATE, Bounds, labels_only, ppi_mean
from evalcore.results.stats import CONFIDENCE, Interval

RateName = Literal["hc_pass_rate", "criterion_pass_rate", "material_per_task"]
RATES: tuple[RateName, ...] = ("hc_pass_rate", "criterion_pass_rate", "material_per_task")
"""The rates corrected, by their leaderboard names."""
_BOUNDS: dict[str, Bounds] = {"hc_pass_rate": RATE, "criterion_pass_rate": RATE, "material_per_task": COUNT}

METHOD = (
    "prediction-powered inference of a mean (Angelopoulos et al., Science 2023): the judges' mean over the "
    "unlabelled submissions plus the mean (expert - judges) over the labelled ones; 95% normal interval from the "
    "two variances; labels: a uniform random sample of whole submissions (seeded order, a prefix per system)"
)

SubmissionKey = tuple[str, str]
"""(system, task_id)."""


class ExpertScore(BaseModel):
    """One whole-labelled submission, scored by the experts with the protocol's rules."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    system: str
    task_id: str
    all_pass: bool = Field(description="The expert passed every criterion.")
    criterion_pass_rate: float = Field(ge=0.0, le=1.0, description="Share of criteria the expert passed.")
    material: int = Field(ge=0, description="Material hallucinations by the expert's labels.")

    @property
    def hc_score(self) -> float:
        """The protocol's score for a single rater who is always right: all-pass, then the gate."""
        return scoring.gate(1.0 if self.all_pass else 0.0, self.material)


class ExpertSample(BaseModel):
    """What the experts labelled: the whole submissions, and those the sample reached but left partial."""

    source: str = Field(description="Where the labels came from (the run's decisions, or a labels file).")
    seed: int = Field(description="The seed of the sample's order (`sample_order`).")
    whole: list[ExpertScore] = Field(default_factory=list)
    reached: list[SubmissionKey] = Field(
        default_factory=list, description="Submissions the sample reached (some label, or a `full` decision).")
    partial: dict[str, str] = Field(
        default_factory=dict, description="'system::task' -> what is still undecided in a reached submission.")


class CorrectedRate(BaseModel):
    """One rate of one system: the judges' own, the prediction-powered one, and the labels alone."""

    rate: RateName
    judges: Interval = Field(description="The judges' rate, raw panel, bootstrap over tasks (the leaderboard's rule).")
    corrected: Interval = Field(description="Prediction-powered estimate and interval; n = the labels it rests on.")
    labels_only: Interval = Field(description="The labels' own mean and normal interval (what the labels alone give).")
    n_labels: int = Field(description="Labelled submissions in the rate's population.")
    n_unlabelled: int = Field(description="The rest of the population, where the judges' scores stand in.")


class CorrectedSystem(BaseModel):
    """One system's corrected rates."""

    system: str
    scored: int = Field(description="Complete submissions of benchmark tasks (the population).")
    n_labels: int = Field(description="Whole-labelled submissions of the uniform sample.")
    rates: list[CorrectedRate] = Field(default_factory=list)

    def rate(self, name: str) -> CorrectedRate | None:
        return next((r for r in self.rates if r.rate == name), None)


class CorrectedRates(BaseModel):
    """Every system's label-corrected rates (leaderboard.json's `corrected`)."""

    source: str
    seed: int
    confidence: float = CONFIDENCE
    method: str = METHOD
    n_labels: int = Field(description="Whole-labelled submissions used, all systems.")
    systems: list[CorrectedSystem]
    notes: list[str] = Field(default_factory=list)


class SampleRefused(InputError):
    """The labels are not a uniform random sample: no corrected rate is computed from them."""


# --------------------------------------------------------------------------------------------
# The sample's order and the uniformity rule
# --------------------------------------------------------------------------------------------


def sample_key(seed: int, system: str, task_id: str) -> str:
    """A submission's place in the seeded order: the same on every machine, independent of the others."""
    return hashlib.md5(f"{seed}|full|{system}|{task_id}".encode()).hexdigest()


def sample_order(seed: int, submissions: Iterable[SubmissionKey]) -> list[SubmissionKey]:
    """The submissions in their seeded random order (the order the review's `full` section serves)."""
    return sorted(set(submissions), key=lambda k: (sample_key(seed, *k), k))


def labelled_prefix(
    order: Sequence[SubmissionKey], whole: Iterable[SubmissionKey], reached: Iterable[SubmissionKey],
    partial: Mapping[str, str] | None = None,
) -> tuple[list[SubmissionKey], str | None]:
    """One system's labelled sample: the first K of its `order`, K the furthest position reached.

    Returns the labelled submissions and None, or (nothing, why) when a submission before the
    furthest one is not labelled whole: a gap makes the sample the reviewers' choice.
    """
    whole_set = set(whole)
    position = {k: i for i, k in enumerate(order)}
    marks = [position[k] for k in {*whole_set, *reached} if k in position]
    if not marks:
        return [], None
    end = max(marks) + 1
    furthest = order[end - 1]
    for key in order[:end]:
        if key not in whole_set:
            sid = f"{key[0]}::{key[1]}"
            what = (partial or {}).get(sid)
            state = f"is only partly labelled ({what})" if what else "is not labelled"
            return [], (f"{sid} {state}, yet {furthest[0]}::{furthest[1]}, later in the seeded order, is: a sample "
                        "with a gap is chosen by its reviewers, not at random. Label it whole (the review's full "
                        "section serves it), or take back the later labels")
    return list(order[:end]), None


# --------------------------------------------------------------------------------------------
# Expert scores from the review's decisions or from a labels file
# --------------------------------------------------------------------------------------------


def experts_from_decisions(
    source: str,
    gradings: Mapping[SubmissionKey, str],
    criteria: Mapping[str, Sequence[str]],
    flags: Mapping[str, Mapping[int, scoring.FlagOutcome]],
    latest: Mapping[tuple[str, ...], Adjudication],
) -> ExpertSample:
    """The sample the review's `full` section labelled, scored by the decisions in force.

    `gradings`: each complete current grading; `criteria` and `flags`: its criterion ids and its
    flags (merged ones left out) by grading id; `latest`: the decisions in force. A submission is
    reached when a decision from the `full` section names it, and whole when every criterion has a
    criterion decision in force and every flag a flag decision. Decisions made on another grading
    than the current one are not labels (a later sweep replaced what they judged).
    """
    full = [d for d in latest.values() if d.queue == "full"]
    seeds = sorted({d.seed for d in full if d.seed is not None})
    if not full:
        raise InputError(source, "no decision from the review's full section (a uniform random sample of whole "
                         "submissions): serve one with `tribunal review RUN --full K`, or give --labels")
    if len(seeds) != 1:
        said = ", ".join(str(s) for s in seeds) if seeds else "none"
        raise SampleRefused(source, f"the full section's decisions name {len(seeds)} sample seeds ({said}): one "
                            "uniform sample has one seed; decide the other sample's submissions again, or set its "
                            "decisions aside")

    def current(d: Adjudication) -> bool:
        gid = gradings.get((d.system, d.task_id))
        return gid is not None and (d.grading_id is None or d.grading_id == gid)

    reached = sorted({(d.system, d.task_id) for d in full if current(d)})
    decided: dict[SubmissionKey, list[Adjudication]] = {}
    for d in latest.values():
        if current(d):
            decided.setdefault((d.system, d.task_id), []).append(d)
    whole: list[ExpertScore] = []
    partial: dict[str, str] = {}
    for key, gid in sorted(gradings.items()):
        mine = decided.get(key, [])
        if not mine:
            continue
        verdicts = {str(d.criterion_id): d.decision for d in mine if d.kind == "criterion"}
        flag_decisions = {int(d.flag_index or 0): d for d in mine if d.kind == "flag"}
        crits, raised = list(criteria.get(gid, ())), flags.get(gid, {})
        open_crits = [c for c in crits if c not in verdicts]
        open_flags = [i for i in raised if i not in flag_decisions]
        if open_crits or open_flags or not crits:
            partial[f"{key[0]}::{key[1]}"] = (f"{len(open_crits)} of {len(crits)} criteria and {len(open_flags)} of "
                                              f"{len(raised)} flags undecided")
            continue
        material = 0
        for index, raw in raised.items():
            d = flag_decisions[index]
            outcome = scoring.adjudicated_flag(raw, d.decision, d.materiality)  # type: ignore[arg-type]
            material += scoring.counted_materiality(outcome.status, outcome.materiality) == "material"
        passed = [verdicts[c] == "pass" for c in crits]
        whole.append(ExpertScore(system=key[0], task_id=key[1], all_pass=all(passed),
                                 criterion_pass_rate=sum(passed) / len(passed), material=material))
    return ExpertSample(source=source, seed=seeds[0], whole=whole, reached=reached, partial=partial)


def experts_from_labels(
    labels: Labels, seed: int, gradings: Mapping[SubmissionKey, str], criteria: Mapping[str, Sequence[str]],
) -> ExpertSample:
    """The sample a labels file covers, scored by its labels (exhaustive: hallucinations the audit
    never raised count too). Whole = every criterion of the current grading has a verdict label."""
    verdicts: dict[SubmissionKey, dict[str, str]] = {}
    for v in labels.verdicts:
        verdicts.setdefault((v.system, v.task_id), {})[v.criterion_id] = v.verdict
    material: dict[SubmissionKey, int] = {}
    for h in labels.hallucinations:
        material[(h.system, h.task_id)] = material.get((h.system, h.task_id), 0) + (h.materiality == "material")
    reached = [k for k in labels.submissions() if k in gradings]
    whole: list[ExpertScore] = []
    partial: dict[str, str] = {}
    for key in reached:
        crits = list(criteria.get(gradings[key], ()))
        given = verdicts.get(key, {})
        open_crits = [c for c in crits if c not in given]
        if open_crits or not crits:
            partial[f"{key[0]}::{key[1]}"] = f"{len(open_crits)} of {len(crits)} criteria without a verdict label"
            continue
        passed = [given[c] == "pass" for c in crits]
        whole.append(ExpertScore(system=key[0], task_id=key[1], all_pass=all(passed),
                                 criterion_pass_rate=sum(passed) / len(passed), material=material.get(key, 0)))
    return ExpertSample(source=labels.source, seed=seed, whole=whole, reached=reached, partial=partial)


# --------------------------------------------------------------------------------------------
# The estimates
# --------------------------------------------------------------------------------------------


def _column(table: pa.Table, name: str, fill: float | bool = 0.0) -> list[float]:
    return [float(x) for x in table.column(name).fill_null(fill).to_pylist()]


def corrected_rates(
    current: pa.Table,
    tasks: Iterable[str],
    sample: ExpertSample,
    judges: Mapping[str, Mapping[str, Interval]],
    *,
    confidence: float = CONFIDENCE,
) -> CorrectedRates:
    """Every system's corrected rates from its raw current gradings and the experts' sample.

    `current`: one row per current grading with the raw panel's scores (columns system, task_id,
    status, hc_score, criterion_pass_rate, material_flags, audited); only complete gradings of
    benchmark `tasks` are the population. `judges[system][rate]`: the judges' own interval of each
    rate (the raw leaderboard's), shown beside. Refuses (`SampleRefused`, naming the submission)
    when a system's labels are not a prefix of its seeded order.
    """
    bench = set(tasks)
    keep = pc.and_(pc.equal(current.column("status"), "complete"),
                   pc.is_in(current.column("task_id"), value_set=pa.array(sorted(bench), pa.string())))
    rows = current.filter(keep.fill_null(False))
    systems, task_ids = rows.column("system").to_pylist(), rows.column("task_id").to_pylist()
    hc, crit = _column(rows, "hc_score"), _column(rows, "criterion_pass_rate")
    material, audited = _column(rows, "material_flags"), _column(rows, "audited", False)
    by_system: dict[str, list[int]] = {}
    for i, s in enumerate(systems):
        by_system.setdefault(str(s), []).append(i)
    experts = {(e.system, e.task_id): e for e in sample.whole}
    reached = [k for k in sample.reached if k[0] in by_system]
    refusals: list[str] = []
    out: list[CorrectedSystem] = []
    notes: list[str] = []
    outside = sorted(f"{s}::{t}" for s, t in {*experts, *sample.reached}
                     if s not in by_system or t not in bench)
    if outside:
        notes.append(f"{len(outside)} labelled submission(s) are not complete gradings of benchmark tasks in this run "
                     f"(e.g. {outside[0]}): not used")
    for system in sorted(by_system):
        idx = by_system[system]
        order = sample_order(sample.seed, [(system, str(task_ids[i])) for i in idx])
        labelled, why = labelled_prefix(order, [k for k in experts if k[0] == system],
                                        [k for k in reached if k[0] == system], sample.partial)
        if why is not None:
            refusals.append(f"{system}: {why}")
            continue
        chosen = set(labelled)
        row_of = {(system, str(task_ids[i])): i for i in idx}
        lab = [row_of[k] for k in labelled]
        unl = [i for i in idx if (system, str(task_ids[i])) not in chosen]
        ys = [experts[k] for k in labelled]
        rates: list[CorrectedRate] = []
        for name in RATES:
            f_all = {"hc_pass_rate": hc, "criterion_pass_rate": crit, "material_per_task": material}[name]
            in_pop = (lambda i: bool(audited[i])) if name == "material_per_task" else (lambda i: True)
            lab_here = [(i, y) for i, y in zip(lab, ys, strict=True) if in_pop(i)]
            y = np.asarray([{"hc_pass_rate": e.hc_score, "criterion_pass_rate": e.criterion_pass_rate,
                             "material_per_task": float(e.material)}[name] for _, e in lab_here], dtype=np.float64)
            f_lab = np.asarray([f_all[i] for i, _ in lab_here], dtype=np.float64)
            f_unl = np.asarray([f_all[i] for i in unl if in_pop(i)], dtype=np.float64)
            rates.append(CorrectedRate(
                rate=name, judges=judges.get(system, {}).get(name, Interval(value=None)),
                corrected=ppi_mean(y, f_lab, f_unl, confidence=confidence, bounds=_BOUNDS[name]),
                labels_only=labels_only(y, confidence=confidence, bounds=_BOUNDS[name]),
                n_labels=int(y.size), n_unlabelled=int(f_unl.size),
            ))
        out.append(CorrectedSystem(system=system, scored=len(idx), n_labels=len(labelled), rates=rates))
    if refusals:
        raise SampleRefused(sample.source, "the labels are not a uniform random sample (seed "
                            f"{sample.seed}), so no corrected rate is computed: " + "; ".join(refusals))
    unlabelled = [c.system for c in out if c.n_labels == 0]
    if unlabelled:
        notes.append(f"no labels for {', '.join(unlabelled)}: nothing to correct with")
    few = [c.system for c in out if 0 < c.n_labels < 30]
    if few:
        notes.append(f"fewer than 30 labels for {', '.join(few)}: the normal interval is approximate there")
    return CorrectedRates(source=sample.source, seed=sample.seed, confidence=confidence,
                          n_labels=sum(c.n_labels for c in out), systems=out, notes=notes)
