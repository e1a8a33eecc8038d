"""A sweep over hostile submissions: each is rejected by name before any call, one too long is
graded ``too_long`` without grounding work, and every valid submission is still graded."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalcore.config.load import load_config
from evalcore.storage.store import read_table
from jobs.sweep.driver import run_sweep
from jobs.sweep.options import SweepOptions
from tests.badinputs.build import MB, MSA_DOCX, docx_bomb, random_text_bytes
from tests.jobs.conftest import SMALL_SUBMISSIONS, SMALL_TASKS

pytestmark = pytest.mark.ray

MSA, COC = "commercial-contracts/msa-renewal", "corporate-ma/change-of-control-consents"
"""The small sample's two tasks (`SMALL_TASKS`), each with one deliverable, `memo`."""


def test_sweep_rejects_a_bomb_an_empty_a_binary_and_a_hidden_system_and_grades_every_other_submission(
    ray_local, small_sample: Path, tmp_path: Path
) -> None:
    subs = tmp_path / "submissions"
    shutil.copytree(small_sample / "submissions", subs)
    bomb = subs / "gpt-strong" / COC / "memo.docx"
    (subs / "gpt-strong" / COC / "memo.md").unlink()
    docx_bomb(small_sample / MSA_DOCX, bomb, 160 * MB)
    empty = subs / "claude-average" / COC / "memo.md"
    empty.write_bytes(b"")
    binary = subs / "fluent-hallucinator" / MSA / "memo.md"
    binary.write_bytes(random_text_bytes(4096))
    (subs / "grok-weak").rename(subs / ".grok-weak")
    (subs / "gpt-strong" / MSA / "memo.md").write_text("The renewal term is 12 months.\n" * 100_000)  # 3.1 MB

    opts = SweepOptions(benchmark=str(small_sample), submissions=str(subs), output=str(tmp_path / "runs"),
                        config=load_config(vendors="offline"), vendors="offline", run_id="hostile", progress=False)
    summary = run_sweep(opts)

    assert summary.rejected == 4 and summary.too_long == 1 and summary.incomplete == 0
    # every valid submission of the three other systems (claude-average's MSA memo, fluent-hallucinator's
    # change-of-control memo): all but the hidden system's, the three rejected and the too long one
    assert summary.complete == SMALL_SUBMISSIONS - len(SMALL_TASKS) - 3 - 1
    rejected = read_table(summary.run_uri, "rejected").to_pylist()
    by_file = {r["file"]: r["reason"] for r in rejected}
    assert "max_unpacked_bytes" in by_file[str(bomb)] and "decompression bomb" in by_file[str(bomb)]
    assert "deliverable 'memo' is empty" in by_file[str(empty)]
    assert "looks binary" in by_file[str(binary)]
    assert "starts with '.'" in by_file[str(subs / ".grok-weak")]
    rows = read_table(summary.run_uri, "submissions").to_pylist()
    too_long = [r for r in rows if r["status"] == "too_long"]
    assert [r["submission_id"] for r in too_long] == [f"gpt-strong::{MSA}"]
    assert "for its deliverables alone" in too_long[0]["status_reason"]
    assert not {r["system"] for r in rows} & {"grok-weak", ".grok-weak"}
    calls = read_table(summary.run_uri, "calls").to_pylist()
    graded = {r["submission_id"] for r in rows if r["status"] == "complete"}
    assert {c["submission_id"] for c in calls if c["purpose"] != "preflight"} == graded  # nothing paid for the rest
