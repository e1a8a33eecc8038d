"""The text an expert needs next to an item: the deliverable around the claim, the cited source page.

Why re-read the inputs: the run's tables hold the claim (span) and the evidence passage, but an
expert judges a claim in its context and a passage on its page. The run record names the benchmark
and the submissions; they are read with the sweep's own loaders (`load_task`, `read_deliverable`,
`iter_submissions`) and the run's input limits, one task and one submission at a time, so a review
of a sweep-sized run never loads the whole benchmark. Anything that cannot be read (moved,
deleted, changed since the run) becomes a reason shown on the page, never an error page.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from evalcore.benchmark import pages
from evalcore.benchmark.loader import TASKS_FOLDER, load_task
from evalcore.errors import TribunalError
from evalcore.schema import Deliverable, SourceDocument, Submission, Task
from evalcore.storage import fs
from evalcore.storage.store import RunRecord
from evalcore.submissions.loader import (
    complete_deliverables,
    deliverable_name,
    iter_submissions,
    read_deliverable,
)


@dataclass(frozen=True)
class Marked:
    """A text cut around one passage: ``before`` + ``match`` (highlighted) + ``after``."""

    before: str
    match: str
    after: str
    found: bool
    cut_before: bool = False
    cut_after: bool = False


def find(text: str, needle: str | None) -> tuple[int, int] | None:
    """Where `needle` is in `text`: verbatim first, then ignoring case and runs of white space."""
    if not needle or not needle.strip():
        return None
    at = text.find(needle)
    if at >= 0:
        return at, at + len(needle)
    pattern = r"\s+".join(re.escape(word) for word in needle.split())
    m = re.search(pattern, text, re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def mark(text: str, needle: str | None, context: int | None = 1500) -> Marked:
    """`text` with `needle` marked, cut to `context` characters either side (None: the whole text)."""
    where = find(text, needle)
    if where is None:
        cut = text if context is None else text[: 2 * context]
        return Marked(before=cut, match="", after="", found=False, cut_after=len(cut) < len(text))
    start, end = where
    lo = 0 if context is None else max(0, start - context)
    hi = len(text) if context is None else min(len(text), end + context)
    return Marked(before=text[lo:start], match=text[start:end], after=text[end:hi], found=True,
                  cut_before=lo > 0, cut_after=hi < len(text))


def page_text(text: str, label: str | None) -> str | None:
    """The part of a converted document under the heading of page `label` ("Page 3", "Sheet: Rent roll")."""
    if not label:
        return None
    headings = list(pages.HEADING.finditer(text))
    for k, m in enumerate(headings):
        if m.group("label").strip().lower() == label.strip().lower():
            end = headings[k + 1].start() if k + 1 < len(headings) else len(text)
            return text[m.end():end].strip("\n")
    return None


def find_document(task: Task, name: str | None) -> SourceDocument | None:
    """The task's source document a flag cites: by its name under documents/, else by file name."""
    if not name:
        return None
    for d in task.documents:
        if d.name == name:
            return d
    base = fs.basename(name)
    return next((d for d in task.documents if fs.basename(d.name) == base), None)


class Sources:
    """The benchmark tasks and submitted deliverables of a run, read on demand and kept.

    `benchmark` / `submissions` override the URIs in run.json (a run reviewed on another machine,
    or inputs moved since the sweep).
    """

    def __init__(
        self, record: RunRecord, *, benchmark: str | None = None, submissions: str | None = None,
        endpoint_override: str | None = None, cache_size: int = 64,
    ) -> None:
        self.benchmark_uri = (benchmark or record.benchmark.uri).rstrip("/")
        self.submissions_uri = (submissions or record.submissions_uri).rstrip("/")
        self.limits = record.config.input_limits
        self.endpoint = endpoint_override
        self._tasks: dict[str, Task | str] = {}
        self._deliverables: dict[tuple[str, str], dict[str, Deliverable] | str] = {}
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._tasks_root: str | None = None

    def _root(self) -> str:
        if self._tasks_root is None:
            inside = fs.join(self.benchmark_uri, TASKS_FOLDER)
            self._tasks_root = inside if fs.is_dir(inside, self.endpoint) else self.benchmark_uri
        return self._tasks_root

    def task(self, task_id: str) -> Task | str:
        """The task (its criteria, deliverables and converted documents), or why it cannot be read."""
        with self._lock:
            if task_id in self._tasks:
                return self._tasks[task_id]
        try:
            result: Task | str = load_task(fs.join(self._root(), task_id), task_id, endpoint_override=self.endpoint,
                                           limits=self.limits)
        except (TribunalError, OSError) as exc:
            result = f"the task cannot be read from the benchmark ({exc})"
        with self._lock:
            if len(self._tasks) >= self._cache_size:
                self._tasks.pop(next(iter(self._tasks)))
            self._tasks[task_id] = result
        return result

    def deliverables(self, system: str, task_id: str) -> dict[str, Deliverable] | str:
        """The submission's deliverables as the sweep read them, or why they cannot be read now."""
        with self._lock:
            if (system, task_id) in self._deliverables:
                return self._deliverables[(system, task_id)]
        task = self.task(task_id)
        if isinstance(task, str):
            return task
        try:
            result = self._read(system, task)
        except (TribunalError, OSError) as exc:
            result = f"the submission cannot be read ({exc})"
        with self._lock:
            if len(self._deliverables) >= self._cache_size:
                self._deliverables.pop(next(iter(self._deliverables)))
            self._deliverables[(system, task_id)] = result
        return result

    def _read(self, system: str, task: Task) -> dict[str, Deliverable] | str:
        root = self.submissions_uri
        if fs.is_dir(root, self.endpoint):
            folder = fs.join(root, system, task.id)
            found: dict[str, Deliverable] = {}
            problems: list[str] = []
            for uri in fs.list_files(folder, endpoint_override=self.endpoint):
                rest = fs.relative(uri, folder)
                if fs.is_hidden(rest, "input"):
                    continue
                name = deliverable_name(task, rest)
                if name is None:
                    continue
                got = read_deliverable(name, rest, uri, self.endpoint, self.limits)
                if isinstance(got, str):
                    problems.append(f"{uri}: {got}")
                else:
                    found[name] = got
            if not found and problems:
                return "; ".join(problems)
            if not found:
                return f"{folder}: no deliverable files found (moved or deleted since the run?)"
            return complete_deliverables(task, found)
        for item in iter_submissions(root, {task.id: task}, endpoint_override=self.endpoint, limits=self.limits):
            if isinstance(item, Submission) and item.system == system:
                return item.deliverables
        return f"{root}: no submission of {system} for {task.id} (moved or deleted since the run?)"
