"""`tribunal review RUN`: the queue's order, what a decision would change, and the real application.

The queue and the rescoring are checked on a built run folder (`tests.runfolder`, no Ray). The
application is checked as a publisher uses it: a demo-like sweep of one task of the sample (local
Ray, the emulated vendors with the demo personas, so judges split and the audit confirms material
flags; `REVIEW_TASK`),
`tribunal review` started as a subprocess on 127.0.0.1 (a free port, readiness by polling the
port), decisions made with the keyboard in Debian's Chromium driven by Playwright (as in
tests/jobs/per_run/test_report.py), and two reviewers deciding at once against a run on the local S3
server (moto) without losing a decision.
"""

from __future__ import annotations

import http.client
import json
import queue
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.compute as pc
import pytest
from markupsafe import escape
from typer.testing import CliRunner

from evalcore.config.models import VendorMode
from evalcore.grading.scoring import counted_materiality
from evalcore.results import adjudications as adj
from evalcore.results.leaderboard import Leaderboard
from evalcore.storage.run import open_run
from evalcore.storage.run_folder import (
    ADJUDICATIONS,
    LEADERBOARD_JSON,
    LEADERBOARD_PARQUET,
    LEADERBOARD_RAW_JSON,
    LEADERBOARD_RAW_PARQUET,
)
from evalcore.storage.store import read_table
from jobs.cli.app import app
from jobs.per_run.reduce import reduce_run
from jobs.review.app import ReviewState
from jobs.review.context import mark, page_text
from jobs.review.decisions import DecisionLog
from jobs.review.impact import Scorer
from jobs.review.queue import QueueItem, RunData, build_queue
from tests.browser import CHROMIUM, CHROMIUM_ARGS, needs_chromium
from tests.conftest import create_bucket, upload_tree
from tests.jobs.samples import cut_sample
from tests.ray_start import PROGRESS_DEADLINE_S
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

REPO = Path(__file__).resolve().parents[3]
URL = re.compile(r"(https?)://(?:127\.0\.0\.1|0\.0\.0\.0):(\d+)/")

# -- a built run (no Ray) ----------------------------------------------------------------------------

TRUTH = synthetic_ground_truth(seed=11, n_tasks=9, n_criteria=4)
TASKS = sorted(TRUTH["verdicts"]["gpt-strong"])


def _passing(system: str) -> list[str]:
    return [t for t in TASKS if all(v == "pass" for v in TRUTH["verdicts"][system][t].values())]


SPLIT = ("gpt-strong", _passing("gpt-strong")[0], "C-002")
"""One criterion on which the xai judge alone fails a submission every judge otherwise passes."""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> str:
    uri = str(tmp_path_factory.mktemp("review-built") / "run")
    system, task, cid = SPLIT
    build_run(uri, TRUTH, RunSpec(incomplete={("claude-average", TASKS[0])},
                                  judge_verdicts={"xai": {system: {task: {cid: "fail"}}}}))
    return uri


def _current_gids(run: str) -> set[str]:
    data = RunData(run)
    return set(data.complete().column("grading_id").to_pylist())


def test_the_queue_holds_material_flags_first_then_split_criteria_then_the_sample(built: str) -> None:
    data = RunData(built)
    items = build_queue(data, seed=1, sample=12)
    sections = [i.section for i in items]
    assert sections == sorted(sections, key=["material", "split", "sample"].index)
    assert [i.n for i in items] == list(range(len(items)))
    complete = _current_gids(built)
    flags = read_table(built, "flags").to_pylist()
    material = {(f["system"], f["task_id"], f["flag_index"]) for f in flags if f["grading_id"] in complete
                and counted_materiality(f["status"], f["materiality"]) == "material"}
    assert material and {(i.system, i.task_id, i.flag_index) for i in items if i.section == "material"} == material
    assert {(i.system, i.task_id, i.criterion_id) for i in items if i.section == "split"} == {SPLIT}
    sample = [i for i in items if i.section == "sample"]
    assert len(sample) == 12
    assert sum(i.kind == "flag" for i in sample) == 6 and sum(i.kind == "verdict" for i in sample) == 6  # half each
    by_key = {(f["system"], f["task_id"], f["flag_index"]): f for f in flags}
    for i in sample:
        if i.kind == "flag":  # merged flags are duplicates, material ones are queued already
            f = by_key[(i.system, i.task_id, i.flag_index)]
            assert f["status"] != "merged" and counted_materiality(f["status"], f["materiality"]) != "material"
        else:
            assert (i.system, i.task_id, i.criterion_id) != SPLIT
        assert i.grading_id in complete  # the incomplete grading is regraded, never reviewed
    assert len({i.key for i in items}) == len(items)


