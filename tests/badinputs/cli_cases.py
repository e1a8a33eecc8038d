"""Bad-input cases for the command line: what a user sees when the output, the endpoint, a path,
a name or a key is wrong (issue 10, items 8, 9 and 15), and when a run, a cache entry, a label
file, a spending cap or a document trips one of the commands issue 24 made agree and explain.

The loader cases (``build.py``) check what ``validate`` finds in a broken copy of the sample; these
check the command itself: its exit code, the exact ``file: reason`` it prints, that no traceback and
no rich-markup error escapes, that user text (paths, system names) is printed verbatim, and what is
left on disk or left unchanged. Each ``CliCase`` prepares a folder (``breaks``), builds the command
line from it (``args``) and states the outcome; ``test_cli_corpus.py`` runs every case with typer's
runner. What a command logs at WARNING is part of what the user sees: the CLI configures no
logging, so Python prints each such record on stderr as its message, one line.
"""

from __future__ import annotations

import hashlib
import json
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
    """Environment changes for the command (None removes a variable; {root} is filled in)."""
    leaves_nothing: str | None = None
    """A glob (relative to the case's folder) the command must not create."""
    cleanup: Callable[[Path], None] = lambda root: None
    once: tuple[str, ...] = ()
    """Fragments (as `output`) that must appear exactly once: one line per problem, not one per read."""
    keeps: tuple[str, ...] = ()
    """Files (relative to the case's folder) the command must leave byte for byte as they were."""


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


MSA = "commercial-contracts/msa-renewal"
MSA_PDF = SAMPLE / "tasks" / MSA / "documents" / "Exhibit_B_SLA.pdf"


def _one_task(root: Path) -> Path:
    """`<root>/bench`: a benchmark of one sample task (with a docx, an xlsx, an eml and a PDF)."""
    bench = root / "bench" / "tasks" / MSA
    shutil.copytree(SAMPLE / "tasks" / MSA, bench)
    return bench / "documents"


def _cache_entry_rel() -> str:
    """Where the converted text of the sample's SLA PDF lives under a cache root (relative)."""
    from evalcore.benchmark import cache, documents

    folder = Path("cache") / "docs" / f"v{documents.CONVERTER_VERSION}"
    return str(cache.entry_file(folder, hashlib.sha256(MSA_PDF.read_bytes()).hexdigest(), "pdf"))


def _damaged_cache_entry(root: Path) -> None:
    """The tester's case: the converted-PDF entry of the shared cache is not valid JSON."""
    from evalcore.benchmark import cache

    _one_task(root)
    entry = root / _cache_entry_rel()
    entry.parent.mkdir(parents=True)
    entry.write_bytes(b"not json")
    cache.clear_cache()  # nothing served from this process's memory: the disk entry is read


def _pil_warning_source(root: Path) -> None:
    from tests.warning_images import palette_png

    (_one_task(root) / "exhibit.png").write_bytes(palette_png())


def _padded_deliverable(root: Path) -> None:
    """A copy of the submissions with one deliverable padded past a configured 100 KB file limit."""
    shutil.copytree(SUBMISSIONS, root / "submissions")
    big = root / "submissions" / PADDED
    big.write_text(big.read_text() + "\n" + "padding " * 20_000)
    (root / "limits.yaml").write_text("input_limits:\n  max_file_bytes: 100000\n")


PADDED = "claude-average/commercial-contracts/force-majeure-response/scenario-01/response_letter.md"


def _calibrated_run(root: Path) -> None:
    """A run calibrated once against its ground truth (calibration.json), and labels matching nothing."""
    from jobs.per_run.calibrate import calibrate_run
    from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

    truth = synthetic_ground_truth(seed=3, n_tasks=3, n_criteria=2)
    build_run(str(root / "run"), truth, RunSpec(run_id="run-cal"))
    (root / "truth.json").write_text(json.dumps(truth))
    calibrate_run(str(root / "run"), str(root / "truth.json"))
    (root / "labels.jsonl").write_text(json.dumps({"type": "verdict", "system": "nobody", "task_id": "none/x",
                                                   "criterion_id": "C-001", "verdict": "pass"}) + "\n")


