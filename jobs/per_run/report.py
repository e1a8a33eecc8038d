"""`tribunal report RUN`: one self-contained report.html for a run (works offline, no CDN).

Why one module: the page is one self-contained document; its queries, charts and template context are built together so each figure matches the run's tables.

The page holds everything inline: CSS, a small script, SVG charts drawn here in Python, and the
drill-down data as JSON. Sections: leaderboard with 95% intervals (gated vs ungated), rank interval
and tier, the pairwise P(beats) matrix as a picture, per-area heatmap, judge agreement, self-family
preference, hallucinations by category and every confirmed hallucination in one filterable list
(one click from the leaderboard), what the experts' decisions changed, calibration against expert
labels (when `tribunal calibrate` wrote calibration.json into the run), cost by system, vendor and
purpose with the cached share and the pricing mode, and a drill-down from a system to its tasks to
one submission's verdicts (every judge's reasoning, the experts' decisions) and confirmed flags.

Evidence locations. A flag's evidence is cited where a reader finds it in its source: page for a
PDF or scan, heading and paragraph for a .docx, sheet and cell for a .xlsx, message and header or
body paragraph for an .eml (`evalcore.benchmark.locate`). The report reads the run's benchmark
(run.json names it; `benchmark=` overrides) one task at a time to compute them; a task that cannot
be read leaves the flag's own cited page, and the page says why. A `fabricated_source` flag without
evidence says "no source contains it": a made-up source has, by definition, nothing to cite.

Cost figures are computed here from the calls table (every call paid in this run; calls reused from
an earlier run cost nothing), so each can be checked against it: per system and vendor by purpose
(rubric / detect / verify / preflight), cached share = cached input tokens / input tokens, cost per
scored submission = the system's cost / its complete submissions, pricing = batch when the run's
config enabled batch mode (calls answered by a vendor batch carry a `batch_id`).

Size. A sweep-sized run has 100,000 submissions and 16.5 M verdicts: the page cannot embed them all.
`ReportLimits` caps the per-task rows listed, the submissions embedded with full detail (flagged
and incomplete submissions first, then by task id, spread evenly over systems) and the flags listed
(material and adjudicated first); the page states the caps whenever they cut something. The
aggregate sections always cover the whole run.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from evalcore.benchmark.loader import DOCUMENTS_FOLDER, TASKS_FOLDER, load_task
from evalcore.benchmark.locate import Locator
from evalcore.call_accounting import PAID_SQL, paid_sum
from evalcore.config.models import InputLimits
from evalcore.errors import TribunalError
from evalcore.grading.scoring import FlagOutcome, adjudicated_flag, counted_materiality
from evalcore.results import adjudications as adj
from evalcore.results.calibrate import Calibration
from evalcore.results.leaderboard import ALL_AREAS, Leaderboard, Pairwise, SystemScores
from evalcore.results.reduce import current_gradings
from evalcore.results.repeatability import Repeatability
from evalcore.results.stats import Interval
from evalcore.schema import SourceDocument, Task
from evalcore.storage import fs
from evalcore.storage.run import open_run
from evalcore.storage.store import RunRecord
from jobs.per_run.calibrate import load_calibration, run_repeatability
from jobs.per_run.reduce import reduce_run

TEMPLATES = Path(__file__).with_name("templates")


@dataclass(frozen=True)
class ReportLimits:
    """Caps that keep report.html a reasonable size on big runs."""

    max_listed: int = 5000
    """Per-task rows (system × task with its scores) listed in the drill-down."""
    max_detailed: int = 300
    """Submissions embedded with every verdict, reasoning and flag."""
    max_reasoning_chars: int = 1500
    """A judge's reasoning is cut after this many characters (the page says so)."""
    max_flags: int = 10_000
    """Confirmed (or adjudicated) flags in the filterable list: material and adjudicated first."""


# --------------------------------------------------------------------------------------------
# Evidence locations and the experts' decisions
# --------------------------------------------------------------------------------------------

NO_SOURCE = "no source contains it"
"""What a fabricated_source flag without evidence cites: a made-up source has nothing to point at."""
_NO_EVIDENCE = {
    "fabricated_source": NO_SOURCE,
    "unsupported_specific": "the sources say nothing on it",
    "contradiction": "no passage cited",
}


