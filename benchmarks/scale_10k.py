"""Scale: 10,000 to 100,000 synthetic submissions end to end, output verified complete, driver
memory flat, and a driver SIGKILLed mid-run resumed with nothing lost.

Done-when (issue 15, item 4; issue 23, item 4 at 100k): N synthetic submissions from the sample (`doubles.synth.scale`, one
manifest; the smaller N are its first lines) through the real `tribunal sweep` (local Ray) in a
fresh process with the zero-work vendor (`doubles/adapters/zero.py`: every judge and the auditor
answer at once, so the run measures the framework, not a vendor's limit). For each N it records
wall time, calls/s, the driver's peak RSS (the sweep's own `ru_maxrss`) and the driver's RSS
sampled over the run (psutil, every 0.5 s), then verifies the run's tables:

* every submission the loader accepts from the manifest has exactly one `submissions` row, no
  other submission has one, and the count matches the sweep's summary;
* every complete submission has `n_criteria` × judges `verdicts` rows, and every verdict names a
  `calls` row of the same grading (`request_hash`): each number traces to the calls it came from;
* `calls` rows = the judge calls the vendor actors counted, each belonging to a graded submission
  (the preflight's one call per vendor entry aside).

`--kill-at K` kills the largest N's driver with SIGKILL once it has written the shard holding
its K-th submission (the `TRIBUNAL_TEST_KILL_AT` seam: `kill -9` at that point), then runs the
same command again: the resume must finish the run with every check above passing, attempt 1's
rows kept as they were (the resume grades none of them again: `skipped_done` = the rows at the
kill), and no call row written twice. What a SIGKILL can cost is the calls of the shards then in
flight (paid, never written): the row records that bound (shards in flight × shard size × calls
per submission) beside the calls the resume paid.

    python benchmarks/scale_10k.py [--n 1000 --n 5000 --n 10000] [--shard-size S] [--max-in-flight W]
        [--kill-at K] [--out FILE]

Writes benchmarks/results/scale_10k.json; the load average before and after each run is recorded
(the machine is shared: figures taken under load are floors).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import psutil

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SAMPLE = ROOT / "examples" / "sample"
RSS_LIMIT_MB = 600.0


def accepted_ids(manifest: Path, benchmark: Path = SAMPLE) -> set[str]:
    """The submissions the loader accepts from `manifest` over `benchmark` (what the sweep must
    grade, each once)."""
    from evalcore.benchmark.loader import load_benchmark
    from evalcore.schema import Submission
    from evalcore.submissions.loader import iter_submissions

    bench = load_benchmark(str(benchmark))
    items = iter_submissions(str(manifest), bench.task_map(), excluded=bench.excluded_task_ids())
    return {s.id for s in items if isinstance(s, Submission)}


def verify(run_uri: Path, summary: dict[str, Any], accepted: set[str], judges: int,
           earlier_calls: int = 0) -> dict[str, Any]:
    """The run's tables against the manifest and the summary (see module doc); problems listed.

    `earlier_calls`: call rows a killed earlier attempt wrote (the summary is the last attempt's)."""
    con = duckdb.connect()
    t = {name: f"read_parquet('{run_uri / name}/*.parquet')" for name in ("submissions", "verdicts", "calls")}
    q = lambda sql: con.execute(sql).fetchone()  # noqa: E731
    rows, distinct = q(f"select count(*), count(distinct submission_id) from {t['submissions']}")
    complete = q(f"select count(*) from {t['submissions']} where status = 'complete'")[0]
    short = q(f"""select count(*) from (select s.grading_id, any_value(s.n_criteria) * {judges} as want,
                  count(v.grading_id) as got from {t['submissions']} s left join {t['verdicts']} v
                  using (grading_id) where s.status = 'complete' group by s.grading_id) where want != got""")[0]
    untraced = q(f"""select count(*) from {t['verdicts']} v anti join {t['calls']} c
                     on v.grading_id = c.grading_id and v.request_hash = c.request_hash""")[0]
    calls, orphan_calls, preflight = q(f"""select count(*), count(*) filter (where s.grading_id is null
                                          and c.purpose != 'preflight'), count(*) filter (where c.purpose = 'preflight')
                                          from {t['calls']} c left join {t['submissions']} s using (grading_id)""")
    graded_ids = {r[0] for r in con.execute(f"select distinct submission_id from {t['submissions']}").fetchall()}
    verdicts = q(f"select count(*) from {t['verdicts']}")[0]
    twice = q(f"""select count(*) - count(distinct (grading_id, request_hash)) from {t['calls']}
                  where purpose != 'preflight'""")[0]
    counted_calls = summary["paid_calls"] + summary["reused_calls"] + earlier_calls
    problems = []
    if rows != distinct:
        problems.append(f"{rows - distinct} duplicate submission rows")
    if graded_ids != accepted:
        problems.append(f"{len(accepted - graded_ids)} accepted submissions without a row, "
                        f"{len(graded_ids - accepted)} rows of submissions not accepted")
    if rows != summary["graded"] + summary["skipped_done"]:
        problems.append(f"{rows} submission rows, the summary says {summary['graded']} graded "
                        f"and {summary['skipped_done']} done before")
    if twice:
        problems.append(f"{twice} call rows written twice")
    if short:
        problems.append(f"{short} complete submissions without all their verdict rows")
    if untraced:
        problems.append(f"{untraced} verdicts without their call row")
    if orphan_calls:
        problems.append(f"{orphan_calls} call rows of no graded submission")
    if calls != counted_calls:
        problems.append(f"{calls} call rows, the vendor actors counted {counted_calls}")
    return {"accepted": len(accepted), "submission_rows": rows, "complete": complete, "verdict_rows": verdicts,
            "call_rows": calls, "call_rows_written_twice": twice, "preflight_call_rows": preflight,
            "actor_counted_calls": counted_calls, "problems": problems, "verified": not problems}


def _wait_for_session(sid: int, deadline_s: float = 300.0) -> int:
    """Wait until every process of session `sid` has exited (on pidfds, never on time); returns how
    many were left. A killed driver's Ray workers outlive it by about a second, and one that was
    writing a shard finishes writing it: counting the run's rows before they exit misses it."""
    fds = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            state, _ppid, _pgrp, session = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[:4]
            if int(session) == sid and state != "Z":
                fds.append(os.pidfd_open(int(entry)))
        except (OSError, ValueError):  # exited meanwhile
            continue
    try:
        for fd in fds:
            readable, _, _ = select.select([fd], [], [], deadline_s)
            if not readable:
                raise SystemExit(f"a process of the killed driver's session {sid} still runs after {deadline_s} s")
    finally:
        for fd in fds:
            os.close(fd)
    return len(fds)


def _attempt(cmd: list[str], env: dict[str, str]) -> tuple[int, str, float, list[tuple[float, float]]]:
    """One driver process (a session of its own, with the local Ray it starts): its exit code,
    stderr, wall time and RSS sampled every 0.5 s; returns once every process of it has exited."""
    rss: list[tuple[float, float]] = []
    t0 = time.time()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True)
    stop = threading.Event()

    def sample() -> None:
        driver = psutil.Process(proc.pid)
        while not stop.wait(0.5):
            try:
                rss.append((time.time() - t0, driver.memory_info().rss / 2**20))
            except psutil.Error:
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    stop.set()
    sampler.join()
    wall = time.time() - t0
    _wait_for_session(proc.pid)
    return proc.returncode, err, wall, rss


