"""The data model: one pydantic model per concept, validated at the edges.

Inputs (Task, Criterion, SourceDocument, Deliverable, Submission) are what the loaders produce.
Judge answers (RubricAnswer, DetectionAnswer, VerificationAnswer) are the output schemas sent to
the vendors' structured-output APIs. Result rows (VerdictRow, FlagRow, CallRow, SubmissionRow) are
the raw observations stored as Parquet; every score is derived from them by `evalcore.grading.scoring`.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


def sha256_text(text: str) -> str:
    """Stable content hash of a text (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_bytes(data: bytes) -> str:
    """Stable content hash of raw bytes."""
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


class Criterion(BaseModel):
    """One expert rubric item. Equally weighted; `deliverables` limits which deliverables it reads."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str = Field(min_length=1, description="Unique within the task, e.g. C-001.")
    title: str = Field(min_length=1)
    match_criteria: str = Field(min_length=1, description='Usually "PASS if ... FAIL if ...".')
    deliverables: list[str] | None = Field(
        default=None, description="Names of the deliverables it applies to; None = all."
    )


class PageInfo(BaseModel):
    """One page of a PDF or frame of an image: whether its text was OCR'd, and how confidently."""

    model_config = ConfigDict(frozen=True)

    number: int = Field(description="1-based page number; the text has a '## Page <number>' heading.")
    ocr: bool = Field(default=False, description="True when the text was recognised from the page image.")
    confidence: float | None = Field(default=None, description="OCR engine mean word confidence, 0-100.")


class SourceDocument(BaseModel):
    """One file of the task's closed universe of sources, converted to plain text."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="Path relative to the task's documents/ folder.")
    kind: str = Field(description="File type by extension: docx, xlsx, pptx, eml, pdf, png, jpg, tiff, txt, md, html.")
    sha256: str = Field(description="Hash of the raw file bytes (the conversion cache key).")
    text: str
    size_bytes: int = 0
    pages: list[PageInfo] = Field(default_factory=list, description="PDF pages / image frames (empty for other kinds).")
    warnings: list[str] = Field(default_factory=list, description="Readable despite these (a damaged file).")


class Task(BaseModel):
    """One unit of legal work, loaded from tasks/<area>/<task>[/<scenario>]/task.json."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Path under tasks/, e.g. real-estate/extract-psa-key-terms/scenario-01.")
    area: str = Field(description="First path component of the id: the practice area.")
    title: str
    instructions: str
    criteria: list[Criterion]
    deliverables: dict[str, str] = Field(description="Deliverable name -> expected filename.")
    work_type: str | None = None
    tags: list[str] = Field(default_factory=list)
    documents: list[SourceDocument] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict, description="Unknown task.json fields, kept.")

    @field_validator("criteria")
    @classmethod
    def _unique_criterion_ids(cls, value: list[Criterion]) -> list[Criterion]:
        seen: set[str] = set()
        for c in value:
            if c.id in seen:
                raise ValueError(f"duplicate criterion id {c.id!r}")
            seen.add(c.id)
        return value

    def content_hash(self) -> str:
        """Hash of everything a judge sees of this task (instructions, criteria, document bytes)."""
        h = hashlib.sha256()
        h.update(self.id.encode())
        h.update(self.instructions.encode())
        for c in self.criteria:
            h.update(f"\0{c.id}\0{c.title}\0{c.match_criteria}\0{c.deliverables}".encode())
        for d in sorted(self.documents, key=lambda d: d.name):
            h.update(f"\0{d.name}\0{d.sha256}".encode())
        return h.hexdigest()

    def criterion_deliverables(self, criterion: Criterion) -> list[str]:
        """The deliverable names a criterion reads: its own list, or all of the task's."""
        return list(criterion.deliverables) if criterion.deliverables else list(self.deliverables)


class Deliverable(BaseModel):
    """One file of work product. A missing deliverable is represented with `missing=True`, text ''."""

    model_config = ConfigDict(frozen=True)

    name: str
    filename: str | None = None
    text: str = ""
    sha256: str = ""
    missing: bool = False

    @model_validator(mode="after")
    def _fill_hash(self) -> Deliverable:
        if not self.sha256:
            object.__setattr__(self, "sha256", sha256_text(self.text))
        return self


