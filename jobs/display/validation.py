"""`tribunal validate` in the terminal: the summary tables, pages and OCR per document, warnings, and every problem as `file: reason`."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from evalcore.benchmark.validate import ValidationReport
from jobs.display.tables import Block, Cell, Column, TableFormat, TableSpec, WholeLine, emit


def _paged_table(report: ValidationReport, limit: int = 50) -> TableSpec:
    """Per PDF / image: pages, pages OCR'd, mean OCR confidence, pages under the threshold."""
    table = TableSpec(
        [Column("task", "id", ("task_id",)), Column("document", "id"), Column("pages", "number"),
         Column("OCR'd", "number", ("ocr_pages",)), Column("mean confidence", "number"),
         Column(f"below {report.low_confidence:.0f}", "text", ("low_confidence_pages",))],
        title="Paged documents (PDF, images)",
    )
    shown = sorted(report.paged_documents, key=lambda d: (-d.ocr_pages, d.task_id, d.document))[:limit]
    for d in shown:
        confidence = f"{d.mean_confidence:.1f}" if d.mean_confidence is not None else "-"
        low = ", ".join(map(str, d.low_confidence_pages)) or "-"
        table.add_row(d.task_id, d.document, Cell(str(d.pages), d.pages), Cell(str(d.ocr_pages), d.ocr_pages),
                      Cell(confidence, d.mean_confidence), Cell(low, ", ".join(map(str, d.low_confidence_pages))))
    if len(report.paged_documents) > limit:
        table.caption = f"{len(report.paged_documents) - limit} more in --json"
    return table


def _counts_table(title: str, label: str, counts: dict[str, int]) -> TableSpec:
    table = TableSpec([Column(label, "id"), Column("count", "number")], title=title)
    for key, value in counts.items():
        table.add_row(key, Cell(str(value), value))  # system and area names are user text, never markup
    total = sum(counts.values())
    table.add_row(Cell(Text("total", style="bold"), "total"), Cell(Text(str(total), style="bold"), total))
    return table


def validation_blocks(report: ValidationReport, *, max_missing: int = 20) -> list[Block]:
    """The summary tables, then every problem as ``file: reason`` (one line each, whatever the width)."""
    out: list[Block] = [Text.assemble(("Benchmark", "bold"), f" {report.benchmark}  ({report.n_tasks} tasks)")]
    if report.tasks_by_area:
        out.append(_counts_table("Tasks by area", "area", report.tasks_by_area))
        c = report.criteria
        out.append(f"Criteria: {c.total} in all, {c.min_per_task}-{c.max_per_task} per task (mean {c.mean_per_task:.1f})")
        out.append(_counts_table("Documents by type", "type", report.documents_by_type))
    if report.paged_documents:
        out.append(_paged_table(report))
    if report.tasks_without_documents:
        out.append(f"Tasks without source documents: {len(report.tasks_without_documents)} "
                   "(graded; the audit checks them against their instructions)")
    if report.submissions is not None:
        out.append(Text.assemble(("Submissions", "bold"), f" {report.submissions}  ({report.n_submissions} loaded)"))
        if report.submissions_by_system:
            out.append(_counts_table("Submissions by system", "system", report.submissions_by_system))
        missing = report.deliverables_missing
        out.append(f"Deliverables missing: {len(missing)} (graded as missing, not rejected)")
        out += [WholeLine(f"  {m.system} / {m.task_id}: {m.deliverable}") for m in missing[:max_missing]]
        if len(missing) > max_missing:
            out.append(f"  ... and {len(missing) - max_missing} more (see --json)")
    if report.warnings:
        out.append(Text.from_markup(f"\n[bold yellow]{len(report.warnings)} warning(s)[/bold yellow] (loaded and graded):"))
        out += [WholeLine(str(warning)) for warning in report.warnings]
    if report.problems:
        out.append(Text.from_markup(f"\n[bold red]{len(report.problems)} problem(s):[/bold red]"))
        out += [WholeLine(str(problem)) for problem in report.problems]
    else:
        out.append(Text.from_markup("\n[bold green]No problems found.[/bold green]"))
    return out


def render(report: ValidationReport, console: Console, *, max_missing: int = 20,
           fmt: TableFormat = TableFormat.TABLE) -> None:
    """Print `validation_blocks` in `fmt`; the tables fit the console's width (never cut)."""
    emit(console, validation_blocks(report, max_missing=max_missing), fmt)
