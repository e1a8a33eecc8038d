"""OCR as Ray tasks before grading: a benchmark's scans are recognised once, spread over the cluster.

Why before grading and not inside the benchmark load: the driver loads the benchmark on one
machine, and OCR is the one slow part of loading (about half a second to a second per page per
core); on a cluster the pages should be recognised by every node at once. So a sweep first lists
the benchmark's PDFs and images and finds, in the driver, which pages have no text layer and are
not cached yet (`plan_document`: reading a text layer costs ~30 ms a document, less than starting
the Ray worker a task would need; a lab benchmark of 23 PDFs is planned in 0.8 s, where one task
per document took 46 s on 2 cores), then sends those pages, a few per task, to `ocr_pages` tasks
anywhere on the cluster. Ray is started only when a page needs OCR: a benchmark without scans
spends nothing here and prints nothing. Each task writes its pages to the OCR cache next to the runs (``<output>/_ocr``,
local or S3); the benchmark load that follows finds every page there and recognises nothing.

Resume is free: cached pages are not planned again, so a re-run sends no OCR task at all.

The planning reads each document within the run's input limits (the configuration's
`input_limits`, as the benchmark load does): a file over ``max_file_bytes`` is not read whole, and
a PDF over its content or text limits is not planned at all (nothing of it is recognised: the load
that follows refuses it by name). With the default limits instead, a run that lowered them would
pay minutes of OCR for a document it then leaves out.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ray
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evalcore.benchmark import limits as input_limits
from evalcore.benchmark import ocr
from evalcore.benchmark.documents import PAGED_KINDS, kind_of
from evalcore.benchmark.loader import DOCUMENTS_FOLDER, TASKS_FOLDER
from evalcore.config.models import InputLimits
from evalcore.storage import fs
from evalcore.storage.run_folder import ocr_cache

PAGES_PER_TASK = 4
"""Pages one OCR task recognises: few enough to spread a long scan over the cluster, enough that
re-reading the document for each task (one S3 GET) stays cheap."""


@dataclass
class OcrSummary:
    """What the OCR step did before grading."""

    cache_uri: str | None
    """None: memory only (a private sweep with no named cache folder): nothing written to disk."""
    documents: int = 0
    pages_ocred: int = 0
    pages_cached: int = 0
    wall_s: float = 0.0
    pages_by_node: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-able view."""
        return dict(self.__dict__)


def ocr_cache_uri(output: str) -> str:
    """Where a sweep writing to ``output`` keeps the OCR of its benchmark's scans."""
    return ocr_cache(output)


def paged_documents(benchmark: str) -> list[tuple[str, str]]:
    """(uri, kind) of every PDF and image under the benchmark's tasks' documents/ folders."""
    root = benchmark.rstrip("/")
    tasks_root = root if fs.basename(root) == TASKS_FOLDER else fs.join(root, TASKS_FOLDER)
    if not fs.is_dir(tasks_root):
        return []
    found = []
    for uri in fs.list_files(tasks_root):
        rel = fs.relative(uri, tasks_root)
        parts = rel.split("/")
        if fs.is_hidden(rel, "input") or DOCUMENTS_FOLDER not in parts[:-1]:
            continue
        kind = kind_of(uri)
        if kind in PAGED_KINDS:
            found.append((uri, kind))
    return sorted(found)


def plan_document(uri: str, kind: str, cache_uri: str | None, limits: InputLimits) -> tuple[list[int], int]:
    """(pages of one document that still need OCR, pages already in the cache), read within the
    run's input ``limits``: a document over them plans nothing."""
    try:
        data = input_limits.read_limited(uri, None, limits)
        input_limits.check_file(kind, data, limits)
    except input_limits.LimitExceeded:  # the benchmark load refuses it by name
        return [], 0
    sha = hashlib.sha256(data).hexdigest()
    try:
        wanted = ocr.pages_to_ocr(kind, data, limits)
    except Exception:  # a corrupt file, or one over a PDF limit: the benchmark load reports it by name
        return [], 0
    with ocr.use_cache(cache_uri):
        todo = [n for n in wanted if ocr.cached_page(sha, n) is None]
    return todo, len(wanted) - len(todo)


