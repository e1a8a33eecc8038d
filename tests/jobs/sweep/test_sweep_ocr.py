"""A sweep over a benchmark of scans: OCR runs as Ray tasks before grading, into the OCR cache next
to the runs on S3; the driver's benchmark load recognises nothing; a re-run sends no OCR task; the
flags table cites the page of the scan.

Real parts: a local Ray cluster, moto's S3 server on 127.0.0.1, the real SDKs against emulators.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from doubles.emulators import OfflineResponder
from doubles.emulators._set import start_in_thread
from evalcore.benchmark import cache as doc_cache
from evalcore.benchmark import ocr
from evalcore.storage import fs
from evalcore.storage.store import read_table
from examples.sample_gen.scans import DEPOSITION_PAGES, scanned_pdf
from jobs.sweep.driver import run_sweep
from jobs.sweep.ocr_step import ocr_cache_uri
from jobs.sweep.options import SweepOptions
from tests.conftest import create_bucket, upload_tree
from tests.jobs.conftest import emulated_config

pytestmark = [pytest.mark.ray, pytest.mark.s3]

ALTERED = "They agreed to extend it by ninety days, but only in writing, and that letter is Exhibit 12."


def _bench(root: Path, bench) -> None:
    # Its own wording (another page order, another seed): no earlier test has OCR'd these bytes.
    data, _ = scanned_pdf([DEPOSITION_PAGES[1], DEPOSITION_PAGES[0]], seed=41)
    task = bench.task_json(
        instructions="Summarise the deposition for the trial team.",
        deliverables={"memo": "memo.md"},
        criteria=[{"id": "C-001", "title": "Price",
                   "match_criteria": "PASS if the memo states the purchase price of $4,250,000. FAIL otherwise."}],
    )
    bench.write(root / "bench" / "tasks", "litigation/deposition", task, documents={"deposition.pdf": data})
    memo = f'The purchase price was $4,250,000. The witness said: "{ALTERED}"\n'
    for system in ("sys-a", "sys-b"):
        path = root / "results" / system / "litigation" / "deposition" / "memo.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memo)


def test_sweep_ocrs_scans_as_ray_tasks_before_grading_and_cites_their_pages(
    ray_local, s3_server, tmp_path, bench, monkeypatch
) -> None:
    monkeypatch.setenv("TRIBUNAL_CACHE_DIR", str(tmp_path / "driver-cache"))  # the driver starts cold
    doc_cache.clear_cache()
    _bench(tmp_path, bench)
    bucket = create_bucket(s3_server)
    upload_tree(s3_server, tmp_path / "bench", bucket, "bench")
    upload_tree(s3_server, tmp_path / "results", bucket, "results")
    output = f"s3://{bucket}/runs"

    with start_in_thread(responder=OfflineResponder()) as emus:
        cfg = emulated_config(emus.endpoints)

        def sweep(run_id: str):
            opts = SweepOptions(benchmark=f"s3://{bucket}/bench", submissions=f"s3://{bucket}/results",
                                output=output, config=cfg, vendors="emulated", run_id=run_id, progress=False)
            return run_sweep(opts)

        engine_before = ocr.engine_pages()
        first = sweep("scans")
        # the Ray tasks recognised both pages; the driver's own load found them in the cache
        assert first.ocr["pages_ocred"] == 2 and first.ocr["pages_cached"] == 0
        assert sum(first.ocr["pages_by_node"].values()) == 2
        assert ocr.engine_pages() == engine_before
        cache = ocr_cache_uri(output)
        assert first.ocr["cache_uri"] == cache
        assert len(fs.list_files(cache, suffix=".json")) == 2
        assert first.complete == 2

        flags = read_table(first.run_uri, "flags").to_pylist()
        confirmed = [f for f in flags if f["status"] == "confirmed"]
        assert {(f["system"], f["evidence_document"], f["evidence_page"]) for f in confirmed} == {
            ("sys-a", "deposition.pdf", "Page 1"), ("sys-b", "deposition.pdf", "Page 1")}  # page 1 of this scan

        doc_cache.clear_cache()
        second = sweep("scans-again")  # a new run over the same benchmark: every page is cached
        assert second.ocr["pages_ocred"] == 0 and second.ocr["pages_cached"] == 2
        assert ocr.engine_pages() == engine_before
