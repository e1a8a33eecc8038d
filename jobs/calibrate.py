"""`tribunal calibrate RUN --labels LABELS`: read a run and a labels file, write and show the calibration.

The I/O half; the rules live in `evalcore.results.calibrate` (pure). Writes into the run folder
``calibration.json`` (the whole `Calibration`) and ``calibration.parquet`` (one row per judge ×
area, estimates flattened); `tribunal report` adds a calibration section when the JSON is there.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evalcore.errors import StorageError
from evalcore.results.calibrate import Calibration, calibrate_tables, judges_table
from evalcore.results.labels import load_labels
from evalcore.results.leaderboard import ALL_AREAS
from evalcore.storage import fs
from jobs.reduce import CI_MARKUP, _parquet_bytes, open_table, read_run_record

CALIBRATION_JSON = "calibration.json"
CALIBRATION_PARQUET = "calibration.parquet"


def calibrate_run(
    run_uri: str, labels_uri: str, *, write: bool = True, endpoint_override: str | None = None
) -> Calibration:
    """Calibrate a run folder against a labels file; write calibration.{json,parquet} into the run."""
    record = read_run_record(run_uri, endpoint_override)
    labels = load_labels(labels_uri, endpoint_override)
    submissions = open_table(run_uri, "submissions", endpoint_override)
    if submissions is None:
        raise StorageError(f"{fs.join(run_uri, 'submissions')}: no graded submissions in this run yet")
    cal = calibrate_tables(
        record, labels, submissions=submissions,
        verdicts=open_table(run_uri, "verdicts", endpoint_override),
        flags=open_table(run_uri, "flags", endpoint_override),
    )
    if write:
        fs.write_bytes_atomic(fs.join(run_uri, CALIBRATION_JSON), cal.model_dump_json(indent=2).encode(),
                              endpoint_override)
        fs.write_bytes_atomic(fs.join(run_uri, CALIBRATION_PARQUET), _parquet_bytes(judges_table(cal.judges)),
                              endpoint_override)
    return cal


def load_calibration(run_uri: str, endpoint_override: str | None = None) -> Calibration | None:
    """calibration.json of a run, or None when the run was never calibrated."""
    uri = fs.join(run_uri, CALIBRATION_JSON)
    try:
        return Calibration.model_validate_json(fs.read_bytes(uri, endpoint_override))
    except FileNotFoundError:
        return None


def render_calibration(cal: Calibration, console: Console | None = None) -> None:
    """Print the calibration as rich tables: judges, panel, auditor."""
    out = console or Console()
    out.print(f"[bold]Calibration of run {escape(cal.run_id)}[/] against {escape(cal.labels)}: {cal.labelled_submissions} labelled "
              f"submissions, {cal.matched_submissions} graded complete, {cal.not_in_run} not in the run, "
              f"{cal.not_complete} not complete. 95% bootstrap CIs over submissions.")
    t = Table(title="Judges against the experts", title_justify="left", box=box.SIMPLE_HEAVY)
    for h in ("judge", "area", "items", "accuracy", "Cohen κ", "false pass", "false fail"):
        t.add_column(h, justify="left" if h in ("judge", "area") else "right")
    for r in cal.judges:
        if r.area == ALL_AREAS:
            t.add_row(escape(r.judge), escape(r.area), str(r.items), r.accuracy.text(ci=CI_MARKUP),
                      r.kappa.text(percent=False, digits=2, ci=" [dim][{low:.2f}–{high:.2f}][/dim]"),
                      r.false_pass_rate.text(ci=CI_MARKUP), r.false_fail_rate.text(ci=CI_MARKUP))
    out.print(t)
    p = cal.panel
    out.print(f"Panel vs experts' all-pass on {p.submissions} fully labelled submissions "
              f"({p.expert_all_pass} all-pass): panel task-score error {p.task_score_error.text(ci=CI_MARKUP)}, "
              f"majority all-pass error {p.majority_error.text(ci=CI_MARKUP)}; "
              + "; ".join(f"{j} {e.text(ci=CI_MARKUP)}" for j, e in p.judge_error.items())
              + (f"; panel − best judge ({p.best_judge}) {p.panel_minus_best_judge.text(ci=CI_MARKUP)}"
                 if p.best_judge else ""))
    a = cal.auditor
    t = Table(title=f"Auditor on {a.audited_submissions} audited labelled submissions", title_justify="left",
              box=box.SIMPLE_HEAVY)
    for h in ("category", "labelled", "found", "recall", "confirmed", "true", "precision"):
        t.add_column(h, justify="left" if h == "category" else "right")
    for c in a.by_category:
        t.add_row(c.category, str(c.labelled), str(c.found), c.recall.text(ci=CI_MARKUP), str(c.confirmed), str(c.true),
                  c.precision.text(ci=CI_MARKUP))
    t.add_row("[bold]all[/]", str(a.labelled), str(a.found), a.recall.text(ci=CI_MARKUP), str(a.confirmed),
              str(a.true_confirmed), a.precision.text(ci=CI_MARKUP))
    out.print(t)
    out.print(f"Stage 1 recall {a.stage1_recall.text(ci=CI_MARKUP)}; Stage 2 rejected {a.stage2_rejected_real} real and "
              f"{a.stage2_rejected_not_real} unreal flags, confirmed {a.stage2_confirmed_not_real} unreal; "
              f"{a.not_audited} labelled hallucination(s) in submissions not audited. "
              f"Materiality (expert → auditor): {a.materiality}")
    for note in cal.notes:
        out.print(f"[yellow]note:[/yellow] {escape(note)}")
