"""One place that turns a URI (local path or ``s3://bucket/prefix``) into a pyarrow filesystem.

Why: the benchmark loader, the submission loader and the result store must read local folders and
S3 through the same code path, so a benchmark behaves identically wherever it lives. Two S3
pitfalls are handled here once:

* pyarrow's ``S3FileSystem`` ignores ``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_S3`` (it silently
  goes to real AWS), so the endpoint is read from the environment here and passed explicitly as
  ``endpoint_override`` + ``scheme``.
* ``create_dir`` on S3 writes zero-byte marker objects: nothing here ever calls it on S3.

URIs keep the form the caller gave (a relative local path stays relative in everything returned),
so error messages name files the way the user typed them.
"""

from __future__ import annotations

import errno
import os
import posixpath
import secrets
import threading
from typing import Any, Literal
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from evalcore.errors import EndpointUnreachable, StorageError

S3_PREFIX = "s3://"
_FILE_PREFIX = "file://"

_cache_lock = threading.Lock()
_fs_cache: dict[tuple[str, ...], pafs.FileSystem] = {}
_s3_clients: dict[str | None, object] = {}


def is_s3(uri: str) -> bool:
    """True for ``s3://`` URIs."""
    return uri.startswith(S3_PREFIX)


def local_path(uri: str) -> str | None:
    """The local path a URI names (``file://`` stripped), or None for S3."""
    if is_s3(uri):
        return None
    if uri.startswith(_FILE_PREFIX):
        return uri[len(_FILE_PREFIX) :]
    if "://" in uri:
        raise StorageError(f"{uri}: unsupported URI scheme (use a local path or s3://bucket/prefix)")
    return uri


def s3_endpoint(endpoint_override: str | None = None) -> str | None:
    """The S3 endpoint to use: the argument, else ``AWS_ENDPOINT_URL_S3``, else ``AWS_ENDPOINT_URL``."""
    return endpoint_override or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")


def _split_endpoint(endpoint: str) -> tuple[str, str]:
    """``http://host:port`` -> (``host:port``, ``http``); a bare ``host:port`` means https."""
    if "://" in endpoint:
        parts = urlsplit(endpoint)
        return parts.netloc, parts.scheme or "https"
    return endpoint, "https"


def _s3_filesystem(endpoint: str | None) -> pafs.FileSystem:
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or ""
    key: tuple[str, ...] = ("s3", endpoint or "", region)
    with _cache_lock:
        cached = _fs_cache.get(key)
        if cached is not None:
            return cached
        kwargs: dict[str, object] = {}
        if endpoint:
            host, scheme = _split_endpoint(endpoint)
            kwargs["endpoint_override"] = host
            kwargs["scheme"] = scheme
        if region:
            kwargs["region"] = region
        fs = pafs.S3FileSystem(**kwargs)
        _fs_cache[key] = fs
        return fs


_LOCAL = pafs.LocalFileSystem()


def clear_cache() -> None:
    """Forget cached S3 filesystems and clients (e.g. after credentials or the endpoint changed)."""
    with _cache_lock:
        _fs_cache.clear()
        _s3_clients.clear()


def resolve(uri: str, endpoint_override: str | None = None) -> tuple[pafs.FileSystem, str]:
    """The filesystem and the path inside it for a URI.

    Local paths are made absolute (pyarrow wants that); S3 paths are ``bucket/key``. S3
    filesystems are cached per endpoint and region, so resolving is cheap to call per file.
    """
    if is_s3(uri):
        path = uri[len(S3_PREFIX) :].strip("/")
        if not path:
            raise StorageError(f"{uri}: an S3 URI needs a bucket (s3://bucket/prefix)")
        return _s3_filesystem(s3_endpoint(endpoint_override)), path
    local = local_path(uri)
    assert local is not None
    return _LOCAL, os.path.abspath(os.path.expanduser(local))


