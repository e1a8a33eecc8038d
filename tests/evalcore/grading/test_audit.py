"""Stage B rules: Stage 2 must decide every flag once, and a merge must keep a confirmed flag."""

from __future__ import annotations

import json

from doubles.emulators import EmulatedRequest, OpenAIEmulator, ScriptedResponder
from doubles.emulators.serve import point_at_emulators
from evalcore.config.load import load_config
from evalcore.grading.audit import check_decisions, detect_prompt, grounding_candidates, run_audit
from evalcore.grading.calls import GradingContext
from evalcore.grading.scoring import AuditFailed
from evalcore.prompts import new_boundary, parse_prompt
from evalcore.schema import Deliverable, FlagDecision, SourceDocument, Submission, Task, VerificationAnswer
from evalcore.vendors.registry import create_vendor


def _answer(*decisions: FlagDecision) -> VerificationAnswer:
    return VerificationAnswer(decisions=list(decisions))


def test_every_flag_must_be_decided_exactly_once() -> None:
    assert check_decisions(_answer(FlagDecision(flag_index=0, status="rejected")), 2)
    assert check_decisions(_answer(FlagDecision(flag_index=0, status="rejected"),
                                   FlagDecision(flag_index=0, status="rejected")), 1)


def test_merge_into_a_confirmed_flag_is_accepted() -> None:
    ok = _answer(FlagDecision(flag_index=0, status="confirmed", materiality="material"),
                 FlagDecision(flag_index=1, status="merged", merged_into=0))
    assert check_decisions(ok, 2) is None


def test_merge_into_a_rejected_flag_would_drop_a_hallucination_and_is_refused() -> None:
    bad = _answer(FlagDecision(flag_index=0, status="rejected"), FlagDecision(flag_index=1, status="merged", merged_into=0))
    assert "not another confirmed flag" in (check_decisions(bad, 2) or "")


def test_flags_merged_into_each_other_are_refused() -> None:
    cycle = _answer(FlagDecision(flag_index=0, status="merged", merged_into=1),
                    FlagDecision(flag_index=1, status="merged", merged_into=0))
    assert check_decisions(cycle, 2)


TASK = Task(id="a/t", area="a", title="t", instructions="Summarise.", criteria=[], deliverables={"memo": "memo.md"},
            documents=[SourceDocument(name="psa.txt", kind="txt", sha256="0", text="Closing is on March 3, 2026.")])


async def test_an_unusable_stage2_answer_makes_the_audit_fail_and_keeps_its_cost() -> None:
    def respond(req: EmulatedRequest) -> dict:
        p = parse_prompt(req.system, req.user)
        if p.purpose == "detect":
            return {"flags": [{"span": "March 9, 2026", "deliverable": "memo", "location": "l1",
                               "category": "contradiction", "evidence_document": "psa.txt",
                               "evidence_passage": "March 3, 2026", "explanation": "x"}] * 2}
        flags = json.loads(p.one("flags").text)  # type: ignore[union-attr]
        assert len(flags) == 2
        return {"decisions": [{"flag_index": 0, "status": "merged", "merged_into": 1, "rationale": "dup"},
                              {"flag_index": 1, "status": "merged", "merged_into": 0, "rationale": "dup"}]}

    async with OpenAIEmulator(responder=ScriptedResponder(respond)) as emu:
        cfg = point_at_emulators(load_config(vendors="real"), {"openai": emu.base_url, "anthropic": "x", "xai": "x"})
        auditor = create_vendor(cfg.auditor)
        sub = Submission(system="s", task_id="a/t", deliverables={"memo": Deliverable(name="memo", text="Closing is on March 9, 2026.")})
        ctx = GradingContext("r", "g", sub.id, "s", "a/t", "a")
        try:
            boundary = new_boundary()
            candidates = grounding_candidates(TASK, sub)
            res = await run_audit(TASK, sub, cfg.auditor, auditor, ctx, cfg.prompt_budget, boundary=boundary,
                                  candidates=candidates, detect=detect_prompt(TASK, sub, candidates, boundary))
        finally:
            await auditor.aclose()
    assert isinstance(res, AuditFailed) and "not another confirmed flag" in res.reason
    verify = [c for c in res.calls if c.purpose == "verify"]
    assert len(verify) == 1 and verify[0].outcome == "bad_output" and verify[0].cost_usd > 0
