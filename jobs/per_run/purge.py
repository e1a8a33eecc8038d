"""Purging a run's batch artefacts at the vendors: at the end of a sweep, and `tribunal purge RUN`.

Why on the driver, after `finish` has written the tables: a batch's answers are needed until its
rows are in the run's tables (a resumed run collects it again), and the actors are gone by then.
The rules -- what may be deleted, what was, what cannot be -- are `evalcore.vendors.batch.purge`;
this module builds the batch clients from the configuration (the sweep's own, or the run's
run.json for `tribunal purge`), runs the purge, and says what happened on the console and in the
sweep's summary. A purge never fails a sweep: what it could not delete is reported, and
`tribunal purge RUN` tries again. `tribunal purge RUN --local` deletes instead the run's entries in
the local caches of converted text and OCR pages (`purge_local`).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from rich.console import Console

from evalcore.benchmark import cache
from evalcore.config.models import TribunalConfig
from evalcore.errors import StorageError, TribunalError
from evalcore.storage import fs
from evalcore.storage.run import open_run
from evalcore.storage.run_folder import RUN_RECORD, ocr_cache, shared_cache
from evalcore.storage.store import RunRecord, read_json
from evalcore.submissions.loader import MANIFEST_SUFFIXES
from evalcore.vendors.batch.journal import PurgeRecord, VendorObject
from evalcore.vendors.batch.protocol import BatchAPI
from evalcore.vendors.batch.purge import Holding, holdings, purge, tables_written_at
from evalcore.vendors.registry import create_batch_api, has_batch_api
from jobs.display.purge import render_purge


@dataclass
class LocalPurge:
    """What `tribunal purge RUN --local` looked at and deleted in the local caches."""

    folders: list[str]
    """The cache folders searched (`run_cache_folders`)."""
    inputs: int = 0
    """Files of the run's benchmark and submissions hashed."""
    deleted: list[str] = field(default_factory=list)
    """The entry files deleted."""
    problems: list[str] = field(default_factory=list)
    """`file: reason` of each input that could not be read (its entries, if any, are left) and each
    entry that could not be deleted."""


def run_cache_folders(run_uri: str, config: TribunalConfig) -> list[str]:
    """The local cache folders a run may have written to: its named ``data_governance.cache_dir``
    (none when the governance kept them in memory: `cache.governed_root`) and the caches its output
    folder shares (``<output>/_cache``, ``<output>/_ocr``), which runs of earlier versions and
    standard runs use. A ``TRIBUNAL_CACHE_DIR`` the sweep ran under is not recorded in the run,
    so it is not searched (the operator's own folder: delete it to remove it)."""
    output = fs.parent(run_uri)
    decided, root = cache.governed_root(config.data_governance)
    named = [str(root)] if decided and root is not None else []
    return [*named, shared_cache(output), ocr_cache(output)]


