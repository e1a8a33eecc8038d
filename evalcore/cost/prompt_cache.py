"""The vendors' prompt-caching rules, as one pure model used by the emulators and by the estimate.

Why one module: the emulators bill cached tokens by these rules, and `tribunal estimate` predicts a
sweep's cached share by replaying the same rules over the exact requests in the order a sweep sends
them, so the estimate and the emulated bill cannot disagree about what the cache does. The rules
(from the vendors' documentation of their real services) are in `PrefixCache`'s docstring.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

_CHAINS_KEPT = 32
"""Texts whose hash states are kept (the most recent; each holds a state and digest per block)."""


@dataclass(frozen=True)
class CachePlan:
    """What one request found in the prompt cache on arrival, and what it writes when it answers."""

    hit_tokens: int
    pending: tuple[tuple[bytes, int], ...]
    """(prefix digest, prefix tokens) of the cacheable prefixes it did not find, shortest first."""

    @property
    def write_tokens(self) -> int:
        """Tokens this request writes to the cache (its longest cacheable prefix beyond the hit)."""
        return self.pending[-1][1] - self.hit_tokens if self.pending else 0


def _blocks_in_common(text: str, old: str, limit: int, block_chars: int) -> int:
    """How many of the first `limit` blocks two texts share: a binary search whose steps compare
    only the blocks not yet known to match (one slice each), so the whole takes about two passes
    over the shared part instead of a step per block."""
    same, hi = 0, limit  # blocks [0, same) match; the first mismatch, if any, is before hi
    while same < hi:
        mid = (same + hi + 1) // 2
        if text.startswith(old[same * block_chars : mid * block_chars], same * block_chars):
            same = mid
        else:
            hi = mid - 1
    return same


class PrefixCache:
    """Prompt caching as the vendors do it (see the Emulators section of the README).

    * An entry becomes readable only once the request that writes it *starts answering*: the
      emulator looks a request up when it arrives and writes its prefixes when it answers, so a
      burst of simultaneous requests with one prefix all miss, and a request sent after the
      first answer hits.
    * Automatic caching (OpenAI, xAI): prefixes of at least `min_tokens` tokens, in
      `block_tokens` steps (OpenAI: 1,024 then 128-token steps); the hit is the longest one seen.
    * Explicit breakpoints (Anthropic `cache_control`): only the prefixes ending at a breakpoint
      are cacheable (and only from `min_tokens`); a request without one neither reads nor writes.
    * Entries live `ttl_s` after their last write or hit (the vendors' idle expiry), and at most
      `capacity` of them are kept (least recently used dropped first).
    """

    def __init__(
        self,
        *,
        block_tokens: int,
        min_tokens: int,
        chars_per_token: float,
        ttl_s: float,
        capacity: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.block_tokens = block_tokens
        self.block_chars = int(block_tokens * chars_per_token)
        self.min_tokens = min_tokens
        self.chars_per_token = chars_per_token
        self.ttl_s = ttl_s
        self.capacity = capacity
        self.clock = clock
        self._expires: OrderedDict[bytes, float] = OrderedDict()
        self._chains: OrderedDict[tuple[str, str], tuple[str, list[Any], list[bytes]]] = OrderedDict()
        """The last texts hashed, by (model, first block): where `_block_digests` resumes."""

    def __len__(self) -> int:
        """Entries held (expired ones go at the next write)."""
        return len(self._expires)

    def _prefixes(self, model: str, system: str, user: str, breakpoints: Sequence[int] | None) -> list[tuple[bytes, int]]:
        seed = hashlib.sha256(model.encode() + b"\x00")
        if breakpoints is not None:
            out = []
            for end in sorted(set(breakpoints)):
                tokens = math.ceil(len(system + user[:end]) / self.chars_per_token)
                if tokens >= self.min_tokens:
                    h = seed.copy()
                    h.update((system + "\x1e" + user[:end]).encode())
                    out.append((h.digest(), tokens))
            return out
        text = system + "\x1e" + user
        return [
            (digest, (i + 1) * self.block_tokens)
            for i, digest in enumerate(self._block_digests(model, text))
            if (i + 1) * self.block_tokens >= self.min_tokens
        ]

    def _block_digests(self, model: str, text: str) -> list[bytes]:
        """The digest of each whole-block prefix of `text` (the i-th: its first i + 1 blocks).

        One grading's requests differ only in their last blocks (a prompt per criterion after one
        shared prefix), so the hash states of the last text that began with the same block are
        kept, and hashing resumes where the new text parts from it: comparing a block is a tenth
        of hashing it, and a real task's 55 criteria hash their shared memo once, not 55 times.
        """
        bc = self.block_chars
        blocks = len(text) // bc
        if blocks == 0:
            return []
        key = (model, text[:bc])
        kept = self._chains.pop(key, None)
        same = 0
        states: list[Any] = []
        digests: list[bytes] = []
        if kept is not None:
            old, old_states, old_digests = kept
            same = _blocks_in_common(text, old, min(blocks, len(old_states)), bc)
            states, digests = old_states[:same], old_digests[:same]
        h = states[-1].copy() if states else hashlib.sha256(model.encode() + b"\x00")
        for i in range(same, blocks):
            h.update(text[i * bc : (i + 1) * bc].encode())
            states.append(h.copy())
            digests.append(states[-1].digest())
        self._chains[key] = (text, states, digests)
        if len(self._chains) > _CHAINS_KEPT:
            self._chains.popitem(last=False)
        return digests

    def lookup(self, model: str, system: str, user: str, breakpoints: Sequence[int] | None = None) -> CachePlan:
        """On arrival: the longest readable cached prefix (refreshing its TTL) and what is missing."""
        now = self.clock()
        prefixes = self._prefixes(model, system, user, breakpoints)
        hit = -1
        for i, (digest, _) in enumerate(prefixes):
            expires = self._expires.get(digest)
            if expires is not None and expires > now:
                hit = i
        if hit >= 0:
            digest = prefixes[hit][0]
            self._expires[digest] = now + self.ttl_s
            self._expires.move_to_end(digest)
        return CachePlan(prefixes[hit][1] if hit >= 0 else 0, tuple(prefixes[hit + 1 :]))

    def store(self, plan: CachePlan) -> int:
        """When the request starts answering: its missing prefixes become readable. Returns the
        tokens written."""
        now = self.clock()
        for digest, _ in plan.pending:
            self._expires[digest] = now + self.ttl_s
            self._expires.move_to_end(digest)
        # Least recently used first, so expired entries are at the front: drop them, then any excess.
        while self._expires and next(iter(self._expires.values())) <= now:
            self._expires.popitem(last=False)
        while len(self._expires) > self.capacity:
            self._expires.popitem(last=False)
        return plan.write_tokens
