"""The sweep's OCR planning (Ray tasks, `jobs.sweep.ocr_step`) reads each document within the run's configured
`input_limits`, as the benchmark load does (issue 24): a document a lowered limit refuses is not
planned, so no page of it is recognised, and the load then refuses it by name. Before, the planning
used the default limits: a run that lowered them paid the OCR of documents it then left out.

Real parts: a local Ray cluster (`ray_local`), the real OCR engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from evalcore.benchmark.loader import load_benchmark
from evalcore.config.models import InputLimits
from examples.sample_gen.scans import DEPOSITION_PAGES, scanned_pdf
from jobs.sweep.ocr_step import ocr_before_grading, paged_documents, plan_document

pytestmark = pytest.mark.ray

PAGE_LIMIT = InputLimits(max_pdf_page_content_bytes=8)
"""A scan's page draws its image with a content stream of a few dozen bytes: over 8."""


def _scan_benchmark(root: Path, bench) -> Path:
    data, _ = scanned_pdf([DEPOSITION_PAGES[0]], seed=43)  # bytes no other test has OCR'd
    bench.write(root / "tasks", "litigation/deposition", documents={"deposition.pdf": data})
    return root


@pytest.mark.parametrize(
    "limits",
    [PAGE_LIMIT, InputLimits(max_file_bytes=1024)],
    ids=["pdf-page-content-limit", "file-size-limit"],
)
def test_ocr_planning_applies_the_runs_input_limits_and_plans_nothing_of_a_document_they_refuse(
    tmp_path, bench, limits
) -> None:
    root = _scan_benchmark(tmp_path / "bench", bench)
    [(uri, kind)] = paged_documents(str(root))
    cache = str(tmp_path / "ocr-cache")
    assert plan_document(uri, kind, cache, InputLimits()) == ([1], 0)  # the defaults: a scan
    assert plan_document(uri, kind, cache, limits) == ([], 0)


def test_a_benchmark_without_scans_plans_in_the_driver_starts_no_ray_and_says_nothing(tmp_path) -> None:
    """The sample's PDFs and images all have a text layer: nothing to recognise, so no Ray, no line."""
    from tests.jobs.conftest import SAMPLE

    console = Console(record=True, width=100)

    def no_ray() -> None:
        raise AssertionError("the OCR step started Ray for a benchmark with nothing to recognise")

    summary = ocr_before_grading(str(SAMPLE), str(tmp_path / "runs"), console, start_ray=no_ray, progress=False)
    assert summary.documents > 0 and (summary.pages_ocred, summary.pages_cached, summary.failed) == (0, 0, [])
    assert console.export_text() == ""


def test_a_sweeps_ocr_step_with_a_lowered_limit_recognises_nothing_and_the_load_refuses_the_document_by_name(
    ray_local, tmp_path, bench
) -> None:
    root = _scan_benchmark(tmp_path / "bench", bench)
    summary = ocr_before_grading(str(root), str(tmp_path / "runs"), Console(stderr=True), start_ray=lambda: None,
                                 progress=False, limits=PAGE_LIMIT)
    assert (summary.documents, summary.pages_ocred, summary.pages_cached, summary.failed) == (1, 0, 0, [])
    load = load_benchmark(str(root), limits=PAGE_LIMIT)
    assert [(p.file.rsplit("/", 1)[-1], "max_pdf_page_content_bytes" in p.reason) for p in load.problems] == [
        ("deposition.pdf", True)
    ]
