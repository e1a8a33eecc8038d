"""`tribunal report`: one self-contained report.html, checked in a real headless Chromium.

The browser is Debian's `chromium` package at /usr/bin/chromium (`.ci/run` installs it), driven by
the `playwright` Python package. Outside CI the browser tests skip when it is not installed.

The run under test is the synthetic run of `tests.runfolder`, with what an operator's questions
need on top: some flags cite a .docx, a .xlsx and an .eml of a real benchmark task (the sample's
msa-renewal documents, copied under the flagged task's id), one fabricated source cites nothing,
calls carry cached input tokens and batch ids (batch mode on in run.json), and experts decided a
flag, a verdict and a criterion.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from evalcore.results import adjudications as adj
from evalcore.results.leaderboard import Leaderboard
from evalcore.storage.run import open_run
from evalcore.storage.run_folder import REPORT_HTML
from evalcore.storage.store import RunRecord
from jobs.per_run.report import NO_SOURCE, ReportLimits, write_report
from tests.browser import needs_chromium
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

INJECTION = '</script><script>alert("x")</script><img src=x onerror=alert(1)> & \u2028'


def _inject_reasoning(run: Path) -> str:
    """Put HTML/JS into one judge's reasoning, as a hostile submission could make a judge quote it."""
    shard = sorted((run / "verdicts").glob("part-*.parquet"))[0]
    table = pq.read_table(shard)
    first = pc.equal(pc.index_in(table.column("request_hash"), table.column("request_hash").slice(0, 1)), 0)
    reasoning = pc.if_else(first, INJECTION, table.column("reasoning"))
    table = table.set_column(table.schema.get_field_index("reasoning"), "reasoning", reasoning)
    pq.write_table(table, shard)
    return str(table.column("grading_id")[0])


SAMPLE_TASK = Path(__file__).resolve().parents[3] / "examples/sample/tasks/commercial-contracts/msa-renewal"
REVIEWER = "Dr. Ada Reviewer"
OVERTURN_REASON = "Clause 12.2 of the MSA says exactly this; the auditor misread it."
# (document, cited page, passage, where the report must say it is)
OFFICE_EVIDENCE = [
    ("DataHarbor_MSA.docx", None, "Thereafter this Agreement renews automatically for successive one-year renewal terms",
     'DataHarbor_MSA.docx, under "12. Term and Termination", paragraph 11'),
    ("Uptime_and_Invoices_2025.xlsx", "Sheet: Monthly Availability", "99.41",
     "Uptime_and_Invoices_2025.xlsx, Sheet: Monthly Availability, cell B11"),
    ("DataHarbor_renewal_email.eml", None,
     "the subscription fee for the June 1, 2026 - May 31, 2027 Renewal Term will be $1,219,800",
     'DataHarbor_renewal_email.eml, message "Pinecrest renewal - June 2026" from Brett Lawson, body paragraph 2'),
]


def _drill_target(truth: dict[str, Any]) -> dict[str, Any]:
    """The gated submission the drill-down test opens (left exactly as the ground truth made it)."""
    gated: list[dict[str, Any]] = [
        h for h in truth["hallucinations"] if h["materiality"] == "material"
        and all(v == "pass" for v in truth["verdicts"][h["system"]][h["task_id"]].values())]
    return gated[0]


def _rewrite(shard: Path, table: pa.Table, updates: dict[str, list[Any]]) -> pa.Table:
    for name, values in updates.items():
        idx = table.schema.get_field_index(name)
        table = table.set_column(idx, table.schema.field(idx), pa.array(values, type=table.schema.field(idx).type))
    pq.write_table(table, shard)
    return table


