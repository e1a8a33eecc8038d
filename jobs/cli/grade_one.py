"""`tribunal grade`: grade one submission of one task in plain asyncio and show everything.

No Ray: this is the rubric author's debugging loop, so it runs `evalcore.grade_submission`
directly with the chosen vendor mode and prints every verdict and flag.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console
from rich.text import Text

from evalcore.benchmark.loader import load_task
from evalcore.config.models import InputLimits, VendorMode
from evalcore.errors import SubmissionError
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.grading.scoring import AuditMode
from evalcore.schema import Deliverable, Submission, Task
from evalcore.submissions.loader import complete_deliverables, deliverable_name, read_deliverable
from evalcore.tables import Block, Cell, Column, TableSpec, emit
from evalcore.vendors.preflight import require_keys
from evalcore.vendors.stack import build_stacks
from jobs.sweep.prepare import run_config, vendor_mode


def match_deliverables(task: Task, files: list[str], limits: InputLimits | None = None) -> dict[str, Deliverable]:
    """Map files to the task's deliverables by the loader's rule (file name, then stem); a single
    file for a single-deliverable task always matches. Absent deliverables are marked missing."""
    found: dict[str, Deliverable] = {}
    for f in files:
        p = Path(f)
        if not p.is_file():
            raise SubmissionError(f, "no such file")
        name = deliverable_name(task, p.name)
        if name is None and len(task.deliverables) == 1 and len(files) == 1:
            name = next(iter(task.deliverables))
        if name is None:
            raise SubmissionError(f, f"matches none of the task's deliverables {sorted(task.deliverables.items())}")
        result = read_deliverable(name, p.name, str(p), None, limits)
        if isinstance(result, str):
            raise SubmissionError(f, result)
        found[name] = result
    return complete_deliverables(task, found)


def grade_one(
    task_dir: str, files: list[str], mode: VendorMode, audit: AuditMode, config_path: str | None
) -> GradeResult:
    """Grade one submission with the chosen vendors; returns every row."""
    cfg, _ = run_config(config_path, mode, batch=False)  # one submission in plain asyncio: online
    task = load_task(task_dir, limits=cfg.input_limits)
    for d in task.documents:  # a damaged but readable source: one line naming it
        for warning in d.warnings:
            Console(stderr=True).print(f"[yellow]warning:[/] {task_dir.rstrip('/')}/documents/{d.name}: {warning}",
                                       highlight=False)
    submission = Submission(
        system="cli", task_id=task.id, deliverables=match_deliverables(task, files, cfg.input_limits)
    )

    async def run(run_cfg: object) -> GradeResult:
        from evalcore.config.models import TribunalConfig

        assert isinstance(run_cfg, TribunalConfig)
        require_keys(run_cfg.vendors())  # a missing key is a configuration error, not 3 x N abstentions
        # the sweep's stack (`evalcore.vendors.stack`): entries on one account share one budget,
        # identical calls in flight share one request; nothing is stored before this grading
        stacks = build_stacks(run_cfg.vendors(), run_id="grade")
        try:
            return await grade_submission(task, submission, run_cfg, {n: s.vendor for n, s in stacks.items()},
                                          run_id="grade", audit_mode=audit)
        finally:
            for s in stacks.values():
                await s.vendor.aclose()

    with vendor_mode(cfg, mode) as run_cfg:
        return asyncio.run(run(run_cfg))


def render_grade(result: GradeResult, console: Console) -> None:
    """Every verdict per judge with its reasoning, every flag with its evidence, then the scores.

    Laid out by `evalcore.tables`: ids whole at any width, prose wrapped at spaces, stacked (one
    block per verdict or flag) when the console is too narrow for the columns.
    """
    verdicts = TableSpec([Column("criterion", "id"), Column("judge", "id"), Column("verdict", "id"),
                          Column("reasoning", "text")], title="Stage A: rubric verdicts", show_lines=True)
    style = {"pass": "green", "fail": "red", "abstain": "yellow"}
    for v in sorted(result.verdicts, key=lambda r: (r.criterion_id, r.judge)):
        verdicts.add_row(  # ids and the judge's reasoning are text, never markup
            v.criterion_id, v.judge, Cell(Text(v.verdict, style=style[v.verdict]), v.verdict),
            v.reasoning or v.abstain_reason or "",
        )
    blocks: list[Block] = [verdicts]
    sub = result.submission
    if not sub.audited:
        blocks.append(Text("Stage B: not audited (task score 0, or incomplete); use --audit always to debug.", style="dim"))
    elif not result.flags:
        blocks.append(Text("Stage B: no flags raised.", style="green"))
    else:
        flags = TableSpec([Column("#", "number", ("flag_index",)), Column("span", "text"), Column("category", "id"),
                           Column("evidence", "text"), Column("stage 2", "text"), Column("rationale", "text")],
                          title="Stage B: hallucination flags (stage 1 as raised, stage 2 decision)", show_lines=True,
                          key=0)
        for f in result.flags:
            page = f", {f.evidence_page}" if f.evidence_page else ""
            evidence = f"{f.evidence_document}{page}: {f.evidence_passage}" if f.evidence_document else "(no support in the sources)"
            decision = f.status + (f" / {f.materiality}" if f.materiality else "")
            flags.add_row(Cell(str(f.flag_index), f.flag_index), f.span, f.category, evidence, decision, f.rationale)
        blocks.append(flags)
    scores = TableSpec([Column("score", "id"), Column("value", "text")], title="Scores", show_header=False)
    shown = sub.model_dump(include={"status", "status_reason", "task_score", "all_pass_judges", "criterion_pass_rate",
                                    "near_pass_1", "near_pass_2", "audited", "material_flags", "minor_flags", "gated",
                                    "hc_score", "cost_usd"})
    for key, value in shown.items():
        scores.add_row(key, str(value))
    blocks.append(scores)
    emit(console, blocks)
