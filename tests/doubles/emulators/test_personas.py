"""Personas of the emulators' offline responder: planted biases, deterministic, recovered by the reduction.

The sample's 412 rubric prompts are rendered as a sweep renders them and answered by the responder
(`OfflineResponder`, the offline heuristics then the persona), exactly as the emulators call it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from doubles import offline_judge as offline
from doubles.emulators import EmulatedRequest, OfflineResponder
from doubles.emulators.responders import Persona, PersonaSet, deliverables_fingerprint
from evalcore.benchmark.loader import load_benchmark
from evalcore.grading.audit import detect_prompt, flags_for_verification, grounding_candidates
from evalcore.prompts import RenderedPrompt, render_rubric, render_verify
from evalcore.results.reduce import reduce_tables
from evalcore.schema import DetectedFlag, Submission
from evalcore.storage.store import RunRecord, read_table
from evalcore.submissions.loader import load_submissions
from tests.runfolder import RunSpec, build_run

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample"
BOUNDARY = "0123456789abcdef"


def _request(prompt: RenderedPrompt, vendor: str = "xai", model: str = "grok-4.7") -> EmulatedRequest:
    return EmulatedRequest(vendor=vendor, api="test", model=model, system=prompt.system,  # type: ignore[arg-type]
                           user=prompt.prefix + "\n\n" + prompt.suffix, schema_name=prompt.schema.__name__)


@pytest.fixture(scope="module")
def sample() -> tuple[dict[str, Any], list[Submission]]:
    bench = load_benchmark(str(SAMPLE))
    return bench.task_map(), load_submissions(str(SAMPLE / "submissions"), bench.task_map()).submissions


def _rubric_prompts(sample: Any, boundary: str = BOUNDARY) -> Iterator[tuple[Submission, str, RenderedPrompt]]:
    tasks, subs = sample
    for s in subs:
        task = tasks[s.task_id]
        for c in task.criteria:
            yield s, c.id, render_rubric(task_id=task.id, instructions=task.instructions, criterion=c,
                                         deliverables=list(s.deliverables.values()), boundary=boundary)


@pytest.fixture(scope="module")
def base(sample: Any) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The offline judge's answer to every rubric prompt of the sample (computed once)."""
    return {(s.system, s.task_id, cid): offline.answer(p.system, p.prefix + "\n\n" + p.suffix, "RubricAnswer")
            for s, cid, p in _rubric_prompts(sample)}


def _families(sample: Any) -> dict[str, str]:
    fam = {"claude": "anthropic", "gpt": "openai", "grok": "xai"}
    out = {}
    for s in sample[1]:
        f = next((v for k, v in fam.items() if s.system.startswith(k)), None)
        if f:
            out[deliverables_fingerprint([(n, d.text) for n, d in s.deliverables.items() if not d.missing])] = f
    return out


