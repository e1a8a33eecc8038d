"""The sweep's one read of the submission source (`SubmissionPass`): the estimate and the shards both come from it.

Why one read, with the run's input limits: the estimate (the cost shown next to what is spent,
the cap's message) and the progress total must count exactly the submissions grading grades. Two
reads (one for the estimate, one for grading) could disagree (the estimate's read once omitted
the configured limits, so it counted submissions grading then rejected), and reading is the
driver's expensive part: every deliverable fetched, converted and held to the limits.

Why a spool: the estimate is needed before the first shard is sent (the live view shows spent of
~estimated from the start), so it is a full pass ahead of grading. Instead of reading the source
a second time, the pass writes each submission still to grade to an anonymous temporary file on
the driver as it goes (one zlib-compressed pickle each; a done one is counted, nothing more), and
the shard loop reads them back from it, one shard at a time: the driver's memory stays flat in N
(it keeps one integer per accepted submission: where its record is), and the disk holds the
pending submissions' text, compressed. The file lives in the temporary folder (`TMPDIR`), and is
gone when the sweep ends or dies.

Why task by task (`task_major`): a source lists its submissions system by system, so shards cut
in that order hold a different task for nearly every submission. Every grading worker then loads
one grounding index per submission (~12 ms each at real size), and at more tasks than the driver
keeps indexes for (`jobs.sweep.shard_work.SourceIndexes`) every index is built again for every system.
Cut task by task, a shard names one or two tasks, the shards of a task follow one another (its
index is built once and a worker reuses the one it holds), and one system's submissions are still
spread over the whole run. The order depends only on the accepted submissions, so a resumed run
reading the same source cuts the same shards, done ones included.

Rejections are recorded once, by this read, into the list the driver writes as the `rejected`
table.
"""

from __future__ import annotations

import io
import pickle
import struct
import tempfile
import zlib
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Generic, TypeVar

from evalcore.config.models import InputLimits
from evalcore.grading.repeats import RetestPlan
from evalcore.schema import Rejection, Submission, Task

_LENGTH = struct.Struct("<Q")
_DONE = -1
"""The place of a done submission in `SubmissionPass`'s `TaskMajor` of places (it has no spool record)."""
T = TypeVar("T")


@dataclass(frozen=True)
class SpooledShard:
    """One shard of the stream: its position, how many of its submissions were done already, the rest."""

    index: int
    done: int
    pending: list[Submission]


def cut_shards(items: Iterable[T], size: int) -> Iterator[tuple[int, list[T]]]:
    """Fixed shards by position (a resumed run, reading the same source, cuts the same shards)."""
    batch: list[T] = []
    index = 0
    for s in items:
        batch.append(s)
        if len(batch) == size:
            yield index, batch
            index, batch = index + 1, []
    if batch:
        yield index, batch


class TaskMajor(Generic[T]):
    """Items grouped by task as they arrive: tasks in the order they first appear, each task's in arrival order.

    The order shards are cut in (module docstring, "task by task"), kept in one place: `task_major`
    orders submissions by it, `SubmissionPass` the places of its spooled records."""

    def __init__(self) -> None:
        self._groups: dict[str, list[T]] = {}

    def add(self, task_id: str, item: T) -> None:
        self._groups.setdefault(task_id, []).append(item)

    def __iter__(self) -> Iterator[T]:
        for group in self._groups.values():
            yield from group


def task_major(submissions: Iterable[Submission]) -> list[Submission]:
    """The submissions in the order shards are cut in (`TaskMajor`)."""
    order: TaskMajor[Submission] = TaskMajor()
    for s in submissions:
        order.add(s.task_id, s)
    return list(order)


