"""What a sweep did, in the terminal at its end: counts, cost, batches, and the command that carries a detached run on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console

from evalcore.config.models import VendorMode
from evalcore.emulation import EmulationOptions
from jobs.display.progress import print_journal_events
from jobs.sweep.prepare import SweepCommand

if TYPE_CHECKING:
    from jobs.display.tables import TableSpec
    from jobs.sweep.options import SweepSummary


_BATCH_KEYS = frozenset({"awaiting_batches", "collected_calls", "collected_usd", "awaiting_calls",
                         "batch_requests_submitted"})
"""Summary rows shown in batch mode (or when not zero): online they are always 0."""


def print_summary(summary: SweepSummary, console: Console) -> None:
    """The sweep's counts as a key/value table, whole at any width (`jobs.display.tables`), then what
    happened to the run's batches (a lost batch and why, a journal record set aside), then rejections.

    What this command did, by who paid (`SweepSummary`): `paid_calls`/`cost_usd` it sent and paid
    for, `collected_*` batch results an earlier command paid for, `reused_calls` served free,
    `awaiting_*` still in batches."""
    from jobs.display.tables import Column, TableSpec, emit

    s = summary.as_dict()
    t = TableSpec([Column("key", "id"), Column("value", "text")], title=f"sweep {s['run_id']} -> {s['run_uri']}",
                  show_header=False)
    batch = bool(s["batches"])
    for key in ("attempt", "submissions_total", "skipped_done", "graded", "complete", "incomplete", "too_long",
                "awaiting_batches", "failed_shards", "cancelled_shards", "rejected",
                "paid_calls", "truncated_calls", "lost_calls", "failed_calls", "cost_usd", "collected_calls", "collected_usd", "reused_calls",
                "awaiting_calls", "rate_limited", "batches_submitted", "batch_requests_submitted",
                "estimated_cost_usd", "wall_s"):
        value = s[key]
        if not value and (key in ("failed_calls", "truncated_calls", "lost_calls") or (key in _BATCH_KEYS and not batch)):
            continue
        if isinstance(value, list):
            value = len(value)
        t.add_row(key, f"{value:,.4f}" if isinstance(value, float) else f"{value:,}")
    o = s.get("ocr", {})
    if o.get("pages_ocred") or o.get("pages_cached") or o.get("failed"):  # nothing needed OCR: nothing said
        t.add_row("ocr_pages", f"{o['pages_ocred']:,} recognised, {o['pages_cached']:,} cached ({o['wall_s']:.1f} s)")
    if s.get("purge", {}).get("enabled"):
        _purge_rows(t, s["purge"])
    emit(console, [t])
    if batch:
        console.print("paid_calls, cost_usd: sent and paid by this command (online, and batches it submitted); "
                      "collected_*: batch results it collected that an earlier command submitted and paid for; "
                      "awaiting_*: still in batches", markup=False, highlight=False)
    print_journal_events(console, s["run_uri"], s.get("journal_events", []))
    if s["rejections"]:
        console.print(f"[yellow]{s['rejected']} input(s) rejected (the rest of the sweep went on):[/]")
        for line in s["rejections"][:20]:
            console.print(f"  {line}", markup=False, highlight=False)
        if s["rejected"] > 20:
            console.print(f"  ... and {s['rejected'] - 20} more: see the run's rejected/ table")


def _purge_rows(t: TableSpec, p: dict[str, Any]) -> None:
    """What the purge did, a row per count (`purged_at_vendors` = deleted, or gone already): a count
    alone in its cell, never wrapped away from what it counts (one prose cell wrapped at 80 columns
    and left `xai` at a line's end, its count on the next)."""
    if "error" in p:
        t.add_row("purged_at_vendors", p["error"])
        return
    t.add_row("purged_at_vendors", f"{p.get('deleted', 0) + p.get('gone', 0):,}")
    t.add_row("purge_failed", f"{p.get('failed', 0):,}")
    t.add_row("purge_in_use", f"{p.get('in_use', 0):,}")
    for vendor, c in sorted(p.get("by_vendor", {}).items()):
        if c.get("undeletable"):
            t.add_row(f"undeletable_at_{vendor}", f"{c['undeletable']:,}")


def print_detached(summary: SweepSummary, cmd: SweepCommand, console: Console) -> None:
    """What a `--detach` pass submitted and when to come back: per vendor the batches and requests it
    submitted and when the open ones end (the vendor's window), then the command that collects."""
    import time

    def utc(unix: float | None) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(unix)) if unix else "an unknown time"

    console.print(f"--detach: {summary.awaiting_batches:,} submission(s) wait on their batches "
                  f"({summary.graded:,} graded by this command); this command submitted "
                  f"{summary.batches_submitted:,} batch(es) with {summary.batch_requests_submitted:,} request(s):",
                  markup=False, highlight=False, soft_wrap=True)
    for vendor, b in sorted(summary.batches.items()):
        if not b.get("batches_submitted") and not b.get("open"):
            continue  # an entry with nothing at the vendor (e.g. the auditor before any audit)
        console.print(f"  {vendor}: {b.get('batches_submitted', 0):,} batch(es), {b.get('requests_submitted', 0):,} "
                      f"request(s) submitted; {b.get('open', 0):,} open, ending by {utc(b.get('ends_by'))}",
                      markup=False, highlight=False, soft_wrap=True)
    console.print(f"`tribunal status {summary.run_uri}` shows each batch. Once they have ended, run "
                  "(with --detach again to submit the next stage and exit):", markup=False, highlight=False,
                  soft_wrap=True)
    console.print(f"  {again_command(cmd, summary.run_id)}", markup=False, highlight=False, soft_wrap=True)


def again_command(cmd: SweepCommand, run_id: str) -> str:
    """The sweep `cmd` spelled out as a shell command that carries its run on: the same options, the
    run named by its id (a derived id is spelled out), without `--detach` (it waits for the batches)."""
    import shlex

    default, emu = SweepCommand(benchmark="", submissions=""), EmulationOptions()
    args = ["tribunal", "sweep", cmd.benchmark, "-s", cmd.submissions, "-o", cmd.output, "--run-id", run_id]
    options: list[tuple[str, object, object]] = [
        ("--vendors", cmd.vendors.value, default.vendors.value), ("--config", cmd.config, None),
        ("--address", cmd.address, default.address), ("--shard-size", cmd.shard_size, default.shard_size),
        ("--max-in-flight", cmd.max_in_flight, default.max_in_flight), ("--personas", cmd.personas, None),
        ("--max-cost", cmd.max_cost, None), ("--endpoint-url", cmd.endpoint_url, None),
    ]
    if cmd.vendors == VendorMode.EMULATED:
        e = cmd.emulation
        options += [("--rpm", e.requests_per_minute, emu.requests_per_minute),
                    ("--tpm", e.tokens_per_minute, emu.tokens_per_minute), ("--latency", e.latency_s, emu.latency_s),
                    ("--faults", e.fault_rate, emu.fault_rate), ("--seed", e.seed, emu.seed),
                    ("--batch-delay", e.batch_delay_s, emu.batch_delay_s),
                    ("--batch-errors", e.batch_errors, emu.batch_errors), ("--emulator-config", e.file, None)]
    for flag, value, unset in options:
        if value != unset:
            args += [flag, str(value)]
    args += [f"--reuse={r}" for r in cmd.reuse]
    args += ["--batch"] if cmd.batch else []
    args += [] if cmd.progress else ["--no-progress"]
    args += [] if cmd.reduce_after else ["--no-reduce"]
    return shlex.join(args)
