"""Build a run folder (as a finished sweep writes it) from a ground truth, for reduction tests.

The ground truth has the shape of `examples/sample/ground_truth.json`:
``{"verdicts": {system: {task_id: {criterion_id: "pass"|"fail"}}}, "hallucinations": [{system,
task_id, deliverable, span, category, materiality, ...}]}``. Every judge agrees with it (unless a
`lenient` bias is asked for), the auditor confirms exactly its hallucinations, and the sweep's own
scoring (`evalcore.grading.scoring.score_submission`) and shard writer (`evalcore.storage.store.write_shard`) turn
that into rows, so the folder is what the real sweep would have produced.

On top of the plain truth the builder adds what the reduction's rules must handle: superseded
gradings (an earlier grading with different figures), a missing task, an incomplete and a too_long
current grading, a rejected file, reused calls and a preflight call with no system.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalcore.call_accounting import AWAITING_MARK
from evalcore.config.load import load_config
from evalcore.config.models import TribunalConfig, VendorMode
from evalcore.grading.scoring import AuditDone, AuditNotRun, score_panel, score_submission, should_audit
from evalcore.schema import FlagRow
from evalcore.storage.store import BenchmarkRef, ModelRef, RunRecord, TaskRef, write_json, write_shard

JUDGES = (("openai", "openai", "gpt-6-sol"), ("xai", "xai", "grok-4.7"), ("anthropic", "anthropic", "claude-opus-5-5"))
SYSTEMS = ("gpt-strong", "claude-average", "grok-weak", "fluent-hallucinator")
CATEGORIES = ("contradiction", "fabricated_source", "unsupported_specific")
CALL_COST = {"openai": 0.002, "xai": 0.003, "anthropic": 0.005, "auditor": 0.01}
CACHE_WRITE_USD = 0.001
"""What an Anthropic call that writes the prompt cache paid for the write (inside its cost)."""
CALL_TOKENS = {"openai": (1000, 100), "xai": (1100, 120), "anthropic": (1200, 150), "auditor": (5000, 400)}


def synthetic_ground_truth(seed: int = 7, n_tasks: int = 12, n_criteria: int = 5) -> dict[str, Any]:
    """A small ground truth with the sample's systems: strong, average, weak, and a hallucinator."""
    rnd = random.Random(seed)
    areas = ("real-estate", "employment", "litigation")
    tasks = [f"{areas[i % 3]}/task-{i:02d}/scenario-01" for i in range(n_tasks)]
    strength = {"gpt-strong": 0.93, "claude-average": 0.8, "grok-weak": 0.6, "fluent-hallucinator": 0.9}
    verdicts: dict[str, dict[str, dict[str, str]]] = {}
    halluc: list[dict[str, Any]] = []
    for system in SYSTEMS:
        verdicts[system] = {}
        for t in tasks:
            verdicts[system][t] = {
                f"C-{c:03d}": ("pass" if rnd.random() < strength[system] else "fail") for c in range(1, n_criteria + 1)
            }
            rate = 0.7 if system == "fluent-hallucinator" else 0.15
            for k in range(3):
                if rnd.random() < rate / (k + 1):
                    halluc.append(
                        {
                            "system": system, "task_id": t, "deliverable": "memo",
                            "span": f"The lease term is {rnd.randint(2, 40)} years ({system}, {k}).",
                            "category": CATEGORIES[rnd.randrange(3)],
                            "materiality": "material" if rnd.random() < 0.5 else "minor",
                            "evidence_document": "lease.pdf", "evidence_page": "Page 4",
                            "evidence_passage": "The term is five (5) years.",
                        }
                    )
    return {"verdicts": verdicts, "hallucinations": halluc}


