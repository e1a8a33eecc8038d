"""No raw Python in what a person reads: floats are shown in their form (a share as a percent, a
score to 3 decimals), None is never printed, a dict is said in words, a table of changes is a table
in markdown, and the help text says what it means (issue 43, "Raw Python leaks into output")."""

from __future__ import annotations

import io
import re

from rich.console import Console
from typer.testing import CliRunner

from evalcore.config.models import VendorMode
from evalcore.grading.scoring import AuditMode
from evalcore.results.leaderboard import AdjudicationSummary, Leaderboard, SystemChange
from jobs.cli.app import app
from jobs.cli.grade_one import grade_one
from jobs.display.calibration import materiality_text
from jobs.display.grade import render_grade
from jobs.display.leaderboard import adjudication_lines
from jobs.display.tables import to_markdown
from tests.jobs.conftest import SAMPLE

LONG_FLOAT = re.compile(r"\d\.\d{6,}")
"""A float printed by `str()`: six or more decimals (0.9230769230769231)."""


def test_grade_prints_scores_in_their_form_never_a_long_float_or_none() -> None:
    task = SAMPLE / "tasks" / "real-estate" / "psa-key-terms" / "scenario-01"
    memo = SAMPLE / "submissions" / "fluent-hallucinator" / "real-estate" / "psa-key-terms" / "scenario-01" / "memo.md"
    result = grade_one(str(task), [str(memo)], VendorMode.OFFLINE, AuditMode.ALWAYS, None)
    sub = result.submission.model_copy(update={"criterion_pass_rate": 12 / 13, "task_score": 2 / 3,
                                                "status_reason": None})
    console = Console(record=True, width=80, file=io.StringIO())
    result.submission = sub
    render_grade(result, console)
    text = console.export_text()
    scores = text[text.index("Scores"):]
    assert not LONG_FLOAT.search(scores), scores
    assert "None" not in scores and "status_reason" not in scores, scores
    assert "92.3%" in scores and "0.667" in scores, scores


def test_calibrate_says_the_materiality_counts_in_words_not_a_dict() -> None:
    confusion = {"material": {"material": 3, "minor": 0, "missed": 1}, "minor": {"material": 0, "minor": 0, "missed": 0},
                 "not real": {"material": 1, "minor": 0, "missed": 0}}
    text = materiality_text(confusion)
    assert text == "material → 3 material, 1 missed; not real → 1 material"
    assert "{" not in text and "'" not in text
    assert materiality_text({}) == "none labelled"


def _adjudicated_board() -> Leaderboard:
    lb = Leaderboard.model_construct(run_id="run-x", n_tasks=3, seed=1, bootstrap_samples=10, systems=[], notes=[],
                                     by_area=[], judges=None)
    changes = [SystemChange(system="gpt-strong", decisions=2, hc_pass_rate_before=0.5, hc_pass_rate_after=0.625,
                            rank_before=2, rank_after=1),
               SystemChange(system="grok-weak", decisions=1, hc_pass_rate_before=0.6, hc_pass_rate_after=0.55,
                            rank_before=1, rank_after=2)]
    return lb.model_copy(update={"adjudication": AdjudicationSummary(
        decisions_in_force=3, decisions_recorded=4, by_system={"gpt-strong": 2, "grok-weak": 1}, changes=changes,
        rescored=[])})


def test_markdown_lists_each_systems_change_as_a_table_row_not_a_paragraph() -> None:
    md = to_markdown(adjudication_lines(_adjudicated_board()))
    rows = [line for line in md.splitlines() if line.startswith("|")]
    assert rows[0].replace(" ", "") == "|system|items|HCpassbefore|HCpassafter|rankbefore|rankafter|", md
    assert "| gpt-strong | 2 | 50.0% | 62.5% | 2 | 1 |" in rows, md
    assert "| grok-weak | 1 | 60.0% | 55.0% | 1 | 2 |" in rows, md
    assert not any(p.strip().startswith("gpt-strong") for p in md.split("\n\n")), md


def test_estimate_help_names_the_sweep_once() -> None:
    result = CliRunner().invoke(app, ["estimate", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "sweep sweep" not in " ".join(result.output.split()), result.output
