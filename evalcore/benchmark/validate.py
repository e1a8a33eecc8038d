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
from rich.console import Console
from rich.table import Table
from rich.text import Text

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


def _paged_table(report: ValidationReport, limit: int = 50) -> Table:
    """Per PDF / image: pages, pages OCR'd, mean OCR confidence, pages under the threshold."""
    table = Table(title="Paged documents (PDF, images)", title_justify="left")
    for column in ("task", "document", "pages", "OCR'd", "mean confidence", f"below {report.low_confidence:.0f}"):
        table.add_column(column, justify="right" if column not in ("task", "document") else "left")
    shown = sorted(report.paged_documents, key=lambda d: (-d.ocr_pages, d.task_id, d.document))[:limit]
    for d in shown:
        confidence = f"{d.mean_confidence:.1f}" if d.mean_confidence is not None else "-"
        low = ", ".join(map(str, d.low_confidence_pages)) or "-"
        table.add_row(Text(d.task_id), Text(d.document), str(d.pages), str(d.ocr_pages), confidence, low)
    if len(report.paged_documents) > limit:
        table.caption = f"{len(report.paged_documents) - limit} more in --json"
    return table


def _counts_table(title: str, label: str, counts: dict[str, int]) -> Table:
    table = Table(title=title, title_justify="left", min_width=len(title) + 2)
    table.add_column(label)
    table.add_column("count", justify="right")
    for key, value in counts.items():
        table.add_row(Text(key), str(value))  # system and area names are user text, never markup
    table.add_row("[bold]total[/bold]", f"[bold]{sum(counts.values())}[/bold]")
    return table


def render(report: ValidationReport, console: Console, *, max_missing: int = 20) -> None:
    """Print the summary tables, then every problem as ``file: reason`` (one per line)."""
    console.print(Text.assemble(("Benchmark", "bold"), f" {report.benchmark}  ({report.n_tasks} tasks)"))
    if report.tasks_by_area:
        console.print(_counts_table("Tasks by area", "area", report.tasks_by_area))
        c = report.criteria
        console.print(
            f"Criteria: {c.total} in all, {c.min_per_task}-{c.max_per_task} per task (mean {c.mean_per_task:.1f})"
        )
        console.print(_counts_table("Documents by type", "type", report.documents_by_type))
    if report.paged_documents:
        console.print(_paged_table(report))
    if report.tasks_without_documents:
        console.print(
            f"Tasks without source documents: {len(report.tasks_without_documents)} "
            "(graded; the audit checks them against their instructions)"
        )
    if report.submissions is not None:
        console.print(Text.assemble(("Submissions", "bold"), f" {report.submissions}  ({report.n_submissions} loaded)"))
        if report.submissions_by_system:
            console.print(_counts_table("Submissions by system", "system", report.submissions_by_system))
        missing = report.deliverables_missing
        console.print(f"Deliverables missing: {len(missing)} (graded as missing, not rejected)")
        for m in missing[:max_missing]:
            console.print(f"  {m.system} / {m.task_id}: {m.deliverable}", markup=False, highlight=False)
        if len(missing) > max_missing:
            console.print(f"  ... and {len(missing) - max_missing} more (see --json)")
    if report.warnings:
        console.print(f"\n[bold yellow]{len(report.warnings)} warning(s)[/bold yellow] (loaded and graded):")
        for warning in report.warnings:
            console.print(str(warning), markup=False, highlight=False, soft_wrap=True)
    if report.problems:
        console.print(f"\n[bold red]{len(report.problems)} problem(s):[/bold red]")
        for problem in report.problems:
            console.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    else:
        console.print("\n[bold green]No problems found.[/bold green]")
