"""Past one actor per vendor: how one vendor entry is spread over N actors without ever sending more.

Entries on one account share one budget (`create_account_vendors`, bottom of this module): in a
sweep the "entry" below is the account as one entry (`account_config`: its whole limits, all its
entries' requests), served by the same N actors.

Why: a sweep gives each vendor entry one actor, which does all of that vendor's client work (SDK
calls, JSON, TLS) in one process. At limits of tens of thousands of requests a minute that one
process is the bottleneck (`benchmarks/actor_ceiling.py` measures what one carries). When an
entry's configured rate exceeds `VendorConfig.actor_calls_per_s`, or `VendorConfig.actors` says so,
the sweep runs N actors for it.

The design is a **static split** (chosen over a budget owner leasing blocks of budget to the
actors, see README "Past one actor per vendor"):

* **Each of the N actors gets 1/N of the entry's limits** — of its share of the account
  (`account_fraction / N` of the account's requests and tokens per minute), with the same bucket
  shape (the capacity, `burst_s` seconds of refill, is scaled with the rate). Proof that the
  cluster never sends more than the entry's limit: actor i's budget guarantees that, for every
  interval (s, t], the calls that can reach the vendor from it in (s, t] number at most
  `C/N + (r/N)(t - s)` (the token-bucket budget's own invariant, `evalcore.vendors.budget`: a call
  is charged at the latest moment it can have reached the vendor, so the vendor's bucket is never
  emptier than ours). Summing over the N actors, the arrivals from all of them in (s, t] number at
  most `C + r (t - s)`: exactly the entry's bucket — the sum of token-bucket-constrained flows is
  constrained by the sum of the buckets, the argument already used for entries sharing one account.
  For the strict sliding window the same sum holds window by window (each actor holds at most
  cap/N occupied slots in any window; N of them hold at most cap). Tokens alike. Nothing needs to
  be exchanged between actors, so the guarantee does not depend on messages arriving in time.
  Two conditions, both of each actor's buckets: the request bucket must hold at least one call
  (`most_actors` caps N so), and the token bucket must hold the largest request — a request
  larger than a whole bucket is let through alone once that bucket is full (the vendors' own
  rule), which with N buckets could add up past the entry's. With OpenAI's one-second slices
  that needs tokens per minute / 60 / N above the largest prompt; it is not checked (the
  largest prompt is known only when it is built): choose `actors` accordingly.
* **Requests are routed to actors by their request hash** (`shard_of`), so identical requests
  always meet at one actor: its in-flight coalescing and its store of paid calls keep "never pays
  twice" exactly as with one actor. Each actor loads the whole stored-call table of its entry (a
  stored call is only ever asked of the actor its hash routes to).
* **Headers describe the whole account.** An actor with a 1/N share reads `remaining` (and
  `limit`) scaled by 1/N (`ShardBudget`): the N actors together then believe in at most what the
  server says is left, as the single actor did. A 429 says the whole account is exhausted: the
  actor that received it empties its bucket and pauses until the retry-after, and tells the
  entry's other actors, which do the same (`ShardBudget.sibling_rate_limited`; the message takes
  milliseconds, during which they may still send what their own buckets allow — each of those
  calls is within the split, and a 429 to it pauses that actor on its own). Within the model a
  429 does not happen (the split is exact); it means another client uses the key.
* **The price of a static split is imbalance**: an actor whose share of the traffic is below 1/N
  leaves part of its budget unused while another waits. Hash routing spreads calls evenly (each
  hash lands on an actor uniformly), so at leaderboard scale the shares differ by a few percent;
  a small sweep can leave more unused. A budget owner granting leases would not have this cost,
  but must keep the charge-at-arrival rule exact across processes.

With N = 1 nothing changes: the actor's budget is `RateBudget.for_vendor(cfg)`, headers are read
as they are, and every request goes to the one actor.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from typing import Any

from evalcore.config.models import VendorConfig
from evalcore.vendors.budget import VENDOR_BURST_S, RateBudget
from evalcore.vendors.protocol import Vendor
from evalcore.vendors.registry import create_vendor


def actor_count(cfg: VendorConfig, cores: int | None = None) -> int:
    """How many actors carry this entry: `cfg.actors` when set, else enough for its rate.

    The rate is the entry's share of its account's requests per minute; one actor carries
    `cfg.actor_calls_per_s` calls per second (the measured per-actor ceiling, with headroom).
    Never more than `most_actors` (the split would no longer be exact). When chosen from the rate,
    also never more than the cluster's `cores`: an actor is CPU-bound on its own process, so one
    past the cores adds start-up (each imports Ray and the SDK) and no calls per second — an
    emulated or very high limit would otherwise start dozens of actors per account.
    """
    per_s = cfg.limits.requests_per_minute * cfg.account_fraction / 60.0
    if cfg.actors is not None:
        n = cfg.actors
    else:
        n = math.ceil(per_s / cfg.actor_calls_per_s - 1e-9)
        if cores is not None:
            n = min(n, max(1, cores))
    return max(1, min(n, most_actors(cfg)))


def most_actors(cfg: VendorConfig) -> int:
    """The most actors an entry can be split over exactly: each actor's bucket must hold one call.

    A bucket never holds less than one request (a budget of 0.4 calls would never send any), so
    past this count the actors' buckets together would hold more than the entry's. With OpenAI's
    one-second bucket that is one actor per request per second of the entry's rate.
    """
    burst_s = cfg.limits.burst_s or VENDOR_BURST_S.get(cfg.adapter, 60.0)
    if cfg.limits.algorithm == "sliding_window":  # the pacing bucket holds one second's worth
        burst_s = 1.0
    capacity = cfg.limits.requests_per_minute * cfg.account_fraction / 60.0 * burst_s
    return max(1, math.floor(capacity + 1e-9))


def shard_of(request_hash: str, n: int) -> int:
    """The actor (0..n-1) a request goes to: the same hash always goes to the same actor.

    A stable digest (not Python's salted `hash`): every grading worker in the cluster, in any
    process, must route a request to the same actor.
    """
    if n <= 1:
        return 0
    digest = hashlib.blake2b(request_hash.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % n


def shard_config(cfg: VendorConfig, n: int) -> VendorConfig:
    """The entry as one of its N actors sees it: 1/N of its share of the account's limits."""
    if n <= 1:
        return cfg
    return cfg.model_copy(update={"account_fraction": cfg.account_fraction / n})


class ShardBudget(RateBudget):
    """The budget of one of N actors of an entry: 1/N of its limits, account headers read at 1/N.

    The `remaining` and `limit` headers are the account's; N actors each believing in all of it
    would together believe in N times what is left. Each reads 1/N of it (`RateBudget.shards`;
    rounded down: the bucket's own tolerance of one unit covers the rounding), so together they
    believe in what the single actor did.
    """

    on_account_429: Callable[[float | None], None] | None = None
    """Set by the actor: tell the entry's other actors that the account answered 429."""
    sibling_pauses: int = 0
    """429s the other actors of the entry received, applied here."""

    @classmethod
    def for_shard(cls, cfg: VendorConfig, n: int, **kwargs: Any) -> ShardBudget:
        """The budget of one of the `n` actors of entry `cfg`."""
        budget = cls.for_vendor(shard_config(cfg, n), **kwargs)
        assert isinstance(budget, ShardBudget)
        budget.shards = max(n, 1)
        return budget

    def on_rate_limited(self, retry_after_s: float | None = None) -> None:
        """Our 429 says the whole account is exhausted: pause, and have the other actors pause too."""
        super().on_rate_limited(retry_after_s)
        if self.on_account_429 is not None:
            self.on_account_429(retry_after_s)

    def sibling_rate_limited(self, retry_after_s: float | None) -> None:
        """Another actor of the entry got a 429: react as to our own (empty, pause), uncounted as ours."""
        self.sibling_pauses += 1
        self._ledger.rate_limited(self._clock(), retry_after_s)


def create_shard_vendor(cfg: VendorConfig, n: int, **kwargs: Any) -> Vendor:
    """The adapter of one of the `n` actors of entry `cfg` (with n = 1, `create_vendor(cfg)` itself).

    Its rate budget is replaced by the actor's `ShardBudget`; adapters without a budget (the
    offline and zero-work ones) are left as they are.
    """
    vendor = create_vendor(cfg, **kwargs)
    if n > 1 and getattr(vendor, "budget", None) is not None:
        vendor.budget = ShardBudget.for_shard(cfg, n)  # type: ignore[attr-defined]
    return vendor


def group_by_account(cfgs: list[VendorConfig]) -> list[list[VendorConfig]]:
    """The entries, grouped by the account they draw on (`VendorConfig.account`), in the order they are first named."""
    groups: dict[tuple[str, str, str], list[VendorConfig]] = {}
    for cfg in cfgs:
        groups.setdefault(cfg.account(), []).append(cfg)
    return list(groups.values())


def account_config(members: list[VendorConfig]) -> VendorConfig:
    """The account of `members` (entries on one account) as one entry: its whole limits.

    Why: entries sharing an account are served by one budget (`account_budget`), so the share of
    each follows its demand and their sum is the account's by construction. The limits are the
    lowest any member states (as `TribunalConfig` already makes them), the fraction is the whole
    account, the actor count the most any member asks for, the per-actor rate the lowest.
    """
    first = members[0]
    stated = [m.actors for m in members if m.actors is not None]
    limits = first.limits.model_copy(update={
        "requests_per_minute": min(m.limits.requests_per_minute for m in members),
        "tokens_per_minute": min(m.limits.tokens_per_minute for m in members),
    })
    return first.model_copy(update={
        "limits": limits,
        "account_fraction": 1.0,
        "actors": max(stated) if stated else None,
        "actor_calls_per_s": min(m.actor_calls_per_s for m in members),
    })


def account_budget(account: VendorConfig, n: int = 1, **kwargs: Any) -> RateBudget:
    """The one budget of an account's entries in one process: all of it, or 1/N of it in one of N actors."""
    if n > 1:
        return ShardBudget.for_shard(account, n, **kwargs)
    return RateBudget.for_vendor(account, **kwargs)


def create_account_vendors(
    cfgs: list[VendorConfig], n: int = 1, budget_kwargs: dict[str, Any] | None = None, **kwargs: Any
) -> dict[str, Vendor]:
    """Every entry's adapter, the entries of one account on one shared budget (`account_budget`).

    The judge and the auditor on one OpenAI key then share the account as their demand goes: an
    idle auditor leaves the judge the whole limit, and both busy never exceed it (one budget:
    exact by construction, nothing to add up). Adapters without a budget (offline, zero-work)
    keep none. `budget_kwargs` go to the budget (a test's clock or shortened minute), the rest to
    the adapters.
    """
    out: dict[str, Vendor] = {}
    for members in group_by_account(cfgs):
        budget: RateBudget | None = None
        for cfg in members:
            vendor = create_vendor(cfg, **kwargs)
            if getattr(vendor, "budget", None) is not None:
                if budget is None:
                    budget = account_budget(account_config(members), n, **(budget_kwargs or {}))
                vendor.budget = budget  # type: ignore[attr-defined]
            out[cfg.name] = vendor
    return out
