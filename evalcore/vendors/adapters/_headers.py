"""Reading the vendors' rate-limit and retry hints out of HTTP headers and gRPC metadata.

Why one module: the three vendors spell the same facts differently (OpenAI's `x-ratelimit-*`
with Go-style durations such as "6m0s", Anthropic's `anthropic-ratelimit-*` with RFC 3339 reset
times, gRPC trailing metadata), and the SDKs parse none of them. The retry policy and the rate
budget only want numbers: how long to wait, how much is left, when it resets.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


@dataclass(frozen=True)
class RateInfo:
    """What one response (or error) told us about the vendor's limits; None = not said."""

    retry_after_s: float | None = None
    remaining_requests: int | None = None
    remaining_tokens: int | None = None
    reset_requests_s: float | None = None
    reset_tokens_s: float | None = None
    limit_requests: int | None = None
    limit_tokens: int | None = None

    @property
    def empty(self) -> bool:
        """True when no header carried anything useful."""
        return self == RateInfo()


def parse_duration(text: str) -> float | None:
    """A Go-style duration ("6m0s", "1.5s", "20ms", "1h2m") or plain seconds ("0.25") -> seconds."""
    text = text.strip()
    if not text:
        return None
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    pos, total = 0, 0.0
    for m in _DURATION_PART.finditer(text):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * _UNIT_S[m.group(2)]
        pos = m.end()
    return total if pos == len(text) and pos > 0 else None


def _seconds_until(text: str, now_epoch: float) -> float | None:
    """An absolute time (RFC 3339 or HTTP date) -> seconds from now (never negative)."""
    text = text.strip()
    when: datetime | None = None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(when.timestamp() - now_epoch, 0.0)


def _relative_or_absolute(text: str, now_epoch: float) -> float | None:
    value = parse_duration(text)
    return value if value is not None else _seconds_until(text, now_epoch)


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(float(text.strip()))
    except ValueError:
        return None


def _lower(headers: Mapping[str, str] | Iterable[tuple[str, str | bytes]] | None) -> dict[str, str]:
    if headers is None:
        return {}
    items = headers.items() if isinstance(headers, Mapping) else headers
    out: dict[str, str] = {}
    for k, v in items:
        out[str(k).lower()] = v.decode("latin-1") if isinstance(v, bytes) else str(v)
    return out


def parse_retry_after(
    headers: Mapping[str, str] | Iterable[tuple[str, str | bytes]] | None, now_epoch: float | None = None
) -> float | None:
    """`retry-after-ms`, then `retry-after` (seconds or HTTP date), then gRPC pushback, in seconds.

    A gRPC `grpc-retry-pushback-ms` below zero means "do not retry"; we return None for it and
    let the classification decide (the server answered RESOURCE_EXHAUSTED or UNAVAILABLE anyway).
    """
    h = _lower(headers)
    now = time.time() if now_epoch is None else now_epoch
    if "retry-after-ms" in h:
        try:
            return max(float(h["retry-after-ms"]) / 1000.0, 0.0)
        except ValueError:
            pass
    if "retry-after" in h:
        value = _relative_or_absolute(h["retry-after"], now)
        if value is not None:
            return value
    if "grpc-retry-pushback-ms" in h:
        try:
            ms = float(h["grpc-retry-pushback-ms"])
        except ValueError:
            return None
        return ms / 1000.0 if ms >= 0 else None
    return None


def parse_should_retry(headers: Mapping[str, str] | Iterable[tuple[str, str | bytes]] | None) -> bool | None:
    """The server's `x-should-retry` verdict on an error answer: True, False, or None without one.

    Read exactly as openai 3.57 and anthropic 2.14 read it (`_should_retry` in their `_base_client`):
    only the values "true" and "false" count, anything else is no verdict."""
    value = _lower(headers).get("x-should-retry")
    if value == "true":
        return True
    if value == "false":
        return False
    return None


def parse_rate_info(
    headers: Mapping[str, str] | Iterable[tuple[str, str | bytes]] | None, now_epoch: float | None = None
) -> RateInfo:
    """All the limit facts in one response's headers, whichever vendor's spelling they use."""
    h = _lower(headers)
    if not h:
        return RateInfo()
    now = time.time() if now_epoch is None else now_epoch

    def reset(name: str) -> float | None:
        return _relative_or_absolute(h[name], now) if name in h else None

    # OpenAI: x-ratelimit-remaining-requests / -tokens, x-ratelimit-reset-* as durations.
    rem_req = _int(h.get("x-ratelimit-remaining-requests"))
    rem_tok = _int(h.get("x-ratelimit-remaining-tokens"))
    reset_req = reset("x-ratelimit-reset-requests")
    reset_tok = reset("x-ratelimit-reset-tokens")
    # Anthropic: anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{remaining,reset}.
    if rem_req is None:
        rem_req = _int(h.get("anthropic-ratelimit-requests-remaining"))
    if reset_req is None:
        reset_req = reset("anthropic-ratelimit-requests-reset")
    if rem_tok is None:
        candidates = [
            _int(h.get(f"anthropic-ratelimit-{k}-remaining"))
            for k in ("tokens", "input-tokens", "output-tokens")
        ]
        known = [c for c in candidates if c is not None]
        rem_tok = min(known) if known else None
    if reset_tok is None:
        resets = [
            reset(f"anthropic-ratelimit-{k}-reset") for k in ("tokens", "input-tokens", "output-tokens")
        ]
        known_r = [r for r in resets if r is not None]
        reset_tok = max(known_r) if known_r else None
    limit_req = _int(h.get("x-ratelimit-limit-requests"))
    if limit_req is None:
        limit_req = _int(h.get("anthropic-ratelimit-requests-limit"))
    limit_tok = _int(h.get("x-ratelimit-limit-tokens"))
    if limit_tok is None:
        limit_tok = _int(h.get("anthropic-ratelimit-tokens-limit"))
    return RateInfo(
        retry_after_s=parse_retry_after(h, now),
        limit_requests=limit_req,
        limit_tokens=limit_tok,
        remaining_requests=rem_req,
        remaining_tokens=rem_tok,
        reset_requests_s=reset_req,
        reset_tokens_s=reset_tok,
    )
