"""Load the submissions to grade, from a results folder or a manifest, local or ``s3://``.

Why one module: both sources (folder and manifest) share the identity, duplicate and input-limit rules, which must not differ between them.

Two sources (``uri`` names one of them):

(a) **A results folder** ``<root>/<system>/<task id>/<deliverable files>``. The task id has several
    components (``real-estate/psa/scenario-01``): the deepest folder path that is a known task id
    wins, and the rest of the file's path is matched to the task's deliverables by filename
    (``memo.docx``), or by deliverable name + any supported extension (``memo.md`` for a task
    expecting ``memo.docx``).
(b) **A manifest** (``.jsonl``, or ``.parquet``) of rows
    ``{"system": ..., "task_id": ..., "deliverables": {name: value}}``. A value is:

    * ``null`` -> the deliverable is missing;
    * ``{"path": "..."}`` -> a file (must exist); ``{"text": "..."}`` -> inline text;
    * a string -> a **file** if it looks like a file path (one line, no surrounding spaces, ends
      with a supported extension such as ``.docx``) and that file exists (relative to the
      manifest's folder, or an ``s3://`` URI); otherwise **inline text**. A string that looks like a
      path but is absolute or contains ``..`` is refused rather than read.

Deliverable files are converted with ``evalcore.benchmark.documents`` (a memo.docx is fine); what
a document library warns about one while reading it (a damaged but readable file, a PIL or
openpyxl warning) is logged as one line ``<file>: <warning>``, and the deliverable is graded.

Rules (docs/METHODOLOGY.md): a deliverable the task expects but the submission lacks is *not* a
rejection: the submission gets ``Deliverable(name, missing=True)`` and fails what it cannot satisfy.
A submission with any problem (unknown task id, duplicate, a name or path escaping its root,
including symlinks pointing outside, an unreadable or unsupported file, an unknown deliverable
name, an empty or binary deliverable, a file over the input limits) is rejected as a whole, with
one Rejection per problem, and the load goes on: a sweep over thousands of submissions must not
stop on one bad file. Rejection happens here, before any judge call is paid.

A system folder whose name starts with ``.`` is rejected with a reason when it holds task folders
(hidden names are ignored elsewhere, so its submissions would otherwise vanish without a word);
other hidden entries (``.git``, ``.DS_Store``) are ignored.
"""

from __future__ import annotations

import difflib
import io
import json
import logging
import os
import posixpath
from collections.abc import Callable, Collection, Generator, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from evalcore.benchmark import limits as input_limits
from evalcore.benchmark.documents import (
    BINARY_SHARE,
    SUPPORTED_EXTENSIONS,
    binary_share,
    convert,
    is_supported,
)
from evalcore.config.models import InputLimits
from evalcore.errors import DocumentError, StorageError
from evalcore.schema import Deliverable, Rejection, Submission, Task
from evalcore.storage import fs

log = logging.getLogger(__name__)

MANIFEST_SUFFIXES = (".jsonl", ".parquet")
_MAX_PATH_LENGTH = 1024

Item = Submission | Rejection


class SubmissionLoad(BaseModel):
    """The submissions that loaded, and every rejection (each names the file and the reason)."""

    submissions: list[Submission] = Field(default_factory=list)
    rejected: list[Rejection] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing was rejected."""
        return not self.rejected


# --------------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------------


def _stem(path: str) -> str:
    return posixpath.splitext(posixpath.basename(path))[0]


def _unknown_task_reason(task_id: str, tasks: Collection[str]) -> str:
    close = difflib.get_close_matches(task_id, list(tasks), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown task id {task_id!r} (no such task in the benchmark){hint}"


def _excluded_reason(task_id: str) -> str:
    return f"task {task_id!r} was left out of the benchmark because of its own problems (see above)"


EMPTY_HINT = "a system that produced nothing should leave the deliverable out (it is then graded as missing)"


def empty_reason(name: str, text: str, converted: bool) -> str | None:
    """Why a deliverable's text cannot be graded, or None: judges would be paid to read nothing."""
    if text.strip():
        return None
    what = "has no text after conversion" if converted else "is empty"
    return f"deliverable {name!r} {what}; {EMPTY_HINT}"


