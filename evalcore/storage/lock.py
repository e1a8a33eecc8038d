"""One writer per run: the lock a sweep holds on its run folder while it writes into it.

Why: two sweeps started on one run id write the same run; before this lock the second overwrote
the first's files (its preflight calls, its attempt record) and the run recorded a fraction of
what was paid. Every file of a run is now created, never replaced (`evalcore.storage.store`), so
two writers can no longer destroy each other's rows; the lock makes the second one stop at once,
say who holds the run, and not pay for a second grading of the same submissions.

How (the same on a local folder and on S3, through `fs.write_new`: ``O_EXCL`` + link locally,
a conditional PUT ``If-None-Match: *`` on S3):

* the lock is a series of lease files `<run>/_lock/lock-<n>.json`; **the holder is the lease with
  the highest n**, unless that lease says it was released. A lease names its holder: pid (and the
  process's start time, so a reused pid is not mistaken for it), host (name, boot id and pid
  namespace), the command, when it was taken, and when it expires;
* taking the lock = creating lease n+1 create-only: of two commands racing for it exactly one
  creates the file, the other re-reads and refuses. Numbers are never reused (leases are never
  deleted), so a command with an old view of the folder can only collide, never win;
* the holder renews its lease (a new expiry, rewritten in its own file) every `RENEW_EVERY_S`
  while it runs; a renewal that finds a higher lease knows the run was taken over and warns;
* release (at the end, also on Ctrl-C or an error) rewrites the holder's own lease as released.

Taking over: a holder on this host whose process is gone (a ``kill -9``, a crash) is provably gone,
so the next command takes its lease over by itself and says so (run the same command again
resumes, as before). A holder elsewhere is gone when its lease expired (it stopped renewing):
taking that over needs `--take-over-lock`, since an expired lease may also be a paused or
partitioned holder. A live holder (this host, process running) or a valid lease is never taken
over: the command exits 1 naming the holder, host, command, since when, and when a take-over
becomes possible.

Which commands take it: `tribunal sweep` (and `demo`), for the whole sweep; its end-of-sweep
reduction runs after the release. `tribunal reduce`, `report`, `calibrate`, `review`/`adjudicate`
and `purge` do not: they add create-only records (calibrations, decisions, purge records) or
rewrite only derived files (leaderboard, report) from tables whose files are written whole.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import shlex
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from types import TracebackType

from pydantic import BaseModel, ConfigDict, ValidationError

from evalcore.errors import StorageError, TribunalError
from evalcore.storage import fs
from evalcore.storage.run_folder import folder_of

LEASE_TTL_S = 120.0
"""A lease not renewed for this long has expired (its holder stopped, hung or lost the storage)."""
RENEW_EVERY_S = 30.0
"""How often a holder renews its lease: four chances before it expires."""
TAKE_OVER_OPTION = "--take-over-lock"
log = logging.getLogger(__name__)
_LEASE_NAME = re.compile(r"lock-(\d{6,})\.json")


class RunLocked(TribunalError):
    """Another command holds the run (names it, where it runs, since when, and how to take over)."""


class _Lease(BaseModel):
    """One lease file: who holds (or held) the run."""

    model_config = ConfigDict(extra="ignore")

    number: int
    token: str
    run_uri: str
    pid: int
    pid_start: str | None = None
    """The process's start time (clock ticks since boot): a later process with the same pid differs."""
    host: str
    host_id: str | None = None
    """Boot id and pid namespace: where `pid` names the same process as on this machine."""
    command: str
    acquired_at: float
    expires_at: float
    released_at: float | None = None
    took_over: int | None = None
    """The number of the lease this one took over (a holder that was gone)."""


def lease_uri(run_uri: str, number: int) -> str:
    """The URI of lease `number` of a run."""
    return fs.join(folder_of(run_uri).lock, f"lock-{number:06d}.json")


def _lease_numbers(run_uri: str, endpoint_override: str | None = None) -> list[int]:
    names = (fs.basename(f) for f in fs.list_files(folder_of(run_uri).lock, suffix=".json",
                                                   endpoint_override=endpoint_override))
    return sorted(int(m.group(1)) for n in names if (m := _LEASE_NAME.fullmatch(n)))


def _read_lease(run_uri: str, number: int, endpoint_override: str | None = None) -> _Lease | None:
    """The lease, or None when it cannot be read as one (reported as such by the caller)."""
    try:
        return _Lease.model_validate_json(fs.read_bytes(lease_uri(run_uri, number), endpoint_override))
    except (OSError, ValidationError):
        return None


# --------------------------------------------------------------------------------------------
# This process and host
# --------------------------------------------------------------------------------------------


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return None


