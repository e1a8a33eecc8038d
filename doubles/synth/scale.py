"""Synthetic scale-up: thousands of submissions with known ground truth, derived from the sample.

Why one module: the perturbations and the ground truth they imply are written side by side, so a planted change and its recorded effect stay in step.

Scale tests and benchmarks need many submissions whose correct scores are known. Each synthetic
submission copies one sample submission of a task (the "base") under a new system name
(`synth-0001`, ...) and applies one perturbation whose effect on the ground truth is certain:

* `clone`   - unchanged text; verdicts, hallucinations and spans carry over;
* `mutate`  - a grounded span that no criterion depends on (ground truth lists which criteria a
              supported span feeds) is altered: a date shifted, an amount or number changed, a
              party renamed, a quotation altered by a word. It becomes a planted hallucination
              (contradiction, or fabricated_source for quotes) with the span's `if_altered`
              materiality; verdicts are unchanged because no criterion reads that span;
* `insert`  - a sentence with a fabricated reference, quotation or unsupported specific is
              appended; verdicts are unchanged (the sentences avoid every rubric term);
* `empty`   - every deliverable is emptied: every criterion fails, no spans remain.

Nothing else in the text changes, so every other span of the base stays exact. A mutation whose
new value the task's sources contain anyway (a date shifted onto another date of the file, an
amount that happens to exist) is redrawn, so every planted span is genuinely unsupported. The run
is a pure function of (sample, n, seed). Output: `results/<system>/<task-id>/<files>`, a
`manifest.jsonl` (`{system, task_id, deliverables: {name: path relative to the manifest}}`) and a
`ground_truth.json` in the same format as the sample's.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from doubles.synth.ground_truth import (
    GeneralKnowledge,
    GroundTruth,
    Hallucination,
    SupportedSpan,
    load_ground_truth,
    span_problems,
)
from evalcore.benchmark.documents import convert
from evalcore.errors import BenchmarkError, DocumentError

Operation = Literal["clone", "mutate", "insert", "empty"]
_OPERATIONS: tuple[Operation, ...] = ("clone", "mutate", "insert", "empty")
_WEIGHTS = (0.2, 0.4, 0.3, 0.1)

_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_MONTH_RE = "|".join(_MONTHS)
_DATE_MDY = re.compile(rf"\b({_MONTH_RE}) (\d{{1,2}}), (\d{{4}})\b")
_DATE_DMY = re.compile(rf"\b(\d{{1,2}}) ({_MONTH_RE}) (\d{{4}})\b")
_DATE_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_QUOTED = re.compile(r"[\u201c\"]([^\u201d\"]+)[\u201d\"]")

_WORD_SWAPS = {
    "shall": "may",
    "any": "every",
    "all": "some",
    "within": "after",
    "before": "after",
    "after": "before",
    "more": "less",
    "automatically": "only",
    "written": "oral",
    "prior": "subsequent",
    "not": "also",
    "each": "either",
}

_FAKE_PARTIES = (
    "Halvorsen Ridge Partners LLC",
    "Quillon Crest Holdings Inc.",
    "Marrow Bay Capital LP",
    "Estrada Vance Group Ltd.",
)

_FAKE_QUOTES = (
    "all notices shall be deemed received on the third business day after dispatch",
    "no amendment shall be effective unless countersigned by both general counsels",
    "time shall not be of the essence for any obligation under this agreement",
    "the parties waive any right to a jury trial in connection with this agreement",
)

# Appended sentences: (category, materiality, kind, template). They avoid rubric vocabulary so a
# criterion's verdict cannot change, and use 2018 dates and section numbers 40-59, which no sample
# document contains.
_INSERTS: tuple[tuple[str, str, str, str], ...] = (
    ("fabricated_source", "material", "reference",
     "This position is consistent with Section {sec} of the governing agreement, which the other side has not disputed."),
    ("fabricated_source", "material", "reference", "The side letter dated {date} confirms this position."),
    ("unsupported_specific", "material", "number",
     "The counterparty has already agreed in principle to a standstill of {days} days."),
    ("fabricated_source", "material", "quote", 'The agreement also states that "{quote}".'),
    ("unsupported_specific", "minor", "other", "The file index lists {count} documents."),
    ("unsupported_specific", "minor", "date", "The matter was opened internally on {date}."),
)


_T = TypeVar("_T", Hallucination, GeneralKnowledge, SupportedSpan)


_QUOTE_STYLE: dict[str, str | int | None] = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}


def _norm(text: str) -> str:
    text = text.translate(str.maketrans(_QUOTE_STYLE))
    return re.sub(r"\s+", " ", text).strip().lower()


@dataclass(frozen=True)
class _Sources:
    """What a task's source documents contain: normalised text, every date, every number."""

    text: str
    dates: frozenset[dt.date]
    numbers: frozenset[float]

    @classmethod
    def of(cls, folder: Path) -> _Sources:
        texts: list[str] = []
        if folder.is_dir():
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    try:
                        texts.append(convert(path.name, path.read_bytes()).text)
                    except DocumentError:
                        continue  # an unreadable source supports nothing
        joined = "\n".join(texts)
        return cls(_norm(joined), frozenset(_dates_in(joined)), frozenset(_numbers_in(joined)))

    def supports(self, span: str) -> bool:
        """Whether the altered span's value occurs in the sources in any spelling."""
        if _norm(span) in self.text:
            return True
        if any(d in self.dates for d in _dates_in(span)):
            return True
        return any(v in self.numbers for v in _numbers_in(span))