def read_deliverable(
    name: str, filename: str, uri: str, endpoint: str | None, limits: InputLimits | None = None
) -> Deliverable | str:
    """Read and convert one deliverable file; a reason string when it cannot be used (unsupported,
    unreadable, corrupt, binary, empty, or over the input ``limits``)."""
    if not is_supported(filename):
        return f"unsupported file type for deliverable {name!r}; supported: {', '.join(SUPPORTED_EXTENSIONS)}"
    limits = limits or InputLimits()
    try:
        data = input_limits.read_limited(uri, endpoint, limits)
    except OSError as exc:
        return f"cannot read deliverable {name!r}: {exc}"
    except input_limits.LimitExceeded as exc:
        return f"deliverable {name!r}: {exc.reason}"
    try:
        document = convert(filename, data, limits)
    except DocumentError as exc:
        return f"deliverable {name!r}: {exc.reason}"
    for warning in document.warnings:  # graded all the same; one line naming the file (module doc)
        log.warning("%s: %s", uri, warning)
    return empty_reason(name, document.text, converted=document.kind not in ("txt", "md")) or Deliverable(
        name=name, filename=filename, text=document.text
    )


def deliverable_name(task: Task, filename: str) -> str | None:
    """Which of the task's deliverables a file is: by exact filename, else (a plain, supported
    file name) by stem, so `memo.docx` answers for an expected `memo.md`."""
    for name, expected in task.deliverables.items():
        if expected == filename:
            return name
    if "/" in filename or not is_supported(filename):
        return None
    stem = _stem(filename)
    by_file_stem = next((n for n, expected in task.deliverables.items() if _stem(expected) == stem), None)
    return by_file_stem or (stem if stem in task.deliverables else None)


def complete_deliverables(task: Task, found: dict[str, Deliverable]) -> dict[str, Deliverable]:
    """Every deliverable the task expects, in the task's order; the absent ones marked missing."""
    return {
        name: found.get(name) or Deliverable(name=name, filename=filename, missing=True)
        for name, filename in task.deliverables.items()
    }


class _Seen:
    """Duplicate detection: the first (system, task id) wins, later ones are rejected."""

    def __init__(self) -> None:
        self._origins: dict[tuple[str, str], str] = {}

    def check(self, system: str, task_id: str, origin: str) -> Rejection | None:
        first = self._origins.setdefault((system, task_id), origin)
        if first == origin:
            return None
        return Rejection(
            file=origin,
            reason=f"duplicate submission: system {system!r} already has task {task_id!r} at {first}",
            system=system,
            task_id=task_id,
        )


# --------------------------------------------------------------------------------------------
# (a) results folder
# --------------------------------------------------------------------------------------------


def _expects_folder(task: Task, folders: list[str]) -> bool:
    """True if one of the task's deliverable filenames lies under these subfolders."""
    prefix = "/".join(folders) + "/"
    return any(filename.startswith(prefix) for filename in task.deliverables.values())


def _match_task(
    parts: list[str], tasks: Mapping[str, Task], excluded: Collection[str]
) -> tuple[str, str] | None:
    """(task id, file path inside the task folder) for a path under ``<system>/``; None if unknown.

    The deepest known task id wins. A file in a subfolder of a known task that expects no
    deliverable there is taken as an unknown deeper id (``psa/scenario-09/memo.md`` when only
    ``psa`` is known is a scenario we do not have, not a stray file of ``psa``).
    """
    for k in range(len(parts) - 1, 0, -1):
        task_id, rest = "/".join(parts[:k]), parts[k:]
        if task_id in tasks:
            if len(rest) > 1 and not _expects_folder(tasks[task_id], rest[:-1]):
                return None
            return task_id, "/".join(rest)
        if task_id in excluded:
            return task_id, "/".join(rest)
    return None


def _folder_submission(
    root: str,
    system: str,
    task: Task,
    files: list[tuple[str, str]],
    endpoint: str | None,
    limits: InputLimits | None = None,
) -> list[Item]:
    """One submission from the files under ``<root>/<system>/<task id>/``."""
    origin = fs.join(root, system, task.id)
    problems: list[Rejection] = []

    def reject(file: str, reason: str) -> None:
        problems.append(Rejection(file=file, reason=reason, system=system, task_id=task.id))

    matched: dict[str, list[tuple[str, str]]] = {}
    for rest, uri in files:
        if not fs.is_within(uri, root):
            reject(uri, "symlink points outside the submissions folder; refusing to read it")
            continue
        name = deliverable_name(task, rest)
        if name is None:
            expected = ", ".join(f"{n} -> {f}" for n, f in task.deliverables.items())
            reject(uri, f"file {rest!r} is not a deliverable of task {task.id!r} (expected: {expected})")
            continue
        matched.setdefault(name, []).append((rest, uri))

    found: dict[str, Deliverable] = {}
    for name, candidates in matched.items():
        if len(candidates) > 1:
            reject(origin, f"several files for deliverable {name!r}: {', '.join(r for r, _ in candidates)}")
            continue
        rest, uri = candidates[0]
        result = read_deliverable(name, rest, uri, endpoint, limits)
        if isinstance(result, str):
            reject(uri, result)
        else:
            found[name] = result
    if problems:
        return list(problems)
    return [Submission(system=system, task_id=task.id, deliverables=complete_deliverables(task, found), origin=origin)]


