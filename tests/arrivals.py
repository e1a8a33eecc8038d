"""Replaying a server's arrival log into the emulators' own request bucket (shared by tests)."""

from __future__ import annotations

from doubles.emulators._limits import TokenBucket


def refused(arrivals: list[float], rpm: float, burst_s: float) -> int:
    """How many of `arrivals` a bucket of the limit (starting full, as the emulator's) refuses."""
    now = [arrivals[0] if arrivals else 0.0]
    bucket = TokenBucket(int(rpm), clock=lambda: now[0], burst_s=burst_s)
    out = 0
    for a in arrivals:
        now[0] = a
        if bucket.level() < 1 - 1e-9:
            out += 1
        else:
            bucket.take(1)
    return out