@ray.remote(num_cpus=1, max_retries=2)
def ocr_pages(uri: str, kind: str, numbers: list[int], cache_uri: str | None) -> dict[str, Any]:
    """Recognise some pages of one document into the OCR cache; one CPU (tesseract is single-threaded).

    With no cache (``cache_uri`` None: memory only), the pages come back in the result (``held``:
    the document's hash and each page as JSON) for the driver to hold, and nothing is written."""
    data = fs.read_bytes(uri)
    t0 = time.time()
    with ocr.use_cache(cache_uri):
        pages = ocr.ocr_document_pages(kind, data, numbers)
    held = None if cache_uri is not None else [p.model_dump_json() for p in pages]
    return {"pages": len(pages), "seconds": time.time() - t0, "node": ray.get_runtime_context().get_node_id(),
            "sha": hashlib.sha256(data).hexdigest(), "held": held}


def ocr_before_grading(
    benchmark: str,
    output: str,
    console: Console,
    *,
    start_ray: Callable[[], None],
    progress: bool = True,
    cache_uri: str | None = None,
    limits: InputLimits | None = None,
    held: dict[tuple[str, int], ocr.PageText] | None = None,
) -> OcrSummary:
    """OCR every page of the benchmark that needs it into ``<output>/_ocr`` (or ``cache_uri``), on the cluster.

    ``held`` (memory only, `jobs.sweep.governance.local_caches`): no cache is read or written; the
    recognised pages are put in it instead, for the benchmark load to find (`ocr.holding`).

    ``start_ray`` attaches to the cluster (only called when a page needs OCR). Documents
    are planned within the run's input ``limits`` (defaults when None; module doc). Failures
    are recorded, not raised: a page whose task failed is recognised by the benchmark load itself,
    and a document that cannot be read at all is reported there by name.
    """
    t0 = time.time()
    summary = OcrSummary(cache_uri=None if held is not None else cache_uri or ocr_cache_uri(output))
    documents = paged_documents(benchmark)
    summary.documents = len(documents)
    if not documents:
        return summary
    limits = limits or InputLimits()
    plans = [plan_document(uri, kind, summary.cache_uri, limits) for uri, kind in documents]
    jobs: list[tuple[str, str, list[int]]] = []
    for (uri, kind), (todo, cached) in zip(documents, plans, strict=True):
        summary.pages_cached += cached
        jobs.extend((uri, kind, todo[i : i + PAGES_PER_TASK]) for i in range(0, len(todo), PAGES_PER_TASK))
    total = sum(len(numbers) for _, _, numbers in jobs)
    if total:
        start_ray()
        refs = {ocr_pages.remote(uri, kind, numbers, summary.cache_uri): (uri, numbers) for uri, kind, numbers in jobs}
        columns = (TextColumn("OCR"), BarColumn(), MofNCompleteColumn(), TextColumn("pages"), TimeElapsedColumn())
        with Progress(*columns, console=console, disable=not progress, transient=False) as bar:
            task = bar.add_task("ocr", total=total)
            pending = list(refs)
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for ref in ready:
                    uri, numbers = refs[ref]
                    try:
                        res = ray.get(ref)
                    except Exception as exc:
                        summary.failed.append(f"{uri} pages {numbers}: {type(exc).__name__}: {exc}"[:500])
                        continue
                    summary.pages_ocred += res["pages"]
                    if held is not None and res["held"] is not None:
                        for text in res["held"]:
                            page = ocr.PageText.model_validate_json(text)
                            held[(res["sha"], page.number)] = page
                    summary.pages_by_node[res["node"]] = summary.pages_by_node.get(res["node"], 0) + res["pages"]
                    bar.advance(task, res["pages"])
    summary.wall_s = time.time() - t0
    if total and (not progress or summary.failed):
        console.print(
            f"OCR: {summary.pages_ocred} page(s) recognised, {summary.pages_cached} cached, "
            f"{summary.documents} PDF/image document(s), {summary.wall_s:.1f} s",
            highlight=False,
        )
    return summary
