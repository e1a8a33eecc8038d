"""One vendor entry spread over 3 actors on a 3-node Ray cluster stays within the vendor's limit.

The real OpenAI SDK in each actor talks to the OpenAI emulator, which enforces the entry's limit
(1,200 requests/min in one-second slices: a bucket of 20 refilled at 20/s) and records when each
request arrived. The actors send as fast as their budgets let them; the emulator's own record is
then replayed into a bucket of the entry's limit: not one arrival over it, no 429 served, and
every actor carried a share. Runs in its own process like test_sweep_multinode.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from tests.arrivals import refused
from tests.ray_start import PATIENT_ENV

ROOT = Path(__file__).resolve().parents[3]
RPM, BURST_S, CALLS, ACTORS = 1200, 1.0, 160, 3

SCRIPT = textwrap.dedent(
    f"""
    import asyncio, json, sys
    import ray
    from evalcore.config.models import RateLimits, VendorConfig
    from doubles.emulators import EmulatorConfig, ServerLimits
    from doubles.emulators._set import start_in_thread
    from doubles.emulators.responders import StaticResponder
    from evalcore.schema import RubricAnswer
    from evalcore.vendors.protocol import JudgeRequest
    from evalcore.vendors.sharding import shard_of
    from jobs.sweep.vendor_pool import PooledVendor, add_up, start_pool, stats_refs
    from tests.ray_start import start_cluster

    limits = ServerLimits(requests_per_minute={RPM}, burst_s={BURST_S})
    emus = start_in_thread({{"openai": EmulatorConfig(limits=limits)}},
                           responder=StaticResponder({{"verdict": "pass", "reasoning": "ok"}}))
    # started patiently: a busy machine makes it slow, never fails it (tests/ray_start.py)
    cluster, workers = start_cluster({{"num_cpus": 0, "include_dashboard": False}}, [{{"num_cpus": 1}}] * 2)
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        cfg = VendorConfig(adapter="openai", name="openai", family="openai", model="gpt-test",
                           endpoint=emus.endpoints["openai"], api_key_env="TRIBUNAL_POOL_TEST_KEY",
                           limits=RateLimits(requests_per_minute={RPM}, tokens_per_minute=10**9, burst_s={BURST_S}),
                           actors={ACTORS}, warm_prompt_cache=False)
        pool = start_pool(cfg, "pooltest", [sys.argv[1]])
        vendor = PooledVendor(pool, cfg)
        reqs = [JudgeRequest(purpose="rubric", request_hash=f"h{{i}}", system_prompt="s", shared_prefix="p",
                             varying_suffix=f"criterion {{i}}", schema_name="RubricAnswer") for i in range({CALLS})]
        reqs += reqs[:20]  # identical requests: they meet at one actor and are paid once

        async def drive():
            batches = [reqs[i:i + 12] for i in range(0, len(reqs), 12)]
            return await asyncio.gather(*(vendor.complete_many(b, RubricAnswer) for b in batches))

        replies = [r for b in asyncio.run(drive()) for r in b]
        per_actor = ray.get(stats_refs({{"openai": pool}}))
        nodes = ray.get([h.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id())
                         for h in pool.handles])
        recorded = emus.requests("openai")
        stats = emus.stats()["openai"]
        print("RESULT " + json.dumps({{
            "ok": sum(1 for r in replies if hasattr(r, "output")),
            "in_order": all(hasattr(r, "output") and r.output.reasoning == "ok" for r in replies),
            "arrivals": sorted(r.received_monotonic for r in recorded if r.path.endswith("/responses")),
            "served_429": stats.rate_limited, "limit_rejections": stats.limit_rejections,
            "per_actor": [s["requests"] for s in per_actor], "paid": [s["paid_calls"] for s in per_actor],
            "routed": [sum(1 for r in reqs if shard_of(r.request_hash, {ACTORS}) == k) for k in range({ACTORS})],
            "total": add_up({{"openai": pool}}, per_actor)["openai"],
            "nodes": nodes, "workers": [w.node_id for w in workers],
        }}))
    finally:
        ray.shutdown()
        cluster.shutdown()
        emus.stop()
    """
)


@pytest.mark.ray
def test_an_entry_over_three_actors_on_two_worker_nodes_never_sends_more_than_its_limit(tmp_path) -> None:
    with tempfile.TemporaryDirectory(prefix="trp", dir="/tmp") as raytmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env.update(PATIENT_ENV, RAY_TMPDIR=raytmp, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_AUTH_MODE="disabled",
                   GRPC_VERBOSITY="ERROR", PYTHONPATH=str(ROOT), TRIBUNAL_POOL_TEST_KEY="emulated-not-a-secret")
        proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "run")], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=800)  # a hang guard, under pytest's
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, proc.stderr[-3000:]
    res = json.loads(lines[0][len("RESULT "):])
    assert res["ok"] == CALLS + 20 and res["in_order"]
    # what the vendor received, by its own clock: never more than the entry's limit, no 429
    assert len(res["arrivals"]) == CALLS
    assert res["served_429"] == 0 and res["limit_rejections"] == 0
    assert refused(res["arrivals"], RPM, BURST_S) == 0
    # the limit was what bound: a full bucket, then the refill rate
    span = res["arrivals"][-1] - res["arrivals"][0]
    assert span >= (CALLS - RPM / 60 * BURST_S) / (RPM / 60) * 0.9
    # every actor carried its hash-routed share, and identical requests were paid once
    assert res["per_actor"] == res["routed"] and min(res["per_actor"]) > 0
    assert sum(res["paid"]) == CALLS
    assert res["total"]["requests"] == CALLS + 20 and res["total"]["actors"] == ACTORS
    # spread over the nodes with CPUs: both workers, not the 0-CPU head
    assert sorted(set(res["nodes"])) == sorted(res["workers"]) and len(res["nodes"]) == ACTORS
