"""The vendor stack is built in one place (`evalcore.vendors.stack`): reuse over batching over the
adapter, the spending cap on the layers that pay, one budget per account, each entry's own store."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.config.models import BatchConfig, VendorConfig
from evalcore.cost.cost_cap import CostLedger, LocalLedger
from evalcore.vendors.adapters.common import AdapterBase
from evalcore.vendors.stack import BatchMode, build_stacks

KEY_ENV = "TRIBUNAL_TEST_STACK_KEY"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "stack-key-0123456789")


def entry(name: str, adapter: str = "openai", endpoint: str = "http://127.0.0.1:9/v1") -> VendorConfig:
    """An entry whose client is never opened here (building a stack sends nothing)."""
    return VendorConfig(adapter=adapter, name=name, family=adapter, model="gpt-5.2", endpoint=endpoint,
                        api_key_env=KEY_ENV)


def test_in_batch_mode_reuse_wraps_batching_which_falls_back_to_the_adapter_and_the_cap_guards_both(
    tmp_path: Path,
) -> None:
    ledger = LocalLedger(CostLedger(10.0))
    batch = BatchMode(BatchConfig(enabled=True), str(tmp_path / "run"), label="run-1")
    [stack] = build_stacks([entry("judge")], run_id="run-1", ledger=ledger, batch=batch).values()
    assert stack.batching is not None and stack.vendor.inner is stack.batching
    assert stack.batching.online is stack.adapter
    assert stack.batching.spend_guard is ledger
    assert isinstance(stack.adapter, AdapterBase) and stack.adapter.spend_guard is ledger


def test_online_reuse_wraps_the_adapter_and_without_a_ledger_nothing_is_capped() -> None:
    [stack] = build_stacks([entry("judge")], run_id="run-1", batch=None).values()
    assert stack.batching is None and stack.vendor.inner is stack.adapter
    assert isinstance(stack.adapter, AdapterBase) and stack.adapter.spend_guard is None


def test_a_disabled_batch_mode_or_a_vendor_without_a_batch_api_stays_online(tmp_path: Path) -> None:
    off = BatchMode(BatchConfig(enabled=False), str(tmp_path / "run"), label="run-1")
    assert build_stacks([entry("judge")], run_id="r", batch=off)["judge"].batching is None
    on = BatchMode(BatchConfig(enabled=True), str(tmp_path / "run"), label="run-1")
    offline = VendorConfig(adapter="offline", name="off", family="offline", model="offline", api_key_env=KEY_ENV)
    assert build_stacks([offline], run_id="r", batch=on)["off"].batching is None


def test_the_entries_of_one_account_share_one_budget_and_each_keeps_its_own_store() -> None:
    stores = {"judge": {"h1": ("run-0", "{}")}, "auditor": {"h2": ("run-0", "{}")}}
    stacks = build_stacks([entry("judge"), entry("auditor")], run_id="run-1", stored=stores.__getitem__)
    budgets = {id(getattr(s.adapter, "budget", None)) for s in stacks.values()}
    assert len(budgets) == 1 and getattr(stacks["judge"].adapter, "budget", None) is not None
    assert stacks["judge"].vendor.stored is stores["judge"] and stacks["auditor"].vendor.stored is stores["auditor"]
    other = build_stacks([entry("judge"), entry("xai", adapter="xai", endpoint="http://127.0.0.1:9")], run_id="r")
    assert getattr(other["judge"].adapter, "budget", None) is not getattr(other["xai"].adapter, "budget", None)
