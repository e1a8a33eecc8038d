"""The repository is self-contained and its documentation holds together: a clone has every
document and heading its README and docs link to, nothing in it points at notes that live outside
it, and the README stays a page a newcomer reads on one screen (the manual is in docs/)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OUTSIDE = ("../" + "shared", "/work/" + "shared")  # spelled in two parts so this file does not match itself
README_MAX_LINES = 200
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _repository_files() -> list[Path]:
    """Tracked files and new ones not ignored: a page written but not yet committed counts too."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO, capture_output=True, check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return sorted({REPO / name for name in out.decode().split("\0") if name})


def _markdown_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "cluster").glob("*.md"))]


def _prose(text: str) -> str:
    """The text outside fenced code blocks (a `# comment` in a shell block is not a heading)."""
    return _FENCE.sub("", text)


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: link text kept, lower case, punctuation dropped, spaces as '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    """Every heading's anchor in a page; a repeated heading gets `-1`, `-2`, ... as on GitHub."""
    found: set[str] = set()
    count: dict[str, int] = {}
    for heading in _HEADING.findall(_prose(doc.read_text(encoding="utf-8"))):
        base = github_anchor(heading)
        n = count.get(base, 0)
        found.add(f"{base}-{n}" if n else base)
        count[base] = n + 1
    return found


def test_github_anchor_follows_githubs_rule() -> None:
    assert github_anchor("Batch mode (half price, durable, never paying twice)") == (
        "batch-mode-half-price-durable-never-paying-twice"
    )
    assert github_anchor("Output: one folder per run (local or `s3://`)") == "output-one-folder-per-run-local-or-s3"
    assert github_anchor("What `tribunal calibrate` reports (`evalcore/results/calibrate.py`)") == (
        "what-tribunal-calibrate-reports-evalcoreresultscalibratepy"
    )


def test_no_repository_file_refers_to_notes_outside_the_repository() -> None:
    offenders = []
    for path in _repository_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        offenders += [f"{path.relative_to(REPO)}: {needle}" for needle in OUTSIDE if needle in text]
    assert offenders == []


def test_every_relative_link_in_the_readme_and_docs_resolves_to_a_file_and_heading_inside_the_repository() -> None:
    broken = []
    for doc in _markdown_files():
        for target in _LINK.findall(_prose(doc.read_text(encoding="utf-8"))):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # a web address
            name, _, anchor = target.partition("#")
            path = (doc.parent / name).resolve() if name else doc
            if not path.exists() or (REPO not in path.parents and path != REPO):
                broken.append(f"{doc.relative_to(REPO)}: {target} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{doc.relative_to(REPO)}: {target} (no such heading)")
    assert broken == []


def test_a_link_to_a_missing_heading_is_caught(tmp_path: Path) -> None:
    """The anchor check can fail: a heading that is not there is not among a page's anchors."""
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Using the whole limit\n\n```bash\n# not a heading\n```\n## Twice\n## Twice\n")
    assert anchors(page) == {"title", "using-the-whole-limit", "twice", "twice-1"}


def test_the_readme_fits_on_a_screen_and_the_manual_is_in_docs() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move the detail into a page of docs/"


def test_the_readme_links_every_page_of_docs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (REPO / "docs").glob("*.md"))
    assert {"METHODOLOGY.md", "RELIABILITY.md", "ARCHITECTURE.md", "OUTPUT.md", "OPERATIONS.md", "PERFORMANCE.md",
            "COST.md", "DOCUMENTS.md", "CALIBRATION.md"} <= set(pages)
    assert [p for p in pages if f"](docs/{p}" not in readme] == []


def test_the_readme_maps_the_packages_a_newcomer_looks_for() -> None:
    """The gate, the rate budget, the batch journal, the run folder's layout, where a sweep starts
    its actors and where a call is counted as paid are found from folder names alone."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for package, module in [("evalcore/grading/", "scoring.py"), ("evalcore/vendors/", "budget.py"),
                            ("evalcore/vendors/batch/", "journal.py"), ("evalcore/storage/", "run_folder.py"),
                            ("jobs/sweep/", "startup.py")]:
        assert f"`{package}`" in readme and (REPO / package / module).is_file(), package
    assert "`evalcore/call_accounting.py`" in readme and (REPO / "evalcore" / "call_accounting.py").is_file()


def test_a_module_over_500_lines_says_why_it_is_one_module() -> None:
    """Rooms that do too much are split; a big module that stays whole says why at its top."""
    import ast

    root = Path(__file__).resolve().parents[1]
    offenders = []
    for path in sorted([*root.joinpath("evalcore").rglob("*.py"), *root.joinpath("jobs").rglob("*.py")]):
        text = path.read_text()
        if text.count("\n") <= 500:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if "Why one" not in doc and "Why a module" not in doc:
            offenders.append(str(path.relative_to(root)))
    assert not offenders, f"over 500 lines without a reason at the top: {offenders}"


RUN_FOLDER_NAMES = {
    "run.json", "_SUCCESS.json", "_attempts", "_lock", "_batches", "_purge", "adjudications", "leaderboard.json",
    "leaderboard.parquet", "leaderboard_areas.parquet", "report.html", "calibration.json", "calibration.parquet",
    "_cache", "_ocr", "leaderboard_raw.json", "leaderboard_raw.parquet", "leaderboard_raw_areas.parquet",
    "review_campaigns", "review_trail",
}


def spelled_run_folder_paths(path: Path) -> list[str]:
    """The string literals of a module (docstrings aside) that name a part of a run folder."""
    import ast

    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value) for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            segments = node.value.split("/")
            if any(s in RUN_FOLDER_NAMES or s.startswith("calibration-") for s in segments):
                found.append(f"{path.name}:{node.lineno}: {node.value!r}")
    return found


def test_only_the_run_folder_room_spells_a_run_folder_path() -> None:
    """`evalcore/storage/run_folder.py` owns the layout; every other module asks a `RunFolder`."""
    root = Path(__file__).resolve().parents[1]
    room = root / "evalcore" / "storage" / "run_folder.py"
    offenders = [
        hit for path in sorted([*root.joinpath("evalcore").rglob("*.py"), *root.joinpath("jobs").rglob("*.py")])
        if path != room and "emulators" not in path.parts for hit in spelled_run_folder_paths(path)
    ]
    assert offenders == []


def test_a_spelled_run_folder_path_is_found(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""Writes run.json (a docstring may name it)."""\nRECORD = "run.json"\nx = f"{a}/_batches/{b}"\n')
    assert spelled_run_folder_paths(module) == ["m.py:2: 'run.json'", "m.py:3: '/_batches/'"]
