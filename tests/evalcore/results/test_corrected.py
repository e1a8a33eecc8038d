"""Label-corrected rates (`evalcore.results.corrected`): planted judge bias recovered, uniform samples only.

The planted panel: three judges grade C criteria of N tasks of one system whose true verdicts are
known; one judge is lenient (it passes a known share of the criteria that truly fail). The experts'
labels are the truth on the first n submissions of the seeded order. Over many seeds the corrected
interval must cover the true rate (≥ 90 %), the judges' own bootstrap interval far less often;
with unbiased judges the corrected interval must be narrower than the labels' own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.errors import InputError
from evalcore.grading import scoring
from evalcore.results import stats
from evalcore.results.adjudications import Adjudication
from evalcore.results.corrected import (
    ExpertSample,
    ExpertScore,
    SampleRefused,
    corrected_rates,
    experts_from_decisions,
    experts_from_labels,
    labelled_prefix,
    sample_order,
)
from evalcore.results.labels import Labels, VerdictLabel

SYSTEM = "planted"
SEEDS = range(200)


@dataclass(frozen=True)
class Planted:
    """One planted system: truth and panel verdicts (tasks × criteria), as the sweep would score them."""

    truth: npt.NDArray[np.bool_]
    judges: list[npt.NDArray[np.bool_]]

    @property
    def tasks(self) -> list[str]:
        return [f"area/task-{i:04d}" for i in range(self.truth.shape[0])]

    def table(self) -> pa.Table:
        """The raw current gradings: the panel's task score (no hallucinations: hc = task score)."""
        all_pass = np.stack([j.all(axis=1) for j in self.judges])
        task_score = all_pass.mean(axis=0)
        crit = np.stack(self.judges).mean(axis=(0, 2))
        n = self.truth.shape[0]
        return pa.table({
            "system": [SYSTEM] * n, "task_id": self.tasks, "status": ["complete"] * n, "hc_score": task_score,
            "criterion_pass_rate": crit, "material_flags": np.zeros(n), "audited": task_score > 0,
            "grading_id": [f"g{i}" for i in range(n)],
        })

    def true_rates(self) -> dict[str, float]:
        """The rates of the population the tasks are drawn from (what an interval over tasks is about):
        a task's criteria pass with probability p ~ Beta(A, B), so E[all pass] = E[p^C] = Π (A+k)/(A+B+k)."""
        c = self.truth.shape[1]
        return {"hc_pass_rate": float(np.prod([(A + k) / (A + B + k) for k in range(c)])),
                "criterion_pass_rate": A / (A + B)}

    def experts(self, seed: int, n_labels: int) -> ExpertSample:
        """The truth as expert labels on the first `n_labels` of the seeded order."""
        row = {t: i for i, t in enumerate(self.tasks)}
        chosen = sample_order(seed, [(SYSTEM, t) for t in self.tasks])[:n_labels]
        whole = [ExpertScore(system=SYSTEM, task_id=t, all_pass=bool(self.truth[row[t]].all()),
                             criterion_pass_rate=float(self.truth[row[t]].mean()), material=0) for _, t in chosen]
        return ExpertSample(source="planted", seed=seed, whole=whole, reached=chosen)


A, B = 8.0, 1.5
"""Task difficulty: a task's criteria truly pass with probability p ~ Beta(A, B)."""


def plant(seed: int, *, n_tasks: int = 400, n_criteria: int = 5, leniency: float = 0.0, noise: float = 0.0) -> Planted:
    """Tasks of varying difficulty; judge 0 passes `leniency` of the failing criteria; every judge
    flips `noise` of its verdicts (unbiased noise keeps the judges' rate near the truth's)."""
    rng = np.random.default_rng(seed)
    p = rng.beta(A, B, size=(n_tasks, 1))
    truth = rng.random((n_tasks, n_criteria)) < p
    judges = []
    for k in range(3):
        v = truth.copy()
        if k == 0 and leniency:
            v |= rng.random(truth.shape) < leniency
        if noise:
            v ^= rng.random(truth.shape) < noise
        judges.append(v)
    return Planted(truth=truth, judges=judges)


def judges_interval(values: npt.NDArray[np.float64], seed: int) -> stats.Interval:
    """The judges' own interval, by the leaderboard's rule (bootstrap over tasks)."""
    return stats.bootstrap_mean(values, rng=stats.rng_for(seed, SYSTEM, "ALL"), n_resamples=500)


def covers(interval: stats.Interval, truth: float) -> bool:
    assert interval.low is not None and interval.high is not None
    return interval.low <= truth <= interval.high


