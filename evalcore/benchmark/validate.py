"""Check a benchmark (and optionally its submissions) before paying for a sweep.

Why: every problem a sweep would trip over (bad JSON, a missing documents folder, a scanned PDF, a
deliverable escaping its folder, an unknown task id) costs nothing to find here and real money or
a misleading leaderboard to find later. ``validate`` loads everything with the same loaders the
sweep uses, so what it accepts is exactly what would be graded, and reports every problem at once.
"""

from __future__ import annotations

from collections import Counter
from statistics import mean

from pydantic import BaseModel, Field

from evalcore.benchmark import ocr
from evalcore.benchmark.loader import DOCUMENTS_FOLDER, TASKS_FOLDER, BenchmarkLoad, load_benchmark
from evalcore.config.models import InputLimits, OcrConfig
from evalcore.errors import EndpointUnreachable, TribunalError
from evalcore.schema import Rejection, Submission
from evalcore.storage import fs
from evalcore.submissions.loader import iter_submissions


class CriteriaStats(BaseModel):
    """How many criteria the loaded tasks have."""

    total: int = 0
    min_per_task: int = 0
    max_per_task: int = 0
    mean_per_task: float = 0.0


class MissingDeliverable(BaseModel):
    """A deliverable a task expects that a submission does not provide (graded as missing)."""

    system: str
    task_id: str
    deliverable: str


class PagedDocument(BaseModel):
    """A PDF or image of a task: its pages, how many were OCR'd, and how confidently."""

    task_id: str
    document: str = Field(description="Path under the task's documents/ folder.")
    pages: int
    ocr_pages: int
    mean_confidence: float | None = Field(default=None, description="Mean OCR confidence of its OCR'd pages, 0-100.")
    low_confidence_pages: list[int] = Field(default_factory=list)


class ValidationReport(BaseModel):
    """What was found: summary counts and every problem (``file: reason``)."""

    benchmark: str
    submissions: str | None = None
    benchmark_hash: str = Field(default="", description="BenchmarkLoad.content_hash() of the loaded tasks.")
    n_tasks: int = 0
    tasks_by_area: dict[str, int] = Field(default_factory=dict)
    criteria: CriteriaStats = Field(default_factory=CriteriaStats)
    n_documents: int = 0
    documents_by_type: dict[str, int] = Field(default_factory=dict)
    n_submissions: int = 0
    submissions_by_system: dict[str, int] = Field(default_factory=dict)
    deliverables_missing: list[MissingDeliverable] = Field(default_factory=list)
    paged_documents: list[PagedDocument] = Field(default_factory=list, description="Every PDF and image, with its OCR.")
    low_confidence: float = Field(default=70.0, description="OCR confidence under which a page is a warning.")
    tasks_without_documents: list[str] = Field(
        default_factory=list, description="Graded, with the instructions as the audit's only source."
    )
    warnings: list[Rejection] = Field(
        default_factory=list, description="Loaded, but worth a look: damaged files, low-confidence OCR pages."
    )
    problems: list[Rejection] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing was rejected (the CLI exits 0)."""
        return not self.problems


def _benchmark_summary(report: ValidationReport, load: BenchmarkLoad) -> None:
    report.benchmark_hash = load.content_hash()
    report.n_tasks = len(load.tasks)
    report.tasks_by_area = dict(sorted(Counter(t.area for t in load.tasks).items()))
    counts = [len(t.criteria) for t in load.tasks]
    if counts:
        report.criteria = CriteriaStats(
            total=sum(counts), min_per_task=min(counts), max_per_task=max(counts), mean_per_task=mean(counts)
        )
    kinds = Counter(d.kind for t in load.tasks for d in t.documents)
    report.n_documents = sum(kinds.values())
    report.documents_by_type = dict(sorted(kinds.items()))
    report.tasks_without_documents = [t.id for t in load.tasks if not t.documents]
    report.warnings.extend(load.warnings)
    tasks_root = fs.join(load.root, TASKS_FOLDER)
    for t in load.tasks:
        for d in t.documents:
            if not d.pages:
                continue
            low = [p for p in d.pages if p.ocr and p.confidence is not None and p.confidence < report.low_confidence]
            facts = ocr.describe(d.pages)
            report.paged_documents.append(
                PagedDocument(task_id=t.id, document=d.name, low_confidence_pages=[p.number for p in low], **facts)
            )
            report.warnings.extend(
                Rejection(
                    file=fs.join(tasks_root, t.id, DOCUMENTS_FOLDER, d.name),
                    reason=f"page {p.number}: OCR confidence {p.confidence:.0f} is below {report.low_confidence:.0f}; "
                    "check its text (or provide a better scan or a text version)",
                    task_id=t.id,
                )
                for p in low
            )


def validate(
    benchmark_uri: str,
    submissions_uri: str | None = None,
    *,
    endpoint_override: str | None = None,
    limits: InputLimits | None = None,
    low_confidence: float = OcrConfig().low_confidence,
) -> ValidationReport:
    """Load the benchmark (and submissions, if given) and summarise; never raises for bad input.

    ``limits`` are the run's input limits (``TribunalConfig.input_limits``): a file a sweep would
    refuse as too large is reported here too. Warnings (damaged but readable files, OCR'd pages
    under ``low_confidence``) are listed but are not problems: those documents are graded.
    """
    report = ValidationReport(benchmark=benchmark_uri, submissions=submissions_uri, low_confidence=low_confidence)
    try:
        load = load_benchmark(benchmark_uri, endpoint_override=endpoint_override, limits=limits)
    except EndpointUnreachable as exc:  # the endpoint, not one file: nothing else can be checked
        report.problems.append(Rejection(file=exc.file, reason=exc.reason))
        return report
    except TribunalError as exc:  # e.g. an unsupported URI scheme
        report.problems.append(Rejection(file=benchmark_uri, reason=str(exc)))
        return report
    _benchmark_summary(report, load)
    report.problems.extend(load.problems)
    if submissions_uri is None:
        return report

    by_system: Counter[str] = Counter()
    try:
        for item in iter_submissions(
            submissions_uri,
            load.task_map(),
            excluded=load.excluded_task_ids(),
            endpoint_override=endpoint_override,
            limits=limits,
        ):
            if isinstance(item, Submission):
                by_system[item.system] += 1
                report.deliverables_missing.extend(
                    MissingDeliverable(system=item.system, task_id=item.task_id, deliverable=d.name)
                    for d in item.deliverables.values()
                    if d.missing
                )
            else:
                report.problems.append(item)
    except EndpointUnreachable as exc:
        report.problems.append(Rejection(file=exc.file, reason=exc.reason))
    except TribunalError as exc:
        report.problems.append(Rejection(file=submissions_uri, reason=str(exc)))
    report.n_submissions = sum(by_system.values())
    report.submissions_by_system = dict(sorted(by_system.items()))
    return report


