"""Page headings: every offset of a page's text maps back to that page, and a passage quoted from a
page (verbatim, as a table row under its header, or re-spaced) is located on it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.benchmark.ocr import PagedText, PageText
from evalcore.benchmark.pages import locate_page, page_at, page_heading, page_labels

_words = st.text(alphabet="abcdefghij klmnop,.$0123456789", min_size=1, max_size=60).filter(lambda s: s.strip())
_page_texts = st.lists(st.lists(_words, min_size=1, max_size=4).map("\n".join), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(_page_texts, st.lists(st.booleans(), min_size=6, max_size=6))
def test_every_offset_of_a_page_maps_to_that_page(texts: list[str], ocr_flags: list[bool]) -> None:
    paged = PagedText(pages=[PageText(number=i + 1, text=t, ocr=ocr_flags[i]) for i, t in enumerate(texts)])
    text = paged.text()
    assert page_labels(text) == [f"Page {i + 1}" for i in range(len(texts))]
    pos = 0
    for i, t in enumerate(texts):
        heading = page_heading(i + 1, ocr=ocr_flags[i])
        start = text.index(heading + "\n", pos) + len(heading) + 1
        body = t.rstrip()
        for offset in range(start, start + len(body)):
            assert page_at(text, offset) == f"Page {i + 1}"
        pos = start


def test_a_passage_is_located_on_its_page_verbatim_as_a_row_or_re_spaced() -> None:
    text = (
        "## Page 1\nThe Seller shall deliver the Goods.\n\n"
        "## Page 2 (OCR)\nThe purchase price was $4,250,000, payable in\nthree installments.\n\n"
        "## Sheet: Rent roll\nUnit\tRent\n1A\t2500"
    )
    assert locate_page(text, "The Seller shall deliver the Goods.") == "Page 1"
    assert locate_page(text, "The purchase price was $4,250,000, payable in three installments.") == "Page 2"
    assert locate_page(text, "Rent roll\nUnit\tRent\n1A\t2500") == "Sheet: Rent roll"
    assert locate_page(text, "nowhere in the text at all") is None
    assert locate_page("no headings here", "no headings") is None
    assert page_at("## Slide 3\nx", 11) == "Slide 3"
