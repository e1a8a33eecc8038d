"""The batch journal's rule, property-based: a request waits on (or re-collects) the latest batch
that the vendor has and that has not failed it; otherwise it must be submitted again. The rule
holds the same after the journal is written to the run folder and read back."""

from __future__ import annotations

import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.vendors.batch.journal import BatchJournal, BatchRecord, load_all

H = "a" * 64
OTHER = "b" * 64
phases = st.sampled_from(["submitting", "submitted", "ended", "collected", "abandoned"])
outcomes = st.sampled_from([None, "succeeded", "bad_output", "errored", "expired", "canceled"])


def _records(spec: list[tuple[str, str | None, bool]]) -> list[BatchRecord]:
    out = []
    for i, (phase, outcome, holds) in enumerate(spec):
        live = phase not in ("submitting", "abandoned")
        out.append(BatchRecord(
            vendor="openai", model="m", label=f"run-openai-{i:04d}", batch_id=f"batch_{i}" if live else "",
            submitted_at=1_000_000 + i, requests=[H, OTHER] if holds else [OTHER], phase=phase,  # type: ignore[arg-type]
            outcomes={H: outcome} if (outcome and holds and live) else {},  # type: ignore[dict-item]
        ))
    return out


def _expected(records: list[BatchRecord], skip: set[str]) -> str | None:
    for r in reversed(records):
        if H in r.requests and r.live and r.batch_id not in skip and r.outcomes.get(H) in (None, "succeeded"):
            return r.batch_id
    return None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(phases, outcomes, st.booleans()), max_size=8), st.sets(st.integers(0, 7), max_size=3))
def test_a_request_uses_the_latest_live_batch_that_has_not_failed_it_before_and_after_a_reload(spec, skipped) -> None:
    records = _records(spec)
    skip = {f"batch_{i}" for i in skipped}
    with tempfile.TemporaryDirectory() as run:
        journal = BatchJournal(run, "openai")
        for r in records:
            journal.save(r)
        want = _expected(records, skip)
        got = journal.usable_batch(H, skip)
        assert (got.batch_id if got else None) == want
        reloaded = BatchJournal.load(run, "openai").usable_batch(H, skip)
        assert (reloaded.batch_id if reloaded else None) == want
        assert [r.label for r in load_all(run).get("openai", [])] == [r.label for r in records]
        assert {r.label for r in journal.unresolved()} == {r.label for r in records if r.phase == "submitting"}
