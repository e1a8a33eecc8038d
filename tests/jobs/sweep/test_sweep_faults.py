"""Vendor faults, on a real local Ray cluster with the real SDKs against the emulators: 10 % 429 /
5 % 5xx / 3 % malformed answers / 1 % hung requests over 11 graded synthetic submissions (~140
requests per vendor) give exactly the fault-free run's leaderboard (re-running whatever the faults
left incomplete, as a user would). Short retry delays and a 10 s request timeout (a hang is 60 s)
keep it inside CI's budget.

The faults are drawn from the emulators' seeded RNG in the order requests arrive, so which fault
the n-th request to a vendor meets is known from the seed (`_requests_for_every_fault`): the test
checks that the fault-free run sends every vendor enough requests that the faulty run's certainly
meet every fault kind, rather than relying on a large run to make that likely."""

from __future__ import annotations

from pathlib import Path

import pytest

from doubles.emulators import EmulatorConfig, OfflineResponder
from doubles.emulators._config import FaultRates
from doubles.emulators._engine import Engine
from doubles.emulators._set import start_in_thread
from evalcore.config.models import RateLimits, RetryPolicy, TribunalConfig
from jobs.per_run.reduce import reduce_run
from jobs.sweep.driver import run_sweep
from jobs.sweep.options import SweepOptions, SweepSummary
from tests.jobs.conftest import SAMPLE, emulated_config

pytestmark = [pytest.mark.ray, pytest.mark.timeout(1500)]

N_SUBMISSIONS = 12
GRADED = 11
"""`tribunal synth` empties some deliverables, which the loader rejects (an empty deliverable is never
paid for): 12 synthetic submissions (seed 7; the sample's 8 tasks, then 4 of them again) give 11
graded ones, 139 rubric calls per judge vendor (one per criterion; the auditor's are OpenAI's too).
Enough for `_requests_for_every_fault` (109 requests per vendor with seed 11), which the test checks."""
FAULTS = FaultRates(rate_limit=0.10, server_error=0.05, malformed=0.03, hang=0.01,
                    rate_limit_retry_after_s=0.02, hang_s=60.0)
