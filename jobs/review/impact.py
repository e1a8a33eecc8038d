"""What a decision would change: the task's scores and the system's headline rate, before and after.

The rules are not restated here: a submission is rescored by `evalcore.results.adjudications.rescore`
(which applies `adjudicated_flag`, `adjudicated_panel` and `adjudicated_scores`; the reduction's
`adjudications.apply` calls the same function) over that one grading's rows. "Before" is the run with
the decisions in force; "after" is the same with this item's decision replaced by the choice.

Each grading's rows are read and turned into scoring inputs once (`adjudications.GradingInputs`,
kept for the most recent gradings) and every what-if rescores them in memory. Why: ordering a lab
run's queue asks about a thousand what-ifs; a DuckDB connection and two queries per what-if made
`tribunal review` take a minute and a half to start.

The headline rate is the mean hallucination-controlled score over the system's complete current
gradings, with the decisions in force applied. It is kept incrementally: the raw sum, plus, for
each adjudicated submission, its rescored score minus its raw score (each cached by the decision
ids in force), so a page never rescans the run.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from evalcore.results import adjudications as adj
from evalcore.results.adjudications import Adjudication
from jobs.review.queue import QueueItem, RunData


@dataclass(frozen=True)
class Scores:
    """One submission's scores under some set of decisions."""

    task_score: float | None
    hc_score: float | None
    material: int
    gated: bool
    needs_audit: bool = False
    """A decision lifted an unaudited score above zero: the audit never ran on it (`Rescored.needs_audit`)."""


@dataclass(frozen=True)
class Outcome:
    """One possible decision on an item and what it would do."""

    key: str
    """The keyboard key that chooses it."""
    decision: str
    materiality: str | None
    label: str
    task_before: float | None
    task_after: float | None
    hc_before: float | None
    hc_after: float | None
    rate_before: float | None
    rate_after: float | None
    needs_audit: bool = False

    @property
    def changes(self) -> bool:
        return self.hc_before != self.hc_after or self.task_before != self.task_after


PREVIEW = "(preview)"
"""The reviewer of a what-if decision (never recorded)."""


def preview(item: QueueItem, run_id: str, decision: str, materiality: str | None = None) -> Adjudication:
    """A decision on `item` that is never recorded: what-if input for the rescoring."""
    return Adjudication(
        run_id=run_id, kind=item.kind, system=item.system, task_id=item.task_id, flag_index=item.flag_index,
        criterion_id=item.criterion_id, judge=item.judge, decision=decision,  # type: ignore[arg-type]
        materiality=materiality,  # type: ignore[arg-type]
        reviewer=PREVIEW, reason=PREVIEW,
    )


