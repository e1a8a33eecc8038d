"""The realistic-size benchmark (`tribunal synth --profile lab`): tasks as large as the published
protocol's, with known ground truth, generated from a seed in seconds.

Why one module: one seeded generator writes tasks, sources, submissions and their ground truth together, so they cannot drift apart.

Why it exists: the sample's tasks are small (13 criteria, ~900 input tokens per rubric call), so
no cost, cache or speed figure measured on them says anything about a real sweep. The protocol's
tasks have 44-90 criteria (median 55), 5-15 source documents (docx, pdf, xlsx, eml) totalling
20k-150k tokens, and deliverables of 1-5k words. This module writes tasks of those sizes in the
public layout (`tasks/<area>/<task>/task.json` + `documents/`), one submission per task for each
of a few systems (`submissions/<system>/<task>/memo.md`), and a `ground_truth.json` in the
sample's format, so a sweep over it can be checked against its answers like the sample.

How the ground truth is certain. Each task is a matter with *key terms* (a labelled date, amount,
period, percentage or party, each stated once in one source document under its own section
number, every value unique in the task). Every criterion checks one key term: PASS if the memo
states it with its value and section, FAIL if it is omitted or misstated. Further key terms that
no criterion checks (*details*) give the memos grounded statements a hallucination can alter
without changing a verdict.

The systems spread as real ones do. Published all-pass leaderboards spread over tens of percent,
and a benchmark whose systems all pass everything (or nothing) exercises neither the audit, the
ranks nor the tiers (issue 43: at lab size all four systems were tier 1, ranks 1-4, and 3 of 32
submissions audited). Each system is a `LabSystem`: on the share `all_pass` of the tasks its memo
states every criterion's key term correctly (every criterion passes); on the others it omits
`misses` key terms (those criteria fail) and, if `misstates`, misstates one more (a material
contradiction that fails its criterion). On the share `hallucinated` of the tasks, chosen apart,
the memo also alters one detail (a material contradiction) and cites a section that does not
exist (a fabricated source): a memo that passes is then audited and gated. Shares are exact
quotas, not draws: of N tasks, round(share x N) are chosen (seeded per system), so the planted
rates are what is configured, to 1/N. The defaults (`LAB_SYSTEMS`):

| system        | all_pass | hallucinated | misses | misstates | planted HC pass (all-pass, not gated) |
|---------------|----------|--------------|--------|-----------|---------------------------------------|
| `lab-strong`  | 0.70     | 0.05         | 1-2    | no        | about 0.67                            |
| `lab-average` | 0.40     | 0.10         | 1-3    | no        | about 0.36                            |
| `lab-fluent`  | 0.75     | 0.60         | 1-2    | no        | about 0.30 (passes, then gated)       |
| `lab-weak`    | 0.10     | 0.20         | 4-8    | yes       | about 0.08                            |

At one task these give the four behaviours the profile had before (strong passes, average omits
1-3, fluent passes and is gated, weak omits and misstates), so a one-task lab is unchanged.
`generate_lab(..., systems=...)` takes any other spread.

Filler prose in sources and memos contains no digits, so the only numbers, dates and section
references are the planted ones; a misstated value is drawn until it occurs nowhere in the task.
The run is a pure function of (tasks, seed).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import email.policy
import io
import json
import math
import random
import shutil
import statistics
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Literal

from doubles.synth.ground_truth import (
    GeneralKnowledge,
    GroundTruth,
    Hallucination,
    SupportedSpan,
    span_problems,
)

ValueKind = Literal["date", "amount", "number", "party"]
DocFormat = Literal["docx", "pdf", "xlsx", "eml"]



@dataclass(frozen=True)
class LabSystem:
    """How one planted system writes its memos (see the module doc)."""

    name: str
    all_pass: float  # share of tasks whose memo states every criterion's key term correctly
    hallucinated: float  # share of tasks whose memo carries the planted material hallucinations
    misses: tuple[int, int] = (1, 3)  # how many key terms a memo that does not all-pass omits
    misstates: bool = False  # whether such a memo also misstates one key term

    def __post_init__(self) -> None:
        if not (0 <= self.all_pass <= 1 and 0 <= self.hallucinated <= 1):
            raise ValueError(f"{self.name}: all_pass and hallucinated are shares in [0, 1]")
        if not 1 <= self.misses[0] <= self.misses[1]:
            raise ValueError(f"{self.name}: misses must be (low, high) with 1 <= low <= high")


LAB_SYSTEMS: tuple[LabSystem, ...] = (
    LabSystem("lab-strong", all_pass=0.70, hallucinated=0.05, misses=(1, 2)),
    LabSystem("lab-average", all_pass=0.40, hallucinated=0.10, misses=(1, 3)),
    LabSystem("lab-fluent", all_pass=0.75, hallucinated=0.60, misses=(1, 2)),
    LabSystem("lab-weak", all_pass=0.10, hallucinated=0.20, misses=(4, 8), misstates=True),
)
SYSTEMS: tuple[str, ...] = tuple(s.name for s in LAB_SYSTEMS)
CHARS_PER_TOKEN = 4  # the loader's and the prompt budget's estimate

_AREAS: dict[str, tuple[str, str]] = {
    "corporate-ma": ("share purchase agreement", "Share Purchase Agreement"),
    "real-estate": ("portfolio lease", "Master Lease"),
    "commercial-contracts": ("supply agreement", "Master Supply Agreement"),
    "employment": ("executive employment agreement", "Executive Employment Agreement"),
    "litigation": ("settlement agreement", "Settlement Agreement"),
}

# (base label, kind): combined with qualifiers they give well over 100 distinct key terms per task.
_TERMS: tuple[tuple[str, ValueKind], ...] = (
    ("Purchase Price", "amount"), ("Deposit", "amount"), ("Escrow Amount", "amount"),
    ("Indemnity Cap", "amount"), ("Basket Threshold", "amount"), ("Termination Fee", "amount"),
    ("Working Capital Target", "amount"), ("Annual Base Rent", "amount"), ("Security Deposit", "amount"),
    ("Liability Cap", "amount"), ("Service Credit Ceiling", "amount"), ("Retention Bonus", "amount"),
    ("Settlement Payment", "amount"), ("Minimum Purchase Commitment", "amount"),
    ("Closing Date", "date"), ("Outside Date", "date"), ("Effective Date", "date"),
    ("Expiration Date", "date"), ("Notice Deadline", "date"), ("Commencement Date", "date"),
    ("Milestone Date", "date"), ("Option Exercise Deadline", "date"), ("Release Date", "date"),
    ("Cure Period", "number"), ("Notice Period", "number"), ("Survival Period", "number"),
    ("Payment Term", "number"), ("Non-Compete Period", "number"), ("Review Period", "number"),
    ("Escalation Rate", "number"), ("Late Payment Interest", "number"), ("Volume Rebate", "number"),
    ("Guarantor", "party"), ("Escrow Agent", "party"), ("Paying Agent", "party"),
    ("Designated Supplier", "party"), ("Approved Assignee", "party"), ("Sub-Landlord", "party"),
)
_QUALIFIERS = ("", "Phase Two", "Tranche A", "Tranche B", "Northern Site", "Southern Site", "Holdback",
               "Deferred", "Initial", "Extended", "Regional", "Supplemental")

_NAME_A = ("Northwind", "Halcyon", "Bramble", "Cobalt", "Ferrous", "Juniper", "Lodestar", "Meridian",
           "Oakhaven", "Pinecrest", "Quarry", "Redfern", "Silverleaf", "Tamarack", "Umber", "Verity",
           "Westmarch", "Yarrow", "Alder", "Birchwood", "Cedarline", "Driftwood", "Emberly", "Foxglove")
_NAME_B = ("Harbor", "Ridge", "Valley", "Summit", "Crossing", "Meadow", "Point", "Bay", "Field", "Grove")
_NAME_C = ("Holdings LLC", "Partners LP", "Capital Inc.", "Industries Corp.", "Group Ltd.", "Trust Company")

_MONTHS = ("January February March April May June July August September October November "
           "December").split()

# Prose without digits: the only numbers in a task are its key terms.
_FILLER = (
    "Each party shall perform its obligations in good faith and with reasonable diligence.",
    "Nothing in this clause limits any remedy otherwise available to the non-breaching party.",
    "Any consent required under this agreement shall not be unreasonably withheld, conditioned or delayed.",
    "The parties acknowledge that they have been represented by counsel of their own choosing.",
    "Headings are for convenience only and do not affect the interpretation of this agreement.",
    "Where this agreement requires a party to use reasonable efforts, that party need not commence litigation.",
    "The rights of each party under this clause are cumulative and not exclusive of any other rights.",
    "Information exchanged under this agreement remains subject to the confidentiality undertakings.",
    "No waiver of any breach shall be deemed a waiver of any other or subsequent breach.",
    "Each party bears its own costs of negotiating and documenting the transactions described here.",
    "Notices must be in writing and delivered by hand, by courier or by registered post.",
    "Obligations that by their nature survive termination continue after this agreement ends.",
    "The parties shall cooperate in preparing any filings required by applicable regulators.",
    "A party that becomes aware of a potential claim shall notify the other party without undue delay.",
    "This agreement may be executed in counterparts, each of which is deemed an original.",
    "The recitals form part of this agreement and are binding on the parties.",
)
_ANALYSIS = (
    "We reviewed the executed documents in the data room together with the correspondence between the parties.",
    "The drafting is generally consistent with market practice for a transaction of this kind.",
    "Where the documents are ambiguous we have adopted the reading most favourable to the client and flagged it.",
    "We recommend that the client confirm the commercial points below with the deal team before signing.",
    "Several provisions interact, and the client should read them together rather than in isolation.",
    "The counterparty is likely to resist any attempt to reopen points it regards as settled.",
    "We have not verified any factual statement made by the counterparty outside the documents.",
    "The negotiation history suggests that the parties intended a balanced allocation of risk.",
    "Our comments are limited to the documents provided and do not address tax or regulatory questions.",
    "The client should diarise each deadline identified below and assign an owner for it.",
)
_GENERAL = (
    "As a general matter, courts enforce negotiated limitation of liability clauses between sophisticated commercial parties.",
    "Under general contract principles, an ambiguous provision is often construed against the party that drafted it.",
    "In most common law jurisdictions a waiver must be clear and unequivocal to be effective.",
    "Equitable remedies such as specific performance remain discretionary even where the contract provides for them.",
)


@dataclass(frozen=True)
class KeyTerm:
    """One labelled value of a matter, stated once in one source document."""

    label: str
    kind: ValueKind
    value: str
    section: str
    document: str

    @property
    def source_sentence(self) -> str:
        end = "" if self.value.endswith(".") else "."
        return f"Section {self.section}. {self.label}. The {self.label} shall be {self.value}{end}"

    def memo_sentence(self, value: str | None = None) -> str:
        return f"The {self.label} is {value or self.value} (Section {self.section})."


@dataclass(frozen=True)
class LabTask:
    """A generated task before it is written: its id, terms, documents and sizes."""

    task_id: str
    title: str
    instructions: str
    criteria_terms: list[KeyTerm]
    details: list[KeyTerm]
    documents: dict[str, tuple[DocFormat, list[str]]]  # filename -> (format, paragraphs)


# -------------------------------------------------------------------- values


def _company(rng: random.Random) -> str:
    return f"{rng.choice(_NAME_A)} {rng.choice(_NAME_B)} {rng.choice(_NAME_C)}"


def _value(kind: ValueKind, rng: random.Random) -> str:
    if kind == "amount":
        return f"${rng.randint(12, 98_000) * 250:,}"
    if kind == "date":
        d = dt.date(2027, 1, 1) + dt.timedelta(days=rng.randint(0, 1460))
        return f"{_MONTHS[d.month - 1]} {d.day}, {d.year}"
    if kind == "number":
        return rng.choice((f"{rng.randint(11, 365)} days", f"{rng.randint(21, 97)}.{rng.randint(1, 9)}%"))
    return _company(rng)


def _altered(term: KeyTerm, used: set[str], rng: random.Random) -> str:
    """A value of the same kind occurring nowhere in the task (so it is genuinely unsupported)."""
    while True:
        value = _value(term.kind, rng)
        if value not in used and value != term.value:
            used.add(value)
            return value


# -------------------------------------------------------------------- one task


def _lognormal_int(rng: random.Random, lo: int, hi: int, median: int) -> int:
    """A right-skewed draw in [lo, hi] around `median` (the protocol's sizes are skewed)."""
    sigma = math.log(hi / median) / 2.0
    return max(lo, min(hi, round(rng.lognormvariate(math.log(median), sigma))))


def _make_task(index: int, rng: random.Random, *, scale: float) -> LabTask:
    area = list(_AREAS)[index % len(_AREAS)]
    deal, agreement = _AREAS[area]
    n_criteria = _lognormal_int(rng, 44, 90, 55)
    n_details = rng.randint(12, 20)
    n_docs = rng.randint(5, 15)
    target_tokens = int(_lognormal_int(rng, 20_000, 150_000, 50_000) * scale)
    labels: list[tuple[str, ValueKind]] = []
    seen: set[str] = set()
    while len(labels) < n_criteria + n_details:
        base, kind = rng.choice(_TERMS)
        qual = rng.choice(_QUALIFIERS)
        label = f"{qual} {base}".strip()
        if label not in seen:
            seen.add(label)
            labels.append((label, kind))
    formats: list[DocFormat] = ["docx", "pdf", "xlsx", "eml"]
    doc_formats: list[DocFormat] = [formats[i % 4] for i in range(n_docs)]
    rng.shuffle(doc_formats)
    names = [f"{agreement.replace(' ', '_')}_{'Schedule' if f == 'xlsx' else 'Part'}_{chr(65 + i)}.{f}"
             if f != "eml" else f"Correspondence_{chr(65 + i)}.eml" for i, f in enumerate(doc_formats)]
    values: set[str] = set()
    terms: list[KeyTerm] = []
    for i, (label, kind) in enumerate(labels):
        while (value := _value(kind, rng)) in values:
            continue
        values.add(value)
        terms.append(KeyTerm(label, kind, value, f"{i // 9 + 1}.{i % 9 + 1}", rng.choice(names)))
    slug = f"lab-{index + 1:03d}-{deal.replace(' ', '-')}"
    parties = (_company(rng), _company(rng))
    per_doc_chars = target_tokens * CHARS_PER_TOKEN // n_docs
    documents: dict[str, tuple[DocFormat, list[str]]] = {}
    for name, fmt in zip(names, doc_formats, strict=True):
        paras = [f"{agreement} between {parties[0]} and {parties[1]} ({name.rsplit('.', 1)[0].replace('_', ' ')})."]
        mine = [t.source_sentence for t in terms if t.document == name]
        size = len(paras[0])
        filler_per_term = max(1, (per_doc_chars // max(len(mine), 1)) // 400)
        for sentence in mine:
            paras.append(sentence + " " + " ".join(rng.choice(_FILLER) for _ in range(2)))
            for _ in range(filler_per_term):
                paras.append(" ".join(rng.choice(_FILLER) for _ in range(4)))
            size += sum(len(p) for p in paras[-filler_per_term - 1 :])
        while size < per_doc_chars:
            p = " ".join(rng.choice(_FILLER) for _ in range(4))
            paras.append(p)
            size += len(p)
        documents[name] = (fmt, paras)
    rng.shuffle(terms)
    return LabTask(
        task_id=f"{area}/{slug}",
        title=f"Key terms memo on the {deal} between {parties[0]} and {parties[1]}",
        instructions=(
            f"Our client {parties[0]} needs a memo on the {deal} with {parties[1]} before the board meeting. "
            "Using only the documents in the file, state every key term with its value and the section it "
            "comes from, explain how the provisions interact, and flag anything that needs attention."
        ),
        criteria_terms=terms[:n_criteria],
        details=terms[n_criteria:],
        documents=documents,
    )


# -------------------------------------------------------------------- documents


def _docx(paras: list[str]) -> bytes:
    import docx

    document = docx.Document()
    for p in paras:
        document.add_paragraph(p)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _pdf(paras: list[str]) -> bytes:
    from fpdf import FPDF

    document = FPDF()
    document.set_font("helvetica", size=10)
    document.add_page()
    document.multi_cell(0, 5, "\n\n".join(paras))
    return bytes(document.output())


def _xlsx(paras: list[str]) -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Schedule"
    sheet.append(["Provision"])
    for p in paras:
        sheet.append([p])
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def _eml(paras: list[str], sender: str) -> bytes:
    message = EmailMessage(policy=email.policy.SMTP)
    message["From"] = f"counsel@{sender.split()[0].lower()}.example"
    message["To"] = "client@example.com"
    message["Subject"] = paras[0][:70]
    message["Date"] = "Tue, 02 Mar 2027 09:30:00 +0000"
    message.set_content("\n\n".join(paras))
    return message.as_bytes()


def _write_document(path: Path, fmt: DocFormat, paras: list[str]) -> None:
    if fmt == "docx":
        data = _docx(paras)
    elif fmt == "pdf":
        data = _pdf(paras)
    elif fmt == "xlsx":
        data = _xlsx(paras)
    else:
        data = _eml(paras, paras[0])
    path.write_bytes(data)


# -------------------------------------------------------------------- submissions


@dataclass
class _Memo:
    paragraphs: list[str]
    verdicts: dict[str, str]
    hallucinations: list[Hallucination]
    general: list[GeneralKnowledge]
    supported: list[SupportedSpan]


def _quota(share: float, n: int, rng: random.Random) -> set[int]:
    """round(share x n) of the task indexes 0..n-1, chosen by `rng` (an exact planted rate)."""
    return set(rng.sample(range(n), math.floor(share * n + 0.5)))


def _memo(task: LabTask, system: LabSystem, all_pass: bool, hallucinated: bool, rng: random.Random,
          used: set[str], words: int) -> _Memo:
    """One system's memo and its ground truth (see the module doc for the systems)."""
    crit = list(enumerate(task.criteria_terms, start=1))
    omit: set[int] = set()
    misstate: set[int] = set()
    alter_detail = fake_reference = hallucinated
    if not all_pass:
        extra = 1 if system.misstates else 0
        n = min(len(crit), rng.randint(system.misses[0] + extra, system.misses[1] + extra))
        picks = rng.sample([i for i, _ in crit], n)
        omit, misstate = set(picks[extra:]), set(picks[:extra])
    memo = _Memo([f"MEMORANDUM: {task.title}"], {}, [], [], [])
    key: dict[str, Any] = {"system": system.name, "task_id": task.task_id, "deliverable": "memo"}
    details = list(task.details)
    altered_detail = rng.randrange(len(details)) if alter_detail else -1

    def span(term: KeyTerm, criteria: list[str]) -> None:
        memo.supported.append(SupportedSpan(**key, span=term.memo_sentence(), kind=_gt_kind(term),
                                            source_document=term.document, source_passage=term.source_sentence,
                                            if_altered="material", criteria=criteria))

    body: list[str] = []
    for i, term in crit:
        cid = f"C-{i:03d}"
        if i in omit:
            memo.verdicts[cid] = "fail"
            continue
        if i in misstate:
            wrong = _altered(term, used, rng)
            sentence = term.memo_sentence(wrong)
            memo.verdicts[cid] = "fail"
            memo.hallucinations.append(Hallucination(
                **key, span=sentence, category="contradiction", materiality="material", kind=_gt_kind(term),
                source_document=term.document, source_passage=term.source_sentence,
                note=f"lab: {term.label} misstated as {wrong} (the source says {term.value})"))
        else:
            sentence = term.memo_sentence()
            memo.verdicts[cid] = "pass"
            span(term, [cid])
        body.append(sentence)
    for j, term in enumerate(details):
        if j == altered_detail:
            wrong = _altered(term, used, rng)
            sentence = term.memo_sentence(wrong)
            memo.hallucinations.append(Hallucination(
                **key, span=sentence, category="contradiction", materiality="material", kind=_gt_kind(term),
                source_document=term.document, source_passage=term.source_sentence,
                note=f"lab: detail {term.label} altered to {wrong} (the source says {term.value})"))
        else:
            sentence = term.memo_sentence()
            span(term, [])
        body.append(sentence)
    if fake_reference:
        sentence = "This reading is confirmed by Section 97.4 of the agreement, which neither party has disputed."
        memo.hallucinations.append(Hallucination(
            **key, span=sentence, category="fabricated_source", materiality="material", kind="reference",
            note="lab: section 97.4 does not exist in any source"))
        body.append(sentence)
    general = rng.choice(_GENERAL)
    memo.general.append(GeneralKnowledge(**key, span=general, note="lab: general legal knowledge"))
    body.append(general)
    # Interleave the statements with analysis prose up to the target length.
    have = sum(len(s.split()) for s in body)
    per_gap = max(0, (words - have) // max(len(body), 1))
    for sentence in body:
        para = [sentence]
        added = 0
        while added < per_gap:
            filler = rng.choice(_ANALYSIS)
            para.append(filler)
            added += len(filler.split())
        memo.paragraphs.append(" ".join(para))
    return memo


def _gt_kind(term: KeyTerm) -> Literal["date", "amount", "number", "party"]:
    return term.kind


# -------------------------------------------------------------------- the generator


def generate_lab(
    out_root: str | Path, *, tasks: int = 8, seed: int = 0, scale: float = 1.0,
    systems: tuple[LabSystem, ...] = LAB_SYSTEMS,
) -> GroundTruth:
    """Write a realistic-size benchmark with submissions and ground truth under `out_root`.

    `out_root/tasks`, `out_root/submissions` and `out_root/ground_truth.json` are replaced.
    `scale` multiplies the source sizes (1.0 = the protocol's; a test may use less). `systems`
    are the planted systems and their spread (`LAB_SYSTEMS` by default; the module doc).
    """
    if tasks < 1:
        raise ValueError("tasks must be at least 1")
    if not systems or len({s.name for s in systems}) != len(systems):
        raise ValueError("systems must be at least one, with distinct names")
    # Which tasks each system passes and hallucinates on: a generator of its own, so the main
    # one (tasks, values, memos) does not depend on the spread.
    passes = {s.name: _quota(s.all_pass, tasks, random.Random(f"lab:{seed}:{s.name}:pass")) for s in systems}
    halluc = {s.name: _quota(s.hallucinated, tasks, random.Random(f"lab:{seed}:{s.name}:hallucinated")) for s in systems}
    out = Path(out_root)
    for sub in ("tasks", "submissions"):
        if (out / sub).exists():
            shutil.rmtree(out / sub)
    rng = random.Random(f"lab:{seed}")
    verdicts: dict[str, dict[str, dict[str, str]]] = {s.name: {} for s in systems}
    halls: list[Hallucination] = []
    general: list[GeneralKnowledge] = []
    supported: list[SupportedSpan] = []
    texts: dict[tuple[str, str, str], str] = {}
    sizes: list[dict[str, int]] = []
    for index in range(tasks):
        task = _make_task(index, rng, scale=scale)
        folder = out / "tasks" / task.task_id
        (folder / "documents").mkdir(parents=True)
        criteria = [
            {
                "id": f"C-{i:03d}",
                "title": t.label,
                "match_criteria": f"PASS if the memo states that the {t.label} is {t.value} (Section {t.section}). "
                "FAIL if it is omitted or misstated.",
            }
            for i, t in enumerate(task.criteria_terms, start=1)
        ]
        data = {"title": task.title, "instructions": task.instructions, "criteria": criteria,
                "deliverables": {"memo": "memo.md"}, "work_type": "key terms memo", "tags": ["lab profile"]}
        (folder / "task.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        for name, (fmt, paras) in task.documents.items():
            _write_document(folder / "documents" / name, fmt, paras)
        used = {t.value for t in (*task.criteria_terms, *task.details)}
        words = _lognormal_int(rng, 1000, 5000, 2200)
        for system in systems:
            memo = _memo(task, system, index in passes[system.name], index in halluc[system.name], rng, used, words)
            text = "\n\n".join(memo.paragraphs) + "\n"
            path = out / "submissions" / system.name / task.task_id / "memo.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            texts[(system.name, task.task_id, "memo")] = text
            verdicts[system.name][task.task_id] = memo.verdicts
            halls += memo.hallucinations
            general += memo.general
            supported += memo.supported
        sizes.append({
            "criteria": len(task.criteria_terms),
            "documents": len(task.documents),
            "source_tokens": sum(len(p) + 2 for _, ps in task.documents.values() for p in ps) // CHARS_PER_TOKEN,
            "memo_words": words,
        })
    gt = GroundTruth.model_validate({
        "benchmark": f"lab-{seed}",
        "systems": [s.name for s in systems],
        "verdicts": verdicts,
        "hallucinations": [h.model_dump() for h in halls],
        "general_knowledge": [g.model_dump() for g in general],
        "supported": [s.model_dump() for s in supported],
        "lab": {"seed": seed, "tasks": tasks, "scale": scale, "sizes": sizes,
                "systems": [{**dataclasses.asdict(s), "misses": list(s.misses)} for s in systems]},
    })
    problems = span_problems(gt, texts)
    if problems:  # a bug in this module, never an input problem
        raise AssertionError(f"lab ground truth inconsistent: {problems[:3]}")
    gt.dump(out / "ground_truth.json")
    return gt


def lab_summary(gt: GroundTruth) -> str:
    """A few lines on a generated lab benchmark's sizes, for the CLI."""
    sizes = (gt.model_extra or {}).get("lab", {}).get("sizes", [])
    if not sizes:
        return ""
    crit = [s["criteria"] for s in sizes]
    toks = [s["source_tokens"] for s in sizes]
    docs = [s["documents"] for s in sizes]
    words = [s["memo_words"] for s in sizes]
    return "\n".join([
        f"{len(sizes)} tasks x {len(gt.verdicts)} systems = {len(gt.submissions())} submissions",
        f"criteria per task: {min(crit)}-{max(crit)} (median {statistics.median(crit):g})",
        f"source documents per task: {min(docs)}-{max(docs)}; source tokens: {min(toks):,}-{max(toks):,} "
        f"(median {statistics.median(toks):,.0f})",
        f"memo words: {min(words):,}-{max(words):,}; planted hallucinations: {len(gt.hallucinations)}",
    ])
