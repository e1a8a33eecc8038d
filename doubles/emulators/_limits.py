"""Server-side rate limits of an emulator: two token buckets (requests, tokens) per emulator.

Why token buckets: OpenAI and Anthropic both describe their limits as capacity refilled
continuously, and the numbers they return (remaining, time until fully replenished, retry-after)
fall straight out of a bucket. How much a bucket holds is per vendor (`ServerLimits.burst_s`):
Anthropic's holds the whole minute; OpenAI enforces a per-minute limit in per-second slices, a
bucket holding one second's worth. The clock is injectable so the arithmetic is tested without
sleeping.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from doubles.emulators._config import ServerLimits

Clock = Callable[[], float]

#: Advertised (not enforced) limits when a limit is not configured, so headers are always present.
NOMINAL_REQUESTS_PER_MINUTE = 30_000
NOMINAL_TOKENS_PER_MINUTE = 150_000_000
_SLACK = 1e-3


class TokenBucket:
    """Refilled at per_minute/60 per second, holding `burst_s` seconds of it (at least one unit);
    `take` may go into debt."""

    def __init__(self, per_minute: int, clock: Clock = time.monotonic, burst_s: float = 60.0) -> None:
        self.per_minute = per_minute
        self.rate = per_minute / 60.0
        self.capacity = max(self.rate * burst_s, 1.0)
        self._clock = clock
        self._level = self.capacity
        self._at = clock()

    def level(self) -> float:
        """Current content after refilling up to now."""
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._at) * self.rate)
        self._at = now
        return self._level

    def take(self, amount: float) -> None:
        """Remove `amount` (the level may become negative: usage known only after the fact)."""
        self.level()
        self._level -= amount

    def wait_for(self, amount: float) -> float:
        """Seconds until the level reaches `amount` (capped at the capacity)."""
        need = min(amount, self.capacity) - self.level()
        return max(need, 0.0) / self.rate

    def reset_in(self) -> float:
        """Seconds until the bucket is full again (what the vendors call "reset")."""
        return max(self.capacity - self.level(), 0.0) / self.rate


@dataclass(frozen=True)
class RateSnapshot:
    """Limit / remaining / seconds-to-full for requests and tokens, rendered into headers."""

    requests_limit: int
    requests_remaining: int
    requests_reset_s: float
    tokens_limit: int
    tokens_remaining: int
    tokens_reset_s: float


@dataclass(frozen=True)
class Admission:
    """Whether a request passed the limits; if not, which limit and when to retry."""

    admitted: bool
    scope: str | None = None  # "requests" | "tokens"
    retry_after_s: float = 0.0


class RateLimiter:
    """Enforces `ServerLimits` (only the configured ones) and reports the bucket state."""

    def __init__(self, limits: ServerLimits, clock: Clock = time.monotonic) -> None:
        self.enforce_requests = limits.requests_per_minute is not None
        self.enforce_tokens = limits.tokens_per_minute is not None
        burst = limits.burst_s
        self.requests = TokenBucket(limits.requests_per_minute or NOMINAL_REQUESTS_PER_MINUTE, clock, burst)
        self.tokens = TokenBucket(limits.tokens_per_minute or NOMINAL_TOKENS_PER_MINUTE, clock, burst)

    def admit(self, input_tokens: int) -> Admission:
        """Admit a request costing 1 request and `input_tokens`, or say why not and until when."""
        # _SLACK absorbs float error so a client that waited exactly `retry-after` gets in.
        if self.enforce_requests and self.requests.level() < 1.0 - _SLACK:
            return Admission(False, "requests", self.requests.wait_for(1.0))
        if self.enforce_tokens and self.tokens.level() < min(input_tokens, self.tokens.capacity) - _SLACK:
            return Admission(False, "tokens", self.tokens.wait_for(float(input_tokens)))
        self.requests.take(1.0)
        self.tokens.take(float(input_tokens))
        return Admission(True)

    def charge_output(self, output_tokens: int) -> None:
        """Output tokens are known after the answer; they come out of the same token bucket."""
        self.tokens.take(float(output_tokens))

    def snapshot(self) -> RateSnapshot:
        """The state to report in rate-limit headers."""
        return RateSnapshot(
            requests_limit=self.requests.per_minute,
            requests_remaining=max(math.floor(self.requests.level()), 0),
            requests_reset_s=self.requests.reset_in(),
            tokens_limit=self.tokens.per_minute,
            tokens_remaining=max(math.floor(self.tokens.level()), 0),
            tokens_reset_s=self.tokens.reset_in(),
        )


def openai_duration(seconds: float) -> str:
    """OpenAI's reset format: "20ms", "1s", "1.5s", "6m0s", "1h2m3s"."""
    if seconds < 1.0:
        return f"{max(round(seconds * 1000), 0)}ms"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs:.3f}".rstrip("0").rstrip(".") + "s"
    if hours >= 1:
        return f"{int(hours)}h{int(minutes)}m{text}"
    if minutes >= 1:
        return f"{int(minutes)}m{text}"
    return text


def seconds_text(seconds: float) -> str:
    """A compact seconds value for `retry-after` ("0.05", "1", "12.5"): the SDKs parse floats."""
    millis = math.ceil(max(seconds, 0.0) * 1000 - 1e-6)  # round up: waiting that long must suffice
    text = f"{millis / 1000:.3f}".rstrip("0").rstrip(".")
    return text or "0"
