"""Responders decide WHAT an emulated model answers; the emulator decides HOW it is delivered.

Why separate: the wire behaviour (429s, usage, caching, faults) is the same whatever the answer,
while tests want scripted ground truth and demos want the offline heuristics. A responder sees one
vendor-neutral `EmulatedRequest` and returns a dict (sent as JSON) or a string (sent verbatim).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

VendorName = Literal["openai", "anthropic", "xai"]
Answer = dict[str, Any] | list[Any] | str


class EmulatedRequest(BaseModel):
    """What the model was asked, the same for every vendor.

    `headers` holds the HTTP headers or gRPC metadata as received (including the auth header, so
    tests can check a key was sent); it is excluded from repr so it is never printed by accident.
    """

    model_config = ConfigDict(frozen=True)

    vendor: VendorName
    api: str = Field(description='"responses", "chat.completions", "messages" or "chat.GetCompletion".')
    model: str
    system: str = Field(description="All system/developer/instructions text, joined by blank lines.")
    user: str = Field(description="All user message text, joined by blank lines.")
    json_schema: dict[str, Any] | None = Field(default=None, description="JSON schema asked for, or None.")
    schema_name: str | None = Field(
        default=None, description="openai: json_schema name; else the schema title."
    )
    reasoning_effort: str | None = Field(
        default=None, description="The effort whose distribution the reasoning tokens are drawn from (None: none)."
    )
    reasoning_budget: int | None = Field(
        default=None, description="The most the request lets the model reason (Anthropic's thinking budget_tokens)."
    )
    reasoning_in_cap: bool = Field(
        default=True,
        description="Reasoning tokens count inside `max_output_tokens`, as OpenAI's `max_output_tokens` and "
        "Anthropic's `max_tokens` count them; False for xAI (not documented).",
    )
    max_output_tokens: int | None = None
    headers: dict[str, str] = Field(default_factory=dict, repr=False)


@runtime_checkable
class Responder(Protocol):
    """Decides the answer to one request (may also return an awaitable of it)."""

    def __call__(self, request: EmulatedRequest) -> Answer | Awaitable[Answer]: ...


class StaticResponder:
    """Always the same answer (useful for transport tests that do not care about content)."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer

    def __call__(self, request: EmulatedRequest) -> Answer:
        return self.answer


class ScriptedResponder:
    """Any callable `EmulatedRequest -> dict | str` (scripted ground truth in tests)."""

    def __init__(self, fn: Callable[[EmulatedRequest], Answer | Awaitable[Answer]]) -> None:
        self.fn = fn

    def __call__(self, request: EmulatedRequest) -> Answer | Awaitable[Answer]:
        return self.fn(request)


class OfflineResponder:
    """The default: the offline vendor's deterministic heuristics (`doubles.offline_judge.answer`).

    With `personas`, each answer is then bent by the persona of the model (or vendor) asked, so
    three emulated judges can disagree, be lenient, prefer their own family's work, or audit with
    a known recall (see `Persona`). Without, answers are exactly the offline heuristics'.
    Imported lazily so the emulators load (and their tests run) without the offline module.
    """

    def __init__(self, personas: PersonaSet | None = None) -> None:
        self.personas = personas

    def __call__(self, request: EmulatedRequest) -> Answer:
        offline = importlib.import_module("doubles.offline_judge")  # lazy: a separate, heavier module
        answer: dict[str, Any] = offline.answer(request.system, request.user, request.schema_name)
        if self.personas is None:
            return answer
        persona = self.personas.for_request(request)
        if persona is None or persona.is_neutral():
            return answer
        return self.personas.bend(persona, request, answer)


# ============================================================================================
# Personas: emulated judges with known biases
# ============================================================================================