def test_a_lenient_judges_rates_are_covered_by_the_corrected_interval_in_90_percent_of_seeds_and_rarely_by_their_own() -> None:
    covered = {"hc_pass_rate": 0, "criterion_pass_rate": 0}
    judged = {"hc_pass_rate": 0, "criterion_pass_rate": 0}
    for seed in SEEDS:
        planted = plant(seed, leniency=0.5)
        table = planted.table()
        column = {"hc_pass_rate": "hc_score", "criterion_pass_rate": "criterion_pass_rate"}
        own = {name: judges_interval(np.asarray(table.column(column[name]).to_numpy(), dtype=np.float64), seed)
               for name in covered}
        result = corrected_rates(table, planted.tasks, planted.experts(seed, 80), {SYSTEM: own})
        (system,) = result.systems
        for name, truth in planted.true_rates().items():
            rate = system.rate(name)
            assert rate is not None and rate.n_labels == 80 and rate.n_unlabelled == 320
            covered[name] += covers(rate.corrected, truth)
            judged[name] += covers(rate.judges, truth)
    for name in covered:
        print(f"{name}: corrected interval covers the true rate in {covered[name]}/{len(SEEDS)} seeds, "
              f"the judges' own in {judged[name]}/{len(SEEDS)}")
    assert all(covered[name] >= 0.9 * len(SEEDS) for name in covered)
    assert all(judged[name] <= 0.25 * len(SEEDS) for name in judged)


def test_with_unbiased_judges_the_corrected_interval_is_narrower_than_the_labels_alone_give() -> None:
    ratios = []
    covered = 0
    for seed in SEEDS:
        planted = plant(seed, noise=0.02)
        result = corrected_rates(planted.table(), planted.tasks, planted.experts(seed, 80), {})
        rate = result.systems[0].rate("hc_pass_rate")
        assert rate is not None
        c, lab = rate.corrected, rate.labels_only
        assert c.low is not None and c.high is not None and lab.low is not None and lab.high is not None
        ratios.append((c.high - c.low) / (lab.high - lab.low))
        covered += covers(c, planted.true_rates()["hc_pass_rate"])
    narrower = sum(r < 1 for r in ratios)
    print(f"unbiased judges: corrected/labels-only width median {np.median(ratios):.2f}, narrower in "
          f"{narrower}/{len(SEEDS)} seeds, corrected covers the truth in {covered}/{len(SEEDS)}")
    assert narrower == len(SEEDS)
    assert float(np.median(ratios)) < 0.75
    assert covered >= 0.9 * len(SEEDS)


# --------------------------------------------------------------------------------------------
# The sample: a prefix of the seeded order, or refused
# --------------------------------------------------------------------------------------------


ORDER = [("s", f"t{i}") for i in range(6)]


def test_the_labelled_sample_is_the_first_k_of_the_seeded_order() -> None:
    assert labelled_prefix(ORDER, ORDER[:3], ORDER[:3]) == (ORDER[:3], None)
    assert labelled_prefix(ORDER, [], []) == ([], None)


def test_a_gap_in_the_seeded_order_is_refused_naming_the_skipped_submission() -> None:
    labelled, why = labelled_prefix(ORDER, [ORDER[0], ORDER[2]], [ORDER[0], ORDER[2]])
    assert labelled == [] and why is not None
    assert why.startswith("s::t1 is not labelled, yet s::t2, later in the seeded order, is")


def test_a_half_labelled_submission_before_the_last_one_is_refused_with_what_is_left() -> None:
    _, why = labelled_prefix(ORDER, [ORDER[0], ORDER[2]], ORDER[:3], {"s::t1": "2 of 5 criteria undecided"})
    assert why is not None and "s::t1 is only partly labelled (2 of 5 criteria undecided)" in why


def test_the_last_submission_reached_may_be_half_labelled_it_is_left_out() -> None:
    assert labelled_prefix(ORDER, ORDER[:2], ORDER[:3]) == ([], labelled_prefix(ORDER, ORDER[:2], ORDER[:3])[1])
    # reached but not whole at the end: the sample reached it, so it is a gap all the same
    _, why = labelled_prefix(ORDER, ORDER[:2], ORDER[:3])
    assert why is not None and "s::t2 is not labelled" in why


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 30), k=st.integers(0, 30))
def test_any_prefix_of_any_seeds_order_is_accepted_and_dropping_any_earlier_one_is_refused(seed: int, n: int, k: int) -> None:
    order = sample_order(seed, [("s", f"t{i}") for i in range(n)])
    k = min(k, n)
    assert labelled_prefix(order, order[:k], order[:k]) == (order[:k], None)
    if k >= 2:
        holed = order[1:k]
        assert labelled_prefix(order, holed, holed)[1] is not None


def test_the_seeded_order_depends_on_the_seed_and_not_on_the_other_submissions() -> None:
    subs = [("s", f"t{i}") for i in range(50)]
    assert sample_order(1, subs) != sample_order(2, subs)
    without = [k for k in sample_order(1, subs) if k != subs[7]]
    assert sample_order(1, [k for k in subs if k != subs[7]]) == without


