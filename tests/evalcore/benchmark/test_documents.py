"""Document -> text: every format, scanned PDFs reported by name, the content-hash cache."""

from __future__ import annotations

import io
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.benchmark import cache, documents
from evalcore.benchmark.documents import UNREADABLE_SCAN_REASON, convert
from evalcore.errors import DocumentError
from evalcore.schema import sha256_bytes


def test_docx_keeps_paragraphs_and_table_cells_in_order(docs):
    data = docs.docx(
        ["Intro paragraph", "Closing paragraph"], table=[["Party", "Role"], ["Acme LLC", "Buyer"]]
    )
    doc = convert("psa.docx", data)
    assert doc.kind == "docx"
    assert "Intro paragraph" in doc.text
    assert "Party\tRole" in doc.text
    assert "Acme LLC\tBuyer" in doc.text
    assert doc.text.index("Acme LLC") > doc.text.index("Intro paragraph")


def test_xlsx_includes_every_sheet_with_its_name_and_readable_values(docs):
    data = docs.xlsx(
        {"Rent roll": [["Unit", "Rent"], ["1A", 2500.0]], "Notes": [["Escrow", "First American"]]}
    )
    text = convert("rent.xlsx", data).text
    assert "## Sheet: Rent roll" in text
    assert "## Sheet: Notes" in text
    assert "1A\t2500" in text  # not 2500.0
    assert "Escrow\tFirst American" in text


def test_pptx_includes_slide_titles_and_tables(docs):
    data = docs.pptx([("Deal overview", [["Price", "$4.25m"]]), ("Timeline", None)])
    text = convert("deck.pptx", data).text
    assert "## Slide 1" in text and "Deal overview" in text and "Price\t$4.25m" in text
    assert "## Slide 2" in text and "Timeline" in text


def test_eml_has_headers_body_and_attachment_names(docs):
    data = docs.eml(
        "The seller agrees to a closing on 1 May 2024.",
        subject="Re: closing",
        cc="counsel@example.com",
        attachments=["PSA_v3.pdf", "rent_roll.xlsx"],
    )
    text = convert("thread.eml", data).text
    for expected in (
        "From: seller@example.com",
        "To: buyer@example.com",
        "Cc: counsel@example.com",
        "Subject: Re: closing",
        "Date: ",
        "closing on 1 May 2024",
        "Attachments: PSA_v3.pdf, rent_roll.xlsx",
    ):
        assert expected in text


def test_eml_prefers_plain_text_and_falls_back_to_html_as_text(docs):
    both = convert("a.eml", docs.eml("plain body", html="<p>html <b>body</b></p>")).text
    assert "plain body" in both and "html body" not in both
    html_only = convert(
        "b.eml", docs.eml(html="<p>only <b>html</b></p><script>x()</script>", plain=False)
    ).text
    assert "only html" in html_only and "x()" not in html_only and "<p>" not in html_only


def test_pdf_text_layer_of_every_page_under_its_page_heading(docs):
    doc = convert("letter.pdf", docs.pdf("Page one says 1 May 2024.", "Page two says $4,250,000."))
    assert doc.text.startswith("## Page 1\nPage one says 1 May 2024.")
    assert "\n\n## Page 2\nPage two says $4,250,000." in doc.text
    assert [(p.number, p.ocr) for p in doc.pages] == [(1, False), (2, False)]


def test_unreadable_scanned_pdf_is_refused_by_name_not_converted_to_empty_text(docs):
    with pytest.raises(DocumentError) as err:
        convert("exhibits/scan.pdf", docs.scanned_pdf())
    assert err.value.file == "exhibits/scan.pdf"
    assert err.value.reason == UNREADABLE_SCAN_REASON
    assert str(err.value) == f"exhibits/scan.pdf: {UNREADABLE_SCAN_REASON}"


def test_txt_md_and_html_become_text():
    assert (
        convert("a.txt", "\ufeffline one  \r\nline two\n\n\n\nend".encode()).text
        == "line one\nline two\n\nend"
    )
    assert convert("b.md", b"# Title\n\n- item").text == "# Title\n\n- item"
    html = b"<html><head><title>x</title><style>p{}</style></head><body><h1>Head</h1><p>a <b>bold</b> word</p></body></html>"
    assert convert("c.html", html).text == "Head\na bold word"


