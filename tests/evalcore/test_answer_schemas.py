"""The answer schemas sent to the vendors' strict structured outputs carry no `default` keyword
(some strict deployments refuse it), while parsing an answer still fills the Python defaults."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest
from openai.lib._parsing._responses import type_to_text_format_param
from pydantic import BaseModel

from evalcore.schema import (
    DetectionAnswer,
    FlagDecision,
    PreflightAnswer,
    RubricAnswer,
    VerificationAnswer,
)

ANSWERS = [RubricAnswer, DetectionAnswer, VerificationAnswer, PreflightAnswer]


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in _keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _keys(v)}
    return set()


@pytest.mark.parametrize("answer", ANSWERS, ids=lambda m: m.__name__)
def test_no_answer_schema_sent_to_any_vendor_has_a_default_keyword(answer: type[BaseModel]) -> None:
    sent = {
        "xai (model_json_schema, as the xAI adapter sends it)": answer.model_json_schema(),
        "openai (text.format)": dict(type_to_text_format_param(answer)),
        "anthropic (output_config.format.schema)": anthropic.transform_schema(answer),
    }
    for vendor, schema in sent.items():
        assert "default" not in _keys(schema), f"{vendor}: {json.dumps(schema)[:300]}"


def test_an_answer_leaving_out_an_optional_field_still_parses_with_its_python_default() -> None:
    decision = FlagDecision.model_validate({"flag_index": 0, "status": "rejected"})
    assert (decision.merged_into, decision.category, decision.materiality, decision.rationale) == (None, None, None, "")
    assert "rationale" not in FlagDecision.model_json_schema().get("required", [])
