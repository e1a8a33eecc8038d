"""csv and markdown of user text (jobs.display.tables): a spreadsheet evaluates no cell, a markdown
renderer runs no HTML and reorders nothing (issue 43)."""

from __future__ import annotations

import csv
import io
import re

from hypothesis import given
from hypothesis import strategies as st

from jobs.display.tables import BIDI_CONTROLS, FORMULA_START, Cell, Column, TableSpec, to_csv, to_markdown


def _board(*systems: str) -> TableSpec:
    spec = TableSpec([Column("system", "id"), Column("score", "number")], title="t")
    for n, system in enumerate(systems):
        spec.add_row(system, str(-n))
    return spec


@given(st.sampled_from(FORMULA_START), st.text())
def test_csv_never_starts_a_text_field_with_a_formula_character(first: str, rest: str) -> None:
    name = first + rest
    (row,) = list(csv.reader(io.StringIO(to_csv([_board(name)]), newline="")))[1:]
    assert row[0] == "'" + name  # OWASP: a leading single quote; the spreadsheet shows the text


def test_csv_neutralises_the_classic_payloads_and_leaves_other_names_and_numbers_as_they_are() -> None:
    spec = TableSpec([Column("system", "id"), Column("delta", "number")])
    names = ("=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1)", "gpt-5[beta]", "claude", "a\r=1+1")
    for name in names:
        spec.add_row(name, Cell("-0.5", -0.5))
    rows = list(csv.reader(io.StringIO(to_csv([spec]), newline="")))[1:]
    assert [r[0] for r in rows] == ["'=HYPERLINK(\"http://x\",\"y\")", "'+1+1", "'-2+3", "'@SUM(A1)",
                                    "gpt-5[beta]", "claude", "a\r=1+1"]  # a carriage return starts no row
    assert {r[1] for r in rows} == {"-0.5"}  # a negative number is a number, not a formula


@given(st.text(alphabet=st.sampled_from(sorted(BIDI_CONTROLS) + list("<>&abc |\\/\"'=\n"))))
def test_markdown_carries_no_raw_html_and_no_bidirectional_control(name: str) -> None:
    md = to_markdown([_board(name), name])
    assert not BIDI_CONTROLS & set(md)
    tags = md.replace("<br>", "")  # the line break a cell's newline becomes: ours, not the user's
    assert "<" not in tags and ">" not in tags
    assert re.search(r"&(?!amp;|lt;|gt;)", md) is None


def test_markdown_shows_a_tag_and_an_override_as_text() -> None:
    md = to_markdown([_board("<img src=x onerror=alert(1)>evil\u202egnp.exe")])
    assert "| &lt;img src=x onerror=alert(1)&gt;evil\\u202Egnp.exe | 0 |" in md
