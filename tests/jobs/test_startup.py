"""`jobs.startup`: how a sweep starts its local Ray."""

from __future__ import annotations

import pytest

from jobs.startup import LOCAL_SYSTEM_CONFIG


@pytest.mark.ray
def test_a_local_ray_is_started_without_prestarted_idle_workers(ray_local) -> None:
    """The session's Ray is started by `init_ray` as a sweep starts one: the raylet runs with
    Ray's worker prestart off (no idle worker per CPU for every driver)."""
    import ray._private.worker as ray_worker

    node = ray_worker._global_node
    assert node is not None and node.head
    applied = node._config
    assert {k: applied.get(k) for k in LOCAL_SYSTEM_CONFIG} == {
        "enable_worker_prestart": False, "prestart_worker_first_driver": False,
    }
