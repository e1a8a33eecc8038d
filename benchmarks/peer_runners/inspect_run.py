"""Runs inside the Inspect AI virtualenv (benchmarks/.venvs/inspect): no Tribunal imports.

Sends one vendor's share of the exported workload through Inspect AI's own model layer —
`inspect_ai.eval` on a task whose samples are the recorded prompts, solver `generate()`, no
scorer — with Inspect's defaults or a given `max_connections`, and prints one JSON line:
samples answered, samples that ended in an error, and wall time.

    python inspect_run.py WORKLOAD.jsonl --provider openai|anthropic --base-url URL --log-dir DIR
        [--max-connections N]
"""

from __future__ import annotations

import argparse
import json
import time

from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.solver import generate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--provider", required=True, choices=["openai", "anthropic"])
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("--max-connections", type=int, default=None, help="default: Inspect's own")
    args = ap.parse_args()
    rows = [json.loads(line) for line in open(args.workload)]
    rows = [r for r in rows if r["vendor"] == args.provider]
    samples = [
        Sample(id=i, input=[ChatMessageSystem(content=r["system"]), ChatMessageUser(content=r["user"])])
        for i, r in enumerate(rows)
    ]
    task = Task(dataset=MemoryDataset(samples), solver=generate(), name=f"peers-{args.provider}")
    config: dict[str, object] = {"max_tokens": max(r["max_output_tokens"] or 1024 for r in rows)}
    if args.max_connections is not None:
        config["max_connections"] = args.max_connections
    t0 = time.monotonic()
    [log] = eval(
        task,
        model=f"{args.provider}/{rows[0]['model']}",
        model_base_url=args.base_url,
        log_dir=args.log_dir,
        display="none",
        fail_on_error=False,
        **GenerateConfig(**config).model_dump(exclude_none=True),  # type: ignore[arg-type]
    )
    wall = time.monotonic() - t0
    answered = failed = 0
    for s in log.samples or []:
        if s.error is not None or not s.output or not s.output.completion:
            failed += 1
        else:
            answered += 1
    print(json.dumps({"status": log.status, "samples": len(rows), "answered": answered,
                      "failed": failed, "missing": len(rows) - answered - failed, "wall_s": wall}))


if __name__ == "__main__":
    main()
