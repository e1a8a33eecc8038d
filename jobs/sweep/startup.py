"""Starting the sweep's cluster side: Ray itself, the vendor actors, the preflight through them,
and stopping the actors when the sweep ends (whatever way it ends).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from typing import Any

import ray

from evalcore.config.models import TribunalConfig
from evalcore.emulation import EMULATED_KEY, KEY_ENV
from evalcore.schema import CallRow
from evalcore.storage.store import write_table_file
from evalcore.vendors.preflight import PreflightResult, preflight, raise_if_failed
from jobs.sweep import vendor_pool


def _env_for_workers() -> dict[str, str]:
    """Non-secret settings the workers need (S3 endpoint and region, the document cache, and the
    emulated mode's dummy keys).

    Keys are never put in the runtime_env: Ray records it in its job table, where the dashboard
    and state API show it. A local cluster started here inherits the driver's environment (keys
    included); a remote cluster gets keys from its own secrets (see cluster/README.md). The
    emulated mode's keys are no secret (`EMULATED_KEY`) and go along, so an emulated sweep also
    runs on a Ray that was already running (`--address auto`), whose workers never saw the
    driver's environment: before, each of its vendors failed the preflight with "no API key".
    """
    names = ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
             "AWS_EC2_METADATA_DISABLED", "TRIBUNAL_CACHE_DIR")
    env = {n: os.environ[n] for n in names if n in os.environ}
    return env | {n: EMULATED_KEY for n in KEY_ENV.values() if os.environ.get(n) == EMULATED_KEY}


LOCAL_SYSTEM_CONFIG: dict[str, Any] = {"enable_worker_prestart": False, "prestart_worker_first_driver": False}
"""A local Ray starts no worker before a task or an actor asks for one.

Ray prestarts one idle Python worker per CPU for every driver (`num_prestart_python_workers`),
so that a first task starts without waiting. A sweep's work runs in actors (one process each,
never an idle worker) and in a handful of shard tasks, so on a laptop most prestarted workers
stayed idle and each cost ~1.3 s of CPU to start (importing Ray): measured on the test suite's
sweeps, 76 idle workers and ~11 % of its CPU; without them a small sweep ends ~7 s sooner. A
cluster started by `ray up` keeps Ray's defaults (its nodes are started by `ray start`). Passed
as a copy: `ray.init` adds its own keys to the dict it is given."""


LOCAL_LOG_MONITOR_ENV: dict[str, str] = {"LOG_NAME_UPDATE_INTERVAL_S": "10", "RAY_LOG_MONITOR_MANY_FILES_THRESHOLD": "0"}
"""A local Ray's log monitor looks for new log files every 10 s instead of every 0.1 s.

