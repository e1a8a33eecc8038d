"""A team's review in real Chromium (issue 38): two reviewers and a lead, each in their own
browser context, on a demo-like run (`tests.jobs.review.team_run`, built without Ray) served by
`tribunal review --users FILE` as a subprocess. The lead starts a campaign with k = 2 on the
material flags; each reviewer sees only their items, blind (no system's name in the page's DOM or
its JSON); one item decided differently goes to the lead, who resolves it; the reduction applies
exactly the decisions in force; the agreement figures equal the hand-worked example below. And
hostile text (a memo, a judge's reasoning, a flag's span with ``<script>`` and ``<img onerror>``)
renders inert: no script runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from evalcore.results import adjudications as adj
from evalcore.results import review_trail
from evalcore.storage.run_folder import REPORT_HTML
from jobs.display.calibration import render_calibration
from jobs.per_run.calibrate import calibrate_run
from jobs.per_run.reduce import reduce_run
from jobs.per_run.report import write_report
from jobs.review.state import ReviewState
from tests.browser import CHROMIUM, CHROMIUM_ARGS, needs_chromium
from tests.jobs.review.team_run import PASSWORD, PAYLOAD, TASK, build_team_run, users_file
from tests.jobs.review.test_review import serving
from tests.runfolder import SYSTEMS

pytestmark = [needs_chromium, pytest.mark.browser]

# The four material flags, in the reviewers' (queue) order:   ana: o o u u    ben: o o u o
ANA = ["o", "o", "u", "u"]
BEN = ["o", "o", "u", "o"]
# By hand. Cohen's κ: p_o = 3/4; ana says o on 2/4, ben on 3/4, so p_e = 1/2·3/4 + 1/2·1/4 = 1/2 and
# κ = (3/4 - 1/2) / (1/2) = 1/2. Krippendorff's α (nominal): 8 pairable values, n_o = 5, n_u = 3; only
# the fourth item disagrees, o_ou = o_uo = 1, so α = 1 - (n - 1)·2 / (2·n_o·n_u) = 1 - 7·2/30 = 8/15.
KAPPA = 0.5
ALPHA = 8 / 15


def _sign_in(browser: Any, url: str, name: str) -> Any:
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(url)
    assert "/login" in page.url  # every page asks for a session first
    page.fill("#name", name)
    page.fill("#password", PASSWORD)
    page.click("#sign-in")
    page.wait_for_selector("#account")
    assert page.locator("#account").inner_text() == name
    return page


def _blind(text: str) -> None:
    for system in SYSTEMS:
        assert system not in text


def _decide(page: Any, url: str, n: int, key: str, reason: str) -> None:
    page.goto(f"{url}item/{n}")
    _blind(page.content())
    page.keyboard.press(key)
    page.fill("#reason", reason)
    page.focus("#reason")
    _record(page)


def _record(page: Any) -> None:
    """Enter records the decision; the page then opens the next item (or says why it could not)."""
    here = page.url
    page.keyboard.press("Enter")
    page.wait_for_function("(here) => window.location.href !== here || document.querySelector('#status.error')", arg=here)
    assert page.url != here, page.locator("#status").inner_text()


def test_two_reviewers_and_a_lead_review_blind_with_k_two_and_the_lead_resolves_the_disagreement(
    tmp_path: Path,
) -> None:
    from playwright.sync_api import expect, sync_playwright

    run = build_team_run(tmp_path)
    material = [i for i in ReviewState(str(run)).queue if i.section == "material"]
    assert len(material) == 4
    with serving(str(run), "--users", str(users_file(tmp_path))) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            lee = _sign_in(browser, url, "lee")
            lee.goto(f"{url}lead")
            lee.check('input[name="reviewers"][value="ana"]')
            lee.check('input[name="reviewers"][value="ben"]')
            lee.fill('input[name="k"]', "2")
            lee.click("#start-campaign")
            expect(lee.locator("#campaigns tbody tr")).to_have_count(1)  # the page reloads with it
            ana, ben = _sign_in(browser, url, "ana"), _sign_in(browser, url, "ben")
            for page, calls in ((ana, ANA), (ben, BEN)):
                page.goto(url)
                _blind(page.content())
                queue = page.request.get(f"{url}api/queue")
                _blind(queue.text())
                items = sorted(queue.json()["items"], key=lambda i: i["n"])
                assert [i["n"] for i in items] == sorted(i.n for i in material)  # k = 2 of 2: both get all four
                for item, key in zip(items, calls, strict=True):
                    _decide(page, url, item["n"], key, f"{page.locator('#account').inner_text()} checked the MSA")
                    assert page.url.startswith(url)
            lee.goto(f"{url}lead")
            split = lee.locator("#resolution tbody tr")
            expect(split).to_have_count(1)
            n = int(split.get_attribute("data-n") or "-1")
            assert n == sorted(i.n for i in material)[3]
            expect(split).to_contain_text("ana checked the MSA")
            expect(split).to_contain_text("ben checked the MSA")
            lead = lee.request.get(f"{url}api/lead").json()
            (pair,) = lead["agreement"]["pairs"]
            assert (pair["a"], pair["b"], pair["n"], pair["agreed"]) == ("ana", "ben", 4, 3)
            assert pair["kappa"] == pytest.approx(KAPPA)
            overall = next(a for a in lead["agreement"]["alpha"] if a["kind"] == "all")
            assert overall["alpha"] == pytest.approx(ALPHA) and overall["n_items"] == 4
            expect(lee.locator('#agreement tr[data-kind="all"] .alpha')).to_have_text(f"{ALPHA:.2f}")
            expect(lee.locator('#agreement tr[data-pair="ana ben"] .kappa')).to_have_text(f"{KAPPA:.2f}")
            lee.goto(f"{url}item/{n}")
            expect(lee.locator("#resolving")).to_be_visible()
            lee.keyboard.press("u")
            lee.fill("#reason", "the clause says so on page 2")
            lee.focus("#reason")
            _record(lee)
            lee.goto(f"{url}lead")
            expect(lee.locator("#nothing-to-resolve")).to_be_visible()
        finally:
            browser.close()
    load = adj.load(str(run))
    in_force = load.latest()
    by_n = {i.n: i for i in material}
    expected = {by_n[k].key: ("overturned" if c == "o" else "upheld") for k, c in zip(sorted(by_n), ANA, strict=True)}
    assert {k: d.decision for k, d in in_force.items()} == expected
    assert in_force[by_n[n].key].reviewer == "lee" and in_force[by_n[n].key].resolution
    lb = reduce_run(str(run))
    assert lb.adjudication is not None
    assert lb.adjudication.decisions_in_force == 4 and lb.adjudication.decisions_recorded == 9
    overturned = {by_n[k].system for k, c in zip(sorted(by_n), ANA, strict=True) if c == "o"}
    gated = {r.system: r.hc_score_after for r in lb.adjudication.rescored}
    for system in overturned - {by_n[k].system for k, c in zip(sorted(by_n), ANA, strict=True) if c == "u"}:
        assert gated[system] is not None and gated[system] > 0  # every material flag overturned: the gate lifted
    cal = calibrate_run(str(run), None)  # `tribunal calibrate`: the same figures, kept in calibration.json
    assert cal.reviewers is not None
    (pair,) = cal.reviewers.pairs
    assert pair.kappa == pytest.approx(KAPPA) and cal.reviewers.alphas[0].alpha == pytest.approx(ALPHA)
    # every flag was confirmed material: ana upholds 2 of 4 (overturns 1/2), ben 1 of 4 (overturns 3/4)
    assert {(v.reviewer, v.n, v.overturn_share) for v in cal.reviewers.vs_machine} == {("ana", 4, 0.5), ("ben", 4, 0.75)}
    console = Console(record=True, width=160)
    render_calibration(cal, console)
    printed = console.export_text()
    assert "Reviewers against each other" in printed and f"{ALPHA:.2f}" in printed and "ana · ben" in printed
    write_report(str(run))  # and in the report
    html = (run / REPORT_HTML).read_text(encoding="utf-8")
    assert 'id="calibration-reviewers"' in html and f"<td>{ALPHA:.2f}</td>" in html and "ana · ben" in html
    trail = {(e.kind, e.actor) for e in review_trail.read(str(run))}
    assert {("sign_in", "ana"), ("sign_in", "ben"), ("sign_in", "lee"), ("campaign", "lee"),
            ("resolution", "lee")} <= trail


def test_hostile_text_in_a_memo_a_reasoning_and_a_span_renders_inert_in_chromium(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    run = build_team_run(tmp_path, hostile=True)
    state = ReviewState(str(run))
    flag = next(i for i in state.queue if i.kind == "flag" and i.flag_index == 0 and i.system == "fluent-hallucinator")
    criterion = next(i for i in state.queue if i.kind == "criterion" and i.system == "gpt-strong"
                     and i.task_id == TASK and i.criterion_id == "C-003")
    with serving(str(run)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_context().new_page()
            page.set_default_timeout(60_000)
            for item, where in ((flag, "#span"), (criterion, "#judges"), (criterion, "#deliverables")):
                page.goto(f"{url}item/{item.n}")
                page.wait_for_load_state("load")
                assert page.evaluate("() => window.__pwned === undefined")
                assert "<script>window.__pwned" in page.locator(where).inner_text()  # shown as text
                assert page.locator(f"{where} script, {where} img, {where} svg").count() == 0
        finally:
            browser.close()
    assert json.dumps(PAYLOAD)  # the payload planted is the one checked
