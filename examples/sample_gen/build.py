"""Assembles the sample benchmark from the content modules, self-checks it and writes it out.

Layout written under the output folder:
  tasks/<area>/<task>[/<scenario>]/task.json + documents/<files>
  submissions/<system>/<task-id>/<deliverable files>
  ground_truth.json
  benchmark.json        the benchmark's name and version (`evalcore.benchmark.identity`)

Why self-checks at build time: the sample is the yardstick for the judges and the grounding
checks; a verdict that disagrees with its memo, or a "quote" that is secretly correct, would make
every later measurement wrong. The build refuses to write such a sample.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from . import commercial, corporate_ma, employment, litigation, real_estate
from .markup import contains, norm, quoted_parts, strip_marks
from .model import SYSTEMS, Crit, Document, TaskSpec
from .render import document_text, write_document

MODULES = (real_estate, employment, corporate_ma, commercial, litigation)


def all_tasks() -> list[TaskSpec]:
    """Every sample task, in a stable order."""
    return [task for module in MODULES for task in module.TASKS]


class SampleError(ValueError):
    """The sample's content is inconsistent (names the task, system and problem)."""


def _fmt(doc: Document) -> str:
    return doc.name.rsplit(".", 1)[-1].lower()


def criterion_passes(crit: Crit, text: str) -> bool:
    """The evidence rule: all evidence groups present, no forbidden string present.

    An empty deliverable satisfies nothing, not even "does not mention X" (a missing deliverable
    fails what it cannot satisfy, and an absent letter cannot be a compliant letter).
    """
    if not text.strip():
        return False
    for group in crit.evidence:
        alternatives = (group,) if isinstance(group, str) else group
        if not any(contains(text, alt) for alt in alternatives):
            return False
    return not any(contains(text, bad) for bad in crit.absent)


def _check_task_shape(task: TaskSpec) -> None:
    where = task.id
    if not 10 <= len(task.criteria) <= 25:
        raise SampleError(f"{where}: {len(task.criteria)} criteria (need 10-25)")
    if len(task.documents) < 4:
        raise SampleError(f"{where}: {len(task.documents)} documents (need >= 4)")
    if len({_fmt(d) for d in task.documents}) < 3:
        raise SampleError(f"{where}: fewer than 3 document formats")
    if not any(d.distractor for d in task.documents):
        raise SampleError(f"{where}: no distractor document")
    names = [d.name for d in task.documents]
    if len(set(names)) != len(names):
        raise SampleError(f"{where}: duplicate document names")
    systems = [s.system for s in task.submissions]
    if sorted(systems) != sorted(SYSTEMS):
        raise SampleError(f"{where}: submissions from {systems}, expected one each from {SYSTEMS}")
    for crit in task.criteria:
        if "PASS if" not in crit.match or "FAIL if" not in crit.match:
            raise SampleError(f"{where}: criterion {crit.title!r} is not written PASS if ... FAIL if ...")
        for d in crit.deliverables or ():
            if d not in task.deliverables:
                raise SampleError(f"{where}: criterion {crit.title!r} names unknown deliverable {d!r}")
        if not crit.evidence and not crit.absent:
            raise SampleError(f"{where}: criterion {crit.title!r} has no evidence rule")


def _check_grounding(task: TaskSpec, texts: dict[str, str]) -> None:
    """Grounded spans occur in their source; fabricated quotes occur in no source."""
    all_sources = " \n ".join(texts.values())
    for key, s in task.supported.items():
        if s.source_document not in texts:
            raise SampleError(f"{task.id}: supported {key!r} cites unknown document {s.source_document!r}")
        if norm(s.source_passage) not in norm(texts[s.source_document]):
            raise SampleError(f"{task.id}: supported {key!r}: passage not found in {s.source_document}")
    for key, h in task.hallucinations.items():
        if h.source_document is not None and h.source_document not in texts:
            raise SampleError(f"{task.id}: hallucination {key!r} cites unknown document {h.source_document!r}")
        if h.source_passage is not None:
            doc = texts.get(h.source_document or "", all_sources)
            if norm(h.source_passage) not in norm(doc):
                raise SampleError(f"{task.id}: hallucination {key!r}: true passage not in {h.source_document}")


