"""How many output tokens a call may produce: sized from the reasoning effort and the answer schema.

Why a rule and not one configured number: the vendors count a reasoning model's hidden tokens
inside the output cap — OpenAI's `max_output_tokens` (CreateResponse), Anthropic's `max_tokens`
(thinking included) — and a call whose reasoning eats the cap ends `incomplete` / `max_tokens`
with no answer, yet is billed. A cap that fits a medium-effort rubric verdict starves a
high-effort audit, and one number for both is either too small for one or a needless worst case
(cost cap, rate budget) for the other. So the cap is computed, in one place, from what decides
how much a call writes: its effort and its answer's schema. The prompts bind it to every request
(`RenderedPrompt.request_for`), so grading, the adapters, the rate budget's reservation, the cost
cap's worst case and the estimate all read the same number.

The rule (`output_cap`):

    cap = max(configured max_output_tokens, round_up_256(answer_allowance(schema) + reasoning_allowance(effort)))

capped at `OUTPUT_CEILING` (but never below the configured value). The configured
`max_output_tokens` is a **floor**, not an override: raise it to give an entry more room; a
smaller cap than the rule's never saves money (only tokens produced are billed, never the cap)
and only buys truncations, each paid twice.

* `reasoning_allowance(effort)`: `REASONING_ALLOWANCE` by effort; no effort configured is the
  vendors' default effort (`DEFAULT_EFFORT`, medium: OpenAI's default); an effort this table does
  not know gets the largest allowance.
* `answer_allowance(schema)`: a walk of the schema's JSON schema — every key and bracket, the
  longest value of each enum, `TEXT_TOKENS` per free-text string, `LIST_ITEMS` items per array.

When an answer still stops at its cap, the adapter retries it once at `retry_cap(cap)` (double,
up to the ceiling; `evalcore.vendors.retry`), and the truncated attempt is its own row in the
calls table (outcome `truncated`).
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

from pydantic import BaseModel

from evalcore.config.models import VendorConfig

REASONING_ALLOWANCE: dict[str, int] = {
    "none": 0,
    "minimal": 512,
    "low": 2048,
    "medium": 4096,
    "high": 8192,
    "xhigh": 16384,
    "max": 32768,
}
"""Output tokens set aside for reasoning per effort, in increasing order of effort. Why these: each
is at least four times the median count the emulators draw at that effort
(`doubles.emulators._config.ReasoningTokens`: 128 / 512 / 2,048 / 4,096 / 8,192), which with their
spread leaves about 1 % of calls above it at high effort and well under that below; the vendors
publish no distribution (OpenAI's guide only says to start with 25,000 tokens for reasoning and
output). `tribunal calibrate` reports each judge's truncation rate on a run; raise an entry's
`max_output_tokens` (the floor) when it is high."""

DEFAULT_EFFORT = "medium"
"""The effort a vendor reasons at when none is configured (OpenAI's default is medium)."""

TEXT_TOKENS = 200
"""Tokens allowed for one free-text string of an answer (a short paragraph of reasoning or evidence)."""

LIST_ITEMS = 8
"""Items allowed for one array of an answer (Stage 1's flags, Stage 2's decisions)."""

ROUND_TO = 256
"""Caps are multiples of this: a cap is a budget, not a measurement."""

OUTPUT_CEILING = 64_000
"""The largest cap the rule or a truncation retry asks for (the models' output limits are of this
order; a request above a model's limit is refused with a 400). A configured floor above it wins."""


def reasoning_allowance(effort: str | None) -> int:
    """Output tokens set aside for reasoning at `effort` (None: the vendors' default effort)."""
    effort = effort or DEFAULT_EFFORT
    return REASONING_ALLOWANCE.get(effort, max(REASONING_ALLOWANCE.values()))


def _tokens(text: str) -> int:
    """Tokens of a short JSON fragment: ~4 characters a token, rounded up, and its quotes."""
    return math.ceil(len(text) / 4) + 1


def _value(node: dict[str, Any], defs: dict[str, Any]) -> int:
    """Tokens of the longest answer one JSON-schema node allows (free text and arrays at their allowance)."""
    if "$ref" in node:
        return _value(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    options = node.get("anyOf") or node.get("oneOf")
    if options:
        return max(_value(option, defs) for option in options)
    if "enum" in node:
        return max(_tokens(str(v)) for v in node["enum"])
    if "const" in node:
        return _tokens(str(node["const"]))
    kind = node.get("type")
    if kind == "object":
        props: dict[str, Any] = node.get("properties", {})
        return 2 + sum(_tokens(name) + 1 + _value(prop, defs) for name, prop in props.items())
    if kind == "array":
        return 2 + LIST_ITEMS * (1 + _value(node.get("items", {}), defs))
    if kind == "string":
        return TEXT_TOKENS
    return 4  # a number, a boolean, null


@cache
def answer_allowance(schema: type[BaseModel]) -> int:
    """Output tokens the visible answer of `schema` is allowed: its JSON skeleton (every key and
    bracket), the longest value of each enum, `TEXT_TOKENS` per free-text string and `LIST_ITEMS`
    items per array."""
    js = schema.model_json_schema()
    return _value(js, js.get("$defs", {}))


def output_cap(cfg: VendorConfig, schema: type[BaseModel]) -> int:
    """The output-token cap of a call of `cfg` answering `schema` (the module's rule)."""
    needed = answer_allowance(schema) + reasoning_allowance(cfg.reasoning_effort)
    sized = min(math.ceil(needed / ROUND_TO) * ROUND_TO, OUTPUT_CEILING)
    return max(cfg.max_output_tokens, sized)


def retry_cap(cap: int) -> int | None:
    """The cap of the one retry of an answer that stopped at `cap`: double it, up to
    `OUTPUT_CEILING`; None when it cannot grow (a retry at the same cap would stop again)."""
    larger = min(2 * cap, OUTPUT_CEILING)
    return larger if larger > cap else None
