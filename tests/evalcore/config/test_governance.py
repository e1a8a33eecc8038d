"""The configuration's data_governance section: validated like the rest, a private preset that sets
and holds the strictest value of each setting, and the governed expiries reaching the batch queue."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.config.load import load_config
from evalcore.config.models import TribunalConfig
from evalcore.errors import ConfigError


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "governance.yaml"
    path.write_text(text)
    return path


def test_the_standard_defaults_allow_every_batch_api_purge_and_expire_openai_files_within_days() -> None:
    gov = load_config().data_governance
    assert gov.preset == "standard" and gov.purge
    assert (gov.batch_allowed.openai, gov.batch_allowed.anthropic, gov.batch_allowed.xai) == (True, True, True)
    assert (gov.openai_input_file_expires_after_s, gov.openai_output_files_expire_after_s) == (90_000, 259_200)
    assert gov.cache_dir is None


def test_the_private_preset_sets_the_strictest_of_each_and_the_batch_queue_gets_its_expiries(tmp_path) -> None:
    cfg = load_config(_yaml(tmp_path, "data_governance: {preset: private}\n"))
    gov = cfg.data_governance
    assert gov.batch_allowed.xai is False and gov.batch_refused("xai") and not gov.batch_refused("openai")
    assert gov.purge and gov.openai_output_files_expire_after_s == 86_400
    assert cfg.batch.retention.input_file_expires_after_s == 90_000
    assert cfg.batch.retention.output_files_expire_after_s == 86_400
    # run.json holds every value explicitly; validating it again keeps them
    again = TribunalConfig.model_validate(cfg.public_dict())
    assert again.data_governance == gov and again.batch.retention == cfg.batch.retention


def test_the_private_preset_keeps_a_stricter_value_given_next_to_it(tmp_path) -> None:
    cfg = load_config(_yaml(tmp_path, "data_governance: {preset: private, openai_output_files_expire_after_s: 3600, "
                                      "batch_allowed: {anthropic: false}}\n"))
    assert cfg.data_governance.openai_output_files_expire_after_s == 3_600
    assert cfg.data_governance.batch_refused("anthropic") and cfg.data_governance.batch_refused("xai")
    assert cfg.batch.retention.output_files_expire_after_s == 3_600


def test_the_private_preset_refuses_a_laxer_value_naming_each(tmp_path) -> None:
    path = _yaml(tmp_path, "data_governance: {preset: private, purge: false, batch_allowed: {xai: true}, "
                           "openai_input_file_expires_after_s: 2592000}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    assert str(path) in text
    for said in ("batch_allowed.xai: true (private: false)", "purge: false (private: true)",
                 "openai_input_file_expires_after_s: 2592000 (private: at most 90000)"):
        assert said in text


def test_the_private_preset_set_by_environment_variable_is_held_like_one_in_a_file(monkeypatch) -> None:
    monkeypatch.setenv("TRIBUNAL_DATA_GOVERNANCE__PRESET", "private")
    assert load_config().data_governance.batch_refused("xai")
    monkeypatch.setenv("TRIBUNAL_DATA_GOVERNANCE__PURGE", "false")
    with pytest.raises(ConfigError, match="purge: false"):
        load_config()


def test_the_private_preset_refuses_a_day_of_prompt_cache_retention(tmp_path) -> None:
    path = _yaml(tmp_path, "data_governance: {preset: private}\n"
                           "auditor: {prompt_cache_retention: 24h}\n")
    with pytest.raises(ConfigError, match="prompt_cache_retention 24h on auditor"):
        load_config(path)
    assert load_config(_yaml(tmp_path, "auditor: {prompt_cache_retention: 24h}\n")).auditor.prompt_cache_retention == "24h"


@pytest.mark.parametrize(("text", "said"), [
    ("data_governance: {purgee: false}\n", "unknown key 'data_governance.purgee'; did you mean 'purge'?"),
    ("data_governance: {batch_allowed: {xia: false}}\n", "unknown key 'data_governance.batch_allowed.xia'"),
    ("data_governance: {preset: secret}\n", "data_governance.preset"),
    ("data_governance: {openai_output_files_expire_after_s: 60}\n",
     "data_governance.openai_output_files_expire_after_s: Input should be greater than or equal to 3600"),
    ("data_governance: {openai_input_file_expires_after_s: 2592001}\n", "less than or equal to 2592000"),
    ("data_governance: {cache_dir: 's3://bucket/cache'}\n", "a local folder"),
])
def test_a_bad_governance_setting_names_the_file_and_the_key(tmp_path, text, said) -> None:
    path = _yaml(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(path) in str(err.value) and said in str(err.value)