def _input_files(record: RunRecord) -> tuple[list[str], list[str]]:
    """(every file of the run's benchmark and submission folders, `uri: reason` of those unreadable).

    A manifest's deliverable files are named relative to its folder: that folder is read."""
    folders = [record.benchmark.uri]
    sub = record.submissions_uri
    folders.append(fs.parent(sub) if sub.lower().endswith(MANIFEST_SUFFIXES) else sub)
    files: set[str] = set()
    unreadable: list[str] = []
    for folder in dict.fromkeys(folders):
        try:
            if not fs.is_dir(folder):
                unreadable.append(f"{folder}: not found (moved or deleted since the run)")
                continue
            files.update(fs.list_files(folder))
        except (OSError, TribunalError) as exc:
            unreadable.append(f"{folder}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    return sorted(files), unreadable


def purge_local(run_uri: str) -> LocalPurge:
    """Delete from the run's cache folders (`run_cache_folders`) every entry made from a file of
    the run's benchmark or submissions, found by the SHA-256 of the file (`cache.entry_input`).

    Why by hash: the caches are content-addressed; an entry does not say which run made it, and
    the runs of one output folder share ``_cache`` and ``_ocr``. An entry of a file another run
    also graded is deleted too: it is a cache, that run converts the file again on its next sweep
    and nothing else changes. The inputs are read as they are now: a file changed or deleted since
    the run cannot be matched to its entries (said in `problems` for a missing folder)."""
    record = open_run(run_uri).read_record()
    result = LocalPurge(folders=run_cache_folders(run_uri, record.config))
    files, result.problems = _input_files(record)
    hashes: set[str] = set()
    for uri in files:
        try:
            hashes.add(hashlib.sha256(fs.read_bytes(uri)).hexdigest())
        except (OSError, TribunalError) as exc:
            result.problems.append(f"{uri}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    result.inputs = len(hashes)
    for folder in result.folders:
        try:
            entries = fs.list_files(folder)
        except (OSError, TribunalError) as exc:
            result.problems.append(f"{folder}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            continue
        for uri in entries:
            if cache.entry_input(fs.basename(uri)) in hashes:
                filesystem, path = fs.resolve(uri)
                try:
                    filesystem.delete_file(path)
                except OSError as exc:
                    result.problems.append(f"{uri}: not deleted ({exc.strerror or exc})")
                    continue
                result.deleted.append(uri)
    return result


def batch_apis(config: TribunalConfig) -> dict[str, BatchAPI]:
    """The batch adapter of every vendor entry that has one, by entry name (no client built yet)."""
    return {v.name: create_batch_api(v) for v in config.vendors() if has_batch_api(v)}


async def _with_apis(config: TribunalConfig, work: Any) -> Any:
    apis = batch_apis(config)
    try:
        return await work(apis)
    finally:
        for api in apis.values():
            await api.aclose()


def run_config(run_uri: str) -> TribunalConfig:
    """The configuration a run was made with (its run.json), for reaching the vendors it used."""
    uri = open_run(run_uri).record
    if not fs.exists(uri):
        raise TribunalError(f"{run_uri}: not a run folder (no {RUN_RECORD})")
    try:
        return TribunalConfig.model_validate(read_json(uri)["config"])
    except (OSError, ValueError, KeyError) as exc:
        raise StorageError(f"{uri}: not a readable run record ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from exc


def written_at(run_uri: str) -> float | None:
    """When the run's latest finished attempt had written its tables, or None if none finished."""
    uri = open_run(run_uri).success
    if not fs.exists(uri):
        return None
    try:
        return tables_written_at(read_json(uri))
    except (OSError, ValueError) as exc:
        raise StorageError(f"{uri}: unreadable ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from exc


def purge_run(
    run_uri: str, config: TribunalConfig, *, trigger: Literal["sweep", "command"], at: float | None
) -> PurgeRecord | None:
    """Purge one run now (see `evalcore.vendors.batch.purge.purge`); ``at``: when its tables were written."""

    async def work(apis: dict[str, BatchAPI]) -> PurgeRecord | None:
        return await purge(run_uri, apis, trigger=trigger, written_at=at)

    result: PurgeRecord | None = asyncio.run(_with_apis(config, work))
    return result


def purge_after_sweep(config: TribunalConfig, run_uri: str, console: Console) -> dict[str, Any]:
    """The sweep's hook, called once the attempt has written every table: purge unless
    ``data_governance.purge`` is off; report; never raise (the summary holds what happened)."""
    run = open_run(run_uri)
    if not fs.exists(run.journal):
        return {}
    if not config.data_governance.purge:
        left = [h for h in holdings(run.read_journal(), run.read_purges(), time.time()) if h.state == "held"]
        if left:
            console.print(f"data_governance.purge is off: {len(left)} batch object(s) left at the vendors; "
                          f"`tribunal purge {run_uri}` deletes them", markup=False, highlight=False)
        return {"enabled": False, "held": len(left)}
    try:
        record = purge_run(run_uri, config, trigger="sweep", at=time.time())
    except Exception as exc:  # a purge never fails the sweep whose tables are written
        message = f"{type(exc).__name__}: {str(exc)[:300]}"
        console.print(f"purging the batches at the vendors failed ({message}); `tribunal purge {run_uri}` "
                      "tries again", style="yellow", markup=False, highlight=False)
        return {"enabled": True, "error": message}
    if record is None:
        return {"enabled": True}
    render_purge(record, run_uri, console)
    return {"enabled": True, **purge_counts(record)}


def purge_counts(record: PurgeRecord) -> dict[str, Any]:
    """A purge in numbers: per outcome, and per vendor and outcome."""
    by_vendor: dict[str, dict[str, int]] = {}
    for o in record.objects:
        by_vendor.setdefault(o.vendor, {}).setdefault(o.outcome, 0)
        by_vendor[o.vendor][o.outcome] += 1
    return {
        "deleted": record.count("deleted"), "gone": record.count("gone"), "failed": record.count("failed"),
        "undeletable": record.count("undeletable"), "in_use": record.in_use, "by_vendor": by_vendor,
    }


def check_at_vendors(config: TribunalConfig, held: list[Holding]) -> list[Holding]:
    """`tribunal status --check`: ask each vendor whether it still has what the run folder says it
    holds (held, in use, undeletable); an object it no longer has is shown as gone."""

    async def work(apis: dict[str, BatchAPI]) -> list[Holding]:
        out: list[Holding] = []
        for h in held:
            api = apis.get(h.vendor)
            if h.state not in ("held", "in_use", "undeletable") or api is None:
                out.append(h)
                continue
            try:
                present = await api.exists(VendorObject(kind=h.kind, id=h.id))
            except Exception as exc:
                out.append(h.model_copy(update={"detail": f"not checked: {api.redact(str(exc))[:200]}"}))
                continue
            if present:
                out.append(h.model_copy(update={"detail": "checked: still at the vendor"}))
            else:
                out.append(h.model_copy(update={"state": "gone", "detail": "checked: the vendor no longer has it"}))
        return out

    checked: list[Holding] = asyncio.run(_with_apis(config, work))
    return checked