class Submission(BaseModel):
    """The work product of one evaluated system for one task."""

    model_config = ConfigDict(frozen=True)

    system: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    deliverables: dict[str, Deliverable]
    origin: str = Field(default="", description="Where it was loaded from (folder or manifest:line).")

    @property
    def id(self) -> str:
        """Identity of a submission inside a run: system + task id."""
        return f"{self.system}::{self.task_id}"

    def content_hash(self) -> str:
        """Hash of the deliverables' names and texts: a changed submission is graded again."""
        h = hashlib.sha256()
        for name in sorted(self.deliverables):
            h.update(f"\0{name}\0{self.deliverables[name].sha256}".encode())
        return h.hexdigest()


class Rejection(BaseModel):
    """An input the loaders refused, with the file and an actionable reason."""

    file: str = Field(description='The file (or folder / manifest line) refused.')
    reason: str = Field(description='Why, in words a user can act on.')
    system: str | None = Field(default=None, description='Evaluated system, when known.')
    task_id: str | None = Field(default=None, description='Task id, when known.')

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"


# --------------------------------------------------------------------------------------------
# What judges answer (structured-output schemas sent to the vendors)
# --------------------------------------------------------------------------------------------

def _without_defaults(schema: dict[str, Any]) -> None:
    """Drop `default` from every property of an answer schema (applied per model, nested ones too).

    Why: these schemas are sent to the vendors' strict structured outputs, and `default` is a
    keyword some strict deployments refuse. The defaults stay on the Python side, where parsing an
    answer uses them; the schema (and so each request's `answer_schema` hash, and its identity) no
    longer carries them.
    """
    for prop in schema.get("properties", {}).values():
        prop.pop("default", None)


class _Answer(BaseModel):
    """Base of the answer models sent as structured-output schemas: no `default` in their JSON schema."""

    model_config = ConfigDict(json_schema_extra=_without_defaults)


VerdictValue = Literal["pass", "fail"]
Category = Literal["contradiction", "fabricated_source", "unsupported_specific"]
Materiality = Literal["material", "minor"]
FlagStatus = Literal["confirmed", "rejected", "merged"]


class RubricAnswer(_Answer):
    """A judge's answer on one criterion."""

    verdict: VerdictValue
    reasoning: str


class DetectedFlag(_Answer):
    """Stage 1: one suspected hallucination."""

    span: str = Field(description="The claim, verbatim from the deliverable.")
    deliverable: str = Field(description="Name of the deliverable it is in.")
    location: str = Field(description="Where in the deliverable (section, paragraph).")
    category: Category
    evidence_document: str | None = Field(default=None, description="Source document, if any.")
    evidence_passage: str | None = Field(default=None, description="Source passage, or None if absent.")
    evidence_page: str | None = Field(
        default=None, description='Page of the passage as its heading names it ("Page 3"), if the document has pages.'
    )
    explanation: str = ""


class DetectionAnswer(_Answer):
    """Stage 1 answer: the flags raised for one submission."""

    flags: list[DetectedFlag]


class FlagDecision(_Answer):
    """Stage 2: the verdict on one flag."""

    flag_index: int = Field(description="Index of the flag in the Stage 1 list.")
    status: FlagStatus
    merged_into: int | None = Field(default=None, description="For merged: the index kept.")
    category: Category | None = None
    materiality: Materiality | None = Field(default=None, description="Required when confirmed.")
    rationale: str = ""


class VerificationAnswer(_Answer):
    """Stage 2 answer: one decision per Stage 1 flag."""

    decisions: list[FlagDecision]


class PreflightAnswer(_Answer):
    """The minimal structured answer a preflight call asks for."""

    ok: bool


# --------------------------------------------------------------------------------------------
# Raw observations (one row each in the Parquet tables)
# --------------------------------------------------------------------------------------------

Purpose = Literal["rubric", "detect", "verify", "preflight"]
CallOutcome = Literal["ok", "rate_limited", "transient", "timeout", "bad_output", "fatal", "cost_cap", "truncated", "lost"]
SubmissionStatus = Literal["complete", "incomplete", "too_long"]


class RowIdentity(BaseModel):
    """The identity columns that start every row of every table: which grading of which submission.

    Every row model forbids unknown fields: a misspelled column is an error where the row is built,
    never a value silently dropped in favour of the field's default.
    """

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(description='Run that produced the row.')
    grading_id: str = Field(description='One grading of one submission (a resumed incomplete submission gets a new one).')
    submission_id: str = Field(description='`<system>::<task_id>`.')
    system: str = Field(description="Evaluated system (the folder name under the results root, or the manifest's system).")
    task_id: str = Field(description='Task id: its path under tasks/.')


