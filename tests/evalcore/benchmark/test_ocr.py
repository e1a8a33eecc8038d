"""OCR of scans: image-only PDFs and images become paged text, mixed PDFs OCR only their scans,
the OCR of a document is cached by content hash, damaged files are one warning line.

The scans are built here from known text (typeset, skewed, speckled, blurred, wrapped as an
image-only PDF: `examples/sample_gen/scans.py`), so recognition is measured against the truth.
"""

from __future__ import annotations

import hashlib
import io
import shutil
from pathlib import Path

import pytest

from evalcore.benchmark import cache, ocr
from evalcore.benchmark.documents import UNREADABLE_SCAN_REASON, convert
from evalcore.benchmark.pages import HEADING, page_at, page_labels
from evalcore.errors import DocumentError
from examples.sample_gen.scans import (
    DEPOSITION_PAGES,
    image_bytes,
    pdf_of,
    render_page,
    scanned_pdf,
    word_accuracy,
)


@pytest.fixture
def fresh_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Empty text and OCR caches for this test only (so the engine really runs)."""
    monkeypatch.setenv("TRIBUNAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRIBUNAL_OCR_CACHE", raising=False)
    cache.clear_cache()
    yield tmp_path / "cache"
    cache.clear_cache()


@pytest.fixture(scope="module")
def deposition() -> tuple[bytes, list[str]]:
    return scanned_pdf()


def _body(text: str) -> str:
    return HEADING.sub("", text)


def test_tessdata_model_is_found_from_the_installed_package() -> None:
    folder = Path(ocr.tessdata_path())
    assert (folder / "eng.traineddata").is_file()


def test_image_only_pdf_is_ocred_page_by_page_with_at_least_98_percent_word_accuracy(fresh_caches, deposition):
    data, truth = deposition
    doc = convert("exhibits/deposition.pdf", data)
    assert [p.number for p in doc.pages] == [1, 2]
    assert all(p.ocr for p in doc.pages)
    assert all(p.confidence is not None and p.confidence > 70 for p in doc.pages)
    assert page_labels(doc.text) == ["Page 1", "Page 2"]
    assert doc.text.startswith("## Page 1 (OCR)\n")
    assert word_accuracy("\n".join(truth), _body(doc.text)) >= 0.98
    # each page's text is under its own heading
    assert page_at(doc.text, doc.text.index("$4,250,000")) == "Page 1"
    assert page_at(doc.text, doc.text.index("forty-five days")) == "Page 2"


def test_mixed_pdf_ocrs_only_its_image_pages(fresh_caches):
    typed = "SUPPLY AGREEMENT\nThe Seller shall deliver the Goods by 30 June 2021 to the Buyer's warehouse."
    data = pdf_of([typed, render_page(DEPOSITION_PAGES[1], seed=3), typed.replace("30 June", "31 July")])
    before = ocr.engine_pages()
    doc = convert("mixed.pdf", data)
    assert ocr.engine_pages() - before == 1
    assert [(p.number, p.ocr) for p in doc.pages] == [(1, False), (2, True), (3, False)]
    assert page_labels(doc.text) == ["Page 1", "Page 2", "Page 3"]
    assert "## Page 2 (OCR)" in doc.text
    assert page_at(doc.text, doc.text.index("30 June 2021")) == "Page 1"
    assert page_at(doc.text, doc.text.index("warehouse manager")) == "Page 2"
    assert page_at(doc.text, doc.text.index("31 July 2021")) == "Page 3"


def test_ocr_cache_is_hit_on_the_second_load_with_no_engine_call(fresh_caches, deposition):
    data, _ = deposition
    first = convert("deposition.pdf", data)
    cache.clear_cache()  # the converted-text cache forgets: only the OCR cache can answer
    shutil.rmtree(fresh_caches / "docs", ignore_errors=True)
    before = ocr.engine_pages()
    second = convert("deposition.pdf", data)
    assert ocr.engine_pages() == before
    assert second.text == first.text and second.pages == first.pages
    cached = sorted(p.name for p in (fresh_caches / "ocr").rglob("*.json"))
    sha = first.sha256
    assert cached == [f"{sha}-p00001.json", f"{sha}-p00002.json"]


def test_ocr_cache_can_live_under_an_explicit_folder(tmp_path, fresh_caches, deposition):
    data, _ = deposition
    target = tmp_path / "next-to-the-run" / "_ocr"
    with ocr.use_cache(str(target)):
        assert ocr.cached_page("0" * 64, 1) is None
        pages = ocr.ocr_document_pages("pdf", data, [2])
    assert [p.number for p in pages] == [2]
    assert len(list(target.rglob("*-p00002.json"))) == 1
    with ocr.use_cache(str(target)):
        hit = ocr.cached_page(hashlib.sha256(data).hexdigest(), 2)
    assert hit == pages[0]


def test_image_documents_load_as_ocred_pages_png_and_multi_page_tiff(fresh_caches):
    page_one = render_page(DEPOSITION_PAGES[0], seed=11)
    png = convert("scans/letter.png", image_bytes(page_one))
    assert png.kind == "png" and [(p.number, p.ocr) for p in png.pages] == [(1, True)]
    assert "$4,250,000" in png.text

    buf = io.BytesIO()
    page_two = render_page(DEPOSITION_PAGES[1], seed=12)
    page_one.save(buf, format="TIFF", save_all=True, append_images=[page_two], compression="tiff_deflate")
    tiff = convert("fax.tif", buf.getvalue())
    assert tiff.kind == "tiff" and [p.number for p in tiff.pages] == [1, 2]
    assert page_at(tiff.text, tiff.text.index("forty-five days")) == "Page 2"

    jpg = convert("photo.jpeg", image_bytes(page_one.convert("RGB"), "JPEG"))
    assert jpg.kind == "jpg" and "Kestrel Biotech" in jpg.text


def test_a_scan_with_no_readable_text_on_any_page_is_refused_by_name(fresh_caches, docs):
    with pytest.raises(DocumentError) as err:
        convert("exhibits/scan.pdf", docs.scanned_pdf())
    assert err.value.file == "exhibits/scan.pdf"
    assert err.value.reason == UNREADABLE_SCAN_REASON


def test_damaged_but_readable_pdf_is_one_warning_line_and_no_raw_parser_output(fresh_caches, docs, capfd):
    data = docs.pdf("Closing date: 1 May 2024.", "Deposit: $150,000.")
    marker = data.rindex(b"startxref")
    damaged = data[:marker] + b"startxref\n1\n%%EOF\n"  # a wrong xref pointer: pypdf repairs it
    doc = convert("exhibits/damaged.pdf", damaged)
    assert "1 May 2024" in doc.text and "$150,000" in doc.text
    assert len(doc.warnings) == 1
    assert doc.warnings[0].startswith("damaged but readable")
    assert "startxref" in doc.warnings[0]
    out, err = capfd.readouterr()
    assert "startxref" not in out + err
    # served from the cache, the warning is still there
    assert convert("exhibits/damaged.pdf", damaged).warnings == doc.warnings