def host_id() -> str | None:
    """Boot id + pid namespace: equal exactly where a pid names the same process (Linux), else None."""
    boot = _read("/proc/sys/kernel/random/boot_id")
    try:
        pidns = os.readlink("/proc/self/ns/pid")
    except OSError:
        pidns = None
    return f"{boot}/{pidns}" if boot and pidns else None


def process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/<pid>/stat field 22), or None."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # the name (field 2) may hold spaces and parentheses
    return fields[19] if len(fields) > 19 else None


def _process_running(pid: int, start: str | None) -> bool:
    """True when `pid` is running and (where known) is the process that started at `start`."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, another user's
    return start is None or process_start(pid) in (None, start)


def this_command() -> str:
    """The command line that takes the lock, as a user would type it (shortened past 300 characters)."""
    args = sys.argv[1:]
    prog = "tribunal" if args[:1] and args[0] in ("sweep", "demo") else os.path.basename(sys.argv[0] or "python")
    line = " ".join([prog, *(shlex.quote(a) for a in args)])
    return line if len(line) <= 300 else line[:297] + "..."


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


# --------------------------------------------------------------------------------------------
# The holder's state, as a newcomer judges it
# --------------------------------------------------------------------------------------------


class _State(Enum):
    FREE = "free"
    """No lease, or the latest was released."""
    RUNNING = "running"
    """Its process runs on this host: never taken over."""
    VALID = "valid"
    """Held from another host (or an unknown process) and renewed in time: never taken over."""
    GONE = "gone"
    """Its process no longer runs on this host: taken over by the next command."""
    EXPIRED = "expired"
    """Held from another host and not renewed: taken over with --take-over-lock."""
    UNREADABLE = "unreadable"
    """Not a lease: taken over with --take-over-lock."""


def _judge(lease: _Lease | None, now: float) -> _State:
    if lease is None:
        return _State.UNREADABLE
    if lease.released_at is not None:
        return _State.FREE
    here = host_id()
    if lease.host_id is not None and lease.host_id == here:
        return _State.RUNNING if _process_running(lease.pid, lease.pid_start) else _State.GONE
    return _State.VALID if lease.expires_at > now else _State.EXPIRED


def _refusal(run_uri: str, number: int, lease: _Lease | None, state: _State, take_over: bool) -> str:
    uri = lease_uri(run_uri, number)
    if lease is None:
        return (f"{run_uri}: the run's lock file {uri} cannot be read as a lock; if no command is writing into "
                f"this run, run again with {TAKE_OVER_OPTION}")
    holder = (f"{run_uri} is locked by another command: `{lease.command}` (pid {lease.pid} on host {lease.host}) "
              f"since {_when(lease.acquired_at)} (lock file {uri}); two commands writing into one run would pay "
              "twice for its calls")
    if state is _State.RUNNING:
        refused = f"; {TAKE_OVER_OPTION} is refused while it runs" if take_over else ""
        return (f"{holder}. Pid {lease.pid} is still running on this host: wait for it to finish, or stop it "
                "(Ctrl-C lets it write the shards in flight; once it is gone, even killed, the next command takes "
                f"the run over by itself){refused}")
    if state is _State.VALID:
        return (f"{holder}. Its lease is renewed while it runs and expires at {_when(lease.expires_at)}: wait for "
                f"it to finish; if that command is gone, run again with {TAKE_OVER_OPTION} after that time")
    return (f"{holder}. Its lease expired at {_when(lease.expires_at)} (not renewed since): if that command is "
            f"no longer running, run again with {TAKE_OVER_OPTION}")


def live_holder(run_uri: str, endpoint_override: str | None = None) -> str | None:
    """Who writes into the run right now (`command` (pid on host) since when), or None when nobody
    holds it, or its holder is gone or its lease expired: the rule `RunLock.acquire` refuses by.

    Why: `tribunal reduce` and `report` read a run without taking its lock; while a sweep holds it,
    the tables hold only the part graded so far, and the reader must say so."""
    numbers = _lease_numbers(run_uri, endpoint_override)
    lease = _read_lease(run_uri, numbers[-1], endpoint_override) if numbers else None
    if lease is None or _judge(lease, time.time()) not in (_State.RUNNING, _State.VALID):
        return None
    return f"`{lease.command}` (pid {lease.pid} on host {lease.host}) since {_when(lease.acquired_at)}"


# --------------------------------------------------------------------------------------------
# The lock
# --------------------------------------------------------------------------------------------


@dataclass
class RunLock:
    """The lock a command holds on one run, from `acquire` to `release` (use it as a context manager)."""

    run_uri: str
    lease: _Lease
    ttl_s: float = LEASE_TTL_S
    lost_to: int | None = None
    """The number of a lease that took the run over while this one was held."""
    warn: Callable[[str], None] | None = None
    """Where the lock says it took a run over or lost it (the sweep prints it on the console; default: the log)."""

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def uri(self) -> str:
        """This lease's file."""
        return lease_uri(self.run_uri, self.lease.number)

    @classmethod
    def acquire(
        cls,
        run_uri: str,
        *,
        take_over: bool = False,
        command: str | None = None,
        warn: Callable[[str], None] | None = None,
        ttl_s: float = LEASE_TTL_S,
        renew_every_s: float | None = RENEW_EVERY_S,
    ) -> RunLock:
        """Take the run's lock, or raise RunLocked naming its holder (see the module docstring).

        `renew_every_s=None` does not start the renewing thread (a caller that renews itself)."""
        for _ in range(50):  # each turn either wins, refuses, or saw a racer win the number it wanted
            numbers = _lease_numbers(run_uri)
            now = time.time()
            took_over: tuple[_Lease | None, _State] | None = None
            if numbers:
                current = _read_lease(run_uri, numbers[-1])
                state = _judge(current, now)
                if state in (_State.RUNNING, _State.VALID):
                    raise RunLocked(_refusal(run_uri, numbers[-1], current, state, take_over))
                if state in (_State.EXPIRED, _State.UNREADABLE) and not take_over:
                    raise RunLocked(_refusal(run_uri, numbers[-1], current, state, take_over))
                if state is not _State.FREE:
                    took_over = (current, state)
            number = numbers[-1] + 1 if numbers else 1
            lease = _Lease(
                number=number, token=secrets.token_hex(8), run_uri=run_uri, pid=os.getpid(),
                pid_start=process_start(os.getpid()), host=socket.gethostname(), host_id=host_id(),
                command=command or this_command(), acquired_at=now, expires_at=now + ttl_s,
                took_over=numbers[-1] if took_over else None,
            )
            if not fs.write_new(lease_uri(run_uri, number), lease.model_dump_json(indent=1).encode()):
                continue  # another command took this number first: judge its lease
            lock = cls(run_uri, lease, ttl_s, warn=warn)
            if took_over is not None:
                lock._say_took_over(*took_over)
            if renew_every_s is not None:
                lock._start_renewing(renew_every_s)
            return lock
        raise RunLocked(f"{run_uri}: could not take the run's lock: other commands kept taking it first")

    def _say_took_over(self, previous: _Lease | None, state: _State) -> None:
        if previous is None:
            what = f"took over the unreadable lock file {lease_uri(self.run_uri, self.lease.number - 1)}"
        elif state is _State.GONE:
            what = (f"took over the run from `{previous.command}` (pid {previous.pid} on this host, since "
                    f"{_when(previous.acquired_at)}), which is no longer running")
        else:
            what = (f"took over the run from `{previous.command}` (pid {previous.pid} on host {previous.host}, since "
                    f"{_when(previous.acquired_at)}), whose lease expired at {_when(previous.expires_at)}")
        self._say(f"lock: {what}")

    def _say(self, message: str) -> None:
        if self.warn is not None:
            self.warn(message)
        else:
            log.warning("%s", message)

    def _start_renewing(self, every_s: float) -> None:
        def loop() -> None:
            while not self._stop.wait(every_s):
                if not self.renew():
                    return

        self._thread = threading.Thread(target=loop, name=f"run-lock-{self.lease.number}", daemon=True)
        self._thread.start()

    def renew(self) -> bool:
        """Push this lease's expiry `ttl_s` ahead; False (and a warning) once a later lease took the run over.

        A renewal that cannot be written (a full disk, S3 unreachable) is tried again at the next
        turn: the lease expires only if every renewal until then fails."""
        try:
            later = [n for n in _lease_numbers(self.run_uri) if n > self.lease.number]
            if later:
                self.lost_to = later[-1]
                self._say(f"lock lost: {lease_uri(self.run_uri, later[-1])} took this run over; the files this "
                          "command writes are kept beside that command's (none is overwritten)")
                return False
            self.lease = self.lease.model_copy(update={"expires_at": time.time() + self.ttl_s})
            fs.write_bytes_atomic(self.uri, self.lease.model_dump_json(indent=1).encode())
        except (StorageError, OSError):
            pass
        return True

    def release(self) -> None:
        """Mark this lease released (unless the run was taken over); never raises (it runs on the way out)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=60)
        if self.lease.released_at is not None or self.lost_to is not None:
            return
        self.lease = self.lease.model_copy(update={"released_at": time.time()})
        with contextlib.suppress(StorageError, OSError):  # unreleased, it is taken over as gone or expired
            if not [n for n in _lease_numbers(self.run_uri) if n > self.lease.number]:
                fs.write_bytes_atomic(self.uri, self.lease.model_dump_json(indent=1).encode())

    def __enter__(self) -> RunLock:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
