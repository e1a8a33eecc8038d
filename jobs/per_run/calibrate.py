"""`tribunal calibrate RUN --labels LABELS`: read a run and a labels file, write and show the calibration.

The I/O half; the rules live in `evalcore.results.calibrate` (pure). Writes into the run folder
``calibration.json`` (the whole `Calibration`) and ``calibration.parquet`` (one row per judge ×
area, estimates flattened); `tribunal report` adds a calibration section when the JSON is there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

from evalcore.errors import InputError, StorageError
from evalcore.grading import scoring
from evalcore.results import adjudications as adj
from evalcore.results import repeatability as rep
from evalcore.results.adjudications import Adjudication
from evalcore.results.agreement import agreement, machine_flag_call, machine_panel_call
from evalcore.results.calibrate import Calibration, calibrate_tables, judges_table
from evalcore.results.labels import FalseFlagLabel, HallucinationLabel, Labels, VerdictLabel, load_labels
from evalcore.results.reduce import TableSource, current_gradings
from evalcore.results.repeatability import Repeatability
from evalcore.storage import fs
from evalcore.storage.run import open_run
from evalcore.storage.run_folder import is_calibration
from evalcore.storage.store import arrow_schema, parquet_bytes


def calibrate_run(
    run_uri: str, labels_uri: str | None, *, write: bool = True, endpoint_override: str | None = None,
    sample_only: bool = False,
) -> Calibration:
    """Calibrate a run folder against expert labels; write a new calibration file into the run.

    Without a labels file, the run's adjudications are the labels (`labels_from_adjudications`):
    each decided verdict or criterion is the expert's verdict, each decided flag a label on that flag
    (overturned: a false positive); unreviewed flags are not scored.
    Labels that match no graded submission of the run are refused (nothing is written), and an
    earlier calibration is never overwritten: each one gets the next free name.
    """
    run = open_run(run_uri, endpoint_override)
    record = run.read_record()
    notes: list[str] = []
    if labels_uri is None:
        labels, notes = labels_from_adjudications(run_uri, endpoint_override, sample_only=sample_only)
    else:
        labels = load_labels(labels_uri, endpoint_override)
    submissions = run.dataset("submissions")
    if submissions is None:
        raise StorageError(f"{run.table('submissions')}: no graded submissions in this run yet")
    cal = calibrate_tables(record, labels, submissions=submissions, verdicts=run.dataset("verdicts"),
                           flags=run.dataset("flags"), calls=run.dataset("calls"))
    if cal.matched_submissions == 0:
        raise InputError(labels.source, f"no label matches a complete grading of run {record.run_id} "
                         f"({cal.labelled_submissions} labelled submission(s): {cal.not_in_run} not in the run, "
                         f"{cal.not_complete} not complete); nothing was written")
    if labels_uri is not None and labels.verdicts and not cal.judges:
        criteria = sorted({v.criterion_id for v in labels.verdicts})
        raise InputError(labels.source, f"no labelled criterion matches a verdict of a complete grading of run "
                         f"{record.run_id} ({len(labels.verdicts)} verdict label(s) on {len(criteria)} criteria, e.g. "
                         f"{criteria[0]}, in {cal.matched_submissions} matched submission(s)); nothing was written")
    if labels_uri is None and cal.auditor.not_reviewed:
        notes.append(f"{cal.auditor.not_reviewed} confirmed flag(s) of the labelled submissions were not reviewed: "
                     "not scored")
    campaign = [d for d in run.read_decisions().decisions if d.campaign_id is not None]
    if campaign:
        machine = machine_calls(campaign, submissions, run.dataset("verdicts"), run.dataset("flags"))
        cal = cal.model_copy(update={"reviewers": agreement(campaign, machine, seed=int(record.config.seed))})
    if notes:
        cal = cal.model_copy(update={"notes": [*notes, *cal.notes]})
    cal = cal.model_copy(update={"repeatability": run_repeatability(run_uri, write=write,
                                                                    endpoint_override=endpoint_override)})
    if write:
        for k in range(1, 10_000):
            if fs.write_new(run.calibration(k), cal.model_dump_json(indent=2).encode(), endpoint_override):
                fs.write_bytes_atomic(run.calibration(k, "parquet"), parquet_bytes(judges_table(cal.judges)),
                                      endpoint_override)
                break
    return cal


def _rows(source: TableSource | None, columns: list[str], gradings: list[str]) -> list[dict[str, Any]]:
    if source is None or not gradings:
        return []
    if isinstance(source, pads.Dataset):
        rows: list[dict[str, Any]] = source.to_table(columns=columns, filter=pc.field("grading_id").isin(gradings)).to_pylist()
        return rows
    picked: list[dict[str, Any]] = source.filter(pc.is_in(source.column("grading_id"), pa.array(gradings))).select(
        columns).to_pylist()
    return picked


def machine_calls(decisions: Sequence[Adjudication], submissions: TableSource, verdicts: TableSource | None,
                  flags: TableSource | None) -> dict[tuple[str, ...], str]:
    """The machine's call on each decided item of the current gradings: the auditor's on a flag
    (`machine_flag_call`), the judge's on a verdict, the panel's majority on a criterion."""
    current = current_gradings(submissions)
    grading = {(s, t): g for s, t, g in zip(current.column("system").to_pylist(), current.column("task_id").to_pylist(),
                                            current.column("grading_id").to_pylist(), strict=True)}
    wanted = sorted({grading[(d.system, d.task_id)] for d in decisions if (d.system, d.task_id) in grading})
    flag_rows = {(r["grading_id"], r["flag_index"]): r
                 for r in _rows(flags, ["grading_id", "flag_index", "status", "materiality"], wanted)}
    by_criterion: dict[tuple[str, str], dict[str, str | None]] = {}
    for r in _rows(verdicts, ["grading_id", "criterion_id", "judge", "verdict"], wanted):
        by_criterion.setdefault((r["grading_id"], r["criterion_id"]), {})[r["judge"]] = r["verdict"]
    out: dict[tuple[str, ...], str] = {}
    for d in decisions:
        gid = grading.get((d.system, d.task_id))
        if gid is None:
            continue
        if d.kind == "flag":
            flag = flag_rows.get((gid, d.flag_index))
            if flag is not None:
                out[d.item] = machine_flag_call(str(flag["status"]), flag["materiality"])
            continue
        said = by_criterion.get((gid, str(d.criterion_id)), {})
        call = said.get(str(d.judge)) if d.kind == "verdict" else machine_panel_call(list(said.values()))
        if call in ("pass", "fail"):
            out[d.item] = str(call)
    return out


def labels_from_adjudications(
    run_uri: str, endpoint_override: str | None = None, *, sample_only: bool = False
) -> tuple[Labels, list[str]]:
    """The run's decisions in force as expert labels, with notes saying how far they can be trusted.

    A decided verdict or criterion is the expert's verdict on that criterion. A decided flag is a
    label on that very flag of the submission's current grading, by the same rule the reduction
    applies (`scoring.adjudicated_flag`): upheld or given a materiality, a hallucination with the
    materiality it then counts with; overturned, a false flag (the auditor's false positive). The
    labels are not exhaustive: a flag nobody reviewed is not scored, and recall is not measured.
    Decisions from the material-first and split queues over-represent disputed items: only those
    from the seeded random sample give unbiased figures.
    """
    run = open_run(run_uri, endpoint_override)
    loaded = run.read_decisions()
    latest = [d for d in loaded.latest().values() if not sample_only or d.queue == "sample"]
    if not latest:
        raise InputError(run.adjudications, "no adjudications to calibrate against"
                         + (" from the random sample" if sample_only else "")
                         + " (record some with `tribunal review` or `tribunal adjudicate`, or give --labels)")
    flag_keys = {(d.system, d.task_id, d.flag_index) for d in latest if d.kind == "flag"}
    flag_rows: dict[tuple[str, str, int | None], dict[str, object]] = {}
    flags = run.dataset("flags")
    submissions = run.dataset("submissions")
    if flag_keys and flags is not None and submissions is not None:
        current = set(current_gradings(submissions).column("grading_id").to_pylist())
        for row in flags.to_table(columns=["grading_id", "system", "task_id", "flag_index", "deliverable", "span",
                                           "category", "status", "materiality"]).to_pylist():
            key = (str(row["system"]), str(row["task_id"]), int(row["flag_index"]))
            if key in flag_keys and row["grading_id"] in current:
                flag_rows[key] = row
    verdicts: list[VerdictLabel] = []
    halls: list[HallucinationLabel] = []
    false_flags: list[FalseFlagLabel] = []
    unmatched = 0
    for d in latest:
        if d.kind in ("verdict", "criterion") and d.criterion_id:
            verdicts.append(VerdictLabel(system=d.system, task_id=d.task_id, criterion_id=d.criterion_id,
                                         verdict=d.decision))  # type: ignore[arg-type]
            continue
        row = flag_rows.get((d.system, d.task_id, d.flag_index))
        if row is not None and d.grading_id is not None and d.grading_id != row["grading_id"]:
            row = None  # made on a grading a later sweep replaced: set aside, as the reduction does
        if d.kind != "flag" or d.flag_index is None or row is None:
            unmatched += 1
            continue
        raw = scoring.FlagOutcome(str(row["status"]), None if row["materiality"] is None else str(row["materiality"]))
        outcome = scoring.adjudicated_flag(raw, d.decision, d.materiality)  # type: ignore[arg-type]
        counted = scoring.counted_materiality(outcome.status, outcome.materiality)
        if counted is None:
            false_flags.append(FalseFlagLabel(system=d.system, task_id=d.task_id, flag_index=d.flag_index))
        else:
            halls.append(HallucinationLabel(
                system=d.system, task_id=d.task_id, deliverable=str(row["deliverable"]), span=str(row["span"]),
                category=row["category"], materiality=counted, flag_index=d.flag_index,
            ))
    labels = Labels(source=adj.folder(run_uri) + (" (random sample)" if sample_only else ""), verdicts=verdicts,
                    hallucinations=halls, false_flags=false_flags, exhaustive=False)
    sampled = sum(1 for d in latest if d.queue == "sample")
    notes = [
        f"labels: {len(latest)} decision(s) in force from the run's adjudications on {len(labels.submissions())} "
        f"submission(s), {sampled} of them from the seeded random sample"
        + (" (only those used: unbiased)" if sample_only else
           "; the rest come from the material-first and split queues, which over-represent "
           "disputed items, so these figures are not unbiased estimates (--sample-only: "
           "the random sample alone)"),
        "only reviewed items are labelled: the auditor's precision on reviewed flags (an overturned flag counts "
        "as a false positive) and the judges' accuracy on reviewed verdicts are measured; unreviewed flags are not "
        "scored, and recall is not measured (unreviewed hallucinations are unknown)",
    ]
    if unmatched:
        notes.append(f"{unmatched} flag decision(s) name no flag of a current grading of the run: not used as labels")
    return labels, notes


def load_calibration(run_uri: str, endpoint_override: str | None = None) -> Calibration | None:
    """The run's latest calibration (the highest-numbered calibration file), or None when never calibrated."""
    names = [
        fs.basename(u)
        for u in fs.list_files(run_uri, suffix=".json", recursive=False, endpoint_override=endpoint_override)
        if is_calibration(fs.basename(u))
    ]
    if not names:
        return None
    latest = max(names, key=lambda n: 1 if "-" not in n else int(n.split("-")[1].split(".")[0]))
    return Calibration.model_validate_json(fs.read_bytes(fs.join(run_uri, latest), endpoint_override))


def run_repeatability(run_uri: str, *, write: bool = True, endpoint_override: str | None = None) -> Repeatability | None:
    """The test-retest figures of a run's repeats (`evalcore.results.repeatability`), or None without
    repeats; written as `repeatability.json` into the run (rewritten whole: derived from the tables)."""
    run = open_run(run_uri, endpoint_override)
    record = run.read_record()
    submissions = run.dataset("submissions")
    if submissions is None:
        return None
    subs = _table(submissions, "submissions", rep.SUBMISSION_COLUMNS)
    repeated = pc.unique(subs.filter(pc.greater(pc.fill_null(subs.column("repeat"), 0), 0)).column("submission_id"))
    if not len(repeated):
        return None
    subs = subs.filter(pc.is_in(subs.column("submission_id"), value_set=repeated))
    gradings = subs.column("grading_id")
    verdicts = _table(run.dataset("verdicts"), "verdicts", rep.VERDICT_COLUMNS, gradings)
    flags = _table(run.dataset("flags"), "flags", rep.FLAG_COLUMNS, gradings)
    out = rep.repeatability(subs, verdicts, flags, seed=record.config.seed, samples=record.config.bootstrap_samples)
    if out is not None and write:
        fs.write_bytes_atomic(run.repeatability, out.model_dump_json(indent=2).encode(), endpoint_override)
    return out


def _table(source: TableSource | None, name: str, columns: list[str],
           gradings: pa.ChunkedArray | None = None) -> pa.Table:
    """`columns` of run table `name` (the rows of `gradings` only, when given): empty when it has none."""
    if source is None:
        return arrow_schema(name).empty_table().select(columns)
    if isinstance(source, pads.Dataset):
        where = None if gradings is None else pc.field("grading_id").isin(gradings.combine_chunks())
        return source.to_table(columns=columns, filter=where)
    table = source.select(columns)
    return table if gradings is None else table.filter(pc.is_in(table.column("grading_id"), value_set=gradings))