def _cite_office_sources(run: Path, bench: Path, truth: dict[str, Any]) -> dict[str, Any]:
    """Three confirmed flags of one submission cite the sample's .docx, .xlsx and .eml; another
    submission's flag becomes a fabricated source with no evidence. Returns what was planted."""
    target = _drill_target(truth)
    confirmed: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for shard in sorted((run / "flags").glob("part-*.parquet")):
        for f in pq.read_table(shard).to_pylist():
            if f["status"] == "confirmed" and f["grading_id"].startswith("g1-"):
                confirmed[(f["system"], f["task_id"], str(shard))].append(f["flag_index"])
    office = next(k for k, v in sorted(confirmed.items()) if len(v) >= 3 and k[:2] != (target["system"], target["task_id"]))
    fabricated = next(k for k in sorted(confirmed) if k[:2] not in {office[:2], (target["system"], target["task_id"])})
    for key, plan in ((office, "office"), (fabricated, "fabricated")):
        shard = Path(key[2])
        table = pq.read_table(shard)
        cols = {n: table.column(n).to_pylist() for n in ("evidence_document", "evidence_page", "evidence_passage", "category")}
        for k, row in enumerate(table.select(["system", "task_id", "flag_index", "status"]).to_pylist()):
            if (row["system"], row["task_id"]) != key[:2] or row["status"] != "confirmed":
                continue
            if plan == "office" and row["flag_index"] in confirmed[key][:3]:
                doc, page, passage, _ = OFFICE_EVIDENCE[confirmed[key].index(row["flag_index"])]
                cols["evidence_document"][k], cols["evidence_page"][k], cols["evidence_passage"][k] = doc, page, passage
            elif plan == "fabricated" and row["flag_index"] == confirmed[key][0]:
                cols["evidence_document"][k] = cols["evidence_page"][k] = cols["evidence_passage"][k] = None
                cols["category"][k] = "fabricated_source"
        _rewrite(shard, table, cols)
    task_dir = bench / "tasks" / office[1]
    shutil.copytree(SAMPLE_TASK, task_dir)
    for source in (task_dir / "documents").iterdir():
        if source.name not in {e[0] for e in OFFICE_EVIDENCE}:
            source.unlink()  # the PDFs and texts are not cited: the test need not convert them
    return {"office": (office[0], office[1], confirmed[office][:3]),
            "fabricated": (fabricated[0], fabricated[1], confirmed[fabricated][0])}


def _price_calls(run: Path) -> None:
    """Cached input tokens on the anthropic and openai judges' calls; openai's rubric calls batched."""
    for shard in sorted((run / "calls").glob("part-*.parquet")):
        table = pq.read_table(shard)
        rows = table.select(["vendor", "purpose", "input_tokens"]).to_pylist()
        cached = [r["input_tokens"] // 2 if r["vendor"] == "anthropic" else
                  r["input_tokens"] // 4 if r["vendor"] == "openai" else 0 for r in rows]
        batch = ["batch-7" if r["vendor"] == "openai" and r["purpose"] == "rubric" else None for r in rows]
        _rewrite(shard, table, {"cached_input_tokens": cached, "batch_id": batch})


def _decide(run: Path, planted: dict[str, Any]) -> None:
    """An expert overturns the first office flag and decides one verdict and one criterion of its submission."""
    system, task_id, indices = planted["office"]
    at = dt.datetime(2026, 3, 5, 14, 2, tzinfo=dt.UTC)
    adj.record_all(str(run), [
        adj.Adjudication(run_id="run-test", kind="flag", system=system, task_id=task_id, flag_index=indices[0],
                         decision="overturned", reviewer=REVIEWER, reason=OVERTURN_REASON, decided_at=at, queue="material"),
        adj.Adjudication(run_id="run-test", kind="verdict", system=system, task_id=task_id, criterion_id="C-001",
                         judge="openai", decision="fail", reviewer="Prof. Bo Critic", reason="The memo omits the notice period.",
                         decided_at=at + dt.timedelta(minutes=5), queue="split"),
        adj.Adjudication(run_id="run-test", kind="criterion", system=system, task_id=task_id, criterion_id="C-002",
                         decision="pass", reviewer="Prof. Bo Critic", reason="All three judges misread the criterion.",
                         decided_at=at + dt.timedelta(minutes=6)),
    ])


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    truth = synthetic_ground_truth(seed=5, n_tasks=9, n_criteria=4)
    tasks = sorted(truth["verdicts"]["gpt-strong"])
    root = tmp_path_factory.mktemp("runs")
    run = root / "run-report"
    build_run(str(run), truth, RunSpec(incomplete={("claude-average", tasks[0])}, lenient={"xai": "xai"},
                                       reused={("grok-weak", tasks[1])}))
    _inject_reasoning(run)
    plan = _cite_office_sources(run, root / "bench", truth)
    _price_calls(run)
    record = RunRecord.read(str(run))
    config = record.config.model_copy(update={"batch": record.config.batch.model_copy(update={"enabled": True})})
    record.model_copy(update={"benchmark": record.benchmark.model_copy(update={"uri": str(root / "bench")}),
                              "config": config}).write(str(run))
    _decide(run, plan)
    uri = write_report(str(run))
    assert uri == str(run / REPORT_HTML)
    return {"path": run / REPORT_HTML, "lb": open_run(str(run)).read_leaderboard(), "truth": truth, "plan": plan}


@pytest.fixture(scope="module")
def report(planted: dict[str, Any]) -> tuple[Path, Leaderboard, dict[str, Any]]:
    return planted["path"], planted["lb"], planted["truth"]


# -- without a browser -----------------------------------------------------------------------------


def test_the_report_is_self_contained(report: Any) -> None:
    path, _, _ = report
    html = path.read_text()
    assert not re.search(r"<(link|iframe|object|embed)\b", html, re.I)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html, re.I)
    assert not re.search(r"@import|url\(", html)
    # the only absolute URL is the SVG namespace, which is a name, not a request
    assert set(re.findall(r"https?://[^\s\"'<>]+", html)) <= {"http://www.w3.org/2000/svg"}


