"""Server-side limits of the emulators: token-bucket arithmetic on a fake clock, header formats."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doubles.emulators import ServerLimits
from doubles.emulators._limits import (
    NOMINAL_REQUESTS_PER_MINUTE,
    RateLimiter,
    openai_duration,
    seconds_text,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limiter(rpm: int | None = None, tpm: int | None = None) -> tuple[RateLimiter, FakeClock]:
    clock = FakeClock()
    return RateLimiter(ServerLimits(requests_per_minute=rpm, tokens_per_minute=tpm), clock), clock


def test_a_burst_gets_exactly_the_per_minute_capacity_then_429s() -> None:
    lim, _ = limiter(rpm=60)
    admitted = [lim.admit(10).admitted for _ in range(65)]
    assert admitted == [True] * 60 + [False] * 5


def test_rejection_says_requests_scope_and_retry_after_is_one_refill_interval() -> None:
    lim, clock = limiter(rpm=60)
    for _ in range(60):
        lim.admit(1)
    verdict = lim.admit(1)
    assert (verdict.admitted, verdict.scope) == (False, "requests")
    assert verdict.retry_after_s == pytest.approx(1.0)
    clock.now += verdict.retry_after_s
    assert lim.admit(1).admitted


def test_token_limit_rejects_with_tokens_scope_and_waits_for_the_shortfall() -> None:
    lim, clock = limiter(tpm=6000)  # 100 tokens per second
    assert lim.admit(5000).admitted
    verdict = lim.admit(2000)
    assert (verdict.admitted, verdict.scope) == (False, "tokens")
    assert verdict.retry_after_s == pytest.approx(10.0)  # needs 2000, has 1000, refills 100/s
    clock.now += 10.0
    assert lim.admit(2000).admitted


def test_output_tokens_charged_after_the_answer_can_put_the_bucket_in_debt() -> None:
    lim, clock = limiter(tpm=600)  # 10 tokens per second
    assert lim.admit(100).admitted
    lim.charge_output(1000)
    assert lim.snapshot().tokens_remaining == 0
    assert not lim.admit(1).admitted
    clock.now += 50.0  # debt of 500 repaid, 0 left
    assert not lim.admit(1).admitted
    clock.now += 0.1
    assert lim.admit(1).admitted


def test_a_request_larger_than_the_whole_bucket_waits_only_for_a_full_bucket() -> None:
    lim, _ = limiter(tpm=600)
    assert lim.admit(300).admitted
    verdict = lim.admit(10_000)
    assert not verdict.admitted and verdict.retry_after_s == pytest.approx(30.0)


def test_unconfigured_limits_are_not_enforced_but_still_reported() -> None:
    lim, _ = limiter()
    assert all(lim.admit(10_000_000).admitted for _ in range(50))
    snap = lim.snapshot()
    assert snap.requests_limit == NOMINAL_REQUESTS_PER_MINUTE
    assert snap.requests_remaining == NOMINAL_REQUESTS_PER_MINUTE - 50


def test_snapshot_reports_remaining_and_time_until_full() -> None:
    lim, clock = limiter(rpm=120, tpm=12_000)
    for _ in range(30):
        lim.admit(100)
    snap = lim.snapshot()
    assert (snap.requests_remaining, snap.tokens_remaining) == (90, 9000)
    assert snap.requests_reset_s == pytest.approx(15.0) and snap.tokens_reset_s == pytest.approx(15.0)
    clock.now += 15.0
    assert lim.snapshot().requests_remaining == 120


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "0ms"),
        (0.02, "20ms"),
        (1.0, "1s"),
        (1.5, "1.5s"),
        (59.25, "59.25s"),
        (360.0, "6m0s"),
        (3723.0, "1h2m3s"),
    ],
)
def test_openai_reset_durations_use_the_vendor_format(seconds: float, text: str) -> None:
    assert openai_duration(seconds) == text


@given(st.floats(min_value=0, max_value=100_000, allow_nan=False))
def test_retry_after_text_never_understates_the_wait(seconds: float) -> None:
    value = float(seconds_text(seconds))
    assert seconds <= value + 1e-9 < seconds + 0.001 + 1e-6


@given(
    rpm=st.integers(min_value=1, max_value=200),
    gaps=st.lists(st.floats(min_value=0, max_value=5, allow_nan=False), min_size=1, max_size=300),
)
def test_no_window_of_one_minute_admits_more_than_capacity_plus_refill(rpm: int, gaps: list[float]) -> None:
    lim, clock = limiter(rpm=rpm)
    times: list[float] = []
    for gap in gaps:
        clock.now += gap
        if lim.admit(1).admitted:
            times.append(clock.now)
    for i, start in enumerate(times):
        in_window = sum(1 for t in times[i:] if t - start < 60.0)
        assert in_window <= 2 * rpm  # a token bucket allows a full bucket plus one minute of refill


@given(rpm=st.integers(min_value=1, max_value=100), extra=st.integers(min_value=1, max_value=50))
def test_waiting_the_retry_after_is_always_enough(rpm: int, extra: int) -> None:
    lim, clock = limiter(rpm=rpm)
    for _ in range(rpm):
        assert lim.admit(1).admitted
    for _ in range(extra):
        verdict = lim.admit(1)
        assert not verdict.admitted
        clock.now += float(seconds_text(verdict.retry_after_s))
        assert lim.admit(1).admitted
