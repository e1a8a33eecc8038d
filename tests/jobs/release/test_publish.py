"""`tribunal publish`: the static public site of a release, private by default, checked in Chromium.

The run is the synthetic run of `tests.runfolder` with a sentinel phrase planted in every task
(title, instructions, criteria), source document, deliverable, judge reasoning, flag (span,
explanation, evidence, rationale), status reason, call response, and in the experts' decisions
(reviewer names and reasons). Published privately, the phrase must be in no file of the site; with
one task listed as public, it appears on that task's page and nowhere else.
"""

from __future__ import annotations

import json
import re
from collections import deque
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urlparse

import duckdb
import jsonschema
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from evalcore.results import adjudications as adj
from evalcore.results.reduce import current_gradings
from evalcore.storage.store import RunRecord, read_table
from jobs.cli.app import app
from jobs.release.create import create_release
from jobs.release.publish import publish_release, slug
from tests.browser import needs_chromium
from tests.conftest import BenchBuilder
from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

SENTINEL = "ZEBRA-OCTOPUS-7731"
REVIEWER = f"Dr. {SENTINEL} Reviewer"
PHONE, DESKTOP = 390, 1280


def _plant(run: Path) -> None:
    """The sentinel into every free text the run's tables hold."""
    columns = {"verdicts": ["reasoning"], "flags": ["span", "explanation", "evidence_passage", "rationale"],
               "submissions": ["status_reason"], "calls": ["response_json"]}
    for table, names in columns.items():
        for shard in sorted((run / table).glob("*.parquet")):
            t = pq.read_table(shard)
            for name in names:
                i = t.schema.get_field_index(name)
                col = pc.binary_join_element_wise(pc.fill_null(t.column(name), ""), pa.scalar(SENTINEL), " ")
                t = t.set_column(i, t.schema.field(i), col)
            pq.write_table(t, shard)


def _benchmark(root: Path, tasks: list[str]) -> Path:
    """Task folders whose every text, source and deliverable carries the sentinel."""
    for k, task in enumerate(tasks):
        BenchBuilder.write(root / "tasks", task, BenchBuilder.task_json(
            title=f"Task {k} {SENTINEL}", instructions=f"Instructions of task {k}: {SENTINEL}.",
            deliverables={"memo": "memo.md"},
            criteria=[{"id": f"C-{c:03d}", "title": f"Criterion {c} {SENTINEL}",
                       "match_criteria": f"PASS if {SENTINEL}. FAIL otherwise."} for c in range(1, 5)]),
            {"lease.txt": f"The lease term is five (5) years. {SENTINEL}".encode()})
        for system in ("gpt-strong", "claude-average", "grok-weak", "fluent-hallucinator"):
            memo = root / "submissions" / system / task / "memo.md"
            memo.parent.mkdir(parents=True, exist_ok=True)
            memo.write_text(f"Memo by {system}. {SENTINEL}", encoding="utf-8")
    (root / "benchmark.json").write_text(json.dumps({"name": "sentinel-bench", "version": "3"}))
    return root


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("publish")
    truth = synthetic_ground_truth(seed=11, n_tasks=6, n_criteria=4)
    tasks = sorted(next(iter(truth["verdicts"].values())))
    bench = _benchmark(root / "bench", tasks)
    run = root / "runs" / "run-secret"
    build_run(str(run), truth, RunSpec(run_id="run-secret"))
    record = RunRecord.read(str(run))
    record.model_copy(update={"benchmark": record.benchmark.model_copy(
        update={"uri": str(bench), "name": "sentinel-bench", "version": "3"})}).write(str(run))
    _plant(run)
    cur = current_gradings(read_table(str(run), "submissions")).to_pylist()
    flags = read_table(str(run), "flags").to_pylist()
    decided = [f for f in flags if f["status"] == "confirmed" and any(
        c["grading_id"] == f["grading_id"] and c["status"] == "complete" for c in cur)][:3]
    adj.record_all(str(run), [adj.Adjudication(
        run_id="run-secret", grading_id=f["grading_id"], claim_hash=adj.claim_hash(f["span"]), kind="flag",
        system=f["system"], task_id=f["task_id"], flag_index=f["flag_index"], decision="overturned",
        reviewer=REVIEWER, reason=f"The lease says so on page 4: {SENTINEL}") for f in decided])
    releases = root / "releases"
    create_release(str(releases), "2026-06", [str(run)], now=1_780_000_000.0)
    public_task = tasks[0]
    result = CliRunner().invoke(app, ["release", "create", "2026-12", "--run", str(run), "--releases", str(releases),
                                      "--public-task", public_task])
    assert result.exit_code == 0, result.output
    private_site, public_site = root / "site-private", root / "site-public"
    publish_release(str(releases), "2026-06", str(private_site))
    result = CliRunner().invoke(app, ["publish", "latest", "--releases", str(releases), "--out", str(public_site)])
    assert result.exit_code == 0, result.output
    return {"private": private_site, "public": public_site, "public_task": public_task, "releases": releases,
            "decided": len(decided)}


def _text_of(path: Path) -> str:
    """What a reader of the file sees: a Parquet file's every value, any other file's bytes as text."""
    if path.suffix == ".parquet":
        return json.dumps(pq.read_table(path).to_pylist(), default=str)
    return path.read_bytes().decode("utf-8", errors="replace")