def join(uri: str, *parts: str) -> str:
    """Join path parts onto a URI with ``/``, keeping the URI's form (scheme, relative or not)."""
    clean = [p.strip("/") for p in parts if p and p.strip("/")]
    if not clean:
        return uri
    if is_s3(uri):
        return posixpath.join(uri.rstrip("/"), *clean)
    return os.path.join(uri, *clean)


def parent(uri: str) -> str:
    """The folder containing a file URI."""
    if is_s3(uri):
        head = uri[len(S3_PREFIX) :].rstrip("/")
        return S3_PREFIX + posixpath.dirname(head)
    return os.path.dirname(uri.rstrip("/")) or "."


def basename(uri: str) -> str:
    """The last path component of a URI."""
    return posixpath.basename(uri.rstrip("/"))


HIDDEN_PREFIXES: dict[str, tuple[str, ...]] = {
    "run": (".", "_"),
    "input": (".", "~$"),
}
"""Names that are not content, by kind of folder. In a run folder (tables, journals): ``.`` (the
temporary files of `write_bytes_atomic`) and ``_`` (``_SUCCESS``, ``_metadata``: markers, not
data). In an input folder (a benchmark, a submissions tree): ``.`` (``.git``, ``.DS_Store``) and
``~$`` (an Office lock file next to an open ``brief.docx``); ``_`` is a legal name there."""


def is_hidden(path: str, folder: Literal["run", "input"]) -> bool:
    """True if any ``/``-separated part of ``path`` (a name, or a path relative to the folder being
    listed) starts with a hidden prefix of that kind of folder (`HIDDEN_PREFIXES`).

    The one rule every listing of a run, benchmark or submissions folder skips files by.
    """
    prefixes = HIDDEN_PREFIXES[folder]
    return any(part.startswith(prefixes) for part in path.split("/"))


def relative(uri: str, root: str) -> str:
    """The ``/``-separated path of ``uri`` under ``root`` (both in the same form)."""
    if is_s3(uri):
        return posixpath.relpath(uri[len(S3_PREFIX) :], root[len(S3_PREFIX) :].rstrip("/"))
    return os.path.relpath(uri, root).replace(os.sep, "/")


_UNREACHABLE_MARKERS = ("NETWORK_CONNECTION", "curlCode", "Could not connect", "Could not resolve", "timed out")


def unreachable_reason(uri: str, exc: OSError, endpoint_override: str | None = None) -> str | None:
    """The plain reason when ``exc`` means the S3 endpoint could not be reached, else None.

    pyarrow reports a refused connection, an unknown host or a timeout as a generic OSError with
    the AWS SDK's jargon (``AWS Error NETWORK_CONNECTION during HeadObject operation: curlCode:
    7``). The user needs to know which endpoint was tried and how to point at another.
    """
    if not is_s3(uri):
        return None
    text = str(exc)
    if not any(marker in text for marker in _UNREACHABLE_MARKERS):
        return None
    endpoint = s3_endpoint(endpoint_override)
    where = f"S3 endpoint {endpoint}" if endpoint else "AWS S3 (no endpoint set)"
    detail = text.rsplit("Details:", 1)[-1].strip() if "Details:" in text else text.split(":", 1)[-1].strip()
    return (
        f"{where} is unreachable ({detail}); check --endpoint-url or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL"
    )


def raise_if_unreachable(uri: str, exc: OSError, endpoint_override: str | None = None) -> None:
    """Raise EndpointUnreachable (``uri: endpoint is unreachable``) when ``exc`` is a network failure.

    An unreachable endpoint is not a problem of one file: callers that turn a read error into a
    rejection of that file call this first, so the whole command stops with one clear message
    instead of rejecting every file (or reporting the benchmark as not found).
    """
    reason = unreachable_reason(uri, exc, endpoint_override)
    if reason is not None:
        raise EndpointUnreachable(uri, reason) from exc