@dataclass
class RunSpec:
    """What to put into the run besides the plain ground truth."""

    run_id: str = "run-test"
    seed: int = 20261130
    bootstrap_samples: int = 500
    missing: set[tuple[str, str]] = field(default_factory=set)
    """(system, task) pairs with no submission at all."""
    incomplete: set[tuple[str, str]] = field(default_factory=set)
    """(system, task) pairs whose current grading is incomplete (the anthropic judge abstained)."""
    awaiting: set[tuple[str, str]] = field(default_factory=set)
    """(system, task) pairs whose current grading is a `--detach` pass's: incomplete, its anthropic
    calls still in a batch (the placeholder's abstention, `evalcore.call_accounting.AWAITING_MARK`)."""
    too_long: set[tuple[str, str]] = field(default_factory=set)
    superseded: set[tuple[str, str]] = field(default_factory=set)
    """(system, task) pairs with an earlier, different grading that must be ignored."""
    rejected: list[tuple[str, str]] = field(default_factory=list)
    reused: set[tuple[str, str]] = field(default_factory=set)
    """(system, task) pairs whose calls were served from an earlier run (cost 0 here)."""
    lenient: Mapping[str, str] = field(default_factory=dict)
    """judge -> family: that judge passes every criterion of that family's systems."""
    extra_tasks: list[tuple[str, str]] = field(default_factory=list)
    """(task_id, area) benchmark tasks no system submitted (missing for everyone)."""
    judge_verdicts: Mapping[str, Mapping[str, Mapping[str, Mapping[str, str]]]] = field(default_factory=dict)
    """judge -> system -> task -> criterion -> verdict: what that judge said instead of the truth."""
    repeats: Mapping[tuple[str, str], list[Mapping[str, str]]] = field(default_factory=dict)
    """(system, task) -> one criterion -> verdict mapping per repeat (`tribunal retest` without
    --audit: repeat k graded after the original, every judge saying that verdict, not audited)."""


def _family(system: str) -> str | None:
    for prefix, fam in (("gpt", "openai"), ("claude", "anthropic"), ("grok", "xai")):
        if system.startswith(prefix):
            return fam
    return None


def test_record(
    run_id: str, cfg: TribunalConfig | None = None, tasks: list[dict[str, Any]] | None = None, uri: str = "examples/sample"
) -> RunRecord:
    """A complete run record as the sweep writes it (offline vendors, a fixed benchmark hash)."""
    cfg = cfg or load_config(vendors="offline")
    return RunRecord(
        run_id=run_id, created_at=0.0, code_version="test", vendors=VendorMode.OFFLINE,
        config_fingerprint="f" * 64, config=cfg,
        judges=[ModelRef(name=j.name, family=j.family, model=j.model) for j in cfg.judges],
        auditor=ModelRef(name=cfg.auditor.name, model=cfg.auditor.model),
        prompt_hashes={}, benchmark=BenchmarkRef(uri=uri, content_hash="h" * 64, tasks=[TaskRef(**t) for t in tasks or []]),
        submissions_uri=f"{uri}/submissions",
    )