class CallRow(RowIdentity):
    """One logical judge call (after retries): what was asked, what it cost, what came back.

    Calls are per vendor request, so they carry the identity without the practice area.
    """

    request_hash: str = Field(description='Semantic hash of the request (vendor, model, settings, template, inputs); resume and --reuse match on it.')
    vendor: str = Field(description='Configured vendor name (judge or auditor entry).')
    family: str = Field(description='Model family of the vendor.')
    model: str = Field(description='Model name sent to the vendor.')
    purpose: Purpose = Field(description='rubric | detect | verify | preflight.')
    criterion_id: str | None = Field(default=None, description='Criterion graded (rubric calls only).')
    outcome: CallOutcome = Field(description='ok, or the final failure class: rate_limited | transient | timeout | bad_output | fatal | cost_cap (not sent: the run hit --max-cost); or truncated: one paid attempt whose answer stopped at its output-token cap (max_output_tokens) and was retried once with a larger cap — the retry is the row of the same request_hash and grading_id that started after it, whose answer is the verdict (a second stop there is a final bad_output); never served by reuse, so a resumed run neither pays it again nor loses the retry; or lost: the request went out in a batch (batch_id) that the vendor no longer has, and was sent again — if the vendor had processed that batch, the request was paid twice, and what the lost attempt cost is on the vendor\'s bill, not here (0 tokens, 0 USD: its answer and usage are gone); the row after it of the same request_hash and grading_id is the answer. A `--detach` pass records each call still in a batch as `transient` with 0 attempts, 0 USD and an error naming the batch: a placeholder of an incomplete grading, superseded by the collected row.')
    error: str | None = Field(default=None, description='Sanitised failure message (never a key).')
    attempts: int = Field(default=1, description='HTTP/gRPC attempts made for this logical call (0 when reused).')
    rate_limited: int = Field(default=0, description='429 / RESOURCE_EXHAUSTED answers seen during the call.')
    input_tokens: int = Field(default=0, description='Input tokens billed (including cached ones).')
    cached_input_tokens: int = Field(default=0, description="Input tokens served from the vendor's prompt cache.")
    output_tokens: int = Field(default=0, description='Output tokens billed.')
    reasoning_tokens: int = Field(default=0, description='Reasoning tokens (part of output) when the vendor reports them.')
    max_output_tokens: int | None = Field(default=None, description='The output-token cap (reasoning included) the attempts of this row were sent with: the sized cap (evalcore/vendors/output_cap.py), doubled for the retry of a truncated attempt; null when nothing was sent (reused, cost_cap) or in runs before the column.')
    cache_write_tokens: int = Field(default=0, description="Input tokens written to the vendor's prompt cache (part of input_tokens): Anthropic's cache_creation_input_tokens, OpenAI's cache_write_tokens; 0 for xAI, which reports none.")
    cache_write_usd: float = Field(default=0.0, description='The part of cost_usd paid for those writes, at the vendor\'s cache-write price (price.cache_write x input: Anthropic 1.25x); 0 when reused.')
    cost_usd: float = Field(default=0.0, description='USD paid in this run (0 when reused); vendor-reported cost when available.')
    latency_s: float = Field(default=0.0, description='ended_at − started_at: the logical call, retries and backoff included (batch mode: the batches it went into); 0 when reused.')
    request_id: str | None = Field(default=None, description="The vendor's request id (x-request-id / request-id), for support tickets.")
    reused_from: str | None = Field(default=None, description="Run id whose paid call was reused.")
    batch_id: str | None = Field(default=None, description="Vendor batch that answered the call (batch mode); null online.")
    offline: bool = Field(default=False, description='True when the answer came from the offline heuristics, not a model.')
    response_json: str | None = Field(default=None, description='The parsed answer as JSON: what reuse serves and what every score is derived from.')
    started_at: float = Field(default=0.0, description='Unix time its first attempt was sent (batch mode: its first batch was submitted), as the adapter (batch journal) recorded it. Reused: when this run served the stored answer (the original times are in the reused_from run). Failed (outcome not ok): the failure carries no span, so when it was recorded (preflight: when the check began).')
    ended_at: float = Field(default=0.0, description='Unix time its last attempt answered (batch mode: its last batch ended). Reused: = started_at. Failed: when the failure was recorded.')


