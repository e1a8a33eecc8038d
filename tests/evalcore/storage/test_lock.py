"""One writer per run (`evalcore.storage.lock`): a second command is refused naming the holder; a holder
that is gone is taken over (by itself on this host, with --take-over-lock once a lease expired
elsewhere); release on the way out; no lease file is ever replaced by another command. Local
folders and S3 (moto on 127.0.0.1) alike."""

from __future__ import annotations

import json
import os
import socket
import time

import pytest

from evalcore.storage import fs
from evalcore.storage.lock import RunLock, RunLocked, host_id, lease_uri, process_start
from evalcore.storage.run_folder import LOCK


@pytest.fixture(params=["local", "s3"])
def run_uri(request, tmp_path, monkeypatch) -> str:
    if request.param == "local":
        return str(tmp_path / "run")
    monkeypatch.setenv("AWS_ENDPOINT_URL", request.getfixturevalue("s3_server"))
    return f"s3://{request.getfixturevalue('s3_bucket')}/runs/run"


def _quiet(message: str) -> None:
    """What the lock says is checked through the CLI (tests/jobs/sweep/test_run_safety.py), not here."""


def _take(run_uri: str, **kw) -> RunLock:
    return RunLock.acquire(run_uri, command="tribunal sweep bench -s subs", renew_every_s=None,
                           warn=_quiet, **kw)


def _lease(run_uri: str, number: int) -> dict:
    return json.loads(fs.read_bytes(lease_uri(run_uri, number)))


def _plant(run_uri: str, number: int, **fields) -> None:
    """A lease of another command, as it would have written it."""
    now = time.time()
    lease = {"number": number, "token": "t", "run_uri": run_uri, "pid": 4242, "pid_start": None,
             "host": "other-host", "host_id": "other-boot/pid:[1]", "command": "tribunal sweep other",
             "acquired_at": now - 600, "expires_at": now + 600, **fields}
    assert fs.write_new(lease_uri(run_uri, number), json.dumps(lease).encode())


def test_a_second_command_on_a_held_run_is_refused_naming_holder_host_command_and_since(run_uri) -> None:
    with _take(run_uri) as first:
        with pytest.raises(RunLocked) as info:
            _take(run_uri)
        message = str(info.value)
        assert f"pid {os.getpid()} on host {socket.gethostname()}" in message
        assert "`tribunal sweep bench -s subs`" in message and " since " in message and "UTC" in message
        assert first.uri in message and "is still running on this host" in message
        # a live holder is never taken over, with the option or without
        with pytest.raises(RunLocked, match="--take-over-lock is refused while it runs"):
            _take(run_uri, take_over=True)
    assert _lease(run_uri, 1)["released_at"] is not None
    assert fs.list_files(fs.join(run_uri, LOCK)) == [lease_uri(run_uri, 1)]  # the refused wrote nothing


def test_a_released_lock_is_taken_by_the_next_command_under_a_new_number_leaving_the_old_lease(run_uri) -> None:
    _take(run_uri).release()
    before = fs.read_bytes(lease_uri(run_uri, 1))
    second = _take(run_uri)
    assert second.lease.number == 2 and second.lease.took_over is None
    assert fs.read_bytes(lease_uri(run_uri, 1)) == before
    second.release()


def test_the_lock_is_released_on_ctrl_c(run_uri) -> None:
    with pytest.raises(KeyboardInterrupt), _take(run_uri):
        raise KeyboardInterrupt
    assert _take(run_uri).lease.number == 2


def test_a_holder_on_this_host_whose_process_is_gone_is_taken_over_by_the_next_command(run_uri) -> None:
    # this process's pid with another start time: the holder was a process that has ended (pid reused)
    _plant(run_uri, 1, pid=os.getpid(), pid_start="1", host=socket.gethostname(), host_id=host_id())
    assert process_start(os.getpid()) not in (None, "1")
    planted = fs.read_bytes(lease_uri(run_uri, 1))
    lock = _take(run_uri)
    assert (lock.lease.number, lock.lease.took_over) == (2, 1)
    assert fs.read_bytes(lease_uri(run_uri, 1)) == planted  # the gone holder's lease is kept as it was
    lock.release()


def test_an_expired_lease_elsewhere_needs_take_over_lock_and_a_valid_one_is_never_taken(run_uri) -> None:
    _plant(run_uri, 1, expires_at=time.time() - 5)
    with pytest.raises(RunLocked) as info:
        _take(run_uri)
    message = str(info.value)
    assert "pid 4242 on host other-host" in message and "`tribunal sweep other`" in message
    assert "expired at" in message and "run again with --take-over-lock" in message
    lock = _take(run_uri, take_over=True)
    assert (lock.lease.number, lock.lease.took_over) == (2, 1)
    lock.release()
    _plant(run_uri, 3, expires_at=time.time() + 600)
    with pytest.raises(RunLocked, match="expires at .*: wait for it to finish; if that command is gone, run again "
                                        "with --take-over-lock after that time"):
        _take(run_uri, take_over=True)


def test_renewing_pushes_the_expiry_and_a_holder_taken_over_stops_and_leaves_the_new_lease_alone(run_uri) -> None:
    lock = RunLock.acquire(run_uri, command="c", renew_every_s=None, ttl_s=0.0, warn=_quiet)
    assert _lease(run_uri, 1)["expires_at"] <= time.time()
    lock.ttl_s = 600.0
    assert lock.renew()
    assert _lease(run_uri, 1)["expires_at"] > time.time() + 300
    _plant(run_uri, 2)  # another command took the run over (e.g. this one was paused past its lease)
    taker = fs.read_bytes(lease_uri(run_uri, 2))
    assert not lock.renew() and lock.lost_to == 2
    lock.release()
    assert fs.read_bytes(lease_uri(run_uri, 2)) == taker
    assert _lease(run_uri, 1)["released_at"] is None  # not marked released: the run is the taker's


def test_two_commands_racing_for_a_free_run_one_wins_and_the_other_is_refused(run_uri) -> None:
    import threading

    barrier, outcomes = threading.Barrier(4), []

    def race() -> None:
        barrier.wait()
        try:
            outcomes.append(_take(run_uri))
        except RunLocked as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=race) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [o for o in outcomes if isinstance(o, RunLock)]
    assert len(winners) == 1 and len(outcomes) == 4
    assert fs.list_files(fs.join(run_uri, LOCK)) == [lease_uri(run_uri, 1)]
    winners[0].release()
