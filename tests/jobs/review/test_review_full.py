"""The review's `full` section: whole submissions in the seeded random order, one after the other, every
criterion and flag of each; its decisions carry their queue and seed, and `tribunal reduce --corrected`
reads them as the uniform sample. On a built run (`tests.runfolder`, no Ray), served as `tribunal review`."""

from __future__ import annotations

import shutil
import urllib.request
from itertools import groupby
from pathlib import Path

import pyarrow.compute as pc
import pytest

from evalcore.results import adjudications as adj
from evalcore.results.corrected import sample_order
from jobs.per_run.reduce import reduce_run
from jobs.review.app import ReviewState
from jobs.review.queue import RunData
from tests.jobs.review.test_review import _post, serving
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

TRUTH = synthetic_ground_truth(seed=11, n_tasks=6, n_criteria=3)
FULL = 3


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> str:
    uri = str(tmp_path_factory.mktemp("review-full") / "run")
    build_run(uri, TRUTH, RunSpec(lenient={"openai": "openai"}))
    return uri


@pytest.fixture(scope="module")
def state(built: str) -> ReviewState:
    """The queue as `tribunal review RUN --sample 4 --full 3` builds it (no decision recorded in `built`)."""
    return ReviewState(built, sample=4, full=FULL)


def test_the_full_section_serves_the_first_submissions_of_the_seeded_order_whole_one_after_the_other_last(
    built: str, state: ReviewState,
) -> None:
    data = RunData(built)
    complete = data.complete()
    subs = list(zip(complete.column("system").to_pylist(), complete.column("task_id").to_pylist(), strict=True))
    whole = [i for i in state.queue if i.section == "full"]
    assert state.queue[-len(whole):] == whole  # after every other section, never reordered by impact
    blocks = [k for k, _ in groupby(whole, key=lambda i: (i.system, i.task_id))]
    assert blocks == sample_order(state.seed, subs)[:FULL]  # one submission after the other, in the seeded order
    for system, task in blocks:
        rows = data.grading_rows(str(data.grading_of(system, task)))
        items = [i for i in whole if (i.system, i.task_id) == (system, task)]
        assert sorted(i.criterion_id for i in items if i.kind == "criterion") == sorted(
            set(rows.verdicts.column("criterion_id").to_pylist()))
        unmerged = rows.flags.filter(pc.not_equal(rows.flags.column("status"), "merged"))
        assert sorted(i.flag_index for i in items if i.kind == "flag") == unmerged.column("flag_index").to_pylist()
    assert state.counts()["full"] == len(whole)


def test_decisions_on_the_page_record_their_section_and_seed_and_reduce_corrected_reads_the_full_ones(
    built: str, state: ReviewState, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(built, run)  # the same queue: the copy holds no decision either
    whole = [i for i in state.queue if i.section == "full"]
    other = next(i for i in state.queue if i.section != "full")
    with serving(str(run), "--sample", "4", "--full", str(FULL)) as url:
        with urllib.request.urlopen(url, timeout=60) as r:
            page = r.read().decode()
        assert f"then {len(whole)} item(s) of whole submissions in the seeded random order" in page
        for item in [other, *whole]:
            decision = "upheld" if item.kind == "flag" else "pass"
            status, out = _post(url, {"item": item.n, "key": list(item.key), "decision": decision, "reviewer": "Ada",
                                      "reason": "read the whole submission"})
            assert status == 201, out
    recorded = {d.item: d for d in adj.load(str(run)).decisions}
    assert (recorded[other.key].queue, recorded[other.key].seed) == (other.section,
                                                                      state.seed if other.section == "sample" else None)
    assert {(recorded[i.key].queue, recorded[i.key].seed) for i in whole} == {("full", state.seed)}
    lb = reduce_run(str(run), corrected=True, write=False)
    assert lb.corrected is not None and lb.corrected.n_labels == FULL and lb.corrected.seed == state.seed
