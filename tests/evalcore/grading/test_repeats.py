"""Repeats of a grading (issue 39): the repeat index in a request's identity, the seeded sample, the
repeat's gate; one real grading through the SDKs, the emulators and the reuse layer."""

from __future__ import annotations

import collections

from hypothesis import given, settings
from hypothesis import strategies as st

from doubles.emulators import OfflineResponder
from doubles.emulators._set import EmulatorSet
from doubles.emulators.serve import point_at_emulators
from evalcore.config.load import load_config
from evalcore.config.models import VendorMode
from evalcore.grading.grade import grade_submission
from evalcore.grading.repeats import choose_sample, sample_plan
from evalcore.grading.scoring import gate, repeat_hc_score
from evalcore.prompts import render_rubric
from evalcore.schema import Criterion, Deliverable, Submission
from evalcore.vendors.stack import build_stacks
from tests.evalcore.grading.test_grade import TASK

GOLDEN = {  # the request hashes of this prompt before repeats existed (computed at b21146d)
    "openai": "eabde16e93fb8e76fe30fcdf4c5e1b536a3ef195bac9d206a76ec5751d4570bc",
    "xai": "56e931a7cebcc30a4770b91b368d966338163a3576c2c87169c135e3a0eb7db0",
    "anthropic": "213fec60b44f34e0a2e17628e43071af34e94fa29c9dbc3a498650f0a0828045",
}


def _prompt():
    return render_rubric(task_id="a/t", instructions="Write a memo.",
                         criterion=Criterion(id="C-1", title="t", match_criteria="PASS if x"),
                         deliverables=[Deliverable(name="memo", text="The memo.")], boundary="b0")


def test_repeat_0_hashes_exactly_as_before_repeats_existed_so_stored_runs_and_reuse_stay_valid() -> None:
    cfg = load_config(None, vendors=VendorMode.OFFLINE)
    p = _prompt()
    assert {j.name: p.request_for(j).request_hash for j in cfg.judges} == GOLDEN
    assert {j.name: p.request_for(j, repeat=0).request_hash for j in cfg.judges} == GOLDEN


@settings(max_examples=30, deadline=None)
@given(st.sets(st.integers(min_value=0, max_value=50), min_size=2, max_size=6))
def test_each_repeat_index_is_its_own_request_identity_with_the_same_prompt(repeats: set[int]) -> None:
    judge = load_config(None, vendors=VendorMode.OFFLINE).judges[0]
    p = _prompt()
    requests = [p.request_for(judge, repeat=k) for k in sorted(repeats)]
    assert len({r.request_hash for r in requests}) == len(repeats)
    assert len({(r.system_prompt, r.shared_prefix, r.varying_suffix) for r in requests}) == 1


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=6), min_size=0, max_size=40, unique=True),
       st.integers(min_value=0, max_value=50), st.integers(min_value=0, max_value=2**32))
def test_the_sample_is_seeded_order_free_of_the_asked_size_and_drawn_from_the_population(
        ids: list[str], n: int, seed: int) -> None:
    chosen = choose_sample(ids, n, seed)
    assert chosen == choose_sample(list(reversed(ids)), n, seed)
    assert len(chosen) == min(n, len(ids)) and len(set(chosen)) == len(chosen)
    assert set(chosen) <= set(ids)


def test_the_sample_is_uniform_every_submission_equally_likely_over_seeds() -> None:
    ids = [f"s{i:02d}" for i in range(20)]
    counts = collections.Counter(s for seed in range(2000) for s in choose_sample(ids, 5, seed))
    # each is chosen with probability 1/4: 500 of 2,000 expected, sd ~19
    assert all(420 <= c <= 580 for c in counts.values()), counts
    assert len(counts) == 20


def test_a_plan_repeats_only_sampled_submissions_whose_content_is_still_the_original_one() -> None:
    a = Submission(system="a", task_id="t", deliverables={"memo": Deliverable(name="memo", text="x")})
    b = Submission(system="b", task_id="t", deliverables={"memo": Deliverable(name="memo", text="y")})
    plan = sample_plan({a.id: a.content_hash(), b.id: "an older text"}, n=5, repeats=2, seed=1, judges=["xai"])
    skipped: list[str] = []
    assert [(s.repeat, s.repeat_judges) for s in plan.gradings(a, skipped)] == [(1, ("xai",)), (2, ("xai",))]
    assert list(plan.gradings(b, skipped)) == [] and skipped == [b.id]
    assert plan.total == 4


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([0.0, 1 / 3, 2 / 3, 1.0]), st.booleans(), st.integers(0, 3), st.booleans(), st.integers(0, 3))
def test_a_repeat_is_gated_by_its_own_audit_else_by_the_originals_and_never_by_an_invented_one(
        score: float, audited: bool, material: int, original_audited: bool, original_material: int) -> None:
    hc = repeat_hc_score(score, audited, material, original_audited, original_material)
    if audited:
        assert hc == gate(score, material)
    elif original_audited:
        assert hc == gate(score, original_material)
    else:
        assert hc == score


async def test_a_repeat_pays_afresh_for_the_judges_it_repeats_and_reuses_the_originals_answers_for_the_others() -> None:
    async with EmulatorSet(responder=OfflineResponder()) as emus:
        cfg = point_at_emulators(load_config(vendors="real"), emus.endpoints())
        stacks = build_stacks(cfg.vendors(), run_id="r")
        vendors = {n: s.vendor for n, s in stacks.items()}
        sub = Submission(system="x", task_id=TASK.id,
                         deliverables={"memo": Deliverable(name="memo", text="The price is $1,250,000.")})
        try:
            original = await grade_submission(TASK, sub, cfg, vendors, run_id="r")
            again = await grade_submission(TASK, sub.model_copy(update={"repeat": 1, "repeat_judges": ("xai",)}),
                                           cfg, vendors, run_id="r")
            same = await grade_submission(TASK, sub.model_copy(update={"repeat": 1, "repeat_judges": ("xai",)}),
                                          cfg, vendors, run_id="r")
        finally:
            for s in stacks.values():
                await s.vendor.aclose()
    assert {r.repeat for r in [original.submission, *original.verdicts, *original.calls]} == {0}
    assert {r.repeat for r in [again.submission, *again.verdicts, *again.calls]} == {1}
    assert again.submission.status == "complete" and again.submission.grading_id != original.submission.grading_id
    first = {(c.vendor, c.criterion_id): c.request_hash for c in original.calls}
    for c in again.calls:
        if c.vendor == "xai":  # repeated: a new identity, sent and paid
            assert c.request_hash != first[(c.vendor, c.criterion_id)] and c.reused_from is None
        else:  # held: the original's identity, answered from its stored call at no cost
            assert c.request_hash == first[(c.vendor, c.criterion_id)] and c.reused_from == "r" and c.cost_usd == 0
    # the same repeat asked again is served whole from the calls the first one paid for
    assert all(c.reused_from == "r" and c.cost_usd == 0 for c in same.calls)
