"""A run is prepared in one place (`jobs.sweep.prepare`): the command line becomes the run's
options, refusals come before anything is read or started, and emulated personas learn each
submission's family from intake's one read of the source, not from a read of their own."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.config.models import InputLimits, VendorMode
from evalcore.errors import ConfigError
from evalcore.schema import Submission
from jobs.sweep.intake import SubmissionPass
from jobs.sweep.prepare import (
    DetachWithoutBatch,
    SweepCommand,
    load_personas,
    prepare_run,
    remember_family,
    run_config,
)
from tests.jobs.conftest import SAMPLE

QUIET = Console(stderr=True, quiet=True)


def _cmd(**kw: object) -> SweepCommand:
    return SweepCommand(benchmark=str(SAMPLE), submissions=str(SAMPLE / "submissions"), output="unused", **kw)  # type: ignore[arg-type]


def test_intake_tells_each_accepted_submission_once_as_it_reads_the_source() -> None:
    bench = load_benchmark(str(SAMPLE))
    seen: list[str] = []
    with SubmissionPass(str(SAMPLE / "submissions"), bench.task_map(), excluded=bench.excluded_task_ids(),
                        limits=InputLimits(), is_done=lambda s: s.system == "gpt-strong", shard_size=4, rejected=[],
                        on_submission=lambda s, t: seen.append(s.id)) as intake:
        pending = [s.id for s in intake.pending()]
    assert len(seen) == len(set(seen)) == 32  # done ones too: a resumed run still fingerprints them
    assert len(pending) == 24 and set(pending) < set(seen)


def test_personas_learn_each_familys_submissions_from_the_submissions_intake_reads() -> None:
    cfg = load_config(vendors=VendorMode.REAL)
    panel = load_personas("demo", cfg)  # no read of its own
    assert panel.families == {}
    bench = load_benchmark(str(SAMPLE))
    with SubmissionPass(str(SAMPLE / "submissions"), bench.task_map(), excluded=bench.excluded_task_ids(),
                        limits=InputLimits(), is_done=lambda s: False, shard_size=4, rejected=[],
                        on_submission=lambda s, t: remember_family(panel, cfg, s, t)) as intake:
        list(intake.pending())
    # 3 of the 4 sample systems have a family (gpt-, claude-, grok-): 8 submissions each
    assert sorted(panel.families.values()).count("anthropic") == 8 and len(panel.families) == 24
    assert panel.families == load_personas("demo", cfg, str(SAMPLE), str(SAMPLE / "submissions")).families


def test_personas_learn_each_submissions_rubric_length_from_its_task_as_intake_reads_it() -> None:
    """What `Persona.noise_criteria` scales a rate by: every submission's task's number of criteria,
    keyed like the families by its deliverables (32 sample submissions, 12-15 criteria)."""
    cfg = load_config(vendors=VendorMode.REAL)
    panel = load_personas("demo", cfg)
    bench = load_benchmark(str(SAMPLE))
    tasks = bench.task_map()
    with SubmissionPass(str(SAMPLE / "submissions"), tasks, excluded=bench.excluded_task_ids(),
                        limits=InputLimits(), is_done=lambda s: False, shard_size=4, rejected=[],
                        on_submission=lambda s, t: remember_family(panel, cfg, s, t)) as intake:
        subs = list(intake.pending())
    assert 0 < len(panel.rubric_sizes) <= len(subs) == 32  # identical deliverables share a fingerprint
    assert set(panel.rubric_sizes.values()) == {len(t.criteria) for t in tasks.values()}
    assert panel.rubric_sizes == load_personas("demo", cfg, str(SAMPLE), str(SAMPLE / "submissions")).rubric_sizes


def test_a_prepared_emulated_run_with_personas_hooks_intake_and_one_without_does_not() -> None:
    with prepare_run(_cmd(vendors=VendorMode.EMULATED, personas="demo", run_id="p"), QUIET) as opts:
        assert opts.on_submission is not None and opts.vendors == VendorMode.EMULATED and opts.run_id == "p"
        assert all(v.endpoint and "127.0.0.1" in v.endpoint for v in opts.config.vendors())
        sub = next(s for s in _sample_submissions() if s.system.startswith("claude"))
        task = load_benchmark(str(SAMPLE)).task_map()[sub.task_id]
        opts.on_submission(sub, task)  # the emulators' personas now know this deliverable's family
    with prepare_run(_cmd(vendors=VendorMode.OFFLINE), QUIET) as opts:
        assert opts.on_submission is None


def test_detach_without_batch_mode_is_refused_before_anything_starts() -> None:
    with pytest.raises(DetachWithoutBatch, match="--detach needs batch mode"):
        with prepare_run(_cmd(vendors=VendorMode.OFFLINE, detach=True), QUIET):
            pytest.fail("prepared a detached run without batch mode")


def test_a_batch_api_the_governance_refuses_is_refused_when_the_configuration_is_prepared(tmp_path: Path) -> None:
    private = tmp_path / "private.yaml"
    private.write_text("data_governance: {preset: private, prompt_cache_24h_allowed: [openai, auditor]}\n")
    run_config(str(private), VendorMode.REAL)  # online: nothing refused
    with pytest.raises(ConfigError, match=r"batch_allowed \(xai: false"):
        run_config(str(private), VendorMode.REAL, batch=True)


def _sample_submissions() -> list[Submission]:
    from evalcore.submissions.loader import iter_submissions

    bench = load_benchmark(str(SAMPLE))
    return [s for s in iter_submissions(str(SAMPLE / "submissions"), bench.task_map()) if isinstance(s, Submission)]


def test_emulated_vendors_serve_the_configurations_newer_models_and_refuse_an_unknown_one(tmp_path: Path) -> None:
    """As the vendor does: an id the configuration declares newer than the SDK's list is served,
    any other id not on the list is the vendor's 404 (so a misspelt default fails here, not at the
    first real run)."""
    import openai

    from jobs.sweep.prepare import vendor_mode

    path = tmp_path / "newer.yaml"
    path.write_text("known_newer_models: {openai: [gpt-7-preview]}\n")
    cfg, _ = run_config(str(path), VendorMode.EMULATED)
    with vendor_mode(cfg, VendorMode.EMULATED) as run_cfg:
        endpoint = next(v.endpoint for v in run_cfg.vendors() if v.adapter == "openai")
        with openai.OpenAI(api_key="k", base_url=endpoint, max_retries=0) as client:
            assert client.responses.create(model="gpt-7-preview", input="hi").status == "completed"
            with pytest.raises(openai.NotFoundError, match="gpt-7-previw"):
                client.responses.create(model="gpt-7-previw", input="hi")
