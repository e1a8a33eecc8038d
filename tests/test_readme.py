"""The README stays true: it opens with the two commands, and its table schemas are current."""

from __future__ import annotations

from pathlib import Path

from evalcore.storage.store import schema_markdown

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_readme_opens_with_exactly_the_two_commands() -> None:
    first_block = README.split("```")[1]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()[1:] if line.strip()]
    assert commands == ["make demo", "make test"]


def test_readme_table_schemas_match_the_row_models() -> None:
    section = README.split("<!-- schemas:start -->")[1].split("<!-- schemas:end -->")[0]
    assert section.strip() == schema_markdown().strip(), "run `python -m evalcore.storage.store` and paste it into README.md"