def test_the_calibration_sample_is_fixed_by_the_seed(built: str) -> None:
    data = RunData(built)

    def sample(seed: int) -> list[tuple[str, ...]]:
        return [i.key for i in build_queue(data, seed=seed, sample=10) if i.section == "sample"]

    assert sample(7) == sample(7)
    assert sample(7) != sample(8)
    assert set(sample(7)) <= set(i.key for i in build_queue(data, seed=7, sample=500))


def _only_material_flag(items: list[QueueItem], data: RunData) -> QueueItem:
    """A material flag that is its submission's only one, on a passing task (overturning it lifts the gate)."""
    for item in items:
        row = data.row(item.grading_id)
        if item.section == "material" and row["material_flags"] == 1 and (row["task_score"] or 0) > 0:
            return item
    raise AssertionError("the built run has no submission gated by exactly one material flag")


def test_what_a_decision_would_change_follows_the_scoring_rules_and_the_decisions_in_force(
    built: str, tmp_path: Path
) -> None:
    run = str(tmp_path / "run")
    shutil.copytree(built, run)
    data = RunData(run)
    item = _only_material_flag(build_queue(data, seed=1, sample=0), data)
    row = data.row(item.grading_id)
    subs = data.complete()
    mine = subs.filter(pc.equal(subs.column("system"), item.system))
    n = mine.num_rows
    rate = sum(h or 0.0 for h in mine.column("hc_score").to_pylist()) / n
    choices = [("u", "upheld", None, ""), ("o", "overturned", None, ""), ("m", "materiality", "minor", "")]
    scorer = Scorer(data)
    upheld, overturned, minor = scorer.outcomes(item, choices, {})
    assert (upheld.hc_before, upheld.hc_after) == (0.0, 0.0) and upheld.rate_after == pytest.approx(rate)
    # overturning the only material flag lifts the gate: the task keeps its score, the rate gains score / n
    assert overturned.hc_after == row["task_score"] and overturned.task_after == row["task_score"]
    assert overturned.rate_before == pytest.approx(rate)
    assert overturned.rate_after == pytest.approx(rate + row["task_score"] / n)
    assert minor.hc_after == row["task_score"]  # a minor hallucination never changes a score
    # once the overturn is recorded it is "before": upholding again would put the gate back
    log = DecisionLog(run)
    log.record(adj.Adjudication(run_id=data.run_id, kind="flag", system=item.system, task_id=item.task_id,
                                flag_index=item.flag_index, decision="overturned", reviewer="Ada", reason="x"))
    upheld, overturned, _ = scorer.outcomes(item, choices, log.refresh().latest())
    assert upheld.hc_before == row["task_score"] and upheld.hc_after == 0.0
    assert upheld.rate_before == pytest.approx(rate + row["task_score"] / n)
    assert overturned.hc_before == overturned.hc_after == row["task_score"]


