"""The review's audit trail (`evalcore.results.review_trail`): append-only, create-only objects with
the run, on a local folder and on S3 (moto on 127.0.0.1); two writers (two servers) lose nothing, a
reader sees every event in time order, and the export joins each decision's call and reason."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from evalcore.errors import StorageError
from evalcore.results import review_trail
from evalcore.results.adjudications import Adjudication
from evalcore.results.review_trail import TrailEvent, TrailReader


def _events(n: int, actor: str) -> list[TrailEvent]:
    return [TrailEvent(kind="reservation", actor=actor, run_id="r", item=["flag", "s", "t", str(k)],
                       detail={"until": "2030-01-01T00:00:00+00:00"}) for k in range(n)]


@pytest.mark.parametrize("where", ["local", "s3"])
def test_two_writers_on_one_run_lose_no_event_and_an_event_is_never_rewritten(
    where: str, tmp_path: Path, request: pytest.FixtureRequest,
) -> None:
    endpoint = None
    run = str(tmp_path / "run")
    if where == "s3":
        endpoint = request.getfixturevalue("s3_server")
        run = f"s3://{request.getfixturevalue('s3_bucket')}/runs/r"
    first, second = TrailReader(run, endpoint), TrailReader(run, endpoint)
    assert first.refresh() == []
    a, b = _events(3, "server-a"), _events(3, "server-b")
    for x, y in zip(a, b, strict=True):
        review_trail.append(run, x, endpoint)
        review_trail.append(run, y, endpoint)
    got = second.refresh()
    assert sorted(e.event_id for e in got) == sorted(e.event_id for e in a + b)
    assert [e.at for e in got] == sorted(e.at for e in got)
    with pytest.raises(StorageError, match="append-only"):
        review_trail.append(run, a[0].model_copy(update={"actor": "forger"}), endpoint)
    assert {e.actor for e in first.refresh() if e.event_id == a[0].event_id} == {"server-a"}


def test_the_export_joins_each_decision_and_lists_those_recorded_outside_the_trail() -> None:
    inside = Adjudication(run_id="r", kind="flag", system="s", task_id="t", flag_index=0, decision="overturned",
                          reviewer="ana", reason="not, in the \"memo\"", campaign_id="c1", required=2)
    outside = Adjudication(run_id="r", kind="criterion", system="s", task_id="t", criterion_id="C-1",
                           decision="pass", reviewer="CLI user", reason="checked")
    events = [TrailEvent(kind="sign_in", actor="ana", run_id="r", detail={"via": "password"}),
              TrailEvent(kind="decision", actor="ana", run_id="r", campaign_id="c1", item=list(inside.item),
                         decision_id=inside.decision_id)]
    rows = review_trail.export_rows(events, [inside, outside])
    assert [r["at"] for r in rows] == sorted(str(r["at"]) for r in rows)  # in time order
    assert [(r["kind"], r["actor"]) for r in rows if r["actor"] == "ana"] == [("sign_in", "ana"), ("decision", "ana")]
    decided = next(r for r in rows if r["decision_id"] == inside.decision_id)
    assert (decided["decision"], decided["reason"], decided["item"]) == ("overturned", inside.reason, "flag/s/t/0")
    assert any(r["decision_id"] == outside.decision_id and r["actor"] == "CLI user" for r in rows)
    parsed = list(csv.DictReader(io.StringIO(review_trail.to_csv(rows))))
    assert len(parsed) == 3 and next(p for p in parsed if p["actor"] == "ana" and p["kind"] == "decision")["reason"] \
        == inside.reason  # a comma and quotes survive the CSV
    assert [json.loads(line)["kind"] for line in review_trail.to_jsonl(rows).splitlines()] == [r["kind"] for r in rows]
