"""`tribunal release create|list|diff|latest` over runs of the sample graded offline (no Ray).

The runs: the sample's four systems on three of its tasks graded in June 2026 (`run-june`), one
synthetic system added in November (`run-november`, its own sweep of only its submissions), and a
regrade of June's systems after the xAI judge model was retired (`run-retired`, `--reuse` of June).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from evalcore.config.load import load_config
from evalcore.errors import ReleaseError
from evalcore.grading.grade import GradeResult
from evalcore.results.leaderboard import SystemScores
from evalcore.storage.release_folder import open_release
from evalcore.storage.store import RunRecord, read_table
from jobs.cli.app import app
from jobs.release.create import create_release
from jobs.release.diff import diff
from jobs.release.store import current_latest, list_releases, move_latest, read_release
from tests.conftest import create_bucket, upload_tree
from tests.jobs.release.sample_runs import JUNE_2026, NOVEMBER_2026, cut, grade_run

TASKS = ("employment/restrictive-covenants", "real-estate/lease-abstract", "litigation/payment-dispute-chronology")
SYSTEMS = ("gpt-strong", "claude-average", "grok-weak", "fluent-hallucinator")
NEW = "gpt-synthetic"
RANK_FIELDS = {"rank", "rank_low", "rank_high", "tier"}


@dataclass
class Runs:
    root: Path
    june: Path
    november: Path
    retired: Path
    november_results: list[GradeResult]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    root = tmp_path_factory.mktemp("release")
    bench = cut(root / "bench", TASKS, SYSTEMS)
    # the synthetic system: gpt-strong's work, reworded at the top, in a results folder of its own
    new_subs = root / "new-results"
    for task in TASKS:
        src = bench / "submissions" / "gpt-strong" / task
        dst = new_subs / NEW / task
        shutil.copytree(src, dst)
        for f in dst.iterdir():
            f.write_text("Prepared by the synthetic system.\n\n" + f.read_text(encoding="utf-8"), encoding="utf-8")
    june, november, retired = root / "runs" / "run-june", root / "runs" / "run-november", root / "runs" / "run-retired"
    grade_run(bench, bench / "submissions", str(june), "run-june", JUNE_2026)
    november_results = grade_run(bench, new_subs, str(november), "run-november", NOVEMBER_2026)
    cfg = load_config(vendors="offline")
    cfg = cfg.model_copy(update={"judges": [j.model_copy(update={"model": "grok-successor"}) if j.name == "xai" else j
                                            for j in cfg.judges]})
    grade_run(bench, bench / "submissions", str(retired), "run-retired", NOVEMBER_2026 + 86_400, cfg, reuse=[str(june)])
    return Runs(root, june, november, retired, november_results)


def _variant(runs: Runs, name: str, source: Path | None = None, **update: Any) -> Path:
    """A copy of run-november (or `source`) under another run id, whose run.json may say something else."""
    out = runs.root / "variants" / name
    if not out.exists():
        shutil.copytree(source or runs.november, out)
        record = RunRecord.read(str(out))
        record.model_copy(update={"run_id": name, **update}).write(str(out))
    return out


def _row(r: SystemScores) -> dict[str, Any]:
    return r.model_dump(exclude=RANK_FIELDS)


def test_a_release_from_two_runs_of_the_sample_graded_months_apart_succeeds(runs: Runs, tmp_path: Path) -> None:
    made = create_release(str(tmp_path), "2026-11", [str(runs.june), str(runs.november)])
    assert {r.run_id: r.created_at for r in made.release.runs} == {"run-june": JUNE_2026, "run-november": NOVEMBER_2026}
    assert made.release.benchmark_name == "tribunal-sample" and made.release.benchmark_version == "1.0"
    assert sorted(made.release.systems) == sorted([*SYSTEMS, NEW])
    assert {r.system for r in made.board.systems} == {*SYSTEMS, NEW} and made.board.n_tasks == len(TASKS)
    assert read_release(str(tmp_path), "2026-11") == made.release


@pytest.mark.parametrize("key", ["prompt_hashes", "judges", "benchmark.version"])
def test_a_run_with_another_prompt_hash_judge_model_or_benchmark_version_is_refused_naming_the_key(
    runs: Runs, tmp_path: Path, key: str
) -> None:
    record = RunRecord.read(str(runs.november))
    update: dict[str, Any] = {
        "prompt_hashes": {"prompt_hashes": {**record.prompt_hashes, "rubric.v1": "0" * 64}},
        "judges": {"judges": [j.model_copy(update={"model": "gpt-7"}) if j.name == "openai" else j for j in record.judges]},
        "benchmark.version": {"benchmark": record.benchmark.model_copy(update={"version": "1.1"})},
    }[key]
    variant = _variant(runs, f"run-{key.replace('.', '-')}", **update)
    result = CliRunner().invoke(app, ["release", "create", "r", "--run", str(runs.june), "--run", str(variant),
                                      "--releases", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert f"differ on 1 key(s):\n  {key}: " in result.output and f"--allow {key}" in result.output
    assert not (tmp_path / "r").exists() and list_releases(str(tmp_path)) == []
    # accepted with --allow, and recorded with each run's value
    made = create_release(str(tmp_path), "r", [str(runs.june), str(variant)], allow=[key])
    assert [d.key for d in made.release.allowed] == [key]
    assert set(made.release.allowed[0].values) == {"run-june", variant.name}


def test_a_system_graded_in_two_runs_is_an_error_unless_the_run_is_named(runs: Runs, tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match=f"system {NEW} is graded in runs run-again, run-november: name the one"):
        create_release(str(tmp_path), "r", [str(runs.november), str(_variant(runs, "run-again")), str(runs.june)])
    with pytest.raises(ReleaseError, match="run run-november contributes no system"):
        create_release(str(tmp_path), "r", [str(runs.june), str(runs.november), str(_variant(runs, "run-again"))],
                       named={NEW: "run-again"})
    again = _variant(runs, "run-june-again", runs.june)
    named = {"gpt-strong": "run-june-again", "claude-average": "run-june-again", "grok-weak": "run-june",
             "fluent-hallucinator": "run-june"}
    result = CliRunner().invoke(app, ["release", "create", "r", "--run", str(runs.june), "--run", str(again),
                                      "--releases", str(tmp_path), *[f"--system={s}={r}" for s, r in named.items()]])
    assert result.exit_code == 0, result.output
    made = read_release(str(tmp_path), "r")
    assert made.systems == named and made.chosen == named
    assert {r.run_id: r.systems for r in made.runs} == {"run-june": ["fluent-hallucinator", "grok-weak"],
                                                         "run-june-again": ["claude-average", "gpt-strong"]}


def test_a_release_is_never_overwritten_locally(runs: Runs, tmp_path: Path) -> None:
    create_release(str(tmp_path), "v1", [str(runs.june)])
    before = {p: p.read_bytes() for p in (tmp_path / "v1").iterdir()}
    with pytest.raises(ReleaseError, match="exists already: a release is never overwritten"):
        create_release(str(tmp_path), "v1", [str(runs.june), str(runs.november)])
    assert {p: p.read_bytes() for p in (tmp_path / "v1").iterdir()} == before


def test_a_release_is_never_overwritten_on_s3_and_latest_only_moves_forward_there(runs: Runs, s3_server: str) -> None:
    bucket = create_bucket(s3_server)
    upload_tree(s3_server, runs.june, bucket, "runs/run-june")
    upload_tree(s3_server, runs.november, bucket, "runs/run-november")
    releases = f"s3://{bucket}/releases"
    r1 = create_release(releases, "v1", [f"s3://{bucket}/runs/run-june"], endpoint_override=s3_server, now=JUNE_2026 + 1)
    r2 = create_release(releases, "v2", [f"s3://{bucket}/runs/run-june", f"s3://{bucket}/runs/run-november"],
                        endpoint_override=s3_server, now=NOVEMBER_2026 + 1)
    assert r2.release.predecessor == "v1" and r2.latest is not None and r2.latest.release == "v2"
    with pytest.raises(ReleaseError, match="exists already"):
        create_release(releases, "v1", [f"s3://{bucket}/runs/run-november"], endpoint_override=s3_server)
    # an interrupted create's files are not replaced either: the conditional PUT refuses them
    from tests.conftest import s3_client

    s3_client(s3_server).delete_object(Bucket=bucket, Key="releases/v1/release.json")
    with pytest.raises(ReleaseError, match="interrupted"):
        create_release(releases, "v1", [f"s3://{bucket}/runs/run-november"], endpoint_override=s3_server)
    with pytest.raises(ReleaseError, match="latest only moves forward"):
        move_latest(releases, r1.release, s3_server)
    assert current_latest(releases, s3_server) == r2.latest
    assert [r.name for r in list_releases(releases, s3_server)] == ["v2"]  # v1 lost its record above
    # the site of the latest release, published onto S3 too, create-only
    from jobs.release.publish import publish_release

    site = f"s3://{bucket}/site"
    assert publish_release(releases, "latest", site, s3_server) == f"{site}/index.html"
    keys = {o["Key"] for o in s3_client(s3_server).list_objects_v2(Bucket=bucket, Prefix="site/")["Contents"]}
    assert {"site/index.html", "site/data/leaderboard.json", f"site/systems/{NEW}.html"} <= keys
    with pytest.raises(ReleaseError, match="never overwritten"):
        publish_release(releases, "v2", site, s3_server)


def test_latest_never_moves_back(runs: Runs, tmp_path: Path) -> None:
    create_release(str(tmp_path), "old-draft", [str(runs.june)], make_latest=False, now=JUNE_2026)
    create_release(str(tmp_path), "v1", [str(runs.june)], now=JUNE_2026 + 10)
    create_release(str(tmp_path), "v2", [str(runs.june), str(runs.november)], now=NOVEMBER_2026)
    cli = CliRunner()
    for name in ("v1", "old-draft", "v2"):
        result = cli.invoke(app, ["release", "latest", name, "--releases", str(tmp_path)])
        assert result.exit_code == 1 and ("only moves forward" in result.output or "already the latest" in result.output)
    latest = current_latest(str(tmp_path))
    assert latest is not None and (latest.release, latest.seq) == ("v2", 2)
    listed = cli.invoke(app, ["release", "list", "--releases", str(tmp_path), "--format", "csv"])
    assert listed.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(listed.output)))
    assert [(r["name"], r["latest"], r["predecessor"]) for r in rows] == [("old-draft", "", "—"), ("v1", "", "—"),
                                                                         ("v2", "latest", "v1")]


def test_adding_a_system_pays_only_its_own_calls_and_leaves_every_other_row_but_rank_interval_and_tier(
    runs: Runs, tmp_path: Path
) -> None:
    before = create_release(str(tmp_path), "before", [str(runs.june)], now=JUNE_2026 + 1)
    after = create_release(str(tmp_path), "after", [str(runs.june), str(runs.november)], now=NOVEMBER_2026 + 1)
    calls = read_table(str(runs.november), "calls")
    graded = calls.filter(pc.not_equal(calls.column("purpose"), "preflight"))
    assert set(graded.column("system").to_pylist()) == {NEW}  # the new run sent only the new system's calls
    assert graded.num_rows == sum(len(r.calls) for r in runs.november_results) > 0
    assert calls.filter(pc.is_valid(calls.column("reused_from"))).num_rows == 0
    paid = {r.run_id: r.paid_calls for r in after.release.runs}
    assert paid == {"run-june": before.release.runs[0].paid_calls, "run-november": graded.num_rows}
    old_rows = {r.system: r for r in before.board.systems}
    new_rows = {r.system: r for r in after.board.systems}
    assert set(new_rows) - set(old_rows) == {NEW}
    for system, row in old_rows.items():
        assert _row(new_rows[system]) == _row(row), system
    old_areas = {(r.system, r.area): r for r in before.board.by_area}
    for (system, area), row in old_areas.items():
        assert _row(next(r for r in after.board.by_area if (r.system, r.area) == (system, area))) == _row(row)
    # the ranks are recomputed over all five systems
    assert all(r.rank_high is not None and r.rank_high <= 5 for r in after.board.systems)
    assert max(r.rank_high or 0 for r in after.board.systems) > max(r.rank_high or 0 for r in before.board.systems)
    d = diff(str(tmp_path), "before", "after")
    assert d.added == [NEW] and d.removed == [] and d.graded_with == {}


def test_a_retired_judge_regrades_only_its_calls_and_release_diff_shows_what_it_moved(runs: Runs, tmp_path: Path) -> None:
    calls = read_table(str(runs.retired), "calls")
    paid = calls.filter(pc.is_null(calls.column("reused_from")))
    assert set(paid.column("vendor").to_pylist()) == {"xai"}  # only the replaced judge was paid
    assert set(calls.filter(pc.is_valid(calls.column("reused_from"))).column("reused_from").to_pylist()) == {"run-june"}
    with pytest.raises(ReleaseError, match="judges: run-june = .*xai=grok-4.*run-retired = .*xai=grok-successor"):
        create_release(str(tmp_path), "mixed", [str(runs.june), str(runs.retired)], named={})
    create_release(str(tmp_path), "v1", [str(runs.june)], now=JUNE_2026 + 1)
    create_release(str(tmp_path), "v2", [str(runs.retired)], now=NOVEMBER_2026 + 86_401)
    result = CliRunner().invoke(app, ["release", "diff", "v1", "v2", "--releases", str(tmp_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    old, new = shown["graded_with"]["judges"]
    assert "grok-successor" in new and "grok-successor" not in old
    assert {s["system"] for s in shown["systems"]} == set(SYSTEMS) and shown["added"] == shown["removed"] == []


def test_decisions_in_force_are_frozen_into_the_release(runs: Runs, tmp_path: Path) -> None:
    from evalcore.results import adjudications as adj

    run = runs.root / "variants" / "decided"
    shutil.copytree(runs.june, run)
    cur = read_table(str(run), "submissions").to_pylist()[0]
    verdict = next(v for v in read_table(str(run), "verdicts").to_pylist() if v["grading_id"] == cur["grading_id"])
    adj.record(str(run), adj.Adjudication(
        run_id="run-june", grading_id=cur["grading_id"], kind="verdict", system=cur["system"], task_id=cur["task_id"],
        criterion_id=verdict["criterion_id"], judge=verdict["judge"],
        decision="fail" if verdict["verdict"] == "pass" else "pass", reviewer="A. Expert", reason="the memo omits it"))
    made = create_release(str(tmp_path), "decided", [str(run)])
    frozen = json.loads((tmp_path / "decided" / open_release(str(tmp_path), "decided").decisions.rsplit("/", 1)[1]).read_text())
    assert [d["reason"] for d in frozen] == ["the memo omits it"] and made.release.runs[0].decisions == 1
    assert made.board.adjudication is not None and made.board.adjudication.decisions_in_force == 1
    # a decision recorded in the run afterwards does not change the release
    adj.record(str(run), adj.Adjudication(
        run_id="run-june", grading_id=cur["grading_id"], kind="verdict", system=cur["system"], task_id=cur["task_id"],
        criterion_id=verdict["criterion_id"], judge=verdict["judge"], decision=verdict["verdict"],
        reviewer="B. Expert", reason="changed my mind"))
    assert read_release(str(tmp_path), "decided") == made.release
    frozen_again = json.loads((tmp_path / "decided" / "decisions.json").read_text())
    assert frozen_again == frozen


def test_a_run_whose_sweep_has_not_finished_is_refused(runs: Runs, tmp_path: Path) -> None:
    unfinished = runs.root / "variants" / "unfinished"
    shutil.copytree(runs.june, unfinished)
    (unfinished / "_SUCCESS.json").unlink()
    with pytest.raises(ReleaseError, match="not a finished run: no sweep of this run has finished"):
        create_release(str(tmp_path), "r", [str(unfinished)])
    assert list_releases(str(tmp_path)) == []
