"""A batch sweep leaves nothing deletable at the vendors, on a real local Ray cluster with the real
SDKs against the emulated batch APIs: once the tables are written every OpenAI file and Anthropic
batch is deleted (listed afterwards with the SDKs), the purge is recorded in the run, xAI's
undeletable batches are said on the console, in the summary and in `tribunal status`; a sweep
whose purge did not run (purge off: the state a driver killed between its tables and its purge
leaves) is purged by `tribunal purge RUN`, on S3 too; a re-run after the purge pays nothing and
gives the same leaderboard; governance refuses xAI batch mode before anything starts.

The sweeps grade the small sample (`small_sample` in `tests/jobs/conftest.py`, 8 submissions): what
is left at the vendors, and what the purge deletes, is the same for 8 submissions as for 32."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
import xai_sdk
from typer.testing import CliRunner

from doubles.emulators import OfflineResponder
from doubles.emulators._set import EmulatorThread, start_in_thread
from evalcore.config.models import TribunalConfig
from evalcore.errors import ConfigError
from evalcore.vendors.adapters.xai import split_endpoint
from evalcore.vendors.batch.journal import load_all, load_purges
from jobs.cli.app import app
from jobs.per_run.reduce import reduce_run
from jobs.sweep.driver import run_sweep
from jobs.sweep.options import SweepOptions
from jobs.sweep.prepare import with_batch
from tests.conftest import create_bucket
from tests.jobs.conftest import SAMPLE, SMALL_SUBMISSIONS, emulated_config

pytestmark = [pytest.mark.ray]
FAST = {"flush_interval_s": 0.3, "poll_interval_s": 0.1}
KEY = "emulated-key-not-a-secret"


def _config(emus: EmulatorThread, **governance: Any) -> TribunalConfig:
    cfg = with_batch(emulated_config(emus.endpoints), True)
    cfg = cfg.model_copy(update={"batch": cfg.batch.model_copy(update=FAST)})
    if governance:
        data = cfg.public_dict()
        data["data_governance"] = {**data["data_governance"], **governance}
        cfg = TribunalConfig.model_validate(data)
    return cfg


def _sweep(cfg: TribunalConfig, root: Path, output: str, run_id: str) -> Any:
    opts = SweepOptions(benchmark=str(root), submissions=str(root / "submissions"), output=output,
                        config=cfg, vendors="emulated", run_id=run_id, progress=False, shard_size=8,
                        max_in_flight=4)
    return run_sweep(opts)


def _at_the_vendors(emus: EmulatorThread) -> dict[str, list[str]]:
    """What the vendors list, through their real SDKs: OpenAI files, Anthropic and xAI batches."""

    async def listed() -> dict[str, list[str]]:
        async with openai.AsyncOpenAI(api_key=KEY, base_url=emus.endpoints["openai"], max_retries=0) as oc:
            files = [f.id async for f in oc.files.list()]
        async with anthropic.AsyncAnthropic(api_key=KEY, base_url=emus.endpoints["anthropic"], max_retries=0) as ac:
            batches = [b.id async for b in ac.messages.batches.list()]
        host, _ = split_endpoint("http://" + emus.endpoints["xai"])
        xc = xai_sdk.AsyncClient(api_key=KEY, api_host=host or "", use_insecure_channel=True)
        try:
            xai = [b.batch_id for b in (await xc.batch.list(limit=100)).batches]
        finally:
            await xc.close()
        return {"openai_files": files, "anthropic_batches": batches, "xai_batches": xai}

    return asyncio.run(listed())


def test_a_batch_sweep_leaves_no_openai_file_and_no_anthropic_batch_and_a_rerun_pays_nothing(
    ray_local, small_sample, tmp_path, capsys
) -> None:
    out = str(tmp_path / "runs")
    with start_in_thread(responder=OfflineResponder()) as emus:
        cfg = _config(emus)
        summary = _sweep(cfg, small_sample, out, "purged")
        assert summary.complete == SMALL_SUBMISSIONS and not summary.failed_shards
        left = _at_the_vendors(emus)
        assert left["openai_files"] == [] and left["anthropic_batches"] == []
        journal = load_all(summary.run_uri)
        created = {v: sum(len([o for o in r.objects if o.holds_text]) for r in rs) for v, rs in journal.items()}
        assert created["openai"] > 0 and created["anthropic"] > 0 and created["auditor"] > 0
        assert sorted(left["xai_batches"]) == sorted(r.batch_id for r in journal["xai"])  # no delete exists
        openai_bodies = [r for r in emus.received("openai") if r.api == "responses"]
        assert openai_bodies and all(r.settings["store"] is False for r in openai_bodies)
        assert all(r.settings["expires_after_s"] == 90_000 for r in emus.received("openai") if r.api == "files.create")

        [purge] = load_purges(summary.run_uri)
        assert purge.trigger == "sweep" and purge.in_use == 0
        assert purge.count("deleted") == created["openai"] + created["anthropic"] + created["auditor"]
        assert purge.count("undeletable") == len(journal["xai"]) and purge.count("failed") == 0
        assert summary.purge["undeletable"] == len(journal["xai"])
        assert summary.purge["by_vendor"]["anthropic"] == {"deleted": created["anthropic"]}
        said = capsys.readouterr().err
        assert "purged at the vendors" in said and "xai: " in said and "cannot be deleted" in said

        status = CliRunner().invoke(app, ["status", summary.run_uri, "--json"])
        assert status.exit_code == 0, status.output
        held = json.loads(status.output)["held_at_vendors"]
        assert held["xai"] == {"undeletable": len(journal["xai"])}
        assert set(held["anthropic"]) == {"deleted"} and set(held["openai"]) == {"deleted", "metadata"}
        text = CliRunner().invoke(app, ["status", summary.run_uri])
        assert f"xai: {len(journal['xai'])} held, cannot be deleted" in text.output
        assert "anthropic: " in text.output and "deleted" in text.output

        board = reduce_run(summary.run_uri).model_dump()
        creates = {k: s.creates for k, s in emus.batch_stores().items()}
        again = _sweep(cfg, small_sample, out, "purged")
        assert again.skipped_done == SMALL_SUBMISSIONS and again.graded == 0 and again.paid_calls == 0 and again.cost_usd == 0
        assert {k: s.creates for k, s in emus.batch_stores().items()} == creates
        assert reduce_run(summary.run_uri).model_dump() == board
        assert _at_the_vendors(emus)["openai_files"] == []


def test_a_sweep_whose_purge_did_not_run_is_purged_by_tribunal_purge_on_s3_and_again_safely(
    ray_local, small_sample, s3_server
) -> None:
    out = f"s3://{create_bucket(s3_server)}/runs"
    with start_in_thread(responder=OfflineResponder()) as emus:
        summary = _sweep(_config(emus, purge=False), small_sample, out, "unpurged")
        assert summary.complete == SMALL_SUBMISSIONS and summary.purge["enabled"] is False and summary.purge["held"] > 0
        left = _at_the_vendors(emus)
        assert left["openai_files"] and left["anthropic_batches"]  # the tables are written; nothing purged yet
        assert load_purges(summary.run_uri) == []
        status = CliRunner().invoke(app, ["status", summary.run_uri, "--json", "--check"])
        assert status.exit_code == 0, status.output
        report = json.loads(status.output)
        assert report["checked_at_vendors"] and report["held_at_vendors"]["anthropic"] == {
            "held": len(left["anthropic_batches"])}

        first = CliRunner().invoke(app, ["purge", summary.run_uri])
        assert first.exit_code == 0, first.output
        assert "purged at the vendors" in first.output and "cannot be deleted" in first.output
        left = _at_the_vendors(emus)
        assert left["openai_files"] == [] and left["anthropic_batches"] == [] and left["xai_batches"]

        second = CliRunner().invoke(app, ["purge", summary.run_uri, "--json"])  # idempotent: no delete sent again
        assert second.exit_code == 0, second.output
        deletes = [r for v in ("openai", "anthropic") for r in emus.received(v) if r.api.endswith("delete")]
        assert len(deletes) == sum(p.count("deleted") for p in load_purges(summary.run_uri))
        purges = load_purges(summary.run_uri)
        assert [p.trigger for p in purges] == ["command", "command"]
        assert purges[1].count("deleted") == 0 and purges[1].count("undeletable") == len(left["xai_batches"])


def test_governance_refusing_xai_batch_stops_the_sweep_before_anything_starts(tmp_path) -> None:
    cfg = with_batch(emulated_config({"openai": "http://127.0.0.1:9", "anthropic": "http://127.0.0.1:9",
                                      "xai": "127.0.0.1:9"}), True)
    data = cfg.public_dict()
    data["data_governance"] = {"preset": "private"}
    private = TribunalConfig.model_validate(data)
    with pytest.raises(ConfigError, match=r"refuses batch mode for vendor 'xai' \(xai, grok"):
        _sweep(private, SAMPLE, str(tmp_path / "runs"), "refused")
    assert not (tmp_path / "runs").exists()