test_record.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def build_run(run_uri: str, truth: Mapping[str, Any], spec: RunSpec | None = None) -> RunRecord:
    """Write run.json, the tables and _SUCCESS.json under `run_uri`; returns the run record."""
    spec = spec or RunSpec()
    cfg = load_config(vendors="offline", overrides={"seed": spec.seed, "bootstrap_samples": spec.bootstrap_samples})
    verdict_truth: Mapping[str, Mapping[str, Mapping[str, str]]] = truth["verdicts"]
    tasks: dict[str, int] = {}
    for per_task in verdict_truth.values():
        for t, crits in per_task.items():
            tasks[t] = len(crits)
    halluc: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for h in truth["hallucinations"]:
        halluc.setdefault((h["system"], h["task_id"]), []).append(h)
    task_refs = [{"id": t, "area": t.split("/")[0], "n_criteria": n} for t, n in sorted(tasks.items())]
    task_refs += [{"id": t, "area": a, "n_criteria": 3} for t, a in spec.extra_tasks]
    record = test_record(spec.run_id, cfg, task_refs)
    record.write(run_uri)
    shard = 0
    for system in sorted(verdict_truth):
        for task_id in sorted(verdict_truth[system]):
            key = (system, task_id)
            if key in spec.missing:
                continue
            crits = verdict_truth[system][task_id]
            tables: dict[str, list[dict[str, Any]]] = {"submissions": [], "verdicts": [], "flags": [], "calls": []}
            if key in spec.superseded:
                # an earlier grading where everything failed and a material flag was confirmed
                _grading(tables, spec, system, task_id, {c: "fail" for c in crits}, [
                    {"span": "old", "category": "contradiction", "materiality": "material", "deliverable": "memo"}
                ], graded_at=100.0, attempt=0, status=None, audit_always=True)
            status = ("incomplete" if key in spec.incomplete | spec.awaiting else "too_long" if key in spec.too_long
                      else None)
            truth_here = dict(crits)
            lenient = {j for j, fam in spec.lenient.items() if _family(system) == fam}
            _grading(tables, spec, system, task_id, truth_here, halluc.get(key, []), graded_at=200.0, attempt=1,
                     status=status, lenient=lenient)
            for k, said in enumerate(spec.repeats.get(key, []), start=1):
                _grading(tables, spec, system, task_id, said, [], graded_at=300.0 + k, attempt=10 + k, status=None,
                         repeat=k)
            write_shard(run_uri, f"part-{shard:06d}", tables)
            shard += 1
    rejected = [{"file": f"results/{s}/{t}/memo.docx", "reason": "not a docx file", "system": s, "task_id": t}
                for s, t in spec.rejected]
    preflight = [_call(spec, "", "", "", v, "preflight", None, 0) for v, _, _ in JUDGES]
    write_shard(run_uri, "part-rejected", {"rejected": rejected, "calls": preflight})
    write_json(f"{run_uri.rstrip('/')}/_SUCCESS.json", {"run_id": spec.run_id, "shards": shard})
    return record


def _call(
    spec: RunSpec, grading: str, system: str, task_id: str, vendor: str, purpose: str, cid: str | None,
    n: int, reused: bool = False,
) -> dict[str, Any]:
    tin, tout = CALL_TOKENS[vendor]
    return {
        "run_id": spec.run_id, "grading_id": grading, "submission_id": f"{system}::{task_id}" if system else "",
        "system": system, "task_id": task_id, "request_hash": f"{grading}-{vendor}-{purpose}-{cid}-{n}",
        "vendor": vendor, "family": "openai" if vendor == "auditor" else vendor, "model": "m",
        "purpose": purpose, "criterion_id": cid, "outcome": "ok", "input_tokens": tin, "output_tokens": tout,
        # a reused row keeps the paying call's figures here: the reduction must still charge 0
        "cost_usd": CALL_COST[vendor], "reused_from": "run-before" if reused else None,
        # the first call of a grading to Anthropic writes its prompt cache: part of its cost (1.25x input)
        "cache_write_tokens": tin // 2 if vendor == "anthropic" and n == 0 else 0,
        "cache_write_usd": CACHE_WRITE_USD if vendor == "anthropic" and n == 0 else 0.0,
    }