def test_judge_text_cannot_end_the_embedded_data_script(report: Any) -> None:
    path, _, _ = report
    html = path.read_text()
    assert INJECTION not in html
    assert html.count("</script>") == 2  # the data block and the page script, nothing injected


def test_big_runs_cap_the_embedded_detail_and_say_so(report: Any, tmp_path: Path) -> None:
    path, lb, _ = report
    run = tmp_path / "run"
    import shutil

    shutil.copytree(path.parent, run)
    write_report(str(run), leaderboard=lb, limits=ReportLimits(max_listed=10, max_detailed=3))
    html = (run / REPORT_HTML).read_text()
    assert re.search(r"<b>10 listed below</b> \(cap 10\)", html)
    assert re.search(r"<b>3 with full verdicts and flags</b> \(cap 3", html)
    assert html.count('"criteria":') == 3


def test_the_pairwise_svg_shades_cells_by_p_and_outlines_separable_ones() -> None:
    import xml.etree.ElementTree as ET

    from evalcore.results.leaderboard import Pairwise
    from jobs.per_run.report import pairwise_chart

    pw = Pairwise(systems=["a", "b", "c"], beats=[[0.5, 0.99, 0.6], [0.01, 0.5, 0.45], [0.4, 0.55, 0.5]],
                  separable=[[False, True, False], [False, False, False], [False, False, False]])
    svg = ET.fromstring(str(pairwise_chart(pw)))
    ns = {"s": "http://www.w3.org/2000/svg"}
    cells = {(g.get("data-row"), g.get("data-col")): g for g in svg.iterfind(".//s:g[@class='pw-cell']", ns)}
    assert len(cells) == 6  # no diagonal cell
    sep = cells[("a", "b")].find("s:rect", ns)
    plain = cells[("a", "c")].find("s:rect", ns)
    assert sep is not None and plain is not None
    assert sep.get("stroke-width") == "3" and plain.get("stroke-width") is None
    assert cells[("a", "b")].get("data-separable") == "1" and cells[("b", "a")].get("data-separable") == "0"
    # shaded by P: likely better is blue, likely worse red, the deeper the surer
    assert "212" in (sep.get("fill") or "") and "5,65%" in (cells[("b", "a")].find("s:rect", ns).get("fill") or "")  # type: ignore[union-attr]
    light = {k: float(re.findall(r"(\d+)%\)", g.find("s:rect", ns).get("fill") or "")[0]) for k, g in cells.items()}  # type: ignore[union-attr]
    assert light[("a", "b")] < light[("a", "c")] < 97


# -- in Chromium ---------------------------------------------------------------------------------------


def _recorder(dialogs: list[str]) -> Any:
    """A dialog handler that records the message and dismisses the dialog (an alert = script ran)."""

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    return on_dialog


