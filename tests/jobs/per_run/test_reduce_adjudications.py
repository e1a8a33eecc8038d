"""`tribunal reduce` applies the experts' decisions by the rules, says what changed, and
`--no-adjudications` gives back the raw leaderboard byte for byte."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from evalcore.results import adjudications as adj
from evalcore.results.reduce import current_gradings
from evalcore.storage.run import open_run
from evalcore.storage.run_folder import (
    LEADERBOARD_AREAS_PARQUET,
    LEADERBOARD_JSON,
    LEADERBOARD_PARQUET,
)
from evalcore.storage.store import read_table
from jobs.cli.app import app
from jobs.per_run.reduce import reduce_run
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth


@pytest.fixture(scope="module")
def raw_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    truth = synthetic_ground_truth(seed=5, n_tasks=12, n_criteria=4)
    run = tmp_path_factory.mktemp("runs") / "run-adj"
    build_run(str(run), truth, RunSpec())
    return run


def _gated_flag(run: Path) -> tuple[str, str, int, float]:
    """A confirmed material flag on a gated submission: (system, task, flag index, task score)."""
    cur = current_gradings(read_table(str(run), "submissions"))
    gated = cur.filter(pc.equal(cur.column("gated"), True))
    assert gated.num_rows, "the planted run has gated submissions"
    flags = read_table(str(run), "flags")
    for k in range(gated.num_rows):
        gid = gated.column("grading_id")[k].as_py()
        mine = flags.filter(pc.and_(pc.equal(flags.column("grading_id"), gid),
                                    pc.equal(flags.column("status"), "confirmed")))
        material = [i for i, m in zip(mine.column("flag_index").to_pylist(), mine.column("materiality").to_pylist(),
                                      strict=True) if m != "minor"]
        if len(material) == 1:
            return (gated.column("system")[k].as_py(), gated.column("task_id")[k].as_py(), material[0],
                    gated.column("task_score")[k].as_py())
    raise AssertionError("no gated submission with exactly one material flag")


def _with_a_gated_flag_overturned(raw_run: Path, tmp_path: Path) -> tuple[Path, str, str, int, float]:
    """A copy of the raw run in which Ada overturned a material flag that gates its task:
    (the copy, the flag's system, task, index, and the task's score before the decision)."""
    run = tmp_path / raw_run.name
    shutil.copytree(raw_run, run)
    system, task, index, task_score = _gated_flag(run)
    adj.record(str(run), adj.Adjudication(run_id="run-test", kind="flag", system=system, task_id=task, flag_index=index,
                                          decision="overturned", reviewer="Ada", reason="not in the memo"))
    return run, system, task, index, task_score


def test_an_overturned_material_flag_lifts_the_gate_and_moves_the_rate_exactly(raw_run: Path, tmp_path: Path) -> None:
    run = tmp_path / raw_run.name
    shutil.copytree(raw_run, run)
    before = reduce_run(str(run))
    raw_json = (run / LEADERBOARD_JSON).read_bytes()
    raw_parquet = (run / LEADERBOARD_PARQUET).read_bytes()
    system, task, index, task_score = _gated_flag(run)
    adj.record(str(run), adj.Adjudication(run_id=before.run_id, kind="flag", system=system, task_id=task,
                                          flag_index=index, decision="overturned", reviewer="Ada",
                                          reason="the figure is in the lease, clause 4"))
    after = reduce_run(str(run))
    row_before = next(r for r in before.systems if r.system == system)
    row_after = next(r for r in after.systems if r.system == system)
    # the rule: the submission's hc score goes from 0 to its task score; the rate is a mean over scored tasks
    expected = row_before.hc_pass_rate.value + task_score / row_before.scored
    assert row_after.hc_pass_rate.value == pytest.approx(expected)
    assert row_after.gated == row_before.gated - 1
    assert after.adjudication is not None and after.adjudication.by_system == {system: 1}
    [change] = [c for c in after.adjudication.changes if c.system == system]
    assert (change.hc_pass_rate_before, change.hc_pass_rate_after) == pytest.approx(
        (row_before.hc_pass_rate.value, row_after.hc_pass_rate.value))
    assert change.rank_after == row_after.rank
    # the raw view is the original leaderboard, byte for byte (written apart from the files in force)
    result = CliRunner().invoke(app, ["reduce", str(run), "--no-adjudications"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    raw_files = open_run(str(run)).leaderboard_files(raw=True)
    assert Path(raw_files[0]).read_bytes() == raw_json
    assert Path(raw_files[1]).read_bytes() == raw_parquet


def test_reduce_prints_what_the_decisions_changed(raw_run: Path, tmp_path: Path) -> None:
    run, system, task, index, _ = _with_a_gated_flag_overturned(raw_run, tmp_path)
    result = CliRunner().invoke(app, ["reduce", str(run)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "adjudicated: 1 item(s) decided" in result.output and re.search(rf"{re.escape(system)}\s+1\s", result.output)


def test_the_leaderboard_has_rank_intervals_and_tiers(raw_run: Path, tmp_path: Path) -> None:
    run = tmp_path / raw_run.name
    shutil.copytree(raw_run, run)
    lb = reduce_run(str(run))
    for r in lb.systems:
        assert r.rank_low is not None and r.rank_high is not None and r.tier is not None
        assert r.rank_low <= (r.rank or 0) <= r.rank_high
    assert lb.pairwise is not None and lb.pairwise.systems == [r.system for r in lb.systems]
    assert lb.adjudication is None  # no decisions: the raw view


def test_compare_shows_a_runs_raw_and_adjudicated_views(raw_run: Path, tmp_path: Path) -> None:
    from jobs.per_run.compare import compare_runs

    run, system, task, index, task_score = _with_a_gated_flag_overturned(raw_run, tmp_path)
    cmp = compare_runs(str(run), None, adjudicated=True)
    changed = {s.system: s for s in cmp.systems}
    scored = next(r.scored for r in reduce_run(str(run), write=False, adjudications=False).systems if r.system == system)
    assert changed[system].delta.value == pytest.approx(task_score / scored)  # one submission: 0 -> its task score
    assert all(s.delta.value == 0 for name, s in changed.items() if name != system)
    assert cmp.run_a.endswith("(raw)") and cmp.run_b.endswith("(adjudicated)")


def test_compare_adjudicated_names_the_raw_and_the_adjudicated_side_in_every_heading(
    raw_run: Path, tmp_path: Path
) -> None:
    """Its headings said `rank A`, `HC B`, `Δ = B − A`: nothing said which side was the judges' view."""
    run, system, task, index, _ = _with_a_gated_flag_overturned(raw_run, tmp_path)
    result = CliRunner().invoke(app, ["compare", str(run), "--adjudicated"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "raw = the judges' view (verdicts and flags as the judges and the auditor gave them); adjudicated = the " \
           "same run with the experts' decisions in force applied" in text, text
    for heading in ("model raw → adjudicated", "κ(raw,adjudicated)", "Verdicts that changed (raw → adjudicated)",
                    "rank raw", "rank adjudicated", "HC raw", "HC adjudicated", "Δ = adjudicated − raw",
                    "(auditor ", "): raw ", ", adjudicated "):
        assert heading in text, f"{heading!r} not in {text}"
    assert not any(f"{h} {s}" in text for h in ("rank", "HC") for s in ("A", "B")), text


def test_compare_of_runs_with_no_common_submission_says_so_and_exits_1(raw_run: Path, tmp_path: Path) -> None:
    other = tmp_path / "run-other"
    truth = synthetic_ground_truth(seed=6, n_tasks=3, n_criteria=2)
    truth = {**truth, "verdicts": {f"{s}-v2": v for s, v in truth["verdicts"].items()},
             "hallucinations": [{**h, "system": f"{h['system']}-v2"} for h in truth["hallucinations"]]}
    build_run(str(other), truth, RunSpec(run_id="run-other"))
    result = CliRunner().invoke(app, ["compare", str(raw_run), str(other)], env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    assert "no submission is complete in both runs" in result.output


def test_compare_adjudicated_counts_flag_decisions_an_overturn_is_not_upheld_and_made_minor_is_minor(
    raw_run: Path, tmp_path: Path
) -> None:
    """One material flag overturned and another made minor: `upheld by both` drops by one, B's
    confirmed by one and B's material by two; a decided verdict is a changed verdict of its judge."""
    from jobs.per_run.compare import compare_runs

    run = tmp_path / raw_run.name
    shutil.copytree(raw_run, run)
    cur = current_gradings(read_table(str(run), "submissions"))
    audited = set(cur.filter(pc.equal(cur.column("audited"), True)).column("grading_id").to_pylist())
    flags = [f for f in read_table(str(run), "flags").to_pylist()
             if f["grading_id"] in audited and f["status"] == "confirmed" and f["materiality"] == "material"]
    overturned, made_minor = flags[0], flags[1]
    verdict = next(v for v in read_table(str(run), "verdicts").to_pylist() if v["grading_id"] in audited)
    flipped = "fail" if verdict["verdict"] == "pass" else "pass"
    adj.record_all(str(run), [
        adj.Adjudication(run_id="run-test", kind="flag", system=overturned["system"], task_id=overturned["task_id"],
                         flag_index=overturned["flag_index"], decision="overturned", reviewer="Ada", reason="in the lease"),
        adj.Adjudication(run_id="run-test", kind="flag", system=made_minor["system"], task_id=made_minor["task_id"],
                         flag_index=made_minor["flag_index"], decision="materiality", materiality="minor",
                         reviewer="Ada", reason="harmless"),
        adj.Adjudication(run_id="run-test", kind="verdict", system=verdict["system"], task_id=verdict["task_id"],
                         criterion_id=verdict["criterion_id"], judge=verdict["judge"], decision=flipped,  # type: ignore[arg-type]
                         reviewer="Ada", reason="misread"),
    ])
    f = compare_runs(str(run), None, adjudicated=True).flags
    assert f.confirmed_a == f.upheld_both + f.only_a and f.only_b == 0
    assert (f.confirmed_a - f.confirmed_b, f.only_a) == (1, 1)  # the overturned flag: upheld by the raw view only
    assert f.material_a - f.material_b == 2  # the overturned one and the one made minor
    cmp = compare_runs(str(run), None, adjudicated=True)
    [judge] = [j for j in cmp.judges if j.judge == verdict["judge"]]
    assert judge.changed == 1 and all(j.changed == 0 for j in cmp.judges if j.judge != verdict["judge"])


def test_reduce_no_adjudications_leaves_the_files_in_force_byte_for_byte_and_writes_the_raw_view_apart(
    raw_run: Path, tmp_path: Path
) -> None:
    """A publisher who looks at the raw view must not overwrite the reviewed leaderboard."""
    run, system, task, index, _ = _with_a_gated_flag_overturned(raw_run, tmp_path)
    reviewed = reduce_run(str(run))
    in_force = {name: (run / name).read_bytes() for name in (LEADERBOARD_JSON, LEADERBOARD_PARQUET,
                                                             LEADERBOARD_AREAS_PARQUET)}
    help_text = CliRunner().invoke(app, ["reduce", "--help"], env={"COLUMNS": "200"}).output
    assert "leaderboard_raw.json" in " ".join(help_text.split())
    result = CliRunner().invoke(app, ["reduce", str(run), "--no-adjudications"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert {name: (run / name).read_bytes() for name in in_force} == in_force
    raw_json, raw_parquet, raw_areas = open_run(str(run)).leaderboard_files(raw=True)
    assert Path(raw_parquet).exists() and Path(raw_areas).exists()
    raw = reduce_run(str(run), write=False, adjudications=False)
    assert Path(raw_json).read_text() == raw.model_dump_json(indent=2) != reviewed.model_dump_json(indent=2)
    assert "raw view written apart" in " ".join(result.output.split())
