"""The zero-work vendor: answers every call at once with a fixed valid answer, to measure the
framework alone.

Why: the offline heuristics cost CPU per call (they read the prompt back and grade it), so a
sweep on them measures heuristics plus framework. This adapter does nothing per call but hand back
one prebuilt answer per schema (every criterion passes, Stage 1 raises no flag), so what a sweep on
it costs is the orchestration: prompts, Ray calls, grounding checks, rows and Parquet. Replies are
labelled offline (no table can mistake them for a model's verdict), cost 0, and need no key and no
rate budget.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from evalcore.schema import DetectionAnswer, PreflightAnswer, RubricAnswer, VerificationAnswer
from evalcore.vendors.adapters.common import AdapterBase, Attempt, M
from evalcore.vendors.protocol import JudgeRequest, Usage

_ANSWERS: dict[type[BaseModel], BaseModel] = {
    RubricAnswer: RubricAnswer(verdict="pass", reasoning="[zero-work vendor] fixed answer"),
    DetectionAnswer: DetectionAnswer(flags=[]),
    VerificationAnswer: VerificationAnswer(decisions=[]),
    PreflightAnswer: PreflightAnswer(ok=True),
}
_USAGE = Usage(input_tokens=1, output_tokens=1)


class ZeroVendor(AdapterBase[None]):
    """Instant fixed answers (see module doc)."""

    adapter = "zero"
    needs_key = False
    is_offline = True

    def _make_client(self, api_key: str) -> None:
        return None

    async def _attempt(self, client: None, request: JudgeRequest, schema: type[M], timeout_s: float) -> Attempt[M]:
        answer: Any = _ANSWERS[schema]
        return Attempt(answer, _USAGE, "zero", 0.0, None)
