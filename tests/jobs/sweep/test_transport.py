"""What a grading worker sends a vendor actor and gets back is what it had: requests and replies
cross Ray packed (`jobs.sweep.actors.pack_requests`, `pack_replies`) and come back equal, every field,
failures in their place; the text a batch's requests share crosses once."""

from __future__ import annotations

import pickle

from evalcore.errors import ErrorKind, VendorError
from evalcore.schema import DetectedFlag, DetectionAnswer, RubricAnswer
from evalcore.vendors.protocol import JudgeReply, JudgeRequest, Usage
from jobs.sweep.actors import pack_replies, pack_requests, unpack_replies, unpack_requests

PREFIX = "the deliverables, shared by every criterion of a submission " * 50


def _requests() -> list[JudgeRequest]:
    # equal strings built separately, as rendering one prompt per criterion builds them
    return [
        JudgeRequest(purpose="rubric", request_hash=f"h{i}", system_prompt="".join(["sys", "tem"]),
                     shared_prefix="".join([PREFIX, ""]), varying_suffix=f"criterion {i}",
                     schema_name="RubricAnswer", estimated_input_tokens=900 + i,
                     max_output_tokens=None if i % 2 else 700)
        for i in range(20)
    ] + [JudgeRequest(purpose="detect", request_hash="d", system_prompt="s", shared_prefix="p", varying_suffix="v",
                      schema_name="DetectionAnswer")]


def test_requests_come_back_equal_field_for_field() -> None:
    requests = _requests()
    back = unpack_requests(pickle.loads(pickle.dumps(pack_requests(requests))))
    assert back == requests
    assert [r.model_dump() for r in back] == [r.model_dump() for r in requests]


def test_the_text_a_batch_shares_crosses_once() -> None:
    requests = _requests()
    assert len({id(r.shared_prefix) for r in requests[:20]}) == 20  # 20 equal, separate strings
    packed = pack_requests(requests)
    assert len({id(p[3]) for p in packed[:20]}) == 1  # one object: pickle writes it once
    size = len(pickle.dumps(packed))
    assert size < len(PREFIX) * 2 < len(pickle.dumps(requests))


def test_replies_come_back_equal_and_failures_stay_in_place() -> None:
    flags = [DetectedFlag(span="$1.2m", deliverable="memo", location="§2", category="contradiction",
                          evidence_document="lease.docx", evidence_page="Page 3", explanation="x")]
    paid = JudgeReply(output=DetectionAnswer(flags=flags), cost_usd=0.000123456789,
                      usage=Usage(input_tokens=1200, cached_input_tokens=1024, output_tokens=80, reasoning_tokens=64),
                      started_at=1796198573.2212345, ended_at=1796198574.9876543, attempts=2, rate_limited=1,
                      request_id="req_1", vendor="openai", model="gpt-5", batch_id="batch_9")
    reused = JudgeReply[DetectionAnswer](output=DetectionAnswer(flags=[]), usage=Usage(), cost_usd=0.0,
                                         started_at=5.0, ended_at=5.0, attempts=0, vendor="openai", model="gpt-5",
                                         reused_from="run-old")
    failed = VendorError("openai", "gpt-5", ErrorKind.BAD_OUTPUT, "not JSON", attempts=3, cost_usd=0.01)
    back = unpack_replies(pickle.loads(pickle.dumps(pack_replies([paid, failed, reused]))), DetectionAnswer)
    assert back[1] is not failed and isinstance(back[1], VendorError) and str(back[1]) == str(failed)
    for original, copy in ((paid, back[0]), (reused, back[2])):
        assert isinstance(copy, JudgeReply) and isinstance(copy.output, DetectionAnswer)
        assert copy.model_dump() == original.model_dump()
        assert copy.output.model_dump_json() == original.output.model_dump_json()  # the calls row's response_json
        assert copy.latency_s == original.latency_s


def test_a_rubric_answer_comes_back_as_its_schema() -> None:
    reply = JudgeReply(output=RubricAnswer(verdict="fail", reasoning="omits the renewal term"), usage=Usage(),
                       cost_usd=0.0, started_at=1.0, ended_at=2.0, vendor="xai", model="grok", offline=True)
    [back] = unpack_replies(pack_replies([reply]), RubricAnswer)
    assert isinstance(back, JudgeReply) and back.output == reply.output and back.offline
