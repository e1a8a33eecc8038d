"""A vendor whose attempts follow a script, for testing the shared retry loop without a network.

The adapter base (`AdapterBase`) is the real one; only `_attempt`/`classify` are scripted, the
way a real adapter turns an SDK exception into a classification.
"""

from __future__ import annotations

import random
from typing import Any

from pydantic import BaseModel

from evalcore.config.models import VendorConfig
from evalcore.errors import ErrorKind
from evalcore.vendors.adapters.common import AdapterBase, Attempt, BadOutput, Classified, M
from evalcore.vendors.budget import RateBudget
from evalcore.vendors.protocol import JudgeRequest, Usage


class Verdict(BaseModel):
    ok: bool


class Fail(Exception):
    """A scripted failure of a given kind (what an SDK error classifies as)."""

    def __init__(self, kind: ErrorKind, retry_after: float | None = None, msg: str = "scripted") -> None:
        super().__init__(msg)
        self.kind = kind
        self.retry_after = retry_after


class FakeTime:
    """A clock and a sleep that advances it (no real waiting)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self.budget_waits: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    async def budget_sleep(self, seconds: float) -> None:
        self.budget_waits.append(seconds)
        self.now += seconds


class ScriptedVendor(AdapterBase[None]):
    adapter = "scripted"
    needs_key = False

    def __init__(self, cfg: VendorConfig, script: list[Any], **kwargs: Any) -> None:
        super().__init__(cfg, **kwargs)
        self.script = list(script)
        self.sent: list[JudgeRequest] = []

    def _make_client(self, api_key: str) -> None:
        return None

    async def _attempt(
        self, client: None, request: JudgeRequest, schema: type[M], timeout_s: float
    ) -> Attempt[M]:
        self.sent.append(request)
        item = self.script.pop(0) if self.script else {"ok": True}
        if isinstance(item, BaseException):
            raise item
        return Attempt(
            schema.model_validate(item), Usage(input_tokens=100, cached_input_tokens=40, output_tokens=10)
        )

    def classify(self, exc: BaseException) -> Classified:
        if isinstance(exc, Fail):
            return Classified(exc.kind, exc.retry_after)
        return super().classify(exc)


def make_cfg(**overrides: Any) -> VendorConfig:
    data: dict[str, Any] = {
        "adapter": "openai",
        "name": "scripted",
        "family": "test",
        "model": "m-1",
        "price": {"input": 2.0, "cached_input": 0.5, "output": 10.0},
        "retry": {
            "max_attempts": 6,
            "deadline_s": 900,
            "base_delay_s": 0.5,
            "max_delay_s": 60,
            "bad_output_retries": 2,
        },
    }
    data.update(overrides)
    return VendorConfig.model_validate(data)


def scripted(script: list[Any], t: FakeTime, **cfg: Any) -> ScriptedVendor:
    c = make_cfg(**cfg)
    budget = RateBudget.from_limits(c.limits, clock=t.clock, sleep=t.budget_sleep)
    return ScriptedVendor(c, script, budget=budget, clock=t.clock, sleep=t.sleep, rng=random.Random(7))


def request(i: int = 0, estimated: int = 100) -> JudgeRequest:
    return JudgeRequest(
        purpose="rubric",
        request_hash=f"h{i}",
        system_prompt="sys",
        shared_prefix="prefix ",
        varying_suffix=f"suffix {i}",
        schema_name="Verdict",
        estimated_input_tokens=estimated,
        max_output_tokens=50,
    )


def bad(reason: str = "not json") -> BadOutput:
    return BadOutput(reason, usage=Usage(input_tokens=100, output_tokens=5))