class Scorer:
    """Rescores submissions under decisions, and keeps each system's headline rate."""

    def __init__(self, data: RunData, inputs_cache: int = 256) -> None:
        self.data = data
        complete = data.complete()
        self._raw_sum: dict[str, float] = defaultdict(float)
        self._n: dict[str, int] = defaultdict(int)
        for system, hc in zip(complete.column("system").to_pylist(), complete.column("hc_score").to_pylist(),
                              strict=True):
            self._raw_sum[system] += float(hc or 0.0)
            self._n[system] += 1
        self._complete_gids = set(complete.column("grading_id").to_pylist())
        self._cache: dict[tuple[str, frozenset[str]], Scores] = {}
        self._inputs: OrderedDict[str, adj.GradingInputs] = OrderedDict()
        self._raw: dict[str, Scores] = {}
        self._inputs_cache = inputs_cache
        self._lock = threading.Lock()

    def raw(self, grading_id: str) -> Scores:
        """The submission's scores as graded (kept: a queue asks them of each item's submission)."""
        with self._lock:
            if grading_id in self._raw:
                return self._raw[grading_id]
        row = self.data.row(grading_id)
        scores = Scores(row["task_score"], row["hc_score"], int(row["material_flags"] or 0), bool(row["gated"]))
        with self._lock:
            self._raw[grading_id] = scores
        return scores

    def inputs(self, grading_id: str) -> adj.GradingInputs:
        """The grading's scoring inputs, read once (the most recent `inputs_cache` gradings are kept)."""
        with self._lock:
            if grading_id in self._inputs:
                self._inputs.move_to_end(grading_id)
                return self._inputs[grading_id]
        rows = self.data.grading_rows(grading_id)
        v, f = rows.verdicts, rows.flags
        inputs = adj.grading_inputs(
            zip(*(v.column(c).to_pylist() for c in ("judge", "criterion_id", "verdict")), strict=True),
            zip(*(f.column(c).to_pylist() for c in ("flag_index", "status", "materiality", "span")), strict=True),
            bool(self.data.row(grading_id)["audited"]),
        )
        with self._lock:
            self._inputs[grading_id] = inputs
            while len(self._inputs) > self._inputs_cache:
                self._inputs.popitem(last=False)
        return inputs

    def scores(self, grading_id: str, decisions: Sequence[Adjudication]) -> Scores:
        """The submission's scores with `decisions` (on its items; the last one per item counts) applied
        by the scoring rules; decisions made on another grading are set aside, as the reduction does."""
        if not decisions:
            return self.raw(grading_id)
        ids = frozenset(d.decision_id for d in decisions)
        with self._lock:
            if (grading_id, ids) in self._cache:
                return self._cache[(grading_id, ids)]
        raw = self.raw(grading_id)
        sid = str(self.data.row_table(grading_id).column("submission_id")[0].as_py())
        kept, _ = adj.on_grading(list({d.item: d for d in decisions}.values()), grading_id, sid)
        if not kept:
            result = raw
        else:
            rescored = adj.rescore(self.inputs(grading_id), kept, sid)
            new = rescored.scores
            result = Scores(new.task_score, new.hc_score, int(new.material), bool(new.gated),
                            needs_audit=rescored.needs_audit) if new.complete else replace(
                raw, needs_audit=rescored.needs_audit)
        if not any(d.reviewer == PREVIEW for d in decisions):  # what-ifs are never asked twice
            with self._lock:
                self._cache[(grading_id, ids)] = result
        return result

    def in_force(self, latest: Mapping[tuple[str, ...], Adjudication]) -> dict[str, list[Adjudication]]:
        """Decisions in force grouped by the grading they apply to (complete current gradings only)."""
        out: dict[str, list[Adjudication]] = defaultdict(list)
        for d in latest.values():
            gid = self.data.grading_of(d.system, d.task_id)
            if gid is not None and gid in self._complete_gids:
                out[gid].append(d)
        return out

    def system_rate(self, system: str, by_grading: Mapping[str, Sequence[Adjudication]]) -> float | None:
        """Mean hc score over the system's complete current gradings, with the decisions in force."""
        n = self._n.get(system, 0)
        if not n:
            return None
        total = self._raw_sum[system]
        for gid, decisions in by_grading.items():
            if self.data.row(gid)["system"] != system:
                continue
            total += float(self.scores(gid, decisions).hc_score or 0.0) - float(self.raw(gid).hc_score or 0.0)
        return total / n

    def submission_changes(
        self, item: QueueItem, choices: Sequence[tuple[str, str, str | None, str]],
        by_grading: Mapping[str, Sequence[Adjudication]],
    ) -> tuple[Scores, list[Scores]]:
        """The item's submission with the decisions in force (`in_force`), and with each choice in place
        of the item's own decision. Why apart from `outcomes`: ordering the queue needs only these, and
        the system's rate (a pass over every decision of the system) per item made it quadratic."""
        here = [d for d in by_grading.get(item.grading_id, []) if d.item != item.key]
        before = self.scores(item.grading_id, by_grading.get(item.grading_id, []))
        afters = [self.scores(item.grading_id, [*here, preview(item, self.data.run_id, decision, materiality)])
                  for _, decision, materiality, _ in choices]
        return before, afters

    def outcomes(
        self, item: QueueItem, choices: Sequence[tuple[str, str, str | None, str]],
        latest: Mapping[tuple[str, ...], Adjudication],
    ) -> list[Outcome]:
        """For each choice (key, decision, materiality, label): the item's submission and system, before → after."""
        by_grading = self.in_force(latest)
        before, afters = self.submission_changes(item, choices, by_grading)
        rate = self.system_rate(item.system, by_grading)
        n = self._n.get(item.system, 0)
        out = []
        for (key, decision, materiality, label), after in zip(choices, afters, strict=True):
            rate_after = None if rate is None or not n else rate + (
                float(after.hc_score or 0.0) - float(before.hc_score or 0.0)) / n
            out.append(Outcome(key=key, decision=decision, materiality=materiality, label=label,
                               task_before=before.task_score, task_after=after.task_score,
                               hc_before=before.hc_score, hc_after=after.hc_score,
                               rate_before=rate, rate_after=rate_after, needs_audit=after.needs_audit))
        return out



