"""The transport between grading workers and vendor actors (`jobs.sweep.actors.RemoteVendor`).

Requests made in one turn of a worker's event loop travel as one actor call per answer schema;
every caller still gets exactly its own replies, in its order, and a failed actor call reaches
every caller. Real Ray actor, real adapter (the zero-work one), real stored-call reuse.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import ray

from evalcore.config.load import load_config
from evalcore.config.models import VendorConfig
from evalcore.schema import CallRow, DetectionAnswer, RubricAnswer
from evalcore.storage.store import write_shard
from evalcore.vendors.protocol import JudgeReply, JudgeRequest
from jobs.sweep.actors import OWN_CALL_REQUESTS, RemoteVendor, VendorActor, pack_requests, unpack_replies

pytestmark = pytest.mark.ray


def _zero_judge() -> VendorConfig:
    return load_config().judges[0].model_copy(update={"adapter": "zero"})


def _request(h: str, schema: str = "RubricAnswer") -> JudgeRequest:
    return JudgeRequest(purpose="rubric" if schema == "RubricAnswer" else "detect", request_hash=h,
                        system_prompt="system", shared_prefix="prefix", varying_suffix=h, schema_name=schema)


def _stored_run(tmp_path: Path, cfg: VendorConfig, hashes: list[str]) -> str:
    """A run folder whose calls table answers each hash with its own reasoning text."""
    run = str(tmp_path / "stored-run")
    rows = [CallRow(run_id="stored", grading_id="g", submission_id="s", system="s", task_id="t", request_hash=h,
                    vendor=cfg.name, family=cfg.family, model=cfg.model, purpose="rubric", outcome="ok",
                    response_json=RubricAnswer(verdict="fail", reasoning=f"answer to {h}").model_dump_json())
            for h in hashes]
    write_shard(run, "part-0", {"calls": rows})
    return run


def test_requests_of_one_loop_turn_travel_as_one_actor_call_per_schema_and_each_caller_gets_its_own_replies(
    ray_local: None, tmp_path: Path
) -> None:
    cfg = _zero_judge()
    callers = [[f"c{i}-r{j}" for j in range(i + 1)] for i in range(6)]  # 1..6 requests each: 21 in all
    run = _stored_run(tmp_path, cfg, [h for hs in callers for h in hs])
    actor = VendorActor.remote(cfg.model_dump(mode="json"), "r", [run])  # type: ignore[attr-defined]
    remote = RemoteVendor(actor, cfg)

    async def turn() -> tuple[list[list[JudgeReply[RubricAnswer] | object]], list[object]]:
        rubric = [remote.complete_many([_request(h) for h in hs], RubricAnswer) for hs in callers]
        detect = [remote.complete_many([_request(f"d{i}", "DetectionAnswer")], DetectionAnswer) for i in range(3)]
        out = await asyncio.gather(*rubric, *detect)
        return list(out[: len(callers)]), list(out[len(callers):])

    try:
        rubric, detect = asyncio.run(turn())
        assert remote.ray_calls == 2  # 24 requests from 9 callers: one call per schema
        for hs, replies in zip(callers, rubric, strict=True):  # each caller: its own answers, in its order
            assert [r.output.reasoning for r in replies] == [f"answer to {h}" for h in hs]  # type: ignore[attr-defined]
        assert all(isinstance(r[0].output, DetectionAnswer) for r in detect)  # type: ignore[index]
        stats = ray.get(actor.stats.remote())
        assert (stats["requests"], stats["reused_calls"], stats["paid_calls"]) == (24, 21, 3)
        asyncio.run(remote.complete_many([_request("later")], RubricAnswer))  # a later turn: a new call
        assert remote.ray_calls == 3
    finally:
        ray.kill(actor)


def test_while_the_account_is_rate_bound_a_caller_with_many_requests_gets_its_own_actor_call_and_small_ones_share(
    ray_local: None, tmp_path: Path
) -> None:
    cfg = _zero_judge()
    callers = [[f"c{i}-r{j}" for j in range(n)] for i, n in enumerate([OWN_CALL_REQUESTS, OWN_CALL_REQUESTS + 4, 1, 2])]
    run = _stored_run(tmp_path, cfg, [h for hs in callers for h in hs])
    actor = VendorActor.remote(cfg.model_dump(mode="json"), "r", [run])  # type: ignore[attr-defined]
    remote = RemoteVendor(actor, cfg)

    async def turn() -> list[list[JudgeReply[RubricAnswer] | object]]:
        return list(await asyncio.gather(*(remote.complete_many([_request(h) for h in hs], RubricAnswer) for hs in callers)))

    try:
        assert not remote.rate_bound
        asyncio.run(turn())
        assert remote.ray_calls == 1  # not rate-bound (the zero adapter has no budget): one shared call
        assert not remote.rate_bound
        remote.rate_bound = True  # as an actor whose budget has calls waiting says with its answer
        replies = asyncio.run(turn())
        assert remote.ray_calls == 1 + 3  # the two large callers apart, the two small ones together
        for hs, got in zip(callers, replies, strict=True):
            assert [r.output.reasoning for r in got] == [f"answer to {h}" for h in hs]  # type: ignore[attr-defined]
    finally:
        ray.kill(actor)


def test_one_actor_serves_every_entry_of_its_account_with_each_entrys_store_and_statistics(
    ray_local: None, tmp_path: Path
) -> None:
    judge = _zero_judge()
    auditor = load_config().auditor.model_copy(update={"adapter": "zero"})
    assert judge.account() == auditor.account()
    run = _stored_run(tmp_path, judge, ["h1", "h2"])
    write_shard(run, "part-1", {"calls": [CallRow(
        run_id="stored", grading_id="g", submission_id="s", system="s", task_id="t", request_hash="a1",
        vendor=auditor.name, family=auditor.family, model=auditor.model, purpose="rubric", outcome="ok",
        response_json=RubricAnswer(verdict="pass", reasoning="audited").model_dump_json())]})
    actor = VendorActor.remote([c.model_dump(mode="json") for c in (judge, auditor)], "r", [run])  # type: ignore[attr-defined]
    to_judge, to_auditor = RemoteVendor(actor, judge), RemoteVendor(actor, auditor)

    async def both() -> list[list[object]]:
        return list(await asyncio.gather(
            to_judge.complete_many([_request(h) for h in ("h1", "h2", "x")], RubricAnswer),
            to_auditor.complete_many([_request(h) for h in ("a1", "h1")], RubricAnswer),
        ))

    try:
        j, a = asyncio.run(both())
        assert [r.reused_from for r in j] == ["stored", "stored", None]  # type: ignore[attr-defined]
        # each entry's own store: the judge's stored h1 is not the auditor's answer
        assert [r.reused_from for r in a] == ["stored", None]  # type: ignore[attr-defined]
        js, as_ = ray.get([actor.stats.remote(judge.name), actor.stats.remote(auditor.name)])
        assert (js["requests"], js["reused_calls"], js["paid_calls"]) == (3, 2, 1)
        assert (as_["requests"], as_["reused_calls"], as_["paid_calls"]) == (2, 1, 1)
    finally:
        ray.kill(actor)


def test_a_failed_actor_call_reaches_every_caller_of_the_coalesced_call(ray_local: None) -> None:
    cfg = _zero_judge()
    actor = VendorActor.options(max_restarts=0).remote(cfg.model_dump(mode="json"), "r", [])  # type: ignore[attr-defined]
    ray.kill(actor, no_restart=True)
    remote = RemoteVendor(actor, cfg)

    async def turn() -> list[object]:
        calls = [remote.complete_many([_request(f"h{i}")], RubricAnswer) for i in range(4)]
        return list(await asyncio.gather(*calls, return_exceptions=True))

    results = asyncio.run(turn())
    assert remote.ray_calls == 1
    assert all(isinstance(r, ray.exceptions.RayActorError) for r in results), results


def test_a_gated_actor_holds_grading_calls_until_opened_but_answers_a_preflight_at_once(ray_local: None) -> None:
    from jobs.sweep.vendor_pool import VendorPool, open_gates

    cfg = _zero_judge()
    actor = VendorActor.remote(cfg.model_dump(mode="json"), "r", [], gated=True)  # type: ignore[attr-defined]
    rubric = actor.complete_packed.remote(pack_requests([_request("held")]), RubricAnswer, cfg.name)
    unpack = lambda answer: unpack_replies(answer[0], RubricAnswer)  # noqa: E731
    preflight = JudgeRequest(purpose="preflight", request_hash="p", system_prompt="s", shared_prefix="",
                             varying_suffix="ping", schema_name="RubricAnswer")
    # sent after the rubric call, answered while it is held
    [answered] = unpack(ray.get(actor.complete_packed.remote(pack_requests([preflight]), RubricAnswer, cfg.name), timeout=60))
    assert isinstance(answered, JudgeReply)
    assert ray.wait([rubric], timeout=0)[0] == []
    assert ray.get(actor.stats.remote(cfg.name), timeout=60)["requests"] == 1  # the preflight only
    open_gates({cfg.name: VendorPool(cfg.name, (actor,))})
    [reply] = unpack(ray.get(rubric, timeout=60))
    assert isinstance(reply, JudgeReply) and ray.get(actor.stats.remote(cfg.name), timeout=60)["requests"] == 2


def test_a_gated_actor_restarted_by_ray_answers_grading_calls_without_waiting_for_a_gate(ray_local: None) -> None:
    # the driver opens each gate once: an actor Ray restarts mid-sweep (its process died) would
    # otherwise hold every grading call of the rest of the sweep
    cfg = _zero_judge()
    actor = VendorActor.remote(cfg.model_dump(mode="json"), "r", [], gated=True)  # type: ignore[attr-defined]
    held = actor.complete_packed.remote(pack_requests([_request("held")]), RubricAnswer, cfg.name)
    assert ray.wait([held], timeout=0)[0] == []
    ray.kill(actor, no_restart=False)  # as a crash: Ray starts the actor again (max_restarts=-1)
    try:
        # Ray re-sends the held call to the restarted actor (max_task_retries), which answers it
        # with no gate opened, as it does a new one
        later = actor.complete_packed.remote(pack_requests([_request("after")]), RubricAnswer, cfg.name)
        for answer in ray.get([held, later], timeout=120):
            [reply] = unpack_replies(answer[0], RubricAnswer)
            assert isinstance(reply, JudgeReply)
    finally:
        ray.kill(actor, no_restart=True)


def test_an_actor_rebound_to_a_later_sweep_and_then_restarted_by_ray_comes_back_bound_to_that_sweep(
    ray_local: None, tmp_path: Path
) -> None:
    # Ray re-runs a restarted actor's constructor with the arguments it was created with: those of
    # its first sweep. It must serve the sweep it was last bound to (its stores, its run folder).
    cfg = _zero_judge()
    first = _stored_run(tmp_path / "first", cfg, ["first-only"])
    later = _stored_run(tmp_path / "later", cfg, ["later-only"])
    actor = VendorActor.remote(cfg.model_dump(mode="json"), "first", [first])  # type: ignore[attr-defined]
    try:
        ray.get(actor.rebind.remote(cfg.model_dump(mode="json"), "later", [later]), timeout=60)
        ray.kill(actor, no_restart=False)  # as a crash: Ray starts the actor again (max_restarts=-1)
        answer = ray.get(actor.complete_packed.remote(
            pack_requests([_request("first-only"), _request("later-only")]), RubricAnswer, cfg.name), timeout=120)
        stats = ray.get(actor.stats.remote(cfg.name), timeout=60)
        assert stats["reused_calls"] == 1 and stats["paid_calls"] == 1  # later's store answers; first's does not
        first_only, later_only = unpack_replies(answer[0], RubricAnswer)
        assert isinstance(later_only, JudgeReply) and later_only.output.reasoning == "answer to later-only"
        assert isinstance(first_only, JudgeReply) and first_only.output.reasoning != "answer to first-only"  # paid
    finally:
        ray.kill(actor, no_restart=True)