class EvidenceFinder:
    """Where each flag's evidence passage is in its source, read from the run's benchmark on demand.

    Tasks are loaded one at a time with the sweep's loader and the run's input limits (converted
    text comes from the conversion cache); a .docx or .xlsx is read once more as bytes for its
    headings, paragraphs, rows and cells. A task or document that cannot be read is remembered with
    its reason (`problems`) and its flags keep the page they cite.
    """

    def __init__(self, benchmark_uri: str | None, limits: InputLimits | None = None,
                 endpoint_override: str | None = None) -> None:
        self.benchmark_uri = (benchmark_uri or "").rstrip("/")
        self.limits = limits or InputLimits()
        self.endpoint = endpoint_override
        self.problems: dict[str, str] = {}
        self._root: str | None = None
        self._tasks: dict[str, Task | None] = {}
        self._locators: dict[tuple[str, str], Locator] = {}

    def _tasks_root(self) -> str:
        if self._root is None:
            inside = fs.join(self.benchmark_uri, TASKS_FOLDER)
            try:
                self._root = inside if fs.is_dir(inside, self.endpoint) else self.benchmark_uri
            except (OSError, TribunalError):
                self._root = self.benchmark_uri
        return self._root

    def task(self, task_id: str) -> Task | None:
        """The benchmark task (None when it cannot be read: the reason is in `problems`)."""
        if task_id not in self._tasks:
            if not self.benchmark_uri:
                self.problems[task_id] = "run.json names no benchmark"
                self._tasks[task_id] = None
                return None
            try:
                self._tasks[task_id] = load_task(fs.join(self._tasks_root(), task_id), task_id,
                                                 endpoint_override=self.endpoint, limits=self.limits)
            except (TribunalError, OSError) as exc:
                self.problems[task_id] = f"the task cannot be read from the benchmark ({exc})"
                self._tasks[task_id] = None
        return self._tasks[task_id]

    def _locator(self, task: Task, document: SourceDocument) -> Locator:
        key = (task.id, document.name)
        if key not in self._locators:
            raw: bytes | None = None
            if document.kind in ("docx", "xlsx"):
                uri = fs.join(self._tasks_root(), task.id, DOCUMENTS_FOLDER, document.name)
                try:
                    raw = fs.read_bytes(uri, self.endpoint)
                except (OSError, TribunalError) as exc:
                    self.problems[f"{task.id}/{document.name}"] = f"{uri}: cannot be read again ({exc})"
            try:
                self._locators[key] = Locator(document, raw)
            except Exception as exc:  # a parser's own error on a file that converted before: locate in the text
                self.problems[f"{task.id}/{document.name}"] = f"its structure cannot be read ({exc})"
                self._locators[key] = Locator(document, None)
        return self._locators[key]

    @staticmethod
    def _document(task: Task, name: str) -> SourceDocument | None:
        for d in task.documents:
            if d.name == name:
                return d
        base = fs.basename(name)
        return next((d for d in task.documents if fs.basename(d.name) == base), None)

    def describe(self, flag: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
        """(document, location, note) of a flag's evidence; the note stands in for a missing passage."""
        doc: str | None = flag.get("evidence_document")
        page: str | None = flag.get("evidence_page")
        passage: str | None = flag.get("evidence_passage")
        if not passage or not passage.strip():
            return doc, page, _NO_EVIDENCE.get(str(flag.get("category")), "no passage cited")
        task = self.task(str(flag["task_id"]))
        if task is None:
            return doc, page, None
        documents = [d for d in [self._document(task, doc)] if d is not None] if doc else list(task.documents)
        if doc and not documents:
            self.problems[f"{task.id}/{doc}"] = f"the task has no source document {doc!r}"
            return doc, page, None
        for d in documents:
            found = self._locator(task, d).locate(passage, page)
            if found.where is not None:
                return d.name if not doc else doc, found.where, None
        where = f"{page} (passage not found in the text)" if page else "passage not found in the document's text"
        return doc, where if doc else None, None if doc else "passage not found in any source document"


def _decision(d: adj.Adjudication) -> dict[str, Any]:
    """An expert's decision as the page shows it: what, who, when (UTC), why, from which queue."""
    return {
        "d": d.decision, "m": d.materiality, "by": d.reviewer, "why": d.reason, "q": d.queue,
        "at": d.decided_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _in_force(status: str, materiality: str | None, decision: adj.Adjudication | None) -> str:
    """How a flag counts once the decision in force is applied: material | minor | overturned | rejected."""
    outcome = FlagOutcome(status, materiality)
    if decision is not None:
        outcome = adjudicated_flag(outcome, decision.decision, decision.materiality)  # type: ignore[arg-type]
    counted = counted_materiality(outcome.status, outcome.materiality)
    if counted is not None:
        return counted
    return "overturned" if decision is not None else outcome.status


# --------------------------------------------------------------------------------------------
# Drill-down data (I/O)
# --------------------------------------------------------------------------------------------


def _priority(row: Mapping[str, Any]) -> tuple[int, str]:
    """Which submissions deserve detail first: gated, flagged, incomplete, then the rest by task."""
    if row["gated"]:
        rank = 0
    elif (row["material_flags"] or 0) + (row["minor_flags"] or 0) > 0:
        rank = 1
    elif row["status"] != "complete":
        rank = 2
    else:
        rank = 3
    return rank, row["task_id"]


def _spread(by_system: Mapping[str, list[dict[str, Any]]], cap: int) -> set[str]:
    """Grading ids of up to `cap` rows, an even share per system (unused shares go to the others)."""
    chosen: set[str] = set()
    queues = {s: sorted(rows, key=_priority) for s, rows in by_system.items()}
    while len(chosen) < cap and any(queues.values()):
        active = [s for s in sorted(queues) if queues[s]]
        share = max(1, (cap - len(chosen)) // len(active))
        for s in active:
            take, queues[s] = queues[s][:share], queues[s][share:]
            for row in take:
                if len(chosen) < cap:
                    chosen.add(row["grading_id"])
    return chosen


def _filtered(source: pa.Table | pads.Dataset | None, ids: Sequence[str], columns: list[str],
              extra: pc.Expression | None = None) -> list[dict[str, Any]]:
    if source is None or not ids:
        return []
    expr = pc.field("grading_id").isin(pa.array(list(ids), type=pa.string()))
    if extra is not None:
        expr = expr & extra
    if isinstance(source, pads.Dataset):
        table = source.to_table(columns=columns, filter=expr)
    else:
        table = source.filter(expr).select(columns)
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


_FLAG_COLUMNS = ["grading_id", "system", "task_id", "flag_index", "deliverable", "span", "location", "category",
                 "evidence_document", "evidence_page", "evidence_passage", "explanation", "origin", "status",
                 "materiality", "rationale"]


def _flag_entry(f: Mapping[str, Any], decision: adj.Adjudication | None, evidence: EvidenceFinder | None,
                detailed: bool) -> dict[str, Any]:
    """One flag as the page's list and drill-down show it (short keys: the list can be long)."""
    if evidence is not None:
        doc, where, note = evidence.describe(f)
    else:
        doc, where = f["evidence_document"], f["evidence_page"]
        note = None if f["evidence_passage"] else _NO_EVIDENCE.get(f["category"], "no passage cited")
    return {
        "s": f["system"], "t": f["task_id"], "g": f["grading_id"] if detailed else None, "i": f["flag_index"],
        "cat": f["category"], "mat": f["materiality"], "st": f["status"], "del": f["deliverable"],
        "loc": f["location"], "span": f["span"], "doc": doc, "where": where, "ev": f["evidence_passage"],
        "note": note, "origin": f["origin"], "why": f["rationale"],
        "adj": _decision(decision) if decision is not None else None,
        "force": _in_force(f["status"], f["materiality"], decision),
    }


def collect_detail(
    run_uri: str, lb: Leaderboard, limits: ReportLimits = ReportLimits(), endpoint_override: str | None = None,
    *, decisions: Mapping[tuple[str, ...], adj.Adjudication] | None = None, evidence: EvidenceFinder | None = None,
) -> dict[str, Any]:
    """The data embedded in the page: per-system task rows, detailed submissions, the flag list.

    `decisions` are the experts' decisions in force (`Run.read_decisions().latest()`): shown next
    to the flags, verdicts and criteria they decide. `evidence` computes where each flag's evidence
    is in its source (None: the flag's own cited page only).
    """
    decisions = decisions or {}
    run = open_run(run_uri, endpoint_override)
    submissions = run.dataset("submissions")
    cur_rows: list[dict[str, Any]] = []
    if submissions is not None:
        cols = ["grading_id", "system", "task_id", "area", "status", "status_reason", "task_score",
                "criterion_pass_rate", "hc_score", "audited", "material_flags", "minor_flags", "gated"]
        cur_rows = current_gradings(submissions).select(cols).to_pylist()
    by_system: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in cur_rows:
        by_system[row["system"]].append(row)
    listed = _spread(by_system, limits.max_listed) if len(cur_rows) > limits.max_listed else {
        r["grading_id"] for r in cur_rows}
    detailed = _spread(by_system, limits.max_detailed) if len(cur_rows) > limits.max_detailed else {
        r["grading_id"] for r in cur_rows}
    listed |= detailed
    ids = sorted(detailed)
    verdicts = _filtered(run.dataset("verdicts"), ids,
                         ["grading_id", "criterion_id", "judge", "verdict", "reasoning", "abstain_reason"])
    # every confirmed flag of a current grading, and every flag an expert decided
    flag_decisions = {k: d for k, d in decisions.items() if k[0] == "flag"}
    decided_subs = {(k[1], k[2]) for k in flag_decisions}
    decided_gids = [r["grading_id"] for r in cur_rows if (r["system"], r["task_id"]) in decided_subs]
    flags_src = run.dataset("flags")
    wanted = pc.field("status") == "confirmed"
    if decided_gids:
        wanted = wanted | pc.field("grading_id").isin(pa.array(decided_gids, type=pa.string()))
    listed_flags = _filtered(flags_src, [r["grading_id"] for r in cur_rows], _FLAG_COLUMNS, wanted)
    other_flags: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for f in _filtered(flags_src, ids, ["grading_id", "system", "task_id", "flag_index", "status"],
                       pc.field("status") != "confirmed"):
        if ("flag", f["system"], f["task_id"], str(f["flag_index"])) not in flag_decisions:
            other_flags[f["grading_id"]][f["status"]] += 1
    chosen: list[tuple[dict[str, Any], adj.Adjudication | None]] = []
    for f in listed_flags:
        d = flag_decisions.get(("flag", f["system"], f["task_id"], str(f["flag_index"])))
        if f["status"] == "confirmed" or d is not None:
            chosen.append((f, d))
    order = {r.system: k for k, r in enumerate(lb.systems)}
    chosen.sort(key=lambda fd: (order.get(fd[0]["system"], len(order)), fd[0]["system"], fd[0]["task_id"],
                                fd[0]["flag_index"]))
    n_flags = len(chosen)
    if n_flags > limits.max_flags:
        keep = sorted(range(n_flags), key=lambda k: (chosen[k][1] is None, chosen[k][0]["materiality"] == "minor", k))
        kept = set(keep[: limits.max_flags])
        chosen = [fd for k, fd in enumerate(chosen) if k in kept]
    flag_list = [_flag_entry(f, d, evidence, f["grading_id"] in detailed) for f, d in chosen]
    by_gid: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f, entry in zip((f for f, _ in chosen), flag_list, strict=True):
        if f["grading_id"] in detailed:
            by_gid[f["grading_id"]].append(entry)
    judge_order = [j.judge for j in lb.judges.judges]
    crit: dict[str, dict[str, dict[str, list[Any]]]] = defaultdict(lambda: defaultdict(dict))
    truncated = False
    for v in verdicts:
        text = v["reasoning"] or ""
        if len(text) > limits.max_reasoning_chars:
            text, truncated = text[: limits.max_reasoning_chars] + " […]", True
        crit[v["grading_id"]][v["criterion_id"]][v["judge"]] = [v["verdict"], text, v["abstain_reason"]]
    verdict_decisions: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
    criterion_decisions: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
    for key, d in decisions.items():
        if key[0] == "verdict":
            verdict_decisions[(key[1], key[2])][f"{key[3]}|{key[4]}"] = _decision(d)
        elif key[0] == "criterion":
            criterion_decisions[(key[1], key[2])][key[3]] = _decision(d)
    details: dict[str, Any] = {}
    for row in cur_rows:
        gid = row["grading_id"]
        if gid not in detailed:
            continue
        sub = (row["system"], row["task_id"])
        criteria = [[cid, [by_judge.get(j) for j in judge_order]] for cid, by_judge in sorted(crit[gid].items())]
        details[gid] = {
            "system": row["system"], "task": row["task_id"], "status": row["status"],
            "reason": row["status_reason"], "criteria": criteria, "flags": by_gid.get(gid, []),
            "other_flags": dict(other_flags.get(gid, {})),
            # the experts' decisions on this submission's verdicts ("criterion|judge") and criteria
            "decided": {"v": verdict_decisions.get(sub, {}), "c": criterion_decisions.get(sub, {})},
        }
    systems: dict[str, list[list[Any]]] = {}
    for system in sorted(by_system):
        rows = sorted((r for r in by_system[system] if r["grading_id"] in listed), key=lambda r: r["task_id"])
        systems[system] = [
            [r["task_id"], r["status"], r["hc_score"], r["task_score"], r["criterion_pass_rate"],
             r["material_flags"], r["minor_flags"], bool(r["gated"]), r["grading_id"] if r["grading_id"] in detailed else None]
            for r in rows
        ]
    flag_counts: dict[str, int] = defaultdict(int)
    for entry in flag_list:
        flag_counts[entry["s"]] += 1
    return {
        "judges": judge_order,
        "systems": systems,
        "totals": {s: len(rows) for s, rows in by_system.items()},
        "details": details,
        "flags": flag_list,
        "flag_counts": dict(flag_counts),
        "n_flags": n_flags,
        "n_submissions": len(cur_rows),
        "n_listed": sum(len(v) for v in systems.values()),
        "n_detailed": len(details),
        "reasoning_truncated": truncated,
        "evidence_problems": sorted(f"{k}: {v}" for k, v in (evidence.problems if evidence else {}).items()),
        "limits": {"max_listed": limits.max_listed, "max_detailed": limits.max_detailed,
                   "max_reasoning_chars": limits.max_reasoning_chars, "max_flags": limits.max_flags},
    }


# --------------------------------------------------------------------------------------------
# Cost, from the calls table
# --------------------------------------------------------------------------------------------

PURPOSES = ("rubric", "detect", "verify", "preflight")

_COST_SQL = f"""
SELECT coalesce(system, '') AS system, vendor, purpose,
       count(*) AS calls,
       count(reused_from) AS reused,
       count(*) FILTER (WHERE {PAID_SQL} AND batch_id IS NOT NULL) AS batched,
       {paid_sum("cost_usd", fsum=True)}, {paid_sum("input_tokens")}, {paid_sum("cached_input_tokens")},
       {paid_sum("output_tokens")}, {paid_sum("cache_write_tokens")}, {paid_sum("cache_write_usd", fsum=True)}
FROM calls_in GROUP BY ALL
"""
"""Cost by system, vendor and purpose, by the one accounting of calls (`evalcore.call_accounting`)."""


def _cost_group(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Sums of some call groups: cost by purpose, calls, tokens, cached share (None without input)."""
    rows = list(rows)
    by_purpose = {p: math.fsum(r["cost_usd"] for r in rows if r["purpose"] == p) for p in PURPOSES}
    tin = sum(int(r["input_tokens"] or 0) for r in rows)
    cached = sum(int(r["cached_input_tokens"] or 0) for r in rows)
    calls = sum(int(r["calls"]) for r in rows)
    reused = sum(int(r["reused"]) for r in rows)
    return {
        "by_purpose": by_purpose, "cost_usd": math.fsum(r["cost_usd"] for r in rows),
        # the part of the cost paid for prompt-cache writes (warming's premium: Anthropic 1.25x input)
        "cache_write_usd": math.fsum(float(r["cache_write_usd"] or 0.0) for r in rows),
        "cache_write_tokens": sum(int(r["cache_write_tokens"] or 0) for r in rows),
        "calls": calls, "reused": reused, "paid": calls - reused, "batched": sum(int(r["batched"]) for r in rows),
        "input_tokens": tin, "cached_input_tokens": cached, "output_tokens": sum(int(r["output_tokens"] or 0) for r in rows),
        "cached_share": cached / tin if tin else None,
    }


def collect_costs(run_uri: str, lb: Leaderboard, record: RunRecord | None,
                  endpoint_override: str | None = None) -> dict[str, Any]:
    """Cost per system, per vendor and per purpose, with the cached share and the pricing mode."""
    calls = open_run(run_uri, endpoint_override).dataset("calls")
    rows: list[dict[str, Any]] = []
    if calls is not None:
        con = duckdb.connect()
        try:
            con.register("calls_in", calls)
            result = con.sql(_COST_SQL)
            names = result.columns
            rows = [dict(zip(names, r, strict=True)) for r in result.fetchall()]
        finally:
            con.close()
    for row in rows:
        row["cost_usd"] = float(row["cost_usd"] or 0.0)
    scored = {r.system: r.scored for r in lb.systems}
    systems = []
    for r in lb.systems:
        group = _cost_group(x for x in rows if x["system"] == r.system)
        group.update(system=r.system, scored=r.scored,
                     per_submission=group["cost_usd"] / r.scored if r.scored else None)
        systems.append(group)
    vendors = []
    for v in sorted({str(x["vendor"]) for x in rows}):
        group = _cost_group(x for x in rows if x["vendor"] == v)
        group["vendor"] = v
        vendors.append(group)
    total = _cost_group(rows)
    n_scored = sum(scored.values())
    total["scored"] = n_scored
    total["per_submission"] = total["cost_usd"] / n_scored if n_scored else None
    batch = record.config.batch if record is not None else None
    return {
        "systems": systems, "vendors": vendors, "total": total,
        "purposes": [p for p in PURPOSES if p != "preflight" or total["by_purpose"]["preflight"] or any(
            x["purpose"] == "preflight" for x in rows)],
        "batch_enabled": bool(batch and batch.enabled), "retry_online": bool(batch and batch.retry_online),
        "pricing": "batch" if batch and batch.enabled else "online",
    }


# --------------------------------------------------------------------------------------------
# Charts: small inline SVGs
# --------------------------------------------------------------------------------------------

_BLUE, _GREY, _RED, _AMBER = "#1f5fa8", "#a9b8c9", "#c0392b", "#e3a008"
_CATEGORY_COLORS = {"contradiction": "#c0392b", "fabricated_source": "#8e44ad", "unsupported_specific": "#d68910"}


def _x(value: float, lo: float, hi: float, left: float, width: float) -> float:
    return left + (value - lo) / (hi - lo) * width if hi > lo else left


def _svg(width: int, height: int, body: Iterable[str], label: str) -> Markup:
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">' + "".join(body) + "</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "start", cls: str = "") -> str:
    c = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{c}>{escape(text)}</text>'


def _whisker(est: Interval, y: float, left: float, width: float, color: str) -> list[str]:
    if est.low is None or est.high is None:
        return []
    x0, x1 = _x(est.low, 0, 1, left, width), _x(est.high, 0, 1, left, width)
    return [
        f'<line x1="{x0:.1f}" y1="{y:.1f}" x2="{x1:.1f}" y2="{y:.1f}" stroke="{color}" stroke-width="1.5"/>',
        f'<line x1="{x0:.1f}" y1="{y - 4:.1f}" x2="{x0:.1f}" y2="{y + 4:.1f}" stroke="{color}" stroke-width="1.5"/>',
        f'<line x1="{x1:.1f}" y1="{y - 4:.1f}" x2="{x1:.1f}" y2="{y + 4:.1f}" stroke="{color}" stroke-width="1.5"/>',
    ]


def leaderboard_chart(rows: Sequence[SystemScores]) -> Markup:
    """Per system: all-pass before the gate (light) and the gated headline (dark), with 95% CIs."""
    left, width, row_h = 210, 460, 34
    height = 40 + row_h * len(rows)
    body = [_text(left, 14, "0%", "middle", "axis"), _text(left + width, 14, "100%", "end", "axis")]
    for tick in (0.25, 0.5, 0.75):
        x = _x(tick, 0, 1, left, width)
        body.append(f'<line x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{height - 10}" class="grid"/>')
        body.append(_text(x, 14, f"{tick:.0%}", "middle", "axis"))
    for i, r in enumerate(rows):
        y = 26 + i * row_h
        body.append(_text(left - 8, y + 16, r.system, "end"))
        for k, (est, color, label) in enumerate(
            ((r.all_pass_rate, _GREY, "all-pass (before the gate)"), (r.hc_pass_rate, _BLUE, "hallucination-controlled"))
        ):
            yy = y + 4 + k * 12
            if est.value is None:
                body.append(_text(left + 4, yy + 9, "not scored", cls="axis"))
                continue
            w = _x(est.value, 0, 1, 0, width)
            body.append(f'<rect x="{left}" y="{yy}" width="{w:.1f}" height="10" fill="{color}">'
                        f"<title>{escape(r.system)}: {label} {est.text()}</title></rect>")
            body.extend(_whisker(est, yy + 5, left, width, "#222"))
    return _svg(left + width + 20, height, body, "Leaderboard: pass rates with 95% confidence intervals")


def preference_chart(lb: Leaderboard) -> Markup:
    """Self-family preference per judge (dot + 95% CI) next to the same difference on other families."""
    prefs = lb.judges.self_preference
    vals = [abs(v) for p in prefs for e in (p.delta, p.control_delta) for v in (e.value, e.low, e.high) if v is not None]
    bound = max([0.05, *vals]) * 1.15
    left, width, row_h = 150, 440, 40
    height = 40 + row_h * len(prefs)
    zero = _x(0, -bound, bound, left, width)
    body = [f'<line x1="{zero:.1f}" y1="18" x2="{zero:.1f}" y2="{height - 6}" stroke="#555"/>',
            _text(left, 14, f"{-bound:+.0%}", "start", "axis"), _text(zero, 14, "0", "middle", "axis"),
            _text(left + width, 14, f"{bound:+.0%}", "end", "axis")]
    for i, p in enumerate(prefs):
        y = 30 + i * row_h
        body.append(_text(left - 8, y + 8, f"{p.judge} ({p.family or '?'})", "end"))
        for k, (est, color) in enumerate(((p.delta, _RED), (p.control_delta, _GREY))):
            yy = y + k * 14
            if est.value is None:
                continue
            if est.low is not None and est.high is not None:
                x0, x1 = _x(est.low, -bound, bound, left, width), _x(est.high, -bound, bound, left, width)
                body.append(f'<line x1="{x0:.1f}" y1="{yy}" x2="{x1:.1f}" y2="{yy}" stroke="{color}" stroke-width="2"/>')
            cx = _x(est.value, -bound, bound, left, width)
            body.append(f'<circle cx="{cx:.1f}" cy="{yy}" r="4.5" fill="{color}"><title>'
                        f"{escape(p.judge)}: {'own family' if k == 0 else 'other families'} "
                        f"{est.text(signed=True)}</title></circle>")
    return _svg(left + width + 20, height, body, "Self-family preference per judge")


def hallucination_chart(lb: Leaderboard) -> Markup:
    """Confirmed hallucinations per system, stacked by category; material solid, minor faded."""
    systems = [r.system for r in lb.systems]
    by_sys = lb.auditor.confirmed_by_system
    totals = {s: sum(v for c in by_sys.get(s, {}).values() for v in c.values()) for s in systems}
    top = max([1, *totals.values()])
    left, width, row_h = 210, 440, 26
    height = 50 + row_h * len(systems)
    body: list[str] = []
    for i, s in enumerate(systems):
        y = 10 + i * row_h
        body.append(_text(left - 8, y + 13, s, "end"))
        x = float(left)
        for cat in sorted(_CATEGORY_COLORS):
            counts = by_sys.get(s, {}).get(cat, {})
            for kind, opacity in (("material", 1.0), ("minor", 0.45)):
                n = counts.get(kind, 0)
                if not n:
                    continue
                w = n / top * width
                body.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="16" fill="{_CATEGORY_COLORS[cat]}" '
                            f'fill-opacity="{opacity}"><title>{escape(s)}: {n} {kind} {cat}</title></rect>')
                x += w
        body.append(_text(x + 6, y + 13, str(totals[s]), cls="axis"))
    y = 20 + row_h * len(systems)
    x = float(left)
    for cat, color in sorted(_CATEGORY_COLORS.items()):
        body.append(f'<rect x="{x:.1f}" y="{y}" width="12" height="12" fill="{color}"/>')
        body.append(_text(x + 16, y + 10, cat.replace("_", " "), cls="axis"))
        x += 150
    body.append(_text(left, y + 28, "solid = material, faded = minor", cls="axis"))
    return _svg(left + width + 60, height + 10, body, "Confirmed hallucinations by category")


def _pairwise_fill(p: float) -> tuple[str, str]:
    """Cell colour for P(row beats column): white at ½, blue towards 1, red towards 0; text colour."""
    strength = min(1.0, abs(p - 0.5) * 2)
    light = 97 - 55 * strength
    hue = "212,60%" if p >= 0.5 else "5,65%"
    return f"hsl({hue},{light:.0f}%)", "#fff" if light < 62 else "#111"


def pairwise_chart(pw: Pairwise) -> Markup:
    """P(row beats column) for every two systems, in leaderboard order; separable cells outlined.

    A heatmap drawn as inline SVG (no library): each cell is shaded by P, shows it to two decimals
    and carries `data-p` / `data-separable` and a tooltip; the diagonal is blank.
    """
    n = len(pw.systems)
    cell = 46
    names = [s if len(s) <= 28 else s[:27] + "…" for s in pw.systems]
    label_w = 16 + 7 * max([len(s) for s in names] or [4])
    top = 24 + int(0.62 * 7 * max([len(s) for s in names] or [4]))
    width, height = label_w + cell * n + 16, top + cell * n + 44
    body: list[str] = []
    for j, name in enumerate(names):
        x = label_w + j * cell + cell / 2
        body.append(f'<text x="{x:.1f}" y="{top - 8}" transform="rotate(-40 {x:.1f} {top - 8})" '
                    f'text-anchor="start">{escape(name)}<title>{escape(pw.systems[j])}</title></text>')
    for i, row in enumerate(pw.systems):
        y = top + i * cell
        body.append(_text(label_w - 8, y + cell / 2 + 4, names[i], "end"))
        for j, col in enumerate(pw.systems):
            x = label_w + j * cell
            if i == j:
                body.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="#f3f5f8" stroke="#fff"/>')
                continue
            p = pw.beats[i][j]
            sep = pw.separable[i][j]
            fill, ink = _pairwise_fill(p)
            stroke = ' stroke="#111" stroke-width="3"' if sep else ' stroke="#fff"'
            weight = ";font-weight:700" if sep else ""
            title = f"{row} beats {col}: P = {p:.3f}" + (" (separably better)" if sep else "")
            body.append(
                f'<g class="pw-cell" data-row="{escape(row)}" data-col="{escape(col)}" data-p="{p:.3f}" '
                f'data-separable="{1 if sep else 0}"><rect x="{x + (1.5 if sep else 0)}" y="{y + (1.5 if sep else 0)}" '
                f'width="{cell - (3 if sep else 0)}" height="{cell - (3 if sep else 0)}" fill="{fill}"{stroke}/>'
                f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" text-anchor="middle" '
                f'style="fill:{ink}{weight}">{p:.2f}</text>'
                f"<title>{escape(title)}</title></g>"
            )
    y = top + n * cell + 18
    legend = [(0.0, "0"), (0.25, ""), (0.5, "½"), (0.75, ""), (1.0, "1")]
    for k, (p, label) in enumerate(legend):
        fill, _ = _pairwise_fill(p)
        body.append(f'<rect x="{label_w + k * 22}" y="{y}" width="22" height="12" fill="{fill}" stroke="#ccc"/>')
        if label:
            body.append(_text(label_w + k * 22 + 11, y + 24, label, "middle", "axis"))
    body.append(_text(label_w + 5 * 22 + 10, y + 10, "P(row beats column); outlined: separably better", cls="axis"))
    return _svg(max(width, label_w + 420), height, body, "Pairwise: probability that the row system beats the column system")


def heat(value: float | None) -> str:
    """Background colour of a heatmap cell (light for 0, deep blue for 1; grey when not scored)."""
    if value is None or math.isnan(value):
        return "background:#eee;color:#888"
    light = 96 - 58 * max(0.0, min(1.0, value))
    return f"background:hsl(212,60%,{light:.0f}%);color:{'#fff' if light < 60 else '#111'}"


# --------------------------------------------------------------------------------------------
# The page
# --------------------------------------------------------------------------------------------


def usd(value: float | None) -> str:
    """Dollars as the cost tables show them: two decimals, thousands separated ("—" for none)."""
    return "—" if value is None else f"${value:,.2f}"


def share(value: float | None) -> str:
    """A share as a percentage with one decimal ("—" for none)."""
    return "—" if value is None else f"{100 * value:.1f}%"


MAX_DECISIONS_LISTED = 500
"""Decisions in force listed in the adjudication section (latest first); the count is always given."""


def _json_for_script(data: Any) -> Markup:
    """JSON safe inside <script>: no '<', '>', '&' or line separators can end or confuse the tag."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return Markup(text)


def render_report(
    lb: Leaderboard, detail: Mapping[str, Any], record: Mapping[str, Any] | None = None,
    calibration: Calibration | None = None, cost: Mapping[str, Any] | None = None,
    decisions: adj.AdjudicationLoad | None = None, repeatability: Repeatability | None = None,
) -> str:
    """The whole page as one HTML string (pure: no I/O); a calibration section when one is given.

    `cost` is `collect_costs`' answer (the cost section shows the leaderboard's vendor table only
    without it); `decisions` every expert decision recorded in the run (the adjudication section).
    """
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "j2"]))
    env.filters.update(heat=heat, usd=usd, share=share)
    area_rows: dict[str, dict[str, SystemScores]] = defaultdict(dict)
    for r in lb.by_area:
        area_rows[r.system][r.area] = r
    vendors = sorted({c.vendor for r in lb.systems for c in r.cost_by_vendor} | {c.vendor for c in lb.cost_by_vendor})
    kappa = {(c.judge_a, c.judge_b): c for c in lb.judges.cohen}
    in_force = [
        {"d": d, "at": d.decided_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")}
        for d in sorted((decisions.latest() if decisions else {}).values(),
                        key=lambda d: (d.decided_at, d.decision_id), reverse=True)
    ]
    template = env.get_template("report.html.j2")
    return template.render(
        lb=lb,
        record=record or {},
        all_areas=ALL_AREAS,
        area_rows=area_rows,
        vendors=vendors,
        kappa=kappa,
        judges=[j.judge for j in lb.judges.judges],
        detail=detail,
        data_json=_json_for_script(detail),
        calibration=calibration,
        repeatability=repeatability if repeatability is not None else (calibration.repeatability if calibration else None),
        cost=cost,
        decisions=in_force,
        decisions_recorded=len(decisions.decisions) if decisions else 0,
        decision_problems=decisions.problems if decisions else [],
        max_decisions_listed=MAX_DECISIONS_LISTED,
        charts={
            "leaderboard": leaderboard_chart(lb.systems),
            "preference": preference_chart(lb),
            "hallucinations": hallucination_chart(lb),
            "pairwise": pairwise_chart(lb.pairwise) if lb.pairwise and len(lb.pairwise.systems) > 1 else None,
        },
    )


def write_report(
    run_uri: str,
    *,
    endpoint_override: str | None = None,
    leaderboard: Leaderboard | None = None,
    limits: ReportLimits = ReportLimits(),
    benchmark: str | None = None,
    corrected: bool = False,
    labels: str | None = None,
    label_seed: int | None = None,
) -> str:
    """Reduce the run (unless a leaderboard is given), build report.html in the run folder; its URI.

    `benchmark` overrides the benchmark URI of run.json (where the evidence locations are read);
    `corrected`, `labels`, `label_seed`: the label-corrected rates, as `tribunal reduce --corrected`.
    """
    lb = leaderboard or reduce_run(run_uri, endpoint_override=endpoint_override, corrected=corrected, labels=labels,
                                   label_seed=label_seed)
    run = open_run(run_uri, endpoint_override)
    record = run.read_record()
    decisions = run.read_decisions()
    evidence = EvidenceFinder(benchmark or record.benchmark.uri, record.config.input_limits, endpoint_override)
    detail = collect_detail(run_uri, lb, limits, endpoint_override, decisions=decisions.latest(), evidence=evidence)
    cost = collect_costs(run_uri, lb, record, endpoint_override)
    html = render_report(lb, detail, record.model_dump(mode="json"), load_calibration(run_uri, endpoint_override),
                         cost=cost, decisions=decisions, repeatability=run_repeatability(run_uri, write=False,
                                                                                       endpoint_override=endpoint_override))
    fs.write_bytes_atomic(run.report_html, html.encode("utf-8"), endpoint_override)
    return run.report_html
