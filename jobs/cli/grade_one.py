"""`tribunal grade`: grade one submission of one task in plain asyncio and show everything.

No Ray: this is the rubric author's debugging loop, so it runs `evalcore.grade_submission`
directly with the chosen vendor mode and prints every verdict and flag.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console

from evalcore.benchmark.loader import load_task
from evalcore.config.models import InputLimits, VendorMode
from evalcore.errors import SubmissionError
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.grading.scoring import AuditMode
from evalcore.schema import Deliverable, Submission, Task
from evalcore.submissions.loader import complete_deliverables, deliverable_name, read_deliverable
from evalcore.vendors.preflight import require_keys
from evalcore.vendors.stack import build_stacks
from jobs.sweep.governance import governed_command_caches
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
    with governed_command_caches(cfg):  # converted text where data_governance says, never ~/.cache if private
        task = load_task(task_dir, limits=cfg.input_limits)
    for d in task.documents:  # a damaged but readable source: one line naming it
        for warning in d.warnings:
            Console(stderr=True).print(f"[yellow]warning:[/] {task_dir.rstrip('/')}/documents/{d.name}: {warning}",
                                       highlight=False)
    with governed_command_caches(cfg):
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


