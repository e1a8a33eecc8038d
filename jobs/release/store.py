"""Reading and writing a releases folder (local or s3://): create-only releases, the `latest` pointer.

The layout is `evalcore.storage.release_folder`; the rules (names, `advance_latest`) are
`evalcore.release.model`. A release is written file by file with `fs.write_new` and its
release.json last, so a reader sees a release whole or not at all, and nothing here can replace a
file an earlier command wrote: a second `release create` of the same name is refused, and so is a
folder an interrupted create left without its release.json (remove it, or use another name).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import TypeAdapter, ValidationError

from evalcore.errors import ReleaseError, StorageError
from evalcore.release.model import LatestPointer, Release, SystemFacts, advance_latest, check_name
from evalcore.results.adjudications import Adjudication
from evalcore.results.leaderboard import Leaderboard
from evalcore.storage import fs
from evalcore.storage.release_folder import (
    RELEASE_RECORD,
    ReleaseFolder,
    is_release_entry,
    latest_file,
    latest_folder,
    latest_seq,
    open_release,
)

_DECISIONS = TypeAdapter(list[Adjudication])
LATEST_ATTEMPTS = 20
"""How often moving `latest` re-reads the pointer after another publisher took the next position."""


def release_exists(releases: str, name: str, endpoint_override: str | None = None) -> bool:
    return fs.exists(open_release(releases, name).record, endpoint_override)


def write_release(releases: str, release: Release, files: Mapping[str, bytes],
                  endpoint_override: str | None = None) -> ReleaseFolder:
    """Create release `release.name`: every data file (`files`: URI -> bytes, the folder's
    `data_files`), then release.json. Refused, nothing replaced, when the release exists or a
    file of it is already there."""
    folder = open_release(releases, check_name(release.name))
    if fs.exists(folder.record, endpoint_override):
        raise ReleaseError(folder.uri, "this release exists already: a release is never overwritten (choose another name)")
    for uri in folder.data_files():
        if not fs.write_new(uri, files[uri], endpoint_override):
            raise ReleaseError(uri, "exists, but the release has no release.json: an earlier `release create` was "
                               "interrupted; remove that folder or choose another name")
    if not fs.write_new(folder.record, release.model_dump_json(indent=2).encode(), endpoint_override):
        raise ReleaseError(folder.uri, "another `release create` of this name finished first: a release is never overwritten")
    return folder


def read_release(releases: str, name: str, endpoint_override: str | None = None) -> Release:
    """release.json of release `name`, validated; a missing one names what the folder holds."""
    folder = open_release(releases, check_name(name))
    try:
        raw = fs.read_bytes(folder.record, endpoint_override)
    except FileNotFoundError as exc:
        have = ", ".join(r.name for r in list_releases(releases, endpoint_override)) or "none"
        raise ReleaseError(folder.uri, f"no such release (releases in {releases}: {have})") from exc
    try:
        return Release.model_validate_json(raw)
    except ValidationError as exc:
        raise ReleaseError(folder.record, f"damaged release record: {exc.errors()[0]['msg']}") from exc


def read_board(releases: str, name: str, endpoint_override: str | None = None) -> Leaderboard:
    return Leaderboard.model_validate_json(fs.read_bytes(open_release(releases, name).leaderboard_json, endpoint_override))


def read_decisions(releases: str, name: str, endpoint_override: str | None = None) -> list[Adjudication]:
    return _DECISIONS.validate_json(fs.read_bytes(open_release(releases, name).decisions, endpoint_override))


def read_systems(releases: str, name: str, endpoint_override: str | None = None) -> dict[str, SystemFacts]:
    raw = json.loads(fs.read_bytes(open_release(releases, name).systems, endpoint_override))
    return {k: SystemFacts.model_validate(v) for k, v in raw.items()}


def list_releases(releases: str, endpoint_override: str | None = None) -> list[Release]:
    """Every release under the folder (one LIST), oldest first; folders without release.json are not
    releases (an interrupted create)."""
    out = []
    for uri in fs.list_files(releases, suffix=".json", endpoint_override=endpoint_override):
        rel = fs.relative(uri, releases)
        parts = rel.split("/")
        if len(parts) == 2 and parts[1] == RELEASE_RECORD and is_release_entry(parts[0]):
            try:
                out.append(Release.model_validate_json(fs.read_bytes(uri, endpoint_override)))
            except ValidationError as exc:
                raise ReleaseError(uri, f"damaged release record: {exc.errors()[0]['msg']}") from exc
    return sorted(out, key=lambda r: (r.created_at, r.name))


def current_latest(releases: str, endpoint_override: str | None = None) -> LatestPointer | None:
    """The pointer's highest position, or None before the first release was made latest."""
    positions = [(seq, uri) for uri in fs.list_files(latest_folder(releases), suffix=".json",
                                                     endpoint_override=endpoint_override)
                 if (seq := latest_seq(fs.basename(uri))) is not None]
    if not positions:
        return None
    _, uri = max(positions)
    try:
        return LatestPointer.model_validate_json(fs.read_bytes(uri, endpoint_override))
    except ValidationError as exc:
        raise StorageError(f"{uri}: damaged latest pointer: {exc.errors()[0]['msg']}") from exc


def move_latest(releases: str, release: Release, endpoint_override: str | None = None) -> LatestPointer:
    """Point `latest` at `release`, only forward (`advance_latest`); each position is a new file, so a
    concurrent publisher's move is never overwritten: the loser reads the pointer again and re-checks."""
    for _ in range(LATEST_ATTEMPTS):
        nxt = advance_latest(current_latest(releases, endpoint_override), release)
        if fs.write_new(latest_file(releases, nxt.seq), nxt.model_dump_json(indent=2).encode(), endpoint_override):
            return nxt
    raise StorageError(f"{latest_folder(releases)}: the latest pointer kept moving under this command; run it again")