class Persona(BaseModel):
    """How one emulated model departs from the offline heuristics: biases an operator can plant.

    All departures are relative to the offline judge's own answer (the persona does not know the
    truth): a rubric verdict is first decided by the heuristics, then bent; the auditor's Stage 1
    flags are the heuristics' findings, thinned by `recall`, plus false flags. Every random choice
    is a hash of the seed, the persona's name and the content (never the random fence boundary),
    so the same question always gets the same answer: resumes, `--reuse` and re-runs agree.
    Except the noise across gradings (`retest_flip`, `flag_recurrence`): that is drawn per
    grading, from the seed, the item and the grading's fence boundary (`PersonaSet.grading_draw`:
    new for every grading, shared by all its prompts), since a repeat that could never differ would
    measure nothing. A stored answer is still served by reuse, so a re-run agrees with the first.

    Expected effects, which tests check the reduction recovers:
    * self-family preference ≈ `self_bias` × the share of its own family's items the others fail;
    * Cohen's κ with a neutral judge falls as `noise` rises;
    * the auditor's recall ≈ `recall` × the offline auditor's recall.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: str | None = Field(
        default=None, description="Its own model family (default: the vendor's name: openai, anthropic, xai)."
    )
    leniency: float = Field(
        default=0.0, ge=-1.0, le=1.0,
        description="> 0: a fail becomes a pass with this probability; < 0: a pass becomes a fail with -leniency.",
    )
    noise: float = Field(default=0.0, ge=0.0, le=1.0, description="Probability that a verdict is flipped.")
    self_bias: float = Field(
        default=0.0, ge=0.0, le=1.0,
        description="On its own family's work, a fail becomes a pass with this probability.",
    )
    recall: float = Field(
        default=1.0, ge=0.0, le=1.0, description="Auditor: share of the offline auditor's Stage 1 flags it raises."
    )
    false_flag_rate: float = Field(
        default=0.0, ge=0.0, le=1.0,
        description="Auditor: probability that a sentence with no finding is flagged in Stage 1 anyway.",
    )
    upholds_false_flags: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Auditor: share of its own false flags Stage 2 confirms."
    )
    rejects_real_flags: float = Field(
        default=0.0, ge=0.0, le=1.0, description="Auditor: share of real (grounded) flags Stage 2 rejects."
    )
    retest_flip: float = Field(
        default=0.0, ge=0.0, le=0.5,
        description="Judge noise across gradings: in each grading of a submission, each verdict is flipped with "
        "this probability, drawn afresh per grading (two gradings then differ on an item with probability "
        "2q(1-q): the flip rate `tribunal retest` measures).",
    )
    flag_recurrence: float = Field(
        default=1.0, ge=0.0, le=1.0,
        description="Auditor noise across gradings: in each grading, each Stage 1 flag it would raise is raised "
        "with this probability, drawn afresh per grading (a flag of one grading recurs in another with it).",
    )
    noise_criteria: int | None = Field(
        default=None, ge=1,
        description="The rubric length the per-verdict rates that can fail a criterion (`noise`, a negative "
        "`leniency`, `retest_flip`) are stated for. On a submission whose task has k > noise_criteria criteria, "
        "each such rate r becomes 1 - (1 - r)^(noise_criteria / k): the same chance that some verdict of the "
        "submission is bent as on a rubric of noise_criteria criteria. None: r per verdict, whatever the length.",
    )
    false_flag_sentences: int | None = Field(
        default=None, ge=1,
        description="The number of a submission's sentences `false_flag_rate` is stated for. On a submission "
        "with s > false_flag_sentences sentences, each is flagged with 1 - (1 - rate)^(false_flag_sentences / s): "
        "the same chance of a false flag per submission as on that many sentences. None: per sentence.",
    )

    def per_verdict(self, rate: float, criteria: int | None) -> float:
        """`rate` for one verdict of a submission whose task has `criteria` criteria (`noise_criteria`).

        Why: bent independently per verdict, a rate compounds over the rubric: a judge that flips 10 %
        of verdicts keeps an all-pass memo's all-pass on 13 criteria one time in four, on 55 criteria
        one time in 300, so at the lab's size (44-90 criteria) no system all-passes and the
        leaderboard cannot separate the systems the synth planted apart. Stated for a rubric length,
        a persona misgrades a long rubric's submission as often as a short one's."""
        return _spread(rate, self.noise_criteria, criteria)

    def per_sentence(self, sentences: int) -> float:
        """`false_flag_rate` for one sentence of a submission of `sentences` sentences
        (`false_flag_sentences`). Why: the same compounding as `per_verdict`, over a lab memo's
        100-300 sentences (the sample's have 3-41): an 8-task lab run's auditor gated 3 of the 9
        clean memos it audited on its own false flags."""
        return _spread(self.false_flag_rate, self.false_flag_sentences, sentences)

    def is_neutral(self) -> bool:
        """True when the persona changes nothing (the offline heuristics as they are)."""
        return (self.leniency == 0 and self.noise == 0 and self.self_bias == 0 and self.recall == 1
                and self.false_flag_rate == 0 and self.rejects_real_flags == 0 and self.retest_flip == 0
                and self.flag_recurrence == 1)


def _spread(rate: float, stated: int | None, actual: int | None) -> float:
    """`rate`, stated per item for `stated` items, per item of `actual` items: unchanged up to `stated`
    (or when either is unknown), beyond it the rate with the same chance of at least one event."""
    if stated is None or actual is None or actual <= stated or rate <= 0:
        return rate
    return float(1.0 - (1.0 - rate) ** (stated / actual))


def _sentences(present: Sequence[tuple[str, str]]) -> int:
    """The sentences a persona may flag falsely (`PersonaSet._detect`'s candidates, before the real flags)."""
    return sum(1 for _, text in present for s in _SENTENCE.findall(text) if len(s.strip()) >= 25)


def deliverables_fingerprint(deliverables: Iterable[tuple[str, str]]) -> str:
    """Identity of a submission's work product: the names and texts of its present deliverables.

    Computed the same way from a `Submission` (by the driver) and from a prompt's deliverable
    blocks (by the responder): how an emulated judge "recognises" its own family's writing.
    """
    h = hashlib.sha256()
    for name, text in sorted(deliverables):
        h.update(f"\0{name}\0{hashlib.sha256(text.encode('utf-8')).hexdigest()}".encode())
    return h.hexdigest()


class PersonaSet(BaseModel):
    """The personas of one emulated panel, keyed by model name or, failing that, vendor name.

    Keying by model lets an operator swap one judge (a new model name in the configuration, so
    new request hashes: `--reuse` pays only for that judge) and give it another persona.
    `families` maps a deliverables fingerprint to the family of the system that wrote it; a
    persona with `self_bias` is lenient only on fingerprints of its own family.
    """

    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    personas: dict[str, Persona] = Field(default_factory=dict)
    families: dict[str, str] = Field(default_factory=dict, description="deliverables fingerprint -> family.")
    rubric_sizes: dict[str, int] = Field(
        default_factory=dict, description="deliverables fingerprint -> criteria of its task (`Persona.noise_criteria`).")

    def for_request(self, request: EmulatedRequest) -> Persona | None:
        """The persona of the model asked, else of its vendor, else None."""
        return self.personas.get(request.model) or self.personas.get(request.vendor)

    def _key(self, request: EmulatedRequest) -> str:
        return request.model if request.model in self.personas else request.vendor

    def _u(self, *parts: object) -> float:
        """A uniform number in [0, 1) fixed by the seed and `parts`."""
        digest = hashlib.sha256("\x1f".join(map(str, (self.seed, *parts))).encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") / 2.0**64

    def grading_draw(self, name: str, kind: str, boundary: str, *item: object) -> float:
        """A uniform number in [0, 1) for one item in one grading: fixed by the seed, the persona,
        the item and the grading's fence boundary (drawn per grading), so each grading of the same
        submission is an independent draw (`Persona.retest_flip`, `flag_recurrence`)."""
        return self._u(name, kind, boundary, *item)

    def bend(self, persona: Persona, request: EmulatedRequest, answer: dict[str, Any]) -> dict[str, Any]:
        """The offline answer, bent by `persona` (rubric, detect and verify answers; others untouched)."""
        from evalcore.prompts import parse_prompt

        parsed = parse_prompt(request.system, request.user)
        fence = _FENCE.search(request.user)
        boundary = fence.group(1) if fence else ""
        name = self._key(request)
        family = persona.family or request.vendor
        present = [
            (b.attrs.get("name", f"deliverable-{i}"), b.text)
            for i, b in enumerate(parsed.of_kind("deliverable"))
            if b.attrs.get("status", "present") != "missing"
        ]
        fp = deliverables_fingerprint(present)
        if parsed.purpose == "rubric" and "verdict" in answer:
            crit = parsed.one("criterion")
            item = (fp, crit.attrs.get("id", "") if crit else "", crit.text if crit else "")
            return self._rubric(persona, name, family, fp, item, answer, boundary)
        if parsed.purpose == "detect" and "flags" in answer:
            return self._detect(persona, name, fp, present, answer, boundary)
        if parsed.purpose == "verify" and "decisions" in answer:
            return self._verify(persona, name, fp, parsed, answer, _sentences(present))
        return answer

    def _rubric(
        self, p: Persona, name: str, family: str, fp: str, item: tuple[str, str, str], answer: dict[str, Any],
        boundary: str = "",
    ) -> dict[str, Any]:
        base = answer["verdict"]
        verdict = base
        why: list[str] = []
        criteria = self.rubric_sizes.get(fp)
        if base == "fail" and p.leniency > 0 and self._u(name, "lenient", *item) < p.leniency:
            verdict, why = "pass", ["lenient"]
        elif base == "pass" and p.leniency < 0 and self._u(name, "lenient", *item) < p.per_verdict(-p.leniency,
                                                                                                  criteria):
            verdict, why = "fail", ["strict"]
        own = self.families.get(fp) == family
        if verdict == "fail" and own and p.self_bias > 0 and self._u(name, "self", *item) < p.self_bias:
            verdict, why = "pass", [*why, "own family"]
        if p.noise > 0 and self._u(name, "noise", *item) < p.per_verdict(p.noise, criteria):
            verdict, why = ("fail" if verdict == "pass" else "pass"), [*why, "noise"]
        if p.retest_flip > 0 and self.grading_draw(name, "flip", boundary, *item) < p.per_verdict(p.retest_flip,
                                                                                                  criteria):
            verdict, why = ("fail" if verdict == "pass" else "pass"), [*why, "this grading's flip"]
        if verdict == base:
            return answer
        reasoning = f"{answer.get('reasoning', '')} [persona {name}: {verdict} ({', '.join(why)})]"
        return {**answer, "verdict": verdict, "reasoning": reasoning}

    def _false_flag(self, p: Persona, name: str, fp: str, deliverable: str, span: str, sentences: int) -> bool:
        return p.false_flag_rate > 0 and self._u(name, "false", fp, deliverable, span) < p.per_sentence(sentences)

    def _detect(
        self, p: Persona, name: str, fp: str, present: list[tuple[str, str]], answer: dict[str, Any],
        boundary: str = "",
    ) -> dict[str, Any]:
        flags = [
            f for f in answer["flags"]
            if (p.recall >= 1 or self._u(name, "recall", fp, f.get("deliverable"), f.get("span")) < p.recall)
            and (p.flag_recurrence >= 1
                 or self.grading_draw(name, "recur", boundary, fp, f.get("deliverable"), f.get("span"))
                 < p.flag_recurrence)
        ]
        taken = {(f.get("deliverable"), s) for f in answer["flags"] for s in [str(f.get("span", ""))]}
        sentences = _sentences(present)
        for deliverable, text in present:
            for sentence in _SENTENCE.findall(text):
                span = sentence.strip()
                if len(span) < 25 or any(d == deliverable and (span in s or s in span) for d, s in taken):
                    continue
                if self._false_flag(p, name, fp, deliverable, span, sentences):
                    flags.append({
                        "span": span, "deliverable": deliverable, "location": "",
                        "category": "unsupported_specific", "evidence_document": None, "evidence_passage": None,
                        "explanation": f"[offline] [persona {name}] unsupported by the sources (a planted false flag).",
                    })
        return {**answer, "flags": flags}

    def _verify(
        self, p: Persona, name: str, fp: str, parsed: Any, answer: dict[str, Any], sentences: int = 0,
    ) -> dict[str, Any]:
        block = parsed.one("flags")
        try:
            data = json.loads(block.text) if block is not None else []
        except json.JSONDecodeError:
            return answer
        if isinstance(data, dict):
            data = data.get("flags", [])
        flags = {
            int(f.get("index", i)): f for i, f in enumerate(data if isinstance(data, list) else []) if isinstance(f, dict)
        }
        out = []
        for d in answer["decisions"]:
            f = flags.get(int(d.get("flag_index", -1)), {})
            deliverable, span = str(f.get("deliverable") or ""), str(f.get("span", ""))
            if d.get("status") == "rejected" and self._false_flag(p, name, fp, deliverable, span, sentences):
                material = self._u(name, "material", fp, deliverable, span) < 0.5
                d = {**d, "status": "confirmed", "category": f.get("category") or "unsupported_specific",
                     "materiality": "material" if material else "minor",
                     "rationale": f"[offline] [persona {name}] upheld its own flag."} \
                    if self._u(name, "uphold", fp, deliverable, span) < p.upholds_false_flags else d
            elif (d.get("status") == "confirmed" and p.rejects_real_flags > 0
                  and self._u(name, "reject", fp, deliverable, span) < p.rejects_real_flags):
                d = {**d, "status": "rejected", "category": None, "materiality": None,
                     "rationale": f"[offline] [persona {name}] rejected a grounded flag."}
            out.append(d)
        return _fix_merges({**answer, "decisions": out})


_SENTENCE = re.compile(r"[^.!?\n]+[.!?]")
_FENCE = re.compile(r"<<<DATA ([0-9a-f]+) ")
"""The opening of a fenced block: its boundary is the grading's (`evalcore.prompts.new_boundary`)."""
_BOUNDARY = re.compile(r"(<<<(?:DATA|END) )[0-9a-f]+")


def without_boundaries(text: str) -> str:
    """`text` with every fence boundary left out: the same question in every grading (each draws
    a new random boundary), for a draw that must not change from one grading to the next."""
    return _BOUNDARY.sub(r"\1", text)


def _fix_merges(answer: dict[str, Any]) -> dict[str, Any]:
    """A merge must point at a confirmed flag: a merge into a flag the persona rejected becomes a rejection."""
    status = {d.get("flag_index"): d.get("status") for d in answer["decisions"]}
    fixed = [
        {**d, "status": "rejected", "merged_into": None}
        if d.get("status") == "merged" and status.get(d.get("merged_into")) != "confirmed" else d
        for d in answer["decisions"]
    ]
    return {**answer, "decisions": fixed}


DEMO_RUBRIC = 15
"""The longest rubric of the sample (12-15 criteria): the demo personas' rates are stated for it
(`Persona.noise_criteria`), so the demo's answers on the sample are the same as per verdict."""

DEMO_SENTENCES = 41
"""The most sentences of a sample submission (3-41): the demo auditor's false-flag rate is stated
for it (`Persona.false_flag_sentences`), so its answers on the sample are the same as per sentence."""

DEMO_PERSONAS: dict[str, Persona] = {
    "openai": Persona(leniency=0.15, noise=0.03, recall=0.85, false_flag_rate=0.01, upholds_false_flags=0.5,
                      noise_criteria=DEMO_RUBRIC, false_flag_sentences=DEMO_SENTENCES),
    "xai": Persona(noise=0.1, noise_criteria=DEMO_RUBRIC),
    "anthropic": Persona(noise=0.03, self_bias=0.6, noise_criteria=DEMO_RUBRIC),
}
"""The panel `tribunal demo` runs: a lenient OpenAI judge (also the auditor: it misses some findings
and raises a few false flags), a noisy xAI judge, and an Anthropic judge that passes its own
family's work more often than the others do. Their noise is stated for the sample's rubric length
(`DEMO_RUBRIC`) and the false flags for its memos' length (`DEMO_SENTENCES`): on a lab task of 44-90
criteria and a memo of 100-300 sentences they would otherwise leave no system an all-pass and gate
a third of the clean memos audited."""

DEMO_RETEST_NOISE: dict[str, dict[str, float]] = {
    "openai": {"retest_flip": 0.02, "flag_recurrence": 0.8},
    "xai": {"retest_flip": 0.08},
    "anthropic": {"retest_flip": 0.03},
}
"""The demo panel's noise across gradings (`--personas demo-noisy`: `DEMO_PERSONAS` with it): what
`tribunal retest runs/demo` measures. Apart from `DEMO_PERSONAS` so the demo's own sweep is
drawn from the content alone and gives the same leaderboard every time."""


def demo_noisy_personas() -> dict[str, Persona]:
    """`DEMO_PERSONAS` with their noise across gradings (`DEMO_RETEST_NOISE`)."""
    return {k: p.model_copy(update=DEMO_RETEST_NOISE.get(k, {})) for k, p in DEMO_PERSONAS.items()}
