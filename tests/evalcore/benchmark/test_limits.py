"""Input limits: each ceiling refuses with the limit's name and how to raise it, before the cost."""

from __future__ import annotations

import io
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.benchmark import limits
from evalcore.benchmark.documents import convert
from evalcore.config.load import load_config
from evalcore.config.models import InputLimits
from evalcore.errors import ConfigError, DocumentError


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