def _iter_folder(
    root: str,
    tasks: Mapping[str, Task],
    excluded: Collection[str],
    endpoint: str | None,
    seen: _Seen,
    limits: InputLimits | None = None,
) -> Iterator[Item | Callable[[], list[Item]]]:
    """Rejections found from the listing alone, and work items (one per submission) to run."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    unknown: dict[tuple[str, str], list[str]] = {}
    hidden: set[str] = set()
    for uri in fs.list_files(root, endpoint_override=endpoint):
        rel = fs.relative(uri, root)
        parts = rel.split("/")
        if fs.is_hidden(rel, "input"):
            if parts[0].startswith(".") and len(parts) >= 3 and _match_task(parts[1:], tasks, excluded):
                hidden.add(parts[0])
            continue
        if len(parts) < 3:
            yield Rejection(
                file=uri,
                reason="file is not inside a <system>/<task id>/ folder; expected <system>/<task id>/<file>",
            )
            continue
        system = parts[0]
        match = _match_task(parts[1:], tasks, excluded)
        if match is None:
            unknown.setdefault((system, "/".join(parts[1:-1])), []).append(uri)
        else:
            groups.setdefault((system, match[0]), []).append((match[1], uri))

    for system in sorted(hidden):
        yield Rejection(
            file=fs.join(root, system),
            reason=f"system folder {system!r} starts with '.', so its submissions would be ignored like any "
            f"hidden file; rename it (e.g. {system.lstrip('.') or 'system'!r}) to have them graded",
            system=system,
        )
    keys = sorted(set(groups) | set(unknown))
    for system, task_id in keys:
        folder = fs.join(root, system, task_id)
        if (system, task_id) in unknown:
            yield Rejection(
                file=folder, reason=_unknown_task_reason(task_id, tasks), system=system, task_id=task_id
            )
            continue
        if task_id not in tasks:
            yield Rejection(file=folder, reason=_excluded_reason(task_id), system=system, task_id=task_id)
            continue
        duplicate = seen.check(system, task_id, folder)
        if duplicate is not None:
            yield duplicate
            continue
        task, files = tasks[task_id], groups[(system, task_id)]
        yield partial(_folder_submission, root, system, task, files, endpoint, limits)


# --------------------------------------------------------------------------------------------
# (b) manifest
# --------------------------------------------------------------------------------------------


def _looks_like_path(value: str) -> bool:
    """One line, no surrounding spaces, a supported extension: a file reference, not prose."""
    return (
        0 < len(value) <= _MAX_PATH_LENGTH
        and "\n" not in value
        and value == value.strip()
        and value.lower().endswith(SUPPORTED_EXTENSIONS)
    )


def _manifest_rows(uri: str, endpoint: str | None) -> Iterator[tuple[str, dict[str, Any] | str]]:
    """(origin, row) for each row of a manifest, streamed; row is a reason string when unparsable."""
    filesystem, path = fs.resolve(uri, endpoint)
    if uri.lower().endswith(".jsonl"):
        with filesystem.open_input_stream(path) as stream:
            text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="strict")
            number = 0
            while True:
                number += 1
                try:
                    line = text.readline()
                except UnicodeDecodeError as exc:
                    yield f"{uri}:{number}", f"not UTF-8 text: {exc}"
                    return
                if not line:
                    return
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    yield f"{uri}:{number}", f"invalid JSON at column {exc.colno}: {exc.msg}"
                    continue
                yield (
                    f"{uri}:{number}",
                    row if isinstance(row, dict) else "a manifest line must be a JSON object",
                )
        return
    parquet = pq.ParquetFile(filesystem.open_input_file(path))
    number = 0
    for batch in parquet.iter_batches(batch_size=256):
        for row in batch.to_pylist():
            number += 1
            yield f"{uri}:row {number}", row


def _deliverable_map(value: object) -> dict[str, object] | None:
    """The row's deliverables as a dict: a JSON object, a Parquet map (list of pairs), or JSON text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, list) and all(isinstance(p, tuple | list) and len(p) == 2 for p in value):
        return {str(k): v for k, v in value}
    return None