@pytest.mark.browser
@needs_chromium
def test_the_report_opens_in_chromium_without_errors_and_shows_every_system(
    report: Any, browser: Any, tmp_path: Path
) -> None:
    path, lb, _ = report
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(15_000)
    errors: list[str] = []
    requests: list[str] = []
    dialogs: list[str] = []
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", _recorder(dialogs))
    page.goto(path.as_uri(), wait_until="load")

    for row in lb.systems:
        tr = page.locator(f'#leaderboard-table tr.sys-row[data-system="{row.system}"]')
        assert tr.count() == 1 and tr.is_visible()
        assert row.system in tr.inner_text()
        if row.hc_pass_rate.value is not None:
            assert f"{100 * row.hc_pass_rate.value:.1f}%" in tr.inner_text()
    assert page.locator("#area-heatmap tbody tr").count() == len(lb.systems)
    assert page.locator("#kappa-table tbody tr").count() == 3

    assert page.evaluate("document.documentElement.scrollWidth") <= 1400  # wide tables scroll inside

    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.exists() and shot.stat().st_size > 30_000

    assert errors == []
    assert dialogs == []
    assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests
    page.close()


@pytest.mark.browser
@needs_chromium
def test_drill_down_goes_from_a_system_to_a_task_to_its_verdicts_and_flags(report: Any, browser: Any) -> None:
    path, lb, truth = report
    target = _drill_target(truth)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri(), wait_until="load")

    page.locator(f'#leaderboard-table tr.sys-row[data-system="{target["system"]}"]').click()
    row = page.locator("#task-table tr.task-row", has_text=target["task_id"])
    assert "yes" in row.inner_text()  # gated
    row.click()
    verdicts = page.locator("#verdict-table tbody tr")
    assert verdicts.count() == len(truth["verdicts"][target["system"]][target["task_id"]])
    page.locator("#toggle-reasoning").click()
    first_reasoning = page.locator("#verdict-table details p").first
    assert first_reasoning.is_visible() and "the memo meets it" in first_reasoning.inner_text()
    flags = page.locator("#submission .flag")
    assert flags.count() == sum(
        1 for h in truth["hallucinations"] if (h["system"], h["task_id"]) == (target["system"], target["task_id"])
    )
    text = page.locator("#submission").inner_text()
    assert target["span"] in text and target["evidence_passage"] in text
    assert f'Source evidence: lease.pdf, Page 4: {target["evidence_passage"]}' in text  # the page is cited
    assert errors == []
    page.close()


@pytest.mark.browser
@needs_chromium
def test_hostile_reasoning_is_shown_as_text(report: Any, browser: Any) -> None:
    path, _, _ = report
    page = browser.new_page()
    page.set_default_timeout(15_000)
    dialogs: list[str] = []
    page.on("dialog", _recorder(dialogs))
    page.goto(path.as_uri(), wait_until="load")
    found = page.evaluate(
        """() => {
            const data = JSON.parse(document.getElementById('report-data').textContent);
            return Object.values(data.details).some(d => d.criteria.some(c => c[1].some(v => v && v[1].includes('</script>'))));
        }"""
    )
    assert found  # the text survived intact in the data, and nothing ran
    assert dialogs == []
    page.close()


def test_cli_report_writes_report_html(report: Any, tmp_path: Path) -> None:
    import shutil

    from typer.testing import CliRunner

    from jobs.cli.app import app

    path, _, _ = report
    run = tmp_path / "run"
    shutil.copytree(path.parent, run)
    (run / REPORT_HTML).unlink()
    result = CliRunner().invoke(app, ["report", str(run), "--max-detailed", "5"])
    assert result.exit_code == 0, result.output
    assert "report written" in result.output
    assert (run / REPORT_HTML).read_text().count('"criteria":') == 5


# -- the operator's questions, in Chromium --------------------------------------------------------


def _open(browser: Any, path: Path, width: int = 1400) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri(), wait_until="load")
    return page, errors


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def _calls(run: Path) -> list[dict[str, Any]]:
    shards = sorted((run / "calls").glob("part-*.parquet"))
    rows: list[dict[str, Any]] = pa.concat_tables([pq.read_table(s) for s in shards]).to_pylist()
    return rows