def _check_quote_spans(task: TaskSpec, texts: dict[str, str], kind: str, key: str, span: str) -> None:
    everything = norm(" \n ".join(texts.values()))
    if kind == "s" and task.supported[key].kind == "quote":
        for part in quoted_parts(span):
            if norm(part) not in norm(texts[task.supported[key].source_document]):
                raise SampleError(f"{task.id}: supported quote {key!r} is not verbatim in its source: {part!r}")
    if kind == "h" and task.hallucinations[key].kind == "quote":
        for part in quoted_parts(span):
            if norm(part) in everything:
                raise SampleError(f"{task.id}: hallucinated quote {key!r} actually occurs in the sources")


def build_task(task: TaskSpec) -> dict[str, Any]:
    """Check one task and return its ground-truth fragments (verdicts and annotated spans)."""
    _check_task_shape(task)
    texts = {d.name: document_text(d) for d in task.documents}
    _check_grounding(task, texts)
    ids = task.criterion_ids()
    out: dict[str, Any] = {
        "verdicts": {},
        "hallucinations": [],
        "general_knowledge": [],
        "supported": [],
        "deliverable_texts": {},
    }
    used: set[tuple[str, str]] = set()
    for sub in task.submissions:
        if set(sub.texts) != set(task.deliverables):
            raise SampleError(f"{task.id}/{sub.system}: deliverables {sorted(sub.texts)} != {sorted(task.deliverables)}")
        plain: dict[str, str] = {}
        for dname, marked in sub.texts.items():
            text, marks = strip_marks(marked)
            plain[dname] = text
            for mark in marks:
                _record_mark(task, sub.system, dname, text, mark.kind, mark.key, mark.span, out, texts)
                used.add((mark.kind, mark.key))
        out["deliverable_texts"][sub.system] = plain
        verdicts: dict[str, str] = {}
        for cid, crit in zip(ids, task.criteria, strict=True):
            names = list(crit.deliverables) if crit.deliverables else list(task.deliverables)
            joined = "\n\n".join(plain[n] for n in names)
            verdicts[cid] = "pass" if criterion_passes(crit, joined) else "fail"
        derived_fails = {cid for cid, v in verdicts.items() if v == "fail"}
        unknown = set(sub.fails) - set(ids)
        if unknown:
            raise SampleError(f"{task.id}/{sub.system}: declared fails name unknown criteria {sorted(unknown)}")
        if derived_fails != set(sub.fails):
            raise SampleError(
                f"{task.id}/{sub.system}: evidence rule fails {sorted(derived_fails)}, "
                f"author declared {sorted(sub.fails)}"
            )
        out["verdicts"][sub.system] = verdicts
    declared = {("h", k) for k in task.hallucinations} | {("s", k) for k in task.supported}
    declared |= {("g", k) for k in task.general}
    if declared - used:
        raise SampleError(f"{task.id}: annotations defined but never used: {sorted(declared - used)}")
    return out


def _record_mark(
    task: TaskSpec,
    system: str,
    dname: str,
    text: str,
    kind: str,
    key: str,
    span: str,
    out: dict[str, Any],
    texts: dict[str, str],
) -> None:
    base = {"system": system, "task_id": task.id, "deliverable": dname, "span": span}
    if kind == "h":
        if key not in task.hallucinations:
            raise SampleError(f"{task.id}/{system}: unknown hallucination key {key!r}")
        if text.count(span) != 1:
            raise SampleError(f"{task.id}/{system}: hallucination span {span!r} occurs {text.count(span)} times")
        h = task.hallucinations[key]
        out["hallucinations"].append(
            base
            | {
                "category": h.category,
                "materiality": h.materiality,
                "kind": h.kind,
                "source_document": h.source_document,
                "source_passage": h.source_passage,
                "note": h.note,
            }
        )
    elif kind == "s":
        if key not in task.supported:
            raise SampleError(f"{task.id}/{system}: unknown supported key {key!r}")
        s = task.supported[key]
        crit_ids = [
            cid
            for cid, crit in zip(task.criterion_ids(), task.criteria, strict=True)
            if _span_feeds_criterion(span, crit)
        ]
        out["supported"].append(
            base
            | {
                "kind": s.kind,
                "source_document": s.source_document,
                "source_passage": s.source_passage,
                "note": s.note,
                "if_altered": s.if_altered,
                "derived": s.derived,
                "criteria": crit_ids,
            }
        )
    else:
        if key not in task.general:
            raise SampleError(f"{task.id}/{system}: unknown general-knowledge key {key!r}")
        out["general_knowledge"].append(base | {"note": task.general[key].note})
    _check_quote_spans(task, texts, kind, key, span)


