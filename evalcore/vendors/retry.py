"""The one retry policy for every vendor: when to try again, and after how long.

Why our own (and the SDKs' off): each SDK retries differently (openai ignores a retry-after over
120 s, anthropic honours any, xai's gRPC channel retries only UNAVAILABLE), and stacked retries
multiply. One pure function decides from the failure's classification, the attempt counts and
the time spent, so it is testable without a clock, a network or a sleep.

The rules:
* the server's word first: an error answer with `x-should-retry: false` is never retried, one with
  `x-should-retry: true` is retried even when its status alone would not be (a 400, an exhausted
  account's 429) — both official SDKs (openai, anthropic) obey this header over their own rules,
  and the adapters run those SDKs with their retries off, so this policy must obey it for them;
* `fatal` is never retried; `bad_output` at most `bad_output_retries` times;
* an answer that stopped at its output-token cap (`truncated`) is retried once, at once (no
  backoff: the vendor is not overloaded, the cap was too small), and the adapter sends that retry
  with a larger cap (`evalcore.vendors.output_cap.retry_cap`); a second stop is a final `bad_output`;
* everything else until `max_attempts` attempts in all;
* the wait is exponential backoff with full jitter, `U(0, min(max_delay, base * 2**(n-1)))`, but
  never shorter than the server's retry-after (which may exceed `max_delay`: the server knows);
* no retry whose wait would end past the deadline (measured from the first attempt).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from evalcore.config.models import RetryPolicy
from evalcore.errors import ErrorKind


@dataclass(frozen=True)
class Failure:
    """One failed attempt, classified; `cause` is already free of secrets."""

    kind: ErrorKind
    retry_after_s: float | None
    cause: str
    should_retry: bool | None = None
    """The answer's `x-should-retry` header (true / false), None without one (or over gRPC)."""
    truncated: bool = False
    """A billed answer that stopped at its output-token cap (kind `bad_output`)."""


@dataclass
class RetryState:
    """Counters of one logical call; every attempt counts, 429s are counted separately."""

    attempts: int = 0
    rate_limited: int = 0
    bad_outputs: int = 0
    truncations: int = 0
    """Answers that stopped at their output-token cap (counted apart from `bad_outputs`)."""

    def record(self, failure: Failure) -> None:
        """Count a failed attempt (the attempt itself was counted when it was started)."""
        if failure.kind is ErrorKind.RATE_LIMITED:
            self.rate_limited += 1
        elif failure.truncated:
            self.truncations += 1
        elif failure.kind is ErrorKind.BAD_OUTPUT:
            self.bad_outputs += 1


TRUNCATION_RETRIES = 1
"""Retries of a call whose answer stopped at its output-token cap: one, with a larger cap. Why not
more: the first cap is sized for the effort and the schema (`evalcore.vendors.output_cap`), the
retry's doubles it; an answer that outgrows both is a runaway, not a cap to keep raising."""


def backoff_s(policy: RetryPolicy, attempt: int, rng: random.Random) -> float:
    """Full-jitter exponential backoff after the `attempt`-th attempt (1-based)."""
    ceiling = min(policy.max_delay_s, policy.base_delay_s * 2 ** max(attempt - 1, 0))
    return rng.uniform(0.0, ceiling)


def next_delay(
    policy: RetryPolicy,
    failure: Failure,
    state: RetryState,
    elapsed_s: float,
    rng: random.Random,
) -> float | None:
    """Seconds to wait before the next attempt, or None to give up.

    `state` must already include the failed attempt (`attempts` and `record(failure)`).
    """
    if failure.should_retry is False:
        return None
    if failure.kind is ErrorKind.FATAL and failure.should_retry is not True:
        return None
    if state.attempts >= policy.max_attempts:
        return None
    if failure.truncated:
        if state.truncations > TRUNCATION_RETRIES:
            return None
        return 0.0 if elapsed_s < policy.deadline_s else None
    if failure.kind is ErrorKind.BAD_OUTPUT and state.bad_outputs > policy.bad_output_retries:
        return None
    delay = backoff_s(policy, state.attempts, rng)
    if failure.retry_after_s is not None:
        delay = max(delay, failure.retry_after_s)
    if elapsed_s + delay >= policy.deadline_s:
        return None
    return delay
