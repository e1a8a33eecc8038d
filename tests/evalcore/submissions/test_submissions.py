"""Submission loader: results folders and manifests, local and S3; every bad input is rejected by name."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.schema import Criterion, Rejection, Submission, Task
from evalcore.submissions.loader import _looks_like_path, iter_submissions, load_submissions
from tests.conftest import upload_tree

PSA = "real-estate/psa/scenario-01"
PSA_PARENT = "real-estate/psa"  # also a task: the deepest known id must win
LEASE = "real-estate/lease"


def _task(task_id: str, deliverables: dict[str, str] | None = None) -> Task:
    return Task(
        id=task_id,
        area=task_id.split("/")[0],
        title="t",
        instructions="i",
        criteria=[Criterion(id="C-001", title="c", match_criteria="PASS if x")],
        deliverables=deliverables or {"memo": "memo.docx", "terms": "terms.xlsx"},
    )


TASKS = {
    t.id: t
    for t in (_task(PSA), _task(PSA_PARENT, {"memo": "memo.md"}), _task(LEASE, {"summary": "summary.md"}))
}


def _write(root: Path, rel: str, data: bytes | str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _reasons(load):
    return [(r.file, r.reason) for r in load.rejected]


# --------------------------------------------------------------------------------------------
# results folder
# --------------------------------------------------------------------------------------------


def test_results_folder_matches_the_deepest_task_id_and_converts_files(tmp_path, docs):
    root = tmp_path / "results"
    _write(root, f"gpt-strong/{PSA}/memo.docx", docs.docx(["Price is $4,250,000"]))
    _write(root, f"gpt-strong/{PSA}/terms.xlsx", docs.xlsx({"Terms": [["Price", 4250000]]}))
    _write(root, f"gpt-strong/{PSA_PARENT}/memo.md", "# Parent task memo")
    _write(root, f"grok-weak/{LEASE}/summary.md", "Short summary")

    load = load_submissions(str(root), TASKS)

    assert load.rejected == []
    ids = [(s.system, s.task_id) for s in load.submissions]
    assert ids == [("gpt-strong", PSA_PARENT), ("gpt-strong", PSA), ("grok-weak", LEASE)]
    psa = load.submissions[1]
    assert "Price is $4,250,000" in psa.deliverables["memo"].text
    assert psa.deliverables["memo"].filename == "memo.docx"
    assert "Price\t4250000" in psa.deliverables["terms"].text
    assert psa.origin == str(root / "gpt-strong" / PSA)


def test_a_missing_deliverable_is_a_valid_submission_marked_missing(tmp_path):
    root = tmp_path / "results"
    _write(root, f"claude/{PSA}/memo.md", "Only the memo")
    [sub] = load_submissions(str(root), TASKS).submissions
    assert sub.deliverables["memo"].text == "Only the memo" and not sub.deliverables["memo"].missing
    assert sub.deliverables["terms"].missing and sub.deliverables["terms"].text == ""
    assert list(sub.deliverables) == ["memo", "terms"]


def test_a_deliverable_may_use_another_supported_extension(tmp_path):
    root = tmp_path / "results"
    _write(root, f"claude/{PSA}/memo.md", "memo in markdown")
    _write(root, f"claude/{PSA}/terms.txt", "terms in text")
    [sub] = load_submissions(str(root), TASKS).submissions
    assert sub.deliverables["memo"].filename == "memo.md"
    assert sub.deliverables["terms"].text == "terms in text"


def test_unknown_task_id_is_rejected_with_a_suggestion(tmp_path):
    root = tmp_path / "results"
    _write(root, "claude/real-estate/psa/scenario-09/memo.md", "x")
    load = load_submissions(str(root), TASKS)
    assert load.submissions == []
    assert _reasons(load) == [
        (
            str(root / "claude/real-estate/psa/scenario-09"),
            "unknown task id 'real-estate/psa/scenario-09' (no such task in the benchmark); "
            "did you mean 'real-estate/psa/scenario-01'?",
        )
    ]
    assert load.rejected[0].system == "claude"


def test_submission_for_a_task_left_out_of_the_benchmark_says_so(tmp_path):
    root = tmp_path / "results"
    _write(root, "claude/tax/broken/memo.md", "x")
    [rejection] = load_submissions(str(root), TASKS, excluded={"tax/broken"}).rejected
    assert "was left out of the benchmark" in rejection.reason


def test_symlink_escaping_the_results_folder_is_rejected(tmp_path):
    root = tmp_path / "results"
    secret = _write(tmp_path, "secret/memo.md", "secret")
    link = root / "claude" / LEASE / "summary.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(secret)
    load = load_submissions(str(root), TASKS)
    assert load.submissions == []
    assert _reasons(load) == [
        (str(link), "symlink points outside the submissions folder; refusing to read it")
    ]


def test_symlinked_folder_escaping_the_results_folder_is_rejected(tmp_path):
    root = tmp_path / "results"
    _write(tmp_path, "elsewhere/summary.md", "secret")
    (root / "claude" / "real-estate").mkdir(parents=True)
    (root / "claude" / LEASE).symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    load = load_submissions(str(root), TASKS)
    assert load.submissions == []
    assert [r.reason for r in load.rejected] == [
        "symlink points outside the submissions folder; refusing to read it"
    ]


def test_unsupported_unreadable_and_unexpected_files_reject_the_submission(tmp_path):
    root = tmp_path / "results"
    _write(root, f"a/{PSA}/memo.docx", b"not a zip")
    _write(root, f"b/{PSA}/memo.doc", b"legacy")
    _write(root, f"c/{LEASE}/summary.md", "fine")
    _write(root, f"c/{LEASE}/notes.md", "scratch")
    load = load_submissions(str(root), TASKS)
    assert load.submissions == []
    reasons = dict(_reasons(load))
    assert (
        reasons[str(root / f"a/{PSA}/memo.docx")]
        == "deliverable 'memo': cannot read docx file: File is not a zip file"
    )
    assert reasons[str(root / f"b/{PSA}/memo.doc")].startswith("file 'memo.doc' is not a deliverable of task")
    assert reasons[str(root / f"c/{LEASE}/notes.md")] == (
        "file 'notes.md' is not a deliverable of task 'real-estate/lease' (expected: summary -> summary.md)"
    )


def test_two_files_for_one_deliverable_are_rejected(tmp_path):
    root = tmp_path / "results"
    _write(root, f"a/{LEASE}/summary.md", "one")
    _write(root, f"a/{LEASE}/summary.txt", "two")
    [rejection] = load_submissions(str(root), TASKS).rejected
    assert rejection.reason == "several files for deliverable 'summary': summary.md, summary.txt"


def test_file_outside_a_task_folder_is_rejected(tmp_path):
    root = tmp_path / "results"
    _write(root, "a/memo.md", "x")
    [rejection] = load_submissions(str(root), TASKS).rejected
    assert (
        rejection.file == str(root / "a" / "memo.md")
        and "not inside a <system>/<task id>/" in rejection.reason
    )


# --------------------------------------------------------------------------------------------
# manifests
# --------------------------------------------------------------------------------------------


def _jsonl(path: Path, rows: list[object]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return str(path)


def test_manifest_values_are_files_when_they_exist_else_inline_text(tmp_path, docs):
    _write(tmp_path / "m", "out/memo.docx", docs.docx(["From a docx file"]))
    manifest = _jsonl(
        tmp_path / "m" / "manifest.jsonl",
        [
            {
                "system": "s1",
                "task_id": PSA,
                "deliverables": {"memo": "out/memo.docx", "terms": "Price: $4.25m"},
            },
            {"system": "s2", "task_id": PSA, "deliverables": {"memo": "not-there.md", "terms": None}},
            {"system": "s3", "task_id": PSA, "deliverables": {"memo": {"text": "out/memo.docx"}}},
        ],
    )
    load = load_submissions(manifest, TASKS)
    assert load.rejected == []
    s1, s2, s3 = load.submissions
    assert (
        s1.deliverables["memo"].text == "From a docx file" and s1.deliverables["memo"].filename == "memo.docx"
    )
    assert s1.deliverables["terms"].text == "Price: $4.25m" and s1.deliverables["terms"].filename is None
    assert s2.deliverables["memo"].text == "not-there.md"
    assert s2.deliverables["terms"].missing
    assert s3.deliverables["memo"].text == "out/memo.docx" and s3.deliverables["terms"].missing
    assert s1.origin == f"{manifest}:1"


def test_manifest_problems_are_rejected_by_line_and_the_rest_loads(tmp_path):
    folder = tmp_path / "m"
    _write(tmp_path, "outside.md", "secret")
    _write(folder, "sub/link.md", b"")
    (folder / "sub" / "link.md").unlink()
    (folder / "sub" / "link.md").symlink_to(tmp_path / "outside.md")
    manifest = _jsonl(
        folder / "manifest.jsonl",
        [
            {"system": "ok", "task_id": LEASE, "deliverables": {"summary": "fine"}},
            "{broken json",
            {"system": "a", "task_id": "tax/nope", "deliverables": {"summary": "x"}},
            {"system": "ok", "task_id": LEASE, "deliverables": {"summary": "again"}},
            {"system": "b", "task_id": LEASE, "deliverables": {"../x": "x"}},
            {"system": "c", "task_id": LEASE, "deliverables": {"summary": "../outside.md"}},
            {"system": "d", "task_id": LEASE, "deliverables": {"summary": "/etc/hostname.txt"}},
            {"system": "e", "task_id": LEASE, "deliverables": {"summary": "sub/link.md"}},
            {"system": "f", "task_id": LEASE, "deliverables": {"conclusion": "x"}},
            {"system": "g", "task_id": LEASE, "deliverables": {"summary": {"path": "gone.md"}}},
            {"system": "h", "task_id": LEASE},
            "",
            {"system": "i", "task_id": LEASE, "deliverables": {"summary": {"path": "memo.pages"}}},
        ],
    )
    _write(folder, "memo.pages", b"x")
    load = load_submissions(manifest, TASKS)
    assert [(s.system, s.task_id) for s in load.submissions] == [("ok", LEASE)]
    got = _reasons(load)
    m = manifest
    expected = [
        (f"{m}:2", "invalid JSON at column 2: Expecting property name enclosed in double quotes"),
        (f"{m}:3", "unknown task id 'tax/nope' (no such task in the benchmark)"),
        (f"{m}:4", f"duplicate submission: system 'ok' already has task '{LEASE}' at {m}:1"),
        (f"{m}:5", "deliverable name '../x' escapes its root (use the task's deliverable names)"),
        (
            f"{m}:6",
            "deliverable 'summary': path '../outside.md' escapes the manifest's folder (absolute or '..'); "
            "give a path relative to the manifest's folder, or an s3:// URI",
        ),
        (
            f"{m}:7",
            "deliverable 'summary': path '/etc/hostname.txt' escapes the manifest's folder (absolute or '..'); "
            "give a path relative to the manifest's folder, or an s3:// URI",
        ),
        (
            f"{m}:8",
            "deliverable 'summary': 'sub/link.md' is a symlink pointing outside the manifest's folder",
        ),
        (f"{m}:9", f"unknown deliverable name 'conclusion' for task '{LEASE}' (expected: summary)"),
        (f"{m}:10", "deliverable 'summary': file 'gone.md' not found"),
        (
            f"{m}:11",
            "missing or invalid field(s) 'deliverables'; a row needs system, task_id and "
            "deliverables {name: path-or-text}",
        ),
    ]
    assert got[: len(expected)] == expected
    assert got[len(expected)][0] == f"{m}:13" and "unsupported file type" in got[len(expected)][1]
    assert len(got) == len(expected) + 1


def test_parquet_manifest_with_a_map_column_loads(tmp_path):
    _write(tmp_path, "files/summary.md", "summary from a file")
    table = pa.table(
        {
            "system": ["s1", "s2"],
            "task_id": [LEASE, PSA],
            "deliverables": pa.array(
                [[("summary", "files/summary.md")], [("memo", "inline memo")]],
                type=pa.map_(pa.string(), pa.string()),
            ),
        }
    )
    pq.write_table(table, tmp_path / "subs.parquet")
    load = load_submissions(str(tmp_path / "subs.parquet"), TASKS)
    assert load.rejected == []
    s1, s2 = load.submissions
    assert s1.deliverables["summary"].text == "summary from a file"
    assert s2.deliverables["memo"].text == "inline memo" and s2.deliverables["terms"].missing
    assert s2.origin.endswith("subs.parquet:row 2")


def test_missing_source_and_unknown_file_type_are_reported(tmp_path):
    assert _reasons(load_submissions(str(tmp_path / "nope"), TASKS)) == [
        (str(tmp_path / "nope"), "submissions not found (no such folder, file or S3 prefix)")
    ]
    _write(tmp_path, "subs.csv", "a,b")
    [rejection] = load_submissions(str(tmp_path / "subs.csv"), TASKS).rejected
    assert rejection.reason == "expected a results folder or a .jsonl/.parquet manifest"


@given(st.text(max_size=40))
def test_prose_never_looks_like_a_path(text):
    prose = f"The memo says: {text}\nSee section 4."
    assert not _looks_like_path(prose)


@given(
    st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_ ./-]{0,30}", fullmatch=True),
    st.sampled_from([".docx", ".MD", ".pdf"]),
)
def test_a_single_line_with_a_supported_extension_looks_like_a_path(stem, ext):
    value = (stem.strip() or "x") + ext
    assert _looks_like_path(value)


# --------------------------------------------------------------------------------------------
# streaming and S3
# --------------------------------------------------------------------------------------------


def test_iter_submissions_streams_in_order(tmp_path):
    rows = [
        {"system": f"s{i:03d}", "task_id": LEASE, "deliverables": {"summary": f"text {i}"}}
        for i in range(150)
    ]
    manifest = _jsonl(tmp_path / "big.jsonl", rows)
    stream = iter_submissions(manifest, TASKS, max_workers=2)
    assert inspect.isgenerator(stream)
    first = next(stream)
    assert isinstance(first, Submission) and first.system == "s000"
    rest = list(stream)
    assert [s.system for s in rest] == [f"s{i:03d}" for i in range(1, 150)]
    assert not any(isinstance(s, Rejection) for s in rest)


@pytest.mark.s3
def test_results_folder_and_manifest_on_s3_load_like_local(tmp_path, docs, s3_server, s3_bucket):
    root = tmp_path / "up"
    _write(root, f"results/gpt/{PSA}/memo.docx", docs.docx(["S3 memo"]))
    _write(root, f"results/gpt/{LEASE}/summary.md", "S3 summary")
    _write(root, "results/gpt/real-estate/unknown/memo.md", "x")
    _write(root, "files/summary.md", "manifest file on S3")
    _jsonl(
        root / "files" / "m.jsonl",
        [{"system": "s", "task_id": LEASE, "deliverables": {"summary": "summary.md"}}],
    )
    upload_tree(s3_server, root, s3_bucket)

    local = load_submissions(str(root / "results"), TASKS)
    remote = load_submissions(f"s3://{s3_bucket}/results", TASKS, endpoint_override=s3_server)
    strip = {"origin"}
    assert [s.model_dump(exclude=strip) for s in remote.submissions] == [
        s.model_dump(exclude=strip) for s in local.submissions
    ]
    assert len(remote.submissions) == 2
    assert [r.reason for r in remote.rejected] == [r.reason for r in local.rejected]
    assert remote.rejected[0].file == f"s3://{s3_bucket}/results/gpt/real-estate/unknown"

    manifest = load_submissions(f"s3://{s3_bucket}/files/m.jsonl", TASKS, endpoint_override=s3_server)
    assert manifest.rejected == []
    assert manifest.submissions[0].deliverables["summary"].text == "manifest file on S3"
