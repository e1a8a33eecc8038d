"""Ray started so that a busy machine cannot fail a test: every wait for Ray to come up ends on
its real readiness signal, with a deadline in minutes, and a start that really failed is retried.

Ray 2.60 gives up on its own start after short fixed waits, each of which this 2-core machine
exceeds when other test runs or CPU burners share it:

* the GCS publishing its port: 30 s (`RAY_gcs_server_port_wait_time_s`; the multi-node pool test's
  head failed on it in CI);
* a raylet registering with the GCS: 30 s, a constant in `ray._private.node.Node.__init__`
  ("The current node timed out during startup");
* the raylet's agents registering with it (`agent_register_timeout_ms`, 30 s, after which the
  raylet exits), a worker process registering (`worker_register_timeout_seconds`, 60 s), and
  `ray.cluster_utils.Cluster.add_node` / `wait_for_nodes` (30 s).

`PATIENT_ENV` lengthens the ones Ray reads from the environment (each Ray process reads its
`RAY_<setting>` variables, so a driver's environment reaches the GCS, raylets, agents and
workers it starts); `wait_patiently_for_raylets()` lengthens the constant in this process.

A start can also really fail: Ray picks some ports free before its processes bind them, and a
Ray starting at the same moment elsewhere on the machine can take one; the raylet (or an agent,
which takes the raylet with it) exits and never registers. Waiting longer does not help, so the
wait watches the raylet and fails at once when it has exited, with Ray's own "timed out during
startup" wording: the callers retry exactly that (`start_cluster` below, `jobs.sweep.driver.init_ray`).
Nothing here sleeps for a fixed time: every wait polls its signal and ends as soon as it is there.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

STARTUP_DEADLINE_S = 240
"""How long any part of a Ray start may take before the test fails: 8x Ray's own 30 s, and under
pytest's per-test timeout, so a Ray that really cannot start still fails with Ray's message."""

PROGRESS_DEADLINE_S = 600
"""How long a test waits for a child process's progress (a sweep's first shard at the vendors, its
batches submitted, a cluster run finished) before calling it a hang. Each such wait ends as soon as
its signal comes (and, where the child can be watched, as soon as the child exits), so the figure
never slows a passing test: it is 10x the slowest wait seen on this machine under load, which a
fixed 180-300 s was not (a batch sweep's submit took over 240 s at load average 25 in CI), and
under pytest's 900 s timeout so a real hang fails with the test's own message."""

PATIENT_ENV: dict[str, str] = {
    # the GCS port file, and the driver's connection attempts to the GCS (about one per second)
    "RAY_gcs_server_port_wait_time_s": str(STARTUP_DEADLINE_S),
    "RAY_py_gcs_connect_timeout_s": str(STARTUP_DEADLINE_S),
    # a raylet waiting for its dashboard and runtime-env agents (Python processes: slow imports)
    "RAY_agent_register_timeout_ms": str(STARTUP_DEADLINE_S * 1000),
    # a worker or driver waiting for its raylet, a raylet waiting for a new worker to register
    "RAY_raylet_start_wait_time_s": str(STARTUP_DEADLINE_S),
    "RAY_worker_register_timeout_seconds": str(STARTUP_DEADLINE_S),
    # a process cut off from a starved GCS exits after this long (default 60 s)
    "RAY_gcs_rpc_server_reconnect_timeout_s": str(STARTUP_DEADLINE_S),
    # a node is declared dead after this many failed 3-second health checks (default 5)
    "RAY_health_check_failure_threshold": "40",
    # an actor call whose predecessor is late on the wire is cancelled after this long (default 30 s)
    "RAY_actor_scheduling_queue_max_reorder_wait_seconds": str(STARTUP_DEADLINE_S),
    # Ray runs its workers and actors at nice 15 (`worker_niceness`) to keep its own daemons
    # responsive. Beside other work on the machine (another test run, CPU burners) that starves the
    # tests' Ray: two `yes` burners at nice 0 took 71 % of a core each while every Ray worker of
    # the suite got a few %, and a clean-clone run beside them had done 7 % of its tests after
    # 27 minutes. The tests' workers compete as equals instead.
    "RAY_worker_niceness": "0",
}

STARTUP_FAILED = "timed out during startup"
"""Ray's words for a node that never registered; what `start_cluster` and `init_ray` retry."""


class RayletExited(Exception):
    """A starting node's raylet exited before it registered (not a RuntimeError: Ray's own wait
    loop would swallow it and go on waiting for the full 30 s)."""


_starting = threading.local()  # the Node whose raylet this thread is waiting for


def _raise_if_exited(node: Any, process_type: str, before: str) -> None:
    """RayletExited (worded as Ray's failed start, which the callers retry) when `node`'s process
    of `process_type` has exited."""
    for info in node.all_processes.get(process_type, []):
        code = info.process.poll()
        if code is not None:
            raise RayletExited(
                f"The current node {STARTUP_FAILED}: its {process_type} exited with code {code} before "
                f"{before} (a port taken by another Ray starting at the same moment?); logs in "
                f"{node.get_logs_dir_path()}"
            )


def _raise_if_raylet_exited(node_id: str) -> None:
    import ray._private.ray_constants as ray_constants

    node = getattr(_starting, "node", None)
    if node is None or getattr(node, "_node_id", None) != node_id:
        return
    _raise_if_exited(node, ray_constants.PROCESS_TYPE_RAYLET, "it registered")


def _watching_the_raylet(inner: Any, gcs_address: str, node_id: str) -> Any:
    """`inner(gcs_address, node_id)`, while watching the starting node's raylet: one query can
    block for a long time (the GCS client waits for the node), and an exited raylet ends it now.
    The query runs in a daemon thread; after a `RayletExited` it is left to end on its own."""
    result: list[Any] = []
    error: list[BaseException] = []

    def query() -> None:
        try:
            result.append(inner(gcs_address, node_id))
        except BaseException as exc:  # handed to the waiting thread
            error.append(exc)

    thread = threading.Thread(target=query, name="patient-get-node", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.2)  # polling the raylet while the query runs
        _raise_if_raylet_exited(node_id)
    if error:
        raise error[0]
    return result[0]


def wait_patiently_for_raylets() -> None:
    """In this process, wait up to `STARTUP_DEADLINE_S` (not 30 s) for a starting raylet to
    register, and stop waiting as soon as it has exited. Idempotent.

    `Node.__init__` starts the node's processes, then polls `ray._private.services.get_node`
    until the raylet is in the GCS and gives up after a fixed 30 s; the wrapper keeps polling the
    same signal itself, and watches the raylet process of the node being started.
    """
    import ray._private.node as node_module
    import ray._private.services as services

    inner = services.get_node
    if getattr(inner, "_patient", False):
        return

    start_ray_processes = node_module.Node.start_ray_processes

    def start_and_remember(self: Any) -> None:
        _starting.node = self
        start_ray_processes(self)

    def get_node(gcs_address: str, node_id: str) -> Any:
        deadline = time.monotonic() + STARTUP_DEADLINE_S
        while True:
            try:
                info = _watching_the_raylet(inner, gcs_address, node_id)
            except RuntimeError:  # not registered yet (Ray's own loop catches the same)
                if time.monotonic() > deadline:
                    raise
            else:
                _starting.node = None
                return info
            _raise_if_raylet_exited(node_id)
            time.sleep(0.2)  # polling a raylet that is starting, with a deadline

    # The head's GCS publishes its port in a file; Ray waits for the file (240 s with PATIENT_ENV)
    # without looking at the GCS process, so a GCS that exited at start cost the whole wait and
    # failed the test (CI beside two CPU burners). The wait now goes in 1 s slices and ends as a
    # failed start, which `start_cluster` retries, once the GCS has exited.
    import ray._private.ray_constants as ray_constants

    port_wait = node_module.wait_for_persisted_port  # type: ignore[attr-defined]
    start_gcs_server = node_module.Node.start_gcs_server

    def start_gcs_and_remember(self: Any) -> None:
        _starting.node = self
        start_gcs_server(self)

    def watched_port_wait(session_dir: str, node_id: str, port_name: str, timeout_ms: int) -> Any:
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                return port_wait(session_dir, node_id, port_name, timeout_ms=min(timeout_ms, 1000))
            except RuntimeError:  # the file is not there yet
                node = getattr(_starting, "node", None)
                if node is not None:
                    _raise_if_exited(node, ray_constants.PROCESS_TYPE_GCS_SERVER, f"it published its {port_name}")
                if time.monotonic() > deadline:
                    raise

    get_node._patient = True  # type: ignore[attr-defined]
    node_module.Node.start_ray_processes = start_and_remember  # type: ignore[method-assign]
    node_module.Node.start_gcs_server = start_gcs_and_remember  # type: ignore[method-assign]
    node_module.wait_for_persisted_port = watched_port_wait  # type: ignore[attr-defined]
    services.get_node = get_node


def patient_ray() -> None:
    """This process and every Ray process it starts from now on: all of the above."""
    os.environ.update(PATIENT_ENV)
    wait_patiently_for_raylets()


def start_cluster(head: dict[str, Any], workers: Sequence[dict[str, Any]]) -> tuple[Any, list[Any]]:
    """A `ray.cluster_utils.Cluster` of a head and `workers` (node arguments each), started
    patiently; returns it once every node is registered and alive in the GCS, with the worker
    nodes. A node whose raylet exited during its start is started again, in a new cluster, until
    `STARTUP_DEADLINE_S` has passed.
    """
    from ray.cluster_utils import Cluster

    patient_ray()
    deadline = time.monotonic() + STARTUP_DEADLINE_S
    while True:
        cluster = Cluster()
        try:
            cluster.add_node(wait=False, **head)  # Node() itself waited for the raylet (above)
            nodes = [cluster.add_node(wait=False, **args) for args in workers]
            cluster.wait_for_nodes(timeout=max(deadline - time.monotonic(), 30.0))  # the live nodes in the GCS
            return cluster, nodes
        except Exception as exc:
            if STARTUP_FAILED not in str(exc) or time.monotonic() > deadline:
                raise
            failed = getattr(_starting, "node", None)
            if failed is not None:  # the node that failed is not in the cluster: end it here
                failed.kill_all_processes(check_alive=False, allow_graceful=False, wait=True)
            cluster.shutdown()
