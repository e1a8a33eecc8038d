"""Evidence locations: a passage is cited the way a reader finds it in each kind of source."""

from __future__ import annotations

import io
from email.message import EmailMessage
from pathlib import Path

import openpyxl
import pytest

from evalcore.benchmark.documents import convert
from evalcore.benchmark.locate import Locator, locate
from evalcore.schema import SourceDocument

SAMPLE = Path(__file__).resolve().parents[3] / "examples/sample/tasks/commercial-contracts/msa-renewal/documents"


def _doc(name: str) -> tuple[SourceDocument, bytes]:
    raw = (SAMPLE / name).read_bytes()
    return convert(name, raw), raw


@pytest.fixture(scope="module")
def msa() -> Locator:
    doc, raw = _doc("DataHarbor_MSA.docx")
    return Locator(doc, raw)


@pytest.fixture(scope="module")
def workbook() -> Locator:
    doc, raw = _doc("Uptime_and_Invoices_2025.xlsx")
    return Locator(doc, raw)


def test_a_docx_passage_is_cited_by_its_heading_and_paragraph_number(msa: Locator) -> None:
    got = msa.locate("Thereafter this Agreement renews automatically for successive one-year renewal terms")
    assert got.where == 'under "12. Term and Termination", paragraph 11'
    assert msa.locate("12. Term and Termination").where == 'heading "12. Term and Termination" (paragraph 9)'
    assert msa.locate("Master Services Agreement").where == 'title "Master Services Agreement" (paragraph 1)'


def test_a_docx_table_row_is_cited_by_table_and_row(msa: Locator) -> None:
    got = msa.locate("Implementation services\t$180,000\tOne-time, invoiced 2023")
    assert got.where == 'under "5. Fees", table 1, row 3'


def test_a_passage_is_matched_across_white_space_case_and_curly_quotes(msa: Locator) -> None:
    got = msa.locate("THE  INITIAL TERM of this Agreement begins on the\nEffective Date and ends on May 31, 2026 (the \u201cInitial Term\u201d)")
    assert got.where == 'under "12. Term and Termination", paragraph 10'


def test_a_passage_the_sources_do_not_hold_is_not_located(msa: Locator) -> None:
    assert msa.locate("The term is five (5) years.").where is None
    assert not msa.locate(None).found and not msa.locate("  ").found


def test_an_xlsx_value_is_cited_by_sheet_and_cell(workbook: Locator) -> None:
    assert workbook.locate("99.41").where == "Sheet: Monthly Availability, cell B11"
    # the converter writes dates as ISO dates: the cell is found by that text
    assert workbook.locate("2025-11-12", "Sheet: Credit Claims").where == "Sheet: Credit Claims, cell B2"


def test_an_xlsx_row_is_cited_by_sheet_row_and_range(workbook: Locator) -> None:
    row = "October 2025\t2025-11-12\t19000\tPending - no response from Provider"
    assert workbook.locate(row, "Sheet: Credit Claims").where == "Sheet: Credit Claims, row 2 (A2:D2)"
    # a row quoted with its sheet's header above it is placed by the row itself (its last line)
    quoted = "Month\tClaim date\tAmount claimed (USD)\tStatus\n" + row
    assert workbook.locate(quoted).where == "Sheet: Credit Claims, row 2 (A2:D2)"


def test_an_xlsx_row_number_counts_empty_rows_the_text_leaves_out() -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Rent roll"
    ws["B2"], ws["C2"] = "Tenant", "Rent"
    ws["B7"], ws["C7"] = "Acme LLC", 12500
    buf = io.BytesIO()
    wb.save(buf)
    raw = buf.getvalue()
    doc = convert("rent.xlsx", raw)
    assert "Acme LLC\t12500" in doc.text  # the text has no empty rows: its line number is not the row
    assert locate(doc, "Acme LLC\t12500", raw=raw).where == "Sheet: Rent roll, row 7 (B7:C7)"
    assert locate(doc, "12500", raw=raw).where == "Sheet: Rent roll, cell C7"
    assert locate(doc, "Acme LLC", "Sheet: Rent roll").where == "Sheet: Rent roll"  # no bytes: the sheet only


def test_an_eml_passage_is_cited_by_message_and_header_or_body_paragraph() -> None:
    doc, raw = _doc("DataHarbor_renewal_email.eml")
    loc = Locator(doc, raw)
    message = 'message "Pinecrest renewal - June 2026" from Brett Lawson'
    assert loc.locate("Wed, 28 Jan 2026 14:20:00 -0600").where == f"{message}, header Date"
    got = loc.locate("the subscription fee for the June 1, 2026 - May 31, 2027 Renewal Term will be $1,219,800")
    assert got.where == f"{message}, body paragraph 2"
    assert loc.locate("DataHarbor_Renewal_Quote_2026.pdf").where == f"{message}, attachment list"


def test_a_quoted_message_in_an_eml_is_named_by_its_sender_and_date() -> None:
    msg = EmailMessage()
    msg["From"] = "Angela Ruiz <aruiz@pinecrest.example>"
    msg["To"] = "Brett Lawson <blawson@dataharbor.example>"
    msg["Subject"] = "RE: renewal"
    msg.set_content(
        "Brett,\n\nWe do not accept the uplift.\n\n-----Original Message-----\nFrom: Brett Lawson <blawson@dataharbor.example>\n"
        "Sent: 28 Jan 2026\nSubject: renewal\n\nHi Angela,\n\nThe fee will rise by 7% under Section 5.4.\n"
    )
    raw = msg.as_bytes()
    doc = convert("reply.eml", raw)
    loc = Locator(doc, raw)
    assert loc.locate("We do not accept the uplift.").where == 'message "RE: renewal" from Angela Ruiz, body paragraph 2'
    got = loc.locate("The fee will rise by 7% under Section 5.4.")
    assert got.where == "quoted message from Brett Lawson (28 Jan 2026), paragraph 2"


def test_a_pdf_passage_is_cited_by_page_and_ocr_pages_say_so() -> None:
    text = "## Page 1\nCover sheet\n\n## Page 2 (OCR)\nThe term is five (5) years.\n\n## Page 3\nSignatures"
    doc = SourceDocument(name="lease.pdf", kind="pdf", sha256="0", text=text)
    assert locate(doc, "The term is five (5) years.").where == "Page 2 (OCR)"
    assert locate(doc, "The term is five (5) years.", "Page 2").where == "Page 2 (OCR)"
    # found on another page than the flag cited: both are shown
    assert locate(doc, "Signatures", "Page 2").where == "Page 3 (cited as Page 2)"


def test_a_plain_text_passage_is_cited_by_line() -> None:
    doc = SourceDocument(name="notes.txt", kind="txt", sha256="0", text="Header\n\nFirst fact here.\nSecond fact here.")
    assert locate(doc, "Second fact here.").where == "line 4"
