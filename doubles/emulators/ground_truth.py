"""An emulator responder that answers as a benchmark's ground truth says (tests and benchmarks).

Why in the package: the reproduction tests and the cost benchmark both need judges whose answers
are known (every verdict, every planted hallucination found and confirmed), so that what a sweep
produces can be compared with the ground truth and so that realistic runs audit exactly the
submissions that pass. The submission is recognised by the deliverable text in the prompt.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from doubles.emulators.responders import EmulatedRequest, ScriptedResponder
from doubles.synth.ground_truth import GroundTruth
from evalcore.prompts import parse_prompt
from evalcore.schema import Submission


def owners(submissions: Iterable[Submission]) -> dict[str, tuple[str, str]]:
    """Deliverable text -> (system, task id), for `ground_truth_responder`."""
    return {d.text: (s.system, s.task_id) for s in submissions for d in s.deliverables.values() if not d.missing}


def ground_truth_responder(gt: GroundTruth, owner: dict[str, tuple[str, str]]) -> ScriptedResponder:
    """Answers every prompt as the ground truth says; finds the submission by its deliverable text."""

    def respond(req: EmulatedRequest) -> dict[str, Any]:
        p = parse_prompt(req.system, req.user)
        present = [b.text for b in p.of_kind("deliverable") if b.attrs.get("status") == "present"]
        key = next((owner[t] for t in present if t in owner), None)
        if p.purpose == "preflight":
            return {"ok": True}
        if p.purpose == "rubric":
            cid = p.one("criterion").attrs["id"]  # type: ignore[union-attr]
            if key is None:  # every deliverable it reads is missing: nothing can pass
                return {"verdict": "fail", "reasoning": "scripted: no deliverable"}
            return {"verdict": gt.verdict(*key, cid), "reasoning": "scripted from ground truth"}
        assert key is not None, "an audited submission must have a deliverable"
        planted = gt.hallucinations_for(*key)
        if p.purpose == "detect":
            return {"flags": [
                {"span": h.span, "deliverable": h.deliverable, "location": "scripted", "category": h.category,
                 "evidence_document": h.source_document, "evidence_passage": h.source_passage, "explanation": h.note}
                for h in planted
            ]}
        assert p.purpose == "verify"
        by_span = {h.span: h for h in planted}
        flags = json.loads(p.one("flags").text)  # type: ignore[union-attr]
        return {"decisions": [
            {"flag_index": f["index"], "status": "confirmed", "category": by_span[f["span"]].category,
             "materiality": by_span[f["span"]].materiality, "rationale": "scripted"}
            for f in flags
        ]}

    return ScriptedResponder(respond)
