"""Grading and the estimate plan a submission in one place (`evalcore.grading.plan`): for every
submission of the sample, of a lab benchmark and of a task without documents, they take the same
too_long decision and the estimate prices exactly the requests grading sends.

Grading runs for real (`grade_submission`, audit always on) on in-process vendors (`vendors_in_process`),
each wrapped in a recording vendor that keeps every request it is asked to send; the estimate
reports every request it prices (`on_request`). Each is run under the default budget and under two
budgets tight enough that some submissions are too long (at the rubric, at the audit). The fences
are random per grading, so each side's boundary is replaced by one placeholder before comparing
(the request hash does not depend on it): a request of either side that differs in any other
character, or one side too long where the other is not, fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from doubles.synth.lab import generate_lab
from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.config.models import TribunalConfig
from evalcore.cost.estimate import estimate
from evalcore.errors import VendorError
from evalcore.grading.grade import grade_submission
from evalcore.grading.plan import GradingPlan, plan_submission
from evalcore.schema import Criterion, Deliverable, Submission, Task
from evalcore.submissions.loader import load_submissions
from evalcore.vendors.protocol import JudgeReply, JudgeRequest, T, Vendor
from evalcore.vendors.registry import create_vendor

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample"

Benchmark = tuple[dict[str, Task], list[Submission]]
Requests = dict[tuple[str, str], list[JudgeRequest]]
"""(vendor, purpose) -> the requests of one submission."""

INSTRUCTIONS = (
    "Our client Harbor Lane Capital LLC signed a lease on 1 March 2024 at a monthly rent of $12,500. "
    "Write a memo on its notice obligations under the lease."
)
NO_DOCUMENTS = Task(
    id="real-estate/notice/s1",
    area="real-estate",
    title="Notice obligations",
    instructions=INSTRUCTIONS,
    criteria=[
        Criterion(id="C-001", title="Rent", match_criteria="PASS if the memo states the monthly rent. FAIL otherwise."),
        Criterion(id="C-002", title="Tenant", match_criteria="PASS if the memo names the tenant. FAIL otherwise."),
    ],
    deliverables={"memo": "memo.md"},
    documents=[],
)
MEMOS = {  # three lengths, so a budget between them splits the submissions
    "contradicts": "Harbor Lane Capital LLC pays a monthly rent of $15,000 under the lease signed on 1 March 2024.",
    "faithful": "Harbor Lane Capital LLC pays a monthly rent of $12,500.\n\n" * 20,
    "long": "Harbor Lane Capital LLC signed the lease on 1 March 2024; notices go by courier.\n\n" * 200,
}


class RecordingVendor:
    """A vendor that keeps every request it is asked to send, then lets the real one answer it."""

    def __init__(self, inner: Vendor) -> None:
        self.inner = inner
        self.name, self.family, self.model = inner.name, inner.family, inner.model
        self.sent: list[JudgeRequest] = []

    async def complete(self, request: JudgeRequest, schema: type[T]) -> JudgeReply[T]:
        self.sent.append(request)
        return await self.inner.complete(request, schema)

    async def complete_many(self, requests: list[JudgeRequest], schema: type[T]) -> list[JudgeReply[T] | VendorError]:
        self.sent.extend(requests)
        return await self.inner.complete_many(requests, schema)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture(scope="module")
def benchmarks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Benchmark]:
    tasks = load_benchmark(str(SAMPLE)).task_map()
    out = {"sample": (tasks, load_submissions(str(SAMPLE / "submissions"), tasks).submissions)}
    root = tmp_path_factory.mktemp("lab")
    generate_lab(root, tasks=1, seed=21, scale=0.3)
    tasks = load_benchmark(str(root)).task_map()
    out["lab"] = (tasks, load_submissions(str(root / "submissions"), tasks).submissions)
    out["no documents"] = ({NO_DOCUMENTS.id: NO_DOCUMENTS}, [
        Submission(system=system, task_id=NO_DOCUMENTS.id, deliverables={"memo": Deliverable(name="memo", text=memo)})
        for system, memo in MEMOS.items()
    ])
    return out


def vendors_in_process(overrides: dict[str, Any]) -> TribunalConfig:
    """Audit always on; the judges answer at once with a fixed verdict (the zero-work adapter: what
    grading sends does not depend on the verdicts, and the offline heuristics would be most of the
    test's time), the auditor is the offline one (it reads the prompt, so Stage 1 raises flags and
    Stage 2 is sent)."""
    cfg = load_config(vendors="offline", overrides={"audit": {"mode": "always"}, **overrides})
    return cfg.model_copy(update={"judges": [j.model_copy(update={"adapter": "zero"}) for j in cfg.judges]})


def config(budget: str, bench: Benchmark) -> TribunalConfig:
    """`budget` "rubric" / "audit" puts that budget at the median size of the submissions' prompts,
    so the larger ones are too long there."""
    base = vendors_in_process({})
    if budget == "default":
        return base
    tasks, subs = bench
    plans = [plan_submission(tasks[s.task_id], s, base, boundary="0" * 16) for s in subs]
    assert all(isinstance(p, GradingPlan) for p in plans)
    cpt = base.prompt_budget.chars_per_token
    if budget == "rubric":
        sizes = [max(p.estimated_tokens(cpt) for _, p in plan.rubric) for plan in plans if isinstance(plan, GradingPlan)]
    else:
        sizes = [plan.detect.estimated_tokens(cpt) for plan in plans if isinstance(plan, GradingPlan)]
    return vendors_in_process({"prompt_budget": {f"{budget}_tokens": sorted(sizes)[len(sizes) // 2]}})


_FENCE = re.compile(r"<<<DATA ([0-9a-f]{16}) ")


def normalized(requests: Requests) -> Requests:
    """Every request with the boundary of this submission's first request replaced by a placeholder
    (a request fenced with another boundary keeps its own, and so differs)."""
    first = next((r for rs in requests.values() for r in rs), None)
    if first is None:
        return requests
    match = _FENCE.search(first.user_text)
    assert match, "no fence in the first request"
    b = match.group(1)

    def one(r: JudgeRequest) -> JudgeRequest:
        return r.model_copy(update={
            "system_prompt": r.system_prompt.replace(b, "B" * 16),
            "shared_prefix": r.shared_prefix.replace(b, "B" * 16),
            "varying_suffix": r.varying_suffix.replace(b, "B" * 16),
        })

    return {k: sorted((one(r) for r in rs), key=lambda r: r.request_hash) for k, rs in requests.items()}


def difference(sent: list[JudgeRequest], priced: list[JudgeRequest]) -> str | None:
    """Where two request lists differ (short: the prompts are long), or None.

    Every field is compared but `warms`: the warming layer marks the call it sends first for a
    shared prefix (when it is sent, not what is sent: `evalcore.vendors.warming`)."""
    if len(sent) != len(priced):
        return f"grading sent {len(sent)} request(s), the estimate priced {len(priced)}"
    for a, b in zip(sent, priced, strict=True):
        for name in (f for f in JudgeRequest.model_fields if f != "warms"):
            x, y = getattr(a, name), getattr(b, name)
            if x != y:
                if isinstance(x, str) and isinstance(y, str):
                    at = next((i for i, (c, d) in enumerate(zip(x, y, strict=False)) if c != d), min(len(x), len(y)))
                    return f"{name} differs at char {at}: sent {x[at:at + 80]!r}, priced {y[at:at + 80]!r}"
                return f"{name}: sent {x!r}, priced {y!r}"
    return None


def priced_by_estimate(task: Task, sub: Submission, cfg: TribunalConfig) -> tuple[bool, Requests]:
    """The estimate of this one submission: too long or not, and the requests it priced."""
    priced: Requests = {}
    est = estimate({task.id: task}, [sub], cfg,
                   on_request=lambda _s, v, r: priced.setdefault((v.name, r.purpose), []).append(r))
    assert est.submissions == 1 and est.too_long in (0, 1)
    return est.too_long == 1, priced


def sent_by_grading(recorders: dict[str, RecordingVendor]) -> Iterator[tuple[tuple[str, str], JudgeRequest]]:
    for name, v in recorders.items():
        for r in v.sent:
            yield (name, r.purpose), r


@pytest.mark.parametrize("budget", ["default", "rubric", "audit"])
@pytest.mark.parametrize("name", ["sample", "lab", "no documents"])
async def test_estimate_and_grading_decide_too_long_and_build_the_same_requests_for_every_submission(
    benchmarks: dict[str, Benchmark], name: str, budget: str
) -> None:
    tasks, subs = benchmarks[name]
    cfg = config(budget, benchmarks[name])
    recorders = {v.name: RecordingVendor(create_vendor(v)) for v in cfg.vendors()}
    too_long = verified = 0
    try:
        for sub in subs:
            task = tasks[sub.task_id]
            for v in recorders.values():
                v.sent.clear()
            result = await grade_submission(task, sub, cfg, recorders)
            sent: Requests = {}
            for key, r in sent_by_grading(recorders):
                sent.setdefault(key, []).append(r)
            estimate_too_long, priced = priced_by_estimate(task, sub, cfg)

            graded_too_long = result.row.status == "too_long"
            assert graded_too_long == estimate_too_long, (sub.id, result.row.status_reason)
            if graded_too_long:
                too_long += 1
                assert sent == {} and priced == {}, sub.id
                continue
            assert result.row.audited, (sub.id, result.row.status_reason)  # so Stage 1 was sent
            sent, priced = normalized(sent), normalized(priced)
            for judge in cfg.judges:
                key = (judge.name, "rubric")
                assert len(sent[key]) == len(task.criteria), sub.id
                assert difference(sent[key], priced[key]) is None, (sub.id, key, difference(sent[key], priced[key]))
            detect = (cfg.auditor.name, "detect")
            assert difference(sent[detect], priced[detect]) is None, (sub.id, difference(sent[detect], priced[detect]))
            assert len(sent[detect]) == 1
            # Stage 2: the estimate prices it without its flags, so its system prompt and shared prefix
            # (the audit's sources, the deliverables, the fences) are what grading's Stage 2 sent
            verify = (cfg.auditor.name, "verify")
            assert len(priced[verify]) == 1
            for r in sent.get(verify, []):
                verified += 1
                [p] = priced[verify]
                assert (r.system_prompt, r.shared_prefix) == (p.system_prompt, p.shared_prefix), sub.id
            assert set(sent) <= set(priced), sub.id
    finally:
        for v in recorders.values():
            await v.aclose()

    if budget == "default":
        assert too_long == 0
    else:  # the budget splits the submissions, so both decisions were compared
        assert 0 < too_long < len(subs), (too_long, len(subs))
    if name == "no documents" and budget == "default":
        assert verified >= 1  # the instructions-only audit's Stage 2 was compared (the estimate's drift)
