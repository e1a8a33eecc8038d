"""Benchmark loader: the public layout loads unchanged; every problem is reported with its file."""

from __future__ import annotations

import json
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.benchmark.loader import load_benchmark, load_task, normalize_deliverables, parse_task_json
from evalcore.errors import BenchmarkError
from tests.conftest import upload_tree

TASK_ID = "real-estate/extract-psa-key-terms/scenario-01"


def _problems(load):
    return [(p.file, p.reason) for p in load.problems]


def test_public_format_task_json_loads_unchanged(tmp_path, bench, docs):
    public = bench.task_json(difficulty="hard", source={"dataset": "public", "version": 2})
    bench.write(
        tmp_path / "tasks",
        TASK_ID,
        public,
        {"psa.docx": docs.docx(["Purchase price $4,250,000"]), "emails/thread.eml": docs.eml()},
    )
    load = load_benchmark(str(tmp_path))
    assert load.problems == []
    [task] = load.tasks
    assert task.id == TASK_ID
    assert task.area == "real-estate"
    assert task.title == public["title"]
    assert task.instructions == public["instructions"]
    assert task.deliverables == public["deliverables"]
    assert task.work_type == "extraction" and task.tags == ["real-estate", "psa"]
    assert [c.model_dump(exclude_none=True) for c in task.criteria] == public["criteria"]
    assert task.criterion_deliverables(task.criteria[1]) == ["memo", "terms"]
    assert task.extra == {"difficulty": "hard", "source": {"dataset": "public", "version": 2}}
    assert [d.name for d in task.documents] == ["emails/thread.eml", "psa.docx"]
    assert load.root == str(tmp_path)


def test_tasks_folder_or_benchmark_root_give_the_same_tasks(tmp_path, bench):
    bench.write(tmp_path / "tasks", "employment/severance")
    bench.write(tmp_path / "tasks", "real-estate/psa/scenario-02")
    from_root = load_benchmark(str(tmp_path))
    from_tasks = load_benchmark(str(tmp_path / "tasks"))
    assert [t.id for t in from_root.tasks] == ["employment/severance", "real-estate/psa/scenario-02"]
    assert [t.model_dump() for t in from_tasks.tasks] == [t.model_dump() for t in from_root.tasks]
    assert from_tasks.root == from_root.root == str(tmp_path)


def test_hidden_and_office_lock_files_are_ignored(tmp_path, bench):
    folder = bench.write(tmp_path / "tasks", "tax/ruling")
    (folder / "documents" / ".DS_Store").write_bytes(b"\x00\x01")
    (folder / "documents" / "~$draft.docx").write_bytes(b"lock")
    load = load_benchmark(str(tmp_path))
    assert load.problems == []
    assert [d.name for d in load.tasks[0].documents] == ["psa.txt"]


@given(
    st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True),
        st.sampled_from([".docx", ".xlsx", ".md", ".pdf"]),
        min_size=1,
        max_size=5,
    )
)
def test_deliverables_map_list_of_filenames_and_list_of_objects_normalise_alike(names):
    as_map = {name: name + ext for name, ext in names.items()}
    assert normalize_deliverables(as_map) == as_map
    assert normalize_deliverables(list(as_map.values())) == as_map
    assert normalize_deliverables([{"name": n, "filename": f} for n, f in as_map.items()]) == as_map
    assert normalize_deliverables([{"filename": f} for f in as_map.values()]) == as_map


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ({"../x": "x.md"}, "not a plain name"),
        ({"memo": "../x.md"}, "escapes the task folder"),
        ({"memo": "/etc/passwd.md"}, "escapes the task folder"),
        (["memo.docx", "memo.md"], "given twice"),
        ({"a": "x.md", "b": "x.md"}, "share the filename"),
        ([], "is empty"),
        ("memo.docx", "must be a {name: filename} map"),
        ([3], "deliverables[0]"),
    ],
)
def test_bad_deliverables_are_refused_with_a_reason(value, reason):
    with pytest.raises(ValueError, match=reason.replace("{", r"\{").replace("[", r"\[")):
        normalize_deliverables(value)


def test_deliverables_as_a_list_is_accepted_by_the_loader(tmp_path, bench):
    bench.write(tmp_path / "tasks", "tax/memo", bench.task_json(deliverables=["memo.docx", "terms.xlsx"]))
    load = load_benchmark(str(tmp_path))
    assert load.problems == []
    assert load.tasks[0].deliverables == {"memo": "memo.docx", "terms": "terms.xlsx"}


def test_criterion_may_name_a_deliverable_by_its_filename(bench):
    task = bench.task_json()
    task["criteria"][0]["deliverables"] = ["memo.docx"]
    parsed = parse_task_json(json.dumps(task).encode())
    assert parsed.problems == []
    assert parsed.fields["criteria"][0].deliverables == ["memo"]


