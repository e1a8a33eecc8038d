"""Configuration: YAML + environment through pydantic-settings, unknown keys refused with a hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.config.load import DEFAULTS_FILE, load_config
from evalcore.config.models import TribunalConfig, VendorConfig, VendorMode
from evalcore.errors import ConfigError
from evalcore.grading.scoring import AuditMode
from evalcore.vendors import registry


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "panel.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "key", "closest"),
    [
        ("bootstrap_sample: 500\n", "bootstrap_sample", "bootstrap_samples"),
        ("prompt_budgett: {rubric_tokens: 1000}\n", "prompt_budgett", "prompt_budget"),
        ("auditor: {modle: gpt-7}\n", "auditor.modle", "model"),
        ("audit: {grounding_candidate: false}\n", "audit.grounding_candidate", "grounding_candidates"),
    ],
)
def test_an_unknown_key_names_the_file_the_key_and_its_closest_valid_name(tmp_path, text, key, closest) -> None:
    path = _yaml(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert f"{path}: unknown key '{key}'; did you mean '{closest}'?" in str(err.value)


def test_an_unknown_key_in_a_judge_entry_names_its_index(tmp_path) -> None:
    judges = "\n".join(
        f"  - {{adapter: {a}, name: {a}, family: {a}, model: m{', maxoutput_tokens: 10' if a == 'xai' else ''}}}"
        for a in ("openai", "xai", "anthropic")
    )
    path = _yaml(tmp_path, f"judges:\n{judges}\n")
    with pytest.raises(ConfigError, match=r"unknown key 'judges\.1\.maxoutput_tokens'; did you mean 'max_output_tokens'"):
        load_config(path)


def test_a_bad_value_names_the_file_and_the_rule(tmp_path) -> None:
    path = _yaml(tmp_path, "judges:\n  - {adapter: openai, name: a, family: a, model: m}\n")
    with pytest.raises(ConfigError, match=rf"{path}: judges: Value error, the panel needs exactly 3 judges, got 1"):
        load_config(path)


def test_the_user_yaml_merges_over_the_defaults_key_by_key(tmp_path) -> None:
    cfg = load_config(_yaml(tmp_path, "audit: {grounding_candidates: false}\nfamily_map: {mistral: mistral}\n"))
    defaults = load_config()
    assert cfg.audit.grounding_candidates is False and cfg.audit.mode == AuditMode.SCORED
    assert cfg.family_map == {**defaults.family_map, "mistral": "mistral"}
    assert cfg.judges == defaults.judges  # lists are replaced only when the user gives one


def test_environment_variables_override_the_yaml_files(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TRIBUNAL_SEED", "7")
    monkeypatch.setenv("TRIBUNAL_AUDIT__MODE", "always")
    cfg = load_config(_yaml(tmp_path, "seed: 3\n"))
    assert cfg.seed == 7 and cfg.audit.mode == AuditMode.ALWAYS
    assert type(cfg) is TribunalConfig  # what the rest of the code sees never reads the environment again


def test_an_unknown_key_from_the_environment_names_the_variable(monkeypatch) -> None:
    monkeypatch.setenv("TRIBUNAL_AUDIT__MODEE", "always")
    with pytest.raises(ConfigError, match=r"environment TRIBUNAL_AUDIT__MODEE: unknown key 'audit\.modee'; did you mean 'mode'"):
        load_config()


def test_unrelated_tribunal_variables_are_not_configuration(monkeypatch) -> None:
    monkeypatch.setenv("TRIBUNAL_CACHE_DIR", "off")
    assert load_config().seed == load_config(DEFAULTS_FILE).seed


def test_a_registered_test_adapter_is_accepted_by_the_configuration(monkeypatch) -> None:
    from doubles.adapters.offline import OfflineVendor

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # registered for this test only
    overrides = {"auditor": {"adapter": "echo-test"}}
    with pytest.raises(ConfigError, match="unknown adapter 'echo-test'"):
        load_config(overrides=overrides)

    @registry.register("echo-test")
    def _echo() -> registry.AdapterFactory:
        return OfflineVendor

    cfg = load_config(overrides=overrides)
    assert cfg.auditor.adapter == "echo-test" and "echo-test" in registry.adapters()
    assert isinstance(registry.create_vendor(cfg.auditor), OfflineVendor)


def test_the_configuration_models_alone_do_not_consult_the_registry() -> None:
    """The models import no vendor code: the loader checks adapter names (no import circle)."""
    entry = {"adapter": "not-registered", "name": "x", "family": "x", "model": "x-1"}
    assert VendorConfig.model_validate(entry).adapter == "not-registered"


def test_a_misspelled_adapter_is_refused_with_the_closest_registered_name(tmp_path) -> None:
    path = _yaml(tmp_path, "auditor: {adapter: opneai}\n")
    with pytest.raises(ConfigError, match=r"auditor\.adapter: Value error, unknown adapter 'opneai' \(did you mean 'openai'\?\)"):
        load_config(path)


def test_the_offline_preset_swaps_every_adapter_and_keeps_names() -> None:
    cfg = load_config(vendors=VendorMode.OFFLINE)
    assert {v.adapter for v in cfg.vendors()} == {"offline"}
    assert [v.name for v in cfg.vendors()] == [v.name for v in load_config().vendors()]


def test_a_bad_value_from_the_environment_names_the_variable(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TRIBUNAL_SEED", "soon")
    with pytest.raises(ConfigError, match=r"environment TRIBUNAL_SEED: seed: Input should be a valid integer"):
        load_config(_yaml(tmp_path, "seed: 3\n"))


def test_a_missing_field_names_the_file_holding_its_entry(tmp_path) -> None:
    path = _yaml(tmp_path, "auditor: {adapter: openai, name: auditor, family: openai}\n")
    # the auditor mapping merges over the default one, so model comes from the defaults: no error
    assert load_config(path).auditor.model == load_config().auditor.model
    judges = "judges:\n" + "".join(f"  - {{adapter: offline, name: j{i}, family: f}}\n" for i in range(3))
    with pytest.raises(ConfigError, match=rf"{_yaml(tmp_path, judges)}: judges\.0\.model: Field required"):
        load_config(tmp_path / "panel.yaml")
