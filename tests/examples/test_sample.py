"""The sample benchmark: shape required by the issue, ground truth consistent with the files,
documents that are real files, and a generator that rebuilds the committed sample byte for byte."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pypdf import PdfReader

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from doubles.synth.ground_truth import (  # noqa: E402
    expected_leaderboard,
    expected_scores,
    load_ground_truth,
    span_problems,
)
from evalcore.benchmark.documents import convert  # noqa: E402
from evalcore.config.load import load_config  # noqa: E402
from examples.generate_sample import make_scanned_pdf  # noqa: E402
from examples.sample_gen import real_estate  # noqa: E402
from examples.sample_gen.build import SampleError, all_tasks, build_sample, build_task  # noqa: E402
from examples.sample_gen.markup import contains, norm, quoted_parts  # noqa: E402
from examples.sample_gen.model import TaskSpec, dates, money  # noqa: E402

SAMPLE = REPO / "examples" / "sample"


@pytest.fixture(scope="module")
def gt():
    return load_ground_truth(SAMPLE / "ground_truth.json")


@pytest.fixture(scope="module")
def task_json() -> dict[str, dict]:
    return {
        str(p.parent.relative_to(SAMPLE / "tasks")): json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((SAMPLE / "tasks").rglob("task.json"))
    }


@pytest.fixture(scope="module")
def deliverable_texts(task_json) -> dict[tuple[str, str, str], str]:
    texts = {}
    for system_dir in sorted((SAMPLE / "submissions").iterdir()):
        for task_id, data in task_json.items():
            for name, filename in data["deliverables"].items():
                path = system_dir / task_id / filename
                texts[(system_dir.name, task_id, name)] = path.read_text(encoding="utf-8")
    return texts


@pytest.fixture(scope="module")
def source_texts(task_json) -> dict[tuple[str, str], str]:
    """Every source document converted by the product's own converter, normalised."""
    out = {}
    for task_id in task_json:
        for path in sorted((SAMPLE / "tasks" / task_id / "documents").iterdir()):
            out[(task_id, path.name)] = norm(convert(path.name, path.read_bytes()).text)
    return out


# ------------------------------------------------------------------ shape required by the issue


def test_sample_has_at_least_8_tasks_in_4_practice_areas(task_json) -> None:
    assert len(task_json) >= 8
    assert len({t.split("/")[0] for t in task_json}) >= 4
    assert any(t.count("/") == 2 for t in task_json), "at least one task id with a scenario component"
    assert any(t.count("/") == 1 for t in task_json), "at least one task id without a scenario"


def test_every_task_has_4_documents_in_3_formats_including_a_distractor(task_json, gt) -> None:
    for task_id in task_json:
        docs = sorted((SAMPLE / "tasks" / task_id / "documents").iterdir())
        formats = {p.suffix.lstrip(".") for p in docs}
        assert len(docs) >= 4, task_id
        assert len(formats & {"docx", "xlsx", "eml", "pdf", "txt"}) >= 3, task_id
        assert gt.distractors[task_id], task_id
        assert set(gt.distractors[task_id]) <= {p.name for p in docs}


def test_every_task_has_10_to_25_criteria_written_pass_if_fail_if(task_json) -> None:
    for task_id, data in task_json.items():
        criteria = data["criteria"]
        assert 10 <= len(criteria) <= 25, task_id
        assert len({c["id"] for c in criteria}) == len(criteria)
        for c in criteria:
            assert c["match_criteria"].startswith("PASS if") and "FAIL if" in c["match_criteria"], c["id"]
        assert len(data["instructions"].split()) in range(35, 80), task_id


def test_a_task_has_two_deliverables_and_a_criterion_limited_to_one_of_them(task_json) -> None:
    multi = {t: d for t, d in task_json.items() if len(d["deliverables"]) >= 2}
    assert multi
    assert any(
        c.get("deliverables") and len(c["deliverables"]) < len(d["deliverables"])
        for d in multi.values()
        for c in d["criteria"]
    )


