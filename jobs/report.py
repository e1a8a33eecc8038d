"""`tribunal report RUN`: one self-contained report.html for a run (works offline, no CDN).

The page holds everything inline: CSS, a small script, SVG charts drawn here in Python, and the
drill-down data as JSON. Sections: leaderboard with 95% intervals (gated vs ungated), per-area
heatmap, judge agreement, self-family preference, hallucinations by category, calibration against
expert labels (when `tribunal calibrate` wrote calibration.json into the run), cost by vendor, and a
drill-down from a system to its tasks to one submission's verdicts (every judge's reasoning) and
confirmed flags (span and source evidence).

Size. A sweep-sized run has 100,000 submissions and 16.5 M verdicts: the page cannot embed them all.
`ReportLimits` caps the per-task rows listed and the submissions embedded with full detail
(flagged and incomplete submissions first, then by task id, spread evenly over systems); the page
states the caps whenever they cut something. The aggregate sections always cover the whole run.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from evalcore.results.calibrate import Calibration
from evalcore.results.leaderboard import ALL_AREAS, Leaderboard, SystemScores
from evalcore.results.reduce import current_gradings
from evalcore.results.stats import Interval
from evalcore.storage import fs
from jobs.calibrate import load_calibration
from jobs.reduce import open_table, read_run_record, reduce_run

REPORT_HTML = "report.html"
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


def _filtered(source: pa.Table | pads.Dataset | None, ids: Sequence[str], columns: list[str]) -> list[dict[str, Any]]:
    if source is None or not ids:
        return []
    expr = pc.field("grading_id").isin(pa.array(list(ids), type=pa.string()))
    if isinstance(source, pads.Dataset):
        table = source.to_table(columns=columns, filter=expr)
    else:
        table = source.filter(expr).select(columns)
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def collect_detail(
    run_uri: str, lb: Leaderboard, limits: ReportLimits = ReportLimits(), endpoint_override: str | None = None
) -> dict[str, Any]:
    """The drill-down data embedded in the page: per-system task rows and detailed submissions."""
    submissions = open_table(run_uri, "submissions", endpoint_override)
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
    verdicts = _filtered(open_table(run_uri, "verdicts", endpoint_override), ids,
                         ["grading_id", "criterion_id", "judge", "verdict", "reasoning", "abstain_reason"])
    flags = _filtered(open_table(run_uri, "flags", endpoint_override), ids,
                      ["grading_id", "flag_index", "deliverable", "span", "location", "category", "evidence_document",
                       "evidence_page", "evidence_passage", "explanation", "origin", "status", "materiality", "rationale"])
    judge_order = [j.judge for j in lb.judges.judges]
    crit: dict[str, dict[str, dict[str, list[Any]]]] = defaultdict(lambda: defaultdict(dict))
    truncated = False
    for v in verdicts:
        text = v["reasoning"] or ""
        if len(text) > limits.max_reasoning_chars:
            text, truncated = text[: limits.max_reasoning_chars] + " […]", True
        crit[v["grading_id"]][v["criterion_id"]][v["judge"]] = [v["verdict"], text, v["abstain_reason"]]
    flags_by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    other_flags: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for f in sorted(flags, key=lambda f: (f["grading_id"], f["flag_index"])):
        if f["status"] == "confirmed":
            flags_by[f["grading_id"]].append({k: f[k] for k in f if k != "grading_id"})
        else:
            other_flags[f["grading_id"]][f["status"]] += 1
    details: dict[str, Any] = {}
    for row in cur_rows:
        gid = row["grading_id"]
        if gid not in detailed:
            continue
        criteria = [[cid, [by_judge.get(j) for j in judge_order]] for cid, by_judge in sorted(crit[gid].items())]
        details[gid] = {
            "system": row["system"], "task": row["task_id"], "status": row["status"],
            "reason": row["status_reason"], "criteria": criteria, "flags": flags_by.get(gid, []),
            "other_flags": dict(other_flags.get(gid, {})),
        }
    systems: dict[str, list[list[Any]]] = {}
    for system in sorted(by_system):
        rows = sorted((r for r in by_system[system] if r["grading_id"] in listed), key=lambda r: r["task_id"])
        systems[system] = [
            [r["task_id"], r["status"], r["hc_score"], r["task_score"], r["criterion_pass_rate"],
             r["material_flags"], r["minor_flags"], bool(r["gated"]), r["grading_id"] if r["grading_id"] in detailed else None]
            for r in rows
        ]
    return {
        "judges": judge_order,
        "systems": systems,
        "totals": {s: len(rows) for s, rows in by_system.items()},
        "details": details,
        "n_submissions": len(cur_rows),
        "n_listed": sum(len(v) for v in systems.values()),
        "n_detailed": len(details),
        "reasoning_truncated": truncated,
        "limits": {"max_listed": limits.max_listed, "max_detailed": limits.max_detailed,
                   "max_reasoning_chars": limits.max_reasoning_chars},
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


def heat(value: float | None) -> str:
    """Background colour of a heatmap cell (light for 0, deep blue for 1; grey when not scored)."""
    if value is None or math.isnan(value):
        return "background:#eee;color:#888"
    light = 96 - 58 * max(0.0, min(1.0, value))
    return f"background:hsl(212,60%,{light:.0f}%);color:{'#fff' if light < 60 else '#111'}"


# --------------------------------------------------------------------------------------------
# The page
# --------------------------------------------------------------------------------------------


def _json_for_script(data: Any) -> Markup:
    """JSON safe inside <script>: no '<', '>', '&' or line separators can end or confuse the tag."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return Markup(text)


def render_report(
    lb: Leaderboard, detail: Mapping[str, Any], record: Mapping[str, Any] | None = None,
    calibration: Calibration | None = None,
) -> str:
    """The whole page as one HTML string (pure: no I/O); a calibration section when one is given."""
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "j2"]))
    env.filters.update(heat=heat)
    area_rows: dict[str, dict[str, SystemScores]] = defaultdict(dict)
    for r in lb.by_area:
        area_rows[r.system][r.area] = r
    vendors = sorted({c.vendor for r in lb.systems for c in r.cost_by_vendor} | {c.vendor for c in lb.cost_by_vendor})
    kappa = {(c.judge_a, c.judge_b): c for c in lb.judges.cohen}
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
        charts={
            "leaderboard": leaderboard_chart(lb.systems),
            "preference": preference_chart(lb),
            "hallucinations": hallucination_chart(lb),
        },
    )


def write_report(
    run_uri: str,
    *,
    endpoint_override: str | None = None,
    leaderboard: Leaderboard | None = None,
    limits: ReportLimits = ReportLimits(),
) -> str:
    """Reduce the run (unless a leaderboard is given), build report.html in the run folder; its URI."""
    lb = leaderboard or reduce_run(run_uri, endpoint_override=endpoint_override)
    record = read_run_record(run_uri, endpoint_override)
    detail = collect_detail(run_uri, lb, limits, endpoint_override)
    html = render_report(lb, detail, record.model_dump(mode="json"), load_calibration(run_uri, endpoint_override))
    uri = fs.join(run_uri, REPORT_HTML)
    fs.write_bytes_atomic(uri, html.encode("utf-8"), endpoint_override)
    return uri
