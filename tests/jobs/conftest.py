"""Fixtures for the Ray layer: one real local Ray cluster per session, emulators, the sample."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalcore.config.load import load_config
from evalcore.config.models import TribunalConfig

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample"
WRONG_KEY_ENV = "TRIBUNAL_TEST_WRONG_KEY"
WRONG_KEY = "sk-SENTINEL-wrong-key-0123456789"
"""A key the emulators refuse, in the environment the session's Ray workers inherit."""


@pytest.fixture(scope="session")
def ray_local(s3_server: str) -> Iterator[None]:
    """A real local Ray cluster for the whole session (ray.init costs seconds; start it once).

    Workers get the local S3 endpoint and dummy credentials through runtime_env, exactly as the
    CLI passes them on a real cluster. It starts patiently (`tests/ray_start.py`): a busy machine
    makes it slow, never fails it.
    """
    import ray

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_ENDPOINT_URL", s3_server)
        mp.setenv("RAY_AUTH_MODE", "disabled")
        mp.setenv(WRONG_KEY_ENV, WRONG_KEY)
        env = {k: os.environ[k] for k in (
            "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
            "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_EC2_METADATA_DISABLED", "TRIBUNAL_CACHE_DIR",
        ) if k in os.environ}
        from doubles.emulators.serve import KEY_ENV

        for name in KEY_ENV.values():
            mp.setenv(name, "emulated-key-not-a-secret")
            env[name] = "emulated-key-not-a-secret"
        from jobs.sweep.startup import init_ray
        from tests.ray_start import wait_patiently_for_raylets

        wait_patiently_for_raylets()  # and the session's RAY_* start-up waits (tests/conftest.py)
        init_ray("local", env, num_cpus=2)
        try:
            yield
        finally:
            ray.shutdown()


def emulated_config(endpoints: dict[str, str]) -> TribunalConfig:
    """The default panel aimed at local emulators (real adapters, real SDKs, dummy keys)."""
    from doubles.emulators.serve import point_at_emulators

    return point_at_emulators(load_config(vendors="real"), endpoints)


SMALL_TASKS = ("commercial-contracts/msa-renewal", "corporate-ma/change-of-control-consents")
SMALL_SUBMISSIONS = 8
"""The small sample: two of the sample's tasks (with documents of every kind, scans included) and
the four systems' submissions of them. For the tests of a sweep's mechanics (a kill, a Ctrl-C, a
lock, a full disk, a batch) the number of submissions changes nothing they check, and every
submission costs ~39 calls through the SDKs: the whole sample's 32 made these tests most of the
suite's time."""


@pytest.fixture(scope="session")
def small_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the sample cut to `SMALL_TASKS`: `<root>/tasks/...` and `<root>/submissions/...`
    (the same layout, so `tribunal sweep ROOT -s ROOT/submissions` works as on the sample)."""
    from tests.jobs.samples import cut_sample

    return cut_sample(tmp_path_factory.mktemp("small-sample"), SMALL_TASKS)
