"""Test-retest figures (issue 39): planted judge noise is recovered, no noise reads as none, held
judges never count, a panel-only repeat is gated by its original's audit, material flags recur.

The planted noise is the emulated judges' own (`doubles.emulators.responders.PersonaSet.bend` on
real rubric prompts, each grading with its own fence boundary): the rows are what a retest against
the emulators writes, built without Ray so that many seeds fit in a second or two each.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from doubles.emulators.responders import EmulatedRequest, Persona, PersonaSet
from evalcore.prompts import render_rubric
from evalcore.results.repeatability import (
    FLAG_COLUMNS,
    SUBMISSION_COLUMNS,
    VERDICT_COLUMNS,
    grading_scores,
    repeatability,
)
from evalcore.schema import Criterion, Deliverable

CRITERIA = [Criterion(id=f"C-{c:03d}", title=f"criterion {c}", match_criteria=f"PASS if point {c} is made.")
            for c in range(1, 7)]


def _verdict(personas: PersonaSet, judge: str, sid: str, criterion: Criterion, boundary: str, base: str) -> str:
    """What the emulated judge answers in this grading: its base verdict bent by its persona."""
    p = render_rubric(task_id="t", instructions="Write the memo.", criterion=criterion,
                      deliverables=[Deliverable(name="memo", text=f"The memo of {sid}.")], boundary=boundary)
    request = EmulatedRequest(vendor=judge, api="chat", model=judge, system=p.system, user=p.prefix + p.suffix)
    persona = personas.for_request(request)
    answer = {"verdict": base, "reasoning": ""}
    return str(personas.bend(persona, request, answer)["verdict"]) if persona else base


def planted_run(seed: int, flip: float, *, n: int = 24, repeats: int = 2, held: str | None = None
                ) -> tuple[pa.Table, pa.Table, pa.Table]:
    """Submission and verdict rows of a run with `repeats` repeats of `n` submissions, every grading
    (the original too) drawn by judges that flip each verdict with probability `flip`."""
    rnd = random.Random(seed)
    personas = PersonaSet(seed=seed, personas={j: Persona(retest_flip=flip) for j in ("openai", "xai", "anthropic")})
    subs, verdicts = [], []
    for i in range(n):
        sid = f"sys-{i % 4}::task-{i // 4}"
        base = {c.id: "pass" if rnd.random() < 0.7 else "fail" for c in CRITERIA}
        for k in range(repeats + 1):
            gid = f"g{seed}-{i}-{k}"
            boundary = f"{rnd.getrandbits(64):016x}"  # drawn per grading, as the sweep draws it
            all_pass = 0
            for judge in ("openai", "xai", "anthropic"):
                fresh = k == 0 or judge != held
                said = [_verdict(personas, judge, sid, c, boundary if fresh else "orig", base[c.id]) for c in CRITERIA]
                all_pass += all(v == "pass" for v in said)
                for c, v in zip(CRITERIA, said, strict=True):
                    verdicts.append({"grading_id": gid, "judge": judge, "criterion_id": c.id, "verdict": v,
                                     "request_hash": f"{sid}|{judge}|{c.id}|{k if fresh else 0}"})
            score = all_pass / 3
            subs.append({"grading_id": gid, "submission_id": sid, "system": sid.split("::")[0],
                         "task_id": sid.split("::")[1], "status": "complete", "content_hash": f"h{i}",
                         "task_score": score, "audited": False, "material_flags": 0, "gated": False,
                         "hc_score": score, "graded_at": float(k), "repeat": k})
    return (pa.Table.from_pylist(subs).select(SUBMISSION_COLUMNS), pa.Table.from_pylist(verdicts).select(VERDICT_COLUMNS),
            pa.table({c: pa.array([], pa.int64() if c == "flag_index" else pa.string()) for c in FLAG_COLUMNS}))


def test_retest_recovers_a_planted_flip_rate_within_its_interval_in_at_least_90_percent_of_seeds() -> None:
    q = 0.1
    expected = 2 * q * (1 - q)  # two gradings of an item, each flipped with q: they differ with 2q(1-q)
    covered = {"panel": 0, "xai": 0}
    seeds = range(40)
    for seed in seeds:
        rep = repeatability(*planted_run(seed, q), seed=seed, samples=400)
        assert rep is not None
        by = {j.judge: j for j in [*rep.judges, rep.panel] if j is not None}
        for name in covered:
            iv = by[name].flip_rate
            assert iv.low is not None and iv.high is not None
            covered[name] += iv.low <= expected <= iv.high
    print(f"planted flip rate {expected:.3f}: covered in {covered} of {len(seeds)} seeds")
    assert covered["panel"] >= 0.9 * len(seeds) and covered["xai"] >= 0.9 * len(seeds)


def test_with_noise_0_the_figures_say_so_flip_rate_0_kappa_1_and_noise_free() -> None:
    rep = repeatability(*planted_run(3, 0.0), seed=3, samples=200)
    assert rep is not None and rep.noise_free
    assert rep.panel is not None and rep.panel.flips == 0 and rep.panel.flip_rate.value == 0.0
    assert rep.panel.flip_rate.high == 0.0 and rep.panel.kappa.value == 1.0
    assert rep.weak_spots() == [] and rep.task_score_change_rate.value == 0.0


def test_a_held_judge_whose_repeat_reused_the_originals_answer_is_never_counted_as_a_pair() -> None:
    rep = repeatability(*planted_run(5, 0.2, held="openai"), seed=5, samples=200)
    assert rep is not None
    assert {j.judge for j in rep.judges} == {"xai", "anthropic"}
    assert rep.panel is not None and rep.panel.pairs == 24 * 2 * 6 * 2


def test_the_criteria_that_flip_most_come_first_with_their_flipping_judges() -> None:
    rep = repeatability(*planted_run(11, 0.15), seed=11, samples=200)
    assert rep is not None
    rates = [c.flip_rate.value for c in rep.criteria]
    assert rates == sorted(rates, reverse=True)
    spots = rep.weak_spots(3)
    assert spots and all(c.flips == sum(c.flips_by_judge.values()) for c in spots)
    assert all(c.flip_rate.low is not None and c.flip_rate.low <= c.flip_rate.value <= c.flip_rate.high  # type: ignore[operator]
               for c in rep.criteria)


def _gated_rows() -> tuple[pa.Table, pa.Table, pa.Table]:
    def row(gid: str, k: int, score: float, audited: bool, material: int) -> dict[str, object]:
        hc = 0.0 if audited and material else score
        return {"grading_id": gid, "submission_id": "a::t", "system": "a", "task_id": "t", "status": "complete",
                "content_hash": "h", "task_score": score, "audited": audited, "material_flags": material,
                "gated": hc < score, "hc_score": hc, "graded_at": float(k), "repeat": k}
    subs = pa.Table.from_pylist([row("o", 0, 1.0, True, 1), row("r1", 1, 2 / 3, False, 0), row("r2", 2, 0.0, False, 0)])
    verdicts = pa.Table.from_pylist([{"grading_id": "o", "judge": "xai", "criterion_id": "C-1", "verdict": "pass",
                                      "request_hash": "h0"}])
    flags = pa.Table.from_pylist([{"grading_id": "o", "deliverable": "memo", "span": "Section 3.4 says so.",
                                   "status": "confirmed", "materiality": "material"}])
    return subs.select(SUBMISSION_COLUMNS), verdicts.select(VERDICT_COLUMNS), flags.select(FLAG_COLUMNS)


def test_a_panel_only_repeat_is_gated_by_its_originals_audit_and_a_score_0_repeat_is_not_gated() -> None:
    rep = repeatability(*_gated_rows(), seed=1, samples=100)
    assert rep is not None and rep.auditor is None  # no repeat audited: no recurrence figure
    (s,) = rep.per_submission
    assert s.gated and s.repeat_gated == [True, False]
    assert s.task_score_changes == 2 and s.gate_changes == 1
    assert grading_scores(_gated_rows()[0]) == {"a::t": [0.0, 0.0, 0.0]}


@pytest.mark.parametrize("recurs", [True, False])
def test_a_material_flag_recurs_when_an_audited_repeat_confirms_the_same_claim_as_material(recurs: bool) -> None:
    subs, verdicts, flags = _gated_rows()
    subs = pa.Table.from_pylist([{**r, "audited": r["repeat"] == 1 or r["repeat"] == 0} for r in subs.to_pylist()])
    again = {"grading_id": "r1", "deliverable": "memo", "span": "section 3.4  says so.",
             "status": "confirmed" if recurs else "rejected", "materiality": "material" if recurs else None}
    flags = pa.Table.from_pylist([*flags.to_pylist(), again]).select(FLAG_COLUMNS)
    rep = repeatability(subs.select(SUBMISSION_COLUMNS), verdicts, flags, seed=1, samples=100)
    assert rep is not None and rep.auditor is not None
    assert (rep.auditor.flags, rep.auditor.pairs, rep.auditor.recurred) == (1, 1, int(recurs))
