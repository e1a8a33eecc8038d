"""`tribunal reduce --corrected`: each system's rates corrected by the experts' whole-submission sample
(prediction-powered inference), beside the judges' own; a sample that is not uniform is refused.

On a built run (`tests.runfolder`, no Ray) whose OpenAI judge passes every criterion of its own
family's system; the "experts" decide by the ground truth.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from evalcore.errors import InputError
from evalcore.results import adjudications as adj
from evalcore.results.corrected import SampleRefused, sample_order
from evalcore.results.reduce import current_gradings
from evalcore.storage.run_folder import LEADERBOARD_JSON
from evalcore.storage.store import read_table
from jobs.cli.app import app
from jobs.per_run.reduce import reduce_run
from jobs.per_run.report import write_report
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

TRUTH = synthetic_ground_truth(seed=5, n_tasks=24, n_criteria=4)
SEED = 20261130
"""The run's seed (RunSpec's), the default order of the review's full section."""
LABELLED = 8
"""Whole submissions labelled per system."""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("corrected") / "run"
    build_run(str(run), TRUTH, RunSpec(lenient={"openai": "openai"}))
    return run


@pytest.fixture
def run(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(built, copy)
    return copy


def _current(run: Path) -> dict[tuple[str, str], dict[str, Any]]:
    cur = current_gradings(read_table(str(run), "submissions"))
    cur = cur.filter(pc.equal(cur.column("status"), "complete"))
    return {(r["system"], r["task_id"]): r for r in cur.to_pylist()}


def _first(run: Path, seed: int, k: int = LABELLED) -> list[tuple[str, str]]:
    """The first k complete submissions of each system in the seeded order."""
    cur = _current(run)
    out: list[tuple[str, str]] = []
    for system in sorted({s for s, _ in cur}):
        out += sample_order(seed, [key for key in cur if key[0] == system])[:k]
    return out


def _decide_whole(run: Path, keys: Iterable[tuple[str, str]], *, queue: str = "full", seed: int | None = SEED) -> None:
    """The experts decide every criterion (the truth) and every flag (upheld when it is a true
    hallucination, else overturned) of each submission, as the review's full section records them."""
    cur = _current(run)
    flags = read_table(str(run), "flags").to_pylist()
    real = {(h["system"], h["task_id"], h["span"]) for h in TRUTH["hallucinations"]}
    decisions = []
    for system, task in keys:
        gid = cur[(system, task)]["grading_id"]
        base = {"run_id": "run-test", "system": system, "task_id": task, "reviewer": "Ada", "reason": "read it",
                "queue": queue, "seed": seed, "grading_id": gid}
        for cid, verdict in TRUTH["verdicts"][system][task].items():
            decisions.append(adj.Adjudication(kind="criterion", criterion_id=cid, decision=verdict, **base))
        for f in flags:
            if f["grading_id"] == gid and f["status"] != "merged":
                upheld = (system, task, f["span"]) in real
                decisions.append(adj.Adjudication(kind="flag", flag_index=f["flag_index"],
                                                  decision="upheld" if upheld else "overturned", **base))
    adj.record_all(str(run), decisions)


def _truth_hc(system: str, task: str) -> float:
    passed = all(v == "pass" for v in TRUTH["verdicts"][system][task].values())
    material = any(h["system"] == system and h["task_id"] == task and h["materiality"] == "material"
                   for h in TRUTH["hallucinations"])
    return 1.0 if passed and not material else 0.0


def test_reduce_corrected_puts_each_systems_ppi_estimate_from_the_full_sections_decisions_beside_the_judges_own(
    run: Path,
) -> None:
    raw = reduce_run(str(run), write=False)
    keys = _first(run, SEED)
    _decide_whole(run, keys)
    lb = reduce_run(str(run), corrected=True)
    assert lb.corrected is not None and lb.corrected.seed == SEED and lb.corrected.n_labels == 4 * LABELLED
    cur = _current(run)
    system = "gpt-strong"  # its family's judge passes everything: the judges' rate is too high
    mine = [k for k in keys if k[0] == system]
    unlabelled = [r["hc_score"] for k, r in cur.items() if k[0] == system and k not in mine]
    rectifier = [_truth_hc(*k) - cur[k]["hc_score"] for k in mine]
    row = next(s for s in lb.corrected.systems if s.system == system)
    hc = row.rate("hc_pass_rate")
    assert hc is not None and (hc.n_labels, hc.n_unlabelled) == (LABELLED, len(unlabelled))
    assert hc.corrected.value == pytest.approx(float(np.mean(unlabelled) + np.mean(rectifier)))
    assert hc.labels_only.value == pytest.approx(float(np.mean([_truth_hc(*k) for k in mine])))
    assert hc.judges == next(r.hc_pass_rate for r in raw.systems if r.system == system)  # the raw panel's own
    # the lenient judge's share of all-passes is corrected downwards: the experts failed criteria it passed
    assert float(np.mean(rectifier)) < 0 and hc.corrected.value < (hc.judges.value or 0)
    assert json.loads((run / LEADERBOARD_JSON).read_text())["corrected"]["n_labels"] == 4 * LABELLED
    material = row.rate("material_per_task")
    assert material is not None and material.n_labels == sum(cur[k]["audited"] for k in mine)


def test_the_corrected_table_is_printed_and_the_report_shows_it(run: Path) -> None:
    _decide_whole(run, _first(run, SEED))
    result = CliRunner().invoke(app, ["reduce", str(run), "--corrected"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert f"Corrected by expert labels — {4 * LABELLED} whole submission(s) labelled, seed {SEED}" in result.output
    html = Path(write_report(str(run), corrected=True)).read_text()
    assert 'id="corrected-rates"' in html and 'data-system="gpt-strong" data-rate="hc_pass_rate"' in html


def test_a_skipped_submission_in_the_seeded_order_is_refused_naming_it_and_nothing_is_written(run: Path) -> None:
    keys = _first(run, SEED)
    skipped = keys[2]
    _decide_whole(run, [k for k in keys if k != skipped])
    result = CliRunner().invoke(app, ["reduce", str(run), "--corrected"], env={"COLUMNS": "300"})
    assert result.exit_code == 1
    out = " ".join(result.output.split())
    assert "not a uniform random sample" in out and f"{skipped[0]}::{skipped[1]} is not labelled" in out
    assert not (run / LEADERBOARD_JSON).exists()


def test_decisions_of_the_material_first_queue_never_count_as_the_sample(run: Path) -> None:
    _decide_whole(run, _first(run, SEED), queue="material", seed=None)
    with pytest.raises(InputError, match="no decision from the review's full section"):
        reduce_run(str(run), corrected=True)


def test_a_labels_file_of_the_first_submissions_of_its_seeded_order_corrects_and_another_seed_is_refused(
    run: Path, tmp_path: Path
) -> None:
    keys = _first(run, 7)
    verdicts: dict[str, dict[str, Any]] = {}
    for s, t in keys:
        verdicts.setdefault(s, {})[t] = TRUTH["verdicts"][s][t]
    labels = {"verdicts": verdicts,
              "hallucinations": [h for h in TRUTH["hallucinations"] if (h["system"], h["task_id"]) in set(keys)]}
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(labels))
    lb = reduce_run(str(run), corrected=True, labels=str(path), label_seed=7, write=False)
    assert lb.corrected is not None and lb.corrected.n_labels == 4 * LABELLED
    row = next(s for s in lb.corrected.systems if s.system == "fluent-hallucinator")
    hc = row.rate("hc_pass_rate")
    assert hc is not None
    assert hc.labels_only.value == pytest.approx(float(np.mean([_truth_hc(*k) for k in keys if k[0] == row.system])))
    with pytest.raises(SampleRefused, match="seed 8"):
        reduce_run(str(run), corrected=True, labels=str(path), label_seed=8, write=False)