def test_the_decision_log_reads_what_other_reviewers_recorded_since_its_last_refresh(built: str, tmp_path: Path) -> None:
    run = str(tmp_path / "run")
    shutil.copytree(built, run)
    mine, theirs = DecisionLog(run), DecisionLog(run)
    assert mine.refresh().decisions == []
    d = adj.Adjudication(run_id="run-test", kind="criterion", system=SPLIT[0], task_id=SPLIT[1],
                         criterion_id=SPLIT[2], decision="pass", reviewer="Bo", reason="x")
    theirs.record(d)
    (Path(run) / "adjudications" / "broken.json").write_text("{", encoding="utf-8")
    load = mine.refresh()
    [read] = load.decisions
    assert read.recorded_at is not None and read.model_copy(update={"recorded_at": None}) == d  # stamped when written
    assert len(load.problems) == 1 and "broken.json: not a readable decision" in load.problems[0]


def test_a_claim_is_marked_in_its_context_even_when_respaced_and_a_page_is_cut_at_its_headings() -> None:
    text = "Intro.\nThe   lease term is\nfive years.\nEnd."
    m = mark(text, "the lease term is five years.", context=3)
    assert m.found and m.match == "The   lease term is\nfive years." and m.cut_before and m.cut_after
    assert (m.before, m.after) == ("o.\n", "\nEn")
    assert not mark(text, "ten years").found
    doc = "## Page 1\nfirst page\n## Page 2 (OCR)\nsecond page\n## Page 3\nthird"
    assert page_text(doc, "Page 2") == "second page"
    assert page_text(doc, "Page 9") is None


# -- the application on a real sweep --------------------------------------------------------------------


REVIEW_TASK = "employment/restrictive-covenants"
"""The task the application is checked on: with the demo personas the audit confirms three material
flags on it (all in fluent-hallucinator's submission) and the judges split on a dozen of its
criteria, so the queue of its four submissions (one per system) holds material flags, split
criteria and the 20-item sample: 35 items, more than the 30 the two reviewers decide. The whole
sample (32 submissions, eight times the calls) gave these tests nothing more to check."""


