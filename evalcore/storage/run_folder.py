"""The run folder: its layout, spelled once, and one handle (`RunFolder`) that names every part.

A run is one folder (local or s3://) under an output folder. Every name in it is defined here and
nowhere else (`tests/test_repository.py` greps the code for them); the modules that read and write
a part (the shard writer and run record in `store.py`, the batch journal, the lock, the decisions,
the reduction, the report, calibration) take its path from a `RunFolder`:

    <output>/<run_id>/run.json                    what produced the run (`store.RunRecord`)
    <output>/<run_id>/<table>/…parquet            submissions | verdicts | flags | calls | rejected
    <output>/<run_id>/_attempts/attempt-<n>.json  each attempt, claimed when it starts
    <output>/<run_id>/_lock/lock-<n>.json         who writes into the run (`evalcore.storage.lock`)
    <output>/<run_id>/_batches/                   the batch journal (`evalcore.vendors.batch.journal`)
    <output>/<run_id>/_purge/                     purge records (what was deleted at the vendors)
    <output>/<run_id>/adjudications/              the experts' decisions, one object each
    <output>/<run_id>/review_campaigns/           review campaigns (`evalcore.results.campaigns`), one object each
    <output>/<run_id>/review_trail/               the review's audit trail: sign-ins, assignments, reservations,
                                                  decisions, resolutions (`evalcore.results.review_trail`)
    <output>/<run_id>/leaderboard.json            `tribunal reduce` (+ leaderboard.parquet,
                                                  leaderboard_areas.parquet): the files in force
    <output>/<run_id>/leaderboard_raw.json        `tribunal reduce --no-adjudications` (+ leaderboard_raw.parquet,
                                                  leaderboard_raw_areas.parquet): the raw view, apart
    <output>/<run_id>/calibration[-<k>].json      `tribunal calibrate` (+ .parquet), never replaced
    <output>/<run_id>/repeatability.json          `tribunal calibrate` of a run with repeats (`tribunal retest`)
    <output>/<run_id>/report.html                 `tribunal report`
    <output>/<run_id>/_SUCCESS.json               written last by a finished sweep
    <output>/_cache/, <output>/_ocr/              caches the runs of one output folder share

Why one handle and not constants in each module: the layout was known in pieces by eight modules,
two of which defined the same folder name; a reader of the code (or of `docs/OUTPUT.md`) now finds
the whole of it in one place, and a part cannot be moved without every reader following.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from evalcore.storage import fs

RUN_RECORD: Final = "run.json"
SUCCESS: Final = "_SUCCESS.json"
ATTEMPTS: Final = "_attempts"
LOCK: Final = "_lock"
JOURNAL: Final = "_batches"
PURGES: Final = "_purge"
ADJUDICATIONS: Final = "adjudications"
CAMPAIGNS: Final = "review_campaigns"
REVIEW_TRAIL: Final = "review_trail"
LEADERBOARD_JSON: Final = "leaderboard.json"
LEADERBOARD_PARQUET: Final = "leaderboard.parquet"
LEADERBOARD_AREAS_PARQUET: Final = "leaderboard_areas.parquet"
LEADERBOARD_RAW_JSON: Final = "leaderboard_raw.json"
LEADERBOARD_RAW_PARQUET: Final = "leaderboard_raw.parquet"
LEADERBOARD_RAW_AREAS_PARQUET: Final = "leaderboard_raw_areas.parquet"
REPORT_HTML: Final = "report.html"
CALIBRATION: Final = "calibration"
REPEATABILITY_JSON: Final = "repeatability.json"
SHARED_CACHE: Final = "_cache"
OCR_CACHE: Final = "_ocr"


@dataclass(frozen=True)
class RunFolder:
    """One run's folder: the URI of each of its parts (nothing is read or written here)."""

    uri: str

    @property
    def record(self) -> str:
        """`run.json`: what produced the run."""
        return fs.join(self.uri, RUN_RECORD)

    @property
    def success(self) -> str:
        """`_SUCCESS.json`: the latest finished attempt's record, written last."""
        return fs.join(self.uri, SUCCESS)

    def table(self, name: str) -> str:
        """The folder of one table (`submissions`, `verdicts`, `flags`, `calls`, `rejected`)."""
        return fs.join(self.uri, name)

    def table_file(self, table: str, name: str) -> str:
        """One Parquet file of a table."""
        return fs.join(self.uri, table, f"{name}.parquet")

    @property
    def attempts(self) -> str:
        """`_attempts/`: one record per attempt, claimed when it starts."""
        return fs.join(self.uri, ATTEMPTS)

    def attempt(self, number: int) -> str:
        """The record of attempt `number`."""
        return fs.join(self.uri, ATTEMPTS, f"attempt-{number:04d}.json")

    @property
    def lock(self) -> str:
        """`_lock/`: the leases of the run's writers."""
        return fs.join(self.uri, LOCK)

    @property
    def journal(self) -> str:
        """`_batches/`: the batch journal."""
        return fs.join(self.uri, JOURNAL)

    @property
    def purges(self) -> str:
        """`_purge/`: what each purge deleted at the vendors."""
        return fs.join(self.uri, PURGES)

    @property
    def adjudications(self) -> str:
        """`adjudications/`: the experts' decisions."""
        return fs.join(self.uri, ADJUDICATIONS)

    @property
    def campaigns(self) -> str:
        """`review_campaigns/`: the review campaigns, one create-only object each."""
        return fs.join(self.uri, CAMPAIGNS)

    @property
    def review_trail(self) -> str:
        """`review_trail/`: the review's append-only audit trail, one create-only object per event."""
        return fs.join(self.uri, REVIEW_TRAIL)

    @property
    def leaderboard_json(self) -> str:
        return fs.join(self.uri, LEADERBOARD_JSON)

    @property
    def leaderboard_parquet(self) -> str:
        return fs.join(self.uri, LEADERBOARD_PARQUET)

    @property
    def leaderboard_areas_parquet(self) -> str:
        return fs.join(self.uri, LEADERBOARD_AREAS_PARQUET)

    def leaderboard_files(self, *, raw: bool = False) -> tuple[str, str, str]:
        """The leaderboard's JSON, Parquet and per-area Parquet: the files in force (the decisions
        applied) or, `raw`, the raw view's, kept apart so that looking at it never replaces them."""
        if raw:
            return (fs.join(self.uri, LEADERBOARD_RAW_JSON), fs.join(self.uri, LEADERBOARD_RAW_PARQUET),
                    fs.join(self.uri, LEADERBOARD_RAW_AREAS_PARQUET))
        return self.leaderboard_json, self.leaderboard_parquet, self.leaderboard_areas_parquet

    @property
    def report_html(self) -> str:
        return fs.join(self.uri, REPORT_HTML)

    @property
    def repeatability(self) -> str:
        """The test-retest figures of the run's repeats (rewritten whole: derived from the tables)."""
        return fs.join(self.uri, REPEATABILITY_JSON)

    def calibration(self, number: int, suffix: str = "json") -> str:
        """The `number`-th calibration's file (`calibration.json`, then `calibration-0002.json`, …)."""
        return fs.join(self.uri, calibration_name(number, suffix))


