"""A demo-like run for the team review's tests, built without Ray (`tests.runfolder`).

The sample's real task and memos (copied, so a payload can be planted), the four sample systems,
four material flags the auditor confirmed (two on fluent-hallucinator's memo, one on grok-weak's, one on
claude-average's), one criterion the judges split on, and a users file with two reviewers, a lead
and an admin. No span, reasoning or memo names a system, so a blind page can be checked for the
names. `hostile=True` plants ``<script>`` and ``<img onerror>`` payloads in gpt-strong's memo, in
a judge's reasoning and in a flag's span, each of which would set ``window.__pwned``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq

from jobs.review import accounts
from tests.runfolder import SYSTEMS, RunSpec, build_run

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample"
TASK = "commercial-contracts/msa-renewal"
PASSWORD = "correct horse battery staple"
USERS = {"ana": "reviewer", "ben": "reviewer", "lee": "lead", "root": "admin"}
PAYLOAD = ('<script>window.__pwned = "script";</script><img src=x onerror="window.__pwned = \'img\'">'
           '<svg onload="window.__pwned = \'svg\'"></svg>')
MATERIAL = [("fluent-hallucinator", "The renewal notice period is 45 days under clause 14.2."),
            ("fluent-hallucinator", "The service credit cap is 150 percent of monthly fees."),
            ("grok-weak", "The agreement renews for a five year term automatically."),
            ("claude-average", "Termination for convenience needs 10 business days notice.")]


def build_team_run(root: Path, *, hostile: bool = False) -> Path:
    """The run folder (its run.json naming the copied sample); the users file is `users_file(root)`."""
    shutil.copytree(SAMPLE, root / "sample")
    criteria = [f"C-{c:03d}" for c in range(1, 13)]
    spans = [span for _, span in MATERIAL]
    if hostile:
        spans[0] = spans[0] + " " + PAYLOAD
        memo = root / "sample" / "submissions" / "gpt-strong" / TASK / "memo.md"
        memo.write_text(memo.read_text(encoding="utf-8") + "\n\n" + PAYLOAD + "\n", encoding="utf-8")
    truth = {
        "verdicts": {s: {TASK: dict.fromkeys(criteria, "pass")} for s in SYSTEMS},
        "hallucinations": [
            {"system": system, "task_id": TASK, "deliverable": "memo", "span": span, "category": "unsupported_specific",
             "materiality": "material", "evidence_document": "msa.md", "evidence_page": None,
             "evidence_passage": "The notice period is 60 days."}
            for (system, _), span in zip(MATERIAL, spans, strict=True)
        ],
    }
    run = root / "run"
    build_run(str(run), truth, RunSpec(judge_verdicts={"xai": {"gpt-strong": {TASK: {"C-003": "fail"}}}}))
    record = (run / "run.json").read_text(encoding="utf-8")
    (run / "run.json").write_text(record.replace('"examples/sample', f'"{root / "sample"}'), encoding="utf-8")
    if hostile:
        for path in (run / "verdicts").rglob("*.parquet"):
            table = pq.read_table(path)
            rows = table.to_pylist()
            for r in rows:
                if (r["system"], r["criterion_id"], r["judge"]) == ("gpt-strong", "C-003", "openai"):
                    r["reasoning"] = "It meets the criterion. " + PAYLOAD
            pq.write_table(type(table).from_pylist(rows, schema=table.schema), path)
    path = users_file(root)
    for name, role in USERS.items():
        accounts.add(path, name, role, PASSWORD)  # type: ignore[arg-type]
    return run


def users_file(root: Path) -> Path:
    return root / "config" / "review-users.json"