def missing_reason(
    uri: str, what: str, endpoint_override: str | None = None, *, kinds: str = "folder or S3 prefix"
) -> str:
    """``<what> not found (...)``, saying so when the whole S3 bucket is missing at the endpoint.

    An endpoint that answers but is not the S3 server the user meant (a wrong port, another
    service) says "not found" for everything; naming the bucket and the endpoint tells the user
    to check the endpoint rather than search for a missing folder.
    """
    if is_s3(uri):
        bucket = uri[len(S3_PREFIX) :].split("/", 1)[0]
        if bucket and not exists(S3_PREFIX + bucket, endpoint_override):
            endpoint = s3_endpoint(endpoint_override)
            where = f"S3 endpoint {endpoint}" if endpoint else "AWS S3 (no endpoint set)"
            return (
                f"{what} not found: there is no bucket {bucket!r} at {where} "
                "(check the bucket name and --endpoint-url / AWS_ENDPOINT_URL_S3)"
            )
    return f"{what} not found (no such {kinds})"


def _write_reason(exc: OSError, path: str, *, folder: bool = False) -> str:
    """Why a local write to `path` failed, in the user's words rather than the errno's (`folder`: in
    an output folder the user named, so the advice is to choose another; a file may be theirs too)."""
    if isinstance(exc, NotADirectoryError) or exc.errno == errno.ENOTDIR:
        parent = next((p for p in _parents(path) if os.path.lexists(p) and not os.path.isdir(p)), None)
        return (f"not a directory: {parent or 'a parent of this path'} is a regular file"
                + (", not a folder" if parent else "") + ("; choose another output folder" if folder else ""))
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied: the folder is not writable by this user; choose another output folder"
    if exc.errno == errno.EROFS:
        return "the file system is read-only; choose another output folder"
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if isinstance(exc, IsADirectoryError):
        return "a folder exists where this file should be written"
    return f"cannot write: {exc.strerror or exc}"


def _parents(path: str) -> list[str]:
    """`path`'s folders, the nearest first."""
    out = [os.path.dirname(path)]
    while os.path.dirname(out[-1]) != out[-1]:
        out.append(os.path.dirname(out[-1]))
    return out


def read_bytes(uri: str, endpoint_override: str | None = None) -> bytes:
    """The whole content of a file. Raises OSError/FileNotFoundError like pyarrow does, and
    StorageError when the S3 endpoint cannot be reached."""
    fs, path = resolve(uri, endpoint_override)
    try:
        with fs.open_input_file(path) as f:
            return bytes(f.read())
    except OSError as exc:
        raise_if_unreachable(uri, exc, endpoint_override)
        raise


def write_bytes_atomic(uri: str, data: bytes, endpoint_override: str | None = None) -> None:
    """Write a file so readers see either the old or the new content, never a partial one.

    Local: write a dot-prefixed temporary file in the same folder (dot files are ignored by pyarrow
    datasets and our loaders), then ``os.replace``. The temporary file is created with mode 0666
    and the process umask applies, exactly as for any file a program creates (``mkstemp`` would
    give 0600, and teammates or a web server could not read the run). S3: one PUT is atomic already.

    Raises StorageError naming the file and the reason (unwritable folder, a parent that is a
    regular file, an unreachable endpoint).
    """
    fs, path = resolve(uri, endpoint_override)
    if isinstance(fs, pafs.LocalFileSystem):
        try:
            _write_local(path, data)
        except OSError as exc:
            raise StorageError(f"{uri}: {_write_reason(exc, path)}") from exc
        return
    try:
        with fs.open_output_stream(path) as out:
            out.write(data)
    except OSError as exc:
        raise_if_unreachable(uri, exc, endpoint_override)
        raise StorageError(f"{uri}: cannot write: {exc}") from exc


