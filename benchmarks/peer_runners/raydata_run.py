"""Runs inside the Ray Data LLM virtualenv (benchmarks/.venvs/raydata): no Tribunal imports.

Sends the OpenAI share of the exported workload through Ray Data LLM's HTTP request processor
(`HttpRequestProcessorConfig` + `build_processor`, OpenAI-compatible Chat Completions) on a
local Ray started here, with the processor's defaults or a given concurrency / qps / retries,
and prints one JSON line: rows answered, rows failed, whether the dataset as a whole failed.

    python raydata_run.py WORKLOAD.jsonl --url URL/chat/completions [--concurrency N] [--qps Q]
        [--max-retries R] [--batch-size B] [--num-cpus C]

Tuning notes: a fixed pool of N workers each reserves a CPU, so Ray is started with
`--num-cpus` logical CPUs (the workers wait on the network, not the CPU); a batch goes to one
worker and is paced at its qps, so small batches spread the rows over the pool.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import ray
from ray.data.llm import HttpRequestProcessorConfig, build_processor


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--url", required=True)
    ap.add_argument("--key", default="emulated-key-not-a-secret")
    ap.add_argument("--concurrency", type=int, default=None, help="default: the processor's own")
    ap.add_argument("--qps", type=int, default=None)
    ap.add_argument("--max-retries", type=int, default=None)
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--num-cpus", type=int, default=2, help="logical CPUs of the local Ray (default: the machine's 2)")
    args = ap.parse_args()
    rows = [json.loads(line) for line in open(args.workload)]
    rows = [r for r in rows if r["vendor"] == "openai"]
    ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    tuned: dict[str, Any] = {
        k: v
        for k, v in (
            ("concurrency", args.concurrency), ("qps", args.qps), ("max_retries", args.max_retries),
            ("batch_size", args.batch_size),
        )
        if v is not None
    }
    config = HttpRequestProcessorConfig(url=args.url, headers={"Authorization": f"Bearer {args.key}"}, **tuned)

    def pre(row: dict[str, Any]) -> dict[str, Any]:
        messages = [{"role": "system", "content": row["system"]}, {"role": "user", "content": row["user"]}]
        return {"payload": {"model": row["model"], "messages": messages,
                            "max_completion_tokens": row["max_output_tokens"] or 1024}}

    def post(row: dict[str, Any]) -> dict[str, Any]:
        resp = row.get("http_response") or {}
        ok = isinstance(resp, dict) and bool(resp.get("choices"))
        return {"ok": ok}

    processor = build_processor(config, preprocess=pre, postprocess=post)
    t0 = time.monotonic()
    out: dict[str, Any] = {"samples": len(rows), "config": {k: v for k, v in tuned.items()}}
    try:
        result = processor(ray.data.from_items(rows)).take_all()
        answered = sum(1 for r in result if r["ok"])
        out.update(status="success", answered=answered, failed=len(result) - answered,
                   missing=len(rows) - len(result))
    except Exception as exc:  # the dataset fails as a whole when a row exhausts its retries
        out.update(status="error", answered=0, failed=0, missing=len(rows), error=f"{type(exc).__name__}: {str(exc)[:300]}")
    out["wall_s"] = time.monotonic() - t0
    print(json.dumps(out))


if __name__ == "__main__":
    main()