@pytest.fixture(scope="module")
def swept(ray_local: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`REVIEW_TASK` swept like `tribunal demo`: emulated vendors with the demo personas, on local Ray."""
    from rich.console import Console

    from jobs.sweep.driver import run_sweep
    from jobs.sweep.prepare import SweepCommand, prepare_run

    bench = cut_sample(tmp_path_factory.mktemp("review-sample"), [REVIEW_TASK])
    out = tmp_path_factory.mktemp("review-sweep")
    cmd = SweepCommand(benchmark=str(bench), submissions=str(bench / "submissions"), output=str(out),
                       vendors=VendorMode.EMULATED, run_id="review", progress=False, shard_size=4, max_in_flight=1,
                       personas="demo")  # one shard, prepared as `tribunal demo` prepares its run
    with prepare_run(cmd, Console(stderr=True)) as opts:
        summary = run_sweep(opts)
    assert summary.complete == summary.graded == 4
    return Path(summary.run_uri)


@pytest.fixture
def run(swept: Path, tmp_path: Path) -> Path:
    """A fresh copy of the swept run for one test (its decisions are its own)."""
    copy = tmp_path / "review"
    shutil.copytree(swept, copy)
    return copy


@contextmanager
def serving(run: str, *args: str) -> Iterator[str]:
    """`tribunal review RUN --port 0` as a subprocess; yields its URL once the port accepts connections."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "jobs.cli", "review", run, "--port", "0", *args],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        seen: list[str] = []
        match = None
        while match is None:
            line = lines.get(timeout=PROGRESS_DEADLINE_S)  # the pump puts None when it exits
            if line is None:
                raise AssertionError(f"tribunal review exited ({proc.wait()}) without serving:\n{''.join(seen)}")
            seen.append(line)
            match = URL.search(line)
        scheme, port = match.group(1), int(match.group(2))
        deadline = time.monotonic() + 60
        while True:  # readiness: the port accepts a connection
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                try:
                    proc.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    pass
        yield f"{scheme}://127.0.0.1:{port}/"  # served on every address (0.0.0.0) too: reached on the loopback
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.loads(r.read())


def _csrf(url: str) -> str:
    """The page's CSRF token, as its script reads it (every write carries it)."""
    token: str = _get_json(url + "api/queue")["csrf"]
    return token


def _post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url + "api/decisions", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "X-CSRF-Token": _csrf(url),
                                          **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        text = exc.read().decode()
        return exc.code, json.loads(text) if text.startswith("{") else {"error": text}


def _decision_for(item: dict[str, Any], k: int) -> str:
    return ("upheld", "overturned")[k % 2] if item["kind"] == "flag" else ("pass", "fail")[k % 2]


def _reference_rate(run: str, system: str) -> float:
    """The system's headline with the decisions in force, the reduction's way: `adjudications.apply`
    over the whole run's current gradings."""
    data = RunData(run)
    con = duckdb.connect()
    con.register("verdicts_in", open_run(run).dataset("verdicts"))
    con.register("flags_in", open_run(run).dataset("flags"))
    rescored, _ = adj.apply(con, data.current, adj.load(run).latest())
    con.close()
    rows = [r for r in rescored.to_pylist() if r["system"] == system and r["status"] == "complete"]
    return sum(r["hc_score"] or 0.0 for r in rows) / len(rows)


@pytest.mark.ray
@pytest.mark.timeout(1200)  # the first one sweeps a task of the sample on Ray: minutes on a busy machine
@pytest.mark.browser
@needs_chromium
def test_a_reviewer_decides_by_keyboard_finds_the_decisions_kept_after_reload_and_reduce_applies_them(run: Path, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    items = ReviewState(str(run)).queue  # as served: ranked by impact (sample 20)
    material = [i for i in items if i.section == "material"]
    split = [i for i in items if i.section == "split"]
    assert len(material) == 2 and split, "the demo personas must give material flags and split criteria"
    first, second = material  # the two of one submission: decided, its gate lifts
    criterion = split[0]
    assert (first.n, second.n) == (0, 1) and len({i.grading_id for i in material}) == 1
    reduce_run(str(run))  # the leaderboard before any decision
    raw_json, raw_parquet = (run / LEADERBOARD_JSON).read_bytes(), (run / LEADERBOARD_PARQUET).read_bytes()
    with serving(str(run)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.set_default_timeout(60_000)
        errors: list[str] = []
        requests: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))

        page.goto(url)
        expect(page.locator("#total-count")).to_have_text(str(len(items)))
        page.keyboard.press("Enter")  # the queue page opens the first undecided item
        page.wait_for_url(f"{url}item/{first.n}")
        expect(page.locator("#span-in-context")).to_be_visible()  # the claim, marked in its deliverable

        # no reviewer name yet: the decision is refused, the name field is focused
        page.keyboard.press("o")
        assert page.evaluate("document.activeElement.id") == "reason"
        page.keyboard.type("the date is in the renewal e-mail, so not invented")
        page.keyboard.press("Enter")
        expect(page.locator("#status")).to_contain_text("type your name")
        assert page.evaluate("document.activeElement.id") == "reviewer"
        assert not (run / "adjudications").exists()

        page.keyboard.type("Ada Expert")
        page.keyboard.press("Escape")
        page.keyboard.press("o")  # 1: overturn the material flag
        page.keyboard.press("Enter")
        page.wait_for_url(f"{url}item/{second.n}")

        page.keyboard.press("m")  # 2: toggle the materiality (material -> minor)
        expect(page.locator("#materiality-target")).to_have_text("minor")
        page.keyboard.type("a slip in a side remark, nothing turns on it")
        page.keyboard.press("Enter")
        page.wait_for_url(f"{url}item/{second.n + 1}")  # after a decision: the next undecided item

        page.goto(f"{url}item/{criterion.n}")
        page.keyboard.press("f")  # 3: the criterion fails for the whole panel
        page.keyboard.type("the memo never states the figure")
        page.keyboard.press("Enter")
        page.wait_for_url(f"{url}item/{criterion.n + 1}")

        page.reload()
        page.goto(f"{url}item/{first.n}")
        assert page.locator("#reviewer").input_value() == "Ada Expert"  # kept in localStorage
        expect(page.locator("#in-force")).to_contain_text("Decided: overturned")
        expect(page.locator("#in-force")).to_contain_text("Ada Expert")
        assert page.locator("#history tr").count() == 1
        # "before" now has the overturn in force: the headline is the reduction's, decisions applied
        headline = page.locator('#impact tr[data-decision="upheld"] td').nth(3).inner_text()
        assert headline.startswith(f"{100 * _reference_rate(str(run), first.system):.1f}% →")
        page.goto(f"{url}item/{second.n}")
        expect(page.locator("#in-force")).to_contain_text("Decided: materiality (minor)")
        page.goto(f"{url}item/{criterion.n}")
        expect(page.locator("#in-force")).to_contain_text("Decided: fail")
        page.goto(url)
        expect(page.locator("#decided-count")).to_have_text("3")
        expect(page.locator("#queue tr.decided")).to_have_count(3)
        page.screenshot(path=str(tmp_path / "queue.png"), full_page=True)
        browser.close()

    assert errors == []
    assert all(r.startswith(url) or r.startswith("data:") for r in requests), requests
    files = sorted((run / "adjudications").glob("*.json"))
    assert len(files) == 3
    loaded = adj.load(str(run))
    assert loaded.problems == []
    got = {d.item: (d.decision, d.materiality, d.reviewer, d.reason) for d in loaded.decisions}
    assert got == {
        first.key: ("overturned", None, "Ada Expert", "the date is in the renewal e-mail, so not invented"),
        second.key: ("materiality", "minor", "Ada Expert", "a slip in a side remark, nothing turns on it"),
        criterion.key: ("fail", None, "Ada Expert", "the memo never states the figure"),
    }

    # `tribunal reduce` applies them by the rules; `--no-adjudications` gives the sweep's leaderboard back
    raw = Leaderboard.model_validate_json(raw_json)
    expected = _expected_rates_after(run, raw, flag_decided=material, criterion_failed=criterion)
    raw_rank = {r.system: r.rank for r in raw.systems}
    raw_rate = {r.system: r.hc_pass_rate.value for r in raw.systems}
    assert expected[first.system] != raw_rate[first.system], "the lifted gate must move the system's rate"
    result = CliRunner().invoke(app, ["reduce", str(run)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "adjudicated: 3 item(s) decided" in result.output
    after = Leaderboard.model_validate_json((run / LEADERBOARD_JSON).read_bytes())
    assert {r.system: r.hc_pass_rate.value for r in after.systems} == pytest.approx(expected)
    for r in after.systems:  # competition ranking by the headline, decisions applied
        assert r.rank == 1 + sum(v > expected[r.system] for v in expected.values())
    assert {r.system: r.rank for r in after.systems}[first.system] != raw_rank[first.system]
    assert after.adjudication is not None
    assert after.adjudication.by_system == dict(Counter(i.system for i in (*material, criterion)))
    moved = {c.system: (c.hc_pass_rate_before, c.hc_pass_rate_after, c.rank_before, c.rank_after)
             for c in after.adjudication.changes}
    for r in raw.systems:
        if r.system in moved:
            assert moved[r.system][0] == pytest.approx(r.hc_pass_rate.value) and moved[r.system][2] == r.rank
    in_force = (run / LEADERBOARD_JSON).read_bytes()
    result = CliRunner().invoke(app, ["reduce", str(run), "--no-adjudications"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert (run / LEADERBOARD_RAW_JSON).read_bytes() == raw_json  # the raw view, written apart
    assert (run / LEADERBOARD_RAW_PARQUET).read_bytes() == raw_parquet
    assert (run / LEADERBOARD_JSON).read_bytes() == in_force  # the files in force are left as they were


def _expected_rates_after(
    run: Path, raw: Leaderboard, *, flag_decided: list[QueueItem], criterion_failed: QueueItem
) -> dict[str, float]:
    """Each system's headline after the browser test's decisions, by the rules worked by hand.

    The swept task gives every system one submission, so a system's rate is its submission's
    hallucination-controlled score. A criterion failed for the whole panel leaves no judge passing
    every criterion: task score 0. A flag overturned no longer counts, one made minor never gates:
    the gate lifts when no other confirmed material flag is left, and the score is the task score.
    """
    rates = {r.system: float(r.hc_pass_rate.value or 0.0) for r in raw.systems}  # each system is scored
    subs = {r["grading_id"]: r for r in RunData(str(run)).complete().to_pylist()}
    flags = [f for f in read_table(str(run), "flags").to_pylist() if f["grading_id"] in subs]
    [gid] = {i.grading_id for i in flag_decided}
    decided = {i.flag_index for i in flag_decided}
    left = [f for f in flags if f["grading_id"] == gid and f["flag_index"] not in decided
            and counted_materiality(f["status"], f["materiality"]) == "material"]
    rates[subs[gid]["system"]] = 0.0 if left else float(subs[gid]["task_score"])
    rates[subs[criterion_failed.grading_id]["system"]] = 0.0
    return rates


@pytest.mark.ray
@pytest.mark.timeout(1200)  # the first one sweeps a task of the sample on Ray: minutes on a busy machine
@pytest.mark.browser
@needs_chromium
def test_the_filters_narrow_the_queue_and_its_progress(run: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    items = ReviewState(str(run)).queue  # as served: ranked by impact (sample 20)
    system = items[0].system
    flags_of_system = [i for i in items if i.system == system and i.kind == "flag"]
    category = flags_of_system[0].category
    with serving(str(run)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{url}item/{items[-1].n}")
        page.select_option("#f-system", system)
        page.wait_for_url(re.compile(re.escape(url) + r"item/\d+\?system="))
        mine = [i for i in items if i.system == system]
        expect(page.locator("#total-count")).to_have_text(str(len(mine)))
        page.select_option("#f-category", category)
        page.wait_for_url(re.compile(r"category="))
        both = [i for i in mine if i.category == category]
        expect(page.locator("#total-count")).to_have_text(str(len(both)))
        assert page.url.split("?")[0].endswith(f"/item/{both[0].n}")
        listed = _get_json(f"{url}api/queue?system={system}&category={category}")
        assert [i["n"] for i in listed["items"]] == [i.n for i in both]
        browser.close()


@pytest.mark.ray
@pytest.mark.timeout(1200)  # the first one sweeps a task of the sample on Ray: minutes on a busy machine
def test_item_pages_show_what_an_expert_needs_and_load_nothing_from_elsewhere(run: Path) -> None:
    data = RunData(str(run))
    items = ReviewState(str(run)).queue  # as served: ranked by impact (sample 20)
    flag = next(i for i in items if i.section == "material")
    split = next(i for i in items if i.section == "split")
    rows = data.grading_rows(flag.grading_id).flags.to_pylist()
    f = next(r for r in rows if r["flag_index"] == flag.flag_index)
    verdicts = [v for v in data.grading_rows(split.grading_id).verdicts.to_pylist() if v["criterion_id"] == split.criterion_id]
    with serving(str(run)) as url:
        with urllib.request.urlopen(f"{url}item/{flag.n}", timeout=60) as r:
            csp = r.headers["Content-Security-Policy"]
            html = r.read().decode()
        with urllib.request.urlopen(f"{url}item/{split.n}", timeout=60) as r:
            criterion_html = r.read().decode()
    assert "default-src 'none'" in csp and "script-src 'nonce-" in csp
    assert re.search(r'<mark id="span-in-context">' + re.escape(str(escape(f["span"]))) + "</mark>", html)
    for text in (f["explanation"], f["rationale"], f["evidence_document"]):
        assert str(escape(text)) in html
    for v in verdicts:
        assert str(escape(v["reasoning"])) in criterion_html
    assert {v["verdict"] for v in verdicts} == {"pass", "fail"}
    for page in (html, criterion_html):
        assert not re.search(r"<(link(?! rel=\"icon\" href=\"data:,\")|iframe|object|embed)\b", page, re.I)
        assert not re.search(r"""(src|href|action)\s*=\s*["']?(https?:)?//""", page, re.I)
        assert not re.findall(r"https?://", page)


@pytest.mark.ray
@pytest.mark.timeout(1200)  # the first one sweeps a task of the sample on Ray: minutes on a busy machine
def test_a_decision_without_reviewer_or_reason_or_from_another_origin_is_refused(run: Path) -> None:
    item = ReviewState(str(run)).queue[0]  # as served
    ok = {"item": item.n, "key": list(item.key), "decision": "upheld", "reviewer": "Ada", "reason": "checked"}
    with serving(str(run)) as url:
        assert _post(url, {**ok, "reviewer": " "}) == (400, {"error": "a reviewer name is required: type your name "
                                                                      "in the reviewer field"})
        assert _post(url, {**ok, "reason": ""})[0] == 400
        assert _post(url, {**ok, "decision": "pass"})[1]["error"].startswith("a flag decision is one of")
        assert _post(url, {**ok, "key": ["flag", "x", "y", "0"]})[0] == 409
        assert _post(url, {**ok, "item": 10_000})[0] == 404
        assert _post(url, ok, {"Origin": "http://evil.example"})[0] == 403
        assert _post(url, ok, {"Content-Type": "text/plain"})[0] == 415
        assert _post(url, ok, {"Host": "evil.example"})[0] == 400  # DNS rebinding: only local host names
        assert not (run / "adjudications").exists()
        status, out = _post(url, ok)
        assert status == 201 and out["decision"]["reviewer"] == "Ada" and out["decided"] == 1
    assert [d.item for d in adj.load(str(run)).decisions] == [item.key]


@pytest.mark.ray
@pytest.mark.timeout(1200)  # the first one sweeps a task of the sample on Ray: minutes on a busy machine
@pytest.mark.s3
def test_two_reviewers_deciding_at_once_on_an_s3_run_lose_no_decision(swept: Path, s3_server: str, tmp_path: Path) -> None:
    local = tmp_path / "run"
    shutil.copytree(swept, local, ignore=shutil.ignore_patterns(ADJUDICATIONS))
    bucket = create_bucket(s3_server)
    upload_tree(s3_server, local, bucket, "runs/review")
    uri = f"s3://{bucket}/runs/review"
    with serving(uri, "--endpoint-url", s3_server) as a, serving(uri, "--endpoint-url", s3_server) as b:
        items = _get_json(f"{a}api/queue")["items"][:30]
        assert len(items) == 30
        start = threading.Barrier(2)
        results: dict[str, list[int]] = {"Ada": [], "Bo": []}

        def decide(url: str, reviewer: str) -> None:
            start.wait()
            for k, item in enumerate(items):  # both reviewers decide every item, at the same moment
                status, _ = _post(url, {"item": item["n"], "key": item["key"], "decision": _decision_for(item, k),
                                        "reviewer": reviewer, "reason": f"{reviewer} on {item['n']}"})
                results[reviewer].append(status)

        threads = [threading.Thread(target=decide, args=(a, "Ada")), threading.Thread(target=decide, args=(b, "Bo"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == {"Ada": [201] * 30, "Bo": [201] * 30}
        seen_by_a = _get_json(f"{a}api/queue")
        assert seen_by_a["decided"] == 30 and seen_by_a["problems"] == []
        with urllib.request.urlopen(f"{b}item/{items[0]['n']}", timeout=60) as r:
            page = r.read().decode()
        assert "Ada on " in page and "Bo on " in page  # each reviewer's decision is in the history
    loaded = adj.load(uri, s3_server)
    assert loaded.problems == []
    assert len(loaded.decisions) == 60 and len({d.decision_id for d in loaded.decisions}) == 60
    assert sorted((d.reviewer, d.reason) for d in loaded.decisions) == sorted(
        (r, f"{r} on {i['n']}") for r in ("Ada", "Bo") for i in items)
    assert set(loaded.latest()) == {tuple(i["key"]) for i in items}


# -- the page's writes: size and origin (issue 43) ---------------------------------------------------


def _flag_item(run: str) -> tuple[QueueItem, dict[str, Any]]:
    item = next(i for i in ReviewState(run).queue if i.kind == "flag")  # as served
    return item, {"item": item.n, "key": list(item.key), "decision": "upheld", "reviewer": "Ada", "reason": "checked"}


def test_served_on_every_address_a_foreign_host_or_origin_is_refused_on_every_write_dns_rebinding(
    built: str, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(built, run)
    item, ok = _flag_item(str(run))
    # every address without TLS or accounts is refused unless --insecure (tests/jobs/review/test_security.py)
    with serving(str(run), "--host", "0.0.0.0", "--allowed-host", "review.lab.example", "--insecure") as url:
        port = url.rsplit(":", 1)[1].strip("/")
        with urllib.request.urlopen(url, timeout=60) as r:  # --insecure is said on every page
            assert 'id="insecure"' in r.read().decode()
        # a page of evil.example whose name was rebound to this machine: its own Host and Origin
        rebound = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
        assert _post(url, ok, rebound)[0] in (400, 403)
        assert _post(url, ok, {"Origin": f"http://evil.example:{port}"}) == (
            403, {"error": f"cross-origin decision refused (from http://evil.example:{port})"})
        assert _post(url, ok, {"Sec-Fetch-Site": "cross-site"})[0] == 403
        assert not (run / "adjudications").exists()
        named = {"Host": f"review.lab.example:{port}", "Origin": f"http://review.lab.example:{port}"}
        status, out = _post(url, ok, named)  # the name the operator allowed
        assert status == 201, out
    [d] = adj.load(str(run)).decisions
    assert d.item == item.key and d.grading_id == item.grading_id and d.claim_hash is not None


def test_a_reason_over_the_documented_limit_is_refused_before_it_is_stored(built: str, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(built, run)
    _, ok = _flag_item(str(run))
    with serving(str(run)) as url:
        status, out = _post(url, {**ok, "reason": "r" * (adj.MAX_REASON_CHARS + 1)})
        assert status == 413 and out["error"] == (f"the reason is {adj.MAX_REASON_CHARS + 1:,} characters long; a "
                                                  f"reason may have at most {adj.MAX_REASON_CHARS:,}: shorten it")
        big = json.dumps({**ok, "reason": "r" * 20_000_000}).encode()  # 20 MB: refused before it is read whole
        conn = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1].strip("/")), timeout=60)
        try:
            conn.putrequest("POST", "/api/decisions")
            conn.putheader("Content-Type", "application/json")
            conn.putheader("X-CSRF-Token", _csrf(url))
            conn.putheader("Content-Length", str(len(big)))
            conn.endheaders(big[:65536])  # the server answers on the headers; the rest is never sent
            response = conn.getresponse()
            assert response.status == 413 and b"is refused (at most" in response.read()
        finally:
            conn.close()
    assert not (run / "adjudications").exists()


@needs_chromium
def test_on_the_page_a_reason_over_the_limit_is_refused_naming_the_limit_and_nothing_is_recorded(
    built: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect, sync_playwright

    run = tmp_path / "run"
    shutil.copytree(built, run)
    item, _ = _flag_item(str(run))
    with serving(str(run)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.set_default_timeout(60_000)
            page.goto(f"{url}item/{item.n}")
            page.fill("#reviewer", "Ada Expert")
            page.keyboard.press("Escape")
            page.keyboard.press("u")
            page.fill("#reason", "r" * (adj.MAX_REASON_CHARS + 1))
            page.focus("#reason")
            page.keyboard.press("Enter")
            expect(page.locator("#status")).to_contain_text(f"a reason may have at most {adj.MAX_REASON_CHARS:,}")
            assert page.url == f"{url}item/{item.n}"  # stays on the item, the reason kept to shorten
        finally:
            browser.close()
    assert not (run / "adjudications").exists()