def _inline(name: str, text: str) -> Deliverable | str:
    """An inline text deliverable, or why it is refused (empty, or control characters of binary data)."""
    reason = empty_reason(name, text, converted=False)
    if reason is None and ("\x00" in text or binary_share(text) > BINARY_SHARE):
        reason = f"deliverable {name!r}: inline text looks binary (control characters), not text"
    return reason or Deliverable(name=name, text=text)


def _manifest_deliverable(
    name: str, value: object, folder: str, endpoint: str | None, limits: InputLimits | None = None
) -> Deliverable | str | None:
    """Resolve one manifest value: a Deliverable, None when missing, or a reason it is refused."""
    if value is None:
        return None
    explicit_path = False
    if isinstance(value, Mapping):
        if set(value) == {"text"} and isinstance(value["text"], str):
            return _inline(name, value["text"])
        if set(value) == {"path"} and isinstance(value["path"], str):
            value, explicit_path = value["path"], True
        else:
            return f"deliverable {name!r}: an object value must be {{'path': ...}} or {{'text': ...}}"
    if not isinstance(value, str):
        return f"deliverable {name!r}: the value must be text, a path, or null"
    if not explicit_path and not _looks_like_path(value):
        return _inline(name, value)
    if fs.is_s3(value):
        uri = value
    else:
        if not fs.is_safe_relative(value):
            return (
                f"deliverable {name!r}: path {value!r} escapes the manifest's folder (absolute or '..'); "
                "give a path relative to the manifest's folder, or an s3:// URI"
            )
        uri = fs.join(folder, value)
        if not fs.is_within(uri, folder):
            return f"deliverable {name!r}: {value!r} is a symlink pointing outside the manifest's folder"
    try:
        present = fs.is_file(uri, endpoint)
    except OSError as exc:
        return f"deliverable {name!r}: cannot check {value!r}: {exc}"
    if not present:
        if explicit_path:
            return f"deliverable {name!r}: file {value!r} not found"
        return _inline(name, value)
    return read_deliverable(name, posixpath.basename(value), uri, endpoint, limits)


def _manifest_submission(
    origin: str, row: dict[str, Any], task: Task, folder: str, endpoint: str | None, limits: InputLimits | None = None
) -> list[Item]:
    system, task_id = row["system"], task.id
    by_filename = {filename: name for name, filename in task.deliverables.items()}
    problems: list[Rejection] = []
    found: dict[str, Deliverable] = {}
    for key, value in (_deliverable_map(row["deliverables"]) or {}).items():
        if not fs.is_plain_name(key):
            reason = f"deliverable name {key!r} escapes its root (use the task's deliverable names)"
            problems.append(Rejection(file=origin, reason=reason, system=system, task_id=task_id))
            continue
        name = key if key in task.deliverables else by_filename.get(key)
        if name is None:
            reason = (
                f"unknown deliverable name {key!r} for task {task_id!r} "
                f"(expected: {', '.join(task.deliverables)})"
            )
            problems.append(Rejection(file=origin, reason=reason, system=system, task_id=task_id))
            continue
        result = _manifest_deliverable(name, value, folder, endpoint, limits)
        if isinstance(result, str):
            problems.append(Rejection(file=origin, reason=result, system=system, task_id=task_id))
        elif result is not None:
            found[name] = result
    if problems:
        return list(problems)
    return [Submission(system=system, task_id=task_id, deliverables=complete_deliverables(task, found), origin=origin)]


def _iter_manifest(
    uri: str,
    tasks: Mapping[str, Task],
    excluded: Collection[str],
    endpoint: str | None,
    seen: _Seen,
    limits: InputLimits | None = None,
) -> Iterator[Item | Callable[[], list[Item]]]:
    folder = fs.parent(uri)
    for origin, row in _manifest_rows(uri, endpoint):
        if isinstance(row, str):
            yield Rejection(file=origin, reason=row)
            continue
        system, task_id = row.get("system"), row.get("task_id")
        missing = [
            f for f, v in (("system", system), ("task_id", task_id)) if not (isinstance(v, str) and v.strip())
        ]
        if "deliverables" not in row or _deliverable_map(row["deliverables"]) is None:
            missing.append("deliverables")
        if missing:
            yield Rejection(
                file=origin,
                reason=f"missing or invalid field(s) {', '.join(map(repr, missing))}; a row needs "
                "system, task_id and deliverables {name: path-or-text}",
                system=system if isinstance(system, str) else None,
                task_id=task_id if isinstance(task_id, str) else None,
            )
            continue
        assert isinstance(system, str) and isinstance(task_id, str)
        task_id = task_id.strip("/")
        if task_id not in tasks:
            reason = (
                _excluded_reason(task_id) if task_id in excluded else _unknown_task_reason(task_id, tasks)
            )
            yield Rejection(file=origin, reason=reason, system=system, task_id=task_id)
            continue
        duplicate = seen.check(system, task_id, origin)
        if duplicate is not None:
            yield duplicate
            continue
        task = tasks[task_id]
        row = {**row, "task_id": task_id}
        yield partial(_manifest_submission, origin, row, task, folder, endpoint, limits)


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


