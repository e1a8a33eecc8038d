"""Expert labels: what a panel and an auditor are calibrated against (`evalcore.results.calibrate`).

A labels file says, for a set of submissions, the correct verdict on criteria and the real
hallucinations (span, category, materiality). Three forms are read, all to the same `Labels`:

* **JSONL** — one object per line, with a `type`:
  ``{"type": "verdict", "system", "task_id", "criterion_id", "verdict": "pass"|"fail"}`` or
  ``{"type": "hallucination", "system", "task_id", "deliverable", "span", "category",
  "materiality"}`` (`category`: contradiction | fabricated_source | unsupported_specific;
  `materiality`: material | minor; `span`: the claim as it reads in the deliverable).
* **Parquet** — the same objects as rows (the columns of both kinds; unused ones null).
* **JSON** — a ground-truth file (`doubles.synth.ground_truth.GroundTruth`, e.g.
  ``examples/sample/ground_truth.json``): ``verdicts`` nested system → task → criterion →
  verdict, and a ``hallucinations`` list with the fields above (extra fields are ignored).

A submission is *labelled* when it has at least one verdict or hallucination label; a labelled
submission with no hallucination label is labelled as having none. Verdicts may cover only some
criteria: calibration compares what is labelled and nothing else.

Labels made from the run's review decisions (`jobs.per_run.calibrate.labels_from_adjudications`)
are not *exhaustive*: an expert reviewed some flags, not every claim, so a flag nobody reviewed
is neither right nor wrong and is not scored. Such labels name the flag they were made on
(`flag_index`: matched by index in the current grading, not by span), and an overturned flag is a
`FalseFlagLabel` — the claim is not a hallucination, so the auditor confirming it was a false
positive (the most informative label there is).

Span matching (`spans_match`) decides whether a flag and a labelled hallucination are the same
claim: same submission and deliverable, and the spans overlap — one contains the other, or they
share a run of text at least half as long as the shorter one (whitespace and case ignored). The
run's tables hold spans, not offsets, so overlap is judged on the text itself.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Mapping
from difflib import SequenceMatcher
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalcore.errors import InputError
from evalcore.schema import Category, Materiality, VerdictValue
from evalcore.storage import fs

SubmissionKey = tuple[str, str]
"""(system, task_id)."""


class VerdictLabel(BaseModel):
    """The expert's verdict on one criterion of one submission."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    system: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    criterion_id: str = Field(min_length=1)
    verdict: VerdictValue


class HallucinationLabel(BaseModel):
    """A real hallucination the expert found: what a correct audit confirms."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    system: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    deliverable: str = Field(min_length=1, description="Deliverable name (the task's deliverables key).")
    span: str = Field(min_length=1, description="The claim as it reads in the deliverable.")
    category: Category
    materiality: Materiality
    flag_index: int | None = Field(
        default=None, ge=0, description="The reviewed flag this label was made on (review labels only): matched by "
        "its index in the submission's current grading, not by span.")


class FalseFlagLabel(BaseModel):
    """A flag an expert overturned: the claim is not a hallucination (confirming it was a false positive)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    system: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    flag_index: int = Field(ge=0, description="The overturned flag's index in the submission's current grading.")


class Labels(BaseModel):
    """Every expert label of one file (or of one run's review decisions)."""

    source: str = Field(description="Where the labels were read from.")
    verdicts: list[VerdictLabel] = Field(default_factory=list)
    hallucinations: list[HallucinationLabel] = Field(default_factory=list)
    false_flags: list[FalseFlagLabel] = Field(
        default_factory=list, description="Flags the experts overturned (review labels only).")
    exhaustive: bool = Field(
        default=True, description="Every hallucination of a labelled submission is labelled (a labels file): a "
        "confirmed flag matching no label is a false positive. False for review decisions: only the reviewed "
        "flags are scored.")

    def submissions(self) -> list[SubmissionKey]:
        """Every labelled (system, task_id), sorted."""
        keys = {(v.system, v.task_id) for v in self.verdicts} | {(h.system, h.task_id) for h in self.hallucinations}
        keys |= {(f.system, f.task_id) for f in self.false_flags}
        return sorted(keys)

    def rows(self) -> list[dict[str, Any]]:
        """The labels as JSONL/Parquet rows (the inverse of `load_labels`, for the file kinds)."""
        out: list[dict[str, Any]] = [{"type": "verdict", **v.model_dump()} for v in self.verdicts]
        out += [{"type": "hallucination", **h.model_dump(exclude={"flag_index"})} for h in self.hallucinations]
        return out

    def to_table(self) -> pa.Table:
        """The labels as one arrow table (the Parquet form: every column of both kinds, unused ones null)."""
        return pa.Table.from_pylist(self.rows(), schema=LABELS_SCHEMA)


LABELS_SCHEMA = pa.schema([(name, pa.string()) for name in (
    "type", "system", "task_id", "criterion_id", "verdict", "deliverable", "span", "category", "materiality")])
