"""Batch at size: a batch sweep of N synthetic submissions against the emulators with per-batch
limits low enough to be hit, compared with an online sweep of the same submissions.

Done-when (issue 23, item 7): batches split at the request and byte limits, the enqueued-token
limit respected (the OpenAI emulator enforces it per model and refuses as the vendor does:
accepted, then `failed` with `token_limit_exceeded`), nothing lost, nothing paid twice, and the
same leaderboard as online.

How: N submissions (`doubles.synth.scale.synthesize`, seed 7) over the sample widened to
`--task-copies` copies of each task (`doubles.synth.widen`: 25 copies, 200 tasks, so 20,000
submissions are 100 systems of 200 tasks, a real leaderboard's shape, not 2,500 systems of 8) go
through the real
`tribunal sweep` (local Ray) twice, `--online` then `--batch`, each in a fresh process and run
folder, against one set of emulators served by this process (the real SDKs over loopback; the
offline heuristics answer, deterministic per question, so both modes get the same answers; `--zero`
answers every question with one fixed valid answer instead, cheaper but a flat leaderboard). Every
entry runs on one vendor actor (`actors: 1`), so each entry has one batch queue. Each limit is set
low on one vendor, so that each binds somewhere: Anthropic's batches at `--max-requests`, xAI's at
`--max-bytes`, and OpenAI's at the model's batch queue limit (`--enqueued-tokens`, enforced by the
OpenAI emulator), split between the two entries that share the model (the OpenAI judge 3/4, the
auditor 1/4: `batch_limits.max_enqueued_tokens`); Anthropic and xAI document no enqueued-token
limit. The emulators forget a batch's request text once it has ended (`keep_request_text: false`),
so their memory grows by answers, not prompts.

Reported, from the batch run's journal (`<run>/_batches/`) and the emulators' own records:
batches per vendor entry and why each was sent (`closed_by`: requests, bytes, tokens, interval),
the largest batch against each limit, the most input tokens the OpenAI emulator ever held enqueued
for the model against its limit, batches refused, lost (accepted submissions without a row, calls
that failed) and paid twice (a request answered in two batches, by the journal, or billed twice,
by the emulator), and whether the leaderboards are identical: every column (ranks, intervals,
tiers, rates, flags) but what was billed (cost and tokens columns: batch prices are half, and a
request two submissions share is billed to whichever asked first; the tokens billed in all are
reported for both).

    python benchmarks/batch_scale.py                      # 20,000 submissions (a quiet machine: long)
    python benchmarks/batch_scale.py --submissions 500    # the same at small size
    python benchmarks/batch_scale.py --submissions 500 --overcommit 1.5   # the entries' shares exceed
        # the vendor's queue: some batches are refused (token_limit_exceeded) and sent again

Writes benchmarks/results/batch_scale.json (batch_scale_<N>[_overcommit<F>].json below 20,000
submissions or with --overcommit); `met` needs the full size. The load average before and after is
recorded (the machine may be shared: wall times taken under load are not the framework's).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import psutil
import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SAMPLE = ROOT / "examples" / "sample"
FULL_SIZE = 20_000

from benchmarks.scale_10k import accepted_ids  # noqa: E402
from doubles.emulators import BatchSettings, EmulatorConfig, ScriptedResponder  # noqa: E402
from doubles.emulators._set import EmulatorThread, start_in_thread  # noqa: E402
from doubles.emulators.responders import EmulatedRequest, OfflineResponder, Responder  # noqa: E402
from doubles.emulators.serve import budget_limits, emulated_config, emulator_config_from  # noqa: E402
from evalcore.config.models import BatchLimits  # noqa: E402
from evalcore.emulation import KEY_ENV, EmulationOptions  # noqa: E402
from evalcore.vendors.batch.journal import load_all  # noqa: E402

ZERO_ANSWERS: dict[str, dict[str, Any]] = {
    "RubricAnswer": {"verdict": "pass", "reasoning": "[zero-work responder] fixed answer"},
    "DetectionAnswer": {"flags": []},
    "VerificationAnswer": {"decisions": []},
    "PreflightAnswer": {"ok": True},
}


def zero_answer(request: EmulatedRequest) -> dict[str, Any]:
    """One fixed valid answer per schema (`doubles/adapters/zero.py`'s, over the wire)."""
    return ZERO_ANSWERS[request.schema_name or "PreflightAnswer"]


def emulators(args: argparse.Namespace) -> tuple[EmulatorThread, dict[str, EmulatorConfig]]:
    """The three emulators, enforcing the account limits of `--rpm` and OpenAI's batch queue limit."""
    options = EmulationOptions(requests_per_minute=args.rpm, tokens_per_minute=args.rpm * 10_000, seed=7)
    configs = emulator_config_from(options)
    batch = BatchSettings(completion_s=args.batch_delay, keep_request_text=False)
    configs = {vendor: c.model_copy(update={"batch": batch.model_copy(
        update={"max_enqueued_tokens": args.enqueued_tokens} if vendor == "openai" else {})})
        for vendor, c in configs.items()}
    responder: Responder = ScriptedResponder(zero_answer) if args.zero else OfflineResponder()
    return start_in_thread(configs, responder=responder), configs


def write_config(path: Path, emus: EmulatorThread, configs: dict[str, EmulatorConfig], args: argparse.Namespace) -> None:
    """Every entry aimed at the emulators, on one vendor actor, with a low limit (module doc)."""
    entries = emulated_config(emus.endpoints, limits=budget_limits(configs))
    for entry in [*entries["judges"], entries["auditor"]]:
        entry["actors"] = 1
        limits = entry.setdefault("batch_limits", {})
        if entry["adapter"] == "anthropic":
            limits["max_requests"] = args.max_requests
        elif entry["adapter"] == "xai":
            limits["max_bytes"] = args.max_bytes
        elif entry["adapter"] == "openai":  # the judge and the auditor share the model's queue
            share = (3 / 4 if entry["name"] != "auditor" else 1 / 4) * args.overcommit
            limits["max_enqueued_tokens"] = int(args.enqueued_tokens * share)
    body = {**entries, "batch": {"flush_interval_s": args.flush_interval, "poll_interval_s": 0.2}}
    path.write_text(yaml.safe_dump(body, sort_keys=False))


def sweep(mode: str, manifest: Path, work: Path, config: Path, args: argparse.Namespace) -> dict[str, Any]:
    runs = work / f"runs-{mode}"
    cmd = [sys.executable, "-m", "jobs.cli", "sweep", str(work / "benchmark"), "-s", str(manifest), "-o", str(runs),
           "--run-id", mode, "--vendors", "real", "--config", str(config), f"--{mode}", "--no-progress",
           "--shard-size", str(args.shard_size), "--max-in-flight", str(args.max_in_flight)]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "GRPC_VERBOSITY": "ERROR",
           **{var: "emulated-key-not-a-secret" for var in KEY_ENV.values()}}
    t0 = time.time()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    wall = time.time() - t0
    if proc.returncode not in (0, 4):  # 4: some synthetic inputs rejected (empty deliverables), the rest graded
        raise SystemExit(f"{mode} sweep failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    run = runs / mode
    summary = json.loads((run / "_SUCCESS.json").read_text())
    return {"run": run, "summary": summary, "wall_s": round(wall, 1)}


def rss_mb() -> float:
    """This process's resident memory (the emulators live here), in MB."""
    return round(float(psutil.Process().memory_info().rss) / 2**20, 1)


def leaderboard(run: Path) -> tuple[list[dict[str, Any]], int]:
    """The leaderboard's rows without what it was billed (cost and tokens columns), sorted; and the
    tokens billed in all.

    Why billing apart: batch prices are half, and a request two submissions share (a clone's) is
    paid once and billed to whichever asked first, which differs between runs; the tokens billed
    in all do not."""
    con = duckdb.connect()
    rows = con.execute(f"select * from read_parquet('{run / 'leaderboard.parquet'}') order by all").fetchall()
    names = [d[0] for d in con.description]
    billed = ("cost", "usd", "tokens")
    board = [{k: v for k, v in zip(names, row, strict=True) if not any(b in k for b in billed)} for row in rows]
    return board, sum(int(dict(zip(names, row, strict=True))["tokens"] or 0) for row in rows)


def lost(run: Path, summary: dict[str, Any], accepted: set[str]) -> dict[str, int]:
    con = duckdb.connect()
    graded = {r[0] for r in con.execute(
        f"select distinct submission_id from read_parquet('{run / 'submissions'}/*.parquet')").fetchall()}
    return {"accepted_without_a_row": len(accepted - graded), "failed_calls": int(summary.get("failed_calls", 0))}


def journal_report(run: Path, limits: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per vendor entry, from the batch journal: batches, why each was sent, the largest against the
    limits, refusals, and requests answered in more than one batch."""
    out: dict[str, Any] = {}
    for vendor, records in sorted(load_all(str(run)).items()):
        sent = [r for r in records if r.batch_id]
        answered: Counter[str] = Counter(h for r in sent for h, o in r.outcomes.items() if o == "succeeded")
        refused = [r for r in sent if "refused" in r.outcomes.values()]
        live = [r for r in sent if "refused" not in r.outcomes.values()]
        # at each submission, the tokens of the entry's batches not seen ended yet (an end is seen at
        # a poll, after the vendor's: an overestimate of what the vendor held)
        overlap = max((sum(o.input_tokens for o in live if o.submitted_at <= r.submitted_at < (o.ended_at or 1e18))
                       for r in live), default=0)
        out[vendor] = {
            "batches": len(sent),
            "closed_by": dict(Counter(r.closed_by or "unknown" for r in sent)),
            "refused": len(refused),
            "largest_batch_requests": max((len(r.requests) for r in sent), default=0),
            "largest_batch_input_tokens": max((r.input_tokens for r in sent), default=0),
            "max_enqueued_tokens_by_journal": overlap,
            "requests_answered": len(answered),
            "answered_in_two_batches": sum(1 for n in answered.values() if n > 1),
            "not_collected": sum(1 for r in sent if r.phase != "collected"),
            **{f"limit_{k}": v for k, v in limits[vendor].items()},
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--submissions", type=int, default=FULL_SIZE)
    ap.add_argument("--max-requests", type=int, default=300, help="requests per batch (Anthropic's entry)")
    ap.add_argument("--max-bytes", type=int, default=1_000_000, help="request bytes per batch (xAI's entry)")
    ap.add_argument("--enqueued-tokens", type=int, default=400_000,
                    help="the OpenAI emulator's batch queue limit per model (judge 3/4, auditor 1/4)")
    ap.add_argument("--overcommit", type=float, default=1.0,
                    help="the entries' shares of the OpenAI queue limit add up to this (> 1: the vendor refuses "
                    "some batches, token_limit_exceeded, as when another process shares the key)")
    ap.add_argument("--batch-delay", type=float, default=1.0, help="seconds an emulated batch takes to end")
    ap.add_argument("--flush-interval", type=float, default=2.0, help="batch.flush_interval_s")
    ap.add_argument("--rpm", type=int, default=9_000, help="each emulated account's requests/min (online run)")
    ap.add_argument("--shard-size", type=int, default=32)
    ap.add_argument("--max-in-flight", type=int, default=8)
    ap.add_argument("--task-copies", type=int, default=25,
                    help="each sample task this many times (doubles.synth.widen): N / (8 x copies) systems")
    ap.add_argument("--zero", action="store_true", help="one fixed answer per schema instead of the offline heuristics")
    ap.add_argument("--out", default=None)
    ap.add_argument("--keep", default=None, help="work in this folder and keep it (run folders, config)")
    args = ap.parse_args()
    from doubles.synth.scale import synthesize
    from doubles.synth.widen import widen

    n = args.submissions
    out = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / (
        ("batch_scale" if n >= FULL_SIZE else f"batch_scale_{n}")
        + (f"_overcommit{args.overcommit:g}" if args.overcommit != 1.0 else "") + ".json")
    with tempfile.TemporaryDirectory(prefix="tribunal-batch-scale-") as tmp:
        work = Path(args.keep) if args.keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        wide = widen(SAMPLE, args.task_copies, work / "benchmark")
        synth = synthesize(work / "benchmark", wide, n, work / "synth", seed=7)
        manifest = work / "synth" / "manifest.jsonl"
        accepted = accepted_ids(manifest, work / "benchmark")
        emus, configs = emulators(args)
        try:
            config = work / "config.yaml"
            write_config(config, emus, configs, args)
            load_before = os.getloadavg()
            rss = {"start": rss_mb()}
            online = sweep("online", manifest, work, config, args)
            rss["after_online"] = rss_mb()
            batch = sweep("batch", manifest, work, config, args)
            rss["after_batch"] = rss_mb()
            stores = emus.batch_stores()
            openai_store = stores["openai"]
            billed_twice = {v: sum(1 for k in s.billed.values() if k > 1) for v, s in stores.items()}
            emulator = {
                "openai_max_enqueued_tokens": dict(openai_store.max_enqueued),
                "openai_enqueued_token_limit": args.enqueued_tokens,
                "openai_refused_batches": len(openai_store.refusals),
                "batches_created": {v: s.creates for v, s in stores.items()},
                "requests_billed": {v: sum(s.billed.values()) for v, s in stores.items()},
                "requests_billed_twice": billed_twice,
            }
        finally:
            emus.stop()
        cfg = yaml.safe_load(config.read_text())
        limits = {e["name"]: {**BatchLimits().model_dump(), **e["batch_limits"]} for e in [*cfg["judges"], cfg["auditor"]]}
        journal = journal_report(batch["run"], limits)
        (board_online, tokens_online), (board_batch, tokens_batch) = leaderboard(online["run"]), leaderboard(batch["run"])
        board = {"online": board_online, "batch": board_batch}
        same = board["online"] == board["batch"]
        differences = [{"online": a, "batch": b} for a, b in zip(board["online"], board["batch"], strict=False)
                       if a != b][:5]
        lost_online = lost(online["run"], online["summary"], accepted)
        lost_batch = lost(batch["run"], batch["summary"], accepted)
    splits = Counter[str]()
    for v in journal.values():
        splits.update(v["closed_by"])
    max_enqueued = max(emulator["openai_max_enqueued_tokens"].values(), default=0)
    paid_twice = sum(v["answered_in_two_batches"] for v in journal.values()) + sum(billed_twice.values())
    lost_total = sum(lost_batch.values())
    result = {
        "benchmark": "batch_scale",
        "command": f"python benchmarks/batch_scale.py --submissions {n}"
        + (f" --max-requests {args.max_requests} --max-bytes {args.max_bytes} --enqueued-tokens {args.enqueued_tokens}")
        + f" --task-copies {args.task_copies}"
        + (f" --overcommit {args.overcommit:g}" if args.overcommit != 1.0 else "") + (" --zero" if args.zero else ""),
        "machine": f"{os.cpu_count()} cores (shared)",
        "responder": "zero-work (fixed answers)" if args.zero else "offline heuristics",
        "submissions": n,
        "tasks": len(wide.task_ids()),
        "systems": len(synth.systems),
        "accepted": len(accepted),
        "graded": {"online": online["summary"]["graded"], "batch": batch["summary"]["graded"]},
        "wall_s": {"online": online["wall_s"], "batch": batch["wall_s"]},
        "judge_calls": {m: r["summary"]["paid_calls"] + r["summary"]["reused_calls"] for m, r in
                        (("online", online), ("batch", batch))},
        "batches": sum(v["batches"] for v in journal.values()),
        "splits_by_cause": dict(splits),
        "per_vendor": journal,
        "emulator": emulator,
        "max_enqueued_tokens_seen": max_enqueued,
        "enqueued_token_limit": args.enqueued_tokens,
        "lost": {"online": lost_online, "batch": lost_batch},
        "paid_twice": paid_twice,
        "leaderboard_identical": same,
        "leaderboard_compared": "every column but cost and tokens billed (rank, intervals, tiers, rates, flags)",
        "tokens_billed": {"online": tokens_online, "batch": tokens_batch},
        "leaderboard_rows": len(board["online"]),
        "leaderboard_first_differences": [
            {k: (d["online"].get(k), d["batch"].get(k)) for k in d["online"] if d["online"].get(k) != d["batch"].get(k)}
            | {"system": d["online"].get("system")} for d in differences],
        "benchmark_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "benchmark_rss_mb": rss,
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }
    result["met"] = bool(
        n >= FULL_SIZE and splits["requests"] and splits["bytes"] and splits["tokens"] and args.overcommit <= 1.0
        and max_enqueued <= args.enqueued_tokens and not lost_total and not paid_twice and same)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{n} submissions: {result['batches']} batches, split by {dict(splits)}; OpenAI enqueued at most "
          f"{max_enqueued:,} of {args.enqueued_tokens:,} tokens ({emulator['openai_refused_batches']} refused); "
          f"lost {lost_total}, paid twice {paid_twice}, leaderboard identical: {same}; "
          f"wall {online['wall_s']} s online, {batch['wall_s']} s batch; met={result['met']}; wrote {out}")


if __name__ == "__main__":
    main()
