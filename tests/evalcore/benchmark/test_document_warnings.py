"""Python warnings a document library raises while it reads a file become one line of that
document's warnings, naming the file where they are shown; never raw ``warnings.warn`` output
(issue 24, item 6: "raw PIL ... warnings on stderr").

The command-line side (one ``file: reason`` line from `tribunal validate`, nothing raw on stderr)
is `tests/badinputs/test_third_party_warnings.py` and the corpus case `pil-warning-in-a-source`.
"""

from __future__ import annotations

import logging
import threading
import warnings
from pathlib import Path

import pytest

from evalcore.benchmark import cache, noise
from evalcore.benchmark.documents import convert
from evalcore.benchmark.loader import load_benchmark
from tests.warning_images import PALETTE_WARNING, palette_png, plain_png


@pytest.fixture
def no_doc_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every conversion runs its library (no cached text, no cached OCR page)."""
    monkeypatch.setenv("TRIBUNAL_CACHE_DIR", "off")
    monkeypatch.setenv("TRIBUNAL_OCR_CACHE", "off")
    cache.clear_cache()


def _raw(recorded: list[warnings.WarningMessage]) -> list[str]:
    """Warnings that reached Python's display (recorded by pytest's recorder) from a document library."""
    return [str(w.message) for w in recorded if noise._library(w.filename) is not None]


def test_a_pil_warning_while_converting_an_image_is_one_warning_of_that_document_and_nothing_raw(
    no_doc_cache, recwarn
) -> None:
    document = convert("exhibit.png", palette_png())
    assert document.warnings == [f"{PALETTE_WARNING} (UserWarning from PIL)"]
    assert "Closing date" in document.text
    assert _raw(recwarn.list) == []


def test_a_decompression_bomb_warning_names_the_image_size_and_is_kept_with_the_cached_pages(
    tmp_path, monkeypatch, recwarn
) -> None:
    from PIL import Image

    monkeypatch.setenv("TRIBUNAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRIBUNAL_OCR_CACHE", raising=False)
    cache.clear_cache()
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 300_000)  # the real check, a lower threshold: 360,000 pixels
    data = plain_png("Deposit: $150,000.")
    first = convert("scan.png", data)
    cache.clear_cache()  # the next one is served from the disk cache: no library runs
    again = convert("scan.png", data)
    expected = [w for w in first.warnings if "DecompressionBombWarning from PIL" in w]
    assert len(expected) == 1 and "360000 pixels" in expected[0]  # raised twice (frame count, frames): one line
    assert again.warnings == first.warnings
    assert _raw(recwarn.list) == []


def test_the_same_warning_from_two_files_is_reported_for_each_not_once_per_process(no_doc_cache) -> None:
    a = convert("a.png", palette_png("Closing date: 1 May 2024."))
    b = convert("b.png", palette_png("Deposit: $150,000."))
    assert a.warnings == b.warnings == [f"{PALETTE_WARNING} (UserWarning from PIL)"]


def test_warnings_raised_on_several_threads_at_once_land_on_the_conversion_of_their_own_thread() -> None:
    start = threading.Barrier(8)
    results: dict[int, list[str]] = {}

    def convert_one(i: int) -> None:
        with noise.captured_warnings() as sink:
            start.wait()
            for _ in range(3):
                warnings.warn(f"file {i} is odd", UserWarning, stacklevel=1)
        results[i] = list(sink)

    threads = [threading.Thread(target=convert_one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {i: [w.split(" (")[0] for w in ws] for i, ws in results.items()} == {i: [f"file {i} is odd"] for i in range(8)}


def test_a_library_deprecation_inside_a_conversion_is_logged_not_reported_as_the_files_warning(caplog) -> None:
    with caplog.at_level(logging.DEBUG, logger="evalcore.benchmark.noise"), noise.captured_warnings() as sink:
        warnings.warn_explicit("old API", FutureWarning, "/site-packages/openpyxl/reader/excel.py", 1,
                               module="openpyxl.reader.excel")
        warnings.warn_explicit("sheet has no default style", UserWarning, "/site-packages/openpyxl/styles/stylesheet.py",
                               2, module="openpyxl.styles.stylesheet")
    assert sink == ["sheet has no default style (UserWarning from openpyxl)"]
    assert any("old API" in r.getMessage() for r in caplog.records)


def test_a_document_library_warning_outside_any_conversion_goes_to_the_log_only(caplog, recwarn) -> None:
    with noise.captured_warnings():
        pass  # installs the hook, as the first conversion of a process does
    with caplog.at_level(logging.DEBUG, logger="evalcore.benchmark.noise"):
        warnings.warn_explicit("chatter", UserWarning, "/site-packages/PIL/Image.py", 3, module="PIL.Image")
        warnings.warn_explicit("ours", UserWarning, "/work/elsewhere.py", 4, module="elsewhere")
    assert [str(w.message) for w in recwarn.list] == ["ours"]  # any other warning is shown as before
    assert any("chatter" in r.getMessage() for r in caplog.records)


def test_the_benchmark_load_names_the_file_of_each_library_warning(tmp_path: Path, bench, no_doc_cache) -> None:
    root = tmp_path / "bench"
    bench.write(root / "tasks", "area/task", documents={"exhibit.png": palette_png()})
    load = load_benchmark(str(root))
    assert [(w.file, w.reason) for w in load.warnings] == [
        (str(root / "tasks" / "area" / "task" / "documents" / "exhibit.png"), f"{PALETTE_WARNING} (UserWarning from PIL)")
    ]
    assert load.problems == []


def test_a_deliverable_a_library_warned_about_is_graded_and_the_warning_logged_with_its_file(
    tmp_path: Path, bench, no_doc_cache, caplog
) -> None:
    from evalcore.submissions.loader import read_deliverable

    path = tmp_path / "memo.png"
    path.write_bytes(palette_png("The renewal notice is due 1 March."))
    with caplog.at_level(logging.WARNING, logger="evalcore.submissions.loader"):
        deliverable = read_deliverable("memo", "memo.png", str(path), None)
    assert not isinstance(deliverable, str) and "renewal notice" in deliverable.text
    assert [r.getMessage() for r in caplog.records] == [f"{path}: {PALETTE_WARNING} (UserWarning from PIL)"]
