"""Model ids are checked against the installed SDKs' own lists where the configuration is loaded:
a warning (never a refusal) naming the entry, the id and the closest listed ids; read cheaply."""

from __future__ import annotations

import importlib.metadata
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.config import model_ids
from evalcore.config.load import load_config
from evalcore.config.models import VendorConfig, VendorMode
from evalcore.errors import ConfigError


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "panel.yaml"
    path.write_text(text)
    return path


def _judges(anthropic_model: str) -> str:
    return (
        "judges:\n"
        "  - {adapter: openai, name: openai, family: openai, model: gpt-6-sol}\n"
        "  - {adapter: xai, name: xai, family: xai, model: grok-4.6}\n"
        f"  - {{adapter: anthropic, name: anthropic, family: anthropic, model: {anthropic_model}}}\n"
    )


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_ids, "_warned", set())


def test_every_default_model_id_is_one_its_sdk_lists_or_a_declared_newer_one(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="evalcore.config"):
        cfg = load_config()
    assert model_ids.unknown_models(cfg) == []
    assert caplog.records == []
    listed = {v.model: model_ids.known_models(v.adapter) for v in cfg.vendors()}
    assert "claude-opus-5-5" in listed["claude-opus-5-5"].ids  # type: ignore[union-attr]
    assert "gpt-6-sol" in listed["gpt-6-sol"].ids  # type: ignore[union-attr]
    assert "grok-4.7" not in listed["grok-4.7"].ids and cfg.known_newer_models["xai"] == ["grok-4.7"]  # type: ignore[union-attr]


def test_an_id_the_sdk_does_not_list_is_a_warning_naming_the_entry_the_sdk_and_the_closest_listed_id(
    tmp_path, caplog
) -> None:
    with caplog.at_level(logging.WARNING, logger="evalcore.config"):
        cfg = load_config(_yaml(tmp_path, _judges("claude-opus-5.5")))
    assert cfg.judges[2].model == "claude-opus-5.5"  # loaded all the same: vendors ship models before SDKs
    [record] = caplog.records
    version = importlib.metadata.version("anthropic")
    assert record.levelno == logging.WARNING
    assert f"anthropic: model 'claude-opus-5.5' is not in anthropic {version}'s list" in record.getMessage()
    assert "closest listed: claude-opus-5-5" in record.getMessage()
    assert "known_newer_models.anthropic" in record.getMessage()


def test_an_id_declared_newer_than_the_sdk_draws_no_warning(tmp_path, caplog) -> None:
    text = _judges("claude-opus-6") + "known_newer_models: {anthropic: [claude-opus-6]}\n"
    with caplog.at_level(logging.WARNING, logger="evalcore.config"):
        load_config(_yaml(tmp_path, text))
    assert caplog.records == []


def test_a_command_loading_its_configuration_twice_warns_once(tmp_path, caplog) -> None:
    path = _yaml(tmp_path, _judges("claude-opus-5.5"))
    with caplog.at_level(logging.WARNING, logger="evalcore.config"):
        load_config(path)
        load_config(path)
    assert len(caplog.records) == 1


def test_offline_judges_call_no_model_and_are_not_checked(tmp_path, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="evalcore.config"):
        load_config(_yaml(tmp_path, _judges("claude-opus-5.5")), vendors=VendorMode.OFFLINE)
    assert caplog.records == []


def test_an_adapter_whose_sdk_publishes_no_list_is_not_checked() -> None:
    entry = VendorConfig(adapter="zero", name="z", family="z", model="anything-at-all")
    assert model_ids.known_models("zero") is None
    assert model_ids.unknown_model(entry) is None


@pytest.mark.parametrize(("adapter", "listed"), [("openai", "gpt-5.5-pro"), ("openai", "gpt-6-luna"),
                                                 ("anthropic", "claude-haiku-5-5"), ("xai", "grok-4.6")])
def test_the_lists_are_read_from_the_sdks_own_literal_types(adapter: str, listed: str) -> None:
    known = model_ids.known_models(adapter)
    assert known is not None and listed in known.ids


def test_reading_the_lists_imports_no_sdk() -> None:
    code = (
        "import sys\n"
        "from evalcore.config.load import load_config\n"
        "from evalcore.config.model_ids import unknown_models\n"
        "unknown_models(load_config())\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'xai_sdk') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("tokens", [0, 15])
def test_max_output_tokens_below_sixteen_is_refused_naming_the_setting(tmp_path, tokens: int) -> None:
    path = _yaml(tmp_path, f"auditor: {{max_output_tokens: {tokens}}}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert f"{path}: auditor.max_output_tokens: " in str(err.value)
    assert "max_output_tokens must be at least 16" in str(err.value)


def test_sixteen_output_tokens_are_accepted(tmp_path) -> None:
    assert load_config(_yaml(tmp_path, "auditor: {max_output_tokens: 16}\n")).auditor.max_output_tokens == 16