def test_corrected_rates_refuse_a_sample_with_a_gap_naming_system_and_submission() -> None:
    planted = plant(3, n_tasks=40)
    sample = planted.experts(3, 10)
    holed = sample.model_copy(update={"whole": sample.whole[1:], "reached": sample.reached[1:]})
    with pytest.raises(SampleRefused, match=r"not a uniform random sample \(seed 3\).*planted: planted::area/task-"):
        corrected_rates(planted.table(), planted.tasks, holed, {})


# --------------------------------------------------------------------------------------------
# Whole submissions from decisions and from labels files
# --------------------------------------------------------------------------------------------


def _decision(kind: str, task: str, *, queue: str | None = "full", seed: int | None = 5, **kw: object) -> Adjudication:
    return Adjudication.model_validate({
        "run_id": "r", "kind": kind, "system": "s", "task_id": task, "reviewer": "A", "reason": "x",
        "queue": queue, "seed": seed, "grading_id": f"g-{task}", **kw})


def _latest(*ds: Adjudication) -> dict[tuple[str, ...], Adjudication]:
    return {d.item: d for d in ds}


GRADINGS = {("s", "t1"): "g-t1", ("s", "t2"): "g-t2"}
CRITERIA = {"g-t1": ["C-1", "C-2"], "g-t2": ["C-1", "C-2"]}
FLAGS = {"g-t1": {0: scoring.FlagOutcome("confirmed", "minor")}, "g-t2": {}}


def test_a_submission_is_whole_when_every_criterion_and_every_flag_is_decided_and_the_flags_count_as_decided() -> None:
    latest = _latest(
        _decision("criterion", "t1", criterion_id="C-1", decision="pass"),
        _decision("criterion", "t1", criterion_id="C-2", decision="pass"),
        _decision("flag", "t1", flag_index=0, decision="materiality", materiality="material"),
        _decision("criterion", "t2", criterion_id="C-1", decision="fail"),
    )
    sample = experts_from_decisions("run", GRADINGS, CRITERIA, FLAGS, latest)
    assert sample.whole == [ExpertScore(system="s", task_id="t1", all_pass=True, criterion_pass_rate=1.0, material=1)]
    assert sample.whole[0].hc_score == 0.0  # the expert's material flag gates the expert's all-pass
    assert sample.partial == {"s::t2": "1 of 2 criteria and 0 of 0 flags undecided"}
    assert sample.seed == 5 and sample.reached == [("s", "t1"), ("s", "t2")]


def test_decisions_outside_the_full_section_reach_no_submission_and_alone_are_refused() -> None:
    material_first = _decision("flag", "t1", flag_index=0, decision="upheld", queue="material", seed=None)
    with pytest.raises(InputError, match="no decision from the review's full section"):
        experts_from_decisions("run", GRADINGS, CRITERIA, FLAGS, _latest(material_first))
    latest = _latest(material_first, _decision("criterion", "t2", criterion_id="C-1", decision="pass"),
                     _decision("criterion", "t2", criterion_id="C-2", decision="pass"))
    sample = experts_from_decisions("run", GRADINGS, CRITERIA, FLAGS, latest)
    assert sample.reached == [("s", "t2")]  # t1 has a decision, but not from the uniform sample


def test_two_seeds_in_the_full_section_are_refused() -> None:
    latest = _latest(_decision("criterion", "t1", criterion_id="C-1", decision="pass", seed=1),
                     _decision("criterion", "t2", criterion_id="C-1", decision="pass", seed=2))
    with pytest.raises(SampleRefused, match=r"2 sample seeds \(1, 2\)"):
        experts_from_decisions("run", GRADINGS, CRITERIA, FLAGS, latest)


def test_a_decision_on_a_replaced_grading_is_no_label() -> None:
    old = _decision("criterion", "t1", criterion_id="C-1", decision="pass", grading_id="g-old")
    latest = _latest(old, _decision("criterion", "t2", criterion_id="C-1", decision="pass"))
    assert experts_from_decisions("run", GRADINGS, CRITERIA, FLAGS, latest).reached == [("s", "t2")]


def test_a_labels_file_labels_a_submission_whole_when_every_criterion_has_a_verdict() -> None:
    labels = Labels(source="gt.json", verdicts=[
        VerdictLabel(system="s", task_id="t1", criterion_id="C-1", verdict="pass"),
        VerdictLabel(system="s", task_id="t1", criterion_id="C-2", verdict="fail"),
        VerdictLabel(system="s", task_id="t2", criterion_id="C-1", verdict="pass"),
    ])
    sample = experts_from_labels(labels, 9, GRADINGS, CRITERIA)
    assert sample.whole == [ExpertScore(system="s", task_id="t1", all_pass=False, criterion_pass_rate=0.5, material=0)]
    assert sample.partial == {"s::t2": "1 of 2 criteria without a verdict label"}
