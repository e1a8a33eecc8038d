"""Fixtures shared by evalcore's tests."""

from __future__ import annotations

import resource

import pytest


@pytest.fixture
def enough_files() -> None:
    """Raise the open-file limit for a test holding thousands of connections open in one process.

    Both ends of every connection live in the test's process (the real SDK client and our emulator),
    so 2,000 open requests need about 4,500 descriptors; skipped only where the hard limit forbids it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 8_192 if hard == resource.RLIM_INFINITY else min(8_192, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 4_500:
        pytest.skip("needs about 4,500 file descriptors")
