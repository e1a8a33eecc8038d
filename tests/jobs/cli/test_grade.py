"""`tribunal grade`: one submission, every verdict and flag printed (offline vendors, no network)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from jobs.cli.app import app
from tests.jobs.conftest import SAMPLE

TASK = SAMPLE / "tasks" / "real-estate" / "psa-key-terms" / "scenario-01"
HALLUCINATOR = SAMPLE / "submissions" / "fluent-hallucinator" / "real-estate" / "psa-key-terms" / "scenario-01" / "memo.md"


def test_grade_json_prints_every_verdict_per_judge_and_every_flag() -> None:
    result = CliRunner().invoke(app, ["grade", str(TASK), "-d", str(HALLUCINATOR), "--vendors", "offline", "--audit", "always", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    n_criteria = len(json.loads((TASK / "task.json").read_text())["criteria"])
    assert len(out["verdicts"]) == 3 * n_criteria
    assert {v["judge"] for v in out["verdicts"]} == {"openai", "xai", "anthropic"}
    assert all(v["reasoning"].startswith("[offline]") for v in out["verdicts"])
    assert out["submission"]["audited"] is True
    assert out["flags"], "the hallucinator's abstract has planted hallucinations"
    assert all(f["status"] in ("confirmed", "rejected", "merged") for f in out["flags"])


def test_grade_table_output_names_stages_and_scores() -> None:
    result = CliRunner().invoke(app, ["grade", str(TASK), "-d", str(HALLUCINATOR), "--vendors", "offline"],
                                env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "Stage A: rubric verdicts" in result.output and "Scores" in result.output


def test_grade_unknown_deliverable_file_is_a_clear_error(tmp_path) -> None:
    stray = tmp_path / "notes.pdf"
    stray.write_bytes(b"%PDF-1.4")
    other = tmp_path / "other.md"
    other.write_text("x")
    result = CliRunner().invoke(app, ["grade", str(TASK), "-d", str(stray), "-d", str(other), "--vendors", "offline"])
    assert result.exit_code == 1
    assert "notes.pdf" in result.output and "matches none of the task's deliverables" in result.output
