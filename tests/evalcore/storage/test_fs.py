"""evalcore.storage.fs: one resolver for local paths and s3:// URIs, atomic writes, path-escape checks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.errors import StorageError
from evalcore.storage import fs
from tests.conftest import s3_client

# --------------------------------------------------------------------------------------------
# resolve
# --------------------------------------------------------------------------------------------


def test_relative_local_path_resolves_to_absolute_path_on_local_filesystem(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    filesystem, path = fs.resolve("bench/tasks")
    assert isinstance(filesystem, pafs.LocalFileSystem)
    assert path == str(tmp_path / "bench" / "tasks")


def test_s3_uri_resolves_to_bucket_and_key_with_explicit_endpoint():
    filesystem, path = fs.resolve("s3://bucket/prefix/x/", endpoint_override="http://127.0.0.1:9")
    assert isinstance(filesystem, pafs.S3FileSystem)
    assert path == "bucket/prefix/x"


def test_s3_filesystems_are_cached_per_endpoint():
    a, _ = fs.resolve("s3://one/a", endpoint_override="http://127.0.0.1:9")
    b, _ = fs.resolve("s3://two/b", endpoint_override="http://127.0.0.1:9")
    c, _ = fs.resolve("s3://one/a", endpoint_override="http://127.0.0.1:10")
    assert a is b
    assert a is not c


def test_endpoint_argument_beats_aws_endpoint_url_s3_which_beats_aws_endpoint_url(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://generic:1")
    assert fs.s3_endpoint() == "http://generic:1"
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://s3-specific:2")
    assert fs.s3_endpoint() == "http://s3-specific:2"
    assert fs.s3_endpoint("http://argument:3") == "http://argument:3"


def test_unsupported_scheme_is_refused_naming_the_uri():
    with pytest.raises(StorageError, match="gs://b/x: unsupported URI scheme"):
        fs.resolve("gs://b/x")


def test_s3_uri_without_bucket_is_refused():
    with pytest.raises(StorageError, match="needs a bucket"):
        fs.resolve("s3://")


# --------------------------------------------------------------------------------------------
# local files
# --------------------------------------------------------------------------------------------


def test_atomic_local_write_creates_folders_overwrites_and_leaves_no_temp_files(tmp_path):
    target = str(tmp_path / "runs" / "r1" / "run.json")
    fs.write_bytes_atomic(target, b"first")
    fs.write_bytes_atomic(target, b"second")
    assert fs.read_bytes(target) == b"second"
    assert os.listdir(tmp_path / "runs" / "r1") == ["run.json"]


def test_list_files_keeps_the_callers_relative_form_and_filters_by_suffix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for rel in ("b/x.json", "b/sub/y.JSON", "b/z.txt"):
        Path(rel).parent.mkdir(parents=True, exist_ok=True)
        Path(rel).write_text("1")
    assert fs.list_files("b") == ["b/sub/y.JSON", "b/x.json", "b/z.txt"]
    assert fs.list_files("b", suffix=".json") == ["b/sub/y.JSON", "b/x.json"]
    assert fs.list_files("b", recursive=False) == ["b/x.json", "b/z.txt"]
    assert fs.list_files("missing") == []


class _FolderAppearsWhileListed:
    """Arrow's local listing as it behaves when another thread creates the folder mid-listing.

    Arrow lists first and only then asks whether the folder exists: a folder made in between
    is reported as a failed listing (`FileNotFoundError`) although it exists (CI saw this from
    two commands racing for a run's lock folder).
    """

    def __init__(self, folder: Path, failures: int) -> None:
        self.folder, self.failures, self.calls = folder, failures, 0

    def get_file_info(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        self.calls += 1
        if self.calls <= self.failures:
            self.folder.mkdir(exist_ok=True)
            (self.folder / "lock-000001.json").write_text("{}")
            raise FileNotFoundError(f"Cannot list directory '{self.folder}'")
        return pafs.LocalFileSystem().get_file_info(selector)


def test_list_files_lists_a_folder_created_while_it_was_being_listed(tmp_path, monkeypatch):
    racing = _FolderAppearsWhileListed(tmp_path / "_lock", failures=1)
    monkeypatch.setattr(fs, "resolve", lambda uri, endpoint=None: (racing, str(tmp_path / "_lock")))
    assert fs.list_files(str(tmp_path / "_lock")) == [str(tmp_path / "_lock" / "lock-000001.json")]
    assert racing.calls == 2


def test_list_files_still_raises_a_folder_that_keeps_failing_to_list(tmp_path, monkeypatch):
    racing = _FolderAppearsWhileListed(tmp_path / "_lock", failures=100)
    monkeypatch.setattr(fs, "resolve", lambda uri, endpoint=None: (racing, str(tmp_path / "_lock")))
    with pytest.raises(FileNotFoundError, match="Cannot list directory"):
        fs.list_files(str(tmp_path / "_lock"))
    assert racing.calls == fs._LIST_ATTEMPTS


def test_join_parent_basename_relative_round_trip():
    assert fs.join("s3://b/root/", "tasks", "a/b") == "s3://b/root/tasks/a/b"
    assert fs.parent("s3://b/root/tasks/task.json") == "s3://b/root/tasks"
    assert fs.basename("s3://b/root/tasks/") == "tasks"
    assert fs.relative("s3://b/root/tasks/a/task.json", "s3://b/root") == "tasks/a/task.json"
    assert fs.relative("bench/tasks/a/task.json", "bench") == "tasks/a/task.json"
    assert fs.join("bench", "tasks") == os.path.join("bench", "tasks")


# --------------------------------------------------------------------------------------------
# S3 (moto server on 127.0.0.1)
# --------------------------------------------------------------------------------------------


@pytest.mark.s3
def test_s3_write_read_list_exists_without_directory_marker_objects(s3_server, s3_bucket):
    base = f"s3://{s3_bucket}/runs/r1"
    fs.write_bytes_atomic(fs.join(base, "shards", "a.parquet"), b"A", endpoint_override=s3_server)
    fs.write_bytes_atomic(fs.join(base, "run.json"), b"{}", endpoint_override=s3_server)
    assert fs.read_bytes(fs.join(base, "run.json"), endpoint_override=s3_server) == b"{}"
    assert fs.exists(base, endpoint_override=s3_server)
    assert fs.is_dir(fs.join(base, "shards"), endpoint_override=s3_server)
    assert fs.is_file(fs.join(base, "run.json"), endpoint_override=s3_server)
    assert not fs.exists(fs.join(base, "nope.json"), endpoint_override=s3_server)
    assert fs.list_files(base, endpoint_override=s3_server) == [
        f"{base}/run.json",
        f"{base}/shards/a.parquet",
    ]
    keys = [o["Key"] for o in s3_client(s3_server).list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert sorted(keys) == ["runs/r1/run.json", "runs/r1/shards/a.parquet"]


@pytest.mark.s3
def test_s3_endpoint_is_taken_from_aws_endpoint_url_when_not_given(s3_server, s3_bucket, monkeypatch):
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server)
    uri = f"s3://{s3_bucket}/hello.txt"
    fs.write_bytes_atomic(uri, b"hi")
    assert fs.read_bytes(uri) == b"hi"


# --------------------------------------------------------------------------------------------
# path-escape checks
# --------------------------------------------------------------------------------------------

_component = st.text(alphabet=st.characters(blacklist_characters="/\\\x00:"), min_size=1, max_size=8).filter(
    lambda s: s not in (".", "..")
)


@given(st.lists(_component, min_size=1, max_size=5))
def test_relative_paths_of_plain_components_are_safe(parts):
    assert fs.is_safe_relative("/".join(parts))


@given(st.lists(_component, max_size=3), st.lists(_component, max_size=3), st.sampled_from(["/", "\\"]))
def test_any_dotdot_component_makes_a_path_unsafe(before, after, sep):
    assert not fs.is_safe_relative(sep.join([*before, "..", *after]))


@given(st.lists(_component, min_size=1, max_size=3))
def test_absolute_paths_are_unsafe(parts):
    assert not fs.is_safe_relative("/" + "/".join(parts))
    assert not fs.is_safe_relative("\\" + "\\".join(parts))
    assert not fs.is_safe_relative("C:" + "/".join(parts))


def test_plain_names_have_no_separators():
    assert fs.is_plain_name("memo")
    assert not fs.is_plain_name("../x")
    assert not fs.is_plain_name("a/b")
    assert not fs.is_plain_name("..")


def test_symlink_pointing_outside_the_root_is_not_within_it(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (root / "ok.txt").write_text("ok")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "inner.txt").symlink_to(root / "ok.txt")
    assert fs.is_within(str(root / "ok.txt"), str(root))
    assert fs.is_within(str(root / "inner.txt"), str(root))
    assert not fs.is_within(str(root / "link.txt"), str(root))
    assert fs.is_within("s3://b/root/x", "s3://b/root")
    assert not fs.is_within("s3://b/rootx/x", "s3://b/root")


# --------------------------------------------------------------------------------------------
# write failures and modes: `file: reason`, never a traceback; the umask's mode, never 0600
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_written_files_take_the_umask_mode_like_any_created_file(tmp_path, umask):
    old = os.umask(umask)
    try:
        target = tmp_path / "runs" / "r1" / "run.json"
        fs.write_bytes_atomic(str(target), b"{}")
        fs.write_bytes_atomic(str(target), b"{}")  # the replacement too, not only the first write
    finally:
        os.umask(old)
    assert (target.stat().st_mode & 0o777) == 0o666 & ~umask
    assert (target.parent.stat().st_mode & 0o777) == 0o777 & ~umask


def test_writing_under_a_regular_file_names_the_file_and_says_its_parent_is_a_file(tmp_path):
    (tmp_path / "afile").write_text("x")
    target = str(tmp_path / "afile" / "runs" / "run.json")
    with pytest.raises(StorageError) as info:
        fs.write_bytes_atomic(target, b"{}")
    assert str(info.value) == f"{target}: not a directory: {tmp_path / 'afile'} is a regular file, not a folder"


@pytest.fixture
def unwritable_dir(tmp_path):
    """A folder this process cannot create files in: mode 0555, and immutable when we are root
    (root ignores modes); skipped only where neither can be arranged."""
    import subprocess

    folder = tmp_path / "readonly"
    folder.mkdir()
    folder.chmod(0o555)
    immutable = False
    if os.geteuid() == 0:
        immutable = subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
        if not immutable:
            pytest.skip("running as root without chattr: no folder is unwritable")
    try:
        yield folder
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


def test_writing_into_an_unwritable_folder_names_the_file_and_says_permission_denied(unwritable_dir):
    target = str(unwritable_dir / "run-1" / "run.json")
    with pytest.raises(StorageError) as info:
        fs.write_bytes_atomic(target, b"{}")
    assert str(info.value) == (
        f"{target}: permission denied: the folder is not writable by this user; choose another output folder"
    )


@pytest.fixture
def dead_endpoint():
    """An http:// endpoint on 127.0.0.1 that refuses connections (a bound socket that never listens)."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


@pytest.mark.s3
def test_an_unreachable_s3_endpoint_is_named_as_unreachable_by_every_operation(dead_endpoint, s3_server):
    from concurrent.futures import ThreadPoolExecutor

    from evalcore.errors import EndpointUnreachable

    uri = "s3://bench/tasks"
    ops = (fs.exists, fs.is_dir, fs.read_bytes, lambda u, e: fs.list_files(u, endpoint_override=e),
           lambda u, e: fs.write_bytes_atomic(u + "/run.json", b"{}", e))

    def failure(op: Any) -> BaseException | None:
        try:
            op(uri, dead_endpoint)
        except BaseException as exc:  # checked below, one by one
            return exc
        return None

    with ThreadPoolExecutor(len(ops)) as pool:  # each waits out the SDK's retries (~2 s): at once, not in turn
        failures = list(pool.map(failure, ops))
    for exc in failures:
        assert isinstance(exc, EndpointUnreachable), exc
        assert exc.file.startswith(uri)
        assert exc.reason.startswith(f"S3 endpoint {dead_endpoint} is unreachable (")
        assert "--endpoint-url" in exc.reason and "curlCode" not in exc.reason


@pytest.mark.s3
def test_a_missing_bucket_is_said_to_be_missing_at_the_endpoint(s3_server):
    reason = fs.missing_reason("s3://no-such-bucket-here/bench", "benchmark", s3_server)
    assert reason == (
        f"benchmark not found: there is no bucket 'no-such-bucket-here' at S3 endpoint {s3_server} "
        "(check the bucket name and --endpoint-url / AWS_ENDPOINT_URL_S3)"
    )
