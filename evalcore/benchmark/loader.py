"""Load a benchmark in the public task layout, from a local folder or ``s3://``, collecting problems.

Why one module: discovery, task.json parsing and document loading share the problem-collecting rules (one `file: reason` per refusal), which must read the same for every kind of input.

Layout (unchanged from the public benchmark)::

    <root>/tasks/<area>/<task>[/<scenario>]/task.json
    <root>/tasks/<area>/<task>[/<scenario>]/documents/<any files, any depth>

The task id is the path of task.json's folder under ``tasks/``; the area is its first component.

Why problems are collected instead of raised: a benchmark has hundreds of tasks, and the operator
wants every problem in one pass (``tribunal validate``), not the first one. A task with any problem
is left out of ``tasks`` (grading it with a broken definition or incomplete sources would produce
wrong scores), and the reason says so. A task with no ``documents/`` at all is not a problem: it is
graded, and its audit treats the task instructions as the only source (`evalcore.audit_sources`).

Hidden files (any path component starting with ``.``) and Office lock files (``~$...``) are
ignored everywhere: editors and sync tools leave them behind.

A source document that is a symlink resolving outside the benchmark folder is refused, never read
(a ``passwd.txt -> /etc/passwd`` link would otherwise be sent to the vendors as a source), and
every document is held to the input limits (``evalcore.benchmark.limits``), and every task.json
to ``max_task_criteria``: each criterion is judged for every submission by every judge, so a task
with thousands of them is refused here, before a sweep builds anything for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from evalcore.benchmark import limits as input_limits
from evalcore.benchmark.documents import convert
from evalcore.benchmark.identity import BenchmarkIdentity, read_identity
from evalcore.config.models import InputLimits
from evalcore.errors import BenchmarkError, DocumentError
from evalcore.schema import Criterion, Rejection, SourceDocument, Task
from evalcore.storage import fs

TASKS_FOLDER = "tasks"
TASK_FILE = "task.json"
DOCUMENTS_FOLDER = "documents"
KNOWN_FIELDS = frozenset({"title", "instructions", "criteria", "deliverables", "work_type", "tags"})
REQUIRED_FIELDS = ("title", "instructions", "criteria", "deliverables")


class BenchmarkLoad(BaseModel):
    """The tasks that loaded cleanly, and every problem found, each naming its file."""

    root: str = Field(description="The benchmark root (the folder holding tasks/), as given.")
    identity: BenchmarkIdentity | None = Field(
        default=None, description="Name and version (benchmark.json, else the root's name); None when unreadable.")
    tasks: list[Task] = Field(default_factory=list, description="Sorted by id.")
    problems: list[Rejection] = Field(default_factory=list)
    warnings: list[Rejection] = Field(
        default_factory=list, description="Documents loaded despite a problem (a damaged but readable file)."
    )

    @property
    def ok(self) -> bool:
        """True when nothing was rejected."""
        return not self.problems

    def task_map(self) -> dict[str, Task]:
        """Tasks by id."""
        return {t.id: t for t in self.tasks}

    def excluded_task_ids(self) -> set[str]:
        """Ids of tasks that exist in the layout but were left out because of a problem."""
        loaded = {t.id for t in self.tasks}
        return {p.task_id for p in self.problems if p.task_id and p.task_id not in loaded}

    def content_hash(self) -> str:
        """Hash of every loaded task's content hash: changes when anything a judge sees changes."""
        h = hashlib.sha256()
        for task in sorted(self.tasks, key=lambda t: t.id):
            h.update(f"{task.id}\0{task.content_hash()}\n".encode())
        return h.hexdigest()


# --------------------------------------------------------------------------------------------
# task.json parsing (pure: bytes in, fields + problems out)
# --------------------------------------------------------------------------------------------


def _stem(filename: str) -> str:
    base = posixpath.basename(filename.replace("\\", "/"))
    stem, _ = posixpath.splitext(base)
    return stem or base


