"""Entries sharing one vendor account are budgeted together, never above the account's limits,
whichever files they come from (defaults, `tribunal emulate --write-config`, a user's YAML)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from doubles.emulators.serve import emulated_config
from evalcore.config.load import load_config
from evalcore.config.models import RateLimits, TribunalConfig, VendorConfig
from evalcore.vendors.budget import RateBudget

ENDPOINTS = {"openai": "http://127.0.0.1:1", "anthropic": "http://127.0.0.1:2", "xai": "127.0.0.1:3"}


def account_rpm(cfg: TribunalConfig, adapter: str) -> float:
    """Requests per minute the budgets of every entry on that adapter's account add up to."""
    members = [v for v in cfg.vendors() if v.adapter == adapter]
    assert len({v.account() for v in members}) == 1
    return sum(RateBudget.for_vendor(v).requests_per_minute for v in members)


def test_the_default_openai_judge_and_auditor_share_one_account_and_split_it_two_to_one() -> None:
    cfg = load_config()
    judge, auditor = cfg.judges[0], cfg.auditor
    assert judge.account() == auditor.account()
    assert (judge.account_fraction, auditor.account_fraction) == pytest.approx((2 / 3, 1 / 3))
    assert account_rpm(cfg, "openai") == pytest.approx(600)
    assert account_rpm(cfg, "anthropic") == pytest.approx(600)


@pytest.mark.parametrize("rpm", [600, 300])
def test_a_config_written_by_emulate_budgets_each_account_at_the_servers_limit_not_above(
    tmp_path: Path, rpm: int
) -> None:
    path = tmp_path / "emulated.yaml"
    limits = RateLimits(requests_per_minute=rpm, tokens_per_minute=1_000_000)
    path.write_text(yaml.safe_dump(emulated_config(ENDPOINTS, limits=limits), sort_keys=False))
    cfg = load_config(path)  # the judges list replaces the defaults, the auditor merges into them
    for adapter in ("openai", "anthropic", "xai"):
        assert account_rpm(cfg, adapter) == pytest.approx(rpm)


def test_a_user_file_raising_one_entrys_limits_never_raises_its_accounts(tmp_path: Path) -> None:
    base = load_config()
    judges = [j.model_dump(mode="json") for j in base.judges]
    judges[0]["limits"] = {"requests_per_minute": 5000, "tokens_per_minute": 50_000_000}
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump({"judges": judges}))
    cfg = load_config(path)
    assert account_rpm(cfg, "openai") == pytest.approx(600)  # the auditor still states 600


def test_entries_on_other_keys_or_endpoints_are_separate_accounts() -> None:
    base = load_config()
    auditor = base.auditor.model_copy(update={"api_key_env": "OTHER_OPENAI_KEY"})
    cfg = TribunalConfig.model_validate({**base.public_dict(), "auditor": auditor.model_dump(mode="json")})
    assert cfg.judges[0].account_fraction == 1.0 and cfg.auditor.account_fraction == 1.0


def test_validating_a_recorded_configuration_again_gives_the_same_budgets() -> None:
    cfg = load_config()
    again = TribunalConfig.model_validate(cfg.public_dict())
    assert again == cfg
    assert [VendorConfig.model_validate(v.model_dump()).account_fraction for v in again.vendors()] == [
        v.account_fraction for v in cfg.vendors()
    ]
