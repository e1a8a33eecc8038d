"""Peers side by side: the same rate-limited workload through Tribunal, Inspect AI and Ray Data LLM.

Issue 15, item 5. One run of this script:

1. **Tribunal**: the real `tribunal sweep` of the sample (local Ray, real SDK clients) against
   fresh OpenAI / Anthropic / xAI emulators that enforce `--rpm` requests per minute per vendor
   as each vendor does (OpenAI: per-second slices, a bucket holding one second; Anthropic and
   xAI: a bucket holding the whole minute), answering after `--latency` seconds. The sweep's
   configuration is what `tribunal emulate --write-config` writes for those emulators.
2. **The workload**: every call the emulators answered in that run (judges, auditor, preflight),
   exported as (vendor, model, system prompt, user prompt, max output tokens) to a JSONL file.
3. **Peers**, each in its own virtualenv built from PyPI on first use under `benchmarks/.venvs/`
   (git-ignored), each against fresh emulators with the same limits: Inspect AI with its
   defaults and with `--inspect-connections`, on the vendors its providers can reach (OpenAI and
   Anthropic over HTTP; our xAI emulator speaks xAI's gRPC API, which Inspect's Grok provider does
   not); Ray Data LLM's HTTP request processor (OpenAI Chat Completions only) with its defaults
   and with `--ray-concurrency` / `--ray-qps` / `--ray-retries`.

Measured on the emulators' side, per system and vendor, from their request logs: the traffic
span (first request received to last answer sent), requests admitted, 429s, and the utilisation
of the limit — admitted ÷ what the limit allowed in that span (a full bucket plus its refill).
A system's time is its traffic span over the vendors it drives (process start-up, Ray start and
OCR are left out, for every system alike; process wall time is recorded too), and its ratio is
against Tribunal's span over the same vendors. Failed / missing results are what each system
reports for its own calls (for Tribunal, "missing" counts submissions left incomplete). The load average is recorded: the machine is shared.
For Tribunal, `whole_run` also gives each vendor's use of its limit from the end of the preflight
to its last answer, and the start-up before it apart (`whole_run`).

    python benchmarks/peers.py [--rpm 600] [--latency 1] [--systems tribunal,inspect,inspect-tuned,raydata,raydata-tuned]
        [--inspect-connections 40] [--ray-concurrency 10 --ray-qps 1 --ray-retries 8 --ray-batch-size 8]
        [--peer-timeout 600] [--workload FILE] [--merge-into JSON]
        [--readme]

`--workload FILE` keeps the exported workload there (or, when the systems do not start with
tribunal, replays it); `--merge-into JSON` adds this run's systems to an earlier results file
(a peer re-run with other settings). `--readme` rewrites the table between `<!-- peers:start -->` and `<!-- peers:end -->` in docs/PERFORMANCE.md.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from doubles.emulators import EmulatorConfig, FixedLatency, ServerLimits  # noqa: E402
from doubles.emulators._engine import Outcome, RecordedRequest  # noqa: E402
from doubles.emulators._set import EmulatorThread, start_in_thread  # noqa: E402
from doubles.emulators.serve import KEY_ENV, emulated_config  # noqa: E402
from evalcore.config.models import RateLimits  # noqa: E402
from evalcore.vendors.budget import VENDOR_BURST_S  # noqa: E402

SAMPLE = ROOT / "examples" / "sample"
VENVS = ROOT / "benchmarks" / ".venvs"
RUNNERS = ROOT / "benchmarks" / "peer_runners"
TPM = 1_000_000_000  # tokens are not the binding limit: requests per minute are
DUMMY_KEY = "emulated-key-not-a-secret"

#: Each peer's virtualenv: what `pip install` gets (pinned so runs compare over time).
PEER_PACKAGES: dict[str, list[str]] = {
    "inspect": ["inspect-ai==0.3.285", "openai", "anthropic"],
    # ray.data.llm's HTTP processor needs only ray[data] and aiohttp: no vLLM, no torch.
    "raydata": ["ray[data]==2.60.0", "aiohttp"],
}
#: The vendors each system can drive against these emulators.
VENDORS = {
    "tribunal": ("openai", "anthropic", "xai"),
    "inspect": ("openai", "anthropic"),
    "inspect-tuned": ("openai", "anthropic"),
    "raydata": ("openai",),
    "raydata-tuned": ("openai",),
}


def ensure_venv(name: str) -> Path:
    """The peer's python, building its virtualenv from PyPI the first time (marker: .ready)."""
    venv = VENVS / name
    python = venv / "bin" / "python"
    marker = venv / ".ready"
    want = "\n".join(PEER_PACKAGES[name])
    if marker.exists() and marker.read_text() == want:
        return python
    print(f"building {venv} ({', '.join(PEER_PACKAGES[name])}) ...", flush=True)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *PEER_PACKAGES[name]], check=True)
    marker.write_text(want)
    return python


