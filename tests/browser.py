"""The headless Chromium every browser test drives (Debian's, through Playwright), and one browser
per test module for the tests that take the `browser` fixture (import it into the module)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists() and not os.environ.get("CI"),
    reason="Debian's chromium is not installed at /usr/bin/chromium (apt-get install -y chromium); "
    "in CI this test runs and fails instead of skipping",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module's tests (each test opens its own context: one per person)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