"""Columns of a Parquet labels file."""


def labels_from_rows(source: str, rows: Iterable[tuple[str, Mapping[str, Any]]]) -> Labels:
    """Rows (each with where it came from, for errors) to Labels; the first bad row is named with its field."""
    verdicts: list[VerdictLabel] = []
    halls: list[HallucinationLabel] = []
    for where, row in rows:
        kind = row.get("type")
        model: type[VerdictLabel] | type[HallucinationLabel]
        if kind == "verdict":
            model = VerdictLabel
        elif kind == "hallucination":
            model = HallucinationLabel
        else:
            raise InputError(where, f"`type` must be verdict or hallucination, not {kind!r}")
        try:
            item = model.model_validate({k: v for k, v in row.items() if v is not None})
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(x) for x in first["loc"]) or "(row)"
            raise InputError(where, f"{kind} label, field {field}: {first['msg']}") from None
        if isinstance(item, VerdictLabel):
            verdicts.append(item)
        else:
            halls.append(item)
    return Labels(source=source, verdicts=verdicts, hallucinations=halls)


def _ground_truth_rows(source: str, data: Any) -> Iterable[tuple[str, Mapping[str, Any]]]:
    if not isinstance(data, Mapping) or not isinstance(data.get("verdicts"), Mapping):
        raise InputError(source, "a JSON labels file is a ground-truth object with `verdicts` (system -> task -> criterion)")
    for system, tasks in data["verdicts"].items():
        if not isinstance(tasks, Mapping):
            raise InputError(source, f"verdicts.{system}: expected task_id -> criterion -> verdict")
        for task_id, crits in tasks.items():
            if not isinstance(crits, Mapping):
                raise InputError(source, f"verdicts.{system}.{task_id}: expected criterion -> verdict")
            for criterion_id, verdict in crits.items():
                yield (f"{source}: verdicts.{system}.{task_id}.{criterion_id}",
                       {"type": "verdict", "system": system, "task_id": task_id,
                        "criterion_id": criterion_id, "verdict": verdict})
    for i, h in enumerate(data.get("hallucinations") or []):
        yield f"{source}: hallucinations[{i}]", {"type": "hallucination", **(h if isinstance(h, Mapping) else {})}


def load_labels(uri: str, endpoint_override: str | None = None) -> Labels:
    """Read a labels file (.jsonl, .parquet, or a ground-truth .json; local or s3://)."""
    try:
        data = fs.read_bytes(uri, endpoint_override)
    except FileNotFoundError:
        raise InputError(uri, "labels file not found") from None
    except OSError as exc:
        raise InputError(uri, f"cannot read the labels: {exc}") from None
    lower = uri.lower()
    if lower.endswith(".parquet"):
        try:
            table = pq.read_table(io.BytesIO(data))
        except (OSError, pa.ArrowInvalid) as exc:
            raise InputError(uri, f"not a readable Parquet file: {exc}") from None
        return labels_from_rows(uri, ((f"{uri}: row {i + 1}", r) for i, r in enumerate(table.to_pylist())))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(uri, "labels must be UTF-8 text (or .parquet)") from None
    if lower.endswith(".jsonl"):
        def lines() -> Iterable[tuple[str, Mapping[str, Any]]]:
            for n, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{uri}:{n}", f"invalid JSON at column {exc.colno}: {exc.msg}") from None
                if not isinstance(row, dict):
                    raise InputError(f"{uri}:{n}", "each line must be a JSON object")
                yield f"{uri}:{n}", row
        return labels_from_rows(uri, lines())
    if lower.endswith(".json"):
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(uri, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
        return labels_from_rows(uri, _ground_truth_rows(uri, raw))
    raise InputError(uri, "labels must be .jsonl, .parquet, or a ground-truth .json")


# --------------------------------------------------------------------------------------------
# Span matching
# --------------------------------------------------------------------------------------------

_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip().casefold()


def label_matches_flag(label: HallucinationLabel | FalseFlagLabel, flag: Mapping[str, Any]) -> bool:
    """Whether a flag row (of the label's submission: `flag_index`, `deliverable`, `span`) is the
    labelled claim: the very flag a review label was made on, else the same deliverable and
    overlapping spans (`spans_match`)."""
    if label.flag_index is not None:
        return bool(flag["flag_index"] == label.flag_index)
    assert isinstance(label, HallucinationLabel)  # a false-flag label always names its flag
    return bool(flag["deliverable"] == label.deliverable and spans_match(str(flag["span"]), label.span))


def spans_match(a: str, b: str) -> bool:
    """Whether two spans of the same deliverable are the same claim (see the module docstring)."""
    x, y = _norm(a), _norm(b)
    if not x or not y:
        return False
    if x in y or y in x:
        return True
    shorter = min(len(x), len(y))
    m = SequenceMatcher(None, x, y, autojunk=False).find_longest_match(0, len(x), 0, len(y))
    return m.size >= max(8, shorter / 2)

