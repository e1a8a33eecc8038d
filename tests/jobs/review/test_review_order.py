"""The review queue spends the experts' time where scores move: items a decision can change a task
score or the gate of come first, by the size of the change; the queue page says how many there are;
after a decision the page opens the next undecided item, not the next one (issue 43). On a built run
(`tests.runfolder`, no Ray); the page in real Chromium, one browser context per reviewer."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.results import adjudications as adj
from jobs.review.app import ReviewState
from jobs.review.queue import RunData, build_queue
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
