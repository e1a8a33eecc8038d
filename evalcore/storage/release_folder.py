"""The releases folder: its layout, spelled once, and one handle per release (`ReleaseFolder`).

A releases folder (local or s3://) holds one folder per release and the `latest` pointer:

    <releases>/<name>/release.json             what the release is made of (`evalcore.release.model.Release`),
                                               written last: a release exists once this file does
    <releases>/<name>/leaderboard.json         the leaderboard, by the reduction of a run (+ leaderboard.parquet,
                                               leaderboard_areas.parquet: the run folder's names and forms)
    <releases>/<name>/decisions.json           the expert decisions in force, frozen when it was made
    <releases>/<name>/systems.json             per system: cost and latency per task (from the calls)
    <releases>/_latest/latest-<seq>.json       the pointer's positions: the highest is `latest`

Every file is created, never replaced (`fs.write_new`: O_EXCL locally, a conditional PUT on S3), so a
release cannot be overwritten and two publishers moving `latest` at once cannot both take one position.
Why apart from `run_folder`: a release is not a run (it has no tables and no attempts); its files
that share a run's names reuse the run folder's constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from evalcore.storage import fs
from evalcore.storage.run_folder import LEADERBOARD_AREAS_PARQUET, LEADERBOARD_JSON, LEADERBOARD_PARQUET

RELEASE_RECORD: Final = "release.json"
DECISIONS: Final = "decisions.json"
SYSTEMS: Final = "systems.json"
LATEST: Final = "_latest"
LATEST_PREFIX: Final = "latest-"


@dataclass(frozen=True)
class ReleaseFolder:
    """One release's folder: the URI of each of its files (nothing is read or written here)."""

    uri: str

    @property
    def name(self) -> str:
        return fs.basename(self.uri)

    @property
    def record(self) -> str:
        return fs.join(self.uri, RELEASE_RECORD)

    @property
    def leaderboard_json(self) -> str:
        return fs.join(self.uri, LEADERBOARD_JSON)

    @property
    def leaderboard_parquet(self) -> str:
        return fs.join(self.uri, LEADERBOARD_PARQUET)

    @property
    def leaderboard_areas_parquet(self) -> str:
        return fs.join(self.uri, LEADERBOARD_AREAS_PARQUET)

    @property
    def decisions(self) -> str:
        return fs.join(self.uri, DECISIONS)

    @property
    def systems(self) -> str:
        return fs.join(self.uri, SYSTEMS)

    def data_files(self) -> tuple[str, ...]:
        """The files written before release.json, in the order they are written."""
        return (self.leaderboard_parquet, self.leaderboard_areas_parquet, self.decisions, self.systems,
                self.leaderboard_json)


def open_release(releases_uri: str, name: str) -> ReleaseFolder:
    """The handle of release `name` under a releases folder."""
    return ReleaseFolder(fs.join(releases_uri.rstrip("/"), name))


def latest_folder(releases_uri: str) -> str:
    """`<releases>/_latest/`: the positions of the `latest` pointer."""
    return fs.join(releases_uri.rstrip("/"), LATEST)


def latest_file(releases_uri: str, seq: int) -> str:
    """The pointer's `seq`-th position."""
    return fs.join(latest_folder(releases_uri), f"{LATEST_PREFIX}{seq:06d}.json")


def latest_seq(name: str) -> int | None:
    """The position a file name of `_latest/` records (`latest-000003.json` -> 3), or None."""
    stem = name.removeprefix(LATEST_PREFIX).removesuffix(".json")
    return int(stem) if name.startswith(LATEST_PREFIX) and name.endswith(".json") and stem.isdigit() else None


def is_release_entry(name: str) -> bool:
    """Whether a folder name under a releases folder can be a release (not `_latest`, not hidden)."""
    return not name.startswith(("_", "."))