def test_four_systems_submit_every_task_and_three_map_to_a_judge_family(gt, task_json) -> None:
    assert len(gt.systems) >= 4
    for system in gt.systems:
        assert set(gt.verdicts[system]) == set(task_json), system
    config = load_config(vendors="offline")
    families = {config.family_of(s) for s in gt.systems} - {None}
    assert families == {"openai", "anthropic", "xai"}


# ------------------------------------------------------------------ ground truth consistency


def test_verdicts_cover_every_criterion_of_every_submission(gt, task_json) -> None:
    for system, task_id in gt.submissions():
        assert set(gt.verdicts[system][task_id]) == {c["id"] for c in task_json[task_id]["criteria"]}


def test_every_annotated_span_is_an_exact_substring_of_its_deliverable(gt, deliverable_texts) -> None:
    assert span_problems(gt, deliverable_texts) == []
    for h in gt.hallucinations:
        assert deliverable_texts[(h.system, h.task_id, h.deliverable)].count(h.span) == 1, h.span


def test_grounded_passages_occur_in_their_converted_source_documents(gt, source_texts) -> None:
    for s in gt.supported:
        assert norm(s.source_passage) in source_texts[(s.task_id, s.source_document)], s.source_passage
    for h in gt.hallucinations:
        if h.source_passage is not None:
            assert norm(h.source_passage) in source_texts[(h.task_id, h.source_document)], h.source_passage


def test_correct_quotes_occur_verbatim_modulo_quote_style_and_altered_quotes_nowhere(gt, source_texts) -> None:
    correct = [s for s in gt.supported if s.kind == "quote"]
    altered = [h for h in gt.hallucinations if h.kind == "quote"]
    assert len(correct) >= 5 and len(altered) >= 5
    assert any("\u201c" in s.span for s in correct), "some correct quotes use curly quotes"
    for s in correct:
        for part in quoted_parts(s.span):
            assert norm(part) in source_texts[(s.task_id, s.source_document)], part
    for h in altered:
        everything = " ".join(v for (t, _), v in source_texts.items() if t == h.task_id)
        for part in quoted_parts(h.span):
            assert norm(part) not in everything, part


def test_hallucinations_mix_every_category_materiality_and_kind(gt) -> None:
    pairs = Counter((h.category, h.materiality) for h in gt.hallucinations)
    assert {c for c, _ in pairs} == {"contradiction", "fabricated_source", "unsupported_specific"}
    assert {m for _, m in pairs} == {"material", "minor"}
    kinds = {h.kind for h in gt.hallucinations}
    assert {"quote", "date", "amount", "party", "reference"} <= kinds


def test_every_task_has_a_general_knowledge_passage_and_reformatted_grounded_values(gt, task_json) -> None:
    assert {g.task_id for g in gt.general_knowledge} == set(task_json)
    spans = [s.span for s in gt.supported]
    assert any("USD" in s and "million" in s for s in spans), "an amount renormalised as USD x million"
    assert any(s[:4].isdigit() and s[4] == "-" for s in spans), "an ISO date"
    assert any(s[0].isdigit() and not s[:4].isdigit() and "20" in s for s in spans), "a day-month-year date"


def test_expected_leaderboard_separates_the_four_profiles(gt) -> None:
    board = expected_leaderboard(gt)
    strong, average = board["gpt-strong"], board["claude-average"]
    weak, fluent = board["grok-weak"], board["fluent-hallucinator"]
    assert strong.hc_pass_rate > average.hc_pass_rate > fluent.hc_pass_rate > weak.hc_pass_rate
    assert fluent.all_pass_rate > strong.all_pass_rate, "the hallucinator looks best before the gate"
    assert fluent.passing_lost_to_gate > 0.5 and strong.passing_lost_to_gate == 0
    assert weak.criterion_pass_rate < 0.5
    scores = expected_scores(gt)
    assert any(s.system == "gpt-strong" and s.minor_flags and not s.gated for s in scores.values())
    unaudited_with_planted = [
        k for k, s in scores.items() if not s.audited and gt.hallucinations_for(*k)
    ]
    assert unaudited_with_planted, "planted hallucinations in failing submissions are not counted"


# ------------------------------------------------------------------ real files, deterministic


