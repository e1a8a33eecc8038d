"""Which run a system is ranked from, and the `latest` pointer that only moves forward."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.errors import ReleaseError
from evalcore.release.model import Release, advance_latest, assign_systems, check_name
from evalcore.storage.store import ModelRef


def _release(name: str, created_at: float) -> Release:
    return Release(name=name, created_at=created_at, runs=[], systems={}, facts={}, benchmark_name=None,
                   benchmark_version=None, benchmark_hash="h", judges=[], auditor=ModelRef(name="a", model="m"),
                   protocol_version="1.1")


def test_a_system_graded_in_two_runs_is_an_error_unless_one_is_named() -> None:
    runs = {"old": {"a", "b"}, "new": {"b", "c"}}
    with pytest.raises(ReleaseError, match="system b is graded in runs new, old: name the one to rank with --system b=RUN"):
        assign_systems(runs, {})
    assert assign_systems(runs, {"b": "new"}) == {"a": "old", "b": "new", "c": "new"}


def test_naming_a_run_that_did_not_grade_the_system_or_leaving_a_run_idle_is_refused() -> None:
    with pytest.raises(ReleaseError, match="--system a=new: new did not grade a"):
        assign_systems({"old": {"a"}, "new": {"b"}}, {"a": "new"})
    with pytest.raises(ReleaseError, match="run old contributes no system"):
        assign_systems({"old": {"a"}, "new": {"a"}}, {"a": "new"})


@given(st.lists(st.floats(min_value=0, max_value=1e10, allow_nan=False), min_size=1, max_size=8))
def test_latest_never_moves_back(dates: list[float]) -> None:
    pointer = None
    for k, created in enumerate(dates):
        release = _release(f"r{k}", created)
        if pointer is not None and created <= pointer.created_at:
            with pytest.raises(ReleaseError, match="latest only moves forward"):
                advance_latest(pointer, release)
            continue
        moved = advance_latest(pointer, release)
        assert moved.release == release.name and moved.seq == (pointer.seq + 1 if pointer else 1)
        assert pointer is None or moved.created_at > pointer.created_at
        pointer = moved


def test_a_release_name_is_one_folder_name() -> None:
    assert check_name("2026-12") == "2026-12"
    for bad in ("", "../x", "a/b", "_latest", ".hidden"):
        with pytest.raises(ReleaseError, match="not a release name"):
            check_name(bad)