class GradingRow(RowIdentity):
    """The identity columns of every verdict, flag and submission row: the call identity plus the area."""

    area: str = Field(description='Practice area: first component of the task id.')


class VerdictRow(GradingRow):
    """One judge's verdict on one criterion of one submission (or its abstention)."""

    criterion_id: str = Field(description='Criterion graded (rubric calls only).')
    judge: str = Field(description="Vendor name of the judge (openai, xai, anthropic, ...).")
    judge_family: str = Field(description='Model family of the judge (for self-family preference).')
    judge_model: str = Field(description='Model name of the judge.')
    verdict: Literal["pass", "fail", "abstain"] = Field(description='pass | fail | abstain (the judge gave no verdict after its retries).')
    reasoning: str = Field(default="", description="The judge's short reasoning.")
    abstain_reason: str | None = Field(default=None, description='Why the judge abstained.')
    request_hash: str = Field(description='Semantic hash of the request (vendor, model, settings, template, inputs); resume and --reuse match on it.')


class FlagRow(GradingRow):
    """One hallucination flag: Stage 1 as raised, with the Stage 2 decision filled in."""

    flag_index: int = Field(description='Index of the flag in the Stage 1 list.')
    deliverable: str = Field(description='Deliverable the span is in.')
    span: str = Field(description='The claim, verbatim from the deliverable.')
    location: str = Field(description='Where in the deliverable.')
    category: Category = Field(description="contradiction | fabricated_source | unsupported_specific (Stage 2's if it reclassified).")
    evidence_document: str | None = Field(default=None, description='Source document of the evidence, if any.')
    evidence_passage: str | None = Field(default=None, description='Source passage contradicted or misquoted; null when the sources have nothing on it.')
    evidence_page: str | None = Field(default=None, description="Page of the evidence in its document ('Page 3', 'Sheet: Rent roll', 'Slide 2'); null when it has no pages.")
    explanation: str = Field(default="", description="Stage 1's explanation.")
    origin: Literal["auditor", "grounding"] = Field(default="auditor", description='grounding (proposed by the deterministic checks) | auditor (raised by the model alone).')
    status: Literal["confirmed", "rejected", "merged"] = Field(description='confirmed | rejected | merged (Stage 2 decision).')
    merged_into: int | None = Field(default=None, description='For merged flags: the index of the flag kept.')
    materiality: Materiality | None = Field(default=None, description='material | minor, for confirmed flags.')
    rationale: str = Field(default="", description="Stage 2's rationale.")
    auditor: str = Field(description='Auditor vendor name.')
    auditor_model: str = Field(description='Auditor model.')


class SubmissionRow(GradingRow):
    """One graded submission: identity, status and the scores derived from its verdicts and flags."""

    content_hash: str = Field(description='Hash of the deliverables: a changed submission is graded again.')
    status: SubmissionStatus = Field(description='complete | incomplete (an abstention or a failed audit; retried on resume) | too_long.')
    status_reason: str | None = Field(default=None, description='Why incomplete (every abstention, with its cause) or too long (the numbers).')
    n_criteria: int = Field(description='Criteria in the task.')
    task_score: float | None = Field(default=None, description='(Σ_j all_pass_j)/3 ∈ {0, ⅓, ⅔, 1}.')
    all_pass_judges: int | None = Field(default=None, description='Judges that passed every criterion.')
    criterion_pass_rate: float | None = Field(default=None, description='Mean of the 3 × N verdicts.')
    near_pass_1: float | None = Field(default=None, description='Share of judges failing at most 1 criterion.')
    near_pass_2: float | None = Field(default=None, description='Share of judges failing at most 2 criteria.')
    audited: bool = Field(default=False, description='Stage B ran (task score > 0, or --audit always).')
    material_flags: int = Field(default=0, description='Confirmed material hallucinations.')
    minor_flags: int = Field(default=0, description='Confirmed minor hallucinations (never change a score).')
    gated: bool = Field(default=False, description='The gate zeroed a positive score.')
    hc_score: float | None = Field(default=None, description="Hallucination-controlled score.")
    cost_usd: float = Field(default=0.0, description='USD paid in this run (0 when reused); vendor-reported cost when available.')
    graded_at: float = Field(default=0.0, description='Unix time the grading finished (the latest grading of a submission is current).')
