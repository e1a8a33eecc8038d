"""Warming the panel's shared prefix: one call per prefix first, the rest after its answer, so
every other criterion reads the prefix from the vendors' caches; the rows do not change."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from doubles.emulators import EmulatedRequest, EmulatorConfig, FixedLatency, ScriptedResponder
from doubles.emulators._set import EmulatorSet
from doubles.emulators.serve import point_at_emulators
from doubles.synth.lab import generate_lab
from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.grading.grade import GradeResult, grade_submission
from evalcore.submissions.loader import load_submissions
from evalcore.vendors.protocol import JudgeRequest
from evalcore.vendors.registry import create_vendor
from evalcore.vendors.warming import prefix_groups


def request(prefix: str, suffix: str = "c") -> JudgeRequest:
    return JudgeRequest(purpose="rubric", request_hash=prefix[:8] + suffix, system_prompt="sys",
                        shared_prefix=prefix, varying_suffix=suffix, schema_name="RubricAnswer")


def test_requests_are_grouped_by_cacheable_prefix_and_short_prefixes_go_direct() -> None:
    long_a, long_b = "a" * 5000, "b" * 5000
    reqs = [request(long_a, "1"), request("short", "2"), request(long_b, "3"), request(long_a, "4")]
    groups, direct = prefix_groups(reqs)
    assert groups == [[0, 3], [2]] and direct == [1]


class Recording:
    """A vendor that answers at once and keeps every `complete_many` batch it was sent, in order."""

    def __init__(self) -> None:
        self.batches: list[list[JudgeRequest]] = []

    async def complete_many(self, requests: list[JudgeRequest], schema: type[Any]) -> list[Any]:
        self.batches.append(list(requests))
        await asyncio.sleep(0)
        return [r.request_hash for r in requests]


async def test_only_the_call_sent_first_for_a_shared_prefix_is_marked_as_warming_and_every_request_is_sent_once() -> None:
    from evalcore.vendors.warming import complete_warmed

    long_a, long_b = "a" * 5000, "b" * 5000
    reqs = [request(long_a, "1"), request("short", "2"), request(long_b, "3"), request(long_a, "4"), request(long_a, "5")]
    vendor = Recording()
    replies = await complete_warmed(vendor, reqs, dict)  # type: ignore[arg-type]
    assert replies == [r.request_hash for r in reqs]  # in the order asked, each answered once
    sent = [r for batch in vendor.batches for r in batch]
    assert sorted(r.request_hash for r in sent) == sorted(r.request_hash for r in reqs)
    # the prefix shared by three calls is warmed by its first; a prefix alone and a short one are not
    assert [r.request_hash for r in sent if r.warms] == [reqs[0].request_hash]
    first_batch_of_a = next(b for b in vendor.batches if reqs[0].request_hash in {r.request_hash for r in b})
    assert [r.request_hash for r in first_batch_of_a] == [reqs[0].request_hash]
    assert {r.warms for r in reqs} == {False}  # the caller's requests are left as they were


@pytest.fixture(scope="module")
def lab_task(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    root = tmp_path_factory.mktemp("lab")
    generate_lab(root, tasks=1, seed=11, scale=0.3)
    tasks = load_benchmark(str(root)).task_map()
    subs = load_submissions(str(root / "submissions"), tasks).submissions
    strong = next(s for s in subs if s.system == "lab-strong")
    return tasks[strong.task_id], strong


def answer(req: EmulatedRequest) -> dict[str, Any]:
    """Every criterion passes and the audit finds nothing (what is answered does not matter here)."""
    if req.schema_name == "RubricAnswer":
        return {"verdict": "pass", "reasoning": "stated with its value and section"}
    return {"flags": []}


def grade(task: Any, sub: Any, warm: bool) -> tuple[GradeResult, dict[str, list[Any]]]:
    async def run() -> tuple[GradeResult, dict[str, list[Any]]]:
        emu_cfg = EmulatorConfig(latency=FixedLatency(0.05))
        async with EmulatorSet(emu_cfg, responder=ScriptedResponder(answer)) as emus:
            base = load_config(vendors="real")
            cfg = point_at_emulators(base, emus.endpoints())
            cfg = cfg.model_copy(update={"judges": [j.model_copy(update={"warm_prompt_cache": warm})
                                                    for j in cfg.judges]})
            vendors = {v.name: create_vendor(v) for v in cfg.vendors()}
            try:
                result = await grade_submission(task, sub, cfg, vendors, audit_mode="scored")
            finally:
                for v in vendors.values():
                    await v.aclose()
            return result, {a: list(e.requests) for a, e in emus.by_vendor().items()}

    return asyncio.run(run())


@pytest.fixture(scope="module")
def graded(lab_task) -> dict[bool, tuple[GradeResult, dict[str, list[Any]]]]:
    task, sub = lab_task
    return {warm: grade(task, sub, warm) for warm in (True, False)}


def test_a_warmed_panel_reads_the_prefix_from_cache_for_every_criterion_but_the_first(lab_task, graded) -> None:
    task, _ = lab_task
    result, requests = graded[True]
    rubric = [c for c in result.calls if c.purpose == "rubric"]
    assert len(rubric) == 3 * len(task.criteria)
    for judge in ("openai", "xai", "anthropic"):
        cached = sorted(c.cached_input_tokens for c in rubric if c.vendor == judge)
        assert cached[0] == 0 and all(t > 0 for t in cached[1:]), judge
    # the emulators saw the warm request answered before any of the others arrived
    for reqs in requests.values():
        rubric_reqs = [r for r in reqs if r.schema_name == "RubricAnswer"]
        first = min(rubric_reqs, key=lambda r: r.received_monotonic)
        later = [r for r in rubric_reqs if r is not first and r.model == first.model]
        assert first.finished_monotonic is not None
        assert all(r.received_monotonic >= first.finished_monotonic for r in later)


def test_warming_changes_when_calls_are_sent_not_what_is_graded(graded) -> None:
    warm, cold = graded[True][0], graded[False][0]

    def verdicts(r: GradeResult) -> list[tuple[Any, ...]]:
        return sorted((v.judge, v.criterion_id, v.verdict, v.request_hash) for v in r.verdicts)

    assert verdicts(warm) == verdicts(cold)
    keep = ("task_score", "criterion_pass_rate", "audited", "material_flags", "gated", "hc_score", "status")
    assert {k: getattr(warm.submission, k) for k in keep} == {k: getattr(cold.submission, k) for k in keep}
    assert sum(c.cached_input_tokens for c in warm.calls) > sum(c.cached_input_tokens for c in cold.calls)
