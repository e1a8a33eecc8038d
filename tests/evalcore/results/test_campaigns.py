"""Campaigns (`evalcore.results.campaigns`) and the decision in force under them
(`evalcore.results.adjudications.in_force`): k distinct reviewers per item with balanced loads, and
an item's decision in force only once k reviewers agree or a lead resolves it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.errors import InputError
from evalcore.results import campaigns
from evalcore.results.adjudications import Adjudication, in_force
from evalcore.results.campaigns import Campaign, assign


@settings(max_examples=60, deadline=None)
@given(n_items=st.integers(0, 60), n_reviewers=st.integers(1, 7), data=st.data())
def test_each_item_goes_to_k_distinct_reviewers_and_loads_differ_by_at_most_one(
    n_items: int, n_reviewers: int, data: st.DataObject,
) -> None:
    k = data.draw(st.integers(1, n_reviewers))
    seed = data.draw(st.integers(0, 2**31))
    reviewers = [f"r{i}" for i in range(n_reviewers)]
    items = [("flag", "s", "t", str(i)) for i in range(n_items)]
    got = assign(items, reviewers, k, seed)
    assert set(got) == set(items)
    assert all(len(set(rs)) == k and set(rs) <= set(reviewers) for rs in got.values())
    loads = [sum(r in rs for rs in got.values()) for r in reviewers]
    assert max(loads) - min(loads) <= 1
    assert got == assign(items, reviewers, k, seed)  # the same on every machine


def test_a_campaign_asks_no_more_reviewers_per_item_than_it_names() -> None:
    with pytest.raises(ValueError, match="k = 3 reviewers per item, but only 2"):
        Campaign(run_id="r", name="x", created_by="lead", sections=["material"], seed=1, k=3, reviewers=["a", "b"])


def test_a_campaign_is_stored_create_only_and_read_back(tmp_path: Path) -> None:
    c = Campaign(run_id="r", name="x", created_by="lead", sections=["material"], seed=1, k=2, reviewers=["a", "b"])
    campaigns.save(str(tmp_path), c)
    with pytest.raises(InputError, match="exists already"):
        campaigns.save(str(tmp_path), c)
    assert campaigns.load_all(str(tmp_path)) == ([c], [])


T0 = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)


def _d(reviewer: str, decision: str, minutes: int, **kw: object) -> Adjudication:
    return Adjudication(run_id="r", kind="flag", system="s", task_id="t", flag_index=0, decision=decision,  # type: ignore[arg-type]
                        reviewer=reviewer, reason="why", decided_at=T0 + dt.timedelta(minutes=minutes), **kw)  # type: ignore[arg-type]


def test_with_k_two_one_decision_is_pending_two_alike_are_in_force_two_unlike_wait_for_the_lead() -> None:
    one = [_d("a", "overturned", 1, campaign_id="c", required=2)]
    assert in_force(one) == {}
    agreed = [*one, _d("b", "overturned", 2, campaign_id="c", required=2)]
    assert in_force(agreed)[("flag", "s", "t", "0")].reviewer == "b"
    split = [*one, _d("b", "upheld", 2, campaign_id="c", required=2)]
    assert in_force(split) == {}
    resolved = [*split, _d("lead", "upheld", 3, campaign_id="c", required=2, resolution=True)]
    (got,) = in_force(resolved).values()
    assert got.reviewer == "lead" and got.decision == "upheld"


def test_a_reviewer_changing_their_mind_counts_once_and_outside_a_campaign_the_latest_is_in_force() -> None:
    twice = [_d("a", "upheld", 1, campaign_id="c", required=2), _d("a", "overturned", 2, campaign_id="c", required=2)]
    assert in_force(twice) == {}
    assert in_force([_d("a", "upheld", 1), _d("b", "overturned", 2)])[("flag", "s", "t", "0")].decision == "overturned"
    k1 = [_d("a", "upheld", 1, campaign_id="c", required=1)]
    assert in_force(k1)[("flag", "s", "t", "0")].decision == "upheld"