EMULATOR_SEED = 11
RATE_LIMITED_SHARE = 0.05
"""429s are more than this share of the calls paid. 10 % of the requests are asked for; a short
run's share of the seeded sequence can be below that, so the test checks (`_requests_for_every_fault`)
that every vendor gets enough requests for the share to stay above this one. Every call paid is one
request answered, so 429s above this share of the requests are above it of the calls paid."""
HANG_TIMEOUT_S = 10.0
"""A hung request (60 s) is abandoned after this long and retried (the SDK's own request timeout). The
timeout also covers the client's own work on the answer: at 2 s, a loaded CI machine timed out
fault-free requests (CI, 2026-12-01)."""
SHARDS_IN_FLIGHT = 8
SHARD_SIZE = -(-GRADED // SHARDS_IN_FLIGHT)
"""Every shard in flight at once (the 11 graded submissions cut in 6 shards of up to 2): a shard
waits for its slowest request, and with faults nearly every shard has a hung one (10 s each time);
with 300 submissions in shards of 10 (30 shards, 8 at a time) the faulty run waited those out in
four waves, one after another. The shards' size changes nothing the test checks (the same options
for both runs)."""
WIRE_SLOTS = 32
"""Attempts on the wire per vendor client. The emulators answer in one thread of this process (next
to the sweep's driver); at the default 512 per client, two actors per account queue ~1,000 requests
there, more than it serves inside the timeout."""


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from doubles.synth.scale import synthesize

    out = tmp_path_factory.mktemp("synth")
    synthesize(SAMPLE, None, N_SUBMISSIONS, out, seed=7)
    return out / "manifest.jsonl"


def _fast(cfg: TribunalConfig) -> TribunalConfig:
    """Short backoff and a short timeout (what a hang costs); the same settings for both runs, so
    the configuration fingerprint and the bootstrap seed are the same."""
    retry = RetryPolicy(max_attempts=8, deadline_s=300.0, base_delay_s=0.02, max_delay_s=0.5, bad_output_retries=3)
    limits = RateLimits(requests_per_minute=600_000, tokens_per_minute=6_000_000_000)

    def fix(v):  # type: ignore[no-untyped-def]
        return v.model_copy(update={"retry": retry, "timeout_s": HANG_TIMEOUT_S, "limits": limits,
                                    "max_in_flight": WIRE_SLOTS})

    return cfg.model_copy(update={"judges": [fix(j) for j in cfg.judges], "auditor": fix(cfg.auditor)})


def _requests_for_every_fault(faults: FaultRates, seed: int, horizon: int = 20_000) -> int:
    """The fewest requests after which an emulator with these faults and seed has certainly injected
    every fault kind, and 429s stay above `RATE_LIMITED_SHARE` of the requests so far (to `horizon`).

    Each emulator draws its faults from its own RNG seeded alike, one draw per request in arrival
    order (`Engine._next_behaviour`), so every vendor meets the same sequence whatever the
    concurrency: the n-th request to a vendor meets the n-th fault of this one."""
    engine = Engine("any", EmulatorConfig(faults=faults, seed=seed), OfflineResponder(), "probe-")
    kinds = [type(engine._next_behaviour()).__name__ for _ in range(horizon)]
    wanted = ("RateLimited", "ServerError", "Malformed", "Hang")
    every_kind = max(kinds.index(kind) + 1 for kind in wanted)
    rate_limited, share_held_from = 0, 1
    for n, kind in enumerate(kinds, 1):
        rate_limited += kind == "RateLimited"
        if rate_limited <= RATE_LIMITED_SHARE * n:
            share_held_from = n + 1
    assert share_held_from < horizon // 2, "429s fall below the share late in the sequence: raise the horizon"
    return max(every_kind, share_held_from)


def _sweep(manifest: Path, output: Path, faults: FaultRates | None) -> tuple[SweepSummary, list[SweepSummary], dict]:
    """One sweep, then re-runs of the same command until nothing is left incomplete (at most 3)."""
    config = EmulatorConfig(faults=faults or FaultRates(), seed=EMULATOR_SEED)
    with start_in_thread(config, responder=OfflineResponder()) as emus:
        cfg = _fast(emulated_config(emus.endpoints))
        opts = SweepOptions(benchmark=str(SAMPLE), submissions=str(manifest), output=str(output), config=cfg,
                            vendors="emulated", run_id="faults", shard_size=SHARD_SIZE, max_in_flight=SHARDS_IN_FLIGHT,  # type: ignore[arg-type]
                            progress=False)
        first = run_sweep(opts)
        reruns = []
        while (reruns or [first])[-1].incomplete and len(reruns) < 3:
            reruns.append(run_sweep(opts))
        injected = {k: v.model_dump() for k, v in emus.stats().items()}
    return first, reruns, injected


def _scores(run: str) -> dict:
    """The leaderboard without what faults legitimately change (cost: bad outputs are billed)."""
    lb = reduce_run(run, write=False)
    cost = {"cost_usd", "tokens", "cost_by_vendor"}
    return {
        "systems": [s.model_dump(exclude=cost) for s in lb.systems],
        "by_area": [s.model_dump(exclude=cost) for s in lb.by_area],
        "judges": lb.judges.model_dump(),
        "auditor": lb.auditor.model_dump(),
        "n_tasks": lb.n_tasks,
    }


def test_injected_vendor_faults_leave_the_leaderboard_identical_to_the_fault_free_run(
    ray_local, manifest: Path, tmp_path: Path
) -> None:
    clean, clean_reruns, clean_stats = _sweep(manifest, tmp_path / "clean", None)
    assert clean.complete == GRADED and not clean_reruns
    # every call of the fault-free run is sent to the faulty emulators at least once (retries on
    # top), so each vendor's fault-free requests bound the faulty run's from below: enough of them
    # that every vendor certainly meets every fault kind, and 429s at about the rate asked for
    needed = _requests_for_every_fault(FAULTS, EMULATOR_SEED)
    sent = {vendor: s["requests"] for vendor, s in clean_stats.items()}
    assert min(sent.values()) >= needed, (sent, needed)

    faulty, reruns, injected = _sweep(manifest, tmp_path / "faulty", FAULTS)
    last = (reruns or [faulty])[-1]
    assert not last.failed_shards, "\n".join(last.failed_shards)  # whole: the error and where it was raised
    assert not last.incomplete
    assert faulty.graded + faulty.skipped_done == GRADED and faulty.rejected == clean.rejected
    # the faults really happened, at about the rates asked for, on every vendor
    for vendor, s in injected.items():
        assert s["rate_limited"] > 0 and s["server_errors"] > 0 and s["malformed"] > 0 and s["hangs"] > 0, vendor
    assert faulty.rate_limited > RATE_LIMITED_SHARE * faulty.paid_calls

    assert _scores(last.run_uri) == _scores(clean.run_uri)