def _two_runs_in_common_nothing(root: Path) -> None:
    from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

    build_run(str(root / "run"), synthetic_ground_truth(seed=3, n_tasks=3, n_criteria=2), RunSpec(run_id="run-a"))
    other = synthetic_ground_truth(seed=6, n_tasks=3, n_criteria=2)  # every system renamed: no common submission
    other = {**other, "verdicts": {f"{s}-v2": v for s, v in other["verdicts"].items()},
             "hallucinations": [{**h, "system": f"{h['system']}-v2"} for h in other["hallucinations"]]}
    build_run(str(root / "other"), other, RunSpec(run_id="run-b"))


def _truncated_run_record(root: Path) -> None:
    (root / "run").mkdir()
    (root / "run" / "run.json").write_text('{"run_id": "r')


def _truncated_named_run(root: Path) -> None:
    (root / "runs" / "r1").mkdir(parents=True)
    (root / "runs" / "r1" / "run.json").write_text('{"run_id": "r')


def _empty_submissions(root: Path) -> None:
    (root / "empty").mkdir()


def _only_rejected_submissions(root: Path) -> None:
    memo = root / "subs" / "gpt-x" / "no-such-area" / "no-such-task" / "memo.md"
    memo.parent.mkdir(parents=True)
    memo.write_text("A memo for a task the benchmark does not have.\n")


def _run_and_labels_on_no_criterion(root: Path) -> None:
    """A run, and labels naming one of its submissions with a criterion the run's rubric does not have."""
    from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

    truth = synthetic_ground_truth(seed=3, n_tasks=3, n_criteria=2)
    build_run(str(root / "run"), truth, RunSpec(run_id="run-cal"))
    system = sorted(truth["verdicts"])[0]
    task = sorted(truth["verdicts"][system])[0]
    (root / "labels.jsonl").write_text(json.dumps({"type": "verdict", "system": system, "task_id": task,
                                                   "criterion_id": "C-999", "verdict": "pass"}) + "\n")


def _run_and_a_regular_file(root: Path) -> None:
    from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

    build_run(str(root / "run"), synthetic_ground_truth(seed=3, n_tasks=3, n_criteria=2), RunSpec(run_id="run-a"))
    _regular_file(root)


_HELD: dict[Path, object] = {}
SWEEP_HOLDING = "tribunal sweep bench -s results -o runs"


def _run_a_sweep_holds(root: Path) -> None:
    """A run whose lock a sweep holds now (this process, running: never taken over)."""
    from evalcore.storage.lock import RunLock
    from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

    build_run(str(root / "run"), synthetic_ground_truth(seed=3, n_tasks=3, n_criteria=2), RunSpec(run_id="run-a"))
    _HELD[root] = RunLock.acquire(str(root / "run"), command=SWEEP_HOLDING, renew_every_s=None)


def _release(root: Path) -> None:
    lock = _HELD.pop(root, None)
    if lock is not None:
        lock.release()  # type: ignore[attr-defined]


def _run_with_an_unfinished_attempt(root: Path) -> None:
    """A run whose attempt 1 finished (`_SUCCESS.json`) and whose attempt 2 was claimed and never ended."""
    from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

    run = root / "run"
    build_run(str(run), synthetic_ground_truth(seed=3, n_tasks=3, n_criteria=2), RunSpec(run_id="run-a"))
    (run / "_SUCCESS.json").write_text(json.dumps({"run_id": "run-a", "attempt": 1}))
    (run / "_attempts").mkdir()
    (run / "_attempts" / "attempt-0001.json").write_text(json.dumps({"run_id": "run-a", "attempt": 1}))
    (run / "_attempts" / "attempt-0002.json").write_text(json.dumps({"run_id": "run-a", "attempt": 2,
                                                                     "status": "running"}))


ADJ_FIELDS = ["kind", "system", "task_id", "criterion_id", "decision", "reviewer", "reason"]


