"""Bad-input cases for the command line: what a user sees when the output, the endpoint, a path,
a name or a key is wrong (issue 10, items 8, 9 and 15).

The loader cases (``build.py``) check what ``validate`` finds in a broken copy of the sample; these
check the command itself: its exit code, the exact ``file: reason`` it prints, that no traceback and
no rich-markup error escapes, that user text (paths, system names) is printed verbatim, and what is
left on disk. Each ``CliCase`` prepares a folder (``breaks``), builds the command line from it
(``args``) and states the outcome; ``test_cli_corpus.py`` runs every case with typer's runner.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "sample"
SUBMISSIONS = SAMPLE / "submissions"


def dead_endpoint() -> tuple[str, socket.socket]:
    """An http:// endpoint on 127.0.0.1 that refuses connections (bound, never listening)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return f"http://127.0.0.1:{sock.getsockname()[1]}", sock


@dataclass(frozen=True)
class CliCase:
    """One command run against one broken thing, with the exact outcome it must have."""

    id: str
    item: str
    what: str
    does: str
    args: Callable[[Path, str], list[str]]
    """The command line, from the case's folder and a dead S3 endpoint."""
    exit_code: int
    output: tuple[str, ...] = ()
    """Fragments the output must contain ({root} and {endpoint} are filled in), whitespace-insensitive."""
    absent: tuple[str, ...] = ("Traceback", "MarkupError")
    breaks: Callable[[Path], None] = lambda root: None
    env: dict[str, str | None] = field(default_factory=dict)
    """Environment changes for the command (None removes a variable)."""
    leaves_nothing: str | None = None
    """A glob (relative to the case's folder) the command must not create."""
    cleanup: Callable[[Path], None] = lambda root: None


def _sample_copy(root: Path, name: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    dest = root / name
    shutil.copytree(SAMPLE, dest)
    return dest


def _rename_system(new: str) -> Callable[[Path], None]:
    def breaks(root: Path) -> None:
        subs = root / "submissions"
        shutil.copytree(SUBMISSIONS, subs)
        (subs / "gpt-strong").rename(subs / new)

    return breaks


def _regular_file(root: Path) -> None:
    (root / "afile").write_text("not a folder")


def _unwritable(root: Path) -> None:
    """A folder this process cannot write: mode 0555, and immutable for root (who ignores modes)."""
    folder = root / "readonly"
    folder.mkdir()
    folder.chmod(0o555)
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(folder)], check=True, capture_output=True)


def _writable_again(root: Path) -> None:
    folder = root / "readonly"
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], check=False, capture_output=True)
    folder.chmod(0o755)


NO_KEYS: dict[str, str | None] = {"OPENAI_API_KEY": None, "ANTHROPIC_API_KEY": None, "XAI_API_KEY": None}
KEY_MESSAGE = (
    "openai (gpt-6-sol), auditor (gpt-6-sol): no API key: set the environment variable OPENAI_API_KEY; "
    "xai (grok-4.7): no API key: set the environment variable XAI_API_KEY; "
    "anthropic (claude-opus-5.5): no API key: set the environment variable ANTHROPIC_API_KEY"
)
SWEEP = ["sweep", str(SAMPLE), "-s", str(SUBMISSIONS), "--run-id", "r1", "--vendors", "offline", "--no-progress"]
LEASE = SAMPLE / "tasks" / "real-estate" / "lease-abstract"
ABSTRACT = SUBMISSIONS / "gpt-strong" / "real-estate" / "lease-abstract" / "abstract.md"