class EmulatorProcesses:
    """Each vendor's emulator served by a process of its own (spawned), as `EmulatorThread` serves
    the three from one: `endpoints`, `requests(vendor)` and `stop()`.

    Why processes: a vendor's servers do not share a CPU with another vendor's. Served from one
    thread, the three shared one event loop, and when the sweep's grading opened, the Anthropic and
    xAI emulators' first ~220 requests (their buckets hold a minute) held that loop for ~1.4 s: the
    OpenAI requests Tribunal sent at 10 per second in that time were received bunched at its end,
    and the binding account looked idle (measured: sent at 0.86, 1.01, ... 2.06 s after the
    preflight, received at 2.26-2.40 s; `whole_run` counts what the emulator received)."""

    def __init__(self, configs: dict[str, EmulatorConfig]) -> None:
        ctx = mp.get_context("spawn")
        self._conns: dict[str, Connection] = {}
        self._procs: list[Any] = []
        for vendor, config in configs.items():
            ours, theirs = ctx.Pipe()
            proc = ctx.Process(target=_serve_one_vendor, args=(vendor, config, theirs), name=f"emulator-{vendor}",
                               daemon=True)
            proc.start()
            self._conns[vendor] = ours
            self._procs.append(proc)
        self.endpoints = {vendor: conn.recv() for vendor, conn in self._conns.items()}

    def requests(self, vendor: str) -> list[RecordedRequest]:
        """A copy of one emulator's recorded requests."""
        self._conns[vendor].send("requests")
        return cast("list[RecordedRequest]", self._conns[vendor].recv())

    def stop(self) -> None:
        """Stop every emulator process."""
        for conn in self._conns.values():
            conn.send("stop")
        for proc in self._procs:
            proc.join(30)

    def __enter__(self) -> EmulatorProcesses:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _serve_one_vendor(vendor: str, config: EmulatorConfig, conn: Connection) -> None:
    """One `EmulatorProcesses` process: serves `vendor` until told to stop (the set's two other
    servers listen unused)."""
    with start_in_thread({vendor: config}) as emus:
        conn.send(emus.endpoints[vendor])
        while conn.recv() == "requests":
            conn.send(emus.requests(vendor))  # type: ignore[arg-type]


Emulators = EmulatorThread | EmulatorProcesses


def start_emulators(rpm: int, latency_s: float, one_process: bool = False) -> Emulators:
    """Fresh emulators (full buckets), each vendor's limit shaped as the vendor enforces it: one
    process per vendor (`EmulatorProcesses`), or all three in a thread of this one."""
    configs = {
        vendor: EmulatorConfig(
            limits=ServerLimits(requests_per_minute=rpm, burst_s=VENDOR_BURST_S[vendor]),
            latency=FixedLatency(latency_s),
            max_recorded=None,
        )
        for vendor in ("openai", "anthropic", "xai")
    }
    if one_process:
        return start_in_thread(configs)
    return EmulatorProcesses(configs)


