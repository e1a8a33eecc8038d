"""Value extraction (evalcore/grounding/values.py)."""

from __future__ import annotations

from decimal import Decimal

from evalcore import grounding


def test_find_values_reads_number_words_with_digits() -> None:
    vals = grounding.find_values("within thirty (30) days and ninety days")
    assert [(v.value, v.unit) for v in vals] == [(Decimal(30), "day"), (Decimal(90), "day")]


def test_find_values_kept_for_a_text_read_again_are_a_new_list_each_time() -> None:
    """The values of the last texts are kept (an audit's check and the offline judge read one
    deliverable several times); a caller that changes its list changes no other caller's."""
    text = "The fee is USD 1,250,000 payable on March 3, 2026, with 15% held back for thirty (30) days."
    first = grounding.find_values(text)
    first.clear()
    again = grounding.find_values(text)
    assert [v.kind for v in again] == ["amount", "date", "percent", "number"]
    assert again is not grounding.find_values(text) and again == grounding.find_values(text)