def test_documents_are_real_files_of_their_format(task_json) -> None:
    tables = sheets = attachments = 0
    for task_id in task_json:
        for path in (SAMPLE / "tasks" / task_id / "documents").iterdir():
            data = path.read_bytes()
            if path.suffix == ".docx":
                tables += len(docx.Document(io.BytesIO(data)).tables)
            elif path.suffix == ".xlsx":
                sheets = max(sheets, len(openpyxl.load_workbook(io.BytesIO(data)).sheetnames))
            elif path.suffix == ".pdf":
                assert PdfReader(io.BytesIO(data)).pages[0].extract_text().strip(), path.name
            elif path.suffix == ".eml":
                attachments += "Attachments:" in convert(path.name, data).text
    assert tables >= 1 and sheets >= 2 and attachments >= 1


def test_generator_rebuilds_the_committed_sample_byte_for_byte(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    build_sample(first)
    build_sample(second)
    committed = {p.relative_to(SAMPLE): p.read_bytes() for p in SAMPLE.rglob("*") if p.is_file()}
    for out in (first, second):
        built = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
        assert built.keys() == committed.keys()
        changed = [str(k) for k in built if built[k] != committed[k]]
        assert not changed, f"rerun `python examples/generate_sample.py`; stale: {changed[:5]}"


def test_make_scanned_pdf_writes_an_image_only_page_with_no_text_layer(tmp_path: Path) -> None:
    path = make_scanned_pdf(tmp_path / "scan.pdf")
    reader = PdfReader(path)
    assert len(reader.pages) == 1
    assert reader.pages[0].extract_text().strip() == ""
    assert reader.pages[0].images, "the page holds an image"


# ------------------------------------------------------------------ the build's self-checks bite


def _psa_with(**changes: Any) -> TaskSpec:
    return dataclasses.replace(real_estate.PSA_TASK, **changes)


def test_build_refuses_a_declared_verdict_that_the_memo_does_not_support() -> None:
    subs = [
        dataclasses.replace(s, fails=frozenset()) if s.system == "claude-average" else s
        for s in real_estate.PSA_TASK.submissions
    ]
    with pytest.raises(SampleError, match="claude-average: evidence rule fails"):
        build_task(_psa_with(submissions=subs))


def test_build_refuses_a_hallucinated_quote_that_is_actually_in_the_sources() -> None:
    original = real_estate.PSA_STRONG
    planted = original.replace("{{s:cap-quote|", "{{h:refund-quote|", 1)
    subs = [
        dataclasses.replace(s, texts={"memo": planted}) if s.system == "gpt-strong" else s
        for s in real_estate.PSA_TASK.submissions
    ]
    with pytest.raises(SampleError, match="actually occurs in the sources"):
        build_task(_psa_with(submissions=subs))


def test_build_refuses_a_task_with_too_few_criteria() -> None:
    with pytest.raises(SampleError, match="criteria"):
        build_task(_psa_with(criteria=real_estate.PSA_TASK.criteria[:9]))


def test_every_sample_task_passes_the_build_checks() -> None:
    for task in all_tasks():
        build_task(task)


# ------------------------------------------------------------------ the evidence matcher


@given(st.integers(min_value=1, max_value=9), st.integers(min_value=1_000, max_value=99_999_999))
def test_an_amount_never_matches_inside_a_longer_number(lead: int, value: int) -> None:
    needle = f"{value:,}"
    assert contains(f"a fee of ${value:,} is due", needle)
    assert not contains(f"a fee of ${lead}{value:,} is due", needle)
    assert not contains(f"a fee of ${value:,}.5 is due", needle)


@given(st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2040, 12, 31)))
def test_every_accepted_spelling_of_a_date_is_found(d) -> None:
    for spelling in dates(d.year, d.month, d.day):
        assert contains(f"due on {spelling}.", spelling)


def test_money_spellings_cover_grouped_digits_and_millions() -> None:
    assert money(48_750_000) == ("48,750,000", "48.75 million")
    assert contains("USD 48.75 million", "48.75 million")
    assert not contains("USD 1.1 million", "1 million")
