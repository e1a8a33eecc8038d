"""The same sweep command on a real multi-node Ray cluster (head with 0 CPUs + a worker node).

Runs in its own process: the rest of the suite shares one local Ray session in this process, and
`ray.cluster_utils.Cluster` records its address in RAY_TMPDIR (private and short here).
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

from tests.ray_start import PATIENT_ENV

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = textwrap.dedent(
    """
    import json, sys
    from typer.testing import CliRunner
    from jobs.cli.app import app
    from tests.ray_start import start_cluster

    # started patiently: a busy machine makes it slow, never fails it (tests/ray_start.py)
    cluster, [worker] = start_cluster({"num_cpus": 0}, [{"num_cpus": 2}])
    try:
        out = sys.argv[1]
        result = CliRunner().invoke(app, [
            "sweep", "examples/sample", "-s", "examples/sample/submissions", "-o", out, "--run-id", "multi",
            "--vendors", "offline", "--address", cluster.address, "--no-progress", "--no-reduce",
        ])
        print("RESULT " + json.dumps({"exit": result.exit_code, "output": result.output[-3000:],
                                      "head": cluster.head_node.node_id, "worker": worker.node_id}))
    finally:
        import ray
        ray.shutdown()
        cluster.shutdown()
    """
)


@pytest.mark.ray
def test_sweep_on_a_two_node_cluster_grades_on_the_worker_node(tmp_path) -> None:
    from evalcore.storage.store import read_json, read_table

    with tempfile.TemporaryDirectory(prefix="trs", dir="/tmp") as raytmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env.update(PATIENT_ENV, RAY_TMPDIR=raytmp, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_AUTH_MODE="disabled",
                   GRPC_VERBOSITY="ERROR", PYTHONPATH=str(ROOT))
        proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "runs")], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=800)  # a hang guard, under pytest's
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, proc.stderr[-3000:]
    res = json.loads(lines[0][len("RESULT "):])
    assert res["exit"] == 0, res["output"]
    run = str(tmp_path / "runs" / "multi")
    summary = read_json(f"{run}/_SUCCESS.json")
    assert summary["complete"] == 32
    # the head has no CPU: every grading shard ran on the worker node; the vendor actors (num_cpus=0)
    # may live anywhere
    assert set(summary["shards_by_node"]) == {res["worker"]}
    assert read_table(run, "submissions").num_rows == 32