def test_every_corruption_is_reported_with_its_file_and_the_task_left_out(tmp_path, bench, docs):
    tasks = tmp_path / "tasks"
    good = bench.write(tasks, "real-estate/psa/scenario-01")
    bad_json = bench.write(tasks, "real-estate/psa/scenario-02", '{\n  "title": "x",\n  "criteria": [\n}')
    no_docs = bench.write(tasks, "employment/severance", documents={})
    dup = bench.task_json()
    dup["criteria"].append({**dup["criteria"][0], "title": "again"})
    dup_folder = bench.write(tasks, "employment/dup", dup)
    escaping = bench.write(tasks, "litigation/escape", bench.task_json(deliverables={"../x": "x.docx"}))
    unknown = bench.task_json()
    unknown["criteria"][0]["deliverables"] = ["brief"]
    unknown_folder = bench.write(tasks, "litigation/unknown-deliverable", unknown)
    missing = bench.task_json()
    del missing["instructions"]
    missing_folder = bench.write(tasks, "tax/missing-field", missing)
    scan = bench.write(tasks, "tax/scan", documents={"ok.txt": b"fine", "scan.pdf": docs.scanned_pdf()})

    load = load_benchmark(str(tmp_path))

    assert [t.id for t in load.tasks] == ["employment/severance", "real-estate/psa/scenario-01"]
    assert load.task_map()["employment/severance"].documents == []
    problems = _problems(load)
    assert (str(bad_json / "task.json"), "invalid JSON at line 4, column 1: Expecting value") in problems
    assert not [p for p in problems if p[0].startswith(str(no_docs))]  # graded on its instructions
    assert (
        str(dup_folder / "task.json"),
        "duplicate criterion id 'C-001' (criteria[0] and criteria[2])",
    ) in problems
    assert (
        str(escaping / "task.json"),
        "deliverable name '../x' is not a plain name (no '/', '\\' or '..')",
    ) in problems
    assert (
        str(unknown_folder / "task.json"),
        "criterion 'C-001' names unknown deliverable 'brief' (the task's deliverables: memo, terms)",
    ) in problems
    assert (str(missing_folder / "task.json"), "missing required field 'instructions'") in problems
    assert (
        str(scan / "documents" / "scan.pdf"),
        "no text could be read from any page, with or without OCR (blank or illegible scan?); "
        "task 'tax/scan' is left out (its sources would be incomplete)",
    ) in problems
    assert len(problems) == 6
    assert all(p.task_id for p in load.problems)
    assert load.excluded_task_ids() == {
        "real-estate/psa/scenario-02",
        "employment/dup",
        "litigation/escape",
        "litigation/unknown-deliverable",
        "tax/missing-field",
        "tax/scan",
    }
    assert str(good) not in " ".join(p.file for p in load.problems)


def test_task_json_outside_an_area_folder_is_reported(tmp_path, bench):
    bench.write(tmp_path / "tasks", "lonely")
    load = load_benchmark(str(tmp_path))
    assert load.tasks == []
    assert "must sit at tasks/<area>/<task>[/<scenario>]/" in load.problems[0].reason


def test_missing_benchmark_and_missing_tasks_folder_are_reported(tmp_path):
    assert _problems(load_benchmark(str(tmp_path / "nope"))) == [
        (str(tmp_path / "nope"), "benchmark not found (no such folder or S3 prefix)")
    ]
    (tmp_path / "README.md").write_text("hi")
    [(file, reason)] = _problems(load_benchmark(str(tmp_path)))
    assert file == str(tmp_path) and reason.startswith("no tasks/ folder here")


def test_content_hash_changes_when_a_document_changes(tmp_path, bench):
    folder = bench.write(tmp_path / "tasks", "tax/ruling")
    before = load_benchmark(str(tmp_path)).content_hash()
    assert load_benchmark(str(tmp_path)).content_hash() == before
    (folder / "documents" / "psa.txt").write_text("Purchase price: $4,250,001.")
    assert load_benchmark(str(tmp_path)).content_hash() != before


@pytest.mark.s3
def test_folder_and_s3_give_identical_tasks(tmp_path, bench, docs, s3_server, s3_bucket):
    tasks = tmp_path / "bench" / "tasks"
    bench.write(
        tasks,
        "real-estate/psa/scenario-01",
        documents={
            "psa.docx": docs.docx(["Price"], table=[["Price", "$4,250,000"]]),
            "rent.xlsx": docs.xlsx({"A": [["x", 1]], "B": [["y", 2]]}),
            "thread.eml": docs.eml(attachments=["a.pdf"]),
            "letter.pdf": docs.pdf("Closing 1 May 2024"),
            "deck.pptx": docs.pptx([("Deal", None)]),
        },
    )
    bench.write(tasks, "employment/severance", bench.task_json(deliverables=["memo.docx", "terms.xlsx"]))
    bench.write(tasks, "tax/broken", "{not json")
    upload_tree(s3_server, tmp_path / "bench", s3_bucket, "benchmarks/v1")

    local = load_benchmark(str(tmp_path / "bench"))
    remote = load_benchmark(f"s3://{s3_bucket}/benchmarks/v1", endpoint_override=s3_server)

    assert [t.model_dump() for t in remote.tasks] == [t.model_dump() for t in local.tasks]
    assert len(remote.tasks) == 2
    assert remote.content_hash() == local.content_hash()
    assert remote.root == f"s3://{s3_bucket}/benchmarks/v1"
    assert [(p.file, p.reason) for p in remote.problems] == [
        (
            f"s3://{s3_bucket}/benchmarks/v1/tasks/tax/broken/task.json",
            "invalid JSON at line 1, column 2: Expecting property name enclosed in double quotes",
        )
    ]
    assert remote.problems[0].reason == local.problems[0].reason


