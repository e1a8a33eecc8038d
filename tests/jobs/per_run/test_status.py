"""`tribunal status` on a run whose batch journal is damaged: every record that cannot be read named
as `file: reason` (never a traceback), nothing moved by reading, and what recovery did shown."""

from __future__ import annotations

import json
import time
from pathlib import Path

from typer.testing import CliRunner

from evalcore.vendors.batch.journal import DAMAGED_MARK, BatchRecord, VendorObject
from jobs.cli.app import app


def _run_folder(tmp_path: Path) -> Path:
    run = tmp_path / "run-damaged"
    (run / "_batches" / "openai").mkdir(parents=True)
    (run / "_batches" / "anthropic").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"run_id": "run-damaged", "created_at": time.time(),
                                              "config": {"batch": {"enabled": True}}}))
    ok = BatchRecord(vendor="openai", model="m", label="a" * 32, batch_id="batch_ok", phase="submitted",
                     requests=["1" * 64, "2" * 64])
    lost = BatchRecord(vendor="openai", model="m", label="b" * 32, batch_id="batch_gone", phase="lost",
                       vendor_status="not found", requests=["3" * 64],
                       note="the vendor does not know batch batch_gone (404); no batch at the vendor carries its "
                            "label: its 1 request(s) are sent again")
    found = BatchRecord(vendor="anthropic", model="m", label="found-msgbatch_x", batch_id="msgbatch_x",
                        phase="submitted", requests=[], requests_known=False, confirmed=False,
                        note="found at the vendor among its unlabelled batches",
                        objects=[VendorObject(kind="batch", id="msgbatch_x")])
    for r in (ok, lost, found):
        (run / "_batches" / r.vendor / r.file_name).write_text(r.model_dump_json())
    (run / "_batches" / "openai" / ("0000000000007-" + "c" * 32 + ".json")).write_bytes(b'{"vendor": "openai", "mo')
    (run / "_batches" / "openai" / ("0000000000001-" + "d" * 32 + ".json" + DAMAGED_MARK + "1-abc")).write_bytes(b"x")
    (run / "_purge").mkdir()
    (run / "_purge" / "0000000000009-0badf00d.json").write_bytes(b"\xff\xfe")
    return run


def test_status_names_each_unreadable_journal_record_by_file_and_reason_and_moves_nothing(tmp_path: Path) -> None:
    run = _run_folder(tmp_path)
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    result = CliRunner().invoke(app, ["status", str(run)], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert result.exception is None
    text = " ".join(result.output.split())
    bad = run / "_batches" / "openai" / ("0000000000007-" + "c" * 32 + ".json")
    assert f"{bad}: not a readable record (Invalid JSON: EOF while parsing" in text
    assert f"{run / '_purge' / '0000000000009-0badf00d.json'}: not a readable record" in text
    assert "2 journal record(s) cannot be read; the next run sets them aside" in text
    assert "1 record(s) set aside by an earlier run" in text
    assert "lost: unknown to the vendor (requests sent again)" in text
    assert "batch_gone: the vendor does not know batch batch_gone (404)" in text
    assert "found at the vendor among its unlabelled batches" in text
    assert "(found by its time; not known to be the run's)" in text
    assert "2 batch(es) not collected yet" in text  # the lost one awaits nothing: its requests went again
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before  # reading status changes nothing

    report = json.loads(CliRunner().invoke(app, ["status", str(run), "--json"]).output)
    assert [line.split(": ")[0] for line in report["damaged_records"]] == [
        str(bad), str(run / "_purge" / "0000000000009-0badf00d.json")]
    assert len(report["set_aside_records"]) == 1
    lost = next(b for b in report["batches"]["openai"] if b["phase"] == "lost")
    assert "(404)" in lost["note"]
    # an unconfirmed batch (found by time only, perhaps another run's) is not counted as the run's holding
    assert all(o["vendor"] != "anthropic" for o in report["vendor_objects"])


def test_status_names_detached_submissions_as_awaiting_their_batch_and_prints_no_empty_note_line(
    tmp_path: Path,
) -> None:
    """A `--detach` pass writes its submissions incomplete while their calls wait in batches: status
    called them "incomplete" (as if calls had failed), and at 80 columns the stacked table of what the
    vendors hold printed a bare `note:` line for every object without a note."""
    from tests.runfolder import RunSpec, build_run, synthetic_ground_truth

    truth = synthetic_ground_truth(seed=3, n_tasks=2, n_criteria=2)
    pairs = sorted((s, t) for s, tasks in truth["verdicts"].items() for t in tasks)
    run = tmp_path / "run"
    build_run(str(run), truth, RunSpec(run_id="run-detached", awaiting=set(pairs[:3]), incomplete={pairs[3]}))
    held = [BatchRecord(vendor="anthropic", model="m", label="e" * 32, batch_id="msgbatch_8e1bec2ed9d3b1158f1dcf25",
                        phase="submitted", vendor_status="in_progress", requests=["4" * 64],
                        objects=[VendorObject(kind="batch", id="msgbatch_8e1bec2ed9d3b1158f1dcf25")]),
            BatchRecord(vendor="xai", model="m", label="f" * 32, batch_id="batch_4267c59debd15cd54d5d8324",
                        phase="collected", vendor_status="completed", requests=["5" * 64], succeeded=1,
                        objects=[VendorObject(kind="batch", id="batch_4267c59debd15cd54d5d8324", deletable=False)])]
    for r in held:
        (run / "_batches" / r.vendor).mkdir(parents=True)
        (run / "_batches" / r.vendor / r.file_name).write_text(r.model_dump_json())

    result = CliRunner().invoke(app, ["status", str(run)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert (f"submissions: {len(pairs) - 4} of {len(pairs)} complete (3 awaiting their batch (detached), "
            f"{len(pairs) - 4} complete, 1 incomplete)") in text, text
    assert "id: msgbatch_8e1bec2ed9d3b1158f1dcf25" in text and "held, in use by the run" in text  # stacked
    assert "note: xAI has no batch delete" in text  # a note there is still printed
    assert [line for line in result.output.splitlines() if line.strip() == "note:"] == [], result.output

    report = json.loads(CliRunner().invoke(app, ["status", str(run), "--json"]).output)
    assert report["submissions"] == {"awaiting_batch": 3, "complete": len(pairs) - 4, "incomplete": 1}
    assert not report["finished"]
