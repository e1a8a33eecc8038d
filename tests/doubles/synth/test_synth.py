"""doubles.synth.scale: synthetic submissions whose ground truth stays exact (spans, verdicts, counts)."""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doubles.synth.ground_truth import GroundTruth, load_ground_truth, span_problems
from doubles.synth.scale import summary, synthesize
from evalcore.benchmark.documents import convert

REPO = Path(__file__).resolve().parents[3]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from examples.sample_gen.build import all_tasks, criterion_passes  # noqa: E402
from examples.sample_gen.markup import norm, quoted_parts  # noqa: E402

SAMPLE = REPO / "examples" / "sample"


@pytest.fixture(scope="module")
def sample_truth() -> GroundTruth:
    return load_ground_truth(SAMPLE / "ground_truth.json")


@pytest.fixture(scope="module")
def synth_run(tmp_path_factory: pytest.TempPathFactory, sample_truth: GroundTruth) -> tuple[Path, GroundTruth]:
    out = tmp_path_factory.mktemp("synth")
    return out, synthesize(SAMPLE, sample_truth, 240, out, seed=7)


def _written_texts(out: Path, gt: GroundTruth) -> dict[tuple[str, str, str], str]:
    texts = {}
    for line in (out / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for name, ref in row["deliverables"].items():
            texts[(row["system"], row["task_id"], name)] = (out / ref["path"]).read_text(encoding="utf-8")
    return texts


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def test_writes_n_submissions_a_manifest_line_each_and_the_ground_truth(synth_run) -> None:
    out, gt = synth_run
    assert len(gt.submissions()) == 240
    assert len((out / "manifest.jsonl").read_text().splitlines()) == 240
    assert load_ground_truth(out / "ground_truth.json") == gt
    assert all(s.startswith("synth-") for s in gt.systems)


def test_systems_are_spread_evenly_over_the_sample_tasks(synth_run, sample_truth) -> None:
    _, gt = synth_run
    per_system = Counter(system for system, _ in gt.submissions())
    assert set(per_system.values()) == {len(sample_truth.task_ids())}
    assert set(gt.task_ids()) == set(sample_truth.task_ids())


def test_every_synthetic_span_is_exact_in_the_written_deliverable(synth_run) -> None:
    out, gt = synth_run
    assert span_problems(gt, _written_texts(out, gt)) == []


def test_all_four_operations_occur_and_planted_hallucinations_are_recorded(synth_run) -> None:
    _, gt = synth_run
    text = summary(gt)
    for op in ("clone", "empty", "insert", "mutate"):
        assert op in text
    synthetic = [h for h in gt.hallucinations if h.note.startswith("synthetic")]
    assert {h.category for h in synthetic} == {"contradiction", "fabricated_source", "unsupported_specific"}
    assert {h.materiality for h in synthetic} == {"material", "minor"}


def test_verdicts_agree_with_the_sample_rubric_evidence_rules(synth_run) -> None:
    """Perturbations must not change what a criterion reads: re-derive every verdict from the text."""
    out, gt = synth_run
    texts = _written_texts(out, gt)
    specs = {t.id: t for t in all_tasks()}
    for system, task_id in gt.submissions():
        spec = specs[task_id]
        for cid, crit in zip(spec.criterion_ids(), spec.criteria, strict=True):
            names = list(crit.deliverables) if crit.deliverables else list(spec.deliverables)
            joined = "\n\n".join(texts[(system, task_id, n)] for n in names)
            derived = "pass" if criterion_passes(crit, joined) else "fail"
            assert gt.verdict(system, task_id, cid) == derived, (system, task_id, cid)


def test_an_emptied_submission_fails_everything_and_keeps_no_spans(synth_run) -> None:
    out, gt = synth_run
    origins = gt.model_extra["synthesis"]["origins"]
    emptied = [k for k, v in origins.items() if v["ops"] == ["empty"]]
    assert emptied
    for key in emptied:
        system, task_id = key.split("::")
        assert set(gt.verdicts[system][task_id].values()) == {"fail"}
        assert not gt.hallucinations_for(system, task_id) and not gt.general_knowledge_for(system, task_id)


def test_planted_quotes_and_sentences_do_not_occur_in_the_sources(synth_run) -> None:
    _, gt = synth_run
    sources: dict[str, str] = {}
    for task_id in gt.task_ids():
        docs = sorted((SAMPLE / "tasks" / task_id / "documents").iterdir())
        sources[task_id] = " ".join(norm(convert(p.name, p.read_bytes()).text) for p in docs)
    for h in gt.hallucinations:
        if not h.note.startswith("synthetic"):
            continue
        parts = quoted_parts(h.span) if h.kind == "quote" else [h.span]
        for part in parts:
            assert norm(part) not in sources[h.task_id], h.span


def test_same_seed_reproduces_the_output_and_another_seed_differs(tmp_path: Path, sample_truth) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    synthesize(SAMPLE, sample_truth, 40, a, seed=3)
    synthesize(SAMPLE, sample_truth, 40, b, seed=3)
    synthesize(SAMPLE, sample_truth, 40, c, seed=4)
    assert _tree_digest(a) == _tree_digest(b)
    assert _tree_digest(a) != _tree_digest(c)


def test_a_rerun_with_fewer_submissions_leaves_no_stale_results(tmp_path: Path, sample_truth) -> None:
    synthesize(SAMPLE, sample_truth, 40, tmp_path, seed=1)
    synthesize(SAMPLE, sample_truth, 8, tmp_path, seed=1)
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["synth-0001"]


def test_n_below_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        synthesize(SAMPLE, None, 0, tmp_path)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(min_value=1, max_value=30), seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_any_seed_and_size_gives_a_consistent_ground_truth(n: int, seed: int, sample_truth) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        gt = synthesize(SAMPLE, sample_truth, n, out, seed=seed)
        assert len(gt.submissions()) == n
        assert span_problems(gt, _written_texts(out, gt)) == []