def test_load_task_reads_one_folder_with_its_benchmark_id(tmp_path, bench, docs):
    folder = bench.write(tmp_path / "tasks", TASK_ID, documents={"psa.pdf": docs.pdf("Price $4,250,000")})
    task = load_task(str(folder))
    assert task.id == TASK_ID and task.area == "real-estate"
    assert task.model_dump() == load_benchmark(str(tmp_path)).tasks[0].model_dump()
    assert load_task(str(folder), "x/y").id == "x/y"


def test_load_task_raises_naming_every_problem(tmp_path, bench, docs):
    folder = bench.write(
        tmp_path / "solo", "area/task", '{"title": 1}', documents={"scan.pdf": docs.scanned_pdf()}
    )
    with pytest.raises(BenchmarkError) as err:
        load_task(str(folder))
    assert "missing required field 'instructions'" in str(err.value)
    with pytest.raises(BenchmarkError, match="task.json: not found"):
        load_task(str(tmp_path / "nowhere"))


@pytest.mark.parametrize(
    ("value", "said"),
    [(["C-001"], 'not a list (["C-001"])'), ({"id": 1}, 'not an object ({"id": 1})'), (True, "not a boolean (true)"),
     (1.5, "not a number (1.5)")],
)
def test_a_criterion_id_of_the_wrong_type_says_what_it_is_instead_of_missing(value: object, said: str) -> None:
    task = {"title": "t", "instructions": "i", "deliverables": ["memo.md"],
            "criteria": [{"id": value, "title": "Price", "match_criteria": "PASS if ..."}]}
    problems = parse_task_json(json.dumps(task).encode()).problems
    assert problems == [f"criteria[0]: field 'id' must be a string, {said}"]


def test_a_criterion_with_an_absent_id_and_a_blank_title_gets_both_reasons() -> None:
    task = {"title": "t", "instructions": "i", "deliverables": ["memo.md"],
            "criteria": [{"title": " ", "match_criteria": "PASS if ..."}]}
    problems = parse_task_json(json.dumps(task).encode()).problems
    assert problems == ["criteria[0]: missing required field 'id'; field 'title' is empty"]


def test_a_source_symlinked_outside_the_benchmark_is_refused_and_never_read(tmp_path) -> None:
    task = tmp_path / "bench" / "tasks" / "area" / "task"
    (task / "documents").mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"title": "t", "instructions": "i", "deliverables": ["memo.md"],
                                               "criteria": [{"id": "C1", "title": "x", "match_criteria": "y"}]}))
    (task / "documents" / "lease.txt").write_text("The rent is $100.")
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the vendors")
    (task / "documents" / "passwd.txt").symlink_to(secret)
    load = load_benchmark(str(tmp_path / "bench"))
    assert load.tasks == []
    assert [(p.file, p.reason.split(";")[0]) for p in load.problems] == [
        (str(task / "documents" / "passwd.txt"), "symlink points outside the benchmark folder")
    ]
    (task / "documents" / "passwd.txt").unlink()
    (task / "documents" / "same.txt").symlink_to(task / "documents" / "lease.txt")  # inside: fine
    assert [d.name for d in load_benchmark(str(tmp_path / "bench")).tasks[0].documents] == ["lease.txt", "same.txt"]


def test_no_more_documents_are_converted_at_once_than_there_are_conversion_slots(tmp_path, bench, monkeypatch):
    """Reading threads are many (S3 reads wait); converting holds the GIL and a parse in memory,
    so at most `conversion_slots()` documents are converted at once. Three converters meeting at a
    barrier would pass it; with two slots the third never arrives and the barrier gives up."""
    from evalcore.benchmark import loader

    docs = {f"d{i}.txt": f"Clause {i}: the rent is due monthly.".encode() for i in range(12)}
    bench.write(tmp_path / "tasks", "re/lease", documents=docs)
    monkeypatch.setattr(loader, "conversion_slots", lambda: 2)
    meet = threading.Barrier(3, timeout=1.0)
    active, most = [0], [0]
    lock = threading.Lock()
    real_convert = loader.convert

    def counting_convert(*args, **kwargs):
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        try:
            meet.wait()
        except threading.BrokenBarrierError:
            pass
        try:
            return real_convert(*args, **kwargs)
        finally:
            with lock:
                active[0] -= 1

    monkeypatch.setattr(loader, "convert", counting_convert)
    load = load_benchmark(str(tmp_path), max_workers=16)
    assert load.ok and len(load.tasks[0].documents) == 12
    assert most[0] <= 2
