"""Prediction-powered inference of a mean (`evalcore.results.ppi`): the formula, its bounds, its edges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from evalcore.results.ppi import COUNT, labels_only, ppi_mean

scores = st.lists(st.sampled_from([0.0, 1 / 3, 2 / 3, 1.0]), min_size=2, max_size=40)


def test_ppi_mean_is_the_judges_unlabelled_mean_plus_the_labelled_rectifier_with_the_two_variances_added() -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    f = np.array([1.0, 1.0, 1.0, 2 / 3, 0.0])
    fu = np.array([1.0, 2 / 3, 0.0, 1.0, 1.0, 1 / 3, 0.0, 1.0])
    got = ppi_mean(y, f, fu, bounds=(None, None))
    estimate = fu.mean() + (y - f).mean()
    se = math.sqrt(np.var(fu, ddof=1) / fu.size + np.var(y - f, ddof=1) / y.size)
    z = sps.norm.ppf(0.975)
    assert got.value == pytest.approx(estimate)
    assert got.low == pytest.approx(estimate - z * se)
    assert got.high == pytest.approx(estimate + z * se)
    assert got.n == 5
    clipped = ppi_mean(y, f, fu)
    assert (clipped.low, clipped.value) == (0.0, pytest.approx(estimate))


def test_labels_only_is_the_normal_interval_of_the_labels_mean() -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    got = labels_only(y, confidence=0.9)
    half = sps.norm.ppf(0.95) * math.sqrt(np.var(y, ddof=1) / y.size)
    assert (got.value, got.low, got.high) == pytest.approx((y.mean(), y.mean() - half, y.mean() + half))


def test_with_no_unlabelled_submission_the_estimate_is_the_labels_own() -> None:
    y, f = np.array([1.0, 0.0, 1.0]), np.array([1.0, 1.0, 1.0])
    assert ppi_mean(y, f, []) == labels_only(y)


def test_no_label_gives_no_estimate_and_one_label_an_estimate_without_interval() -> None:
    assert ppi_mean([], [], [1.0, 0.0]).value is None
    one = ppi_mean([0.0], [1.0], [1.0, 1.0])
    assert (one.value, one.low, one.high, one.n) == (0.0, None, None, 1)


def test_labels_and_judges_scores_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="2 expert scores but 3"):
        ppi_mean([1.0, 0.0], [1.0, 0.0, 1.0], [1.0])


@settings(max_examples=200, deadline=None)
@given(y=scores, noise=scores, fu=scores)
def test_a_rate_and_its_interval_never_leave_0_to_1_and_the_interval_holds_the_estimate(
    y: list[float], noise: list[float], fu: list[float]
) -> None:
    f = (noise * len(y))[: len(y)]
    got = ppi_mean(y, f, fu)
    assert got.low is not None and got.high is not None and got.value is not None
    assert 0.0 <= got.low <= got.value <= got.high <= 1.0


@settings(max_examples=100, deadline=None)
@given(y=st.lists(st.integers(0, 4), min_size=2, max_size=30), fu=st.lists(st.integers(0, 4), min_size=1, max_size=30))
def test_a_count_per_task_is_never_estimated_below_zero(y: list[int], fu: list[int]) -> None:
    got = ppi_mean([float(v) for v in y], [0.0] * len(y), [float(v) for v in fu], bounds=COUNT)
    assert got.low is not None and got.low >= 0.0


@settings(max_examples=200, deadline=None)
@given(y=scores, fu=scores)
def test_judges_that_agree_with_every_label_give_the_judges_mean_and_no_label_variance(
    y: list[float], fu: list[float]
) -> None:
    got = ppi_mean(y, y, fu)
    assert got.value == pytest.approx(min(1.0, max(0.0, float(np.mean(fu)))))
    half = sps.norm.ppf(0.975) * math.sqrt(np.var(fu, ddof=1) / len(fu)) if len(fu) > 1 else 0.0
    assert got.high is not None and got.high == pytest.approx(min(1.0, float(np.mean(fu)) + half))


@settings(max_examples=200, deadline=None)
@given(y=scores, f=scores, fu=scores, shift=st.sampled_from([-1 / 3, 1 / 3, 2 / 3]))
def test_shifting_every_judges_score_by_a_constant_leaves_the_estimate_unchanged(
    y: list[float], f: list[float], fu: list[float], shift: float
) -> None:
    f = (f * len(y))[: len(y)]
    plain = ppi_mean(y, f, fu, bounds=(None, None))
    shifted = ppi_mean(y, [v + shift for v in f], [v + shift for v in fu], bounds=(None, None))
    assert shifted.value == pytest.approx(plain.value)
    assert shifted.low == pytest.approx(plain.low)
