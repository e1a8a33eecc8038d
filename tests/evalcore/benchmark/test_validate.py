"""validate(): summary counts and every problem (the `tribunal validate` command: tests/jobs/cli/test_validate.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.benchmark.validate import validate


@pytest.fixture
def clean_bench(tmp_path, bench, docs) -> Path:
    """Two areas, three tasks, documents in four formats."""
    tasks = tmp_path / "bench" / "tasks"
    bench.write(
        tasks,
        "real-estate/psa/scenario-01",
        documents={
            "psa.docx": docs.docx(["Price"]),
            "rent.xlsx": docs.xlsx({"A": [["x"]]}),
            "mail.eml": docs.eml(),
        },
    )
    bench.write(tasks, "real-estate/psa/scenario-02", documents={"psa.pdf": docs.pdf("Closing 1 May 2024")})
    three = bench.task_json()
    three["criteria"].append({"id": "C-003", "title": "t", "match_criteria": "PASS if y"})
    bench.write(tasks, "employment/severance", three)
    return tmp_path / "bench"


def _results(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_report_summarises_tasks_criteria_documents_submissions_and_missing(clean_bench, tmp_path):
    results = _results(
        tmp_path / "results",
        {
            "strong/real-estate/psa/scenario-01/memo.md": "m",
            "strong/real-estate/psa/scenario-01/terms.md": "t",
            "weak/real-estate/psa/scenario-01/memo.md": "m",
            "weak/employment/severance/terms.md": "t",
        },
    )
    report = validate(str(clean_bench), str(results))
    assert report.ok
    assert report.n_tasks == 3
    assert report.tasks_by_area == {"employment": 1, "real-estate": 2}
    assert report.criteria.model_dump() == {
        "total": 7,
        "min_per_task": 2,
        "max_per_task": 3,
        "mean_per_task": 7 / 3,
    }
    assert report.documents_by_type == {"docx": 1, "eml": 1, "pdf": 1, "txt": 1, "xlsx": 1}
    assert report.n_documents == 5
    assert report.submissions_by_system == {"strong": 1, "weak": 2}
    assert report.n_submissions == 3
    assert sorted((m.system, m.task_id, m.deliverable) for m in report.deliverables_missing) == [
        ("weak", "employment/severance", "memo"),
        ("weak", "real-estate/psa/scenario-01", "terms"),
    ]
    assert len(report.benchmark_hash) == 64


def test_unsupported_uri_scheme_is_a_problem_not_a_crash():
    report = validate("gs://bucket/bench")
    assert not report.ok
    assert report.problems[0].reason.endswith(
        "unsupported URI scheme (use a local path or s3://bucket/prefix)"
    )
