"""Scanned documents built from known text: what an OCR test or benchmark needs as ground truth.

A real legal file is full of scans (signed agreements, faxed letters, deposition transcripts), but
no public scan ships here, so tests and `benchmarks/ocr.py` build them: the known text is typeset
(fpdf2, Times; no system font needed) and rasterised at 300 dpi, then Pillow makes it a scan:
off-white paper, a small skew, salt-and-pepper noise and a slight blur; the page is wrapped as an
image-only PDF (no text layer) or saved as an image. The text is returned with the file, so word accuracy can
be measured exactly.
"""

from __future__ import annotations

import datetime as dt
import io
import random

from fpdf import FPDF
from PIL import Image, ImageFilter

DPI = 300
PAGE_PX = (int(8.5 * DPI), int(11 * DPI))  # US Letter

DEPOSITION_PAGES: list[str] = [
    "DEPOSITION OF MARGARET ELLISON\n"
    "Taken on March 14, 2024 at the offices of Harlow & Finch LLP.\n"
    "Q. Please state your position at Kestrel Biotech Inc.\n"
    "A. I was the Chief Financial Officer from June 2019 until August 2023.\n"
    "Q. Did you sign the supply agreement dated January 8, 2021?\n"
    "A. Yes. I signed it on behalf of the company after the board approved it.\n"
    "Q. What was the purchase price stated in that agreement?\n"
    "A. The purchase price was $4,250,000, payable in three installments.",
    "Q. When did you first learn of the shipment delays?\n"
    "A. The warehouse manager told me on October 2, 2022 that the pallets were held at the port.\n"
    "Q. Did you tell the buyer about the delay?\n"
    "A. I called their general counsel the next morning and followed up by letter.\n"
    "Q. Did the buyer agree to extend the delivery deadline?\n"
    "A. They agreed to extend it by forty-five days, but only in writing, and that letter is "
    "Exhibit 12.\n"
    "Q. Is there anything else you want to add?\n"
    "A. No. Everything I remember is in my notes from that week.",
]
"""Two pages of a deposition transcript: the known text of the standard test scan."""


def typeset(text: str, *, font_size: float = 12) -> Image.Image:
    """``text`` printed on a Letter page (Times, one paragraph per line), as a 300 dpi greyscale image.

    Typeset with fpdf2 and rasterised by pdfium (its built-in Times): Pillow's only bundled font
    draws a capital I as a bare stroke that no reader, human or OCR, tells from "|" or "l", and a
    legal document is printed in a serif face anyway.
    """
    import pypdfium2

    pdf = FPDF(format="Letter")
    pdf.set_margins(25, 25)
    pdf.add_page()
    pdf.set_font("Times", size=font_size)
    for paragraph in text.split("\n"):
        pdf.multi_cell(0, font_size * 0.54, paragraph)
        pdf.ln(font_size * 0.2)
    document = pypdfium2.PdfDocument(bytes(pdf.output()))
    try:
        return document[0].render(scale=DPI / 72, grayscale=True).to_pil().convert("L")
    finally:
        document.close()


def scan(page: Image.Image, *, skew_degrees: float = 0.8, noise: float = 0.004, seed: int = 7) -> Image.Image:
    """What a scanner makes of a printed page: off-white paper, a small skew, speckles, a slight blur."""
    rng = random.Random(seed)
    page = page.point(lambda v: min(v, 246))
    page = page.rotate(skew_degrees, resample=Image.Resampling.BICUBIC, fillcolor=246, expand=False)
    pixels = page.load()
    assert pixels is not None
    width, height = page.size
    for _ in range(int(width * height * noise)):
        pixels[rng.randrange(width), rng.randrange(height)] = 0 if rng.random() < 0.5 else 255
    return page.filter(ImageFilter.GaussianBlur(0.6))


def render_page(text: str, *, skew_degrees: float = 0.8, noise: float = 0.004, seed: int = 7) -> Image.Image:
    """One scanned page of ``text``: typeset, then scanned (see `typeset` and `scan`)."""
    return scan(typeset(text), skew_degrees=skew_degrees, noise=noise, seed=seed)


def image_bytes(image: Image.Image, fmt: str = "PNG") -> bytes:
    """An image file's bytes (PNG, JPEG, TIFF)."""
    buf = io.BytesIO()
    image.save(buf, format=fmt, dpi=(DPI, DPI))
    return buf.getvalue()


def pdf_of(pages: list[Image.Image | str]) -> bytes:
    """A PDF whose pages are scans (an image, no text layer) or typeset text (a str)."""
    pdf = FPDF(format="Letter")
    pdf.set_creation_date(dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    pdf.set_font("Helvetica", size=11)
    for page in pages:
        pdf.add_page()
        if isinstance(page, str):
            pdf.multi_cell(0, 6, page)
        else:
            pdf.image(io.BytesIO(image_bytes(page)), x=0, y=0, w=pdf.w, h=pdf.h)
    return bytes(pdf.output())


def scanned_pdf(pages: list[str] | None = None, *, seed: int = 7) -> tuple[bytes, list[str]]:
    """An image-only PDF of ``pages`` (default: the deposition), and the known text per page."""
    texts = pages or DEPOSITION_PAGES
    images: list[Image.Image | str] = [
        render_page(t, seed=seed + i, skew_degrees=0.8 if i % 2 == 0 else -0.6) for i, t in enumerate(texts)
    ]
    return pdf_of(images), texts


def word_accuracy(truth: str, recognised: str) -> float:
    """1 - word error rate: word-level edit distance (substitutions, insertions, deletions) over
    the number of words in ``truth``; words are whitespace-separated, case and punctuation count."""
    a, b = truth.split(), recognised.split()
    previous = list(range(len(b) + 1))
    for i, word in enumerate(a, start=1):
        current = [i]
        for j, other in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (word != other)))
        previous = current
    return max(0.0, 1.0 - previous[-1] / max(1, len(a)))