def _count(run: Path, table: str) -> int:
    return int(duckdb.connect().execute(f"select count(*) from read_parquet('{run / table}/*.parquet')").fetchone()[0])


def run_one(n: int, manifest: Path, work: Path, config: Path, shard_size: int, max_in_flight: int,
            kill_at: int | None = None) -> dict[str, Any]:
    from jobs.sweep.identity import KILL_AT_ENV

    lines = manifest.read_text().splitlines(keepends=True)[:n]
    sub = manifest.with_name(f"manifest-{n}.jsonl")  # next to the original: its paths are relative
    sub.write_text("".join(lines))
    runs = work / f"runs-{n}"
    cmd = [sys.executable, "-m", "jobs.cli", "sweep", str(SAMPLE), "-s", str(sub), "-o", str(runs),
           "--run-id", "scale", "--vendors", "real", "--config", str(config), "--no-progress", "--no-reduce",
           "--shard-size", str(shard_size), "--max-in-flight", str(max_in_flight)]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "GRPC_VERBOSITY": "ERROR"}
    load_before = os.getloadavg()
    killed: dict[str, Any] | None = None
    if kill_at:
        shard = -(-kill_at // shard_size)  # the shard holding the kill_at-th submission
        code, err, wall_killed, rss_killed = _attempt(cmd, {**env, KILL_AT_ENV: f"shard:{shard}"})
        if code != -signal.SIGKILL:
            raise SystemExit(f"the sweep of {n} was to be killed after shard {shard}, it exited {code}:\n{err[-3000:]}")
        killed = {"kill_at_shard": shard, "wall_s": round(wall_killed, 1),
                  "driver_peak_rss_mb_sampled": round(max((r for _, r in rss_killed), default=0.0), 1),
                  "submission_rows": _count(runs / "scale", "submissions"),
                  "call_rows": _count(runs / "scale", "calls")}
    code, err, wall, rss = _attempt(cmd, env)
    if code not in (0, 4):  # 4: some synthetic inputs rejected (empty deliverables), the rest graded
        raise SystemExit(f"sweep of {n} failed ({code}):\n{err[-3000:]}")
    summary = json.loads((runs / "scale" / "_SUCCESS.json").read_text())
    judges = len(json.loads((runs / "scale" / "run.json").read_text())["judges"])
    calls = summary["paid_calls"] + summary["reused_calls"]
    quarter = [max((r for t, r in rss if t <= wall * q / 4), default=0.0) for q in (1, 2, 3, 4)]
    row: dict[str, Any] = {
        "n": n,
        "rejected": summary["rejected"],
        "graded": summary["graded"],
        "judge_calls": calls,
        "wall_s": round(wall, 1),
        "sweep_s": round(summary["wall_s"], 1),
        "submissions_per_s": round(summary["graded"] / summary["wall_s"], 1),
        "calls_per_s": round(calls / summary["wall_s"], 1),
        "driver_peak_rss_mb": round(summary["driver_peak_rss_mb"], 1),
        "driver_rss_mb_by_quarter": [round(x, 1) for x in quarter],
        "shards": summary["shards_written"],
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        **verify(runs / "scale", summary, accepted_ids(sub), judges, killed["call_rows"] if killed else 0),
    }
    if killed:
        per_submission = calls / max(summary["graded"], 1)
        problems = row["problems"]
        if summary["skipped_done"] != killed["submission_rows"]:
            problems.append(f"the resume found {summary['skipped_done']} submissions done, "
                            f"the killed attempt had written {killed['submission_rows']}")
        row["killed"] = {
            **killed,
            "resume_skipped_done": summary["skipped_done"],
            "resume_graded": summary["graded"],
            "resume_paid_calls": summary["paid_calls"],
            "repaid_calls_bound": round(max_in_flight * shard_size * per_submission),
            "repaid_calls_bound_note": "the calls of the shards in flight at the kill: paid by the killed "
                                       "attempt, never written, so paid again by the resume (at most "
                                       "max_in_flight shards x shard size x calls per submission)",
        }
        row["verified"] = not problems
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, action="append", help="submission counts (repeatable)")
    ap.add_argument("--shard-size", type=int, default=32)
    ap.add_argument("--max-in-flight", type=int, default=8)
    ap.add_argument("--kill-at", type=int, default=None,
                    help="SIGKILL the largest N's driver after the shard holding this submission, then resume")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "scale_10k.json"))
    args = ap.parse_args()
    from benchmarks.orchestration_ceiling import zero_config
    from doubles.synth.ground_truth import load_ground_truth
    from doubles.synth.scale import synthesize

    ns = sorted(args.n or [1000, 5000, 10000])
    rows = []
    with tempfile.TemporaryDirectory(prefix="tribunal-scale-") as tmp:
        work = Path(tmp)
        synthesize(SAMPLE, load_ground_truth(SAMPLE / "ground_truth.json"), ns[-1], work / "synth", seed=7)
        config = zero_config(work / "zero.yaml")
        for n in ns:
            rows.append(run_one(n, work / "synth" / "manifest.jsonl", work, config, args.shard_size, args.max_in_flight,
                                args.kill_at if n == ns[-1] else None))
            print(json.dumps(rows[-1]), flush=True)
    peaks = [float(r["driver_peak_rss_mb"]) for r in rows]
    result = {
        "benchmark": "scale_10k",
        "command": "python benchmarks/scale_10k.py " + " ".join(f"--n {n}" for n in ns)
        + f" --shard-size {args.shard_size} --max-in-flight {args.max_in_flight}"
        + (f" --kill-at {args.kill_at}" if args.kill_at else ""),
        "machine": f"{os.cpu_count()} cores (shared)",
        "vendors": "zero-work adapter for every judge and the auditor",
        "rows": rows,
        "driver_peak_rss_mb_max": max(peaks),
        "driver_rss_growth": round(peaks[-1] / peaks[0], 3),
        "target": f"completes, output verified, driver peak RSS <= {RSS_LIMIT_MB:.0f} MB and flat",
        "met": all(r["verified"] for r in rows) and max(peaks) <= RSS_LIMIT_MB and peaks[-1] / peaks[0] < 1.15,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"driver peak RSS {' / '.join(f'{p:.0f}' for p in peaks)} MB for N = {' / '.join(map(str, ns))}; "
          f"met={result['met']}; wrote {args.out}")


if __name__ == "__main__":
    main()