def normalize_deliverables(value: object) -> dict[str, str]:
    """The task's deliverables as ``{name: filename}``, from any accepted form.

    Accepted: a ``{name: filename}`` map; a list of filenames (name = the file's stem, so
    ``"memo.docx"`` is named ``memo``); a list of ``{name, filename}`` objects (``name`` defaults to
    the stem). Names must be plain (no separators, not ``..``); filenames relative paths that stay
    in the task folder. Raises ValueError with a reason a task author can act on.
    """
    pairs: list[tuple[str, str]] = []
    if isinstance(value, Mapping):
        for name, filename in value.items():
            if not isinstance(filename, str) or not filename:
                raise ValueError(f"deliverable {name!r}: the filename must be a non-empty string")
            pairs.append((str(name), filename))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str) and item:
                pairs.append((_stem(item), item))
            elif isinstance(item, Mapping) and isinstance(item.get("filename"), str) and item["filename"]:
                name = item.get("name", _stem(item["filename"]))
                if not isinstance(name, str):
                    raise ValueError(f"deliverables[{i}]: 'name' must be a string")
                pairs.append((name, item["filename"]))
            else:
                raise ValueError(
                    f"deliverables[{i}] must be a filename or an object with 'filename' (and optional 'name')"
                )
    else:
        raise ValueError("deliverables must be a {name: filename} map or a list of filenames")
    if not pairs:
        raise ValueError("deliverables is empty: a task needs at least one deliverable")
    out: dict[str, str] = {}
    by_filename: dict[str, str] = {}
    for name, filename in pairs:
        if not fs.is_plain_name(name):
            raise ValueError(f"deliverable name {name!r} is not a plain name (no '/', '\\' or '..')")
        if not fs.is_safe_relative(filename):
            raise ValueError(
                f"deliverable {name!r}: filename {filename!r} escapes the task folder "
                "(absolute path or '..'); use a plain relative file name"
            )
        if name in out:
            raise ValueError(f"deliverable name {name!r} is given twice")
        if filename in by_filename:
            raise ValueError(
                f"deliverables {by_filename[filename]!r} and {name!r} share the filename {filename!r}"
            )
        out[name] = filename
        by_filename[filename] = name
    return out


@dataclass
class ParsedTask:
    """task.json's content, normalised, with the problems found (empty when usable)."""

    fields: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def _text_field(data: Mapping[str, Any], name: str, problems: list[str]) -> str | None:
    value = data.get(name)
    if isinstance(value, str) and value.strip():
        return value
    problems.append(f"field {name!r} must be a non-empty string")
    return None


_JSON_TYPES = {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "an object"}


def _criterion_field_problems(raw: Mapping[str, Any]) -> list[str]:
    """What is wrong with a criterion's id, title and match_criteria: absent, not a string (saying
    what it is instead), or empty. An author told "missing" about a field they can see is lost."""
    fields = ("id", "title", "match_criteria")
    absent = [f for f in fields if raw.get(f) is None]
    out = [f"missing required field {', '.join(repr(f) for f in absent)}"] if absent else []
    for f in fields:
        value = raw.get(f)
        if value is None:
            continue
        if not isinstance(value, str):
            shown = json.dumps(value, default=str)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            out.append(f"field {f!r} must be a string, not {_JSON_TYPES.get(type(value), type(value).__name__)} ({shown})")
        elif not value.strip():
            out.append(f"field {f!r} is empty")
    return out


def _parse_criteria(
    value: object, deliverables: dict[str, str] | None, problems: list[str], limits: InputLimits
) -> list[Criterion]:
    if not isinstance(value, list) or not value:
        problems.append("field 'criteria' must be a non-empty list of {id, title, match_criteria}")
        return []
    try:
        input_limits.check_criteria(len(value), limits)
    except input_limits.LimitExceeded as exc:  # refused before one criterion is built or judged
        problems.append(exc.reason)
        return []
    by_filename = {f: n for n, f in (deliverables or {}).items()}
    seen: dict[str, int] = {}
    criteria: list[Criterion] = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            problems.append(f"criteria[{i}] must be an object with id, title, match_criteria")
            continue
        raw = dict(item)
        if isinstance(raw.get("id"), int) and not isinstance(raw.get("id"), bool):
            raw["id"] = str(raw["id"])
        label = f"criteria[{i}]" + (f" ({raw['id']!r})" if isinstance(raw.get("id"), str) else "")
        wrong = _criterion_field_problems(raw)
        if wrong:
            problems.append(f"{label}: {'; '.join(wrong)}")
            continue
        cid = raw["id"]
        if cid in seen:
            problems.append(f"duplicate criterion id {cid!r} (criteria[{seen[cid]}] and criteria[{i}])")
            continue
        seen[cid] = i
        names = raw.get("deliverables")
        if isinstance(names, str):
            names = [names]
        if names is not None:
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                problems.append(f"{label}: 'deliverables' must be a list of deliverable names")
                continue
            if deliverables is not None:
                resolved: list[str] = []
                for n in names:
                    if n in deliverables:
                        resolved.append(n)
                    elif n in by_filename:  # the expected filename is accepted as an alias of the name
                        resolved.append(by_filename[n])
                    else:
                        problems.append(
                            f"criterion {cid!r} names unknown deliverable {n!r} "
                            f"(the task's deliverables: {', '.join(sorted(deliverables))})"
                        )
                names = resolved
            raw["deliverables"] = names or None
        try:
            criteria.append(Criterion(**raw))
        except ValidationError as exc:
            problems.append(f"{label}: {_validation_reason(exc)}")
    return criteria


