"""evalcore: Tribunal's pure library (no Ray). The public surface is re-exported here.

    import asyncio, evalcore
    config = evalcore.load_config(vendors=evalcore.VendorMode.OFFLINE)
    bench = evalcore.load_benchmark("examples/sample")
    subs = evalcore.load_submissions("examples/sample/submissions", bench.task_map())
    s = subs.submissions[0]
    result = asyncio.run(evalcore.grade_submission(bench.task_map()[s.task_id], s, config))
    result.submission.hc_score, result.verdicts, result.flags, result.calls   # typed rows
"""

from __future__ import annotations

from evalcore.benchmark.loader import load_benchmark, load_task
from evalcore.config.load import load_config
from evalcore.config.models import TribunalConfig, VendorConfig, VendorMode
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.grading.scoring import AuditMode
from evalcore.schema import (
    CallRow,
    Criterion,
    Deliverable,
    FlagRow,
    SourceDocument,
    Submission,
    SubmissionRow,
    Task,
    VerdictRow,
)
from evalcore.submissions.loader import iter_submissions, load_submissions

__version__ = "0.1.0"

__all__ = [
    "AuditMode",
    "CallRow",
    "Criterion",
    "Deliverable",
    "FlagRow",
    "GradeResult",
    "SourceDocument",
    "Submission",
    "SubmissionRow",
    "Task",
    "TribunalConfig",
    "VendorConfig",
    "VendorMode",
    "VerdictRow",
    "grade_submission",
    "iter_submissions",
    "load_benchmark",
    "load_config",
    "load_submissions",
    "load_task",
]