def attempt_number(name: str) -> int | None:
    """The attempt a file name of `_attempts/` records (`attempt-0003.json` → 3), or None."""
    stem = name.removeprefix("attempt-").removesuffix(".json")
    return int(stem) if name.startswith("attempt-") and name.endswith(".json") and stem.isdigit() else None


def calibration_name(number: int, suffix: str = "json") -> str:
    """A calibration's file name: the first plain, later ones numbered (none is ever replaced)."""
    return f"{CALIBRATION}.{suffix}" if number == 1 else f"{CALIBRATION}-{number:04d}.{suffix}"


def is_calibration(name: str) -> bool:
    """Whether a file name in a run folder is a calibration's JSON."""
    return name == f"{CALIBRATION}.json" or (name.startswith(f"{CALIBRATION}-") and name.endswith(".json"))


def folder_of(uri: str) -> RunFolder:
    """The paths of the run folder at `uri` (a local path or s3://…), for the modules that own a
    part of it; commands open a run with `evalcore.storage.run.open_run`, which reads and writes."""
    return RunFolder(uri.rstrip("/") if uri not in ("/", "") else uri)


def shared_cache(output_uri: str) -> str:
    """`<output>/_cache`: the converted-document cache the runs of one output folder share."""
    return fs.join(output_uri, SHARED_CACHE)


def ocr_cache(output_uri: str) -> str:
    """`<output>/_ocr`: the OCR cache the runs of one output folder share."""
    return fs.join(output_uri, OCR_CACHE)
