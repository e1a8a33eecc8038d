"""Expert labels: the three file forms read to the same labels; bad rows are named; span matching."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from doubles.synth.ground_truth import load_ground_truth
from evalcore.errors import InputError
from evalcore.results.labels import load_labels, spans_match

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample" / "ground_truth.json"


def test_the_sample_ground_truth_is_a_labels_file_with_every_verdict_and_hallucination() -> None:
    gt = load_ground_truth(SAMPLE)
    labels = load_labels(str(SAMPLE))
    n_verdicts = sum(len(c) for tasks in gt.verdicts.values() for c in tasks.values())
    assert len(labels.verdicts) == n_verdicts == 412
    assert len(labels.hallucinations) == len(gt.hallucinations)
    assert labels.submissions() == gt.submissions()
    first = gt.hallucinations[0]
    assert (labels.hallucinations[0].span, labels.hallucinations[0].materiality) == (first.span, first.materiality)


def test_jsonl_and_parquet_forms_read_back_the_same_labels(tmp_path: Path) -> None:
    labels = load_labels(str(SAMPLE))
    rows = labels.rows()
    (tmp_path / "l.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    pq.write_table(labels.to_table(), tmp_path / "l.parquet")
    for name in ("l.jsonl", "l.parquet"):
        again = load_labels(str(tmp_path / name))
        assert (again.verdicts, again.hallucinations) == (labels.verdicts, labels.hallucinations)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"type": "verdict", "system": "s", "task_id": "t", "criterion_id": "C-1", "verdict": "maybe"}', "field verdict"),
        ('{"type": "opinion"}', "`type` must be verdict or hallucination"),
        ('{"type": "hallucination", "system": "s", "task_id": "t", "deliverable": "memo", "span": "x", '
         '"category": "contradiction"}', "field materiality"),
        ("{not json", "invalid JSON"),
    ],
)
def test_a_bad_label_line_is_refused_naming_the_file_line_and_field(tmp_path: Path, line: str, reason: str) -> None:
    path = tmp_path / "labels.jsonl"
    good = '{"type": "verdict", "system": "s", "task_id": "t", "criterion_id": "C-0", "verdict": "pass"}'
    path.write_text(good + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_labels(str(path))
    assert f"{path}:2" in str(err.value) and reason in str(err.value)


def test_an_unknown_labels_format_or_missing_file_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "labels.csv").write_text("a,b\n")
    with pytest.raises(InputError, match="labels.csv: labels must be"):
        load_labels(str(tmp_path / "labels.csv"))
    with pytest.raises(InputError, match="not found"):
        load_labels(str(tmp_path / "nope.jsonl"))


_text = st.text(alphabet=st.characters(codec="ascii", categories=("L", "N", "Zs")), min_size=1, max_size=60)


@given(_text, _text, _text)
def test_a_span_matches_any_text_containing_it_either_way(prefix: str, span: str, suffix: str) -> None:
    if not span.strip():
        return
    whole = prefix + span + suffix
    assert spans_match(span, whole) and spans_match(whole, span)


@given(_text, _text)
def test_span_matching_is_symmetric(a: str, b: str) -> None:
    assert spans_match(a, b) == spans_match(b, a)


def test_spans_with_nothing_in_common_do_not_match() -> None:
    assert not spans_match("The rent is $8,272.49 per month.", "Tenant may terminate on 90 days' notice.")
    assert spans_match("The  Rent is $8,272.49\nper month", "the rent is $8,272.49 per month.")