@pytest.mark.browser
@needs_chromium
def test_the_cost_section_shows_the_calls_tables_sums_by_system_vendor_and_purpose(planted: dict[str, Any], browser: Any) -> None:
    path, lb = planted["path"], planted["lb"]
    calls = _calls(path.parent)
    assert any(c["reused_from"] and c["cost_usd"] > 0 for c in calls)  # reused rows carry a cost that must not count
    paid = [c for c in calls if c["reused_from"] is None]
    page, errors = _open(browser, path)

    def cell(table: str, key: str, value: str, purpose: str) -> Any:
        return page.locator(f'#{table} tr[data-{key}="{value}"] [data-purpose="{purpose}"]')

    def check(locator: Any, expected: float) -> None:
        assert locator.inner_text().strip() == _usd(expected)
        assert math.isclose(float(locator.get_attribute("data-value")), expected, abs_tol=1e-6)

    for purpose in ("rubric", "detect", "verify"):
        for r in lb.systems:
            check(cell("cost-systems", "system", r.system, purpose),
                  math.fsum(c["cost_usd"] for c in paid if c["system"] == r.system and c["purpose"] == purpose))
        for vendor in sorted({c["vendor"] for c in calls}):
            check(cell("cost-vendors", "vendor", vendor, purpose),
                  math.fsum(c["cost_usd"] for c in paid if c["vendor"] == vendor and c["purpose"] == purpose))
    for vendor in sorted({c["vendor"] for c in calls}):
        mine = [c for c in paid if c["vendor"] == vendor]
        share = sum(c["cached_input_tokens"] for c in mine) / sum(c["input_tokens"] for c in mine)
        assert cell("cost-vendors", "vendor", vendor, "cached-share").inner_text().strip() == f"{100 * share:.1f}%"
    for r in lb.systems:
        mine = [c for c in paid if c["system"] == r.system]
        cost = math.fsum(c["cost_usd"] for c in mine)
        check(cell("cost-systems", "system", r.system, "total"), cost)
        check(cell("cost-systems", "system", r.system, "per-submission"), cost / r.scored)
        share = sum(c["cached_input_tokens"] for c in mine) / sum(c["input_tokens"] for c in mine)
        assert cell("cost-systems", "system", r.system, "cached-share").inner_text().strip() == f"{100 * share:.1f}%"
    for vendor in sorted({c["vendor"] for c in calls}):  # what warming the caches cost, itemised
        check(cell("cost-vendors", "vendor", vendor, "cache-writes"),
              math.fsum(c["cache_write_usd"] for c in paid if c["vendor"] == vendor))
    for r in lb.systems:
        check(cell("cost-systems", "system", r.system, "cache-writes"),
              math.fsum(c["cache_write_usd"] for c in paid if c["system"] == r.system))
    writes = math.fsum(c["cache_write_usd"] for c in paid)
    assert writes > 0
    check(page.locator("#cache-writes"), writes)
    total = math.fsum(c["cost_usd"] for c in paid)
    assert page.locator("#cost-total").inner_text() == _usd(total) == _usd(lb.cost_usd)
    check(page.locator("#cost-per-submission"), total / sum(r.scored for r in lb.systems))
    cached = sum(c["cached_input_tokens"] for c in paid) / sum(c["input_tokens"] for c in paid)
    assert page.locator("#cached-share").inner_text() == f"{100 * cached:.1f}%"
    assert page.locator("#pricing-mode").inner_text() == "batch"
    batched = sum(1 for c in paid if c["batch_id"])
    assert batched and f"{batched:,} of {len(paid):,} paid calls answered by a vendor batch" in page.locator(
        "#cost-summary").inner_text()
    assert errors == []
    page.close()