def iter_submissions(
    uri: str,
    tasks: Mapping[str, Task],
    *,
    excluded: Collection[str] = (),
    endpoint_override: str | None = None,
    max_workers: int = 16,
    limits: InputLimits | None = None,
) -> Generator[Submission | Rejection, None, None]:
    """Stream submissions and rejections from a results folder or a manifest, in a stable order.

    ``tasks`` maps task id -> Task (``BenchmarkLoad.task_map()``). ``excluded`` holds ids of tasks
    that exist but were left out of the benchmark (``BenchmarkLoad.excluded_task_ids()``), so their
    submissions are rejected with that reason rather than as unknown. Files are read on a thread
    pool a bounded window at a time, so memory stays flat for thousands of submissions; each file
    is held to the input ``limits`` (defaults when None).
    """
    seen = _Seen()
    try:
        if fs.is_dir(uri, endpoint_override):
            source = _iter_folder(uri.rstrip("/"), tasks, excluded, endpoint_override, seen, limits)
        elif fs.is_file(uri, endpoint_override) and uri.lower().endswith(MANIFEST_SUFFIXES):
            source = _iter_manifest(uri, tasks, excluded, endpoint_override, seen, limits)
        elif fs.exists(uri, endpoint_override):
            yield Rejection(file=uri, reason="expected a results folder or a .jsonl/.parquet manifest")
            return
        else:
            yield Rejection(file=uri, reason=fs.missing_reason(
                uri, "submissions", endpoint_override, kinds="folder, file or S3 prefix"
            ))
            return
    except OSError as exc:
        yield Rejection(file=uri, reason=f"cannot read submissions: {exc}")
        return

    # Listing-time rejections pass through in place; work items run on the pool a window at a time,
    # and their results are yielded in order.
    window = max_workers * 4
    pending: list[Callable[[], list[Item]]] = []
    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="load-submissions") as pool:

        def flush() -> Iterator[Item]:
            for items in pool.map(lambda job: job(), pending):
                yield from items
            pending.clear()

        try:
            for item in source:
                if isinstance(item, Submission | Rejection):
                    yield from flush()
                    yield item
                else:
                    pending.append(item)
                    if len(pending) >= window:
                        yield from flush()
            yield from flush()
        except (OSError, ValueError) as exc:  # a manifest that breaks mid-stream (truncated Parquet, ...)
            yield Rejection(file=uri, reason=f"cannot read the rest of the submissions: {exc}")


def holds_no_submission(uri: str) -> bool:
    """True when `uri` is a local results folder with no file anywhere under it: a sweep then makes
    no run. A walk that stops at the first file, and no listing of the source: a sweep reads its
    source once (intake), and on S3 a listing of thousands of submissions is what that saves. So an
    empty S3 prefix or a manifest without rows is not told apart here: the sweep makes its run and
    its summary says there was nothing to grade. A missing folder is not empty (its rejection says why)."""
    try:
        path = fs.local_path(uri)
    except StorageError:  # an unsupported scheme: intake's rejection says so
        return False
    if path is None or not os.path.isdir(path):
        return False
    return not any(files for _root, _dirs, files in os.walk(path))


def load_submissions(
    uri: str,
    tasks: Mapping[str, Task],
    *,
    excluded: Collection[str] = (),
    endpoint_override: str | None = None,
    max_workers: int = 16,
    limits: InputLimits | None = None,
) -> SubmissionLoad:
    """Load every submission (see the module docstring for the two sources and the rules)."""
    load = SubmissionLoad()
    for item in iter_submissions(
        uri, tasks, excluded=excluded, endpoint_override=endpoint_override, max_workers=max_workers, limits=limits
    ):
        if isinstance(item, Submission):
            load.submissions.append(item)
        else:
            load.rejected.append(item)
    return load


__all__ = [
    "MANIFEST_SUFFIXES",
    "SubmissionLoad",
    "complete_deliverables",
    "deliverable_name",
    "iter_submissions",
    "load_submissions",
    "read_deliverable",
]
