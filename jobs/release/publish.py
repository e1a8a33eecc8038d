"""`tribunal publish RELEASE --out DIR`: a release's static public site (local or s3://).

The site needs no server and loads nothing from elsewhere (inline CSS, inline SVG, no script), and
every file is written create-only. Pages: `index.html` (the leaderboard with rates, intervals, rank
intervals and tiers; the release's date and predecessors; the downloads), `areas.html` (per practice
area), `systems/<system>.html` (rates by area, hallucination categories, cost and latency per task,
its changes since the previous release), `methodology.html` (generated from the release: judges,
models, protocol, what was adjudicated, how many labels), and `tasks/<task>.html` for each task the
release lists as public. Downloads under `data/`: `leaderboard.json` with `leaderboard.schema.json`
(`evalcore.release.public.PublicRelease`), `leaderboard.csv` and `leaderboard.parquet` (one row per
system and area, `ALL` for the whole benchmark).

Private by default: what the pages and downloads show comes from `PublicRelease` (figures and names
only); task text, deliverables, judge reasoning, evidence and reviewer reasons are read only for the
tasks `evalcore.release.public.is_public` lets through, and reviewers are named only when the release
says so.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from jinja2 import Environment, FileSystemLoader, select_autoescape

from evalcore.benchmark.loader import TASKS_FOLDER, load_task
from evalcore.errors import ReleaseError, TribunalError
from evalcore.release.diff import ReleaseDiff, diff_releases
from evalcore.release.model import Release
from evalcore.release.public import PublicRelease, download_schema, flat_rows, is_public, public_release
from evalcore.results.adjudications import Adjudication
from evalcore.results.leaderboard import ALL_AREAS
from evalcore.results.reduce import current_gradings
from evalcore.storage import fs
from evalcore.storage.run import open_run
from evalcore.storage.run_folder import LEADERBOARD_JSON, LEADERBOARD_PARQUET
from evalcore.storage.store import read_table
from jobs.per_run.report import leaderboard_chart
from jobs.release.store import (
    current_latest,
    list_releases,
    read_board,
    read_decisions,
    read_release,
    read_systems,
)

TEMPLATES = Path(__file__).with_name("templates")
DATA = "data"
_STEM = LEADERBOARD_JSON.removesuffix(".json")
DOWNLOADS = {"json": LEADERBOARD_JSON, "schema": f"{_STEM}.schema.json", "csv": f"{_STEM}.csv",
             "parquet": LEADERBOARD_PARQUET}
"""The site's downloads under data/: named as a run's leaderboard files are (`evalcore.storage.run_folder`)."""


def slug(name: str) -> str:
    """A file name for a system or task id: safe characters kept, others `-`, plus a short hash when
    anything was replaced (two names never share a page)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "x"
    return safe if safe == name else f"{safe}-{hashlib.sha256(name.encode()).hexdigest()[:6]}"


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "j2"]))
    env.filters["slug"] = slug
    return env


def _predecessors(releases: str, release: Release, endpoint_override: str | None) -> list[Release]:
    """The chain of earlier releases, newest first (each release names the one before it)."""
    known = {r.name: r for r in list_releases(releases, endpoint_override)}
    chain: list[Release] = []
    name = release.predecessor
    while name is not None and name in known and name not in {r.name for r in chain}:
        chain.append(known[name])
        name = known[name].predecessor
    return chain


def _public_task(release: Release, task_id: str, decisions: list[Adjudication],
                 endpoint_override: str | None) -> dict[str, Any]:
    """What a public task's page shows: its text and criteria, and per system its verdicts with the
    judges' reasoning, its confirmed flags with their evidence, and the experts' decisions."""
    run = release.runs[0]
    record = open_run(run.uri, endpoint_override).read_record()
    task = load_task(fs.join(record.benchmark.uri, TASKS_FOLDER, task_id), task_id, endpoint_override=endpoint_override)
    systems: list[dict[str, Any]] = []
    for r in release.runs:
        subs = current_gradings(read_table(r.uri, "submissions"))
        mine = subs.filter(pc.and_(pc.equal(subs.column("task_id"), task_id),
                                   pc.is_in(subs.column("system"), pa.array(r.systems))))
        gradings = dict(zip(mine.column("grading_id").to_pylist(), mine.column("system").to_pylist(), strict=True))
        verdicts = [v for v in read_table(r.uri, "verdicts").to_pylist() if v["grading_id"] in gradings]
        flags = [f for f in read_table(r.uri, "flags").to_pylist()
                 if f["grading_id"] in gradings and f["status"] == "confirmed"]
        for gid, system in sorted(gradings.items(), key=lambda kv: kv[1]):
            systems.append({
                "system": system,
                "verdicts": sorted((v for v in verdicts if v["grading_id"] == gid),
                                   key=lambda v: (v["criterion_id"], v["judge"])),
                "flags": [f for f in flags if f["grading_id"] == gid],
                "decisions": [{"kind": d.kind, "decision": d.decision, "reason": d.reason,
                               "reviewer": d.reviewer if release.settings.show_reviewers else None}
                              for d in decisions if d.system == system and d.task_id == task_id],
            })
    return {"id": task_id, "title": task.title, "instructions": task.instructions, "criteria": task.criteria,
            "systems": systems}


