"""A purge record in the terminal: what was deleted at each vendor, what is left and why."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from rich.console import Console

from evalcore.storage.run import open_run
from evalcore.vendors.batch.journal import PurgeRecord, VendorObject


class LocalPurge(Protocol):
    """What `jobs.per_run.purge.LocalPurge` holds, as shown here. A protocol, not that class: the
    purge prints through this module, so importing it back would close an import circle."""

    folders: list[str]
    inputs: int
    deleted: list[str]
    problems: list[str]

_KIND = {"input_file": "input file", "output_file": "output file", "error_file": "error file", "batch": "batch"}


def _kinds(objects: Iterable[VendorObject]) -> str:
    counts = Counter(o.kind for o in objects)
    return ", ".join(f"{n} {_KIND[k]}{'es' if k == 'batch' and n != 1 else 's' if n != 1 else ''}"
                     for k, n in sorted(counts.items()))


def render_purge(record: PurgeRecord, run_uri: str, console: Console) -> None:
    """What a purge did, per vendor, and what it could not do (and why)."""
    where = open_run(run_uri).purges
    vendors = sorted({o.vendor for o in record.objects})
    removed = [f"{v}: {_kinds(o for o in record.objects if o.vendor == v and o.outcome in ('deleted', 'gone'))}"
               for v in vendors if any(o.vendor == v and o.outcome in ("deleted", "gone") for o in record.objects)]
    if removed:
        console.print(f"purged at the vendors: {'; '.join(removed)} (recorded in {where})",
                      markup=False, highlight=False)
    for v in vendors:
        undeletable = [o for o in record.objects if o.vendor == v and o.outcome == "undeletable"]
        if undeletable:
            console.print(f"{v}: {_kinds(undeletable)} cannot be deleted: {undeletable[0].detail}. "
                          "data_governance.batch_allowed (or preset: private) refuses this vendor's batch mode",
                          style="yellow", markup=False, highlight=False)
        failed = [o for o in record.objects if o.vendor == v and o.outcome == "failed"]
        if failed:
            console.print(f"{v}: {_kinds(failed)} could not be deleted ({failed[0].detail}); "
                          f"`tribunal purge {run_uri}` tries again", style="yellow", markup=False, highlight=False)
    if record.in_use:
        console.print(f"{record.in_use} batch object(s) left at the vendors: the run still needs them (answers not "
                      f"in its tables yet); purged when the run finishes, or by `tribunal purge {run_uri}` then",
                      markup=False, highlight=False)


def render_local_purge(result: LocalPurge, console: Console) -> None:
    """What `tribunal purge RUN --local` deleted from the local caches, where it looked, and what it could not read or delete."""
    lines = [f"local caches searched: {', '.join(result.folders)}",
             f"deleted {len(result.deleted)} cache entr{'y' if len(result.deleted) == 1 else 'ies'} made from the "
             f"run's {result.inputs} benchmark and submission file(s)",
             *result.problems]
    for line in lines:
        console.print(line, markup=False, highlight=False)