@pytest.mark.browser
@needs_chromium
def test_every_flags_evidence_location_is_one_click_from_the_leaderboard(planted: dict[str, Any], browser: Any) -> None:
    path = planted["path"]
    system, task_id, indices = planted["plan"]["office"]
    page, errors = _open(browser, path)
    link = page.locator(f'#leaderboard-table a.flag-link[data-system="{system}"]')
    link.click()  # the one click
    rows = page.locator("#flag-table tbody tr.flag-row")
    assert rows.count() == int(link.inner_text().strip(" ›")) > 0
    assert set(rows.evaluate_all("rs => rs.map(r => r.getAttribute('data-system'))")) == {system}
    top = page.evaluate("document.getElementById('flag-list').getBoundingClientRect().top")
    assert 0 <= top < 120  # the list is what the reader now sees (below the sticky nav)
    for index, (_, _, passage, where) in zip(indices, OFFICE_EVIDENCE, strict=True):
        row = page.locator(f'#flag-table tr.flag-row[data-task="{task_id}"][data-index="{index}"]')
        assert row.is_visible()
        evidence = row.locator("td.evidence").inner_text()
        assert where in evidence and passage in evidence
    # the flags of tasks whose sources name no such document keep the page the auditor cited
    lease = page.locator("#flag-table tr.flag-row", has_text="lease.pdf").first
    assert "lease.pdf, Page 4" in lease.locator("td.evidence").inner_text()

    fab_system, fab_task, fab_index = planted["plan"]["fabricated"]
    page.locator(f'#leaderboard-table a.flag-link[data-system="{fab_system}"]').click()
    fab = page.locator(f'#flag-table tr.flag-row[data-task="{fab_task}"][data-index="{fab_index}"]')
    assert fab.get_attribute("data-category") == "fabricated_source"
    assert fab.locator("td.evidence").inner_text().strip() == NO_SOURCE

    # the list-wide link and the filters
    flags = pa.concat_tables([pq.read_table(f) for f in sorted((path.parent / "flags").glob("part-*.parquet"))])
    confirmed = pc.sum(pc.equal(flags.column("status"), "confirmed")).as_py()  # one grading per submission here
    everything = page.locator('#leaderboard a.flag-link[data-system=""]')
    assert f"All {confirmed} confirmed hallucinations" in everything.inner_text()
    everything.click()
    assert rows.count() == confirmed
    page.select_option("#f-category", "fabricated_source")
    assert set(rows.evaluate_all("rs => rs.map(r => r.getAttribute('data-category'))")) == {"fabricated_source"}
    page.select_option("#f-category", "")
    page.fill("#f-text", "Uptime_and_Invoices")
    assert rows.count() == 1 and "cell B11" in rows.first.inner_text()
    assert errors == []
    page.close()


@pytest.mark.browser
@needs_chromium
def test_the_leaderboard_shows_rank_ranges_tiers_and_the_pairwise_matrix_as_svg(planted: dict[str, Any], browser: Any) -> None:
    path, lb = planted["path"], planted["lb"]
    assert lb.pairwise is not None
    page, errors = _open(browser, path)
    for r in lb.systems:
        tr = page.locator(f'#leaderboard-table tr.sys-row[data-system="{r.system}"]')
        assert r.rank_low is not None and r.rank_high is not None
        expected = str(r.rank_low) if r.rank_low == r.rank_high else f"{r.rank_low}–{r.rank_high}"
        assert tr.locator("td.rank-range").inner_text() == expected
        assert tr.locator("td.tier").inner_text() == str(r.tier)
    svg = page.locator("#pairwise svg")
    assert svg.count() == 1 and svg.is_visible()
    cells = page.locator("#pairwise svg g.pw-cell")
    n = len(lb.pairwise.systems)
    assert lb.pairwise.systems == [r.system for r in lb.systems]  # leaderboard order
    assert cells.count() == n * (n - 1)
    for i, a in enumerate(lb.pairwise.systems):
        for j, b in enumerate(lb.pairwise.systems):
            if i == j:
                continue
            g = page.locator(f'#pairwise g.pw-cell[data-row="{a}"][data-col="{b}"]')
            assert float(g.get_attribute("data-p")) == pytest.approx(lb.pairwise.beats[i][j], abs=1e-3)
            assert g.get_attribute("data-separable") == ("1" if lb.pairwise.separable[i][j] else "0")
            assert g.locator("css=text").text_content() == f"{lb.pairwise.beats[i][j]:.2f}"
    # rows are drawn top to bottom in leaderboard order
    ys = [float(page.locator(f'#pairwise g.pw-cell[data-row="{s}"] rect').first.get_attribute("y")) for s in lb.pairwise.systems]
    assert ys == sorted(ys) and len(set(ys)) == n
    assert errors == []
    page.close()


