"""The review queue spends the experts' time where scores move: items a decision can change a task
score or the gate of come first, by the size of the change; the queue page says how many there are;
after a decision the page opens the next undecided item, not the next one (issue 43). On a built run
(`tests.runfolder`, no Ray); the page in real Chromium, one browser context per reviewer."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.results import adjudications as adj
from jobs.review.app import ReviewState
from jobs.review.queue import QueueItem, RunData, build_queue
from tests.browser import CHROMIUM, CHROMIUM_ARGS, needs_chromium
from tests.jobs.review.test_review import serving
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

TRUTH = synthetic_ground_truth(seed=11, n_tasks=9, n_criteria=4)
TASKS = sorted(TRUTH["verdicts"]["gpt-strong"])


def _passing(system: str) -> list[str]:
    return [t for t in TASKS if all(v == "pass" for v in TRUTH["verdicts"][system][t].values())]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Split criteria of two kinds: on `grok-weak` (alphabetically late) the xai judge alone fails a
    criterion of a submission every judge otherwise passes (deciding it moves the score); on
    `claude-average` (early) every judge but one fails a whole-failing submission (moves nothing)."""
    uri = str(tmp_path_factory.mktemp("review-order") / "run")
    weak_pass = _passing("grok-weak") or _passing("gpt-strong")
    system = "grok-weak" if _passing("grok-weak") else "gpt-strong"
    failing = [t for t in TASKS if sum(v == "fail" for v in TRUTH["verdicts"]["claude-average"][t].values()) >= 2]
    judge_verdicts: dict[str, dict[str, dict[str, dict[str, str]]]] = {"xai": {system: {weak_pass[0]: {"C-002": "fail"}}}}
    if failing:
        crit = next(c for c, v in TRUTH["verdicts"]["claude-average"][failing[0]].items() if v == "fail")
        judge_verdicts["openai"] = {"claude-average": {failing[0]: {crit: "pass"}}}
    build_run(uri, TRUTH, RunSpec(judge_verdicts=judge_verdicts))
    return uri


def test_the_queue_leads_with_items_that_move_a_score_largest_change_first(built: str) -> None:
    data = RunData(built)
    raw = build_queue(data, seed=int(data.record.config.seed), sample=10)
    state = ReviewState(built, sample=10)
    queue = state.queue
    assert sorted(i.key for i in queue) == sorted(i.key for i in raw)  # the same items, another order
    assert [i.n for i in queue] == list(range(len(queue)))
    movers = [i for i in queue if i.moves_score]
    assert movers and queue[0].moves_score
    assert queue[: len(movers)] == movers  # every item that can move a score before any that cannot
    sizes = [(i.score_change, i.task_change) for i in movers]
    assert sizes == sorted(sizes, reverse=True)
    assert any(not i.moves_score for i in queue)  # and some cannot: the order matters here
    assert state.counts()["moves_score"] == len(movers)


@needs_chromium
@pytest.mark.browser
def test_the_page_says_how_many_items_move_a_score_and_a_decision_leads_to_the_next_undecided(
    built: str, tmp_path: Path
) -> None:
    import shutil

    from playwright.sync_api import expect, sync_playwright

    run = tmp_path / "run"
    shutil.copytree(built, run)
    state = ReviewState(str(run), sample=10)
    first, second, third = state.queue[:3]
    movers = state.counts()["moves_score"]
    # another reviewer already decided the second item
    adj.record(str(run), adj.Adjudication(
        run_id=state.data.run_id, kind=second.kind, system=second.system, task_id=second.task_id,
        flag_index=second.flag_index, criterion_id=second.criterion_id, judge=second.judge,
        decision="upheld" if second.kind == "flag" else "pass", reviewer="Bo", reason="decided before"))
    with serving(str(run), "--sample", "10") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(60_000)
            page.goto(url)
            expect(page.locator("#moves-count")).to_have_text(str(movers))
            expect(page.locator("#movers")).to_contain_text("can move a score")
            page.keyboard.press("Enter")
            page.wait_for_url(f"{url}item/{first.n}")
            key = "o" if first.kind == "flag" else "p"
            page.locator("#reviewer").fill("Ada Expert")
            page.keyboard.press("Escape")
            page.keyboard.press(key)
            page.keyboard.type("the passage the judges cited settles it")
            page.keyboard.press("Enter")
            page.wait_for_url(f"{url}item/{third.n}")  # not item 1: another reviewer decided it
        finally:
            browser.close()


