"""The README stays true: it opens with the two commands (the second is the one CI runs), and the
table schemas in docs/OUTPUT.md are current."""

from __future__ import annotations

from pathlib import Path

from evalcore.storage.store import schema_markdown

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
OUTPUT = (ROOT / "docs" / "OUTPUT.md").read_text()


def _opening_commands() -> list[str]:
    first_block = README.split("```")[1]
    return [line.split("#")[0].strip() for line in first_block.splitlines()[1:] if line.strip()]


def test_readme_opens_with_exactly_the_two_commands() -> None:
    assert _opening_commands() == ["make demo", "make test"]


def test_the_readme_test_command_is_the_one_ci_runs_after_the_quality_gates() -> None:
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    commands = [line for line in ci if line and not line.startswith("#")]
    assert commands[-2:] == ["make lint", _opening_commands()[1]]


def test_output_page_table_schemas_match_the_row_models() -> None:
    section = OUTPUT.split("<!-- schemas:start -->")[1].split("<!-- schemas:end -->")[0]
    assert section.strip() == schema_markdown().strip(), (
        "run `python -m evalcore.storage.store` and paste it into docs/OUTPUT.md"
    )
