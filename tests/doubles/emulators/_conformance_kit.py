"""What the three conformance modules share: the emulators as Tribunal's emulated runs configure
them, Tribunal's own vendor entries aimed at them, and requests like the ones a sweep sends."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from doubles.emulators import EmulatedRequest, EmulatorThread, ScriptedResponder, start_in_thread
from doubles.emulators.serve import emulator_config_from, point_at_emulators
from evalcore.config.load import load_config
from evalcore.config.models import BatchConfig, TribunalConfig, VendorConfig
from evalcore.schema import DetectionAnswer, PreflightAnswer, RubricAnswer, VerificationAnswer
from evalcore.vendors.batch.journal import BatchJournal
from evalcore.vendors.batch.queue import BatchingVendor
from evalcore.vendors.protocol import JudgeRequest
from evalcore.vendors.registry import create_batch_api, create_vendor

SCHEMAS: tuple[type[BaseModel], ...] = (RubricAnswer, DetectionAnswer, VerificationAnswer, PreflightAnswer)
"""Every answer schema Tribunal sends as structured output."""

ANSWERS: dict[str, dict[str, Any]] = {
    "RubricAnswer": {"verdict": "pass", "reasoning": "the memo states the cure period"},
    "DetectionAnswer": {"flags": []},
    "VerificationAnswer": {"decisions": []},
    "PreflightAnswer": {"ok": True},
}


def answer(req: EmulatedRequest) -> dict[str, Any]:
    """A valid answer for whichever of Tribunal's schemas the request asks for."""
    return ANSWERS.get(req.schema_name or "", ANSWERS["RubricAnswer"])


def emulators() -> Iterator[EmulatorThread]:
    """The three emulators configured as `tribunal emulate` and emulated sweeps configure them
    (`emulator_config_from`: unknown models refused, the SDKs' lists and the defaults' newer ids)."""
    with start_in_thread(emulator_config_from(), responder=ScriptedResponder(answer)) as emus:
        yield emus


def tribunal_config(emus: EmulatorThread) -> TribunalConfig:
    """The default configuration (its model ids, efforts and caps), aimed at the emulators."""
    return point_at_emulators(load_config(vendors="real"), emus.endpoints)


def entries(cfg: TribunalConfig, adapter: str) -> list[VendorConfig]:
    """The default configuration's entries using `adapter` (a judge, and the auditor for OpenAI)."""
    return [v for v in cfg.vendors() if v.adapter == adapter]


def judge_request(i: int, schema: type[BaseModel]) -> JudgeRequest:
    prefix = f"Source: the lease runs to 2031. Deliverable {i}: the memo names 2031 as the end date.\n"
    return JudgeRequest(
        purpose="rubric",
        request_hash=hashlib.sha256(f"conformance-{i}-{schema.__name__}".encode()).hexdigest(),
        system_prompt="You grade legal memos. Answer with JSON.",
        shared_prefix=prefix * 40,  # long enough to be cached
        varying_suffix=f"Criterion {i}: names the end date.",
        schema_name=schema.__name__,
    )


async def call_every_schema(entry: VendorConfig) -> None:
    """One online call per answer schema through Tribunal's adapter for `entry`."""
    vendor = create_vendor(entry)
    try:
        for i, schema in enumerate(SCHEMAS):
            await vendor.complete(judge_request(i, schema), schema)
    finally:
        await vendor.aclose()


async def batch_every_schema(entry: VendorConfig, run: Path) -> None:
    """One batch of every answer schema through Tribunal's batch adapter for `entry`."""
    settings = BatchConfig(enabled=True, flush_interval_s=0.0, poll_interval_s=1.0)

    async def no_wait(_: float) -> None:
        await asyncio.sleep(0)

    vendor = BatchingVendor(create_batch_api(entry), BatchJournal.load(str(run), entry.name), settings,
                            online=create_vendor(entry), sleep=no_wait, label="conformance")
    try:
        for schema in SCHEMAS:
            await vendor.complete_many([judge_request(10 + i, schema) for i in range(2)], schema)
    finally:
        await vendor.aclose()
