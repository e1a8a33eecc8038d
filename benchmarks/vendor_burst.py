"""A burst of calls through each adapter's rate budget against its emulator enforcing the same limits.

Done-when (issue 3): against an emulator enforcing the same limits as the budget, a burst of 2,000
calls produces no server 429s. This script counts them for each vendor (real SDK clients over
loopback), and reports throughput as a share of the limit, so a too-timid budget shows too.

The emulator enforces token buckets that start full; its clock runs 60/window times faster so a
"minute" lasts `--window` real seconds, and the budget uses the same window: the same limits on the
same time scale. Choose limits below what one process can push through the SDK (otherwise the
client's own speed, not the budget, keeps the server happy); `--control` also runs a budget that
believes in 3x the limits, which must get 429s.

    .venv/bin/python benchmarks/vendor_burst.py [--vendors xai,openai,anthropic] [--calls 2000]
        [--rpm 120] [--tpm 72000] [--window 0.25] [--control] [--out benchmarks/results/vendor_burst.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from doubles.emulators import (  # noqa: E402
    AnthropicEmulator,
    EmulatorConfig,
    OpenAIEmulator,
    ServerLimits,
    StaticResponder,
    XAIEmulator,
)
from doubles.emulators._limits import RateLimiter  # noqa: E402
from evalcore.config.models import VendorConfig  # noqa: E402
from evalcore.errors import VendorError  # noqa: E402
from evalcore.prompts import render_rubric  # noqa: E402
from evalcore.schema import Criterion, Deliverable, RubricAnswer  # noqa: E402
from evalcore.vendors.budget import RateBudget  # noqa: E402
from evalcore.vendors.registry import create_vendor  # noqa: E402

EMULATORS: dict[str, Any] = {"openai": OpenAIEmulator, "anthropic": AnthropicEmulator, "xai": XAIEmulator}
ENV = "TRIBUNAL_BENCH_BURST_KEY"


async def run(vendor: str, calls: int, rpm: int, tpm: int, window: float, scale: float) -> dict[str, Any]:
    limits = ServerLimits(requests_per_minute=rpm, tokens_per_minute=tpm)
    emu = EMULATORS[vendor](
        EmulatorConfig(limits=limits, max_recorded=10),
        responder=StaticResponder({"verdict": "pass", "reasoning": "ok"}),
    )
    start = time.monotonic()
    emu.engine.limiter = RateLimiter(limits, clock=lambda: start + (time.monotonic() - start) * 60 / window)
    async with emu:
        endpoint = f"http://{emu.host}" if vendor == "xai" else emu.base_url
        cfg = VendorConfig.model_validate(
            dict(
                adapter=vendor,
                name=vendor,
                family=vendor,
                model=f"{vendor}-bench",
                endpoint=endpoint,
                api_key_env=ENV,
                max_output_tokens=300,
                retry={"max_attempts": 6 if scale == 1 else 1, "base_delay_s": 0.001, "max_delay_s": 0.01},
            )
        )
        budget = RateBudget(rpm * scale, tpm * scale, window_s=window, safety=0.95 if scale == 1 else 1.0)
        requests = [
            render_rubric(
                task_id="t",
                instructions="Assess the memo.",
                criterion=Criterion(id=f"C-{i:04d}", title="Cure period", match_criteria="PASS if 30 days."),
                deliverables=[Deliverable(name="memo", text="The cure period is 30 days.")],
                boundary="cd" * 8,
            ).request_for(cfg)
            for i in range(calls)
        ]
        v = create_vendor(cfg, budget=budget)
        t0 = time.perf_counter()
        out = await v.complete_many(requests, RubricAnswer)
        wall = time.perf_counter() - t0
        await v.aclose()
        stats = emu.stats
    ok = sum(not isinstance(o, VendorError) for o in out)
    per_s_limit = min(
        rpm / window, tpm / window / max(stats.input_tokens + stats.output_tokens, 1) * max(stats.ok, 1)
    )
    return {
        "vendor": vendor,
        "budget_scale": scale,
        "calls": calls,
        "ok": ok,
        "failed": calls - ok,
        "wall_s": round(wall, 3),
        "calls_per_s": round(calls / wall, 1),
        "server_requests": stats.requests,
        "server_429s": stats.rate_limited,
        "server_limit_rejections": stats.limit_rejections,
        "budget_waits": budget.stats.waited,
        "limit_calls_per_s": round(per_s_limit, 1),
        "share_of_limit": round(calls / wall / per_s_limit, 3),
    }


def main() -> None:
    logging.getLogger("evalcore.vendors").setLevel(logging.ERROR)  # the control run gives up on purpose
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vendors", default="xai,openai,anthropic")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rpm", type=int, default=120, help="requests per window (the emulator's minute)")
    ap.add_argument("--tpm", type=int, default=72_000, help="tokens per window")
    ap.add_argument("--window", type=float, default=0.25, help="real seconds in the emulator's minute")
    ap.add_argument("--control", action="store_true", help="also run a budget at 3x the limits")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "vendor_burst.json"))
    args = ap.parse_args()
    os.environ.setdefault(ENV, "bench-key")
    results = []
    for vendor in args.vendors.split(","):
        for scale in (1.0, 3.0) if args.control else (1.0,):
            r = asyncio.run(run(vendor, args.calls, args.rpm, args.tpm, args.window, scale))
            results.append(r)
            print(
                f"{vendor:9} budget x{scale:g}: {r['ok']}/{r['calls']} ok, {r['calls_per_s']:7.1f} calls/s "
                f"({r['share_of_limit']:.0%} of the limit), server 429s {r['server_429s']}"
            )
    report = {
        "benchmark": "vendor_burst",
        "settings": {k: getattr(args, k) for k in ("calls", "rpm", "tpm", "window")},
        "target": "0 server 429s for every vendor at budget x1",
        "met": all(r["server_429s"] == 0 for r in results if r["budget_scale"] == 1.0),
        "results": results,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"target met: {report['met']}  -> {args.out}")


if __name__ == "__main__":
    main()