@pytest.mark.browser
@needs_chromium
def test_an_adjudicated_flag_shows_who_decided_when_and_why(planted: dict[str, Any], browser: Any) -> None:
    path, lb = planted["path"], planted["lb"]
    system, task_id, indices = planted["plan"]["office"]
    assert lb.adjudication is not None and lb.adjudication.decisions_in_force == 3
    page, errors = _open(browser, path)
    page.locator(f'#leaderboard-table a.flag-link[data-system="{system}"]').click()
    row = page.locator(f'#flag-table tr.flag-row[data-task="{task_id}"][data-index="{indices[0]}"]')
    assert row.get_attribute("data-materiality") == "overturned"
    decision = row.locator("td.decision-cell").inner_text()
    assert REVIEWER in decision and OVERTURN_REASON in decision and "overturned" in decision
    assert "2026-03-05 14:02 UTC" in decision
    other = page.locator(f'#flag-table tr.flag-row[data-task="{task_id}"][data-index="{indices[1]}"]')
    assert "not adjudicated" in other.locator("td.decision-cell").inner_text()
    page.select_option("#f-decision", "yes")
    assert page.locator("#flag-table tbody tr.flag-row").count() == 1

    # the submission from the list: the flag, the verdict and the criterion decisions in the drill-down
    row.locator("button.open").click()
    sub = page.locator("#submission").inner_text()
    assert f"expert: overturned — {REVIEWER}, 2026-03-05 14:02 UTC: {OVERTURN_REASON}" in sub
    assert "expert: fail — Prof. Bo Critic, 2026-03-05 14:07 UTC: The memo omits the notice period." in sub
    assert "expert: pass — Prof. Bo Critic, 2026-03-05 14:08 UTC: All three judges misread the criterion." in sub
    assert "Not adjudicated." in sub  # the other flags say so

    # the adjudication section: what changed, and every decision in force
    assert "3 decision(s) in force" in page.locator("#adjudication-summary").inner_text()
    assert page.locator("#adjudication-changes tbody tr", has_text=system).count() == 1
    assert page.locator("#adjudication-rescored tbody tr", has_text=task_id).count() == 1
    decisions = page.locator("#decision-table tbody tr")
    assert decisions.count() == 3
    assert REVIEWER in decisions.last.inner_text() and OVERTURN_REASON in decisions.last.inner_text()
    assert errors == []
    page.close()


_TABLE_FIT = """() => Array.from(document.querySelectorAll('main table')).filter(t => t.offsetParent !== null).map(t => {
    const card = t.closest('section');
    const c = card.getBoundingClientRect(), r = t.getBoundingClientRect();
    let scroller = null;
    for (let e = t.parentElement; e && e !== card; e = e.parentElement) {
        const o = getComputedStyle(e).overflowX;
        if (o === 'auto' || o === 'scroll') { scroller = e; break; }
    }
    const s = scroller ? scroller.getBoundingClientRect() : null;
    return {table: t.id || (card.id + ' table'), fits: r.left >= c.left - 0.5 && r.right <= c.right + 0.5,
            scrolls: s !== null && s.left >= c.left - 0.5 && s.right <= c.right + 0.5};
})"""


@pytest.mark.browser
@needs_chromium
@pytest.mark.parametrize("width", [1280, 1920])
def test_no_table_overflows_the_page_at_1280_or_1920_px(planted: dict[str, Any], browser: Any, tmp_path: Path, width: int) -> None:
    path = planted["path"]
    system, _, _ = planted["plan"]["office"]
    page, errors = _open(browser, path, width)
    page.locator(f'#leaderboard-table a.flag-link[data-system="{system}"]').click()
    page.locator("#flag-table tr.flag-row button.open").first.click()  # the drill-down's tables too
    assert page.locator("#verdict-table").is_visible() and page.locator("#task-table").is_visible()

    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    tables = page.evaluate(_TABLE_FIT)
    assert len(tables) >= 12
    assert [t for t in tables if not (t["fits"] or t["scrolls"])] == []
    fits = {t["table"]: t["fits"] for t in tables}
    # the tables an operator reads first fit without scrolling
    assert fits["leaderboard-table"] and fits["flag-table"] and fits["cost-systems"] and fits["cost-vendors"], [k for k, v in fits.items() if not v]

    shot = tmp_path / f"report-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    assert errors == []
    page.close()
