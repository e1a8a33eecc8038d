"""Writes the sample's source documents as real files, byte-for-byte reproducibly.

Why the care about bytes: the benchmark's content hash (recorded with every run) covers document
bytes, so rebuilding the sample must not change it. docx/xlsx are zip files whose entries carry
timestamps and whose core properties carry "created/modified" dates; PDFs carry a creation date
and a file id; e-mails carry a random MIME boundary. Each is pinned here.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, make_msgid
from pathlib import Path

import docx
import openpyxl
from docx.shared import Pt
from fpdf import FPDF
from openpyxl.styles import Font
from PIL import Image, ImageDraw, ImageFont

from .model import Document, Docx, Eml, Heading, Pdf, Sheet, Table, Txt, Xlsx

FIXED_TIME = dt.datetime(2026, 1, 5, 9, 0, 0)
"""The timestamp every generated file carries (zip entries, core properties, PDF dates)."""

_ZIP_TIME = (2026, 1, 5, 9, 0, 0)
_AUTHOR = "Tribunal sample generator"


# ------------------------------------------------------------------ text as the generator knows it


def cell_text(value: object) -> str:
    """How a spreadsheet cell reads as text (dates as ISO dates, numbers without formatting)."""
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def document_text(doc: Document) -> str:
    """The plain text of a document, as close as practical to what a converter extracts.

    The build's self-checks use it to confirm that every grounded quote occurs in its source and
    every fabricated one does not; the tests repeat those checks on text extracted from the files.
    """
    if isinstance(doc, Docx):
        parts: list[str] = [doc.title]
        for block in doc.blocks:
            if isinstance(block, Table):
                parts.extend(" | ".join(row) for row in block.rows)
            elif isinstance(block, Heading):
                parts.append(block.text)
            else:
                parts.append(block)
        return "\n".join(parts)
    if isinstance(doc, Xlsx):
        return "\n".join(_sheet_text(sheet) for sheet in doc.sheets)
    if isinstance(doc, Eml):
        head = [
            f"From: {doc.sender}",
            f"To: {', '.join(doc.to)}",
            *([f"Cc: {', '.join(doc.cc)}"] if doc.cc else []),
            f"Date: {format_datetime(doc.date)}",
            f"Subject: {doc.subject}",
        ]
        tail = [f"Attachment: {a}" for a in doc.attachments]
        return "\n".join([*head, "", doc.body, *tail])
    if isinstance(doc, Pdf):
        return "\n".join([doc.title] + [b.text if isinstance(b, Heading) else b for b in doc.blocks])
    return doc.text


def _sheet_text(sheet: Sheet) -> str:
    rows = [" | ".join(cell_text(v) for v in row) for row in sheet.rows]
    return "\n".join([f"[{sheet.title}]", *rows])


# ------------------------------------------------------------------ writers


def write_document(doc: Document, folder: Path) -> Path:
    """Write one document into `folder` under its own name; returns the path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / doc.name
    if isinstance(doc, Docx):
        path.write_bytes(_docx_bytes(doc))
    elif isinstance(doc, Xlsx):
        path.write_bytes(_xlsx_bytes(doc))
    elif isinstance(doc, Eml):
        path.write_bytes(_eml_bytes(doc))
    elif isinstance(doc, Pdf):
        path.write_bytes(_pdf_bytes(doc.title, doc.blocks))
    elif isinstance(doc, Txt):
        path.write_bytes(doc.text.encode("utf-8"))
    else:  # pragma: no cover - the union is closed
        raise TypeError(f"unknown document type {type(doc).__name__}")
    return path


