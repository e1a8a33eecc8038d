"""Never paying twice survives a truncation: a resumed run serves the retry's answer from the calls
table (the truncated attempt's row is never served and never sent again), through the real openai
SDK against its emulator."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from doubles.emulators import EmulatorConfig, OpenAIEmulator, StaticResponder, Truncated
from evalcore.config.models import VendorConfig
from evalcore.grading.calls import GradingContext, call_rows
from evalcore.schema import RubricAnswer
from evalcore.storage.store import stored_calls, write_json, write_shard
from evalcore.vendors.registry import create_vendor
from evalcore.vendors.reuse import ReusingVendor
from tests.evalcore.vendors._vendor_contract import ANSWER, KEY, PRICE, judge_request

KEY_ENV = "TRIBUNAL_TEST_REUSE_TRUNCATED_KEY"
CTX = GradingContext("run-1", "g-1", "sys::area/task", "sys", "area/task", "area")


async def test_a_resumed_run_serves_the_retrys_answer_and_pays_neither_attempt_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    async with OpenAIEmulator(EmulatorConfig(api_key=SecretStr(KEY)), responder=StaticResponder(ANSWER)) as emu:
        cfg = VendorConfig.model_validate({
            "adapter": "openai", "name": "openai", "family": "openai", "model": "openai-test-model",
            "endpoint": str(emu.base_url), "api_key_env": KEY_ENV, "max_output_tokens": 400, "price": PRICE,
        })
        request = judge_request()
        emu.push(Truncated())
        vendor = create_vendor(cfg)
        try:
            reply = await vendor.complete(request, RubricAnswer)
            rows = call_rows(CTX, cfg, request, reply)
            run = str(tmp_path / "run")
            write_json(f"{run}/run.json", {"run_id": "run-1"})
            write_shard(run, "part-0", {"calls": rows})
            assert [r.outcome for r in rows] == ["truncated", "ok"] and len(emu.requests) == 2

            resumed = ReusingVendor(vendor, stored_calls([run], "openai"), "run-2")
            again = await resumed.complete(request, RubricAnswer)
        finally:
            await vendor.aclose()
        assert len(emu.requests) == 2  # nothing sent on resume
        assert again.output == reply.output and again.reused_from == "run-1" and again.cost_usd == 0.0
        assert call_rows(CTX, cfg, request, again)[0].max_output_tokens is None  # reused: no cap was sent
