"""Prompt templates (versioned files in this folder), injection-proof fencing, and the parser.

Why files: a prompt is configuration, hashed into every run record, so a changed word is a new
template hash and a new request hash (nothing stale is reused). Why fences: submission and
document text goes between per-grading random boundaries, and anything in that text that imitates
a boundary is escaped, so a submission cannot pose as instructions. The parser is the inverse of
the renderer and is what the offline judge and the emulators' responders read prompts with.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any, Literal

from pydantic import BaseModel

from evalcore.config.models import VendorConfig
from evalcore.schema import Criterion, Deliverable, SourceDocument
from evalcore.vendors.output_cap import output_cap
from evalcore.vendors.protocol import JudgeRequest

PROMPT_DIR = Path(__file__).parent
VERSION = "v1"
PROTOCOL_VERSION = "1.1"
"""The grading protocol the templates implement (their `[tribunal-protocol 1.1 …]` line); recorded in
run.json, and a release ranks only runs of one protocol version together."""
SUFFIX_MARK = "---SUFFIX---\n"
Purpose = Literal["rubric", "detect", "verify", "preflight"]

_FENCE_OPEN = re.compile(r"^<<<DATA (?P<b>[0-9a-f]{16}) (?P<attrs>.*)>>>$", re.M)
_ATTR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
_PURPOSE = re.compile(r"^\[tribunal-protocol 1\.1 purpose=(\w+)\]", re.M)


def _read(name: str) -> str:
    return (PROMPT_DIR / f"{name}.{VERSION}.md").read_text(encoding="utf-8")


TEMPLATES: dict[str, str] = {
    name: _read(name) for name in ("system", "rubric", "detect", "verify", "preflight")
}


_TEMPLATE_HASHES: dict[str, str] = {
    f"{name}.{VERSION}": hashlib.sha256(text.encode()).hexdigest() for name, text in TEMPLATES.items()
}
"""Computed once: every request's hash names its templates, and hashing all five per request was
a measurable share of the framework's time per call (benchmarks/orchestration_ceiling.py)."""


def template_hashes() -> dict[str, str]:
    """sha256 of every template file, as recorded in run.json (a copy: callers may keep it)."""
    return dict(_TEMPLATE_HASHES)


@functools.cache
def answer_schema_hash(schema: type[BaseModel]) -> str:
    """sha256 of the JSON schema a judge is asked to answer in.

    Part of every request hash: a stored answer is reused only for the answer shape it was given
    in, so changing an output model (a new field, a narrowed value) pays for new answers instead
    of serving stored ones that no longer fit.
    """
    return hashlib.sha256(json.dumps(schema.model_json_schema(), sort_keys=True).encode()).hexdigest()


def new_boundary() -> str:
    """A fresh random fence boundary (64 bits, unknowable to whoever wrote the submission)."""
    return secrets.token_hex(8)


_ZW = "\u200b"  # zero-width space: the escape mark, invisible to a reader
_DOUBLED = re.compile(r"([<>])(?=\1)")
_MARK = re.compile(_ZW + "(" + _ZW + "?)")


def escape(text: str) -> str:
    """Neutralise anything that imitates a fence line: no '<<' or '>>' survives.

    A zero-width mark goes between every two equal angle brackets (so '<<<' can never appear);
    marks already in the text are doubled first, which makes the escape reversible.
    """
    return _escape_kept(text) if len(text) >= _KEPT_ESCAPE_CHARS else _escape(text)


def _escape(text: str) -> str:
    return _DOUBLED.sub(lambda m: m.group(1) + _ZW, text.replace(_ZW, _ZW + _ZW))


_KEPT_ESCAPE_CHARS = 4096
_escape_kept = functools.lru_cache(maxsize=64)(_escape)
"""`escape` of a long text, kept for the last 64: a task's source documents are fenced into the
Stage 1 and Stage 2 prompts of every submission of the task, and a deliverable into its rubric,
Stage 1 and Stage 2 prompts (a real task: 5-15 sources of 20k-150k tokens in all)."""


def unescape(text: str) -> str:
    """Inverse of `escape`: a doubled mark is a literal one, a single mark is dropped."""
    return _MARK.sub(lambda m: m.group(1), text)


def fence(kind: str, text: str, boundary: str, **attrs: str) -> str:
    """Wrap `text` as data between boundary lines; attributes are quoted and escaped."""
    parts = [f'kind="{kind}"'] + [
        f'{k}="{escape(v).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for k, v in attrs.items()
    ]
    body = escape(text)
    return f"<<<DATA {boundary} {' '.join(parts)}>>>\n{body}\n<<<END {boundary}>>>"


@dataclass(frozen=True)
class Block:
    """One fenced block recovered from a prompt."""

    kind: str
    attrs: dict[str, str]
    text: str


