"""Orchestration ceiling: judge calls per second and CPU per judge call of the framework alone.

Done-when (issue 15, item 2): calls/s and CPU-ms per judge call for the framework alone (the
zero-work vendor: every call answered at once with a fixed valid answer, `doubles/adapters/zero.py`)
and separately with the offline heuristics (`--vendors offline`), on N synthetic submissions from
the sample, through the real `tribunal sweep` (local Ray) in a fresh process. Issue 23, item 6:
the zero-work sweep's steady-state CPU per call within 1.25x of the in-process floor of the same
submissions, on the sample and on the lab benchmark (`steady_to_floor` in each zero row).

How it counts:
* CPU is the sweep's whole process tree — the CLI, Ray's daemons (GCS, raylet) and its workers —
  sampled with psutil every 0.1 s, keeping each pid's last `cpu_times()` and summing them at the
  end. `RUSAGE_CHILDREN` would miss most of it: Ray workers are not reaped by this process. CPU
  in the last <0.1 s of a process that exits is the only part missed (a floor, not a ceiling).
  Each sample also charges a process's CPU to what it is doing (`process_kind`: a Ray worker's
  title names its task), so `steady_cpu_ms_per_call_by_kind` says where the steady state's CPU
  went: grading workers, index builds, vendor actors, Ray's daemons, the driver.
* Startup (Python imports, loading the benchmark, `ray.init`, the vendor actors, the preflight)
  is separated from steady state: each finished shard prints one line (`--no-progress`), stamped
  here as it arrives; steady-state calls/s counts the calls of every shard after the first, over
  the time between the first and the last shard line, and its CPU is the tree's CPU between those
  two lines (sampled as each line arrives): on a shared machine, CPU-ms per call in steady state
  is the figure other work disturbs least.
* The machine is shared: the load average before and after each run is recorded, and a figure
  taken under load is a floor.

    python benchmarks/orchestration_ceiling.py [--n 300] [--modes zero,offline] [--profile DIR]
        [--shard-size S] [--max-in-flight W] [--lab-tasks K]

`--lab-tasks K` also runs each mode on the realistic-size benchmark (`tribunal synth --profile
lab`: 44-90 criteria, 20k-150k source tokens per task; K tasks x 4 systems), at the sweep's
default shards: on the sample's toy tasks, per-task work (a task's grounding index) is too small
to show.

The in-process floor rows grade the same submissions with `grade_submission` in this process (no
Ray, no Parquet), each task's index built once beforehand (`index_build_cpu_s`): what grading
costs per call before any orchestration, so what any orchestration on these cores can at best
reach. They are measured right after the benchmark's zero-work sweep. The sample also gets a row
without the grounding checks, and both benchmarks one with the process's long-lived objects
frozen out of the garbage collector, as the sweep's workers and actors do. Each zero-work sweep
row gets `steady_to_floor` (and `steady_to_frozen_floor`): its steady-state CPU per call, index
builds left out (`with_ratios`), over the floor's.

`--profile DIR` also records a py-spy profile of the zero-work sweep of the sample, and of the lab
benchmark with `--lab-tasks` (driver and workers, `py-spy record --subprocesses`, speedscope
format, `sweep-zero-<benchmark>.speedscope.json`) into DIR, and puts its top frames (by samples
where the frame is on top of the stack, summed over every process) in the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psutil
import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SAMPLE = ROOT / "examples" / "sample"


def zero_config(path: Path) -> Path:
    """Every judge and the auditor on the zero-work adapter (names and families kept)."""
    from evalcore.config.load import load_config

    cfg = load_config()
    entries = {
        "judges": [{**j.model_dump(mode="json"), "adapter": "zero"} for j in cfg.judges],
        "auditor": {**cfg.auditor.model_dump(mode="json"), "adapter": "zero"},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(entries, sort_keys=False))
    return path


def process_kind(cmdline: list[str]) -> str:
    """What a process of the sweep's tree is doing now, from its command line: Ray workers set
    their title to `ray::<task or actor>` while they run one, `ray::IDLE` between tasks (a worker
    not titled yet runs `default_worker.py`)."""
    for daemon in ("raylet", "gcs_server", "py-spy"):  # binaries, named by their path
        if cmdline and Path(cmdline[0]).name == daemon:
            return daemon
    line = " ".join(cmdline)
    if line.startswith(("ray::DashboardAgent", "ray::RuntimeEnvAgent")) or any(
            d in line for d in ("dashboard.py", "log_monitor.py", "monitor.py", "agent/main.py")):
        return "ray's python daemons (dashboard, agents, monitors)"
    if line.startswith(("ray::VendorActor", "ray::CostCapActor")):
        return "vendor actors"
    if line.startswith("ray::grade_shard"):
        return "grade_shard"
    if line.startswith("ray::build_source_index"):
        return "build_source_index"
    if line.startswith("ray::IDLE") or "default_worker.py" in line:
        return "idle workers"
    if line.startswith("ray::"):
        return "other ray tasks"
    return "other"


class TreeCpu:
    """CPU seconds of a process and every descendant it ever had (Ray daemons and workers too),
    and per kind of work (`process_kind`).

    Each sample charges the CPU a process used since its previous sample to what it was doing:
    a Ray worker's title names the task it runs, so the CPU of grading and of building grounding
    indexes is told apart. When the title changed between two samples, half of the interval goes
    to each (the switch is as likely anywhere in it): charging it all to the new title put ~50 ms
    of every finished task on "idle"."""

    def __init__(self, pid: int, every_s: float = 0.1) -> None:
        self.root = psutil.Process(pid)
        self.every_s = every_s
        self.last: dict[tuple[int, float], float] = {}  # (pid, create_time) -> user+system seconds
        self.kinds: Counter[str] = Counter()  # CPU seconds charged per kind of work
        self.kind: dict[tuple[int, float], str] = {}  # what each process was doing at its last sample
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._lock = threading.Lock()

    def sample(self) -> None:
        try:
            procs = [self.root, *self.root.children(recursive=True)]
        except psutil.Error:
            return
        with self._lock:
            for p in procs:
                try:
                    key = (p.pid, p.create_time())
                    t = p.cpu_times()
                    kind = "driver (tribunal sweep)" if p.pid == self.root.pid else process_kind(p.cmdline())
                except psutil.Error:
                    continue
                seconds = t.user + t.system
                spent = seconds - self.last.get(key, 0.0)
                before = self.kind.get(key, kind)
                self.kinds[before] += spent / 2
                self.kinds[kind] += spent / 2
                self.last[key], self.kind[key] = seconds, kind

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.sample()

    def __enter__(self) -> TreeCpu:
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def seconds(self) -> float:
        return sum(self.last.values())

    def by_kind(self) -> Counter[str]:
        """CPU seconds charged so far per kind of work."""
        with self._lock:
            return Counter(self.kinds)

    @property
    def processes(self) -> int:
        return len(self.last)


GROUPS = {  # where the time goes: the part of the framework -> its frames' names ("a|b": either)
    "imports (every process's start)": "_find_and_load",
    "grading worker (grade_shard)": "grade_shard",
    "  grade_submission": "grade_submission",
    "    grounding checks (audit candidates)": "grounding_candidates",
    "    rubric prompts": "rubric_prompts",
    "    call/verdict rows": "call_row",
    "  Parquet writes": "write_shard",
    "  worker -> actor transport": "RemoteVendor.complete_many|RemoteVendor._flush",
    "vendor actors (complete_many)": "VendorActor.complete_many",
    "Ray deserialisation": "deserialize_objects",
    "driver (run_sweep)": "run_sweep",
    "  OCR step": "ocr_before_grading",
    "  cost estimate": "CostWatch.start",
    "  ray.init": "init_ray",
}


def top_frames(speedscope: Path, k: int = 15, groups: dict[str, str] | None = None) -> dict[str, Any]:
    """The profile over every process: share of samples per part of the framework (inclusive;
    `groups`, default `GROUPS`), and the hottest frames (self: the frame on top of the stack;
    inclusive: anywhere in it)."""
    groups = GROUPS if groups is None else groups
    doc = json.loads(speedscope.read_text())
    frames = doc["shared"]["frames"]
    self_n: Counter[str] = Counter()
    incl_n: Counter[str] = Counter()
    group_n: Counter[str] = Counter()
    total = 0.0
    for prof in doc["profiles"]:
        for stack, weight in zip(prof["samples"], prof["weights"], strict=True):
            stack = [i for i in stack if not frames[i]["name"].startswith("process ")]  # py-spy's per-process root
            if not stack:
                continue
            total += weight
            bare = {frames[i]["name"] for i in stack}
            for group, fns in groups.items():
                if any(n == fn or n.endswith("." + fn) for fn in fns.split("|") for n in bare):
                    group_n[group] += weight
            names = [f"{frames[i]['name']} ({Path(frames[i].get('file') or '?').name})" for i in stack]
            self_n[names[-1]] += weight
            for name in set(names):
                incl_n[name] += weight
    share = lambda n: round(100 * n / max(total, 1e-9), 1)  # noqa: E731
    return {
        "sampled_s": round(total, 1),
        "groups_pct": {g: share(group_n[g]) for g in groups},
        "self_pct": [[name, share(n)] for name, n in self_n.most_common(k)],
        "inclusive_pct": [[name, share(n)] for name, n in incl_n.most_common(k)],
    }


def run_one(mode: str, manifest: Path, work: Path, profile: Path | None, shard_size: int | None,
            max_in_flight: int | None, benchmark: Path = SAMPLE) -> dict[str, object]:
    runs = work / f"runs-{mode}"
    cmd = [sys.executable, "-m", "jobs.cli", "sweep", str(benchmark), "-s", str(manifest), "-o", str(runs),
           "--run-id", mode, "--no-progress", "--no-reduce"]
    cmd += ["--vendors", "real", "--config", str(zero_config(work / "zero.yaml"))] if mode == "zero" else [
        "--vendors", "offline"]
    if shard_size:
        cmd += ["--shard-size", str(shard_size)]
    if max_in_flight:
        cmd += ["--max-in-flight", str(max_in_flight)]
    which = "sample" if benchmark == SAMPLE else "lab"
    speedscope = None if profile is None else profile / f"sweep-{mode}-{which}.speedscope.json"
    if speedscope is not None:
        py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        speedscope.parent.mkdir(parents=True, exist_ok=True)
        cmd = [py_spy, "record", "--subprocesses", "--rate", "50", "--format", "speedscope",
               "-o", str(speedscope), "--", *cmd]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "GRPC_VERBOSITY": "ERROR"}
    load_before = os.getloadavg()
    shard_lines: list[tuple[float, int]] = []  # (arrival time, calls of that shard)
    shard_cpu: list[float] = []  # the tree's CPU seconds when each shard line arrived
    shard_kinds: list[Counter[str]] = []  # the same per kind of work
    t0 = time.time()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    stderr: list[str] = []
    drain = threading.Thread(target=lambda: stderr.extend(proc.stderr or []), daemon=True)
    drain.start()
    with TreeCpu(proc.pid) as cpu:
        for line in proc.stdout or []:
            if line.startswith("shard "):
                calls = next(int(f[6:]) for f in line.split() if f.startswith("calls="))
                shard_lines.append((time.time(), calls))
                cpu.sample()
                shard_cpu.append(cpu.seconds)
                shard_kinds.append(cpu.by_kind())
        proc.wait()
    wall = time.time() - t0
    drain.join()
    if proc.returncode not in (0, 3, 4):  # 4: some synthetic inputs rejected (empty deliverables), the rest graded
        raise SystemExit(f"{mode} sweep failed ({proc.returncode}):\n{''.join(stderr)[-3000:]}")
    summary = json.loads((runs / mode / "_SUCCESS.json").read_text())
    calls = summary["paid_calls"] + summary["reused_calls"]
    steady: dict[str, object] = {}
    if len(shard_lines) >= 2:
        span = shard_lines[-1][0] - shard_lines[0][0]
        steady_calls = sum(c for _, c in shard_lines[1:])
        steady_cpu = shard_cpu[-1] - shard_cpu[0]
        steady = {"steady_calls": steady_calls, "steady_s": round(span, 2),
                  "steady_calls_per_s": round(steady_calls / span, 1) if span > 0 else None,
                  "steady_cpu_s": round(steady_cpu, 2),
                  "steady_cpu_ms_per_call": round(1000 * steady_cpu / max(steady_calls, 1), 3),
                  "steady_cpu_ms_per_call_by_kind": {
                      kind: round(1000 * (shard_kinds[-1][kind] - shard_kinds[0][kind]) / max(steady_calls, 1), 3)
                      for kind in sorted(shard_kinds[-1])},
                  "steady_index_build_cpu_s": round(shard_kinds[-1]["build_source_index"]
                                                    - shard_kinds[0]["build_source_index"], 2)}
    row: dict[str, object] = {
        "mode": mode,
        "benchmark": which,
        "profiled": profile is not None,
        "graded": summary["graded"],
        "complete": summary["complete"],
        "shards": len(shard_lines),
        "source_indexes_built": summary.get("source_indexes_built"),
        "judge_calls": calls,
        "process_wall_s": round(wall, 2),
        "sweep_s": round(summary["wall_s"], 2),
        "startup_s": round(shard_lines[0][0] - t0, 2) if shard_lines else None,
        "calls_per_s": round(calls / wall, 1),
        **steady,
        "tree_cpu_s": round(cpu.seconds, 2),
        "tree_processes": cpu.processes,
        "cpu_ms_per_call": round(1000 * cpu.seconds / max(calls, 1), 3),
        "driver_peak_rss_mb": round(summary["driver_peak_rss_mb"], 1),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }
    if speedscope is not None:
        row["profile"] = str(speedscope)
        row["top_frames"] = top_frames(speedscope)
    return row


FLOOR = "in-process floor"
FROZEN_FLOOR = "in-process floor, long-lived objects frozen out of the GC"


def in_process_floor(submissions: Path, work: Path, grounding: bool, benchmark: Path = SAMPLE,
                     frozen: bool = False) -> dict[str, object]:
    """`grade_submission` in plain asyncio in this process, every vendor the zero-work adapter: no
    Ray, no Parquet, no actors. What grading itself costs per judge call (prompts, request hashes,
    the adapter's budget and retry path, rows, and the grounding checks unless `grounding` is off):
    a floor under any orchestration of it. Single process, so CPU time = wall time.

    Each task's grounding index is built once, before the measured pass, and passed to
    `grade_submission` (`source_index`), as the sweep builds it once per task (`SourceIndexes`): the per-process
    cache holds 16 indexes, so the lab's 32 tasks graded in stream order would otherwise be
    rebuilt for every submission. Building them is reported apart (`index_build_cpu_s`): the floor
    is grading alone, the strictest comparison (the sweep's steady state also pays some builds).

    `frozen`: what is alive before the measured pass (modules, tasks, indexes) is left out of the
    cyclic collector's passes (`gc.freeze`), as the sweep's grading workers and vendor actors do
    (`jobs.sweep.shard_work.frozen_for_gc`, `jobs.sweep.actors.VendorActor`): the floor of an in-process
    grader managing its memory as the sweep does, so the sweep's gain from it is not counted as
    orchestration beating grading."""
    import asyncio
    import gc

    from evalcore.benchmark.instructions_only import audit_sources
    from evalcore.benchmark.loader import load_benchmark
    from evalcore.config.load import load_config
    from evalcore.grading.grade import grade_submission
    from evalcore.grounding import index_sources
    from evalcore.schema import Submission
    from evalcore.submissions.loader import iter_submissions
    from evalcore.vendors.sharding import create_account_vendors

    tasks = {t.id: t for t in load_benchmark(str(benchmark)).tasks}
    subs = [s for s in iter_submissions(str(submissions), tasks) if isinstance(s, Submission)]
    cfg = load_config(zero_config(work / "zero.yaml"), overrides={"audit": {"grounding_candidates": grounding}})
    t0 = time.process_time()
    indexes = {tid: index_sources(audit_sources(t)) for tid, t in tasks.items()} if grounding else {}
    build_s = time.process_time() - t0

    async def grade_all(batch: list[Submission]) -> tuple[float, int]:
        vendors = create_account_vendors(cfg.vendors())
        t0 = time.process_time()
        calls = 0
        for i in range(0, len(batch), 32):  # a shard's worth at a time, as a grading worker does
            results = await asyncio.gather(*(grade_submission(tasks[s.task_id], s, cfg, vendors, run_id="floor",
                                                              source_index=indexes.get(s.task_id))
                                             for s in batch[i : i + 32]))
            calls += sum(len(r.calls) for r in results)
        spent = time.process_time() - t0
        for v in vendors.values():
            await v.aclose()
        return spent, calls

    asyncio.run(grade_all(subs[: min(64, max(len(subs) // 8, 1))]))  # warm: imports, template hashes
    if frozen:
        gc.collect()
        gc.freeze()
    try:
        cpu_s, calls = asyncio.run(grade_all(subs))
    finally:
        gc.unfreeze()
    return {"mode": (FROZEN_FLOOR if frozen else FLOOR) + ("" if grounding else ", grounding checks off"),
            "benchmark": "sample" if benchmark == SAMPLE else "lab",
            "graded": len(subs), "judge_calls": calls, "cpu_s": round(cpu_s, 2),
            "cpu_ms_per_call": round(1000 * cpu_s / max(calls, 1), 3),
            "calls_per_s_per_core": round(calls / cpu_s, 1) if cpu_s else None,
            "index_builds": len(indexes), "index_build_cpu_s": round(build_s, 2)}


def with_ratios(rows: list[dict[str, object]]) -> None:
    """Each zero-work sweep row gets its benchmark's in-process floor and the ratio of its steady
    CPU per call to it (the target: <= 1.25x, issue 23 item 6).

    Index builds are left out on both sides: each task's index is built once in the sweep
    (`SourceIndexes`) and once in the floor, the same work, but the sweep's steady window holds
    only the builds that ran after the first shard (how many depends on scheduling: 12 of 32 on
    the lab benchmark, measured). The sweep's are the CPU of its workers while titled
    `ray::build_source_index` (`steady_index_build_cpu_s`); the floor's are `index_build_cpu_s`."""
    floors = {(r["mode"], r["benchmark"]): float(r["cpu_ms_per_call"]) for r in rows  # type: ignore[arg-type]
              if r["mode"] in (FLOOR, FROZEN_FLOOR)}
    for r in rows:
        floor = floors.get((FLOOR, r["benchmark"]))
        if r["mode"] != "zero" or r.get("profiled") or not floor or not r.get("steady_calls"):
            continue
        grading_s = float(r["steady_cpu_s"]) - float(r.get("steady_index_build_cpu_s") or 0.0)  # type: ignore[arg-type]
        per_call = 1000 * grading_s / float(r["steady_calls"])  # type: ignore[arg-type]
        r["steady_cpu_ms_per_call_without_index_builds"] = round(per_call, 3)
        r["floor_cpu_ms_per_call"] = floor
        r["steady_to_floor"] = round(per_call / floor, 3)
        frozen = floors.get((FROZEN_FLOOR, r["benchmark"]))
        if frozen:
            r["frozen_floor_cpu_ms_per_call"] = frozen
            r["steady_to_frozen_floor"] = round(per_call / frozen, 3)


def ordered(modes: list[str]) -> list[str]:
    """The zero-work mode first (its floors follow it), then the others in the order given; with
    no mode at all, one pass that measures the floors alone."""
    return sorted(modes, key=lambda m: m != "zero") or [""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=300, help="synthetic submissions (sample size; 0: none)")
    ap.add_argument("--lab-tasks", type=int, default=0,
                    help="also run on the realistic-size benchmark (`tribunal synth --profile lab`): this many "
                    "tasks, 4 submissions each")
    ap.add_argument("--modes", default="zero,offline")
    ap.add_argument("--shard-size", type=int, default=None, help="override the sweep's default")
    ap.add_argument("--max-in-flight", type=int, default=None, help="override the sweep's default")
    ap.add_argument("--profile", type=Path, default=None, help="also record a py-spy profile of the zero run here")
    ap.add_argument("--before", type=Path, default=None,
                    help="a speedscope profile of an earlier version, summarised next to this one's")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "orchestration_ceiling.json"))
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m]  # "": the in-process floors alone
    from doubles.synth.ground_truth import load_ground_truth
    from doubles.synth.scale import synthesize

    rows = []
    with tempfile.TemporaryDirectory(prefix="tribunal-ceiling-") as tmp:
        work = Path(tmp)
        manifest = work / "synth" / "manifest.jsonl"
        if args.n:
            synthesize(SAMPLE, load_ground_truth(SAMPLE / "ground_truth.json"), args.n, work / "synth", seed=7)
        # Each benchmark's floors are measured right after its zero-work sweep, whose steady state
        # they are compared with: on a shared machine the CPU a call costs drifts with the load.
        if args.n:
            for mode in ordered(modes):
                if mode:
                    rows.append(run_one(mode, manifest, work, None, args.shard_size, args.max_in_flight))
                    print(json.dumps(rows[-1]), flush=True)
                if mode == "zero" or "zero" not in modes:
                    for grounding, frozen in ((True, False), (True, True), (False, False)):
                        rows.append(in_process_floor(manifest, work, grounding, frozen=frozen))
                        print(json.dumps(rows[-1]), flush=True)
        if args.lab_tasks:
            from doubles.synth.lab import generate_lab

            lab = work / "lab"
            generate_lab(lab, tasks=args.lab_tasks, seed=7)
            for mode in ordered(modes):
                # the sweep's default shards (8 x 8): a few hundred submissions in shards of 32 would
                # leave one or two shards, and no steady state to measure
                if mode:
                    rows.append(run_one(mode, lab / "submissions", work / "lab-runs", None, None, None,
                                        benchmark=lab))
                    print(json.dumps(rows[-1]), flush=True)
                if mode == "zero" or "zero" not in modes:
                    for frozen in (False, True):
                        rows.append(in_process_floor(lab / "submissions", work, True, benchmark=lab, frozen=frozen))
                        print(json.dumps(rows[-1]), flush=True)
        if args.profile is not None and args.n:
            rows.append(run_one("zero", manifest, work / "p", args.profile, args.shard_size, args.max_in_flight))
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "top_frames"}), flush=True)
            print(json.dumps(rows[-1]["top_frames"], indent=1), flush=True)
        if args.profile is not None and args.lab_tasks:
            rows.append(run_one("zero", work / "lab" / "submissions", work / "p-lab", args.profile, None, None,
                                benchmark=work / "lab"))
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "top_frames"}), flush=True)
            print(json.dumps(rows[-1]["top_frames"], indent=1), flush=True)
    with_ratios(rows)
    result: dict[str, Any] = {
        "benchmark": "orchestration_ceiling",
        "command": "python benchmarks/orchestration_ceiling.py " + " ".join(sys.argv[1:]),
        "machine": f"{os.cpu_count()} cores (shared)",
        "target": "steady-state CPU per judge call (zero-work vendor, index builds left out) <= 1.25x the "
                  "in-process floor of the same submissions, on the sample and on the lab benchmark (issue 23, "
                  "item 6; the earlier target, >= 20,000 judge calls/s framework-only, is out of reach on 2 cores: "
                  "see the floor rows)",
        "met": {str(r["benchmark"]): float(r["steady_to_floor"]) <= 1.25  # type: ignore[arg-type]
                for r in rows if "steady_to_floor" in r},
        "rows": rows,
    }
    if args.before is not None:
        result["profile_before"] = {"file": str(args.before), **top_frames(args.before)}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
