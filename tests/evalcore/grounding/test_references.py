"""The reference check (evalcore/grounding/references.py): labels and named documents must exist."""

from __future__ import annotations

from tests.evalcore.grounding._fixtures import flags, only


def test_existing_section_reference_is_not_flagged() -> None:
    assert flags("Under Section 4.2 and Clause 9(b), and per Exhibit A and Article 10, the Buyer...") == []


def test_nonexistent_clause_reference_is_fabricated_source() -> None:
    f = only("Under Section 14.3 the Seller must repair the roof.")
    assert f.check == "reference"
    assert f.category == "fabricated_source"
    assert f.span == "Section 14.3"
    assert f.suggested_materiality == "material"


def test_nonexistent_subclause_is_flagged() -> None:
    assert only("Clause 9(f) lets the Buyer terminate.").check == "reference"


def test_nonexistent_exhibit_is_flagged() -> None:
    assert only("The site plan is attached as Exhibit D.").span == "Exhibit D"


def test_nonexistent_document_is_flagged() -> None:
    f = only("The Side Letter modifies the deposit terms.")
    assert f.check == "reference" and f.span == "Side Letter"


def test_existing_document_name_is_not_flagged() -> None:
    assert flags("The Purchase and Sale Agreement dated March 3, 2026 governs.") == []


# Issue 43: a lab run confirmed a material "fabricated source" for a claim cut at "(Section 7." -
# the memo cites Section 7.2, which exists; cut, its label reads "Section 7".
def test_a_citation_cut_at_the_end_of_an_open_parenthesis_is_not_a_fabricated_source() -> None:
    assert flags("Survival lasts twelve (12) months (Section 4.") == []
    assert flags("Survival lasts twelve (12) months (Section 4") == []


def test_a_closed_or_unparenthesised_citation_at_the_end_is_still_checked() -> None:
    assert only("Survival lasts twelve (12) months (Section 4).").span == "Section 4"
    assert only("Survival lasts twelve (12) months under Section 14.").span == "Section 14"
    assert only("Survival lasts twelve (12) months (Section 14.3) (see Section 4.").span == "Section 14.3"


def test_a_citation_in_an_aside_is_checked_in_the_whole_text() -> None:
    assert flags("Survival lasts twelve (12) months (Section 4.2). Closing is June 30, 2026.") == []
    assert only("Survival lasts twelve (12) months (Section 4. Survival). Closing is June 30, 2026.").span == "Section 4"