def _verdicts(sample: Any, base: Any, personas: PersonaSet, vendor: str) -> dict[str, dict[str, dict[str, str]]]:
    """system -> task -> criterion -> verdict of one emulated judge (the persona bends the base answer)."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    persona = personas.personas.get(vendor)
    for s, cid, p in _rubric_prompts(sample):
        answer = base[(s.system, s.task_id, cid)]
        if persona is not None:
            answer = personas.bend(persona, _request(p, vendor=vendor, model=f"{vendor}-model"), answer)
        out.setdefault(s.system, {}).setdefault(s.task_id, {})[cid] = answer["verdict"]
    return out


def test_a_responder_without_personas_or_with_neutral_ones_answers_like_the_offline_judge(sample: Any) -> None:
    _, cid, prompt = next(_rubric_prompts(sample))
    req = _request(prompt)
    plain = offline.answer(req.system, req.user, req.schema_name)
    assert OfflineResponder()(req) == plain
    assert OfflineResponder(PersonaSet(personas={"xai": Persona()}))(req) == plain


def test_persona_answers_do_not_depend_on_the_random_fence_boundary(sample: Any, base: Any) -> None:
    personas = PersonaSet(seed=4, personas={"xai": Persona(noise=0.5, leniency=0.3)})
    one = [personas.bend(personas.personas["xai"], _request(p), base[(s.system, s.task_id, c)])["verdict"]
           for s, c, p in _rubric_prompts(sample, "a" * 16)]
    two = [personas.bend(personas.personas["xai"], _request(p), base[(s.system, s.task_id, c)])["verdict"]
           for s, c, p in _rubric_prompts(sample, "b" * 16)]
    assert one == two
    assert 0 < sum(a != b["verdict"] for a, b in zip(one, base.values(), strict=True)) < len(one)


def test_kappa_with_a_neutral_judge_falls_as_noise_rises(sample: Any, base: Any, tmp_path: Path) -> None:
    neutral = _verdicts(sample, base, PersonaSet(), "openai")
    kappas, fleiss = [], []
    for level in (0.0, 0.1, 0.25, 0.45):
        noisy = _verdicts(sample, base, PersonaSet(seed=1, personas={"xai": Persona(noise=level)}), "xai")
        run = tmp_path / f"noise-{level}"
        build_run(str(run), {"verdicts": neutral, "hallucinations": []},
                  RunSpec(bootstrap_samples=50, judge_verdicts={"xai": noisy}))
        lb = reduce_tables(RunRecord.read(str(run)),
                           **{n: read_table(str(run), n) for n in ("submissions", "verdicts", "flags", "calls")})
        kappas.append({(c.judge_a, c.judge_b): c.kappa for c in lb.judges.cohen}[("openai", "xai")])
        fleiss.append(lb.judges.fleiss_kappa)
    assert kappas[0] == 1.0
    assert all(a > b for a, b in zip(kappas, kappas[1:], strict=False)), kappas
    assert all(a > b for a, b in zip(fleiss, fleiss[1:], strict=False)), fleiss


def test_noise_stated_for_a_rubric_length_bends_a_longer_rubrics_submission_as_often_as_one_of_that_length() -> None:
    """`noise_criteria`: the per-verdict rate on k criteria keeps the chance that no verdict of the
    submission is bent, (1 - r)^n, whatever k; up to n criteria (and with no length known) it is r."""
    p = Persona(noise=0.1, noise_criteria=15)
    assert p.per_verdict(0.1, 12) == p.per_verdict(0.1, 15) == p.per_verdict(0.1, None) == 0.1
    assert Persona(noise=0.1).per_verdict(0.1, 60) == 0.1  # no length stated: per verdict, as before
    for k in (44, 55, 90):
        assert (1 - p.per_verdict(0.1, k)) ** k == pytest.approx(0.9**15)


def test_demo_personas_answer_the_sample_as_per_verdict_and_bend_fewer_verdicts_of_a_long_rubric(
    sample: Any, base: Any
) -> None:
    """The demo's rates are stated for the sample's longest rubric and submission (`DEMO_RUBRIC`,
    `DEMO_SENTENCES`): knowing each submission's rubric length changes no answer of the sample, and
    no sample submission is long enough to scale the false flags; told a lab-sized rubric (60), the
    noisy judge bends a subset of the verdicts it bent, at about the scaled rate."""
    from doubles.emulators.responders import DEMO_PERSONAS, DEMO_RUBRIC, DEMO_SENTENCES, _sentences

    tasks, subs = sample
    assert max(len(t.criteria) for t in tasks.values()) <= DEMO_RUBRIC
    fingerprints = {s.id: deliverables_fingerprint([(n, d.text) for n, d in s.deliverables.items() if not d.missing])
                    for s in subs}
    plain = PersonaSet(seed=3, personas=DEMO_PERSONAS)
    sized = PersonaSet(seed=3, personas=DEMO_PERSONAS,
                       rubric_sizes={fingerprints[s.id]: len(tasks[s.task_id].criteria) for s in subs})
    long = PersonaSet(seed=3, personas=DEMO_PERSONAS, rubric_sizes={fp: 60 for fp in fingerprints.values()})
    for vendor in DEMO_PERSONAS:
        assert _verdicts(sample, base, sized, vendor) == _verdicts(sample, base, plain, vendor), vendor
    longest = max(_sentences([(n, d.text) for n, d in s.deliverables.items() if not d.missing]) for s in subs)
    assert longest <= DEMO_SENTENCES and DEMO_PERSONAS["openai"].per_sentence(longest) == 0.01
    bent = {k for k, v in _flat(_verdicts(sample, base, plain, "xai")).items() if v != _flat_base(base)[k]}
    bent_long = {k for k, v in _flat(_verdicts(sample, base, long, "xai")).items() if v != _flat_base(base)[k]}
    assert bent_long < bent
    rate = DEMO_PERSONAS["xai"].per_verdict(DEMO_PERSONAS["xai"].noise, 60)
    assert abs(len(bent_long) / len(base) - rate) < 0.02, (len(bent_long), len(base), rate)


def _flat(verdicts: dict[str, dict[str, dict[str, str]]]) -> dict[tuple[str, str, str], str]:
    return {(s, t, c): v for s, by_task in verdicts.items() for t, by_c in by_task.items() for c, v in by_c.items()}


def _flat_base(base: dict[tuple[str, str, str], dict[str, Any]]) -> dict[tuple[str, str, str], str]:
    return {k: a["verdict"] for k, a in base.items()}


def test_self_bias_passes_failing_criteria_of_its_own_family_only(sample: Any, base: Any) -> None:
    personas = PersonaSet(personas={"anthropic": Persona(self_bias=1.0)}, families=_families(sample))
    biased = _verdicts(sample, base, personas, "anthropic")
    for (system, task_id, cid), answer in base.items():
        expected = "pass" if system.startswith("claude") else answer["verdict"]
        assert biased[system][task_id][cid] == expected, (system, task_id, cid)
    assert any(a["verdict"] == "fail" for (s, _, _), a in base.items() if s.startswith("claude"))


def test_auditor_recall_thins_the_offline_flags_and_stage2_upholds_its_own_false_flags(sample: Any) -> None:
    tasks, subs = sample
    sub = next(s for s in subs if s.system == "fluent-hallucinator")
    task = tasks[sub.task_id]
    detect = detect_prompt(task, sub, grounding_candidates(task, sub), BOUNDARY)
    req = _request(detect, vendor="openai", model="gpt-6-sol")
    plain = OfflineResponder()(req)
    assert isinstance(plain, dict) and plain["flags"]
    assert OfflineResponder(PersonaSet(personas={"openai": Persona(recall=0.0)}))(req) == {"flags": []}
    liar = PersonaSet(personas={"gpt-6-sol": Persona(false_flag_rate=1.0, upholds_false_flags=1.0)})
    flagged = OfflineResponder(liar)(req)
    assert isinstance(flagged, dict)
    false = flagged["flags"][len(plain["flags"]):]
    assert flagged["flags"][: len(plain["flags"])] == plain["flags"] and false
    flags = [DetectedFlag.model_validate(f) for f in flagged["flags"]]
    verify = render_verify(task_id=task.id, instructions=task.instructions, sources=list(task.documents),
                           deliverables=list(sub.deliverables.values()),
                           flags=flags_for_verification(task, flags), boundary=BOUNDARY)
    decisions = OfflineResponder(liar)(_request(verify, vendor="openai", model="gpt-6-sol"))
    assert isinstance(decisions, dict)
    status = [d["status"] for d in decisions["decisions"]]
    assert status[len(plain["flags"]):] == ["confirmed"] * len(false)
    honest = OfflineResponder()(_request(verify, vendor="openai", model="gpt-6-sol"))
    assert isinstance(honest, dict)
    assert [d["status"] for d in honest["decisions"]][len(plain["flags"]):] == ["rejected"] * len(false)
    assert json.dumps(decisions)  # JSON-able, as the emulator sends it
