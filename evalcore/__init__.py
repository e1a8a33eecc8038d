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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOME = {
    "load_benchmark": "evalcore.benchmark.loader", "load_task": "evalcore.benchmark.loader",
    "load_config": "evalcore.config.load",
    "TribunalConfig": "evalcore.config.models", "VendorConfig": "evalcore.config.models",
    "VendorMode": "evalcore.config.models",
    "GradeResult": "evalcore.grading.grade", "grade_submission": "evalcore.grading.grade",
    "AuditMode": "evalcore.grading.scoring",
    **dict.fromkeys(("CallRow", "Criterion", "Deliverable", "FlagRow", "SourceDocument", "Submission",
                     "SubmissionRow", "Task", "VerdictRow"), "evalcore.schema"),
    "iter_submissions": "evalcore.submissions.loader", "load_submissions": "evalcore.submissions.loader",
}
"""Where each public name lives. The names are imported on first use (PEP 562), not with the
package: every Ray worker imports `evalcore` (a vendor actor needs its configuration and vendor
modules, never the benchmark loader or the grader), and importing all of it up front cost each
of them ~0.3 s of CPU at start-up, several times per sweep."""


def __getattr__(name: str) -> Any:
    """The public name `name`, imported from its module the first time it is asked for."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'evalcore' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


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