@dataclass
class ParsedPrompt:
    """What a prompt asks: its purpose and its fenced blocks, in order."""

    purpose: str
    blocks: list[Block] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Block]:
        """Blocks of one kind (source, deliverable, criterion, instructions, candidates, flags)."""
        return [b for b in self.blocks if b.kind == kind]

    def one(self, kind: str) -> Block | None:
        """The first block of a kind, or None."""
        found = self.of_kind(kind)
        return found[0] if found else None


def parse_prompt(system: str, user: str) -> ParsedPrompt:
    """Recover the purpose and fenced blocks from a rendered prompt (inverse of the renderers)."""
    m = _PURPOSE.search(system) or _PURPOSE.search(user)
    purpose = m.group(1) if m else "unknown"
    blocks: list[Block] = []
    pos = 0
    while True:
        om = _FENCE_OPEN.search(user, pos)
        if not om:
            break
        b = om.group("b")
        end_line = f"\n<<<END {b}>>>"
        end = user.find(end_line, om.end())
        if end < 0:
            break
        attrs = {k: unescape(v.replace('\\"', '"').replace("\\\\", "\\")) for k, v in _ATTR.findall(om.group("attrs"))}
        kind = attrs.pop("kind", "")
        blocks.append(Block(kind=kind, attrs=attrs, text=unescape(user[om.end() + 1 : end])))
        pos = end + len(end_line)
    return ParsedPrompt(purpose=purpose, blocks=blocks)


@dataclass(frozen=True)
class RenderedPrompt:
    """A vendor-neutral rendered prompt plus the semantic key its request hash is built from."""

    purpose: Purpose
    system: str
    prefix: str
    suffix: str
    schema: type[BaseModel]
    key: Mapping[str, Any]

    def estimated_tokens(self, chars_per_token: float = 4.0) -> int:
        """Rough input size used for rate budgets and the too_long rule."""
        return int((len(self.system) + len(self.prefix) + len(self.suffix)) / chars_per_token) + 1

    def request_for(self, vendor: VendorConfig, chars_per_token: float = 4.0, repeat: int = 0) -> JudgeRequest:
        """Bind to one vendor: the request hash covers vendor settings, template, answer schema and inputs.

        `repeat` (k > 0: the k-th repeat of `tribunal retest`) is part of the identity, so each
        repeat is a fresh, paid request that the reuse cache then keeps as its own; repeat 0 adds
        nothing to the key, so an original grading hashes exactly as before repeats existed (its
        stored calls, resume and `--reuse` stay valid). The prompt sent is the same either way.
        """
        key = {
            "answer_schema": answer_schema_hash(self.schema),
            "vendor": vendor.name,
            "adapter": vendor.adapter,
            "model": vendor.model,
            "effort": vendor.reasoning_effort,
            "max_output_tokens": vendor.max_output_tokens,
            "template": _TEMPLATE_HASHES[f"{self.purpose}.{VERSION}"],
            "system_template": _TEMPLATE_HASHES[f"system.{VERSION}"],
            **self.key,
            **({"repeat": repeat} if repeat else {}),
        }
        digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
        return JudgeRequest(
            purpose=self.purpose,
            request_hash=digest,
            system_prompt=self.system,
            shared_prefix=self.prefix,
            varying_suffix=self.suffix,
            schema_name=self.schema.__name__,
            estimated_input_tokens=self.estimated_tokens(chars_per_token),
            # sized from the effort and the answer schema, the configured value its floor; the hash
            # keeps the configured value, so runs before the rule are still served (an answer stored
            # as ok did not stop at its cap, whatever the cap was)
            max_output_tokens=output_cap(vendor, self.schema),
        )


@functools.cache
def _halves(name: str) -> tuple[Template, Template]:
    """Template `name` split at its marker line into prefix and suffix, once per template (a
    rubric prompt is rendered once per criterion). Split before substituting: a value that
    contains the marker line stays intact."""
    prefix, _, suffix = TEMPLATES[name].partition(SUFFIX_MARK)
    return Template(prefix), Template(suffix)


def _split(name: str, **values: str) -> tuple[str, str]:
    prefix, suffix = _halves(name)
    return prefix.substitute(**values), suffix.substitute(**values)


def _system(purpose: str, boundary: str) -> str:
    return Template(TEMPLATES["system"]).substitute(purpose=purpose, boundary=boundary)


def _deliverables_block(deliverables: Iterable[Deliverable], boundary: str) -> str:
    out = []
    for d in deliverables:
        text = d.text if not d.missing else ""
        out.append(
            fence("deliverable", text, boundary, name=d.name, status="missing" if d.missing else "present")
        )
    return "\n\n".join(out) if out else "(no deliverables)"


def _sources_block(documents: Iterable[SourceDocument], boundary: str) -> str:
    return "\n\n".join(fence("source", d.text, boundary, name=d.name) for d in documents)


