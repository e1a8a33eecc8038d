"""One vendor entry over N actors: the static split's arithmetic, routing by hash, header scaling.

The split is checked the way the vendor checks it: the arrivals that N per-actor budgets let
through, together, are replayed into the emulators' own token bucket holding the entry's limit,
and not one is refused (and, as a control, N budgets each holding the whole limit are refused).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.config.models import RateLimits, VendorConfig
from evalcore.vendors.budget import ARRIVAL_S, RateBudget, scale_header
from evalcore.vendors.sharding import (
    ShardBudget,
    account_config,
    actor_count,
    create_account_vendors,
    create_shard_vendor,
    most_actors,
    shard_config,
    shard_of,
)
from tests.arrivals import refused


def entry(rpm: int = 600, burst_s: float | None = None, **kw: object) -> VendorConfig:
    limits = RateLimits(requests_per_minute=rpm, tokens_per_minute=10**9, burst_s=burst_s)
    return VendorConfig(adapter="openai", name="openai", family="openai", model="m", limits=limits, **kw)  # type: ignore[arg-type]


def simulate(budgets: list[RateBudget], clock: list[float], seconds: float, latency_s: float, seed: int) -> list[float]:
    """Every actor asks for as much as its budget lets through; returns the vendor's arrival times.

    Each call reaches the vendor at a random moment between its grant and the earlier of its
    completion and `ARRIVAL_S` after its grant (the budget's one assumption), and completes
    `latency_s` after its grant.
    """
    rng = random.Random(seed)
    arrivals: list[float] = []
    ends: list[tuple[float, int, int]] = []  # (completion, actor, rid)
    step = 0.005
    t = 0.0
    while t < seconds:
        clock[0] = t
        ends.sort()
        while ends and ends[0][0] <= t:
            _, k, rid = ends.pop(0)
            budgets[k]._ledger.settle(rid, t, None)
        for k, b in enumerate(budgets):
            while b._ledger.wait_s(t, 1) <= 0:
                rid = b._ledger.grant(1)
                arrivals.append(t + rng.random() * min(latency_s, ARRIVAL_S))
                ends.append((t + latency_s, k, rid))
        t += step
    return sorted(arrivals)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=5),
    rpm=st.sampled_from([600, 1200, 3000]),
    burst_s=st.sampled_from([1.0, 60.0]),
    latency_s=st.sampled_from([0.01, 0.3, 2.0]),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_n_actors_with_a_1_over_n_split_never_send_more_than_the_entrys_limit_together(
    n: int, rpm: int, burst_s: float, latency_s: float, seed: int
) -> None:
    cfg = entry(rpm, burst_s)
    clock = [0.0]
    budgets: list[RateBudget] = [ShardBudget.for_shard(cfg, n, clock=lambda: clock[0]) for _ in range(n)]
    arrivals = simulate(budgets, clock, 3.0, latency_s, seed)
    assert refused(arrivals, rpm, burst_s) == 0
    # and the split uses the limit: the initial allowance, then the refill, minus one call per actor
    assert len(arrivals) >= rpm / 60 * burst_s + rpm / 60 * (3.0 - latency_s) - 2 * n - 1


def test_n_actors_each_holding_the_whole_limit_are_refused_so_the_split_is_what_keeps_it() -> None:
    cfg = entry(1200, 1.0)
    clock = [0.0]
    budgets = [RateBudget.for_vendor(cfg, clock=lambda: clock[0]) for _ in range(3)]
    assert refused(simulate(budgets, clock, 2.0, 0.01, 1), 1200, 1.0) > 0


def test_a_shard_budget_gets_one_nth_of_the_entrys_share_of_the_account() -> None:
    cfg = entry(1200).model_copy(update={"account_fraction": 2 / 3})
    b = ShardBudget.for_shard(cfg, 4)
    assert b.requests_per_minute == pytest.approx(1200 * 2 / 3 / 4)
    assert b.tokens_per_minute == pytest.approx(10**9 * 2 / 3 / 4)
    assert shard_config(cfg, 4).account_fraction == pytest.approx(2 / 3 / 4)
    assert shard_config(cfg, 1) is cfg


def test_a_shard_reads_the_accounts_remaining_header_at_one_nth() -> None:
    clock = [0.0]
    b = ShardBudget.for_shard(entry(6000), 4, clock=lambda: clock[0])  # 1500/min each, bucket of 1500
    b.observe_headers(remaining_requests=400)  # the account has 400 left: this actor believes in 100
    level = b._ledger.req_level  # type: ignore[attr-defined]
    assert level <= 100 + 1 + 1500 / 60 * 0.05 + 1e-9
    assert scale_header(401, 4) == 100 and scale_header(None, 4) is None and scale_header(7, 1) == 7


def test_one_actor_is_exactly_the_adapter_and_budget_of_before() -> None:
    cfg = entry(1200, api_key_env="NO_SUCH_KEY")
    one = create_shard_vendor(cfg, 1)
    assert type(one.budget) is RateBudget  # type: ignore[attr-defined]
    assert one.budget.requests_per_minute == 1200  # type: ignore[attr-defined]
    three = create_shard_vendor(cfg, 3)
    assert isinstance(three.budget, ShardBudget) and three.budget.requests_per_minute == pytest.approx(400)  # type: ignore[attr-defined]
    zero = create_shard_vendor(VendorConfig(adapter="zero", name="z", family="z", model="m"), 3)
    assert getattr(zero, "budget", None) is None  # the zero-work vendor has no budget to split


def test_the_actor_count_is_the_explicit_setting_or_enough_for_the_entrys_rate() -> None:
    assert actor_count(entry(600)) == 1  # 10/s
    assert actor_count(entry(600, actors=3)) == 3
    assert actor_count(entry(60_000, actor_calls_per_s=400)) == 3  # 1,000/s over 400/s each
    assert actor_count(entry(48_000, actor_calls_per_s=400)) == 2  # exactly 800/s: two suffice
    shared = entry(60_000, actor_calls_per_s=400).model_copy(update={"account_fraction": 0.5})
    assert actor_count(shared) == 2  # its share of the account is what it carries


def test_an_actor_count_chosen_from_the_rate_never_exceeds_the_clusters_cores() -> None:
    huge = entry(6_000_000, actor_calls_per_s=150)  # an emulated, unpaced limit: 100,000/s
    assert actor_count(huge, cores=2) == 2
    assert actor_count(huge, cores=64) == 64
    assert actor_count(entry(60_000, actor_calls_per_s=400), cores=64) == 3  # the rate decides below the cores
    assert actor_count(entry(600, actors=3), cores=2) == 3  # an explicit setting is the operator's


def test_an_accounts_actors_carry_its_whole_rate_at_its_lowest_stated_limits() -> None:
    judge = entry(60_000, actor_calls_per_s=400, actors=2).model_copy(update={"account_fraction": 2 / 3})
    auditor = entry(90_000, actor_calls_per_s=300).model_copy(update={"name": "auditor", "account_fraction": 1 / 3})
    account = account_config([judge, auditor])
    assert account.limits.requests_per_minute == 60_000 and account.account_fraction == 1.0
    assert account.actors == 2 and account.actor_calls_per_s == 300  # the most stated, the lowest per actor
    assert actor_count(account.model_copy(update={"actors": None})) == 4  # 1,000/s over 300/s each: the whole account


def test_entries_on_one_account_get_one_budget_of_the_whole_account_and_other_accounts_their_own() -> None:
    judge = entry(600).model_copy(update={"account_fraction": 2 / 3})
    auditor = entry(600).model_copy(update={"name": "auditor", "account_fraction": 1 / 3})
    other = entry(600).model_copy(update={"name": "other", "api_key_env": "OTHER_KEY"})
    vendors = create_account_vendors([judge, auditor, other])
    budgets = {name: getattr(v, "budget") for name, v in vendors.items()}  # noqa: B009 (not on the Vendor protocol)
    assert budgets["openai"] is budgets["auditor"] and budgets["other"] is not budgets["openai"]
    assert budgets["openai"].requests_per_minute == pytest.approx(600)  # the whole account, not 2/3 of it
    sharded = create_account_vendors([judge, auditor], n=3)
    one = getattr(sharded["openai"], "budget")  # noqa: B009
    assert isinstance(one, ShardBudget) and one is getattr(sharded["auditor"], "budget")  # noqa: B009
    assert one.requests_per_minute == pytest.approx(200)  # 1/3 of the whole account


@given(rpm=st.integers(min_value=1, max_value=10**7), per_s=st.floats(min_value=1, max_value=10**5))
def test_the_actor_count_carries_the_rate_and_no_fewer_actors_would(rpm: int, per_s: float) -> None:
    cfg = entry(rpm, actor_calls_per_s=per_s)
    n = actor_count(cfg)
    assert 1 <= n <= most_actors(cfg)
    assert n * per_s >= rpm / 60 * (1 - 1e-9) or n == most_actors(cfg)
    assert n == 1 or (n - 1) * per_s < rpm / 60


@given(h=st.text(min_size=1, max_size=64), n=st.integers(min_value=1, max_value=64))
def test_routing_is_a_function_of_the_request_hash_in_range(h: str, n: int) -> None:
    k = shard_of(h, n)
    assert 0 <= k < n and shard_of(h, n) == k
    assert shard_of(h, 1) == 0


def test_routing_spreads_request_hashes_evenly_over_the_actors() -> None:
    counts = Counter(shard_of(f"{i:064x}", 4) for i in range(8000))
    assert set(counts) == {0, 1, 2, 3}
    assert all(1800 <= c <= 2200 for c in counts.values()), counts


def test_an_entry_is_never_split_into_buckets_smaller_than_one_call() -> None:
    # OpenAI's one-second bucket at 120/min holds 2 calls: at most 2 actors, whatever is asked
    assert actor_count(entry(120, 1.0, actors=8)) == 2
    assert actor_count(entry(120, 60.0, actors=8)) == 8  # a minute's bucket holds 120