def _dates_in(text: str) -> list[dt.date]:
    found: list[dt.date] = []
    for m in _DATE_MDY.finditer(text):
        found.append(dt.date(int(m[3]), _MONTHS.index(m[1]) + 1, int(m[2])))
    for m in _DATE_DMY.finditer(text):
        found.append(dt.date(int(m[3]), _MONTHS.index(m[2]) + 1, int(m[1])))
    for m in _DATE_ISO.finditer(text):
        try:
            found.append(dt.date(int(m[1]), int(m[2]), int(m[3])))
        except ValueError:
            continue
    return found


def _numbers_in(text: str) -> list[float]:
    """Numbers with two or more digits, including "1.25 million" read as 1250000."""
    values: list[float] = []
    for m in re.finditer(r"(\d[\d,]*(?:\.\d+)?)(\s*million)?", text):
        digits = m.group(1).replace(",", "").rstrip(".")
        if len(digits.replace(".", "")) < 2:
            continue
        value = float(digits)
        values.append(round(value * 1_000_000 if m.group(2) else value, 2))
    return values


@dataclass(frozen=True)
class _Base:
    """One sample submission as the generator reads it."""

    system: str
    task_id: str
    texts: dict[str, str]


@dataclass
class _Draft:
    """A synthetic submission under construction."""

    texts: dict[str, str]
    verdicts: dict[str, str]
    hallucinations: list[Hallucination]
    general: list[GeneralKnowledge]
    supported: list[SupportedSpan]
    ops: list[str]


# -------------------------------------------------------------------- reading the sample


def _deliverable_files(sample_root: Path, task_id: str) -> dict[str, str]:
    """Deliverable name -> filename, read straight from task.json (map or list form)."""
    path = sample_root / "tasks" / task_id / "task.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise BenchmarkError(str(path), f"cannot read the task's deliverables: {exc}") from None
    value = data.get("deliverables")
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, list):
        return {Path(str(v)).stem: str(v) for v in value}
    raise BenchmarkError(str(path), "task.json has no 'deliverables' map or list")


def _read_bases(sample_root: Path, gt: GroundTruth) -> tuple[dict[str, dict[str, str]], list[_Base]]:
    files: dict[str, dict[str, str]] = {t: _deliverable_files(sample_root, t) for t in gt.task_ids()}
    bases: list[_Base] = []
    for system, task_id in gt.submissions():
        folder = sample_root / "submissions" / system / task_id
        texts: dict[str, str] = {}
        for name, filename in files[task_id].items():
            path = folder / filename
            texts[name] = path.read_text(encoding="utf-8") if path.is_file() else ""
        bases.append(_Base(system, task_id, texts))
    return files, bases


