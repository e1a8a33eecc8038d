"""Resume and reuse guards: a run resumes only as it was made; real runs never reuse fake answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.config.load import load_config
from evalcore.config.models import VendorMode
from evalcore.errors import TribunalError
from jobs.sweep.identity import check_resumable, check_reusable, config_fingerprint, run_record
from jobs.sweep.options import SweepOptions


def _opts(vendors: VendorMode = VendorMode.OFFLINE, model: str | None = None) -> SweepOptions:
    cfg = load_config(vendors="offline")
    if model:
        cfg = cfg.model_copy(update={"judges": [cfg.judges[0].model_copy(update={"model": model}), *cfg.judges[1:]]})
    return SweepOptions(benchmark="b", submissions="s", output="o", config=cfg, vendors=vendors)


def test_resume_with_the_same_benchmark_config_and_mode_is_allowed() -> None:
    opts = _opts()
    check_resumable("run", run_record(opts, "r", [], "h"), opts, "h")


@pytest.mark.parametrize(
    ("change", "message"),
    [("benchmark", "different benchmark content"), ("mode", "--vendors offline, not emulated"),
     ("config", "different configuration")],
)
def test_resume_with_another_benchmark_config_or_mode_is_refused(change: str, message: str) -> None:
    record = run_record(_opts(), "r", [], "h")
    now = {"benchmark": _opts(), "mode": _opts(vendors=VendorMode.EMULATED), "config": _opts(model="gpt-7")}[change]
    with pytest.raises(TribunalError, match=message):
        check_resumable("run", record, now, "other" if change == "benchmark" else "h")


def test_endpoint_and_key_variable_do_not_change_the_fingerprint() -> None:
    cfg = load_config(vendors="real")
    moved = cfg.model_copy(update={"judges": [j.model_copy(update={"endpoint": "http://127.0.0.1:1", "api_key_env": "K"})
                                              for j in cfg.judges]})
    assert config_fingerprint(cfg) == config_fingerprint(moved)


def test_what_a_vendor_keeps_does_not_change_the_fingerprint() -> None:
    """Retention choices change what is stored, not what is asked or answered: a run still resumes."""
    cfg = load_config(vendors="real")
    kept = cfg.model_copy(update={"judges": [j.model_copy(update={"prompt_cache_retention": "24h"})
                                             for j in cfg.judges]})
    assert config_fingerprint(cfg) == config_fingerprint(kept)


def test_a_real_run_refuses_to_reuse_an_emulated_run(tmp_path) -> None:
    run_record(_opts(vendors=VendorMode.EMULATED), "emu", [], "h").write(str(tmp_path / "emu"))
    with pytest.raises(TribunalError, match="cannot be reused in a run with real vendors"):
        check_reusable([str(tmp_path / "emu")], VendorMode.REAL)
    check_reusable([str(tmp_path / "emu")], VendorMode.EMULATED)
    with pytest.raises(TribunalError, match="names no run"):
        check_reusable([str(tmp_path / "nothing")], VendorMode.EMULATED)


def test_run_json_records_the_benchmarks_name_and_version_and_the_protocol_version(tmp_path: Path) -> None:
    from evalcore.benchmark.identity import BenchmarkIdentity
    from evalcore.prompts import PROTOCOL_VERSION
    from evalcore.storage.store import RunRecord

    record = run_record(_opts(), "r", [], "h", BenchmarkIdentity(name="legal-bench", version="2.1"))
    record.write(str(tmp_path))
    read = RunRecord.read(str(tmp_path))
    assert (read.benchmark.name, read.benchmark.version, read.protocol_version) == ("legal-bench", "2.1", PROTOCOL_VERSION)