def _run_to_adjudicate(root: Path) -> tuple[str, str]:
    """A built run (no Ray) and a (system, task) with a complete grading in it."""
    from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

    truth = synthetic_ground_truth(seed=3, n_tasks=3, n_criteria=2)
    build_run(str(root / "run"), truth, RunSpec(run_id="run-adj"))
    return "gpt-strong", sorted(truth["verdicts"]["gpt-strong"])[0]


def _decision_row(item: tuple[str, str], **change: object) -> dict[str, object]:
    system, task = item
    return {"kind": "criterion", "system": system, "task_id": task, "criterion_id": "C-001", "decision": "pass",
            "reviewer": "Ada", "reason": "states the price", **change}


def _decisions_jsonl(*changes: dict[str, object]) -> Callable[[Path], None]:
    def breaks(root: Path) -> None:
        item = _run_to_adjudicate(root)
        rows = [_decision_row(item, **change) for change in changes]
        (root / "decisions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    return breaks


def _spreadsheet_csv(root: Path) -> None:
    item = _run_to_adjudicate(root)
    rows = [_decision_row(item, criterion_id=c) for c in ("C-001", "C-002")]
    lines = [";".join(ADJ_FIELDS)] + [";".join(str(r[f]) for f in ADJ_FIELDS) for r in rows]
    (root / "decisions.csv").write_bytes("\ufeff".encode() + "\r\n".join(lines).encode() + b"\r\n")


def _long_reason_csv(root: Path) -> None:
    row = _decision_row(_run_to_adjudicate(root), reason="r" * 200_000)
    (root / "decisions.csv").write_text(",".join(ADJ_FIELDS) + "\n" + ",".join(str(row[f]) for f in ADJ_FIELDS) + "\n",
                                        encoding="utf-8")


def _folder_named_csv(root: Path) -> None:
    _run_to_adjudicate(root)
    (root / "somedir.csv").mkdir()



NO_KEYS: dict[str, str | None] = {"OPENAI_API_KEY": None, "ANTHROPIC_API_KEY": None, "XAI_API_KEY": None}
KEY_MESSAGE = (
    "openai (gpt-6-sol), auditor (gpt-6-sol): no API key: set the environment variable OPENAI_API_KEY; "
    "xai (grok-4.7): no API key: set the environment variable XAI_API_KEY; "
    "anthropic (claude-opus-5-5): no API key: set the environment variable ANTHROPIC_API_KEY"
)
NO_CACHE_ROOT: dict[str, str | None] = {"TRIBUNAL_CACHE_DIR": None}
"""The tests set a cache root; without one a sweep keeps its caches in its output folder, as a user's does."""
SWEEP = ["sweep", str(SAMPLE), "-s", str(SUBMISSIONS), "--run-id", "r1", "--vendors", "offline", "--no-progress"]
LEASE = SAMPLE / "tasks" / "real-estate" / "lease-abstract"
ABSTRACT = SUBMISSIONS / "gpt-strong" / "real-estate" / "lease-abstract" / "abstract.md"

CLI_CASES: list[CliCase] = [
    CliCase("output-under-a-regular-file", "8", "`sweep -o` a path under a regular file",
            "exit 1 before anything starts: `<output>: not a directory: <parent> is a regular file, not a folder`",
            lambda root, ep: [*SWEEP, "-o", str(root / "afile" / "runs")], 1,
            ("error: {root}/afile/runs: not a directory: {root}/afile is a regular file, not a folder; choose another "
             "output folder",),
            breaks=_regular_file, env=NO_CACHE_ROOT),
    CliCase("output-is-a-regular-file", "43", "`sweep -o` a path that is an existing regular file",
            "exit 1 before anything starts: `<output>: not a directory: a regular file is there`",
            lambda root, ep: [*SWEEP, "-o", str(root / "afile")], 1,
            ("error: {root}/afile: not a directory: a regular file is there; choose another output folder",),
            breaks=_regular_file, env=NO_CACHE_ROOT),
    CliCase("output-two-folders-under-a-regular-file", "43", "`sweep -o` a path two folders under a regular file",
            "exit 1 before anything starts: `<output>: not a directory: <parent> is a regular file, not a folder`",
            lambda root, ep: [*SWEEP, "-o", str(root / "afile" / "a" / "runs")], 1,
            ("error: {root}/afile/a/runs: not a directory: {root}/afile is a regular file, not a folder; "
             "choose another output folder",),
            breaks=_regular_file, env=NO_CACHE_ROOT),
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
    CliCase("status-path-with-markup", "24", "`tribunal status 'x[/]y'` (not a run; rich markup in the path)",
            "exit 1, one line naming the path verbatim (was a traceback)",
            lambda root, ep: ["status", str(root / "x[/]y")], 1,
            ("error: {root}/x[/]y: not a run folder (no run.json)",)),
    CliCase("status-truncated-run-record", "24", "`tribunal status` of a run whose run.json is cut in half",
            "exit 1: `<run>/run.json: not a readable run record (…)` (was a traceback); the file left as it is",
            lambda root, ep: ["status", str(root / "run")], 1,
            ("error: {root}/run/run.json: not a readable run record (Unterminated string",),
            breaks=_truncated_run_record, keeps=("run/run.json",)),
    CliCase("sweep-truncated-run-record", "43", "`sweep --run-id r1` into a run whose run.json is cut short",
            "exit 1 before the OCR step: `<run>/run.json: damaged: not valid JSON (…)` (was: \"written by another "
            "version of tribunal\", after the OCR step); the file left as it is",
            lambda root, ep: [*SWEEP, "-o", str(root / "runs")], 1,
            ("error: {root}/runs/r1/run.json: damaged: not valid JSON (Unterminated string starting at: line 1 "
             "column 12); the file was cut short or edited: restore it, or start another run (another --run-id)",),
            absent=("Traceback", "another version"), breaks=_truncated_named_run, keeps=("runs/r1/run.json",),
            env=NO_CACHE_ROOT, leaves_nothing="runs/_*"),  # no OCR page, no converted document: nothing ran
    CliCase("sweep-zero-submissions", "43", "`sweep -s` an empty submissions folder",
            "exit 0 with one line, `<submissions>: no submissions: nothing to grade`, and nothing made: no run "
            "folder, no output folder, no cache (was: exit 3, \"run it again\", with nothing to retry; then a run "
            "folder holding no submission, and the summary table)",
            lambda root, ep: ["sweep", str(SAMPLE), "-s", str(root / "empty"), "--run-id", "r1", "--vendors",
                              "offline", "--no-progress", "-o", str(root / "runs")], 0,
            ("{root}/empty: no submissions: nothing to grade",),
            absent=("Traceback", "no graded submissions", "submissions_total"), breaks=_empty_submissions,
            env=NO_CACHE_ROOT, leaves_nothing="runs"),
    CliCase("sweep-only-rejected-submissions", "43", "`sweep -s` a folder whose only submission is rejected",
            "exit 1 (bad input: nothing was graded), its `file: reason` line, then `<submissions>: no submission "
            "could be graded: 1 input(s) left out` (was: exit 3)",
            lambda root, ep: ["sweep", str(SAMPLE), "-s", str(root / "subs"), "--run-id", "r1", "--vendors",
                              "offline", "--no-progress", "-o", str(root / "runs")], 1,
            ("{root}/subs/gpt-x/no-such-area/no-such-task: unknown task id 'no-such-area/no-such-task' (no such task "
             "in the benchmark)",
             "error: {root}/subs: no submission could be graded: 1 input(s) left out (see above and the run's "
             "rejected/ table)"),
            absent=("Traceback", "no graded submissions"), breaks=_only_rejected_submissions),
    CliCase("estimate-applies-input-limits", "24", "`estimate -c` with `max_file_bytes` lowered under one padded deliverable",
            "priced as a sweep would load it: 31 of 32 submissions, and what it left out listed as `file: reason` "
            "(was: 32 priced without a word)",
            lambda root, ep: ["estimate", str(SAMPLE), "-s", str(root / "submissions"), "--fast",
                              "-c", str(root / "limits.yaml")], 0,
            ("left out of the estimate (a sweep would leave them out too): 1 input(s)",
             f"{{root}}/submissions/{PADDED}: deliverable 'letter': file is larger than "
             "input_limits.max_file_bytes = 97.7 KB", "estimate (online): 31 submissions"),
            breaks=_padded_deliverable),
    CliCase("calibrate-labels-match-nothing", "24", "`calibrate --labels` whose labels match no submission of the run",
            "exit 1, `<labels>: no label matches a complete grading of run …; nothing was written`; the earlier "
            "calibration.json untouched, no new calibration file (was: exit 0, calibration.json overwritten)",
            lambda root, ep: ["calibrate", str(root / "run"), "--labels", str(root / "labels.jsonl")], 1,
            ("error: {root}/labels.jsonl: no label matches a complete grading of run run-cal (1 labelled "
             "submission(s): 1 not in the run, 0 not complete); nothing was written",),
            breaks=_calibrated_run, keeps=("run/calibration.json", "run/calibration.parquet"),
            leaves_nothing="run/calibration-*"),
    CliCase("max-cost-zero", "24", "`sweep --max-cost 0`",
            "usage error (exit 2) before anything is loaded or Ray starts: `0 is not a spending cap: give a positive "
            "amount in USD`; no run folder (was: exit 1 \"preflight failed\" after starting Ray, a run folder left)",
            lambda root, ep: ["sweep", str(SAMPLE), "-s", str(SUBMISSIONS), "-o", str(root / "runs"),
                              "--vendors", "offline", "--max-cost", "0"], 2,
            ("Invalid value for '--max-cost': 0 is not a spending cap: give a positive amount in USD",),
            leaves_nothing="runs"),
    CliCase("compare-nothing-in-common", "24", "`compare` of two runs with no submission in common",
            "exit 1: `<run B>: no submission is complete in both runs (12 in A only, 12 in B only): there is nothing "
            "to compare` (was: exit 0, every rank marked changed)",
            lambda root, ep: ["compare", str(root / "run"), str(root / "other")], 1,
            ("error: {root}/other: no submission is complete in both runs (12 in A only, 12 in B only): "
             "there is nothing to compare",),
            breaks=_two_runs_in_common_nothing),
    CliCase("damaged-document-cache-entry", "24", "`validate` with the converted-PDF entry of the cache not valid JSON",
            "validated (exit 0), one warning naming the entry: `<entry>: damaged cache entry discarded and rebuilt "
            "from its input (not valid JSON …)` (was a ValidationError traceback); the entry rebuilt",
            lambda root, ep: ["validate", str(root / "bench")], 0,
            ("No problems found",), breaks=_damaged_cache_entry, env={"TRIBUNAL_CACHE_DIR": "{root}/cache"},
            once=(f"{{root}}/{_cache_entry_rel()}: damaged cache entry discarded and rebuilt from its input "
                  "(not valid JSON",)),
    CliCase("pil-warning-in-a-source", "24", "`validate` of a task whose PNG makes PIL warn (palette transparency as bytes)",
            "validated (exit 0), one warning line `<file>: Palette images with Transparency expressed in bytes should "
            "be converted to RGBA images (UserWarning from PIL)`; no raw `warnings.warn` output",
            lambda root, ep: ["validate", str(root / "bench")], 0,
            ("No problems found",), breaks=_pil_warning_source,
            once=(f"{{root}}/bench/tasks/{MSA}/documents/exhibit.png: Palette images with Transparency expressed in "
                  "bytes should be converted to RGBA images (UserWarning from PIL)",),
            absent=("Traceback", "warnings.warn", "UserWarning:")),
    CliCase("calibrate-labels-criteria-match-nothing", "43", "`calibrate --labels` naming a submission of the run "
            "with a criterion its rubric does not have",
            "exit 1, `<labels>: no labelled criterion matches a verdict of a complete grading of run …; nothing was "
            "written`, no calibration file (was: an empty judge table, exit 0)",
            lambda root, ep: ["calibrate", str(root / "run"), "--labels", str(root / "labels.jsonl")], 1,
            ("error: {root}/labels.jsonl: no labelled criterion matches a verdict of a complete grading of run run-cal "
             "(1 verdict label(s) on 1 criteria, e.g. C-999, in 1 matched submission(s)); nothing was written",),
            breaks=_run_and_labels_on_no_criterion, leaves_nothing="run/calibration*"),
    CliCase("compare-out-under-a-regular-file", "43", "`compare A B --out afile/c.json` where `afile` is a regular file",
            "exit 1: `afile/c.json: not a directory: afile is a regular file, not a folder` (was: \"File exists\"; "
            "then \"a parent of this path is a regular file; choose another output folder\" for a file's path)",
            lambda root, ep: ["compare", str(root / "run"), str(root / "run"), "--out", str(root / "afile" / "c.json")],
            1, ("error: {root}/afile/c.json: not a directory: {root}/afile is a regular file, not a folder",),
            absent=("Traceback", "File exists", "output folder", "a parent of this path"),
            breaks=_run_and_a_regular_file, keeps=("afile",)),
    CliCase("reduce-while-a-sweep-holds-the-run", "43", "`reduce` of a run whose sweep is still running (its lock held)",
            "exit 0, the leaderboard, and a warning: `<run>: a sweep is still writing into it: `<command>` (pid … on "
            "host …) since …; the leaderboard covers only the submissions graded so far` (was: nothing said)",
            lambda root, ep: ["reduce", str(root / "run")], 0,
            ("warning: {root}/run: a sweep is still writing into it: `" + SWEEP_HOLDING + "` (pid",
             "the leaderboard covers only the submissions graded so far"),
            breaks=_run_a_sweep_holds, cleanup=_release),
    CliCase("report-of-an-unfinished-attempt", "43", "`report` of a run whose latest sweep attempt never finished",
            "exit 0, the report, and a warning: `<run>: its latest sweep attempt (2) has not finished (the last "
            "finished one is attempt 1); the leaderboard covers only the submissions graded so far`",
            lambda root, ep: ["report", str(root / "run")], 0,
            ("warning: {root}/run: its latest sweep attempt (2) has not finished (the last finished one is attempt 1); "
             "the leaderboard covers only the submissions graded so far", "report written"),
            breaks=_run_with_an_unfinished_attempt),
    CliCase("adjudicate-spreadsheet-csv", "43", "`adjudicate --file` a CSV as a spreadsheet saves it (BOM, CRLF, `;`)",
            "read as saved: exit 0, both decisions recorded (was: `kind: Field required`)",
            lambda root, ep: ["adjudicate", str(root / "run"), "--file", str(root / "decisions.csv")], 0,
            ("2 decision(s) recorded in run-adj",), breaks=_spreadsheet_csv),
    CliCase("adjudicate-csv-reason-too-long", "43", "`adjudicate --file` a CSV whose reason is 200,000 characters",
            "exit 1: `<file>: row 1: not readable as CSV (a field is longer than 11,000 characters (a reason may have "
            "10,000))`, nothing recorded (was a csv.Error traceback)",
            lambda root, ep: ["adjudicate", str(root / "run"), "--file", str(root / "decisions.csv")], 1,
            ("error: {root}/decisions.csv: row 1: not readable as CSV (a field is longer than 11,000 characters "
             "(a reason may have 10,000))",),
            breaks=_long_reason_csv, leaves_nothing="run/adjudications/*"),
    CliCase("adjudicate-file-is-a-folder", "43", "`adjudicate --file somedir.csv` where somedir.csv is a folder",
            "exit 1: `<folder>: a folder, not a decisions file` (was an IsADirectoryError traceback)",
            lambda root, ep: ["adjudicate", str(root / "run"), "--file", str(root / "somedir.csv")], 1,
            ("error: {root}/somedir.csv: a folder, not a decisions file",), breaks=_folder_named_csv),
    CliCase("adjudicate-id-is-a-path", "43", "a decision whose `decision_id` is `../../escaped`",
            "exit 1: `<file>: row 1: decision_id: '../../escaped' may hold only letters, digits, '-' and '_' …`; "
            "nothing written in or outside the run (was: a file written two folders up; then pydantic's \"String "
            "should match pattern '^[A-Za-z0-9]…'\")",
            lambda root, ep: ["adjudicate", str(root / "run"), "--file", str(root / "decisions.jsonl")], 1,
            ("error: {root}/decisions.jsonl: row 1: decision_id: '../../escaped' may hold only letters, digits, '-' "
             "and '_' (at most 64, the first a letter or a digit): it names a file",),
            absent=("Traceback", "pattern", "^[A-Za-z0-9]"),
            breaks=_decisions_jsonl({"decision_id": "../../escaped"}), leaves_nothing="**/*escaped*"),
    CliCase("adjudicate-id-with-a-slash", "43", "a decision whose `decision_id` is `ada/1`",
            "exit 1: `<file>: row 1: decision_id: 'ada/1' may hold only letters, digits, '-' and '_' …`, nothing "
            "recorded (was: pydantic's \"String should match pattern '^[A-Za-z0-9]…'\")",
            lambda root, ep: ["adjudicate", str(root / "run"), "--file", str(root / "decisions.jsonl")], 1,
            ("error: {root}/decisions.jsonl: row 1: decision_id: 'ada/1' may hold only letters, digits, '-' and '_' "
             "(at most 64, the first a letter or a digit): it names a file",),
            absent=("Traceback", "pattern", "^[A-Za-z0-9]"),
            breaks=_decisions_jsonl({"decision_id": "ada/1"}), leaves_nothing="run/adjudications/*"),
    CliCase("adjudicate-decided-in-the-future", "43", "a decision dated 2099-01-01",
            "exit 1: `<file>: row 1: decided_at 2099-01-01T00:00:00+00:00 is in the future (more than 5 minutes ahead "
            "of this clock): it would outrank every later decision`, nothing recorded",
            lambda root, ep: ["adjudicate", str(root / "run"), "--file", str(root / "decisions.jsonl")], 1,
            ("error: {root}/decisions.jsonl: row 1: decided_at 2099-01-01T00:00:00+00:00 is in the future (more than "
             "5 minutes ahead of this clock): it would outrank every later decision",),
            breaks=_decisions_jsonl({"decided_at": "2099-01-01T00:00:00Z"}), leaves_nothing="run/adjudications/*"),
    CliCase("adjudicate-another-run", "43", "a decision recorded for another run (`run_id: run-other`)",
            "exit 1: `<file>: row 1: recorded for run run-other, not run-adj`, nothing recorded (was: applied)",
            lambda root, ep: ["adjudicate", str(root / "run"), "--file", str(root / "decisions.jsonl")], 1,
            ("error: {root}/decisions.jsonl: row 1: recorded for run run-other, not run-adj",),
            breaks=_decisions_jsonl({"run_id": "run-other"}), leaves_nothing="run/adjudications/*"),
    CliCase("adjudicate-replaced-grading", "43", "a decision made on a grading a later sweep replaced (`grading_id`)",
            "exit 1: `<file>: row 1: criterion …: made on grading g-replaced, but the current grading of … is …`, "
            "nothing recorded (was: applied to the new grading)",
            lambda root, ep: ["adjudicate", str(root / "run"), "--file", str(root / "decisions.jsonl")], 1,
            ("made on grading g-replaced, but the current grading of",),
            breaks=_decisions_jsonl({"grading_id": "g-replaced"}), leaves_nothing="run/adjudications/*"),
    CliCase("adjudicate-bad-row-after-good", "43", "a good row, then a row whose decision_id repeats the first's",
            "exit 1: `<file>: row 2: decision_id 'd-1' is also row 1's (decision ids must be unique)`; the good row "
            "not recorded either",
            lambda root, ep: ["adjudicate", str(root / "run"), "--file", str(root / "decisions.jsonl")], 1,
            ("error: {root}/decisions.jsonl: row 2: decision_id 'd-1' is also row 1's (decision ids must be unique)",),
            breaks=_decisions_jsonl({"decision_id": "d-1"}, {"decision_id": "d-1", "criterion_id": "C-002"}),
            leaves_nothing="run/adjudications/*"),
]