def test_legacy_encoded_text_falls_back_to_cp1252():
    assert convert("old.txt", "Café – §4.2".encode("cp1252")).text == "Café – §4.2"


def test_binary_data_named_txt_is_refused():
    with pytest.raises(DocumentError, match="looks binary"):
        convert("x.txt", b"\x00\x01\x02")


def test_unsupported_extension_is_refused_naming_it():
    with pytest.raises(DocumentError) as err:
        convert("old.doc", b"whatever")
    assert err.value.file == "old.doc"
    assert "'.doc'" in err.value.reason and ".docx" in err.value.reason


@pytest.mark.parametrize("name", ["bad.docx", "bad.xlsx", "bad.pptx", "bad.pdf"])
def test_corrupt_file_is_refused_with_the_parsers_reason(name):
    with pytest.raises(DocumentError) as err:
        convert(name, b"this is not a real office or pdf file")
    assert err.value.file == name
    assert err.value.reason.startswith(f"cannot read {name.split('.')[1]} file: ")
    assert len(err.value.reason) > len("cannot read pdf file: ")


def test_hash_is_of_the_raw_bytes_and_kind_comes_from_the_extension(docs):
    data = docs.docx(["x"])
    doc = convert("Memo.DOCX", data)
    assert doc.sha256 == sha256_bytes(data)
    assert doc.kind == "docx"
    assert doc.size_bytes == len(data)


def test_the_same_bytes_are_converted_once(docs, monkeypatch, tmp_path):
    monkeypatch.setenv("TRIBUNAL_CACHE_DIR", str(tmp_path))
    cache.clear_cache()
    calls = []
    real = documents._CONVERTERS["docx"]
    monkeypatch.setitem(documents._CONVERTERS, "docx", lambda data: calls.append(1) or real(data))
    data = docs.docx(["Cached once"])
    first = convert("a.docx", data)
    second = convert("copy/of/a.docx", data)
    assert len(calls) == 1
    assert first.text == second.text and second.name == "copy/of/a.docx"
    assert cache.cache_stats() == {"hits": 1, "misses": 1}
    cached = list((tmp_path / "docs").rglob(f"{first.sha256}.docx{cache.ENTRY_SUFFIX}"))
    assert len(cached) == 1 and json.loads(cached[0].read_text())["content"] == first.text


def test_disk_cache_serves_a_new_process_and_can_be_turned_off(docs, monkeypatch, tmp_path):
    monkeypatch.setenv("TRIBUNAL_CACHE_DIR", str(tmp_path))
    data = docs.docx(["From disk"])
    cache.clear_cache()
    convert("a.docx", data)
    cache.clear_cache()  # as if a new process: memory empty, disk still there
    monkeypatch.setitem(documents._CONVERTERS, "docx", lambda data: pytest.fail("should come from disk"))
    assert convert("a.docx", data).text == "From disk"

    monkeypatch.setenv("TRIBUNAL_CACHE_DIR", "off")
    assert documents.documents_dir() is None


def test_aes_encrypted_pdf_that_opens_without_a_password_is_converted(docs) -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(docs.pdf("Uptime commitment: 99.9 percent."))))
    writer.encrypt(user_password="", owner_password="owner", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    assert "99.9 percent" in convert("sla.pdf", out.getvalue()).text


def test_every_library_a_converter_imports_is_a_runtime_dependency_not_only_a_test_one() -> None:
    """A plain `pip install .` must convert every format: cryptography (AES PDFs) came only with
    the test dependencies before, so the tests could not see it missing."""
    import tomllib
    from importlib.metadata import packages_distributions
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text())
    runtime = {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower() for d in pyproject["project"]["dependencies"]}
    distributions = packages_distributions()
    for module in ("docx", "openpyxl", "pptx", "pypdf", "cryptography", "bs4"):
        names = {d.lower() for d in distributions[module]}
        assert names & runtime, f"{module} ({names}) is not in [project] dependencies"


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=2000))
def test_any_real_text_is_accepted_as_text(text: str) -> None:
    assert convert("note.txt", text.encode()).text == documents._tidy(text)


@pytest.mark.parametrize("seed", range(5))
def test_random_bytes_without_nul_are_refused_as_binary(seed: int) -> None:
    import random

    rng = random.Random(seed)
    data = bytes(rng.randrange(1, 256) for _ in range(4096))
    with pytest.raises(DocumentError, match=r"file looks binary, not text \(\d+% control characters"):
        convert("memo.md", data)