# -------------------------------------------------------------------- perturbations


def _shift_date(span: str, rng: random.Random) -> str | None:
    days = rng.choice((-1, 1)) * rng.randint(3, 19)
    m = _DATE_MDY.search(span)
    if m:
        d = dt.date(int(m[3]), _MONTHS.index(m[1]) + 1, int(m[2])) + dt.timedelta(days=days)
        return span[: m.start()] + f"{_MONTHS[d.month - 1]} {d.day}, {d.year}" + span[m.end() :]
    m = _DATE_DMY.search(span)
    if m:
        d = dt.date(int(m[3]), _MONTHS.index(m[2]) + 1, int(m[1])) + dt.timedelta(days=days)
        return span[: m.start()] + f"{d.day} {_MONTHS[d.month - 1]} {d.year}" + span[m.end() :]
    m = _DATE_ISO.search(span)
    if m:
        d = dt.date(int(m[1]), int(m[2]), int(m[3])) + dt.timedelta(days=days)
        return span[: m.start()] + d.isoformat() + span[m.end() :]
    return None


def _alter_number(span: str, rng: random.Random) -> str | None:
    matches = list(_NUMBER.finditer(span))
    if not matches:
        return None
    m = max(matches, key=lambda x: len(x.group()))
    raw = m.group()
    decimals = len(raw.split(".", 1)[1]) if "." in raw else 0
    value = float(raw.replace(",", ""))
    factor = rng.choice((1.07, 1.13, 0.91, 0.88, 1.25))
    new = value * factor
    text = f"{new:,.{decimals}f}" if "," in raw else f"{new:.{decimals}f}"
    if text == raw:
        return None
    return span[: m.start()] + text + span[m.end() :]


def _alter_quote(span: str, rng: random.Random) -> str | None:
    m = _QUOTED.search(span)
    if not m:
        return None
    inner = m.group(1)
    words = re.findall(r"[A-Za-z]+", inner)
    swappable = sorted({w for w in words if w.lower() in _WORD_SWAPS})
    if swappable:
        word = rng.choice(swappable)
        new_inner = re.sub(rf"\b{word}\b", _WORD_SWAPS[word.lower()], inner, count=1)
    else:
        long_words = [w for w in words if len(w) >= 4]
        if not long_words:
            return None
        word = rng.choice(long_words)
        new_inner = re.sub(rf"\b{word}\b", f"substantially {word}", inner, count=1)
    if new_inner == inner:
        return None
    return span[: m.start(1)] + new_inner + span[m.end(1) :]


def _alter_party(span: str, rng: random.Random) -> str | None:
    choices = [p for p in _FAKE_PARTIES if p not in span]
    return rng.choice(choices)


_MUTATORS: dict[str, Callable[[str, random.Random], str | None]] = {
    "date": _shift_date,
    "amount": _alter_number,
    "number": _alter_number,
    "quote": _alter_quote,
    "party": _alter_party,
}


def _overlaps(text: str, span: str, others: list[str]) -> bool:
    """Whether `span`'s single occurrence overlaps the occurrence of any other annotated span."""
    start = text.find(span)
    end = start + len(span)
    for other in others:
        pos = text.find(other)
        while pos != -1:
            if pos < end and start < pos + len(other):
                return True
            pos = text.find(other, pos + 1)
    return False