def _grading(
    tables: dict[str, list[dict[str, Any]]],
    spec: RunSpec,
    system: str,
    task_id: str,
    crits: Mapping[str, str],
    hallucinations: list[Mapping[str, Any]],
    *,
    graded_at: float,
    attempt: int,
    status: str | None,
    lenient: set[str] | None = None,
    audit_always: bool = False,
    repeat: int = 0,
) -> None:
    area = task_id.split("/")[0]
    sid = f"{system}::{task_id}"
    gid = f"g{attempt}-{system}-{task_id}"
    reused = (system, task_id) in spec.reused
    by_judge: dict[str, list[tuple[str, Any, str | None]]] = {}
    for judge, family, model in JUDGES:
        rows = []
        for cid, truth in sorted(crits.items()):
            verdict = "pass" if lenient and judge in lenient else truth
            verdict = spec.judge_verdicts.get(judge, {}).get(system, {}).get(task_id, {}).get(cid, verdict)
            reason = None
            if (system, task_id) in spec.awaiting and judge == "anthropic":
                verdict, reason = "abstain", f"transient after 0 attempt(s): in batch msgbatch_1 (in_progress); {AWAITING_MARK}"
            elif status == "incomplete" and judge == "anthropic" and cid == sorted(crits)[0]:
                verdict, reason = "abstain", "timeout after 6 attempts"
            rows.append((cid, verdict, reason))
            tables["verdicts"].append(
                {
                    "run_id": spec.run_id, "grading_id": gid, "submission_id": sid, "system": system,
                    "task_id": task_id, "area": area, "criterion_id": cid, "judge": judge,
                    "judge_family": family, "judge_model": model, "verdict": verdict,
                    "reasoning": f"{judge} on {cid}: the memo {'meets' if verdict == 'pass' else 'misses'} it.",
                    "abstain_reason": reason, "request_hash": f"{gid}-{judge}-{cid}",
                }
            )
            tables["calls"].append(_call(spec, gid, system, task_id, judge, "rubric", cid, attempt, reused))
        by_judge[judge] = rows
    if status == "too_long":
        tables["verdicts"] = [v for v in tables["verdicts"] if v["grading_id"] != gid]
        tables["calls"] = [c for c in tables["calls"] if c["grading_id"] != gid]
        scores = None
    else:
        pre = score_panel(by_judge)
        audit = should_audit(pre, "never" if repeat else "always" if audit_always else "scored")  # type: ignore[arg-type]
        flags = []
        if audit:
            for h in hallucinations:
                flags.append(("confirmed", h["materiality"], h))
            # the auditor also raised one flag it then rejected, and a grounding candidate merged into it
            flags.append(("rejected", None, {"span": "general law", "category": "unsupported_specific", "deliverable": "memo"}))
            if hallucinations:
                flags.append(("merged", None, dict(hallucinations[0])))
            for i, (st, mat, h) in enumerate(flags):
                tables["flags"].append(
                    {
                        "run_id": spec.run_id, "grading_id": gid, "submission_id": sid, "system": system,
                        "task_id": task_id, "area": area, "flag_index": i, "deliverable": h.get("deliverable", "memo"),
                        "span": h["span"], "location": "para 2", "category": h["category"],
                        "evidence_document": h.get("evidence_document", h.get("source_document")),
                        "evidence_passage": h.get("evidence_passage", h.get("source_passage")),
                        "evidence_page": h.get("evidence_page"),
                        "origin": "grounding" if st == "merged" else "auditor", "status": st,
                        "merged_into": 0 if st == "merged" else None, "materiality": mat,
                        "rationale": "checked against the lease", "auditor": "auditor", "auditor_model": "gpt-6-sol",
                    }
                )
            for purpose in ("detect", "verify"):
                tables["calls"].append(_call(spec, gid, system, task_id, "auditor", purpose, None, attempt, reused))
        gid_flags = [FlagRow.model_validate(f) for f in tables["flags"] if f["grading_id"] == gid]
        scores = score_submission(pre, AuditDone(gid_flags) if audit else AuditNotRun())
    tables["submissions"].append(
        {
            "run_id": spec.run_id, "grading_id": gid, "submission_id": sid, "system": system, "task_id": task_id,
            "area": area, "content_hash": "c", "n_criteria": len(crits),
            "status": status or ("complete" if scores and scores.complete else "incomplete"),
            "status_reason": (scores.reason if scores else "over the prompt budget"),
            "task_score": scores.task_score if scores else None,
            "all_pass_judges": scores.all_pass_judges if scores else None,
            "criterion_pass_rate": scores.criterion_pass_rate if scores else None,
            "near_pass_1": scores.near_pass_1 if scores else None,
            "near_pass_2": scores.near_pass_2 if scores else None,
            "audited": bool(scores and scores.audited), "material_flags": scores.material if scores else 0,
            "minor_flags": scores.minor if scores else 0, "gated": bool(scores and scores.gated),
            "hc_score": scores.hc_score if scores else None, "graded_at": graded_at,
        }
    )
    if repeat:  # every row of this grading is the repeat's
        for rows in tables.values():
            for row in rows:
                if row.get("grading_id") == gid:
                    row["repeat"] = repeat
