"""Warming a shared prompt prefix before fanning out the calls that share it.

Why: the vendors' prompt caches make an entry readable only once the request that writes it has
started answering, so the 44-90 criteria of a submission sent to a judge at the same moment all pay
full price for the same long prefix (instructions and deliverables). Sending one request per
distinct prefix first, waiting for its answer, then sending the rest lets every later request read
the prefix from the cache (0.1x the input price at Anthropic and OpenAI). The cost is one extra
round trip of latency per submission and judge; the requests, and so the answers and rows, are the
same ones (`JudgeRequest`s are unchanged, only their scheduling differs).

Prefixes too short to be cached (under `min_prefix_tokens`, the vendors' 1,024-token minimum) are
not worth the wait and are sent at once.

The call sent first is marked (`JudgeRequest.warms`), and the rate budget gives it its turn before
other rubric calls (`evalcore.vendors.budget.PURPOSE_ORDER`). Queued first come first served, a
warming call waited behind every rubric call queued before it, and the calls it held back reached
the budget only after its answer: on the binding account of a sweep, the queue ran dry for ~1 s
while they were on their way (measured on the sample at 600 requests/min, `benchmarks/peers.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from evalcore.errors import VendorError
from evalcore.vendors.protocol import JudgeReply, JudgeRequest, T, Vendor

MIN_PREFIX_TOKENS = 1024
"""The shortest prefix OpenAI and Anthropic cache."""


def prefix_groups(
    requests: Sequence[JudgeRequest], chars_per_token: float = 4.0, min_prefix_tokens: int = MIN_PREFIX_TOKENS
) -> tuple[list[list[int]], list[int]]:
    """Indices of the requests grouped by cacheable shared prefix (system prompt + shared prefix),
    in order of first appearance, and the indices of requests whose prefix is too short to cache."""
    groups: dict[tuple[str, str], list[int]] = {}
    direct: list[int] = []
    for i, r in enumerate(requests):
        if len(r.system_prompt) + len(r.shared_prefix) < min_prefix_tokens * chars_per_token:
            direct.append(i)
        else:
            groups.setdefault((r.system_prompt, r.shared_prefix), []).append(i)
    return list(groups.values()), direct


async def complete_warmed(
    vendor: Vendor,
    requests: list[JudgeRequest],
    schema: type[T],
    *,
    enabled: bool = True,
    chars_per_token: float = 4.0,
) -> list[JudgeReply[T] | VendorError]:
    """`vendor.complete_many(requests)`, but each cacheable prefix is warmed by its first request
    before the others sharing it are sent. Results are in the order of `requests`."""
    groups, direct = prefix_groups(requests, chars_per_token)
    if not enabled or all(len(g) == 1 for g in groups):
        return await vendor.complete_many(requests, schema)
    out: list[JudgeReply[T] | VendorError | None] = [None] * len(requests)

    async def send(indices: list[int], warms: bool = False) -> None:
        if not indices:
            return
        batch = [requests[i].model_copy(update={"warms": True}) if warms else requests[i] for i in indices]
        replies = await vendor.complete_many(batch, schema)
        for i, reply in zip(indices, replies, strict=True):
            out[i] = reply

    async def warm_then_rest(group: list[int]) -> None:
        await send(group[:1], warms=len(group) > 1)  # its answer makes the prefix readable to the rest
        await send(group[1:])

    await asyncio.gather(send(direct), *(warm_then_rest(g) for g in groups))
    assert all(r is not None for r in out)
    return [r for r in out if r is not None]