_SECTION_ORDER = {"material": 0, "split": 1, "sample": 2, "full": 3}


def rank_by_impact(
    queue: Sequence[QueueItem], scorer: Scorer, choices_of: Callable[[QueueItem], Sequence[tuple[str, str, str | None, str]]],
    latest: Mapping[tuple[str, ...], Adjudication],
) -> list[QueueItem]:
    """The queue ordered so an expert's time goes where scores move: first the items a decision can
    change a task score or the gate of, by the size of that change (hc score, then task score),
    then the rest in their section order; ties keep the queue's order; the whole-submission sample
    (`full`) last, in its seeded order. Items are renumbered.

    Sizes come from the rescoring itself (`Scorer`, the reduction's rules), never restated: for a
    criterion or verdict, the largest change over its choices (`choices_of`); for a material flag,
    the change if every material flag of its submission were overturned, since one of several
    cannot lift the gate alone but each stands between the task and its score. Why: a lab run's
    queue led with 301 split criteria in alphabetical order of system, most of which move nothing.
    """
    by_grading = scorer.in_force(latest)
    material: dict[str, list[QueueItem]] = defaultdict(list)
    for i in queue:
        if i.section == "material":
            material[i.grading_id].append(i)
    gate_lift: dict[str, tuple[float, float]] = {}
    sized: list[QueueItem] = []
    whole = [item for item in queue if item.section == "full"]  # the uniform sample keeps its seeded order
    for item in (i for i in queue if i.section != "full"):
        if item.section == "material" and item.kind == "flag":
            if item.grading_id not in gate_lift:
                here = by_grading.get(item.grading_id, [])
                mine = {i.key for i in material[item.grading_id]}
                kept = [d for d in here if d.item not in mine]
                overturned = [preview(i, scorer.data.run_id, "overturned") for i in material[item.grading_id]]
                before = scorer.scores(item.grading_id, here)
                after = scorer.scores(item.grading_id, [*kept, *overturned])
                gate_lift[item.grading_id] = (_delta(before.hc_score, after.hc_score),
                                              _delta(before.task_score, after.task_score))
            hc, task = gate_lift[item.grading_id]
        else:
            before, afters = scorer.submission_changes(item, choices_of(item), by_grading)
            hc = max((_delta(before.hc_score, a.hc_score) for a in afters), default=0.0)
            task = max((_delta(before.task_score, a.task_score) for a in afters), default=0.0)
        sized.append(replace(item, score_change=hc, task_change=task))
    ranked = sorted(sized, key=lambda i: (not i.moves_score, -i.score_change, -i.task_change,
                                          _SECTION_ORDER[i.section], i.n))
    return [replace(item, n=k) for k, item in enumerate([*ranked, *whole])]


def _delta(before: float | None, after: float | None) -> float:
    return abs(float(after or 0.0) - float(before or 0.0))
