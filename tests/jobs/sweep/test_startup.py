"""`jobs.sweep.startup`: how a sweep starts its local Ray."""

from __future__ import annotations

import pytest

from jobs.sweep.startup import LOCAL_LOG_MONITOR_ENV, LOCAL_SYSTEM_CONFIG


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


@pytest.mark.ray
def test_a_local_rays_log_monitor_lists_the_logs_every_10_s_and_the_drivers_environment_is_left_as_it_was(
    ray_local,
) -> None:
    """The session's Ray was started by `init_ray`: its log monitor (a child of this process, named
    by its session folder) got `LOCAL_LOG_MONITOR_ENV`, which the driver's own environment no
    longer holds."""
    import os

    import psutil
    import ray._private.worker as ray_worker

    node = ray_worker._global_node
    assert node is not None
    ours = f"--session-dir={node.get_session_dir_path()} "
    monitors = [p for p in psutil.Process().children(recursive=True)
                if "log_monitor" in (cmd := " ".join(p.cmdline()) + " ") and ours in cmd]
    assert len(monitors) == 1
    env = monitors[0].environ()
    assert {k: env.get(k) for k in LOCAL_LOG_MONITOR_ENV} == {
        "LOG_NAME_UPDATE_INTERVAL_S": "10", "RAY_LOG_MONITOR_MANY_FILES_THRESHOLD": "0",
    }
    assert not set(LOCAL_LOG_MONITOR_ENV) & set(os.environ)


def test_the_workers_get_the_emulated_modes_dummy_keys_but_never_a_real_key(monkeypatch) -> None:
    """A Ray that was already running never saw the driver's environment: the emulated mode's
    keys (no secret) travel in the runtime env, a real key never does (Ray shows that env)."""
    from evalcore.emulation import EMULATED_KEY, KEY_ENV
    from jobs.sweep.startup import _env_for_workers

    openai, anthropic, xai = (KEY_ENV[a] for a in ("openai", "anthropic", "xai"))
    monkeypatch.setenv(openai, EMULATED_KEY)
    monkeypatch.setenv(anthropic, "sk-ant-a-real-looking-key-0123456789")
    monkeypatch.delenv(xai, raising=False)
    env = _env_for_workers()
    assert env.get(openai) == EMULATED_KEY
    assert anthropic not in env and xai not in env
    assert "sk-ant-a-real-looking-key-0123456789" not in env.values()