def check_writable(uri: str, endpoint_override: str | None = None) -> None:
    """Fail now, naming the folder and the reason, if files cannot be written under ``uri``.

    A sweep calls this before any work (OCR, Ray, the preflight): an unwritable output folder, a
    path under a regular file or an unreachable S3 endpoint is then a one-line error in a second,
    not a failure after minutes. Local: a hidden probe file is written and removed (the folder is
    created as a run would create it). S3: the endpoint must answer.
    """
    if is_s3(uri):
        exists(uri, endpoint_override)  # raises EndpointUnreachable for a dead endpoint
        return
    _, path = resolve(uri, endpoint_override)
    if os.path.lexists(path) and not os.path.isdir(path):
        raise StorageError(f"{uri}: not a directory: a regular file is there; choose another output folder")
    probe = os.path.join(path, f".tribunal-write-check-{secrets.token_hex(6)}")
    try:
        _write_local(probe, b"")
        os.unlink(probe)
    except OSError as exc:
        raise StorageError(f"{uri}: {_write_reason(exc, probe, folder=True)}") from exc


FULL_DISK_ENV = "TRIBUNAL_TEST_FULL_DISK"
"""Test seam: a local path (absolute); every local write to it or under it fails with ``ENOSPC``.

Why: a full disk cannot be made unprivileged (no tmpfs, no loop device), and the failure must be
seen where a real one is, in the worker that writes a shard: Ray workers started by a local
cluster inherit the driver's environment, so a variable reaches them. The error is raised where
the bytes are written (after the temporary file is created), exactly where the kernel's would be,
so the clean-up and the message are the real ones. Unset in production: the check is one
``os.environ`` lookup per write."""


def _simulated_full_disk(path: str) -> None:
    """Raise ``OSError(ENOSPC)`` when `FULL_DISK_ENV` names this path or a folder above it."""
    root = os.environ.get(FULL_DISK_ENV)
    if root and (path == root or path.startswith(root.rstrip(os.sep) + os.sep)):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)


def _write_local(path: str, data: bytes) -> None:
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError as exc:  # a component of the folder is a regular file: say that, not "File exists"
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), exc.filename) from exc
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    try:
        with os.fdopen(fd, "wb") as f:
            _simulated_full_disk(path)
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _info(uri: str, endpoint_override: str | None) -> pafs.FileInfo:
    fs, path = resolve(uri, endpoint_override)
    try:
        return fs.get_file_info(path)
    except OSError as exc:
        raise_if_unreachable(uri, exc, endpoint_override)
        raise


def exists(uri: str, endpoint_override: str | None = None) -> bool:
    """True if a file or folder (an S3 prefix with objects under it) exists at the URI."""
    return bool(_info(uri, endpoint_override).type != pafs.FileType.NotFound)


def is_file(uri: str, endpoint_override: str | None = None) -> bool:
    """True if a regular file exists at the URI."""
    return bool(_info(uri, endpoint_override).type == pafs.FileType.File)


def is_dir(uri: str, endpoint_override: str | None = None) -> bool:
    """True if a folder exists at the URI (on S3: at least one object under the prefix)."""
    return bool(_info(uri, endpoint_override).type == pafs.FileType.Directory)


_LIST_ATTEMPTS = 3
"""Listings of a folder that appeared while it was being listed (see `list_files`)."""


def list_files(
    uri: str,
    suffix: str | tuple[str, ...] | None = None,
    recursive: bool = True,
    endpoint_override: str | None = None,
) -> list[str]:
    """Every file under a folder URI, as URIs in the caller's form, sorted.

    One recursive LIST on S3 (cheap even for thousands of objects). A missing folder yields [].
    ``suffix`` filters by ending, case-insensitively.
    """
    fs, path = resolve(uri, endpoint_override)
    selector = pafs.FileSelector(path, recursive=recursive, allow_not_found=True)
    for attempt in range(_LIST_ATTEMPTS):
        try:
            infos = fs.get_file_info(selector)
            break
        except FileNotFoundError:
            # Arrow lists a local folder first and, when that fails, asks whether it exists; a
            # folder created by another thread or process in between is reported as missing
            # *and* existing, i.e. as an error. Listing again sees it (or, if it went, nothing).
            if attempt == _LIST_ATTEMPTS - 1:
                raise
        except OSError as exc:
            raise_if_unreachable(uri, exc, endpoint_override)
            raise
    wanted: tuple[str, ...] | None = None
    if suffix is not None:
        wanted = tuple(s.lower() for s in ((suffix,) if isinstance(suffix, str) else suffix))
    out: list[str] = []
    for info in infos:
        if info.type != pafs.FileType.File:
            continue
        if wanted is not None and not info.path.lower().endswith(wanted):
            continue
        rel = posixpath.relpath(info.path, path) if is_s3(uri) else os.path.relpath(info.path, path)
        out.append(join(uri, rel.replace(os.sep, "/")))
    return sorted(out)


