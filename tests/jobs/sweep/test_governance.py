"""Where a sweep keeps its local caches under data_governance (the named folder, TRIBUNAL_CACHE_DIR,
else the output folder; never ~/.cache), that a cache folder it creates is private, and which
vendors' batch APIs it refuses."""

from __future__ import annotations

import stat

import pytest

from evalcore.benchmark import cache
from evalcore.config.load import load_config
from evalcore.config.models import TribunalConfig
from evalcore.errors import ConfigError
from jobs.sweep.governance import check_batch_allowed, governed_caches, local_caches
from jobs.sweep.prepare import with_batch


def _config(**governance: object) -> TribunalConfig:
    return load_config(overrides={"data_governance": governance} if governance else None)


def test_a_named_cache_folder_holds_both_caches_whatever_the_environment_says(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TRIBUNAL_CACHE_DIR", str(tmp_path / "env"))
    caches = local_caches(_config(cache_dir=str(tmp_path / "named")), str(tmp_path / "out"))
    assert caches.documents == tmp_path / "named" and caches.ocr_uri == str(tmp_path / "named" / "ocr")


def test_without_a_named_folder_the_environment_then_the_output_folder_decide_never_home(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TRIBUNAL_CACHE_DIR", str(tmp_path / "env"))
    from_env = local_caches(_config(), str(tmp_path / "out"))
    assert from_env.documents == tmp_path / "env" and from_env.ocr_uri == str(tmp_path / "out" / "_ocr")
    monkeypatch.delenv("TRIBUNAL_CACHE_DIR")
    local = local_caches(_config(), str(tmp_path / "out"))
    assert local.documents == tmp_path / "out" / "_cache" and local.ocr_uri == str(tmp_path / "out" / "_ocr")
    on_s3 = local_caches(_config(), "s3://bucket/runs")
    assert on_s3.documents is None and on_s3.ocr_uri == "s3://bucket/runs/_ocr"
    off = local_caches(_config(cache_dir="off"), str(tmp_path / "out"))
    assert off.documents is None
    for caches in (local, on_s3, off):
        with governed_caches(caches):
            assert cache.cache_root() == caches.documents
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_root() == tmp_path / "xdg" / "tribunal"  # other commands: unchanged once the sweep ends


def test_a_cache_folder_the_sweep_creates_is_0700_and_its_entries_0600(tmp_path) -> None:
    root = tmp_path / "a" / "b" / "cache"
    with governed_caches(local_caches(_config(cache_dir=str(root)), str(tmp_path / "out"))):
        cache.disk_put(cache.cache_root() / "docs" / "v1", "0" * 64, "pdf", "the text", key="docs/v1/pdf")  # type: ignore[operator]
        cache.write_private(str(root / "ocr" / "v1" / "page.entry"), b"{}")
    for folder in (tmp_path / "a", tmp_path / "a" / "b", root, root / "docs", root / "docs" / "v1", root / "ocr" / "v1"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for entry in (*root.rglob("*.entry"),):
        assert stat.S_IMODE(entry.stat().st_mode) == 0o600, entry


def test_a_vendor_whose_batch_api_is_refused_stops_a_batch_sweep_naming_it_and_an_online_one_goes_on() -> None:
    private = _config(preset="private")
    check_batch_allowed(private)  # online: nothing is refused
    with pytest.raises(ConfigError, match=r"batch_allowed \(xai: false, preset private\) refuses batch mode for "
                                          r"vendor 'xai' \(xai, grok-4\.7\)\. xAI's batch API has no delete"):
        check_batch_allowed(with_batch(private, True))
    check_batch_allowed(with_batch(_config(), True))
    refused = with_batch(_config(batch_allowed={"anthropic": False}), True)
    with pytest.raises(ConfigError, match="vendor 'anthropic'") as err:
        check_batch_allowed(refused)
    assert "xai" not in str(err.value)


def _private_config_at(tmp_path, endpoints: dict[str, str], **governance: object) -> str:
    """A --config file: the default panel aimed at the emulators, under the private preset."""
    import yaml

    from doubles.emulators.serve import emulated_config

    data = {**emulated_config(endpoints), "data_governance": {"preset": "private", **governance}}
    path = tmp_path / "private.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def _grade_one_sample(config: str) -> None:
    from evalcore.config.models import VendorMode
    from evalcore.grading.scoring import AuditMode
    from jobs.cli.grade_one import grade_one
    from tests.jobs.conftest import SAMPLE

    task = SAMPLE / "tasks" / "real-estate" / "lease-abstract"
    memo = SAMPLE / "submissions" / "gpt-strong" / "real-estate" / "lease-abstract" / "abstract.md"
    grade_one(str(task), [str(memo)], VendorMode.REAL, AuditMode.ALWAYS, config)


def test_a_private_grading_sends_openai_no_day_of_prompt_cache_retention_unless_the_entry_is_allowed_by_name(
    tmp_path, monkeypatch
) -> None:
    """Through the real OpenAI SDK against the emulator, which records every request body: the default
    OpenAI model accepts only 24 h, so the private preset refuses it before a request is sent, naming
    the model and the setting that would allow it; a model that accepts in_memory gets in_memory; an
    entry the publisher allows by name gets 24 h."""
    import yaml

    from doubles.emulators import OfflineResponder
    from doubles.emulators._set import start_in_thread
    from evalcore.emulation import EMULATED_KEY, KEY_ENV

    for env in KEY_ENV.values():
        monkeypatch.setenv(env, EMULATED_KEY)
    with start_in_thread(responder=OfflineResponder()) as emus:
        refused = _private_config_at(tmp_path, emus.endpoints)
        with pytest.raises(ConfigError) as info:
            _grade_one_sample(refused)
        assert emus.received("openai") == []
        said = str(info.value)
        assert "'openai' (model gpt-6-sol), 'auditor' (model gpt-6-sol)" in said
        assert "data_governance.prompt_cache_24h_allowed: [openai, auditor]" in said

        older = tmp_path / "older.yaml"
        data = yaml.safe_load(open(refused, encoding="utf-8"))
        for entry in (*data["judges"], data["auditor"]):
            if entry.get("adapter") == "openai":
                entry["model"] = "gpt-5.4"
        older.write_text(yaml.safe_dump(data))
        _grade_one_sample(str(older))
        sent = [r.settings.get("prompt_cache_retention") for r in emus.received("openai") if r.api == "responses"]
        assert sent and set(sent) == {"in_memory"}

        before = len(emus.received("openai"))
        _grade_one_sample(_private_config_at(tmp_path, emus.endpoints, prompt_cache_24h_allowed=["openai", "auditor"]))
        sent = [r.settings.get("prompt_cache_retention") for r in emus.received("openai")[before:]
                if r.api == "responses"]
        assert sent and set(sent) == {"24h"}


def test_the_private_preset_says_which_entries_it_lets_keep_cached_prompts_a_day() -> None:
    from io import StringIO

    from rich.console import Console

    from jobs.sweep.governance import check_prompt_cache_retention, say_allowed_retention

    assert check_prompt_cache_retention(_config()) == []  # standard: shortest, nothing to refuse
    with pytest.raises(ConfigError, match=r"'auditor' \(model gpt-6-sol\).*prompt_cache_24h_allowed: \[auditor\]"):
        check_prompt_cache_retention(_config(preset="private", prompt_cache_24h_allowed=["openai"]))
    allowed = check_prompt_cache_retention(_config(preset="private", prompt_cache_24h_allowed=["openai", "auditor"]))
    out = StringIO()
    say_allowed_retention(allowed, Console(file=out, width=200))
    assert out.getvalue().splitlines() == [
        f"data_governance: {name} (gpt-6-sol) sends prompt_cache_retention 24h, allowed by prompt_cache_24h_allowed: "
        "OpenAI keeps its cached prompt prefixes up to 24 h (run.json records 24h)"
        for name in ("openai", "auditor")
    ]


def test_run_json_records_the_prompt_cache_retention_each_openai_request_sends_never_shortest() -> None:
    """The default OpenAI model accepts only 24 h: its requests carry `24h` (with consent under private),
    and run.json said `shortest`."""
    from evalcore.storage.store import RunRecord
    from jobs.sweep.identity import config_fingerprint, run_record
    from jobs.sweep.options import SweepOptions

    config = _config(preset="private", prompt_cache_24h_allowed=["openai", "auditor"])
    older = config.model_copy(update={"judges": [j.model_copy(update={"model": "gpt-5.4"}) if j.adapter == "openai"
                                                 else j for j in config.judges]})
    for cfg, judge_sends in ((config, "24h"), (older, "in_memory")):
        assert {v.prompt_cache_retention for v in cfg.vendors()} == {"shortest"}  # as configured
        opts = SweepOptions(benchmark="b", submissions="s", output="o", config=cfg)
        record = RunRecord.model_validate_json(run_record(opts, "r1", [], "hash").model_dump_json())  # as run.json
        sent = {v.name: v.prompt_cache_retention for v in record.config.vendors() if v.adapter == "openai"}
        assert sent == {"openai": judge_sends, "auditor": "24h"}
        assert {v.prompt_cache_retention for v in record.config.vendors() if v.adapter != "openai"} == {"shortest"}
        assert record.config_fingerprint == config_fingerprint(cfg)  # the same run: it resumes as before


@pytest.mark.parametrize("command", ["validate", "grade"])
def test_validate_and_grade_under_the_private_preset_write_no_converted_text_outside_the_named_cache(
    tmp_path, monkeypatch, command: str
) -> None:
    """`tribunal validate --config private.yaml` wrote converted documents to ~/.cache/tribunal: the
    private preset keeps them in memory, or in the named cache_dir, never in the user's home."""
    from typer.testing import CliRunner

    from jobs.cli.app import app
    from tests.jobs.conftest import SAMPLE

    home = tmp_path / "home"
    for var in ("TRIBUNAL_CACHE_DIR", "TRIBUNAL_OCR_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    cache.clear_cache()  # nothing served from this process's memory: every document is converted
    task = SAMPLE / "tasks" / "commercial-contracts" / "msa-renewal"  # a .docx, an .xlsx, an .eml, a PDF
    memo = next((SAMPLE / "submissions" / "gpt-strong" / "commercial-contracts" / "msa-renewal").iterdir())
    args = {"validate": ["validate", str(SAMPLE)],
            "grade": ["grade", str(task), "-d", str(memo), "--vendors", "offline"]}[command]
    for governance, named in (("{preset: private}", None), (f"{{preset: private, cache_dir: {tmp_path / 'named'}}}",
                                                              tmp_path / "named")):
        config = tmp_path / "private.yaml"
        config.write_text(f"data_governance: {governance}\n")
        cache.clear_cache()
        result = CliRunner().invoke(app, [*args, "--config", str(config)])
        assert result.exit_code in (0, 1), result.output  # validate: the sample's planted problems are exit 1
        assert not home.exists() or [p for p in home.rglob("*") if p.is_file()] == []
        if named is not None:
            assert list((named / "docs").rglob("*.json")), "the named cache holds the converted documents"
