"""One pricing rule (`Price.bill`): cache reads, 5-minute and 1-hour cache writes, batch prices, worst cases.

The estimate, the cost cap, the call rows and the adapters all price through it, so its rules are
stated here once, as properties over any token counts."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.config.load import load_config
from evalcore.config.models import BilledTokens, Price
from evalcore.vendors.protocol import Usage

ANTHROPIC = Price(input=5.0, cached_input=0.5, output=25.0, cache_write=1.25, cache_write_1h=2.0)
OPENAI = Price(input=2.5, cached_input=0.25, output=15.0)

counts = st.integers(min_value=0, max_value=2_000_000)
prices = st.builds(
    Price,
    input=st.floats(0, 100), cached_input=st.floats(0, 100), output=st.floats(0, 100),
    cache_write=st.floats(0, 4), cache_write_1h=st.floats(0, 4),
)


def test_an_anthropic_five_minute_cache_write_costs_one_and_a_quarter_times_input_and_an_hour_twice() -> None:
    five = ANTHROPIC.bill(BilledTokens(1_000_000, 0, 0, cache_write_tokens=1_000_000))
    hour = ANTHROPIC.bill(BilledTokens(1_000_000, 0, 0, cache_write_tokens=1_000_000, cache_write_1h_tokens=1_000_000))
    assert five == (pytest.approx(6.25), pytest.approx(6.25))
    assert hour == (pytest.approx(10.0), pytest.approx(10.0))


def test_the_default_configuration_prices_anthropic_writes_at_its_published_multipliers_and_openai_and_xai_as_input() -> None:
    cfg = load_config()
    by_adapter = {v.adapter: v.price for v in cfg.vendors()}
    assert (by_adapter["anthropic"].cache_write, by_adapter["anthropic"].cache_write_1h) == (1.25, 2.0)
    assert (by_adapter["openai"].cache_write, by_adapter["openai"].cache_write_1h) == (1.0, 1.0)
    assert (by_adapter["xai"].cache_write, by_adapter["xai"].cache_write_1h) == (1.0, 1.0)


@given(prices, counts, counts, counts, counts, counts)
def test_a_bill_is_each_part_of_the_input_at_its_own_price_plus_the_output(
    price: Price, total: int, cached: int, written: int, written_1h: int, out: int
) -> None:
    cached, written = min(cached, total), min(written, total - min(cached, total))
    written_1h = min(written_1h, written)
    bill = price.bill(BilledTokens(total, cached, out, written, written_1h))
    write_usd = ((written - written_1h) * price.cache_write + written_1h * price.cache_write_1h) * price.input / 1e6
    expected = ((total - cached - written) * price.input + cached * price.cached_input + out * price.output) / 1e6
    assert math.isclose(bill.cache_write_usd, write_usd, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(bill.usd, expected + write_usd, rel_tol=1e-9, abs_tol=1e-12)


@given(prices, counts, counts, counts, counts, counts)
def test_inconsistent_counts_are_clamped_so_a_bill_is_never_negative_nor_above_its_worst_case(
    price: Price, total: int, cached: int, written: int, written_1h: int, out: int
) -> None:
    bill = price.bill(BilledTokens(total, cached, out, written, written_1h))
    assert 0 <= bill.cache_write_usd <= bill.usd + 1e-12
    dearest = max(price.input * max(1.0, price.cache_write, price.cache_write_1h), price.cached_input)
    assert bill.usd <= (total * dearest + out * price.output) / 1e6 * (1 + 1e-9) + 1e-12


@given(counts, counts, counts)
def test_the_worst_case_of_a_cacheable_call_covers_every_way_its_input_can_be_billed_with_five_minute_writes(
    total: int, cached: int, out: int
) -> None:
    worst = ANTHROPIC.worst_case(total, out)
    for written in (0, total - min(cached, total), total):
        assert ANTHROPIC.bill(BilledTokens(total, min(cached, total), out, written)).usd <= worst + 1e-12
    assert worst == pytest.approx(ANTHROPIC.bill(BilledTokens(total, 0, out, cache_write_tokens=total)).usd)


def test_the_worst_case_of_a_vendor_whose_writes_cost_input_is_all_input_uncached() -> None:
    assert OPENAI.worst_case(1_000_000, 1_000_000) == pytest.approx(2.5 + 15.0)


def test_batch_prices_halve_the_token_prices_and_keep_the_write_multipliers() -> None:
    batch = ANTHROPIC.for_batch()
    assert (batch.input, batch.cached_input, batch.output) == (2.5, 0.25, 12.5)
    assert (batch.cache_write, batch.cache_write_1h) == (1.25, 2.0)


@given(counts, counts, counts, counts, counts)
def test_a_usage_is_billed_by_the_same_rule_as_its_counts(total: int, cached: int, out: int, w: int, w1: int) -> None:
    usage = Usage(input_tokens=total, cached_input_tokens=cached, output_tokens=out, cache_write_tokens=w,
                  cache_write_1h_tokens=w1)
    assert ANTHROPIC.bill(usage.billed()) == ANTHROPIC.bill(BilledTokens(total, cached, out, w, w1))
    assert ANTHROPIC.cost(total, cached, out, cache_write_tokens=w, cache_write_1h_tokens=w1) == ANTHROPIC.bill(
        usage.billed()).usd