def _validation_reason(exc: ValidationError) -> str:
    return "; ".join(
        f"field {'.'.join(str(p) for p in err['loc']) or '(root)'!r}: {err['msg']}" for err in exc.errors()
    )


def parse_task_json(data: bytes, limits: InputLimits | None = None) -> ParsedTask:
    """Parse and normalise task.json bytes. Never raises: problems are returned as reasons.

    ``limits`` (defaults when None) bound the number of criteria (``max_task_criteria``).
    """
    parsed = ParsedTask()
    problems = parsed.problems
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        problems.append(f"not UTF-8 text: {exc}")
        return parsed
    except json.JSONDecodeError as exc:
        problems.append(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")
        return parsed
    if not isinstance(doc, dict):
        problems.append("task.json must hold a JSON object")
        return parsed
    for name in REQUIRED_FIELDS:
        if name not in doc:
            problems.append(f"missing required field {name!r}")
    title = _text_field(doc, "title", problems) if "title" in doc else None
    instructions = _text_field(doc, "instructions", problems) if "instructions" in doc else None
    deliverables: dict[str, str] | None = None
    if "deliverables" in doc:
        try:
            deliverables = normalize_deliverables(doc["deliverables"])
        except ValueError as exc:
            problems.append(str(exc))
    criteria = (
        _parse_criteria(doc["criteria"], deliverables, problems, limits or InputLimits()) if "criteria" in doc else []
    )
    work_type = doc.get("work_type")
    if work_type is not None and not isinstance(work_type, str):
        problems.append("field 'work_type' must be a string")
    tags = doc.get("tags") or []
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        problems.append("field 'tags' must be a list of strings")
    parsed.fields = {
        "title": title,
        "instructions": instructions,
        "criteria": criteria,
        "deliverables": deliverables,
        "work_type": work_type,
        "tags": tags,
        "extra": {k: v for k, v in doc.items() if k not in KNOWN_FIELDS},
    }
    return parsed


# --------------------------------------------------------------------------------------------
# Folder discovery and loading
# --------------------------------------------------------------------------------------------


def _find_tasks_root(uri: str, endpoint: str | None) -> tuple[str, str] | Rejection:
    """(benchmark root, tasks folder) for a URI naming either of them."""
    uri = uri.rstrip("/") or "/"
    tasks = fs.join(uri, TASKS_FOLDER)
    if fs.is_dir(tasks, endpoint):
        return uri, tasks
    if fs.basename(uri) == TASKS_FOLDER and fs.is_dir(uri, endpoint):
        return fs.parent(uri), uri
    if not fs.exists(uri, endpoint):
        return Rejection(file=uri, reason=fs.missing_reason(uri, "benchmark", endpoint))
    return Rejection(
        file=uri,
        reason=f"no {TASKS_FOLDER}/ folder here; expected {TASKS_FOLDER}/<area>/<task>[/<scenario>]/{TASK_FILE}",
    )


@dataclass
class _TaskFolder:
    id: str
    uri: str
    documents: list[tuple[str, str]] = field(default_factory=list)  # (name under documents/, uri)


def _discover(files: Iterable[str], tasks_root: str) -> dict[str, _TaskFolder]:
    """Group the files under tasks/ into task folders (task.json) and their documents."""
    rels = [(fs.relative(f, tasks_root), f) for f in files]
    rels = [(r, f) for r, f in rels if not fs.is_hidden(r, "input")]
    folders: dict[str, _TaskFolder] = {}
    for rel, uri in rels:
        if posixpath.basename(rel) == TASK_FILE:
            task_id = posixpath.dirname(rel)
            folders[task_id] = _TaskFolder(id=task_id, uri=fs.parent(uri))
    for rel, uri in rels:
        parts = rel.split("/")
        for i in range(len(parts) - 2, -1, -1):  # deepest owning task wins
            if parts[i] == DOCUMENTS_FOLDER and "/".join(parts[:i]) in folders:
                folders["/".join(parts[:i])].documents.append(("/".join(parts[i + 1 :]), uri))
                break
    return folders


def _read(uri: str, endpoint: str | None, limits: InputLimits | None = None) -> bytes | str:
    """The file's bytes, or a reason it cannot be read (a file over the size limit is not read)."""
    try:
        return input_limits.read_limited(uri, endpoint, limits or InputLimits())
    except OSError as exc:
        return f"cannot read file: {exc}"
    except input_limits.LimitExceeded as exc:
        return exc.reason


SYMLINK_REASON = (
    "symlink points outside the benchmark folder; refusing to read it (copy the file into documents/ instead)"
)


def _load_document(
    name: str, uri: str, endpoint: str | None, root: str, limits: InputLimits, converting: threading.Semaphore
) -> SourceDocument | str:
    """Read one document (any number of threads at once: on S3 a read is mostly waiting), then
    convert it holding one of `converting`'s slots."""
    if not fs.is_within(uri, root):
        return SYMLINK_REASON
    data = _read(uri, endpoint, limits)
    if isinstance(data, str):
        return data
    try:
        with converting:
            document = convert(name, data, limits)
        input_limits.check_source_text(document.text, limits)
    except DocumentError as exc:
        return exc.reason
    except input_limits.LimitExceeded as exc:
        return exc.reason
    return document


def load_benchmark(
    uri: str, *, endpoint_override: str | None = None, max_workers: int = 16, limits: InputLimits | None = None
) -> BenchmarkLoad:
    """Load every task under a benchmark (its root or its tasks/ folder), local or ``s3://``.

    Never raises for bad content: each problem becomes a Rejection naming the file, and the task it
    concerns is left out. Files are read concurrently (``max_workers`` threads), which matters on S3.
    ``limits`` bound what one document may cost to read (defaults when None).
    """
    found = _find_tasks_root(uri, endpoint_override)
    if isinstance(found, Rejection):
        return BenchmarkLoad(root=uri, problems=[found])
    root, tasks_root = found
    folders = _discover(fs.list_files(tasks_root, endpoint_override=endpoint_override), tasks_root)
    if not folders:
        reason = f"no {TASK_FILE} found; expected <area>/<task>[/<scenario>]/{TASK_FILE}"
        return BenchmarkLoad(root=root, problems=[Rejection(file=tasks_root, reason=reason)])

    tasks, problems = _load_folders(
        list(folders.values()), endpoint_override, max_workers, root, limits or InputLimits()
    )
    identity: BenchmarkIdentity | None = None
    try:
        identity = read_identity(root, endpoint_override)
    except BenchmarkError as exc:
        problems.append(Rejection(file=exc.file, reason=exc.reason))
    return BenchmarkLoad(root=root, identity=identity, tasks=tasks, problems=problems,
                         warnings=document_warnings(tasks, tasks_root))


def document_warnings(tasks: Iterable[Task], tasks_root: str) -> list[Rejection]:
    """Every warning of a loaded document, as ``file: reason`` (the file under ``tasks_root``)."""
    return [
        Rejection(file=fs.join(tasks_root, t.id, DOCUMENTS_FOLDER, d.name), reason=w, task_id=t.id)
        for t in tasks
        for d in t.documents
        for w in d.warnings
    ]


def conversion_slots() -> int:
    """Documents converted at once: one per core this process may use.

    Why a bound apart from the reading threads: converting is CPU work that mostly holds the GIL,
    so more converters than cores are not faster, and each holds its document's parse (an XML
    tree, a PDF's pages) while it runs. Measured on 64 real-size tasks (2 cores, no conversion
    cache): 16 at once peaked at 518-546 MB RSS, one per core at 240-258 MB, in about the same
    time (`benchmarks/start_up.py`).
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _load_folders(
    folders: list[_TaskFolder], endpoint_override: str | None, max_workers: int, root: str, limits: InputLimits
) -> tuple[list[Task], list[Rejection]]:
    """Parse, check and convert task folders; (tasks sorted by id, problems sorted by file)."""
    problems: list[Rejection] = []
    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="load-benchmark") as pool:
        ordered = sorted(folders, key=lambda f: f.id)
        raw = list(pool.map(lambda f: _read(fs.join(f.uri, TASK_FILE), endpoint_override, limits), ordered))
        parsed: dict[str, ParsedTask] = {}
        for folder, data in zip(ordered, raw, strict=True):
            task_file = fs.join(folder.uri, TASK_FILE)
            if isinstance(data, str):
                reasons = [data]
            else:
                parsed[folder.id] = parse_task_json(data, limits)
                reasons = list(parsed[folder.id].problems)
            if "/" not in folder.id:
                reasons.append(
                    f"task.json must sit at {TASKS_FOLDER}/<area>/<task>[/<scenario>]/; "
                    f"this one is at {TASKS_FOLDER}/{folder.id + '/' if folder.id else ''}"
                )
            problems.extend(Rejection(file=task_file, reason=r, task_id=folder.id) for r in reasons)

        bad = {p.task_id for p in problems}
        usable = [f for f in ordered if f.id not in bad]
        jobs = [(f, name, doc_uri) for f in usable for name, doc_uri in sorted(f.documents)]
        converting = threading.Semaphore(conversion_slots())
        converted = list(pool.map(
            lambda j: _load_document(j[1], j[2], endpoint_override, root, limits, converting), jobs))

    documents: dict[str, list[SourceDocument]] = {f.id: [] for f in usable}
    for (folder, _, doc_uri), result in zip(jobs, converted, strict=True):
        if isinstance(result, str):
            problems.append(
                Rejection(
                    file=doc_uri,
                    reason=f"{result}; task {folder.id!r} is left out (its sources would be incomplete)",
                    task_id=folder.id,
                )
            )
        else:
            documents[folder.id].append(result)

    bad = {p.task_id for p in problems}
    tasks: list[Task] = []
    for folder in usable:
        if folder.id in bad:
            continue
        fields = parsed[folder.id].fields
        try:
            tasks.append(
                Task(id=folder.id, area=folder.id.split("/")[0], documents=documents[folder.id], **fields)
            )
        except ValidationError as exc:
            problems.append(
                Rejection(
                    file=fs.join(folder.uri, TASK_FILE), reason=_validation_reason(exc), task_id=folder.id
                )
            )
    problems.sort(key=lambda p: (p.file, p.reason))
    return tasks, problems


def load_task(
    task_dir: str,
    task_id: str | None = None,
    *,
    endpoint_override: str | None = None,
    max_workers: int = 16,
    limits: InputLimits | None = None,
) -> Task:
    """Load ONE task folder (holding task.json and documents/), e.g. to grade a single submission.

    ``task_id`` defaults to the folder's path after its ``tasks/`` component (the id it has in its
    benchmark), else its last two components (``<area>/<task>``). Raises BenchmarkError listing
    every problem, since a caller asking for one task cannot do anything with a partial answer.
    """
    task_dir = task_dir.rstrip("/") or "/"
    if task_id is None:
        parts = [p for p in fs.resolve(task_dir, endpoint_override)[1].replace("\\", "/").split("/") if p]
        cuts = [i for i, part in enumerate(parts[:-1]) if part == TASKS_FOLDER]
        task_id = "/".join(parts[cuts[-1] + 1 :] if cuts else parts[-2:])
    if not fs.is_file(fs.join(task_dir, TASK_FILE), endpoint_override):
        raise BenchmarkError(
            fs.join(task_dir, TASK_FILE), "not found; a task folder holds task.json and documents/"
        )
    folder = _TaskFolder(id=task_id, uri=task_dir)
    prefix = DOCUMENTS_FOLDER + "/"
    for uri in fs.list_files(fs.join(task_dir, DOCUMENTS_FOLDER), endpoint_override=endpoint_override):
        rel = prefix + fs.relative(uri, fs.join(task_dir, DOCUMENTS_FOLDER))
        if not fs.is_hidden(rel, "input"):
            folder.documents.append((rel[len(prefix) :], uri))
    tasks, problems = _load_folders([folder], endpoint_override, max_workers, task_dir, limits or InputLimits())
    if problems:
        raise BenchmarkError(
            problems[0].file, "; ".join(str(p) for p in problems) if len(problems) > 1 else problems[0].reason
        )
    return tasks[0]
