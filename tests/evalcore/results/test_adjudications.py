"""Decisions as data (evalcore.results.adjudications): validated rows, append-only, latest wins."""

from __future__ import annotations

import datetime as dt
import threading

import duckdb
import pyarrow as pa
import pytest
from pydantic import ValidationError

from evalcore.errors import InputError
from evalcore.results import adjudications as adj

T0 = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def _flag(decision: str = "overturned", minutes: int = 0, **kw) -> adj.Adjudication:
    data = dict(run_id="r", kind="flag", system="s", task_id="t", flag_index=0, decision=decision,
                reviewer="Ada", reason="the source says so", decided_at=T0 + dt.timedelta(minutes=minutes))
    data.update(kw)
    return adj.Adjudication.model_validate(data)


def test_each_kind_takes_only_its_own_decisions_and_names_its_item() -> None:
    with pytest.raises(ValidationError, match="a flag decision is one of"):
        _flag("pass")
    with pytest.raises(ValidationError, match="needs the judge"):
        adj.Adjudication(run_id="r", kind="verdict", system="s", task_id="t", criterion_id="c",
                         decision="pass", reviewer="Ada", reason="x")
    with pytest.raises(ValidationError, match="needs materiality"):
        _flag("materiality")
    with pytest.raises(ValidationError):
        _flag(reviewer="")
    with pytest.raises(ValidationError):
        _flag(reason="")
    with pytest.raises(ValidationError, match="Extra inputs"):
        _flag(colour="red")


def test_decisions_are_written_once_each_and_the_latest_per_item_wins(tmp_path) -> None:
    run = str(tmp_path / "run")
    first, second = _flag("overturned", 0), _flag("upheld", 5)
    adj.record_all(run, [second, first])
    loaded = adj.load(run)
    assert len(loaded.decisions) == 2 and not loaded.problems
    assert loaded.latest()[first.item].decision == "upheld"


def test_a_decision_is_never_overwritten(tmp_path) -> None:
    run = str(tmp_path / "run")
    d = _flag()
    adj.record(run, d)
    with pytest.raises(InputError, match="already exists"):
        adj.record(run, d.model_copy(update={"reason": "changed my mind"}))
    assert adj.load(run).decisions[0].reason == "the source says so"


def test_a_damaged_decision_file_is_named_and_the_rest_are_read(tmp_path) -> None:
    run = str(tmp_path / "run")
    adj.record(run, _flag())
    (tmp_path / "run" / "adjudications" / "broken.json").write_text("{not json")
    loaded = adj.load(run)
    assert len(loaded.decisions) == 1
    assert len(loaded.problems) == 1 and "broken.json: not a readable decision" in loaded.problems[0]


def test_concurrent_reviewers_lose_no_decision(tmp_path) -> None:
    run = str(tmp_path / "run")
    decisions = [_flag(minutes=k, flag_index=k % 3, reviewer=f"r{k % 2}") for k in range(40)]

    def write(part: list[adj.Adjudication]) -> None:
        for d in part:
            adj.record(run, d)

    threads = [threading.Thread(target=write, args=(decisions[k::2],)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {d.decision_id for d in adj.load(run).decisions} == {d.decision_id for d in decisions}


def test_csv_and_jsonl_imports_validate_every_row_and_name_the_bad_one(tmp_path) -> None:
    csv_file = tmp_path / "d.csv"
    csv_file.write_text("kind,system,task_id,flag_index,decision,reviewer,reason\n"
                        "flag,s,t,1,overturned,Ada,not in the memo\n"
                        "flag,s,t,,overturned,Ada,no index\n")
    with pytest.raises(InputError, match=r"d\.csv: row 2: .*flag_index"):
        adj.read_file(str(csv_file), run_id="r")
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text('{"kind": "criterion", "system": "s", "task_id": "t", "criterion_id": "c1", '
                     '"decision": "pass", "reviewer": "Bo", "reason": "clearly met"}\n')
    [d] = adj.read_file(str(jsonl), run_id="r")
    assert d.kind == "criterion" and d.run_id == "r"


def _tables():
    current = pa.table({
        "submission_id": ["s::t", "s::u"], "grading_id": ["g1", "g2"], "system": ["s", "s"], "task_id": ["t", "u"],
        "status": ["complete", "complete"], "audited": [True, False],
        "task_score": [1.0, 0.0], "all_pass_judges": [3, 0], "criterion_pass_rate": [1.0, 0.5],
        "near_pass_1": [1.0, 1.0], "near_pass_2": [1.0, 1.0], "material_flags": [1, 0], "minor_flags": [0, 0],
        "gated": [True, False], "hc_score": [0.0, 0.0],
    })
    verdicts = pa.table({
        "grading_id": ["g1"] * 3 + ["g2"] * 6,
        "judge": ["openai", "xai", "anthropic"] + ["openai", "xai", "anthropic"] * 2,
        "criterion_id": ["c0"] * 3 + ["c0"] * 3 + ["c1"] * 3,
        "verdict": ["pass"] * 3 + ["pass"] * 3 + ["fail"] * 3,
    })
    flags = pa.table({"grading_id": ["g1"], "flag_index": [0], "status": ["confirmed"], "materiality": ["material"]})
    con = duckdb.connect()
    con.register("verdicts_in", verdicts)
    con.register("flags_in", flags)
    return con, current


def test_applying_decisions_rescores_only_the_decided_submissions_by_the_rules() -> None:
    con, current = _tables()
    flag = _flag("overturned")
    crit = adj.Adjudication(run_id="r", kind="criterion", system="s", task_id="u", criterion_id="c1",
                            decision="pass", reviewer="Ada", reason="met")
    out, effect = adj.apply(con, current, {flag.item: flag, crit.item: crit})
    assert out.column("hc_score").to_pylist() == [1.0, 1.0]
    assert out.column("gated").to_pylist() == [False, False]
    assert current.column("hc_score").to_pylist() == [0.0, 0.0]  # the input is not changed
    assert effect.by_system == {"s": 2} and not effect.unmatched
    [t, u] = effect.rescored
    assert (t.hc_score_before, t.hc_score_after) == (0.0, 1.0)
    assert u.needs_audit  # lifted above zero, but the audit never ran on it


def test_a_decision_naming_no_item_of_the_run_is_reported_not_applied() -> None:
    con, current = _tables()
    stray = _flag(flag_index=7)
    out, effect = adj.apply(con, current, {stray.item: stray})
    assert out.column("hc_score").to_pylist() == [0.0, 0.0]
    assert effect.unmatched and "no such flag" in effect.unmatched[0]