def _mutate(draft: _Draft, sources: _Sources, rng: random.Random) -> bool:
    """Alter up to two independent grounded spans; False when the base has none to alter."""
    candidates = [
        s
        for s in draft.supported
        if not s.criteria and s.kind in _MUTATORS and draft.texts[s.deliverable].count(s.span) == 1
    ]
    rng.shuffle(candidates)
    done = 0
    for s in candidates[: rng.randint(1, 2)]:
        text = draft.texts[s.deliverable]
        others = [x.span for x in (*draft.hallucinations, *draft.general) if x.deliverable == s.deliverable]
        others += [x.span for x in draft.supported if x is not s and x.deliverable == s.deliverable]
        if _overlaps(text, s.span, others):
            continue
        new = None
        for _ in range(6):  # redraw until the new value is absent from the sources
            attempt = _MUTATORS[s.kind](s.span, rng)
            if attempt and attempt != s.span and attempt not in text and not sources.supports(attempt):
                new = attempt
                break
        if new is None:
            continue
        draft.texts[s.deliverable] = text.replace(s.span, new, 1)
        draft.supported.remove(s)
        draft.hallucinations.append(
            Hallucination(
                system=s.system,
                task_id=s.task_id,
                deliverable=s.deliverable,
                span=new,
                category="fabricated_source" if s.kind == "quote" else "contradiction",
                materiality=s.if_altered,
                kind=s.kind,
                source_document=s.source_document,
                source_passage=s.source_passage,
                note=f"synthetic: {s.kind} altered from {s.span!r}",
            )
        )
        done += 1
    if done:
        draft.ops.append(f"mutate:{done}")
    return done > 0


def _insert(draft: _Draft, system: str, task_id: str, sources: _Sources, rng: random.Random) -> None:
    """Append one or two fabricated sentences (values absent from the sources) to a deliverable."""
    names = [n for n, t in draft.texts.items() if t.strip()] or list(draft.texts)
    for category, materiality, kind, template in rng.sample(_INSERTS, rng.randint(1, 2)):
        name = rng.choice(names)
        text = draft.texts[name]
        for _ in range(6):
            date = dt.date(2018, 1, 1) + dt.timedelta(days=rng.randint(0, 364))
            sentence = template.format(
                sec=f"{rng.randint(40, 59)}.{rng.randint(1, 9)}",
                date=f"{_MONTHS[date.month - 1]} {date.day}, {date.year}",
                days=rng.randint(40, 89),
                count=rng.randint(11, 39),
                quote=rng.choice(_FAKE_QUOTES),
            )
            if sentence not in text and not sources.supports(sentence):
                break
        else:
            continue
        draft.texts[name] = text.rstrip("\n") + "\n\n" + sentence + "\n"
        draft.hallucinations.append(
            Hallucination(
                system=system,
                task_id=task_id,
                deliverable=name,
                span=sentence,
                category=category,  # type: ignore[arg-type]
                materiality=materiality,  # type: ignore[arg-type]
                kind=kind,  # type: ignore[arg-type]
                source_document=None,
                source_passage=None,
                note="synthetic: appended sentence with no support in the sources",
            )
        )
        draft.ops.append(f"insert:{kind}")


def _renamed(items: list[_T], system: str) -> list[_T]:
    return [x.model_copy(update={"system": system}) for x in items]


def _draft_from(base: _Base, gt: GroundTruth, system: str) -> _Draft:
    return _Draft(
        texts=dict(base.texts),
        verdicts=dict(gt.verdicts[base.system][base.task_id]),
        hallucinations=_renamed(gt.hallucinations_for(base.system, base.task_id), system),
        general=_renamed(gt.general_knowledge_for(base.system, base.task_id), system),
        supported=_renamed(gt.supported_for(base.system, base.task_id), system),
        ops=[],
    )


# -------------------------------------------------------------------- the generator


