"""The repository is self-contained: a clone has every document its README and docs link to, and
nothing in it points at notes that live outside it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OUTSIDE = ("../" + "shared", "/work/" + "shared")  # spelled in two parts so this file does not match itself
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [REPO / name for name in out.decode().split("\0") if name]


def _markdown_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "cluster").glob("*.md"))]


def test_no_tracked_file_refers_to_notes_outside_the_repository() -> None:
    offenders = []
    for path in _tracked_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        offenders += [f"{path.relative_to(REPO)}: {needle}" for needle in OUTSIDE if needle in text]
    assert offenders == []


def test_every_relative_link_in_the_readme_and_docs_resolves_inside_the_repository() -> None:
    broken = []
    for doc in _markdown_files():
        for target in _LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a web address or an anchor in the same page
            path = (doc.parent / target.split("#")[0]).resolve()
            if not path.exists() or REPO not in path.parents and path != REPO:
                broken.append(f"{doc.relative_to(REPO)}: {target}")
    assert broken == []


def test_the_readme_links_the_methodology_and_the_reliability_pages() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "](docs/METHODOLOGY.md)" in readme and "](docs/RELIABILITY.md)" in readme
