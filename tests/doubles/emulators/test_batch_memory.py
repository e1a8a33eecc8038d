"""`BatchSettings.keep_request_text` False (runs at scale): once a batch has ended, the emulator
forgets its requests' text (bodies, prompts, OpenAI's input file content) and keeps what a client
collects, so every vendor still serves the same results, as often as asked, through its real SDK."""

from __future__ import annotations

import hashlib
import json
from typing import Literal

import pytest
from pydantic import BaseModel

from doubles.emulators import BatchSettings, EmulatorConfig, EmulatorSet, StaticResponder
from evalcore.config.models import VendorConfig
from evalcore.vendors.batch.protocol import BatchItemResult
from evalcore.vendors.protocol import JudgeRequest
from evalcore.vendors.registry import create_batch_api

ANSWER = {"verdict": "met", "reason": "quoted"}
KEY_ENV = "TRIBUNAL_TEST_BATCH_MEMORY_KEY"
Adapter = Literal["openai", "anthropic", "xai"]


class Verdict(BaseModel):
    verdict: Literal["met", "not_met"]
    reason: str


def request(i: int) -> JudgeRequest:
    return JudgeRequest(purpose="rubric", request_hash=hashlib.sha256(f"m{i}".encode()).hexdigest(),
                        system_prompt="You grade legal memos.", shared_prefix=f"Memo {i}: SECRET-PROMPT-TEXT",
                        varying_suffix=" Criterion: names the end date.", schema_name="Verdict")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "batch-memory-key-0123456789")


def by_id(items: list[BatchItemResult]) -> dict[str, tuple[str, str]]:
    return {i.custom_id: (i.status, i.text) for i in items}


@pytest.mark.parametrize("adapter", ["openai", "anthropic", "xai"])
async def test_without_request_text_the_results_are_served_the_same_and_again(adapter: Adapter) -> None:
    async with EmulatorSet(EmulatorConfig(batch=BatchSettings(keep_request_text=False)),
                           responder=StaticResponder(ANSWER)) as emus:
        endpoint = emus.endpoints()[adapter]
        cfg = VendorConfig.model_validate({
            "adapter": adapter, "name": adapter, "family": adapter, "model": f"{adapter}-model",
            "endpoint": ("http://" + endpoint) if adapter == "xai" else endpoint, "api_key_env": KEY_ENV})
        api = create_batch_api(cfg)
        try:
            status = await api.submit([(r.request_hash, r, Verdict) for r in map(request, range(3))], "label")
            assert (await api.poll(status.batch_id)).ended
            first = by_id(await api.collect(status.batch_id))
            again = by_id(await api.collect(status.batch_id))
            ids = await api.request_ids(status.batch_id)
        finally:
            await api.aclose()
        assert sorted(first) == sorted(request(i).request_hash for i in range(3)) and first == again
        assert {state for state, _ in first.values()} == {"succeeded"}
        assert all(Verdict.model_validate_json(text).verdict == "met" for _, text in first.values())
        emu = emus.by_vendor()[adapter]
        [batch] = emu.batches.batches.values()
        assert "SECRET-PROMPT-TEXT" not in json.dumps([[i.body, i.request.user] for i in batch.items.values()],
                                                      default=str)
        if adapter == "openai":
            assert ids == []  # the input file reads back empty (a knob for runs at scale, never for recovery tests)
