"""`--help` piped (a log, `| less`, a CI job: not a terminal, 80 columns) reads whole: every option's
help is there, wrapped at spaces, never cut with "…" (typer's rich option table cut it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from jobs.cli.app import app

TRIBUNAL = Path(sys.executable).with_name("tribunal")


def _words(text: str) -> str:
    """Whitespace collapsed, and a word wrapped after its hyphen joined again."""
    return re.sub(r"-\s+", "-", " ".join(text.split()))


@pytest.mark.parametrize("command", ["sweep", "reduce", "show", "estimate"])
def test_help_piped_at_80_columns_cuts_nothing_and_holds_each_options_help_whole(command: str) -> None:
    env = {**os.environ, "COLUMNS": "80"}
    result = subprocess.run([str(TRIBUNAL), command, "--help"], capture_output=True, text=True, env=env,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    sub = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    helps = [p.help for p in sub.params if p.param_type_name == "option" and p.help]
    assert helps  # the check below checks something
    out = result.stdout
    written = sum(h.count("…") for h in [*helps, sub.help or ""])  # an "…" the help itself says
    assert out.count("…") == written, out
    text = _words(out)
    for help_text in helps:
        assert _words(help_text) in text, f"{help_text!r} not whole in:\n{out}"
    assert max(len(line) for line in out.splitlines()) <= 80, out
