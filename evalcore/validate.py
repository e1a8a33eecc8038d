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

from evalcore.benchmark.loader import BenchmarkLoad, load_benchmark
from evalcore.config import InputLimits
from evalcore.errors import TribunalError
from evalcore.schema import Rejection, Submission
from evalcore.submissions import iter_submissions


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


def validate(
    benchmark_uri: str,
    submissions_uri: str | None = None,
    *,
    endpoint_override: str | None = None,
    limits: InputLimits | None = None,
) -> ValidationReport:
    """Load the benchmark (and submissions, if given) and summarise; never raises for bad input.

    ``limits`` are the run's input limits (``TribunalConfig.input_limits``): a file a sweep would
    refuse as too large is reported here too.
    """
    report = ValidationReport(benchmark=benchmark_uri, submissions=submissions_uri)
    try:
        load = load_benchmark(benchmark_uri, endpoint_override=endpoint_override, limits=limits)
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
    except TribunalError as exc:
        report.problems.append(Rejection(file=submissions_uri, reason=str(exc)))
    report.n_submissions = sum(by_system.values())
    report.submissions_by_system = dict(sorted(by_system.items()))
    return report


def _counts_table(title: str, label: str, counts: dict[str, int]) -> Table:
    table = Table(title=title, title_justify="left", min_width=len(title) + 2)
    table.add_column(label)
    table.add_column("count", justify="right")
    for key, value in counts.items():
        table.add_row(key, str(value))
    table.add_row("[bold]total[/bold]", f"[bold]{sum(counts.values())}[/bold]")
    return table


def render(report: ValidationReport, console: Console, *, max_missing: int = 20) -> None:
    """Print the summary tables, then every problem as ``file: reason`` (one per line)."""
    console.print(f"[bold]Benchmark[/bold] {report.benchmark}  ({report.n_tasks} tasks)", highlight=False)
    if report.tasks_by_area:
        console.print(_counts_table("Tasks by area", "area", report.tasks_by_area))
        c = report.criteria
        console.print(
            f"Criteria: {c.total} in all, {c.min_per_task}-{c.max_per_task} per task (mean {c.mean_per_task:.1f})"
        )
        console.print(_counts_table("Documents by type", "type", report.documents_by_type))
    if report.submissions is not None:
        console.print(
            f"[bold]Submissions[/bold] {report.submissions}  ({report.n_submissions} loaded)", highlight=False
        )
        if report.submissions_by_system:
            console.print(_counts_table("Submissions by system", "system", report.submissions_by_system))
        missing = report.deliverables_missing
        console.print(f"Deliverables missing: {len(missing)} (graded as missing, not rejected)")
        for m in missing[:max_missing]:
            console.print(f"  {m.system} / {m.task_id}: {m.deliverable}", markup=False, highlight=False)
        if len(missing) > max_missing:
            console.print(f"  ... and {len(missing) - max_missing} more (see --json)")
    if report.problems:
        console.print(f"\n[bold red]{len(report.problems)} problem(s):[/bold red]")
        for problem in report.problems:
            console.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    else:
        console.print("\n[bold green]No problems found.[/bold green]")
