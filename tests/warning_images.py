"""Images that make PIL raise a Python warning while Tribunal reads them (issue 24: third-party
warnings become one line naming the file).

`palette_png` is the common case in real scans: a palette PNG whose transparency is a byte string,
which PIL warns about ("Palette images with Transparency expressed in bytes should be converted to
RGBA images", a UserWarning from ``PIL/Image.py``) when OCR turns the page grey. Its text is
readable, so the document loads and the warning is the only thing to report.
"""

from __future__ import annotations

import io

PALETTE_WARNING = "Palette images with Transparency expressed in bytes should be converted to RGBA images"


def text_image(text: str, width: int = 1200, height: int = 300) -> object:
    """``text`` in black on white, large enough for OCR (a PIL "L" image)."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (width, height), 255)
    ImageDraw.Draw(image).text((40, height // 3), text, fill=0, font=ImageFont.load_default(size=48))
    return image


def palette_png(text: str = "Closing date: 1 May 2024.", width: int = 1200) -> bytes:
    """A readable palette PNG whose transparency PIL warns about when it is converted to grey."""
    image = text_image(text, width).convert("P")  # type: ignore[attr-defined]
    buffer = io.BytesIO()
    # two partly transparent palette entries: PIL keeps the tRNS chunk as bytes, not one index
    image.save(buffer, "PNG", transparency=bytes([255] * 250 + [0, 10, 255, 255, 255, 255]))
    return buffer.getvalue()


def plain_png(text: str, width: int = 1200) -> bytes:
    """A readable greyscale PNG (no palette): PIL warns about it only past `Image.MAX_IMAGE_PIXELS`."""
    buffer = io.BytesIO()
    text_image(text, width).save(buffer, "PNG")  # type: ignore[attr-defined]
    return buffer.getvalue()
