"""A criterion item marks, in the memo it shows, the passages the judges' reasonings quote, each
mark naming the judge(s), and says so when none of the quotes is found (issue 43). The rule
(`jobs.review.citations`) by hypothesis: a passage quoted from the memo, however respaced or
requoted, is always found; the page in real Chromium on a built run (`tests.runfolder`, no Ray)
over the sample's real task and memo, one browser context per reviewer."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.grounding.normalise import normalise_quote_text
from jobs.review.app import ReviewState
from jobs.review.citations import cite, quoted_parts
from tests.browser import CHROMIUM, CHROMIUM_ARGS, needs_chromium
from tests.jobs.review.test_review import serving
from tests.runfolder import SYSTEMS, RunSpec, build_run

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample"
TASK = "commercial-contracts/msa-renewal"
MEMO = (SAMPLE / "submissions" / "gpt-strong" / TASK / "memo.md").read_text(encoding="utf-8")
CITED = "serve a protective notice of non-renewal, by courier, before March 2, 2026"
UNCITED = "DataHarbor owes a $19,000 service credit for October 2025"

WORDS = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=1, max_size=8)
GAPS = st.sampled_from([" ", "  ", "\n", ", ", ". ", " - ", "; ", " (", ") "])


@given(words=st.lists(WORDS, min_size=3, max_size=40), gaps=st.lists(GAPS, min_size=40, max_size=40),
       data=st.data(), marks=st.sampled_from([('"', '"'), ("“", "”"), ("«", "»")]))
def test_a_passage_quoted_from_the_memo_is_always_found_and_marked_with_its_judge(
    words: list[str], gaps: list[str], data: st.DataObject, marks: tuple[str, str]
) -> None:
    memo = "".join(w + g for w, g in zip(words, gaps, strict=False)).strip()
    starts, ends, at = [], [], 0
    for w, g in zip(words, gaps, strict=False):
        starts.append(at)
        ends.append(at + len(w))
        at += len(w) + len(g)
    i = data.draw(st.integers(0, len(words) - 3))
    j = data.draw(st.integers(i + 3, len(words)))  # three words or more: a quotation, not a term
    passage = memo[starts[i]:ends[j - 1]]
    respaced = " ".join(passage.split())  # a judge rewraps what it quotes
    reasoning = f"The memo says {marks[0]}{respaced}{marks[1]} and so it meets the criterion."
    cited = cite(memo, [("xai", reasoning)])
    assert cited.quotes == 1 and cited.found == 1
    marked = [p for p in cited.pieces if p.judges]
    assert [p.judges for p in marked] == [("xai",)]
    assert normalise_quote_text(marked[0].text) == normalise_quote_text(passage)
    assert "".join(p.text for p in cited.pieces) == memo  # nothing of the memo lost or added


def test_overlapping_quotes_name_every_judge_and_a_quote_not_in_the_memo_marks_nothing() -> None:
    memo = "The notice must be served by courier before March 2, 2026 to the General Counsel."
    cited = cite(memo, [("openai", 'It says "served by courier before March 2".'),
                        ("xai", "“before March 2, 2026 to the General Counsel”"),
                        ("anthropic", '"notice by e-mail is sufficient" is what it claims')])
    assert (cited.quotes, cited.found) == (3, 2)
    assert [(p.text, p.judges) for p in cited.pieces if p.judges] == [
        ("served by courier ", ("openai",)), ("before March 2", ("openai", "xai")),
        (", 2026 to the General Counsel", ("xai",))]
    assert quoted_parts('as the "Buyer" says') == []  # a defined term is no quotation


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run over the sample's real task and memos where the judges split on one criterion of
    gpt-strong's memo: openai quotes a passage of the memo, xai one that is not in it; and on one of
    claude-average's, whose reasonings quote nothing."""
    root = tmp_path_factory.mktemp("review-citations")
    shutil.copytree(SAMPLE, root / "sample")
    criteria = [f"C-{c:03d}" for c in range(1, 13)]
    truth = {"verdicts": {s: {TASK: dict.fromkeys(criteria, "pass")} for s in SYSTEMS}, "hallucinations": []}
    run = root / "run"
    build_run(str(run), truth, RunSpec(judge_verdicts={"xai": {"gpt-strong": {TASK: {"C-003": "fail"}},
                                                                  "claude-average": {TASK: {"C-004": "fail"}}}}))
    record = (run / "run.json").read_text(encoding="utf-8")
    (run / "run.json").write_text(record.replace('"examples/sample', f'"{root / "sample"}'), encoding="utf-8")
    reasonings = {"openai": f"The memo advises to “{CITED}”, which meets the criterion.",
                  "xai": 'It never says "notice by e-mail is sufficient for renewal", so it misses it.'}
    for path in (run / "verdicts").rglob("*.parquet"):
        table = pq.read_table(path)
        rows = table.to_pylist()
        for r in rows:
            if (r["system"], r["task_id"], r["criterion_id"]) == ("gpt-strong", TASK, "C-003"):
                r["reasoning"] = reasonings.get(r["judge"], r["reasoning"])
        pq.write_table(type(table).from_pylist(rows, schema=table.schema), path)
    return run


@needs_chromium
@pytest.mark.browser
def test_a_criterion_item_marks_the_passage_a_judge_quotes_naming_the_judge_and_no_other(built: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    state = ReviewState(str(built))
    item = next(i for i in state.queue if i.kind == "criterion" and i.system == "gpt-strong"
                and i.criterion_id == "C-003")
    other = next(i for i in state.queue if i.kind == "criterion" and i.system == "claude-average")
    assert CITED in MEMO and UNCITED in MEMO
    with serving(str(built)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_context().new_page()  # one reviewer
            page.goto(f"{url}item/{item.n}")
            marks = page.locator("#deliverables mark.cited")
            expect(marks).to_have_count(1)
            expect(marks.first).to_have_text(CITED)
            expect(marks.first).to_have_attribute("data-judges", "openai")
            expect(page.locator("#deliverables .cited-by").first).to_have_text("[openai]")
            memo = page.locator("#deliverables .text").first
            expect(memo).to_contain_text(UNCITED)  # shown, and in no mark
            assert all(UNCITED not in t for t in marks.all_inner_texts())
            expect(page.locator("#no-citation")).to_have_count(0)

            page.goto(f"{url}item/{other.n}")  # reasonings that quote nothing: said, nothing marked
            expect(page.locator("#deliverables mark.cited")).to_have_count(0)
            expect(page.locator("#no-citation")).to_contain_text("quote no passage")
        finally:
            browser.close()
