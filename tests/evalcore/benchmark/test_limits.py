"""Input limits: each ceiling refuses with the limit's name and how to raise it, before the cost."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.benchmark import cache, limits
from evalcore.benchmark.documents import convert
from evalcore.config.load import load_config
from evalcore.config.models import InputLimits
from evalcore.errors import ConfigError, DocumentError
from tests.badinputs.build import (
    HELVETICA,
    many_criteria,
    pdf_content_bomb,
    pdf_file,
    pdf_pages,
    pdf_stream,
    pdf_text_bomb,
    text_line,
    to_unicode_font,
)


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def _sheet(rows: int, columns: int) -> bytes:
    body = b"".join(
        b'<row r="%d">%s</row>' % (r, b"".join(b"<c><v>%d</v></c>" % c for c in range(columns)))
        for r in range(1, rows + 1)
    )
    return b'<worksheet xmlns="x"><sheetData>' + body + b"</sheetData></worksheet>"


def test_unpacked_size_is_read_from_the_zip_directory_and_refused_before_anything_inflates() -> None:
    bomb = _zip({"word/document.xml": b"<w:t>" + b"A" * (3 * 2**20) + b"</w:t>"})
    assert len(bomb) < 20_000
    with pytest.raises(limits.LimitExceeded) as err:
        limits.check_file("docx", bomb, InputLimits(max_unpacked_bytes=2**20))
    reason = err.value.reason
    assert "docx unpacks to 3.0 MB" in reason and "word/document.xml alone: 3.0 MB" in reason
    assert "input_limits.max_unpacked_bytes = 1.0 MB" in reason and "decompression bomb" in reason
    assert "input_limits: {max_unpacked_bytes: 3145739}" in reason  # the value that would let it through


def test_a_file_that_is_not_a_zip_passes_the_archive_check_and_is_reported_corrupt_by_its_converter() -> None:
    limits.check_file("docx", b"not a zip", InputLimits())
    with pytest.raises(DocumentError) as err:
        convert("memo.docx", b"not a zip")
    assert err.value.reason.startswith("cannot read docx file")


def test_archive_parts_over_the_limit_are_refused_by_count() -> None:
    archive = _zip({f"p{i}.xml": b"<x/>" for i in range(12)})
    with pytest.raises(limits.LimitExceeded, match=r"archive has 12 parts, over input_limits.max_archive_members = 10"):
        limits.check_file("pptx", archive, InputLimits(max_archive_members=10))


def test_file_size_over_the_limit_is_refused_naming_the_limit() -> None:
    with pytest.raises(DocumentError) as err:
        convert("notes.txt", b"x" * 2049, InputLimits(max_file_bytes=2048))
    assert err.value.file == "notes.txt"
    assert "file is 2.0 KB, over input_limits.max_file_bytes = 2.0 KB" in err.value.reason


def test_read_limited_never_reads_more_than_one_byte_past_the_limit(tmp_path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"y" * 5000)
    assert limits.read_limited(str(path), None, InputLimits(max_file_bytes=5000)) == b"y" * 5000
    with pytest.raises(limits.LimitExceeded, match="larger than input_limits.max_file_bytes = 4.9 KB"):
        limits.read_limited(str(path), None, InputLimits(max_file_bytes=4999))


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(0, 300), columns=st.integers(1, 4), chunk=st.integers(1, 97), prefix=st.booleans())
def test_sheet_prescan_counts_every_row_and_cell_whatever_the_chunk_boundaries(
    rows: int, columns: int, chunk: int, prefix: bool
) -> None:
    xml = _sheet(rows, columns)
    if prefix:  # a namespace prefix on every element counts the same
        xml = xml.replace(b"<row", b"<x:row").replace(b"<c>", b"<x:c>").replace(b"</row", b"</x:row")
    data = _zip({"xl/worksheets/sheet1.xml": xml})
    infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    exact = InputLimits(max_sheet_rows=max(rows, 1), max_sheet_cells=max(rows * columns, 1))
    limits._count_sheet_cells(data, infos, exact, chunk_size=chunk)  # exactly at the limits: accepted
    if rows >= 2:
        with pytest.raises(limits.LimitExceeded, match="input_limits.max_sheet_rows"):
            limits._count_sheet_cells(data, infos, InputLimits(max_sheet_rows=rows - 1), chunk_size=chunk)
        with pytest.raises(limits.LimitExceeded, match="input_limits.max_sheet_cells"):
            limits._count_sheet_cells(
                data, infos, InputLimits(max_sheet_cells=rows * columns - 1), chunk_size=chunk
            )


def test_workbook_rows_over_the_limit_are_refused_while_reading_too(docs) -> None:
    data = docs.xlsx({"Ledger": [[i, i * 2] for i in range(50)]})
    with pytest.raises(DocumentError) as err:
        convert("ledger.xlsx", data, InputLimits(max_sheet_rows=20))
    assert "more than 20 rows" in err.value.reason and "input_limits.max_sheet_rows = 20" in err.value.reason
    assert "Ledger" in convert("ledger.xlsx", data, InputLimits(max_sheet_rows=50)).text


def test_source_text_over_the_limit_is_refused_with_its_length() -> None:
    with pytest.raises(limits.LimitExceeded, match=r"is 1,001 characters, over input_limits.max_source_chars = 1,000"):
        limits.check_source_text("z" * 1001, InputLimits(max_source_chars=1000))
    limits.check_source_text("z" * 1000, InputLimits(max_source_chars=1000))


def test_parser_jargon_about_huge_text_nodes_is_said_in_plain_words() -> None:
    from lxml import etree

    with pytest.raises(etree.XMLSyntaxError) as err:
        etree.fromstring(b"<a>" + b"x" * 10_000_001 + b"</a>")
    reason = limits.explain("docx", err.value)
    assert reason is not None and "XML_PARSE_HUGE" not in reason and "over 10 MB of text in one node" in reason
    assert limits.explain("docx", ValueError("File is not a zip file")) is None


def test_limits_are_configuration_and_an_unknown_limit_is_refused(tmp_path) -> None:
    cfg = tmp_path / "limits.yaml"
    cfg.write_text("input_limits: {max_sheet_rows: 500}\n")
    assert load_config(cfg).input_limits.max_sheet_rows == 500
    cfg.write_text("input_limits: {max_sheet_row: 500}\n")
    with pytest.raises(ConfigError, match="max_sheet_row"):
        load_config(cfg)


# --------------------------------------------------------------------------------------------
# PDFs: content streams measured before any page is parsed, text counted while it is extracted
# --------------------------------------------------------------------------------------------

KB = 2**10
MB = 2**20


def _reason(data: bytes, **overrides: int) -> str:
    with pytest.raises(DocumentError) as err:
        convert("exhibit.pdf", data, InputLimits(**overrides))
    assert err.value.file == "exhibit.pdf"
    return err.value.reason


def _form(content: bytes, fonts: bytes = b"") -> bytes:
    return pdf_stream(content, b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << %s>> " % fonts)


def test_a_pdf_page_inflating_past_its_content_limit_is_refused_naming_the_page_and_the_limit() -> None:
    reason = _reason(pdf_content_bomb(3, 2 * MB), max_pdf_page_content_bytes=1 * MB)
    assert reason.startswith("page 1's content streams inflate to more than 1.0 MB, over "
                             "input_limits.max_pdf_page_content_bytes = 1.0 MB: refused as a possible decompression bomb")
    assert reason.endswith("if the file is genuine, raise it in --config (input_limits: {max_pdf_page_content_bytes: <larger value>})")
    assert "Schedule C, page 3" in convert("exhibit.pdf", pdf_content_bomb(3, 2 * MB), InputLimits(max_pdf_page_content_bytes=3 * MB)).text


def test_a_stream_is_decoded_at_most_one_byte_past_the_room_left() -> None:
    from pypdf import PdfReader

    page = PdfReader(io.BytesIO(pdf_content_bomb(1, 5 * MB))).pages[0]
    bomb = page["/Contents"][1].get_object()
    measure = limits._PdfMeasure(InputLimits())
    assert measure._decode(bomb, 5 * MB - 1) is None  # pypdf's inflater stopped at the cap: nothing bigger held
    assert measure._decode(bomb, 5 * MB) == b" " * (5 * MB)


def test_pages_each_under_the_page_limit_are_refused_once_the_file_total_is_over() -> None:
    reason = _reason(pdf_content_bomb(5, 1 * MB), max_pdf_page_content_bytes=2 * MB, max_pdf_content_bytes=3 * MB)
    assert reason.startswith("PDF content streams inflate to more than 3.0 MB (reached at page 3, its own content), "
                             "over input_limits.max_pdf_content_bytes = 3.0 MB")


def test_a_form_xobject_a_page_draws_counts_toward_that_page_however_its_name_is_written() -> None:
    big_form = {b"Fm0": _form(b"q " + b" " * (2 * MB) + b" Q")}
    for drawing in (b"/Fm0 Do", b"/F#6d0 Do", b"q /Fm0 % a comment\nDo Q"):
        data = pdf_pages([[pdf_stream(text_line("The site plan is drawn below.") + drawing)]], xobjects=big_form)
        assert _reason(data, max_pdf_page_content_bytes=1 * MB).startswith("page 1's content streams inflate to more than 1.0 MB")
    # A form in the page's resources that its content never names is not drawn: not counted.
    unused = pdf_pages([[pdf_stream(text_line("The site plan is in Exhibit D."))]], xobjects=big_form)
    assert "Exhibit D" in convert("exhibit.pdf", unused, InputLimits(max_pdf_page_content_bytes=1 * MB)).text


def test_a_page_over_its_text_limit_and_a_file_over_its_total_are_refused_even_from_the_cache(monkeypatch) -> None:
    data = pdf_pages([[pdf_stream(text_line(f"Clause {n}: the Supplier shall meet the service levels."))] for n in (1, 2, 3)])
    page_over = (
        "page 1's text is more than 40 characters, over input_limits.max_pdf_page_chars = 40; "
        "if the file is genuine, raise it in --config (input_limits: {max_pdf_page_chars: <larger value>})"
    )
    file_over = "PDF text is more than 150 characters (reached at page 3), over input_limits.max_pdf_text_chars = 150"
    cache.clear_cache()
    with monkeypatch.context() as env:
        env.setenv("TRIBUNAL_CACHE_DIR", "off")
        assert _reason(data, max_pdf_page_chars=40) == page_over  # stopped while extracting
        assert _reason(data, max_pdf_text_chars=150).startswith(file_over)
    assert convert("exhibit.pdf", data, InputLimits(max_pdf_page_chars=60, max_pdf_text_chars=180)).text
    # Now cached (converted under higher limits): a run with the lower ones still refuses it.
    assert _reason(data, max_pdf_page_chars=40) == page_over
    assert _reason(data, max_pdf_text_chars=150).startswith(file_over)
    assert cache.cache_stats()["hits"] == 2


def test_a_form_drawn_thousands_of_times_is_stopped_at_the_page_text_limit() -> None:
    form = {b"Fm0": _form(text_line("Clause 7.2 applies to this schedule."), b"/Font << /F1 3 0 R >> ")}
    data = pdf_pages([[pdf_stream(b"/Fm0 Do\n" * 4000)]], xobjects=form)
    assert _reason(data, max_pdf_page_chars=10_000).startswith("page 1's text is more than 10,000 characters")
    assert convert("exhibit.pdf", data, InputLimits(max_pdf_page_chars=1_000_000)).text.count("Clause 7.2") == 4000


def test_a_font_mapping_one_code_to_hundreds_of_characters_is_refused_before_its_text_is_built() -> None:
    reason = _reason(pdf_text_bomb(1_000_000))  # 256 M characters from a 5 KB file
    assert reason.startswith("page 1's font /F1 turns one character code into up to 256 characters, so its "
                             "976.6 KB of content could become 256,007,936 characters of text, over the "
                             "67,108,864 allowed (4 per byte of input_limits.max_pdf_page_content_bytes = 16.0 MB): "
                             "refused as a possible text bomb")
    assert "(input_limits: {max_pdf_page_content_bytes: 64001984})" in reason
    # Under the expansion check (25.6 M characters at most), the text limit stops it while extracting.
    assert _reason(pdf_text_bomb(100_000)).startswith("page 1's text is more than 1,000,000 characters")


def test_an_encoding_glyph_name_pypdf_does_not_know_expands_to_the_name_itself_and_is_held_to_it() -> None:
    long_name = b"/" + b"G" * 299
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Differences [1 %s 2 /quotesinglbase] >> >>"
    bomb = pdf_pages([[pdf_stream(b"BT /F1 12 Tf (" + b"\x01" * 300_000 + b") Tj ET")]], font=font % long_name)
    assert "font /F1 turns one character code into up to 300 characters" in _reason(bomb, max_pdf_page_content_bytes=1 * MB)
    # Known glyph names and ligature maps (up to 4 characters a code) are ordinary: never refused for it.
    plain = pdf_pages([[pdf_stream(b"BT /F1 12 Tf (" + b"\x02" * 300_000 + b") Tj ET")]], font=font % b"/A")
    assert len(convert("exhibit.pdf", plain, InputLimits(max_pdf_page_content_bytes=1 * MB)).text) > 300_000
    four, cmap = to_unicode_font(4, cmap_object=5)
    ligatures = pdf_file([
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>", four,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 6 0 R >>",
        cmap, pdf_stream(b"BT /F1 12 Tf (" + b"\x01" * 200_000 + b") Tj ET"),
    ])
    assert len(convert("exhibit.pdf", ligatures, InputLimits(max_pdf_page_content_bytes=1 * MB)).text) > 800_000


def test_the_sweeps_ocr_planning_holds_a_pdf_to_the_same_limits() -> None:
    from evalcore.benchmark import ocr

    with pytest.raises(limits.LimitExceeded, match="page 1's content streams inflate to more than 16.0 MB"):
        ocr.pages_to_ocr("pdf", pdf_content_bomb(2, 20 * MB))


def test_a_task_with_more_criteria_than_the_limit_is_refused_before_any_criterion_is_built(bench) -> None:
    from evalcore.benchmark.loader import parse_task_json

    task = bench.task_json()
    many_criteria(task, 1_001)
    parsed = parse_task_json(json.dumps(task).encode())
    assert parsed.problems == [
        "task has 1,001 criteria, over input_limits.max_task_criteria = 1,000 (every criterion is judged for "
        "every submission by every judge); if the task is genuine, raise it in --config "
        "(input_limits: {max_task_criteria: 1001})"
    ]
    assert parsed.fields["criteria"] == []
    assert parse_task_json(json.dumps(task).encode(), InputLimits(max_task_criteria=1_001)).problems == []


def test_the_pdf_and_criteria_limits_are_configuration(tmp_path) -> None:
    cfg = tmp_path / "limits.yaml"
    cfg.write_text("input_limits: {max_pdf_page_content_bytes: 1000, max_pdf_content_bytes: 2000, "
                   "max_pdf_page_chars: 30, max_pdf_text_chars: 40, max_task_criteria: 5}\n")
    got = load_config(cfg).input_limits
    assert (got.max_pdf_page_content_bytes, got.max_pdf_content_bytes, got.max_pdf_page_chars,
            got.max_pdf_text_chars, got.max_task_criteria) == (1000, 2000, 30, 40, 5)


def test_a_form_pypdf_cannot_decode_is_skipped_by_the_measure_as_pypdf_skips_it() -> None:
    broken = {b"Fm0": b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Filter /NoSuchFilter /Length 4 >>\nstream\nabcd\nendstream"}
    data = pdf_pages([[pdf_stream(text_line("Exhibit E: the seal is illegible.") + b"/Fm0 Do")]], xobjects=broken)
    assert "Exhibit E: the seal is illegible." in convert("exhibit.pdf", data).text


def test_forms_naming_one_another_many_times_are_measured_once_each_not_once_per_path() -> None:
    """16 nested forms, each naming the next under 40 names: 40^15 paths, 16 forms to measure."""
    depth, fanout = 16, 40
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> "
               b"/XObject << /X0 6 0 R >> >> /Contents 4 0 R >>",
               pdf_stream(text_line("Nested exhibits follow.") + b"/X0 Do"), HELVETICA]
    for level in range(depth):
        names = b" ".join(b"/N%d" % i for i in range(fanout))
        refs = b" ".join(b"/N%d %d 0 R" % (i, 7 + level) for i in range(fanout)) if level < depth - 1 else b""
        body = b" ".join(b"/N%d Do" % i for i in range(fanout)) if level < depth - 1 else text_line("Innermost.")
        objects.append(_form(body + b" % " + names, b"/Font << /F1 5 0 R >> /XObject << %s >> " % refs))
    measure = limits._PdfMeasure(InputLimits())
    from pypdf import PdfReader

    facts = measure.page(1, PdfReader(io.BytesIO(pdf_file(objects))).pages[0])
    assert facts.shows_text and 0 < facts.content_bytes < depth * 2 * fanout * 10
