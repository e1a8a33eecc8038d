"""Create-only writes (`fs.write_new`) and storage failures: a file is never replaced, a full disk
names the file and leaves nothing half-written under its name (local folder and S3 alike)."""

from __future__ import annotations

import errno
import os

import pytest

from evalcore.errors import StorageError
from evalcore.storage import fs


@pytest.fixture(params=["local", "s3"])
def base(request, tmp_path, monkeypatch) -> str:
    if request.param == "local":
        return str(tmp_path / "run")
    server = request.getfixturevalue("s3_server")
    monkeypatch.setenv("AWS_ENDPOINT_URL", server)
    return f"s3://{request.getfixturevalue('s3_bucket')}/runs/run"


def test_write_new_creates_once_and_never_replaces_an_existing_file(base) -> None:
    uri = fs.join(base, "calls", "preflight-0001.parquet")
    assert fs.write_new(uri, b"first")
    assert not fs.write_new(uri, b"second")
    assert fs.read_bytes(uri) == b"first"
    assert fs.list_files(base) == [uri]  # no temporary file left beside it


def test_a_full_disk_names_the_file_and_the_cause_and_leaves_no_file_under_the_name(tmp_path, monkeypatch) -> None:
    run = tmp_path / "run"
    monkeypatch.setenv(fs.FULL_DISK_ENV, str(run / "verdicts"))
    for write in (fs.write_new, fs.write_bytes_atomic):
        uri = str(run / "verdicts" / "part-000000-x-a0001.parquet")
        with pytest.raises(StorageError) as info:
            write(uri, b"rows")
        assert str(info.value) == f"{uri}: no space left on the device"
        assert isinstance(info.value.__cause__, OSError) and info.value.__cause__.errno == errno.ENOSPC
        assert os.listdir(run / "verdicts") == []  # neither the file nor its temporary file
    # only that folder is full: the rest of the run is written as usual
    assert fs.write_new(str(run / "calls" / "part-000000-x-a0001.parquet"), b"rows")