def traffic(emus: Emulators, vendors: tuple[str, ...], rpm: int) -> dict[str, Any]:
    """Per vendor and together: span, admitted, 429s, utilisation of the limit (from the logs)."""
    per: dict[str, Any] = {}
    firsts, lasts = [], []
    for vendor in vendors:
        recs = emus.requests(vendor)  # type: ignore[arg-type]
        if not recs:
            per[vendor] = {"requests": 0}
            continue
        first = min(r.received_monotonic for r in recs)
        last = max(r.finished_monotonic or r.received_monotonic for r in recs)
        admitted = sum(1 for r in recs if r.outcome != Outcome.RATE_LIMITED)
        limited = sum(1 for r in recs if r.outcome == Outcome.RATE_LIMITED)
        span = last - first
        allowed = max(rpm / 60.0 * VENDOR_BURST_S[vendor], 1.0) + rpm / 60.0 * span
        per[vendor] = {
            "requests": len(recs),
            "admitted": admitted,
            "ok": sum(1 for r in recs if r.outcome == Outcome.OK),
            "server_429s": limited,
            "span_s": round(span, 2),
            "utilisation": round(admitted / allowed, 3),
        }
        firsts.append(first)
        lasts.append(last)
    span = (max(lasts) - min(firsts)) if firsts else 0.0
    return {
        "span_s": round(span, 2),
        "server_429s": sum(v.get("server_429s", 0) for v in per.values()),
        "admitted": sum(v.get("admitted", 0) for v in per.values()),
        "per_vendor": per,
    }


def whole_run(emus: Emulators, rpm: int, started: float) -> dict[str, Any]:
    """Tribunal's use of each vendor's limit over the whole run (issue 23, item 3).

    The run is timed from the end of its preflight (the last preflight answer, on any vendor: no
    grading call may go out before every preflight has passed) to the vendor's last answer;
    what comes before — process, Ray and actor start, the preflight — is start-up, reported apart
    (`startup_s`, from the command's start). Use is the vendor's grading requests admitted ÷ what
    its limit admits in that time (a full bucket plus its refill). The binding vendor is the one
    whose last answer came last."""
    recs = {v: emus.requests(v) for v in ("openai", "anthropic", "xai")}
    preflights = [r for rs in recs.values() for r in rs if r.schema_name == "PreflightAnswer"]
    start = max((r.finished_monotonic or r.received_monotonic) for r in preflights) if preflights else started
    per: dict[str, Any] = {}
    for vendor, rs in recs.items():
        grading = [r for r in rs if r.schema_name != "PreflightAnswer" and r.outcome != Outcome.RATE_LIMITED]
        if not grading:
            continue
        first = min(r.received_monotonic for r in grading)
        end = max(r.finished_monotonic or r.received_monotonic for r in grading)
        span = end - start
        allowed = max(rpm / 60.0 * VENDOR_BURST_S[vendor], 1.0) + rpm / 60.0 * span
        per[vendor] = {"requests": len(grading), "span_s": round(span, 2),
                       "idle_before_first_s": round(first - start, 2), "use_of_limit": round(len(grading) / allowed, 3)}
    binding = max(per, key=lambda v: per[v]["span_s"])
    return {"startup_s": round(start - started, 2), "binding": binding, "binding_use": per[binding]["use_of_limit"],
            "per_vendor": per}


def export_workload(emus: Emulators, path: Path) -> int:
    """Every call the emulators answered (one per logical call: 429-ed attempts are left out)."""
    rows = []
    for vendor in ("openai", "anthropic", "xai"):
        rec: RecordedRequest
        for rec in emus.requests(vendor):
            if rec.outcome != Outcome.OK:
                continue
            body = rec.body
            max_out = body.get("max_output_tokens", body.get("max_tokens", body.get("max_completion_tokens")))
            rows.append({
                "vendor": vendor,
                "model": rec.model,
                "system": rec.system,
                "user": rec.user,
                "max_output_tokens": max_out if isinstance(max_out, int) else None,
            })
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(rows)


