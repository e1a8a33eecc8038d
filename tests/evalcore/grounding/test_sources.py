"""The source index (evalcore/grounding/sources.py): table rows read with their header; an index
built once and passed to the checks (what a sweep ships to its shards) gives the same findings."""

from __future__ import annotations

import pickle
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from evalcore.grounding import relevant_passages
from evalcore.schema import Submission
from tests.evalcore.grounding._fixtures import SLA_FILE, SOURCES, check_one

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample"


def test_percent_column_of_a_table_supports_a_percentage() -> None:
    assert check_one(SLA_FILE, "Availability fell to 99.62% in July 2025.") == []


def test_table_row_is_a_passage_read_with_its_header() -> None:
    passages = relevant_passages(SLA_FILE, "Availability was 99.41% that month", k=1)
    assert passages and passages[0][0] == "Uptime.xlsx"
    # The row, not the whole sheet: its header and title come with it, July's row does not.
    assert "Availability (%)" in passages[0][1] and "99.41" in passages[0][1] and "99.62" not in passages[0][1]


def test_findings_against_a_shipped_index_equal_findings_against_one_built_in_place() -> None:
    """What a sweep's shard does: the task's index, built once and pickled to the worker, passed
    to the grounding checks as an argument, gives the findings an index built in place gives."""
    from evalcore.benchmark.instructions_only import audit_sources
    from evalcore.benchmark.loader import load_benchmark
    from evalcore.grading.audit import grounding_candidates
    from evalcore.grounding import index_sources
    from evalcore.submissions.loader import iter_submissions

    tasks = {t.id: t for t in load_benchmark(str(SAMPLE)).tasks}
    subs = [s for s in iter_submissions(str(SAMPLE / "submissions"), tasks) if isinstance(s, Submission)]
    built = [grounding_candidates(tasks[s.task_id], s) for s in subs]
    assert any(built)  # the sample's deliverables do have candidates: the comparison is not empty
    shipped = {tid: pickle.loads(pickle.dumps(index_sources(audit_sources(t)))) for tid, t in tasks.items()}
    assert [grounding_candidates(tasks[s.task_id], s, shipped[s.task_id]) for s in subs] == built


def test_a_passed_index_is_the_one_the_checks_read() -> None:
    """The index is an argument, not looked up: an index of other sources gives their passages."""
    from evalcore.grounding import index_sources

    other = index_sources(SLA_FILE)
    passages = relevant_passages(SOURCES, "Availability was 99.41% that month", k=1, index=other)
    assert passages and passages[0][0] == "Uptime.xlsx"


@example("Payment \ufdfa due")  # NFKC turns U+FDFA into four words: one token holding spaces
@example("")
@given(st.text(max_size=300))
def test_a_normalised_document_comes_back_from_pickle_with_the_same_tokens_and_offsets(text: str) -> None:
    from evalcore.grounding.index import NormalisedDoc
    from evalcore.grounding.text import tokens_with_offsets

    tokens, offsets = tokens_with_offsets(text)
    doc = NormalisedDoc.of("Lease.docx", tokens, offsets)
    back = pickle.loads(pickle.dumps(doc))
    assert back == doc
    assert back.tokens == tokens
    assert [(back.start(i), back.end(i)) for i in range(len(tokens))] == offsets


def test_an_index_comes_back_from_pickle_equal_in_every_field() -> None:
    from evalcore.benchmark.instructions_only import audit_sources
    from evalcore.benchmark.loader import load_benchmark
    from evalcore.grounding import index_sources

    for task in load_benchmark(str(SAMPLE)).tasks:
        index = index_sources(audit_sources(task))
        assert index.passages and index.values  # the sample's sources do fill the index
        assert pickle.loads(pickle.dumps(index)) == index