def is_safe_relative(path: str) -> bool:
    """True if ``path`` stays inside the folder it is relative to.

    Refused: empty, absolute (``/x``, ``\\x``, ``C:x``), any ``..`` or ``.`` or empty component,
    NUL bytes. Backslashes count as separators, so ``..\\x`` is refused too. This is a textual
    check; symlinks are checked separately where files are opened (see ``is_within``).
    """
    if not path or "\x00" in path:
        return False
    parts = path.replace("\\", "/").split("/")
    if ":" in parts[0]:
        return False
    return all(part not in ("", ".", "..") for part in parts)


def is_plain_name(name: str) -> bool:
    """True if ``name`` is one safe path component (no separators, not ``.``/``..``)."""
    return is_safe_relative(name) and "/" not in name and "\\" not in name


def is_within(uri: str, root: str) -> bool:
    """True if a local file, after resolving symlinks, is inside ``root`` (also resolved).

    S3 has no symlinks and no ``..`` in listed keys, so S3 URIs under an S3 root always are.
    """
    path, root_path = local_path(uri), local_path(root)
    if path is None or root_path is None:
        return is_s3(uri) and is_s3(root) and uri.startswith(root.rstrip("/") + "/")
    real, real_root = os.path.realpath(path), os.path.realpath(root_path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _s3_client(endpoint: str | None) -> object:
    """One boto3 S3 client per endpoint and process (clients are thread-safe; making one is not cheap,
    and a sweep's workers write every shard file through `write_new`)."""
    with _cache_lock:
        client = _s3_clients.get(endpoint)
        if client is None:
            import boto3

            client = _s3_clients[endpoint] = boto3.client("s3", endpoint_url=endpoint)
        return client


def write_new(uri: str, data: bytes, endpoint_override: str | None = None) -> bool:
    """Create a file that must not exist yet; False (nothing written) when it already does.

    Why: files that two processes, or a later command, may write under the same name (review
    decisions, attempt records, lock leases, every table file of a run) must never overwrite each
    other. Local: ``O_CREAT | O_EXCL`` on a temporary file, then a hard link to the final name,
    which fails if the name exists (readers never see a partial file; a failed write leaves no
    file under the final name). S3: a conditional PUT (``If-None-Match: *``), which the store
    refuses with 412 when the key exists.

    Raises StorageError naming the file and the reason (a full disk, an unwritable folder, an
    unreachable endpoint).
    """
    if is_s3(uri):
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, _, key = uri[len(S3_PREFIX) :].partition("/")
        client: Any = _s3_client(s3_endpoint(endpoint_override))
        try:
            client.put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in {"PreconditionFailed", "412", "ConditionalRequestConflict"}:
                return False
            raise StorageError(f"{uri}: cannot write: {exc}") from exc
        except BotoCoreError as exc:
            raise StorageError(f"{uri}: cannot write: {exc}") from exc
        return True
    _, path = resolve(uri, endpoint_override)
    folder = os.path.dirname(path)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    try:
        os.makedirs(folder, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
        with os.fdopen(fd, "wb") as f:
            _simulated_full_disk(path)
            f.write(data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    except OSError as exc:
        raise StorageError(f"{uri}: {_write_reason(exc, path)}") from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
