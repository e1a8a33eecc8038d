"""The tests' patient Ray start (`tests/ray_start.py`): a head whose GCS exited at start is started
again at once, not waited for until the port wait's deadline (240 s)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from tests.ray_start import PROGRESS_DEADLINE_S

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent(
    """
    import ray._private.services as services
    import tests.ray_start as ray_start

    noticed = []  # the processes the patient start saw exit (and so retried the start)
    check = ray_start._raise_if_exited

    def noting(node, process_type, before):
        try:
            check(node, process_type, before)
        except ray_start.RayletExited:
            noticed.append(process_type)
            raise

    ray_start._raise_if_exited = noting

    real = services.start_gcs_server
    killed = []

    def the_first_gcs_dies(*args, **kwargs):
        info = real(*args, **kwargs)
        if not killed:  # before it can publish its port
            info.process.kill()
            info.process.wait()
            killed.append(info.process.pid)
        return info

    services.start_gcs_server = the_first_gcs_dies
    cluster, _ = ray_start.start_cluster({"num_cpus": 0}, [])
    cluster.shutdown()
    print("RESULT", len(killed), noticed)
    """
)


@pytest.mark.ray
def test_a_head_whose_gcs_exited_at_start_is_started_again_without_waiting_out_the_port_deadline() -> None:
    with tempfile.TemporaryDirectory(prefix="trs", dir="/tmp") as raytmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env.update(RAY_TMPDIR=raytmp, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_AUTH_MODE="disabled",
                   PYTHONPATH=str(ROOT))
        proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=PROGRESS_DEADLINE_S)  # a hang guard
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, proc.stderr[-3000:]
    # one GCS killed, its exit seen during the port wait (not the wait's deadline: the code before
    # waited 240 s and failed with Ray's "Timed out waiting for file"), the cluster started anyway
    assert lines[-1] == "RESULT 1 ['gcs_server']", proc.stdout[-2000:] + proc.stderr[-2000:]
