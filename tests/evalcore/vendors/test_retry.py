"""The single retry policy: pure decisions, and the shared adapter loop that applies them."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doubles.emulators._limits import openai_duration
from evalcore.config.models import RetryPolicy
from evalcore.errors import ErrorKind, VendorError
from evalcore.vendors.adapters._headers import RateInfo, parse_duration, parse_rate_info, parse_retry_after
from evalcore.vendors.retry import Failure, RetryState, backoff_s, next_delay
from tests.evalcore.vendors._vendor_testkit import Fail, FakeTime, Verdict, bad, request, scripted

POLICY = RetryPolicy(
    max_attempts=5, deadline_s=100.0, base_delay_s=0.5, max_delay_s=8.0, bad_output_retries=1
)
RNG = random.Random(1)


def _state(attempts: int, failure: Failure, bad_outputs: int = 0) -> RetryState:
    s = RetryState(attempts=attempts, bad_outputs=bad_outputs)
    s.record(failure)
    return s


# ------------------------------------------------------------------ the pure policy


def test_fatal_is_never_retried() -> None:
    f = Failure(ErrorKind.FATAL, None, "401")
    assert next_delay(POLICY, f, _state(1, f), 0.0, RNG) is None


@pytest.mark.parametrize("kind", [ErrorKind.RATE_LIMITED, ErrorKind.TRANSIENT, ErrorKind.TIMEOUT])
def test_retryable_kinds_retry_until_max_attempts(kind: ErrorKind) -> None:
    f = Failure(kind, None, "x")
    assert next_delay(POLICY, f, _state(4, f), 0.0, RNG) is not None
    assert next_delay(POLICY, f, _state(5, f), 0.0, RNG) is None


def test_bad_output_is_retried_at_most_bad_output_retries_times() -> None:
    f = Failure(ErrorKind.BAD_OUTPUT, None, "not json")
    assert next_delay(POLICY, f, _state(1, f, bad_outputs=0), 0.0, RNG) is not None  # 1st bad output
    assert next_delay(POLICY, f, _state(2, f, bad_outputs=1), 0.0, RNG) is None  # 2nd: over budget


def test_retry_after_is_honoured_even_beyond_max_delay() -> None:
    f = Failure(ErrorKind.RATE_LIMITED, 30.0, "429")
    assert next_delay(POLICY, f, _state(1, f), 0.0, RNG) == 30.0


def test_no_retry_whose_wait_ends_past_the_deadline() -> None:
    f = Failure(ErrorKind.RATE_LIMITED, 30.0, "429")
    assert next_delay(POLICY, f, _state(1, f), 69.0, RNG) == 30.0
    assert next_delay(POLICY, f, _state(1, f), 71.0, RNG) is None


@given(
    attempt=st.integers(min_value=1, max_value=40),
    seed=st.integers(min_value=0, max_value=2**32),
    retry_after=st.none() | st.floats(min_value=0, max_value=50),
)
def test_delay_is_full_jitter_bounded_by_max_delay_and_never_below_retry_after(
    attempt: int, seed: int, retry_after: float | None
) -> None:
    policy = RetryPolicy(max_attempts=100, deadline_s=1e9, base_delay_s=0.5, max_delay_s=8.0)
    f = Failure(ErrorKind.TRANSIENT, retry_after, "x")
    delay = next_delay(policy, f, _state(attempt, f), 0.0, random.Random(seed))
    assert delay is not None
    ceiling = min(8.0, 0.5 * 2 ** (attempt - 1))
    assert 0.0 <= backoff_s(policy, attempt, random.Random(seed)) <= ceiling
    assert delay >= (retry_after or 0.0)
    assert delay <= max(ceiling, retry_after or 0.0)


# ------------------------------------------------------------------ the adapter loop


async def test_rate_limited_attempt_waits_at_least_retry_after_and_is_counted() -> None:
    t = FakeTime()
    v = scripted([Fail(ErrorKind.RATE_LIMITED, retry_after=30.0)], t)
    reply = await v.complete(request(), Verdict)
    assert reply.output.ok is True
    assert (reply.attempts, reply.rate_limited) == (2, 1)
    assert t.sleeps and t.sleeps[0] >= 30.0
    assert v.budget is not None and v.budget.stats.rate_limited == 1


async def test_fatal_failure_raises_after_one_attempt() -> None:
    t = FakeTime()
    v = scripted([Fail(ErrorKind.FATAL, msg="HTTP 401 AuthenticationError")], t)
    with pytest.raises(VendorError) as info:
        await v.complete(request(), Verdict)
    assert info.value.kind is ErrorKind.FATAL
    assert info.value.attempts == 1
    assert "HTTP 401" in str(info.value) and "scripted (m-1)" in str(info.value)
    assert t.sleeps == []
    assert info.value.__context__ is None and info.value.__cause__ is None


async def test_bad_output_then_success_sums_billed_usage_and_cost() -> None:
    t = FakeTime()
    v = scripted([bad(), {"ok": True}], t)
    reply = await v.complete(request(), Verdict)
    assert reply.attempts == 2
    # the bad attempt billed 100 in / 5 out; the good one 100 in (40 cached) / 10 out
    assert (reply.usage.input_tokens, reply.usage.cached_input_tokens, reply.usage.output_tokens) == (
        200,
        40,
        15,
    )
    expected = (100 * 2.0 + 5 * 10.0 + 60 * 2.0 + 40 * 0.5 + 10 * 10.0) / 1e6
    assert reply.cost_usd == pytest.approx(expected)


async def test_bad_output_gives_up_after_bad_output_retries() -> None:
    t = FakeTime()
    v = scripted([bad(), bad(), bad(), {"ok": True}], t)  # bad_output_retries = 2
    with pytest.raises(VendorError) as info:
        await v.complete(request(), Verdict)
    assert (info.value.kind, info.value.attempts) == (ErrorKind.BAD_OUTPUT, 3)


async def test_gives_up_at_max_attempts_with_the_last_kind_and_429_count() -> None:
    t = FakeTime()
    script = [Fail(ErrorKind.RATE_LIMITED, 0.01)] * 3 + [Fail(ErrorKind.TRANSIENT)] * 3
    v = scripted(script, t)
    with pytest.raises(VendorError) as info:
        await v.complete(request(), Verdict)
    err = info.value
    assert (err.kind, err.attempts, err.rate_limited) == (ErrorKind.TRANSIENT, 6, 3)


async def test_deadline_bounds_the_whole_call() -> None:
    t = FakeTime()
    v = scripted([Fail(ErrorKind.RATE_LIMITED, 400.0)] * 5, t, retry={"deadline_s": 1000, "max_attempts": 10})
    with pytest.raises(VendorError) as info:
        await v.complete(request(), Verdict)
    assert info.value.attempts == 3  # waits 400 + 400 fit; a third would end past 1000 s
    assert sum(t.sleeps) == pytest.approx(800.0)


async def test_complete_many_returns_failures_in_place() -> None:
    t = FakeTime()
    v = scripted([{"ok": True}, Fail(ErrorKind.FATAL), {"ok": False}], t)
    out = await v.complete_many([request(0), request(1), request(2)], Verdict)
    assert [type(o).__name__ for o in out] == ["JudgeReply", "VendorError", "JudgeReply"]


async def test_missing_key_is_fatal_and_names_the_environment_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    t = FakeTime()
    monkeypatch.delenv("TRIBUNAL_TEST_NO_SUCH_KEY", raising=False)
    v = scripted([], t, api_key_env="TRIBUNAL_TEST_NO_SUCH_KEY")
    v.needs_key = True  # type: ignore[misc]
    with pytest.raises(VendorError) as info:
        await v.complete(request(), Verdict)
    assert info.value.kind is ErrorKind.FATAL
    assert "TRIBUNAL_TEST_NO_SUCH_KEY" in str(info.value)
    assert v.sent == []


# ------------------------------------------------------------------ retry hints from headers


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("6m0s", 360.0), ("1.5s", 1.5), ("20ms", 0.02), ("1h2m3s", 3723.0), ("0.25", 0.25), ("7", 7.0)],
)
def test_openai_reset_durations_parse_to_seconds(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "5 minutes", "1x"])
def test_unparseable_durations_are_ignored(text: str) -> None:
    assert parse_duration(text) is None


@given(st.floats(min_value=0, max_value=30_000, allow_nan=False))
def test_durations_as_the_emulator_writes_them_parse_back(seconds: float) -> None:
    assert parse_duration(openai_duration(seconds)) == pytest.approx(seconds, abs=0.001)


def test_openai_headers_give_remaining_limits_and_resets() -> None:
    info = parse_rate_info(
        {
            "x-ratelimit-limit-requests": "600",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "6m0s",
            "x-ratelimit-limit-tokens": "2000000",
            "x-ratelimit-remaining-tokens": "1999000",
            "x-ratelimit-reset-tokens": "30ms",
            "retry-after": "2",
        }
    )
    assert info == RateInfo(2.0, 0, 1_999_000, 360.0, 0.03, 600, 2_000_000)


def test_anthropic_headers_give_rfc3339_resets_and_the_tightest_token_limit() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    info = parse_rate_info(
        {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "3",
            "anthropic-ratelimit-requests-reset": "2026-01-01T12:00:05Z",
            "anthropic-ratelimit-input-tokens-remaining": "900",
            "anthropic-ratelimit-output-tokens-remaining": "100",
            "anthropic-ratelimit-tokens-reset": "2026-01-01T12:00:01.5Z",
        },
        now_epoch=now,
    )
    assert (info.remaining_requests, info.reset_requests_s, info.limit_requests) == (3, 5.0, 50)
    assert (info.remaining_tokens, info.reset_tokens_s) == (100, 1.5)


def test_retry_after_as_an_http_date_is_seconds_from_now() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    assert parse_retry_after({"Retry-After": "Thu, 01 Jan 2026 12:00:30 GMT"}, now) == 30.0


def test_negative_grpc_pushback_means_no_hint() -> None:
    assert parse_retry_after([("grpc-retry-pushback-ms", "-1")]) is None
    assert parse_retry_after([("grpc-retry-pushback-ms", b"150")]) == 0.15


# ------------------------------------------------------------------ cancellation


async def test_a_call_cancelled_as_its_attempt_finishes_is_cancelled_not_answered() -> None:
    """A cancelled call (Ctrl-C, a stopped shard) raises CancelledError even when its attempt has
    just finished: the per-attempt limit must not swallow the cancellation. Python 3.11's
    `asyncio.wait_for` did (CPython gh-86296): the attempt ran as a task of its own, finished one
    loop turn before the caller resumed, and a cancel landing in between got the answer back."""
    t = FakeTime()
    v = scripted([], t)
    gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    entered = asyncio.Event()
    attempt = v._attempt

    async def gated(*args: Any) -> Any:
        entered.set()
        await gate
        return await attempt(*args)

    v._attempt = gated  # type: ignore[method-assign]
    call = asyncio.ensure_future(v.complete(request(), Verdict))
    await entered.wait()
    gate.set_result(None)  # the attempt can finish...
    await asyncio.sleep(0)  # ...and does, in the loop turn before this one resumes
    accepted = call.cancel()
    outcome = await asyncio.gather(call, return_exceptions=True)
    # a cancel accepted while the call was still running ends it as cancelled; one refused (the call
    # had already returned) leaves its answer
    assert isinstance(outcome[0], asyncio.CancelledError) if accepted else not isinstance(outcome[0], BaseException)
    assert v.sent  # the attempt was made either way


# ------------------------------------------------------------------ the server's x-should-retry


@pytest.mark.parametrize("kind", [ErrorKind.RATE_LIMITED, ErrorKind.TRANSIENT, ErrorKind.TIMEOUT])
def test_should_retry_false_is_never_retried_whatever_the_kind(kind: ErrorKind) -> None:
    f = Failure(kind, None, "x", should_retry=False)
    assert next_delay(POLICY, f, _state(1, f), 0.0, RNG) is None


def test_should_retry_true_retries_a_fatal_status_within_max_attempts_and_the_deadline() -> None:
    f = Failure(ErrorKind.FATAL, 2.0, "400", should_retry=True)
    assert next_delay(POLICY, f, _state(1, f), 0.0, RNG) == 2.0  # the server's retry-after still holds
    assert next_delay(POLICY, f, _state(5, f), 0.0, RNG) is None
    assert next_delay(POLICY, f, _state(1, f), 99.0, RNG) is None


@pytest.mark.parametrize(
    "kind", [ErrorKind.RATE_LIMITED, ErrorKind.TRANSIENT, ErrorKind.TIMEOUT, ErrorKind.BAD_OUTPUT, ErrorKind.FATAL]
)
def test_no_header_leaves_the_kind_to_decide(kind: ErrorKind) -> None:
    f = Failure(kind, None, "x")
    retried = next_delay(POLICY, f, _state(1, f), 0.0, RNG) is not None
    assert retried == (kind is not ErrorKind.FATAL)


# ------------------------------------------------------------------ an answer stopped at its output cap


def test_a_truncated_answer_is_retried_once_at_once_and_not_counted_as_a_bad_output() -> None:
    f = Failure(ErrorKind.BAD_OUTPUT, None, "truncated output", truncated=True)
    first = _state(1, f)
    assert (first.truncations, first.bad_outputs) == (1, 0)
    assert next_delay(POLICY, f, first, 0.0, RNG) == 0.0
    second = RetryState(attempts=2, truncations=1)
    second.record(f)
    assert next_delay(POLICY, f, second, 0.0, RNG) is None


def test_a_truncation_retry_leaves_the_bad_output_allowance_whole() -> None:
    truncated = Failure(ErrorKind.BAD_OUTPUT, None, "truncated output", truncated=True)
    malformed = Failure(ErrorKind.BAD_OUTPUT, None, "not json")
    state = _state(1, truncated)
    state.attempts = 2
    state.record(malformed)  # POLICY allows one bad output retry: this is it
    assert next_delay(POLICY, malformed, state, 0.0, RNG) is not None


def test_a_truncation_retry_past_the_deadline_or_max_attempts_is_not_sent() -> None:
    f = Failure(ErrorKind.BAD_OUTPUT, None, "truncated output", truncated=True)
    assert next_delay(POLICY, f, _state(1, f), 100.0, RNG) is None
    assert next_delay(POLICY, f, _state(5, f), 0.0, RNG) is None
