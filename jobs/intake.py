"""The sweep's one read of the submission source (`SubmissionPass`): the estimate and the shards both come from it.

Why one read, with the run's input limits: the estimate (the cost shown next to what is spent,
the cap's message) and the progress total must count exactly the submissions grading grades. Two
reads (one for the estimate, one for grading) could disagree (the estimate's read once omitted
the configured limits, so it counted submissions grading then rejected), and reading is the
driver's expensive part: every deliverable fetched, converted and held to the limits.

Why a spool: the estimate is needed before the first shard is sent (the live view shows spent of
~estimated from the start), so it is a full pass ahead of grading. Instead of reading the source
a second time, the pass writes each shard (cut by position over the accepted submissions, as a
resumed run cuts them) to an anonymous temporary file on the driver as it goes, and the shard loop
reads the shards back from it. Only the submissions still to grade are spooled (a done one is
counted, nothing more), each shard as one zlib-compressed pickle: the driver holds one shard at a
time, so its memory stays flat in N, and the disk holds the pending submissions' text
(compressed). The file lives in the temporary folder (`TMPDIR`), and is gone when the sweep ends
or dies.

Rejections are recorded once, by this read, into the list the driver writes as the `rejected`
table.
"""

from __future__ import annotations

import pickle
import struct
import tempfile
import zlib
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO

from evalcore.config.models import InputLimits
from evalcore.schema import Rejection, Submission, Task

_LENGTH = struct.Struct("<Q")


@dataclass(frozen=True)
class SpooledShard:
    """One shard of the stream: its position, how many of its submissions were done already, the rest."""

    index: int
    done: int
    pending: list[Submission]


def cut_shards(items: Iterable[Submission], size: int) -> Iterator[tuple[int, list[Submission]]]:
    """Fixed shards by position (a resumed run, reading the same source, cuts the same shards)."""
    batch: list[Submission] = []
    index = 0
    for s in items:
        batch.append(s)
        if len(batch) == size:
            yield index, batch
            index, batch = index + 1, []
    if batch:
        yield index, batch


class SubmissionPass:
    """One read of the submission source feeding both the estimate (`pending`) and the shard loop (`shards`).

    `pending()` reads the source, records rejections into `rejected`, spools every shard and yields
    each accepted submission not done yet (what the estimate prices); `shards()` then yields the
    spooled shards in order. Use as a context manager: the spool is closed (and gone) on exit.
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
    ) -> None:
        self.uri = uri
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
                yield item

    def _read(self) -> Generator[Submission, None, None]:
        for index, shard in cut_shards(self._accepted(), self.shard_size):
            pending = [s for s in shard if not self.is_done(s)]
            self._write(SpooledShard(index, len(shard) - len(pending), pending))
            self.accepted += len(shard)
            self.pending_count += len(pending)
            yield from pending
        self._read_complete = True

    def pending(self) -> Iterator[Submission]:
        """The read of the source (there is one per pass): every accepted submission not done yet, in order."""
        return self._reader

    def shards(self) -> Iterator[SpooledShard]:
        """The spooled shards in stream order; finishes the read first if `pending` was not drained."""
        for _ in self._reader:
            pass
        if not self._read_complete:
            raise RuntimeError("the submission source was not read to its end (the pass was closed)")
        self._spool.seek(0)
        while header := self._spool.read(_LENGTH.size):
            (size,) = _LENGTH.unpack(header)
            shard: SpooledShard = pickle.loads(zlib.decompress(self._spool.read(size)))
            yield shard

    def _write(self, shard: SpooledShard) -> None:
        data = zlib.compress(pickle.dumps(shard, protocol=pickle.HIGHEST_PROTOCOL), 1)
        self._spool.write(_LENGTH.pack(len(data)))
        self._spool.write(data)