The log monitor streams the workers' output to the drivers; a sweep turns that off
(`log_to_driver=False`), but `ray.init` cannot leave the monitor out, and below 1,000 files it
re-lists the logs folder ten times a second (two files per worker process; a dead worker's are
moved aside once the monitor has seen them). Measured with `python benchmarks/local_ray_idle.py`: an
idle local Ray that has run 100 actors, log monitor 0.64-0.65 CPU-s per 30 s with Ray's settings,
0.14-0.23 with these; over the test suite's two session clusters the monitors took ~50 CPU-s. The
log monitor reads them from its environment, which it inherits from the driver starting Ray: they
are in the driver's environment only during the start (`_local_start_env`), never over a value the
operator set (the processes Ray starts then keep them; only the log monitor reads them)."""


@contextlib.contextmanager
def _local_start_env() -> Iterator[None]:
    """`LOCAL_LOG_MONITOR_ENV` in this process's environment while a local Ray starts, then as it was."""
    added = {k: v for k, v in LOCAL_LOG_MONITOR_ENV.items() if k not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


def init_ray(address: str, env: dict[str, str], *, attempts: int = 3, **extra: Any) -> None:
    """Start or attach to Ray once per process (local, auto, or ray://host:port).

    A local start is retried: when two local Ray instances start at the same moment on one
    machine (a test and a demo, two CI steps) a raylet can lose its pre-selected port and never
    register, and Ray gives up after 30 s with "timed out during startup" (seen on this machine).
    """
    if ray.is_initialized():
        return
    kwargs: dict[str, Any] = {
        "log_to_driver": False,
        "logging_level": logging.ERROR,
        "runtime_env": {"env_vars": env},
        **extra,
    }
    if address != "local":
        ray.init(address=address, **kwargs)
        return
    for attempt in range(1, attempts + 1):
        try:
            with _local_start_env():
                ray.init(address="local", include_dashboard=False, _system_config=dict(LOCAL_SYSTEM_CONFIG), **kwargs)
            return
        except Exception as exc:
            if "timed out during startup" not in str(exc) or attempt == attempts:
                raise
            logging.getLogger(__name__).warning("local Ray did not start (%s); retrying", exc)
            ray.shutdown()


def start_actors(
    config: TribunalConfig, run_id: str, stored_runs: list[str], ledger: str | None = None, detach: bool = False
) -> dict[str, vendor_pool.VendorPool]:
    """The VendorActors of each vendor account, keyed by entry (one, or N for an account one actor
    cannot carry: `jobs/sweep/vendor_pool.py`), named per run so a driver restart finds them.

    In batch mode each actor also gets the batch settings: it queues its vendor's requests into
    batches journalled in the run folder (`stored_runs[0]`). They hold grading calls until the
    preflight passed (`vendor_pool.open_gates`)."""
    return vendor_pool.start_pools(config, run_id, stored_runs, ledger, detach, gated=True)


class PreflightInFlight:
    """The preflight (`evalcore.vendors.preflight`), sent through each vendor's actor the moment
    the actors are started, answered in a thread of the driver while it goes on.

    Why at once: an actor is a new Ray worker process importing Ray, Tribunal and its SDK (1-2 s
    of a core each), and the driver, meanwhile, prices the pending submissions and sends the
    first shard. Sent only after that, the preflight waited for the driver as well as for the
    actors; now each actor sends its preflight request as soon as it is ready, and the driver
    collects the answers where it asked for them before (`wait`: the gates open then, as before).
    The calls are the same calls through the same actors, clients, budgets and retry policy.
    """

    def __init__(self, config: TribunalConfig, actors: dict[str, vendor_pool.VendorPool], run_id: str) -> None:
        self.first_answer = threading.Event()
        """Set once a vendor's preflight has answered (or the preflight ended): an actor is up."""
        vendors = {cfg.name: _Answered(vendor_pool.pool_vendor(actors[cfg.name], cfg), self.first_answer)
                   for cfg in config.vendors()}
        self._results: list[PreflightResult] | None = None
        self._error: BaseException | None = None

        def answer() -> None:
            try:
                self._results = asyncio.run(preflight(config.vendors(), vendors=vendors, run_id=run_id))
            except BaseException as exc:  # handed to the driver's thread by `results`
                self._error = exc
            finally:
                self.first_answer.set()

        self._thread = threading.Thread(target=answer, name="tribunal-preflight", daemon=True)
        self._thread.start()

    def results(self, timeout: float | None = None) -> list[PreflightResult] | None:
        """The vendors' preflights (raises what the thread raised; None: not answered within `timeout`)."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            return None
        if self._error is not None:
            raise self._error
        assert self._results is not None
        return self._results


class _Answered:
    """A vendor whose `complete` sets `answered` when it returns or raises (`PreflightInFlight.first_answer`)."""

    def __init__(self, vendor: Any, answered: threading.Event) -> None:
        self.vendor = vendor
        self.answered = answered
        self.name, self.family, self.model = vendor.name, vendor.family, vendor.model

    async def complete(self, request: Any, schema: Any) -> Any:
        try:
            return await self.vendor.complete(request, schema)
        finally:
            self.answered.set()

    async def complete_many(self, requests: list[Any], schema: Any) -> list[Any]:
        try:
            return list(await self.vendor.complete_many(requests, schema))
        finally:
            self.answered.set()

    async def aclose(self) -> None:
        await self.vendor.aclose()


def start_preflight(
    config: TribunalConfig, actors: dict[str, vendor_pool.VendorPool], run_id: str
) -> PreflightInFlight:
    """Send the preflight through the actors now; `preflight_through_actors` collects it."""
    return PreflightInFlight(config, actors, run_id)


def preflight_through_actors(
    config: TribunalConfig, actors: dict[str, Any], run_uri: str, run_id: str, attempt: int,
    sent: PreflightInFlight | None = None,
) -> list[CallRow]:
    """The library's preflight (`evalcore.vendors.preflight`), sent through each vendor's actor so
    it exercises the client, budget and retry policy the sweep will use; raises PreflightError
    naming vendor, model and cause. `sent`: the one `start_preflight` sent already, collected here.

    Its calls are paid like any other, so their rows go into the run's `calls` table (one file
    per attempt, `calls/preflight-<attempt>.parquet`, written even when the preflight fails):
    the summary's calls and cost then equal the tables'. Returns those rows (the summary counts them).
    """
    results = (sent or start_preflight(config, actors, run_id)).results()
    assert results is not None
    rows = record_preflight(results, run_uri, attempt)
    raise_if_failed(results)
    return rows


def record_preflight(results: list[PreflightResult], run_uri: str, attempt: int) -> list[CallRow]:
    """The preflight's call rows, written as the attempt's `calls/preflight-<attempt>.parquet`."""
    rows = [r.call for r in results if r.call is not None]
    write_table_file(run_uri, "calls", f"preflight-{attempt:04d}", rows)
    return rows


def settle_preflight(sent: PreflightInFlight, run_uri: str, attempt: int, *, wait: bool) -> list[CallRow]:
    """A preflight sent (`start_preflight`) but never collected, because the sweep stopped before its
    first shard: its calls were paid like any other, so their rows are written as the collected
    preflight's are (returned, for the summary), and a failure is not raised (the sweep is
    stopping already). `wait=False` (a Ctrl-C) takes only what has been answered by now."""
    try:
        results = sent.results(None if wait else 0.0)
        return [] if results is None else record_preflight(results, run_uri, attempt)
    except Exception:  # the actors died under it, or the write failed: the sweep's own error is what is shown
        return []


def _closed(actor: Any) -> bool:
    """Whether `actor` closed (its calls on the wire answered, its batch queue flushed); a dead
    actor has nothing left to close."""
    try:
        ray.get(actor.close.remote(), timeout=30)
    except Exception:
        return False
    return True


def stop_actors(actors: dict[str, vendor_pool.VendorPool], ledger: Any, *, wait: bool) -> None:
    """No actor outlives its sweep (also on errors, e.g. a failed preflight), but one closed actor
    per account kept, idle, for the driver's next sweep (`vendor_pool.park`).

    With `wait`, each actor first closes (its calls on the wire answered, its batch queue
    flushed); a cancelled sweep (second Ctrl-C) does not wait for them, and kills them all."""
    pools = {p.handles: p for p in actors.values()}  # an account's entries share their actors
    for pool in pools.values():
        for a in pool.handles:
            if wait and _closed(a) and vendor_pool.park(pool):  # it may serve this driver's next sweep
                continue
            vendor_pool.retire(a)
    if ledger is not None:
        ray.kill(ledger)