def test_the_sentinel_in_every_private_text_reaches_no_file_of_the_site(released: dict[str, Any]) -> None:
    files = [p for p in released["private"].rglob("*") if p.is_file()]
    assert len(files) >= 10 and {p.suffix for p in files} >= {".html", ".json", ".csv", ".parquet"}
    leaks = [str(p.relative_to(released["private"])) for p in files if SENTINEL in _text_of(p)]
    assert leaks == []
    methodology = (released["private"] / "methodology.html").read_text()
    assert f"{released['decided']} expert decision(s) in force" in methodology and "by 1 reviewer(s)" in methodology


def test_a_task_listed_as_public_appears_and_nothing_else_private_does(released: dict[str, Any]) -> None:
    site, task = released["public"], released["public_task"]
    page = site / "tasks" / f"{slug(task)}.html"
    assert page.is_file() and "Instructions of task 0:" in page.read_text() and SENTINEL in page.read_text()
    leaks = [str(p.relative_to(site)) for p in site.rglob("*") if p.is_file() and p != page and SENTINEL in _text_of(p)]
    assert leaks == []
    assert "Reviewer" not in page.read_text().replace("reviewer", "")  # reasons shown, reviewers not named
    assert f'href="tasks/{slug(task)}.html"' in (site / "index.html").read_text()


def test_a_site_is_never_overwritten(released: dict[str, Any]) -> None:
    before = (released["private"] / "index.html").read_bytes()
    result = CliRunner().invoke(app, ["publish", "2026-12", "--releases", str(released["releases"]),
                                      "--out", str(released["private"])])
    assert result.exit_code == 1 and "never overwritten" in result.output
    assert (released["private"] / "index.html").read_bytes() == before


def test_the_downloads_open_in_pandas_and_duckdb_and_validate_against_the_published_schema(released: dict[str, Any]) -> None:
    data = released["public"] / "data"
    document = json.loads((data / "leaderboard.json").read_text())
    schema = json.loads((data / "leaderboard.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(document)
    broken = dict(document, systems=[dict(document["systems"][0], rank="first")])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(broken)
    frame = pd.read_csv(data / "leaderboard.csv")
    parquet = pd.read_parquet(data / "leaderboard.parquet")
    assert len(frame) == len(parquet) == len(document["systems"]) + len(document["by_area"])
    overall = {r["system"]: r["hc_pass_rate"]["value"] for r in document["systems"]}
    for table in (frame, parquet):
        whole = table[table["area"] == "ALL"].set_index("system")["hc_pass_rate"].to_dict()
        assert whole == pytest.approx(overall)
    con = duckdb.connect()
    via_parquet = con.sql(f"SELECT system, hc_pass_rate_low, hc_pass_rate_high FROM '{data / 'leaderboard.parquet'}' "
                          "WHERE area = 'ALL' ORDER BY rank, system").fetchall()
    via_csv = con.sql(f"SELECT system, hc_pass_rate_low, hc_pass_rate_high FROM read_csv('{data / 'leaderboard.csv'}') "
                      "WHERE area = 'ALL' ORDER BY rank, system").fetchall()
    assert [s for s, _, _ in via_parquet] == [s for s, _, _ in via_csv] and len(via_parquet) == len(document["systems"])
    assert [b for _, *b in via_parquet] == [pytest.approx(b) for _, *b in via_csv]
    assert [s for s, _, _ in via_parquet] == [r["system"] for r in sorted(document["systems"], key=lambda r: (r["rank"], r["system"]))]


@pytest.mark.browser
@needs_chromium
@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_every_page_renders_without_horizontal_scroll_and_every_internal_link_resolves(
    released: dict[str, Any], browser: Any, width: int
) -> None:
    site: Path = released["public"]
    context = browser.new_context(viewport={"width": width, "height": 900})  # one context per reader
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("request", lambda r: requests.append(r.url))
    queue, seen, broken = deque([site / "index.html"]), set(), []
    while queue:
        path = queue.popleft()
        if path in seen or path.suffix != ".html":
            continue
        seen.add(path)
        page.goto(path.as_uri(), wait_until="load")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (path.name, width)
        for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
            url, fragment = urldefrag(href)
            assert urlparse(url).scheme == "file", href  # every link stays on the site
            target = Path(unquote(urlparse(url).path))
            if not target.is_file():
                broken.append(f"{path.name} -> {href}")
                continue
            if fragment and target.suffix == ".html" and f'id="{fragment}"' not in target.read_text():
                broken.append(f"{path.name} -> {href} (no #{fragment})")
            queue.append(target)
    assert broken == []
    pages = {p for p in site.rglob("*.html")}
    assert seen == pages  # every page is reachable from the index
    assert errors == [] and all(u.startswith("file:") for u in requests), requests
    page.goto((site / "index.html").as_uri())
    assert page.locator("table.board tbody tr").count() == len(json.loads((site / "data/leaderboard.json").read_text())["systems"])
    context.close()


def test_a_system_page_shows_its_rate_in_each_practice_area_and_its_costs(released: dict[str, Any]) -> None:
    site = released["public"]
    document = json.loads((site / "data" / "leaderboard.json").read_text())
    for detail in document["details"]:
        page = (site / "systems" / f"{slug(detail['system'])}.html").read_text()
        for row in (r for r in document["by_area"] if r["system"] == detail["system"]):
            rate = row["hc_pass_rate"]["value"]
            shown = "—" if rate is None else f"{100 * rate:.1f}%"
            assert re.search(rf'<td class="l">{re.escape(row["area"])}</td>\s*<td>{re.escape(shown)}', page), row["area"]
        assert f"{detail['graded']}</td>" in page and "Hallucinations confirmed by the audit" in page
