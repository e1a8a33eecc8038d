"""`tribunal release diff OLD NEW`: two releases of one releases folder, compared by `evalcore.release.diff`."""

from __future__ import annotations

from evalcore.release.diff import ReleaseDiff, diff_releases
from jobs.release.store import read_board, read_decisions, read_release


def diff(releases: str, old: str, new: str, endpoint_override: str | None = None) -> ReleaseDiff:
    """What changed from release `old` to release `new` (both read from `releases`)."""
    return diff_releases(
        read_release(releases, old, endpoint_override), read_board(releases, old, endpoint_override),
        read_decisions(releases, old, endpoint_override),
        read_release(releases, new, endpoint_override), read_board(releases, new, endpoint_override),
        read_decisions(releases, new, endpoint_override),
    )
