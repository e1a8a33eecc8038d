"""The documented cluster path, executed: `ray start --head` with token auth, then
`ray job submit --working-dir . --runtime-env cluster/runtime_env.yaml -- tribunal sweep …` of the
sample, to completion, then the run's tables read back.

Why a real head and a real submission: the packaging checks in test_cluster_files.py prove the
upload is small and clean, not that a job starts from it. This test runs the path cluster/README.md
documents on 127.0.0.1: the upload (honouring .gitignore/.rayignore/excludes), the runtime_env merge
with the driver's, token auth on the CLI, `--address auto` inside the job, the Parquet output.

Ray's temp dir is a fresh folder under the system temp dir, outside the working dir (a session
folder inside it once turned the upload into a 79 GB zip); the test asserts that. The head's
processes run in their own session and are ended by their process group, never by `ray stop`
(which would end every Ray instance on the machine).

Every wait for the head is on its readiness signal with a deadline in minutes
(`tests/ray_start.py`): `ray start` runs Ray's own CLI with the patient start-up waits, then the
job API and its job agent are polled; a busy machine makes this test slow, never fails it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.ray_start import PATIENT_ENV, STARTUP_DEADLINE_S, STARTUP_FAILED

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SAMPLE = ROOT / "examples" / "sample"


PATIENT_RAY_CLI = [
    sys.executable, "-c",
    f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tests.ray_start import patient_ray; patient_ray(); "
    "from ray.scripts.scripts import main; sys.argv[0] = 'ray'; sys.exit(main())",
]
"""Ray's own CLI (`ray ...`, as .venv/bin/ray runs it), waiting patiently for its raylet to register."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _ray_env(temp_dir: Path, token: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(
        PATIENT_ENV,
        RAY_AUTH_MODE="token",  # as cluster/aws.yaml starts its nodes
        RAY_AUTH_TOKEN=token,  # this test's own token: ~/.ray/auth_token is left alone
        RAY_TMPDIR=str(temp_dir),
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        RAY_USAGE_STATS_ENABLED="0",
    )
    return env


def _wait_for_job_api(address: str, start_log: str, deadline_s: float = STARTUP_DEADLINE_S) -> None:
    """`ray start` returns before the dashboard (the job API) listens; `ray job submit` does not
    retry. Wait on the API's own version endpoint, with a deadline (not a fixed sleep)."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            with urllib.request.urlopen(f"{address}/api/version", timeout=5):
                return
        except urllib.error.HTTPError:
            return  # it answers (401 without the token: token auth is on)
        except OSError:
            pass
        if time.monotonic() > end:
            raise AssertionError(f"the job API never answered at {address}; ray start said:\n{start_log}")
        time.sleep(0.2)  # polling a server that is starting, with a deadline


_TOKEN = secrets.token_hex(16)  # this session's own token: ~/.ray/auth_token is left alone


def _start_head() -> tuple[subprocess.Popen[str], str, Path, int]:
    """`ray start --head` in a new folder on newly chosen ports; returns the process (ended),
    what it printed, its folder and its dashboard port."""
    temp_dir = Path(tempfile.mkdtemp(prefix="trj-"))  # short: Ray's socket paths must stay short
    assert not temp_dir.resolve().is_relative_to(ROOT)
    dashboard = _free_port()
    head = subprocess.Popen(
        [
            *PATIENT_RAY_CLI, "start", "--head", "--node-ip-address=127.0.0.1",
            f"--port={_free_port()}", "--dashboard-host=127.0.0.1", f"--dashboard-port={dashboard}",
            f"--temp-dir={temp_dir}", "--num-cpus=2", "--disable-usage-stats",
            # every fixed default port chosen free: other Ray instances on this machine hold them
            f"--dashboard-agent-listen-port={_free_port()}", f"--dashboard-agent-grpc-port={_free_port()}",
            f"--runtime-env-agent-port={_free_port()}", f"--metrics-export-port={_free_port()}",
            f"--ray-client-server-port={_free_port()}",
        ],
        env=_ray_env(temp_dir, _TOKEN),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its daemons stay in this process group: ended together
    )
    try:
        out, _ = head.communicate(timeout=2 * STARTUP_DEADLINE_S)  # a hang guard: its own waits end first
    except BaseException:
        _end(head, temp_dir)
        raise
    return head, out, temp_dir, dashboard


def _end(head: subprocess.Popen[str], temp_dir: Path) -> None:
    """The whole process group of a head, and nothing else (its gcs_server ignores SIGTERM)."""
    try:
        os.killpg(head.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.fixture
def ray_head() -> Iterator[tuple[str, dict[str, str]]]:
    """A Ray head on 127.0.0.1 with token auth; yields the dashboard (job API) address and env.

    A start that really failed is made again, on new ports, until `STARTUP_DEADLINE_S` has passed:
    Ray and this fixture choose ports free before Ray's processes bind them, and another Ray
    starting at the same moment on the machine (the other test worker's sweeps) can take one; the
    raylet then exits before it registers, which `tests/ray_start.py` reports at once with Ray's
    "timed out during startup" (seen in a clean-clone CI run). Any other failure fails the test.
    """
    deadline = time.monotonic() + STARTUP_DEADLINE_S
    while True:
        head, out, temp_dir, dashboard = _start_head()
        if head.returncode == 0 or STARTUP_FAILED not in out or time.monotonic() > deadline:
            break
        _end(head, temp_dir)
    try:
        assert head.returncode == 0, out
        address = f"http://127.0.0.1:{dashboard}"
        _wait_for_job_api(address, out)
        yield address, _ray_env(temp_dir, _TOKEN)
    finally:
        _end(head, temp_dir)


def test_a_sweep_submitted_with_ray_job_submit_runs_the_sample_to_completion(
    ray_head: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    address, env = ray_head
    output = tmp_path / "runs"
    command = [
        str(BIN / "ray"), "job", "submit", "--address", address,
        "--working-dir", ".", "--runtime-env", "cluster/runtime_env.yaml", "--",
        "tribunal", "sweep", "examples/sample", "-s", "examples/sample/submissions",
        "-o", str(output), "--vendors", "offline", "--address", "auto", "--no-progress",
    ]
    # The head's job agent can register after the API answers: the server itself waits 10 s for
    # it, then says "No available agent ..., please try again later". Submit again until it is
    # there, with a deadline (nothing is submitted when the agent is missing).
    agent_deadline = time.monotonic() + STARTUP_DEADLINE_S
    while True:
        submit = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=800)
        if submit.returncode == 0 or "No available agent" not in submit.stdout + submit.stderr:
            break
        if time.monotonic() > agent_deadline:
            break
    log = submit.stdout + submit.stderr
    assert submit.returncode == 0, log[-4000:]
    assert "succeeded" in log.lower(), log[-4000:]
    [run] = [p for p in output.iterdir() if p.is_dir()]
    summary = json.loads((run / "_SUCCESS.json").read_text())
    assert summary, "the finished sweep writes its summary last"
    rows = pq.read_table(run / "submissions").to_pylist()
    submitted = [p for p in (SAMPLE / "submissions").glob("*/*/*") if p.is_dir()]
    assert len(rows) == len(submitted) > 0
    assert {r["status"] for r in rows} == {"complete"}
    verdicts = pq.read_table(run / "verdicts")
    assert verdicts.num_rows == sum(r["n_criteria"] for r in rows) * 3  # three judges, every criterion
    assert (run / "leaderboard.json").exists()
