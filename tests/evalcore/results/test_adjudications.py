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
from evalcore.results.decision_files import read_file

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
        read_file(str(csv_file), run_id="r")
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text('{"kind": "criterion", "system": "s", "task_id": "t", "criterion_id": "c1", '
                     '"decision": "pass", "reviewer": "Bo", "reason": "clearly met"}\n')
    [d] = read_file(str(jsonl), run_id="r")
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


# -- identity: ids, dates, order, the run and the grading a decision was made on (issue 43) ---------


@pytest.mark.parametrize("bad_id", ["../../escaped", "a/b", "..", "", "x" * 65, "a.json", "-lead"])
def test_a_decision_id_that_is_not_one_safe_file_name_component_is_refused_and_nothing_is_written(
    tmp_path, bad_id: str
) -> None:
    with pytest.raises(ValidationError, match="decision_id"):
        _flag(decision_id=bad_id)
    assert not list(tmp_path.rglob("*"))


def test_a_decision_dated_in_the_future_is_refused_beyond_the_documented_clock_skew() -> None:
    now = dt.datetime.now(dt.UTC)
    _flag(decided_at=now + adj.MAX_CLOCK_SKEW - dt.timedelta(seconds=30))  # a reviewer's clock a little ahead
    with pytest.raises(ValidationError, match="in the future"):
        _flag(decided_at=now + adj.MAX_CLOCK_SKEW + dt.timedelta(minutes=1))
    with pytest.raises(ValidationError, match="in the future"):
        _flag(decided_at=now + dt.timedelta(days=365))


def test_decisions_dated_alike_are_in_force_in_the_order_they_were_recorded_not_by_their_random_id(tmp_path) -> None:
    run = str(tmp_path / "run")
    first = _flag("overturned", decision_id="zzzz")  # the same decided_at: only the recording order tells
    second = _flag("upheld", decision_id="aaaa")
    adj.record_all(run, [first, second])
    loaded = adj.load(run)
    assert loaded.latest()[first.item].decision == "upheld"
    third = _flag("materiality", materiality="minor", decision_id="0000")
    adj.record(run, third)  # recorded later still
    assert adj.load(run).latest()[first.item].decision == "materiality"


def test_an_import_whose_id_is_taken_records_nothing_not_even_the_rows_before_it(tmp_path) -> None:
    run = str(tmp_path / "run")
    adj.record(run, _flag(decision_id="taken"))
    with pytest.raises(InputError, match="'taken' already exists"):
        adj.record_all(run, [_flag(minutes=1, decision_id="fresh"), _flag(minutes=2, decision_id="taken")])
    assert [d.decision_id for d in adj.load(run).decisions] == ["taken"]


def test_a_stored_decision_of_another_run_is_set_aside_with_a_note(tmp_path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text('{"run_id": "r"}')
    adj.record(str(run), _flag())
    adj.record(str(run), _flag(run_id="other-run", minutes=1))
    loaded = adj.load(str(run))
    assert [d.run_id for d in loaded.decisions] == ["r"]
    [note] = loaded.problems
    assert "recorded for run other-run, not this run (r); set aside" in note


def _flag_tables_with_spans():
    con, current = _tables()
    con.unregister("flags_in")
    con.register("flags_in", pa.table({"grading_id": ["g1"], "flag_index": [0], "status": ["confirmed"],
                                       "materiality": ["material"], "span": ["Guaranty limited to 12 months"]}))
    return con, current


def test_a_decision_made_on_a_grading_a_later_sweep_replaced_is_set_aside_with_a_note_not_applied() -> None:
    con, current = _flag_tables_with_spans()
    stale = _flag("overturned", grading_id="g0-replaced")
    out, effect = adj.apply(con, current, {stale.item: stale})
    assert out.column("hc_score").to_pylist() == [0.0, 0.0] and not effect.rescored
    [note] = effect.unmatched
    assert "set aside: made on grading g0-replaced, which a later sweep replaced" in note and "is g1" in note
    fresh = _flag("overturned", grading_id="g1", claim_hash=adj.claim_hash("Guaranty limited to 12 months"))
    out, effect = adj.apply(con, current, {fresh.item: fresh})
    assert out.column("hc_score").to_pylist() == [1.0, 0.0] and not effect.unmatched


def test_a_flag_decision_whose_index_now_holds_another_claim_is_set_aside_with_a_note() -> None:
    con, current = _flag_tables_with_spans()
    other = _flag("overturned", grading_id="g1", claim_hash=adj.claim_hash("Section 7 does not exist"))
    out, effect = adj.apply(con, current, {other.item: other})
    assert out.column("hc_score").to_pylist() == [0.0, 0.0]
    [note] = effect.unmatched
    assert "set aside: flag 0 of s::t is now another claim than the one decided" in note


def test_a_reason_longer_than_the_documented_limit_is_refused() -> None:
    _flag(reason="x" * adj.MAX_REASON_CHARS)
    with pytest.raises(ValidationError, match="reason"):
        _flag(reason="x" * (adj.MAX_REASON_CHARS + 1))