def _span_feeds_criterion(span: str, crit: Crit) -> bool:
    """Whether a criterion's evidence could depend on this span (so altering it may flip a verdict)."""
    for group in crit.evidence:
        alternatives = (group,) if isinstance(group, str) else group
        if any(contains(span, alt) for alt in alternatives):
            return True
    return False


def _task_json(task: TaskSpec) -> dict[str, Any]:
    criteria = []
    for cid, crit in zip(task.criterion_ids(), task.criteria, strict=True):
        item: dict[str, Any] = {"id": cid, "title": crit.title, "match_criteria": crit.match}
        if crit.deliverables:
            item["deliverables"] = list(crit.deliverables)
        criteria.append(item)
    doc: dict[str, Any] = {
        "title": task.title,
        "instructions": task.instructions,
        "criteria": criteria,
        "deliverables": dict(task.deliverables),
    }
    if task.work_type:
        doc["work_type"] = task.work_type
    if task.tags:
        doc["tags"] = list(task.tags)
    return doc


def _dump(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


SAMPLE_IDENTITY = {"name": "tribunal-sample", "version": "1.0"}
"""The sample's identity: runs of it rank together in a release only while name and version agree."""


def build_sample(out_dir: Path, tasks: Sequence[TaskSpec] | None = None) -> dict[str, Any]:
    """Check every task, then (re)write tasks/, submissions/ and ground_truth.json under out_dir."""
    tasks = list(tasks) if tasks is not None else all_tasks()
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise SampleError("duplicate task ids")
    fragments = {t.id: build_task(t) for t in tasks}  # every check before any write

    for sub in ("tasks", "submissions"):
        shutil.rmtree(out_dir / sub, ignore_errors=True)
    gt: dict[str, Any] = {
        "benchmark": "sample",
        "systems": list(SYSTEMS),
        "verdicts": {s: {} for s in SYSTEMS},
        "hallucinations": [],
        "general_knowledge": [],
        "supported": [],
        "distractors": {},
    }
    for task in tasks:
        folder = out_dir / "tasks" / task.id
        _dump(folder / "task.json", _task_json(task))
        for document in task.documents:
            write_document(document, folder / "documents")
        frag = fragments[task.id]
        for system, plain in frag["deliverable_texts"].items():
            for dname, text in plain.items():
                path = out_dir / "submissions" / system / task.id / task.deliverables[dname]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            gt["verdicts"][system][task.id] = frag["verdicts"][system]
        for key in ("hallucinations", "general_knowledge", "supported"):
            gt[key].extend(frag[key])
        gt["distractors"][task.id] = [d.name for d in task.documents if d.distractor]
    _dump(out_dir / "ground_truth.json", gt)
    _dump(out_dir / "benchmark.json", SAMPLE_IDENTITY)
    return gt


def summarise(gt: dict[str, Any], tasks: Iterable[TaskSpec]) -> str:
    """A few lines of figures for the console."""
    tasks = list(tasks)
    lines = [
        f"tasks: {len(tasks)} in {len({t.area for t in tasks})} areas",
        f"documents: {sum(len(t.documents) for t in tasks)}",
        f"criteria: {sum(len(t.criteria) for t in tasks)}",
        f"systems: {', '.join(gt['systems'])}",
        f"hallucinations: {len(gt['hallucinations'])}, general-knowledge passages: "
        f"{len(gt['general_knowledge'])}, grounded spans: {len(gt['supported'])}",
    ]
    return "\n".join(lines)