def _csv(rows: list[dict[str, Any]]) -> bytes:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["system"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue().encode()


def _parquet(rows: list[dict[str, Any]]) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf, compression="zstd")
    return buf.getvalue()


def site_files(public: PublicRelease, board_chart: str, diff: ReleaseDiff | None,
               tasks: Mapping[str, dict[str, Any]]) -> dict[str, bytes]:
    """Every file of the site, by its path under the site's root (pure: no I/O)."""
    env = _environment()
    rows = flat_rows([*public.systems, *public.by_area])
    areas: dict[str, list[Any]] = {a: [r for r in public.by_area if r.area == a] for a in public.areas}
    by_area = {(r.system, r.area): r for r in public.by_area}
    changes = {c.system: c for c in diff.systems} if diff else {}
    common = {"p": public, "downloads": {k: f"{DATA}/{v}" for k, v in DOWNLOADS.items()}, "all_areas": ALL_AREAS,
              "public_tasks": sorted(tasks), "diff": diff}
    files: dict[str, bytes] = {
        "index.html": env.get_template("index.html.j2").render(root="", chart=board_chart, **common).encode(),
        "areas.html": env.get_template("areas.html.j2").render(root="", areas=areas, **common).encode(),
        "methodology.html": env.get_template("methodology.html.j2").render(root="", **common).encode(),
        f"{DATA}/{DOWNLOADS['json']}": public.model_dump_json(indent=2).encode(),
        f"{DATA}/{DOWNLOADS['schema']}": json.dumps(download_schema(), indent=2).encode(),
        f"{DATA}/{DOWNLOADS['csv']}": _csv(rows),
        f"{DATA}/{DOWNLOADS['parquet']}": _parquet(rows),
    }
    for row, detail in zip(public.systems, public.details, strict=True):
        files[f"systems/{slug(row.system)}.html"] = env.get_template("system.html.j2").render(
            root="../", row=row, detail=detail, area_rows=[by_area[(row.system, a)] for a in public.areas
                                                           if (row.system, a) in by_area],
            change=changes.get(row.system),
            decisions=[d for d in (diff.decisions if diff else []) if d.system == row.system], **common).encode()
    for task_id, task in tasks.items():
        files[f"tasks/{slug(task_id)}.html"] = env.get_template("task.html.j2").render(
            root="../", task=task, **common).encode()
    return files


def publish_release(releases: str, name: str, out: str, endpoint_override: str | None = None) -> str:
    """Write the site of release `name` (or `latest`) into `out`, create-only; the index page's URI."""
    if name == "latest":
        pointer = current_latest(releases, endpoint_override)
        if pointer is None:
            raise ReleaseError(releases, "no release is latest yet: name the release to publish")
        name = pointer.release
    release = read_release(releases, name, endpoint_override)
    board = read_board(releases, name, endpoint_override)
    decisions = read_decisions(releases, name, endpoint_override)
    predecessors = _predecessors(releases, release, endpoint_override)
    public = public_release(release, board, decisions, read_systems(releases, name, endpoint_override), predecessors)
    diff = None
    if predecessors:
        before = predecessors[0]
        diff = diff_releases(before, read_board(releases, before.name, endpoint_override),
                             read_decisions(releases, before.name, endpoint_override), release, board, decisions)
    tasks: dict[str, dict[str, Any]] = {}
    for task_id in release.settings.public_tasks:
        if not is_public(task_id, release.settings):
            continue
        try:
            tasks[task_id] = _public_task(release, task_id, decisions, endpoint_override)
        except TribunalError as exc:
            raise ReleaseError(task_id, f"the release lists it as public but it cannot be read: {exc}") from exc
    files = site_files(public, str(leaderboard_chart(board.systems)), diff, tasks)
    root = out.rstrip("/")
    for path, data in files.items():
        if not fs.write_new(fs.join(root, path), data, endpoint_override):
            raise ReleaseError(fs.join(root, path), "exists: a published site is never overwritten (publish into an "
                               "empty folder)")
    return fs.join(root, "index.html")