def test_the_impact_sizes_are_the_reductions_rescoring_of_every_choice_with_decisions_in_force(
    built: str, tmp_path: Path
) -> None:
    """The fast path (each grading's rows read once, every what-if rescored in memory) orders the queue
    by the rule: each item's size is what `adjudications.apply` over the whole run (the reduction's
    way) gives for its choices, with other decisions in force, one of them made on a replaced grading."""
    import shutil

    import duckdb

    from evalcore.storage.run import open_run
    from jobs.review.impact import _delta, preview
    from jobs.review.state import choices

    run = tmp_path / "run"
    shutil.copytree(built, run)
    data = RunData(str(run))
    raw = build_queue(data, seed=int(data.record.config.seed), sample=10)
    split = [i for i in raw if i.section == "split"]
    sample = [i for i in raw if i.section == "sample"]
    fresh = ReviewState(str(run), sample=10)
    mover = next(i for i in fresh.queue if i.section == "split" and i.moves_score)
    assert len(sample) >= 3
    decided = sample[:3]
    made = [data.identified(adj.Adjudication(
        run_id=data.run_id, kind=i.kind, system=i.system, task_id=i.task_id, flag_index=i.flag_index,
        criterion_id=i.criterion_id, judge=i.judge, decision=_choice(i, k), reviewer="Al", reason="in force"))
        for k, i in enumerate(decided)]
    # a decision that would move a score, but made on a grading a later sweep replaced: set aside
    _, afters = fresh.scorer.submission_changes(mover, choices(mover), {})
    moving = next(c[1] for c, a in zip(choices(mover), afters, strict=True)
                  if _delta(fresh.scorer.raw(mover.grading_id).hc_score, a.hc_score) > 0)
    stale = data.identified(adj.Adjudication(
        run_id=data.run_id, kind=mover.kind, system=mover.system, task_id=mover.task_id,
        criterion_id=mover.criterion_id, decision=moving, reviewer="Al", reason="on the old grading",
    )).model_copy(update={"grading_id": "g-replaced"})
    adj.record_all(str(run), [*made, stale])
    latest = adj.load(str(run)).latest()
    state = ReviewState(str(run), sample=10)

    con = duckdb.connect()
    con.register("verdicts_in", open_run(str(run)).dataset("verdicts"))
    con.register("flags_in", open_run(str(run)).dataset("flags"))

    def reference(gid: str, decisions: dict[tuple[str, ...], adj.Adjudication]) -> tuple[float, float]:
        out, _ = adj.apply(con, data.current, decisions)
        row = next(r for r in out.to_pylist() if r["grading_id"] == gid)
        return float(row["hc_score"] or 0.0), float(row["task_score"] or 0.0)

    checked = 0
    for item in (i for i in state.queue if i.section != "full"):
        before = reference(item.grading_id, latest)
        mine = state.scorer.scores(item.grading_id, state.scorer.in_force(latest).get(item.grading_id, []))
        assert (float(mine.hc_score or 0.0), float(mine.task_score or 0.0)) == before, item.key
        if item.section == "material":  # sized by overturning every material flag of its submission
            mine = [i for i in state.queue if i.section == "material" and i.grading_id == item.grading_id]
            after = reference(item.grading_id, {**latest, **{i.key: preview(i, data.run_id, "overturned")
                                                            for i in mine}})
            hc, task = _delta(before[0], after[0]), _delta(before[1], after[1])
        else:
            others = {k: d for k, d in latest.items() if k != item.key}
            hc = task = 0.0
            for _, decision, materiality, _ in choices(item):
                what_if = {**others, item.key: preview(item, data.run_id, decision, materiality)}
                after = reference(item.grading_id, what_if)
                hc, task = max(hc, _delta(before[0], after[0])), max(task, _delta(before[1], after[1]))
        assert (item.score_change, item.task_change) == (hc, task), item.key
        checked += 1
    con.close()
    assert checked >= len(split) and any(i.moves_score for i in state.queue)


def _choice(item: QueueItem, k: int) -> str:
    return ("upheld", "overturned")[k % 2] if item.kind == "flag" else ("fail", "pass")[k % 2]
