"""Reviewer agreement (`evalcore.results.agreement`): Cohen's κ per pair, Krippendorff's α with its
interval, and each reviewer against the machine, checked on a hand-worked example and by property."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.results.adjudications import Adjudication
from evalcore.results.agreement import Label, agreement, alpha, label_of, labels, pair_kappas, vs_machine


def _flag(n: int, reviewer: str, decision: str, **kw: object) -> Adjudication:
    return Adjudication(run_id="r", kind="flag", system="s", task_id="t", flag_index=n, decision=decision,  # type: ignore[arg-type]
                        reviewer=reviewer, reason="why", campaign_id="c1", required=2, **kw)  # type: ignore[arg-type]


# Two reviewers, six flags:   A: u u o o u o    B: u o o o u u
A = ["upheld", "upheld", "overturned", "overturned", "upheld", "overturned"]
B = ["upheld", "overturned", "overturned", "overturned", "upheld", "upheld"]


def test_cohen_kappa_and_krippendorff_alpha_equal_the_hand_worked_example() -> None:
    """By hand: p_o = 4/6, each reviewer upholds 3 of 6 so p_e = 1/2, κ = (2/3 - 1/2)/(1/2) = 1/3.
    α: 12 pairable values (6 u, 6 o); coincidences o_uo = o_ou = 2 (items 2 and 6), so
    α = 1 - (n - 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k = 1 - 11·4 / (2·6·6) = 1 - 44/72 = 7/18."""
    decisions = [_flag(i, "a", d) for i, d in enumerate(A)] + [_flag(i, "b", d) for i, d in enumerate(B)]
    got = agreement(decisions, {}, seed=3, n_resamples=200)
    assert len(got.pairs) == 1
    pair = got.pairs[0]
    assert (pair.a, pair.b, pair.n, pair.agreed) == ("a", "b", 6, 4)
    assert pair.kappa == pytest.approx(1 / 3)
    overall = got.alphas[0]
    assert overall.kind == "all" and overall.n_items == 6
    assert overall.alpha == pytest.approx(7 / 18)
    assert overall.low is not None and overall.high is not None and overall.low <= 7 / 18 <= overall.high
    assert [a.kind for a in got.alphas] == ["all", "flag"]


def test_each_reviewer_counts_once_per_item_with_their_latest_call_and_resolutions_are_left_out() -> None:
    import datetime as dt

    early = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    decisions = [
        _flag(0, "a", "upheld", decided_at=early), _flag(0, "a", "overturned", decided_at=early + dt.timedelta(1)),
        _flag(0, "b", "overturned"), _flag(0, "lead", "upheld", resolution=True),
    ]
    rows = labels(decisions)
    assert sorted((r.reviewer, r.label) for r in rows) == [("a", "overturned"), ("b", "overturned")]


def test_a_reviewers_share_of_overturns_is_against_the_machines_call() -> None:
    rows = [Label(("flag", "s", "t", str(i)), "flag", "a", lab) for i, lab in
            enumerate(["upheld", "overturned", "materiality:material", "materiality:minor"])]
    machine = {r.item: "upheld:material" for r in rows}
    (got,) = vs_machine(rows, machine)
    assert (got.n, got.agreed) == (4, 2)
    assert got.overturn_share == pytest.approx(0.5)


def test_a_materiality_call_is_its_own_label() -> None:
    assert label_of(_flag(0, "a", "materiality", materiality="minor")) == "materiality:minor"


calls = st.lists(st.sampled_from(["upheld", "overturned", "materiality:minor"]), min_size=2, max_size=25)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_alpha_is_the_krippendorff_package_on_the_same_matrix_and_one_for_perfect_agreement(data: st.DataObject) -> None:
    a = data.draw(calls)
    b = data.draw(st.lists(st.sampled_from(["upheld", "overturned", "materiality:minor"]), min_size=len(a),
                           max_size=len(a)))
    rows = [Label(("flag", str(i)), "flag", "a", x) for i, x in enumerate(a)]
    rows += [Label(("flag", str(i)), "flag", "b", x) for i, x in enumerate(b)]
    got = alpha(rows, n_resamples=20)
    codes = {v: k for k, v in enumerate(sorted(set(a) | set(b)))}
    if len(codes) == 1:
        assert got.alpha == 1.0
    else:
        m = np.array([[codes[x] for x in a], [codes[x] for x in b]], dtype=float)
        assert got.alpha == pytest.approx(krippendorff.alpha(reliability_data=m, level_of_measurement="nominal"))
    same = [Label(("flag", str(i)), "flag", r, x) for i, x in enumerate(a) for r in ("a", "b")]
    assert alpha(same, n_resamples=20).alpha == 1.0
    (pair,) = pair_kappas(same)
    assert pair.kappa == 1.0 and pair.agreed == len(a)