def _normalise_zip(data: bytes) -> bytes:
    """Re-pack an OOXML zip with fixed entry timestamps and fixed core-property dates."""
    stamp = FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ")
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename == "docProps/core.xml":
                text = body.decode("utf-8")
                for tag in ("dcterms:created", "dcterms:modified"):
                    text = re.sub(rf"(<{tag}[^>]*>)[^<]*(</{tag}>)", rf"\g<1>{stamp}\g<2>", text)
                body = text.encode("utf-8")
            info = zipfile.ZipInfo(item.filename, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            dst.writestr(info, body)
    return out.getvalue()


def _docx_bytes(doc: Docx) -> bytes:
    document = docx.Document()
    props = document.core_properties
    props.author = _AUTHOR
    props.last_modified_by = _AUTHOR
    props.title = doc.title
    props.created = FIXED_TIME
    props.modified = FIXED_TIME
    props.last_printed = FIXED_TIME
    props.revision = 1
    style = document.styles["Normal"]
    style.font.name = "Calibri"  # type: ignore[attr-defined]
    style.font.size = Pt(11)  # type: ignore[attr-defined]
    document.add_heading(doc.title, level=0)
    for block in doc.blocks:
        if isinstance(block, Heading):
            document.add_heading(block.text, level=block.level)
        elif isinstance(block, Table):
            ncols = max(len(r) for r in block.rows)
            table = document.add_table(rows=0, cols=ncols)
            table.style = "Table Grid"
            for i, row in enumerate(block.rows):
                cells = table.add_row().cells
                for j, value in enumerate(row):
                    cells[j].text = value
                    if i == 0:
                        for run in cells[j].paragraphs[0].runs:
                            run.bold = True
        else:
            document.add_paragraph(block)
    buf = io.BytesIO()
    document.save(buf)
    return _normalise_zip(buf.getvalue())


def _xlsx_bytes(doc: Xlsx) -> bytes:
    wb = openpyxl.Workbook()
    wb.remove(wb.active)  # type: ignore[arg-type]
    wb.properties.creator = _AUTHOR
    wb.properties.created = FIXED_TIME
    wb.properties.modified = FIXED_TIME
    for sheet in doc.sheets:
        ws = wb.create_sheet(sheet.title)
        for row in sheet.rows:
            ws.append(list(row))
        for cell in ws[1]:
            cell.font = Font(bold=True)
        for column in ws.columns:
            width = max(len(cell_text(c.value)) for c in column)
            ws.column_dimensions[column[0].column_letter].width = min(60, max(10, width + 2))
            for c in column:
                if isinstance(c.value, dt.date | dt.datetime):
                    c.number_format = "yyyy-mm-dd"
    buf = io.BytesIO()
    wb.save(buf)
    return _normalise_zip(buf.getvalue())


def _eml_bytes(doc: Eml) -> bytes:
    msg = EmailMessage()
    msg["From"] = doc.sender
    msg["To"] = ", ".join(doc.to)
    if doc.cc:
        msg["Cc"] = ", ".join(doc.cc)
    msg["Date"] = format_datetime(doc.date)
    msg["Subject"] = doc.subject
    stem = re.sub(r"[^A-Za-z0-9]+", ".", Path(doc.name).stem).strip(".").lower()
    msg["Message-ID"] = make_msgid(idstring=stem, domain="sample.tribunal.invalid")
    # make_msgid embeds a timestamp and a random number: pin it to something derived from the name.
    msg.replace_header("Message-ID", f"<{stem}@sample.tribunal.invalid>")
    msg.set_content(doc.body)
    for attachment in doc.attachments:
        msg.add_attachment(
            _pdf_bytes(attachment, [f"Attachment placeholder: {attachment}"]),
            maintype="application",
            subtype="pdf",
            filename=attachment,
        )
    if doc.attachments:
        msg.set_boundary(f"==tribunal-sample-{stem}==")
    return msg.as_bytes(policy=SMTP)


def _pdf_bytes(title: str, blocks: object) -> bytes:
    pdf = FPDF(format="Letter")
    pdf.set_creation_date(FIXED_TIME)
    pdf.set_title(title)
    pdf.set_author(_AUTHOR)
    pdf.set_creator(_AUTHOR)
    pdf.set_auto_page_break(auto=True, margin=20)
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=14)
    pdf.multi_cell(0, 8, _latin1(title), new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)
    for block in blocks:  # type: ignore[attr-defined]
        if isinstance(block, Heading):
            pdf.set_font("Helvetica", style="B", size=12)
            pdf.multi_cell(0, 7, _latin1(block.text), new_x="LMARGIN", new_y="NEXT")
        else:
            pdf.set_font("Helvetica", size=10.5)
            pdf.multi_cell(0, 5.5, _latin1(str(block)), new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
    return bytes(pdf.output())


def _latin1(text: str) -> str:
    """PDF core fonts are Latin-1 only: refuse anything else loudly rather than drop characters."""
    try:
        text.encode("latin-1")
    except UnicodeEncodeError as exc:
        raise ValueError(f"PDF text must be Latin-1 (core fonts): {text[:60]!r}") from exc
    return text


def make_scanned_pdf(path: str | Path, lines: list[str] | None = None) -> Path:
    """Write a PDF that looks like a scan: one page holding only an image, no text layer.

    Loading it OCRs the page (`evalcore.benchmark.ocr`); deliberately not part of the sample
    benchmark, whose documents all have text layers. OCR tests build their scans with
    `examples/sample_gen/scans.py` (known text, skew, noise).
    """
    path = Path(path)
    text = lines or [
        "ESTOPPEL CERTIFICATE",
        "Tenant: Kestrel Biotech Inc.",
        "The Lease is in full force and effect.",
        "Signed: ____________________",
    ]
    image = Image.new("L", (1275, 1650), color=250)  # US Letter at 150 dpi, light grey paper
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    y = 150
    for line in text:
        draw.text((150, y), line, fill=20, font=font)
        y += 40
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    pdf = FPDF(format="Letter")
    pdf.set_creation_date(FIXED_TIME)
    pdf.add_page()
    pdf.image(buf, x=0, y=0, w=pdf.w, h=pdf.h)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(pdf.output()))
    return path