def rubric_prefix(instructions: str, deliverables: list[Deliverable], boundary: str) -> str:
    """The shared part of a rubric prompt: the task's instructions and the deliverables, fenced.

    Apart from `render_rubric` because it is the costly part (escaping every deliverable) and
    identical for every criterion that reads the same deliverables: `rubric_prompts` makes it once
    per deliverable set, not once per criterion (55 criteria of a real task read one memo).
    """
    return _halves("rubric")[0].substitute(
        instructions=fence("instructions", instructions, boundary),
        deliverables=_deliverables_block(deliverables, boundary),
    )


def render_rubric(
    *,
    task_id: str,
    instructions: str,
    criterion: Criterion,
    deliverables: list[Deliverable],
    boundary: str,
    prefix: str | None = None,
) -> RenderedPrompt:
    """Stage A prompt for one criterion: shared part (instructions, deliverables) first.

    `prefix`, when given, is `rubric_prefix(instructions, deliverables, boundary)` made already
    for another criterion of the same submission (the caller's promise; not rendered again).
    """
    from evalcore.schema import RubricAnswer

    suffix = _halves("rubric")[1].substitute(
        criterion=fence("criterion", criterion.match_criteria, boundary, id=criterion.id, title=criterion.title)
    )
    key = {
        "purpose": "rubric",
        "task_id": task_id,
        "instructions": hashlib.sha256(instructions.encode()).hexdigest(),
        "criterion": [criterion.id, criterion.title, criterion.match_criteria],
        "deliverables": [(d.name, d.sha256, d.missing) for d in deliverables],
    }
    if prefix is None:
        prefix = rubric_prefix(instructions, deliverables, boundary)
    return RenderedPrompt("rubric", _system("rubric", boundary), prefix, suffix, RubricAnswer, key)


def _audit_key(purpose: str, task_id: str, instructions: str, sources: list[SourceDocument],
               deliverables: list[Deliverable]) -> dict[str, Any]:
    return {
        "purpose": purpose,
        "task_id": task_id,
        "instructions": hashlib.sha256(instructions.encode()).hexdigest(),
        # the converted text the auditor reads (a converter change must not reuse stale answers)
        "sources": [(s.name, hashlib.sha256(s.text.encode()).hexdigest()) for s in sources],
        "deliverables": [(d.name, d.sha256, d.missing) for d in deliverables],
    }


def render_detect(
    *,
    task_id: str,
    instructions: str,
    sources: list[SourceDocument],
    deliverables: list[Deliverable],
    candidates: list[dict[str, Any]],
    boundary: str,
) -> RenderedPrompt:
    """Stage 1 prompt: sources and deliverables first (shared with Stage 2), candidates last."""
    from evalcore.schema import DetectionAnswer

    cand_json = json.dumps(candidates, indent=1, ensure_ascii=False)
    prefix, suffix = _split(
        "detect",
        instructions=fence("instructions", instructions, boundary),
        sources=_sources_block(sources, boundary),
        deliverables=_deliverables_block(deliverables, boundary),
        candidates=fence("candidates", cand_json, boundary),
    )
    key = _audit_key("detect", task_id, instructions, sources, deliverables)
    key["candidates"] = hashlib.sha256(cand_json.encode()).hexdigest()
    return RenderedPrompt("detect", _system("detect", boundary), prefix, suffix, DetectionAnswer, key)


def render_verify(
    *,
    task_id: str,
    instructions: str,
    sources: list[SourceDocument],
    deliverables: list[Deliverable],
    flags: list[dict[str, Any]],
    boundary: str,
) -> RenderedPrompt:
    """Stage 2 prompt: the same shared prefix as Stage 1, then each flag with its passages."""
    from evalcore.schema import VerificationAnswer

    flags_json = json.dumps(flags, indent=1, ensure_ascii=False)
    prefix, suffix = _split(
        "verify",
        instructions=fence("instructions", instructions, boundary),
        sources=_sources_block(sources, boundary),
        deliverables=_deliverables_block(deliverables, boundary),
        flags=fence("flags", flags_json, boundary),
    )
    key = _audit_key("verify", task_id, instructions, sources, deliverables)
    key["flags"] = hashlib.sha256(flags_json.encode()).hexdigest()
    return RenderedPrompt("verify", _system("verify", boundary), prefix, suffix, VerificationAnswer, key)


def render_preflight() -> RenderedPrompt:
    """The minimal structured call a preflight sends to each vendor."""
    from evalcore.schema import PreflightAnswer

    boundary = "0" * 16
    prefix, suffix = _split("preflight")
    return RenderedPrompt(
        "preflight", _system("preflight", boundary), prefix, suffix, PreflightAnswer, {"purpose": "preflight"}
    )