CLI_CASES: list[CliCase] = [
    CliCase("output-under-a-regular-file", "8", "`sweep -o` a path under a regular file",
            "exit 1 before anything starts: `<output>: a parent of this path is a regular file, not a folder`",
            lambda root, ep: [*SWEEP, "-o", str(root / "afile" / "runs")], 1,
            ("error: {root}/afile/runs: a parent of this path is a regular file, not a folder",),
            breaks=_regular_file),
    CliCase("output-folder-unwritable", "8", "`sweep -o` a folder this user cannot write",
            "exit 1 before anything starts: `<output>: permission denied: the folder is not writable by this user`",
            lambda root, ep: [*SWEEP, "-o", str(root / "readonly" / "runs")], 1,
            ("error: {root}/readonly/runs: permission denied: the folder is not writable by this user",),
            breaks=_unwritable, cleanup=_writable_again, leaves_nothing="readonly/runs"),
    CliCase("s3-endpoint-unreachable-validate", "8", "`validate s3://…` with an endpoint that refuses connections",
            "exit 1: `s3://…/tasks: S3 endpoint … is unreachable (…); check --endpoint-url`, not \"benchmark not found\"",
            lambda root, ep: ["validate", "s3://bench/legal-v1", "--endpoint-url", ep], 1,
            ("s3://bench/legal-v1/tasks: S3 endpoint {endpoint} is unreachable (", "check --endpoint-url"),
            absent=("Traceback", "not found", "curlCode")),
    CliCase("s3-endpoint-unreachable-sweep-output", "8", "`sweep -o s3://…` with an endpoint that refuses connections",
            "exit 1 before anything starts, naming the output and the endpoint",
            lambda root, ep: [*SWEEP, "-o", "s3://runs/x", "--endpoint-url", ep], 1,
            ("error: s3://runs/x: S3 endpoint {endpoint} is unreachable (",)),
    CliCase("s3-endpoint-unreachable-submissions", "8", "`validate` of local tasks with `-s s3://…` on a dead endpoint",
            "exit 1: the submissions URI and the endpoint named; the benchmark summary still printed",
            lambda root, ep: ["validate", str(SAMPLE), "-s", "s3://results/x", "--endpoint-url", ep], 1,
            ("(8 tasks)", "s3://results/x: S3 endpoint {endpoint} is unreachable ("),
            absent=("Traceback", "not found")),
    CliCase("s3-endpoint-unreachable-reduce", "8", "`reduce s3://…` of a run on a dead endpoint",
            "exit 1 naming run.json and the endpoint",
            lambda root, ep: ["reduce", "s3://runs/x/r1", "--endpoint-url", ep], 1,
            ("s3://runs/x/r1/run.json: S3 endpoint {endpoint} is unreachable (",)),
    CliCase("benchmark-path-with-markup", "8", "a benchmark copied under a folder named `x[/]y` (rich markup)",
            "validated normally, the path printed verbatim (was a rich MarkupError)",
            lambda root, ep: ["validate", str(root / "x[/]y" / "sample")], 0,
            ("Benchmark {root}/x[/]y/sample (8 tasks)", "No problems found"),
            breaks=lambda root: _sample_copy(root / "x[/]y", "sample") and None),
    CliCase("missing-path-with-markup", "8", "`sweep` of a benchmark path `[bold]x[/]` that does not exist",
            "exit 1, the path printed verbatim in `file: reason`",
            lambda root, ep: ["sweep", str(root / "[bold]x[/]"), "-s", str(SUBMISSIONS), "-o", str(root / "runs"),
                              "--vendors", "offline"], 1,
            ("error: {root}/[bold]x[/]: no loadable tasks", "benchmark not found"),
            leaves_nothing="runs/run-*"),
    CliCase("system-name-with-brackets", "9", "a system folder named `gpt-5[beta]`",
            "`validate` shows `gpt-5[beta]` whole (was `gpt-5`)",
            lambda root, ep: ["validate", str(SAMPLE), "-s", str(root / "submissions")], 0,
            ("gpt-5[beta]",), breaks=_rename_system("gpt-5[beta]")),
    CliCase("system-name-with-markup-tag", "9", "a system folder named `[bold red]grok`",
            "`validate` shows `[bold red]grok` verbatim, never as a style",
            lambda root, ep: ["validate", str(SAMPLE), "-s", str(root / "submissions")], 0,
            ("[bold red]grok",), breaks=_rename_system("[bold red]grok")),
    CliCase("sweep-without-api-keys", "15", "`sweep --vendors real` with no API key in the environment",
            "exit 1 before anything is loaded or started, every vendor and variable named, no run folder",
            lambda root, ep: ["sweep", str(SAMPLE), "-s", str(SUBMISSIONS), "-o", str(root / "runs"),
                              "--vendors", "real"], 1,
            (f"error: {KEY_MESSAGE}",), env=NO_KEYS, leaves_nothing="runs"),
    CliCase("grade-without-api-keys", "15", "`grade --vendors real` with no API key in the environment",
            "exit 1 naming every vendor and variable (was: 3 × N abstentions, exit 0)",
            lambda root, ep: ["grade", str(LEASE), "-d", str(ABSTRACT), "--vendors", "real"], 1,
            (f"error: {KEY_MESSAGE}",), env=NO_KEYS),
]
