"""The offline vendor: in-process, no network, no key, deterministic, and always labelled offline.

Why: demos, CI and the methodology tests need a judge that answers instantly and the same way
every time. It reads the rendered prompt back (`doubles.offline_judge.answer`, built on
`evalcore.prompts.parse_prompt`) and answers with heuristics; the answer goes through the same
schema validation as a real vendor's. Usage is estimated from text length, the cost is 0, and
every reply has `offline=True` so no table can mistake it for a model's verdict.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pydantic

from evalcore.errors import ErrorKind
from evalcore.vendors.adapters.common import AdapterBase, Attempt, BadOutput, Classified, M
from evalcore.vendors.protocol import JudgeRequest, Usage
from evalcore.vendors.retry import Failure, RetryState

CHARS_PER_TOKEN = 4.0


def _tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class OfflineVendor(AdapterBase[None]):
    """Deterministic heuristic judge (see `doubles.offline_judge`)."""

    adapter = "offline"
    needs_key = False
    is_offline = True

    def _make_client(self, api_key: str) -> None:
        return None

    async def _attempt(
        self, client: None, request: JudgeRequest, schema: type[M], timeout_s: float
    ) -> Attempt[M]:
        from doubles.offline_judge import answer  # imported on first use: it is a sibling's module

        data: Any = answer(request.system_prompt, request.user_text, request.schema_name)
        text = json.dumps(data, ensure_ascii=False, sort_keys=True)
        usage = Usage(
            input_tokens=_tokens(request.system_prompt) + _tokens(request.user_text),
            output_tokens=_tokens(text),
        )
        request_id = f"offline-{request.request_hash[:16]}"
        try:
            output = schema.model_validate(data)
        except pydantic.ValidationError as exc:
            raise BadOutput(
                f"offline answer is not a valid {schema.__name__}: {exc.errors()[0]['msg'] if exc.errors() else exc}",
                usage=usage,
                cost_usd=0.0,
                request_id=request_id,
            ) from None
        return Attempt(output, usage, request_id, 0.0, None)

    def classify(self, exc: BaseException) -> Classified:
        if isinstance(exc, ImportError):
            return Classified(ErrorKind.FATAL)
        return super().classify(exc)

    def _next_delay(self, failure: Failure, state: RetryState, elapsed_s: float) -> float | None:
        return None  # deterministic: the same input fails the same way again