def synthesize(
    sample_root: str | Path,
    ground_truth: GroundTruth | str | Path | None,
    n: int,
    out_root: str | Path,
    seed: int = 0,
) -> GroundTruth:
    """Write `n` synthetic submissions with known ground truth under `out_root`; returns it.

    `ground_truth` defaults to `<sample_root>/ground_truth.json`. Submission i is for task
    i mod T (T = number of tasks) under system `synth-NNNN` = i div T + 1, so systems are spread
    evenly across the sample's tasks. `out_root/results` is replaced on each run.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    sample = Path(sample_root)
    out = Path(out_root)
    if ground_truth is None:
        ground_truth = sample / "ground_truth.json"
    gt = ground_truth if isinstance(ground_truth, GroundTruth) else load_ground_truth(ground_truth)
    files, bases = _read_bases(sample, gt)
    by_task: dict[str, list[_Base]] = {}
    for b in bases:
        by_task.setdefault(b.task_id, []).append(b)
    tasks = sorted(by_task)
    sources = {t: _Sources.of(sample / "tasks" / t / "documents") for t in tasks}
    n_systems = -(-n // len(tasks))
    width = max(4, len(str(n_systems)))
    rng = random.Random(seed)

    verdicts: dict[str, dict[str, dict[str, str]]] = {}
    halls: list[Hallucination] = []
    general: list[GeneralKnowledge] = []
    supported: list[SupportedSpan] = []
    origins: dict[str, dict[str, object]] = {}
    results = out / "results"
    if results.exists():
        shutil.rmtree(results)
    out.mkdir(parents=True, exist_ok=True)
    texts_written: dict[tuple[str, str, str], str] = {}

    with (out / "manifest.jsonl").open("w", encoding="utf-8") as manifest:
        for i in range(n):
            task_id = tasks[i % len(tasks)]
            system = f"synth-{i // len(tasks) + 1:0{width}d}"
            base = rng.choice(by_task[task_id])
            op = rng.choices(_OPERATIONS, weights=_WEIGHTS)[0]
            draft = _draft_from(base, gt, system)
            if op == "empty":
                draft.texts = {name: "" for name in draft.texts}
                draft.verdicts = {cid: "fail" for cid in draft.verdicts}
                draft.hallucinations, draft.general, draft.supported = [], [], []
                draft.ops.append("empty")
            elif op == "mutate":
                if not _mutate(draft, sources[task_id], rng):
                    _insert(draft, system, task_id, sources[task_id], rng)
            elif op == "insert":
                _insert(draft, system, task_id, sources[task_id], rng)
            else:
                draft.ops.append("clone")

            folder = results / system / task_id
            folder.mkdir(parents=True, exist_ok=True)
            paths: dict[str, dict[str, str]] = {}
            for name, filename in files[task_id].items():
                (folder / filename).write_text(draft.texts[name], encoding="utf-8")
                paths[name] = {"path": f"results/{system}/{task_id}/{filename}"}
                texts_written[(system, task_id, name)] = draft.texts[name]
            manifest.write(json.dumps({"system": system, "task_id": task_id, "deliverables": paths}) + "\n")

            verdicts.setdefault(system, {})[task_id] = draft.verdicts
            halls.extend(draft.hallucinations)
            general.extend(draft.general)
            supported.extend(draft.supported)
            origins[f"{system}::{task_id}"] = {"base": base.system, "ops": draft.ops}

    result = GroundTruth.model_validate(
        {
            "benchmark": f"{gt.benchmark}-synth",
            "systems": sorted(verdicts),
            "verdicts": verdicts,
            "hallucinations": [h.model_dump() for h in halls],
            "general_knowledge": [g.model_dump() for g in general],
            "supported": [s.model_dump() for s in supported],
            "distractors": gt.distractors,
            "synthesis": {"source": gt.benchmark, "n": n, "seed": seed, "origins": origins},
        }
    )
    problems = span_problems(result, texts_written)
    if problems:  # a bug in this module, never an input problem
        raise AssertionError(f"synthetic ground truth inconsistent: {problems[:3]}")
    result.dump(out / "ground_truth.json")
    return result


def summary(gt: GroundTruth) -> str:
    """A few lines describing a (synthetic) ground truth, for the CLI."""
    subs = gt.submissions()
    ops: Counter[str] = Counter()
    origins = (gt.model_extra or {}).get("synthesis", {}).get("origins", {})
    for entry in origins.values():
        for op in {op.split(":")[0] for op in entry.get("ops", [])}:
            ops[op] += 1
    cats = Counter(f"{h.category}/{h.materiality}" for h in gt.hallucinations)
    lines = [
        f"{len(subs)} submissions from {len(gt.verdicts)} systems over {len(gt.task_ids())} tasks",
        f"hallucinations: {len(gt.hallucinations)} ({', '.join(f'{k} {v}' for k, v in sorted(cats.items()))})",
    ]
    if ops:
        lines.append("submissions by operation: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
    return "\n".join(lines)