def run_tribunal(emus: Emulators, rpm: int, work: Path) -> dict[str, Any]:
    """`tribunal sweep` of the sample with the config `tribunal emulate --write-config` writes."""
    cfg = work / "emulated.yaml"
    limits = RateLimits(requests_per_minute=rpm, tokens_per_minute=TPM)
    cfg.write_text(yaml.safe_dump(emulated_config(emus.endpoints, limits=limits), sort_keys=False))
    env = {**os.environ, **{k: DUMMY_KEY for k in KEY_ENV.values()}, "RAY_AUTH_MODE": "disabled",
           "GRPC_VERBOSITY": "ERROR", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "jobs.cli", "sweep", str(SAMPLE), "-s", str(SAMPLE / "submissions"),
           "-o", str(work / "runs"), "--run-id", "peers", "--vendors", "real", "--config", str(cfg),
           "--no-progress", "--no-reduce"]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.monotonic() - t0
    out: dict[str, Any] = {"process_wall_s": round(wall, 1), "exit_code": proc.returncode,
                           "whole_run": whole_run(emus, rpm, t0)}
    success = work / "runs" / "peers" / "_SUCCESS.json"
    if proc.returncode not in (0, 3) or not success.exists():
        raise SystemExit(f"tribunal sweep failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    summary = json.loads(success.read_text())
    import pyarrow.parquet as pq

    calls = pq.read_table(work / "runs" / "peers" / "calls", columns=["outcome"]).column("outcome").to_pylist()
    # the workload is what this run sent, so no call can be missing from it: what can be missing
    # is a submission left incomplete (a call that failed for good, a shard that did not finish)
    incomplete = summary["graded"] - summary["complete"]
    out.update(calls=len(calls), answered=sum(1 for c in calls if c == "ok"),
               failed=sum(1 for c in calls if c != "ok"), missing=incomplete, incomplete_submissions=incomplete)
    return out


def run_peer(system: str, emus: Emulators, workload: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One peer in its own virtualenv; vendors it drives run concurrently, as one job would."""
    name = "inspect" if system.startswith("inspect") else "raydata"
    python = ensure_venv(name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(OPENAI_API_KEY=DUMMY_KEY, ANTHROPIC_API_KEY=DUMMY_KEY, RAY_AUTH_MODE="disabled",
               INSPECT_LOG_LEVEL="error", RAY_DATA_DISABLE_PROGRESS_BARS="1")
    cmds: list[list[str]] = []
    if name == "inspect":
        for provider in VENDORS[system]:
            base = emus.endpoints[provider]
            cmd = [str(python), str(RUNNERS / "inspect_run.py"), str(workload), "--provider", provider,
                   "--base-url", base, "--log-dir", str(work / f"logs-{system}-{provider}")]
            if system == "inspect-tuned":
                cmd += ["--max-connections", str(args.inspect_connections)]
            cmds.append(cmd)
    else:
        cmd = [str(python), str(RUNNERS / "raydata_run.py"), str(workload),
               "--url", emus.endpoints["openai"] + "/chat/completions"]
        if system == "raydata-tuned":
            cmd += ["--concurrency", str(args.ray_concurrency), "--qps", str(args.ray_qps),
                    "--max-retries", str(args.ray_retries), "--batch-size", str(args.ray_batch_size),
                    "--num-cpus", str(args.ray_concurrency + 2)]
        cmds.append(cmd)
    t0 = time.monotonic()
    procs = [subprocess.Popen(c, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=work)
             for c in cmds]
    reports: list[dict[str, Any]] = []
    timed_out = False
    for p in procs:
        try:
            stdout, stderr = p.communicate(timeout=max(args.peer_timeout - (time.monotonic() - t0), 1))
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, stderr = p.communicate()
            timed_out = True
        line = next((ln for ln in reversed(stdout.splitlines()) if ln.startswith("{")), None)
        reports.append(json.loads(line) if line else {"status": "no report", "stderr": stderr[-1500:]})
    wall = time.monotonic() - t0
    # a peer stopped at the timeout reports nothing: its calls are the workload's on its vendors
    samples = sum(1 for line in workload.read_text().splitlines() if json.loads(line)["vendor"] in VENDORS[system])
    answered = sum(r.get("answered", 0) for r in reports)
    failed = sum(r.get("failed", 0) for r in reports)
    return {
        "process_wall_s": round(wall, 1),
        "timed_out": timed_out,
        "calls": samples,
        "answered": answered,
        "failed": failed,
        "missing": samples - answered - failed,
        "reports": reports,
    }


LABELS = {
    "tribunal": "Tribunal (`tribunal sweep`)",
    "inspect": "Inspect AI, defaults",
    "inspect-tuned": "Inspect AI, max_connections={inspect_connections}",
    "raydata": "Ray Data LLM HTTP processor, defaults",
    "raydata-tuned": "Ray Data LLM, concurrency={ray_concurrency} × qps={ray_qps}, {ray_retries} retries",
}


def readme_table(report: dict[str, Any]) -> str:
    """The docs table: one row per system, per vendor it drives, Tribunal's figures alongside."""
    settings = report["settings"]
    res = report["results"]
    lines = [
        "| system | vendor | calls | traffic span | Tribunal's span (same vendor) | span ratio to Tribunal "
        "| utilisation of the limit | server 429s (Tribunal's) | failed / missing | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    tri = res.get("tribunal", {}).get("traffic", {}).get("per_vendor", {})
    for system, row in res.items():
        label = LABELS[system].format(**settings)
        fails = f"{row.get('failed')} / {row.get('missing')}" + (" (stopped at the timeout)" if row.get("timed_out") else "")
        for vendor in row["vendors"]:
            v = row["traffic"]["per_vendor"].get(vendor, {})
            if not v.get("requests"):
                continue
            t = tri.get(vendor, {})
            ratio = f"{v['span_s'] / t['span_s']:.2f}" if t.get("span_s") else "—"
            lines.append(
                f"| {label} | {vendor} | {v['ok']} | {v['span_s']:.1f} s | {t.get('span_s', 0):.1f} s | {ratio} "
                f"| {v['utilisation']:.2f} | {v['server_429s']} ({t.get('server_429s', '—')}) | {fails} "
                f"| {row['loadavg'][3]:.1f} |"
            )
        if system != "tribunal" and "span_ratio_to_tribunal" in row:
            lines.append(
                f"| {label} | **all its vendors** | {row['answered']} | {row['traffic']['span_s']:.1f} s "
                f"| {row['tribunal_span_s']:.1f} s | **{row['span_ratio_to_tribunal']:.2f}** | | "
                f"{row['traffic']['server_429s']} ({row['tribunal_429s']}) | {fails} | |"
            )
    return "\n".join(lines)


def write_readme(report: dict[str, Any], readme: Path = ROOT / "docs" / "PERFORMANCE.md") -> None:
    """Replace the table between the peers markers with this run's."""
    text = readme.read_text()
    head, rest = text.split("<!-- peers:start -->\n", 1)
    _, tail = rest.split("<!-- peers:end -->", 1)
    readme.write_text(head + "<!-- peers:start -->\n" + readme_table(report) + "\n<!-- peers:end -->" + tail)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rpm", type=int, default=600, help="requests per minute per vendor (server and budget)")
    ap.add_argument("--latency", type=float, default=1.0, help="seconds each answer takes")
    ap.add_argument("--systems", default="tribunal,inspect,inspect-tuned,raydata,raydata-tuned")
    ap.add_argument("--inspect-connections", type=int, default=40)
    ap.add_argument("--ray-concurrency", type=int, default=10)
    ap.add_argument("--ray-qps", type=int, default=1, help="per worker: concurrency x qps = the limit per second")
    ap.add_argument("--ray-retries", type=int, default=8)
    ap.add_argument("--ray-batch-size", type=int, default=8, help="rows per batch (one worker each)")
    ap.add_argument("--peer-timeout", type=float, default=600.0, help="a peer still running then is stopped")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "peers.json"))
    ap.add_argument("--readme", action="store_true", help="rewrite the peers table in docs/PERFORMANCE.md")
    ap.add_argument("--workload", help="where the exported workload is kept (or replayed from)")
    ap.add_argument("--merge-into", help="an earlier results JSON this run's systems are added to")
    ap.add_argument("--one-emulator-process", action="store_true",
                    help="serve the three emulators from one thread of this process (how the figures before "
                         "`whole_run`'s per-vendor processes were measured)")
    ap.add_argument("--from-json", help="only re-render the docs/PERFORMANCE.md table from a results file")
    args = ap.parse_args()
    if args.from_json:
        write_readme(json.loads(Path(args.from_json).read_text()))
        return
    systems = args.systems.split(",")
    if systems[0] != "tribunal" and not (args.workload and Path(args.workload).exists()):
        raise SystemExit("--systems must start with tribunal (its run exports the workload) or --workload must exist")
    results: dict[str, Any] = {}
    replaced: list[dict[str, Any]] = []  # earlier runs of a system this run re-runs, kept on record
    commands: list[str] = []
    if args.merge_into:
        earlier = json.loads(Path(args.merge_into).read_text())
        commands = earlier.get("earlier_commands", []) + [earlier["command"]]
        results, replaced = earlier["results"], earlier.get("replaced", [])
        replaced += [{"system": s, "settings": earlier["settings"], **results.pop(s)} for s in systems if s in results]
    with tempfile.TemporaryDirectory(prefix="tribunal-peers-") as tmp:
        work = Path(tmp)
        workload = Path(args.workload) if args.workload else work / "workload.jsonl"
        for system in systems:
            load_before = os.getloadavg()
            with start_emulators(args.rpm, args.latency, args.one_emulator_process) as emus:
                if system == "tribunal":
                    row = run_tribunal(emus, args.rpm, work)
                    row["workload_calls"] = export_workload(emus, workload)
                else:
                    row = run_peer(system, emus, workload, work, args)
                vendors = VENDORS[system]
                row["vendors"] = list(vendors)
                row["traffic"] = traffic(emus, vendors, args.rpm)
                if system == "tribunal":  # Tribunal on each peer's vendor subset, for like-with-like ratios
                    row["traffic_on"] = {
                        ",".join(v): traffic(emus, v, args.rpm) for v in {VENDORS[s] for s in VENDORS if s != "tribunal"}  # every peer, run now or merged
                    }
            row["loadavg"] = [round(x, 2) for x in (*load_before, *os.getloadavg())]
            results[system] = row
            t = row["traffic"]
            print(f"{system:14} span {t['span_s']:7.1f}s  admitted {t['admitted']:5}  429s {t['server_429s']:5}  "
                  f"answered {row.get('answered')}  failed {row.get('failed')}  missing {row.get('missing')}  "
                  f"process {row['process_wall_s']}s", flush=True)
            if "whole_run" in row:
                w = row["whole_run"]
                print(f"{'':14} whole run: {w['binding']} (binding) at {w['binding_use']:.3f} of its limit after "
                      f"{w['startup_s']:.1f}s of start-up", flush=True)
    base = results.get("tribunal", {})
    for system, row in results.items():
        if system == "tribunal":
            continue
        key = ",".join(VENDORS[system])
        ref = base.get("traffic_on", {}).get(key)
        if ref:
            row["tribunal_span_s"] = ref["span_s"]
            row["tribunal_429s"] = ref["server_429s"]
            row["span_ratio_to_tribunal"] = round(row["traffic"]["span_s"] / max(ref["span_s"], 1e-9), 2)
    report = {
        "benchmark": "peers",
        "command": "python benchmarks/peers.py " + " ".join(sys.argv[1:]),
        "earlier_commands": commands,  # the runs merged into this file (--merge-into)
        "settings": {
            k: getattr(args, k) for k in vars(args) if k not in ("out", "readme", "from_json", "workload", "merge_into")
        },
        "bucket_s": {v: VENDOR_BURST_S[v] for v in ("openai", "anthropic", "xai")},
        "packages": PEER_PACKAGES,
        "machine": f"{os.cpu_count()} cores, shared",
        "results": results,
        "replaced": replaced,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    if args.readme:
        write_readme(report)
    print(readme_table(report))
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