class SubmissionPass:
    """One read of the submission source feeding both the estimate (`pending`) and the shard loop (`shards`).

    `pending()` reads the source, records rejections into `rejected`, spools every submission not
    done yet and yields it (what the estimate prices); `shards()` then cuts the accepted
    submissions task by task into shards and reads each shard's pending ones back. Use as a
    context manager: the spool is closed (and gone) on exit.
    """

    def __init__(
        self,
        uri: str,
        tasks: Mapping[str, Task],
        *,
        excluded: Collection[str],
        limits: InputLimits,
        is_done: Callable[[Submission], bool],
        shard_size: int,
        rejected: list[Rejection],
        on_submission: Callable[[Submission, Task], None] | None = None,
        retest: RetestPlan | None = None,
    ) -> None:
        self.uri = uri
        self.retest = retest
        """`tribunal retest`: each accepted submission stands for its repeats in the plan (none
        unless sampled), which are what is counted, priced, spooled and graded."""
        self.changed: list[str] = []
        """Sampled submissions a retest did not repeat: their content changed since the original."""
        self.on_submission = on_submission
        """Told of each accepted submission as it is read (`SweepOptions.on_submission`)."""
        self.tasks = tasks
        self.excluded = excluded
        self.limits = limits
        self.is_done = is_done
        self.shard_size = shard_size
        self.rejected = rejected
        self.accepted = 0
        """Submissions that passed the input limits (done or pending)."""
        self.pending_count = 0
        """Of those, the ones still to grade (spooled)."""
        self._spool: IO[bytes] = tempfile.TemporaryFile(prefix="tribunal-submissions-")
        self._places: TaskMajor[int] = TaskMajor()
        """Each accepted submission's spool record (`_DONE`: none), in the order shards are cut in."""
        self._reader = self._read()
        self._read_complete = False

    def __enter__(self) -> SubmissionPass:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Drop the spool (an anonymous file: nothing is left on disk)."""
        self._reader.close()
        self._spool.close()

    def _accepted(self) -> Iterator[Submission]:
        """The source's submissions in the loader's stable order, held to the run's input limits."""
        from evalcore.submissions.loader import iter_submissions

        for item in iter_submissions(self.uri, self.tasks, excluded=self.excluded, limits=self.limits):
            if isinstance(item, Rejection):
                self.rejected.append(item)
            else:
                if self.on_submission is not None:
                    self.on_submission(item, self.tasks[item.task_id])
                if self.retest is None:
                    yield item
                else:
                    yield from self.retest.gradings(item, self.changed)

    def _read(self) -> Generator[Submission, None, None]:
        for s in self._accepted():
            place = _DONE if self.is_done(s) else self._write(s)
            self._places.add(s.task_id, place)
            self.accepted += 1
            if place != _DONE:
                self.pending_count += 1
                yield s
        self._read_complete = True

    def pending(self) -> Iterator[Submission]:
        """The read of the source (there is one per pass): every accepted submission not done yet, in source order."""
        return self._reader

    def shards(self) -> Iterator[SpooledShard]:
        """The shards, cut task by task (`task_major`); finishes the read first if `pending` was not drained."""
        for _ in self._reader:
            pass
        if not self._read_complete:
            raise RuntimeError("the submission source was not read to its end (the pass was closed)")
        for index, shard in cut_shards(self._places, self.shard_size):
            pending = [self._load(p) for p in shard if p != _DONE]
            yield SpooledShard(index, len(shard) - len(pending), pending)

    def _write(self, submission: Submission) -> int:
        """Append one submission's record to the spool; where it starts."""
        data = zlib.compress(pickle.dumps(submission, protocol=pickle.HIGHEST_PROTOCOL), 1)
        place = self._spool.seek(0, io.SEEK_END)
        self._spool.write(_LENGTH.pack(len(data)))
        self._spool.write(data)
        return place

    def _load(self, place: int) -> Submission:
        self._spool.seek(place)
        (size,) = _LENGTH.unpack(self._spool.read(_LENGTH.size))
        submission: Submission = pickle.loads(zlib.decompress(self._spool.read(size)))
        return submission
