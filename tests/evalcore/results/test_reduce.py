"""The reduction: a run built from ground truth reduces to figures computed independently here.

The expected figures are computed in plain Python straight from the ground truth and the run's
spec (which submissions are missing, incomplete, too long, superseded), never with the
reduction's own code.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from statistics import mean
from typing import Any

import pyarrow as pa
import pytest

from evalcore.results.leaderboard import ALL_AREAS, Leaderboard, SystemScores, scores_table
from evalcore.results.reduce import current_gradings, reduce_tables
from evalcore.storage.store import RunRecord, read_table, write_shard
from tests.runfolder import CALL_COST, JUDGES, RunSpec, build_run, synthetic_ground_truth, test_record

SAMPLE_TRUTH = Path(__file__).resolve().parents[3] / "examples" / "sample" / "ground_truth.json"


def _truth() -> dict[str, Any]:
    """The sample's ground truth when it exists, else a synthetic one of the same shape."""
    if SAMPLE_TRUTH.exists():
        data: dict[str, Any] = json.loads(SAMPLE_TRUTH.read_text())
        return data
    return synthetic_ground_truth()


def _spec(truth: dict[str, Any], **extra: Any) -> RunSpec:
    systems = sorted(truth["verdicts"])
    tasks = sorted({t for s in systems for t in truth["verdicts"][s]})
    s0, s1, s2, s3 = (systems * 4)[:4]
    return RunSpec(
        missing={(s2, tasks[0])},
        incomplete={(s1, tasks[1])},
        too_long={(s0, tasks[2])},
        superseded={(s0, tasks[3]), (s3, tasks[4]), (s1, tasks[5])},
        rejected=[(s2, tasks[0])],
        reused={(s0, tasks[5 % len(tasks)])},
        extra_tasks=[("tax/unsubmitted/scenario-01", "tax")],
        **extra,
    )


def _reduce(run: Path) -> Leaderboard:
    names = ("submissions", "verdicts", "flags", "calls", "rejected")
    tables = {n: read_table(str(run), n) for n in names}
    return reduce_tables(RunRecord.read(str(run)), **tables)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], RunSpec, Leaderboard]]:
    truth = _truth()
    spec = _spec(truth)
    run = tmp_path_factory.mktemp("run")
    build_run(str(run), truth, spec)
    yield truth, spec, _reduce(run)


# -- independent expectations ------------------------------------------------------------------


def _expected(truth: dict[str, Any], spec: RunSpec, system: str, area: str | None = None) -> dict[str, Any]:
    """Every leaderboard figure of one system, from the ground truth (all judges agree with it)."""
    material: dict[str, int] = {}
    minor: dict[str, int] = {}
    for h in truth["hallucinations"]:
        if h["system"] == system:
            target = material if h["materiality"] == "material" else minor
            target[h["task_id"]] = target.get(h["task_id"], 0) + 1
    bench = {t for s in truth["verdicts"] for t in truth["verdicts"][s]} | {t for t, _ in spec.extra_tasks}
    bench_area = {t: t.split("/")[0] for t in bench} | dict(spec.extra_tasks)
    in_scope = {t for t in bench if area is None or bench_area[t] == area}
    submitted = {t for t in truth["verdicts"][system] if (system, t) not in spec.missing} & in_scope
    scored = sorted(t for t in submitted if (system, t) not in spec.incomplete | spec.too_long)
    hc, allp, crit, np1, np2 = [], [], [], [], []
    audited, gated = [], []
    for t in scored:
        verdicts = list(truth["verdicts"][system][t].values())
        fails = verdicts.count("fail")
        ok = fails == 0
        allp.append(1.0 if ok else 0.0)
        hc.append(1.0 if ok and material.get(t, 0) == 0 else 0.0)
        crit.append(verdicts.count("pass") / len(verdicts))
        np1.append(1.0 if fails <= 1 else 0.0)
        np2.append(1.0 if fails <= 2 else 0.0)
        if ok:
            audited.append(t)
            gated.append(material.get(t, 0) > 0)
    return {
        "n_tasks": len(in_scope),
        "scored": len(scored),
        "missing": len(in_scope - submitted),
        "incomplete": sum(1 for t in submitted if (system, t) in spec.incomplete),
        "too_long": sum(1 for t in submitted if (system, t) in spec.too_long),
        "hc": mean(hc) if hc else None,
        "all_pass": mean(allp) if allp else None,
        "criterion": mean(crit) if crit else None,
        "np1": mean(np1) if np1 else None,
        "np2": mean(np2) if np2 else None,
        "audited": len(audited),
        "material": sum(material.get(t, 0) for t in audited) / len(audited) if audited else None,
        "minor": sum(minor.get(t, 0) for t in audited) / len(audited) if audited else None,
        "lost": sum(gated) / len(gated) if gated else None,
        "gated": sum(gated),
    }


def _expected_cost(truth: dict[str, Any], spec: RunSpec, system: str) -> dict[str, float]:
    """USD per vendor: every paid call of every grading (superseded ones too), reused ones free."""
    cost = {v: 0.0 for v in CALL_COST}
    for t, crits in truth["verdicts"][system].items():
        key = (system, t)
        if key in spec.missing or key in spec.too_long or key in spec.reused:
            continue
        gradings = [dict(crits)]
        if key in spec.superseded:
            gradings.append({c: "fail" for c in crits})  # the earlier grading, audited regardless
        for g, verdicts in enumerate(gradings):
            for judge, _, _ in JUDGES:
                cost[judge] += CALL_COST[judge] * len(verdicts)
            audited = g == 1 or (all(v == "pass" for v in verdicts.values()) and key not in spec.incomplete)
            if audited:
                cost["auditor"] += 2 * CALL_COST["auditor"]
    return {v: c for v, c in cost.items() if c}


def _row(rows: list[SystemScores], system: str, area: str = ALL_AREAS) -> SystemScores:
    [row] = [r for r in rows if r.system == system and r.area == area]
    return row


def _approx(value: float | None) -> Any:
    return None if value is None else pytest.approx(value)


# -- the leaderboard ----------------------------------------------------------------------------


def test_every_system_rate_equals_the_figure_computed_from_ground_truth(built: Any) -> None:
    truth, spec, lb = built
    for system in truth["verdicts"]:
        exp, row = _expected(truth, spec, system), _row(lb.systems, system)
        assert row.hc_pass_rate.value == _approx(exp["hc"]), system
        assert row.all_pass_rate.value == _approx(exp["all_pass"]), system
        assert row.criterion_pass_rate.value == _approx(exp["criterion"]), system
        assert row.near_pass_1.value == _approx(exp["np1"]), system
        assert row.near_pass_2.value == _approx(exp["np2"]), system
        assert row.material_per_task.value == _approx(exp["material"]), system
        assert row.minor_per_task.value == _approx(exp["minor"]), system
        assert row.lost_to_gate.value == _approx(exp["lost"]), system
        assert (row.audited, row.gated, row.passing) == (exp["audited"], exp["gated"], exp["audited"]), system


def test_missing_incomplete_and_too_long_are_counted_not_scored(built: Any) -> None:
    truth, spec, lb = built
    for system in truth["verdicts"]:
        exp, row = _expected(truth, spec, system), _row(lb.systems, system)
        assert (row.n_tasks, row.scored, row.missing, row.incomplete, row.too_long) == (
            exp["n_tasks"], exp["scored"], exp["missing"], exp["incomplete"], exp["too_long"],
        ), system
        assert row.scored + row.missing + row.incomplete + row.too_long == row.n_tasks
        assert row.hc_pass_rate.n == exp["scored"]
    rejected_system = spec.rejected[0][0]
    assert _row(lb.systems, rejected_system).rejected == 1


def test_per_area_rows_equal_the_figures_of_that_area_alone(built: Any) -> None:
    truth, spec, lb = built
    assert "tax" in lb.areas
    for system in truth["verdicts"]:
        for area in lb.areas:
            exp, row = _expected(truth, spec, system, area), _row(lb.by_area, system, area)
            assert (row.n_tasks, row.scored, row.missing) == (exp["n_tasks"], exp["scored"], exp["missing"])
            assert row.hc_pass_rate.value == _approx(exp["hc"]), (system, area)
            assert row.all_pass_rate.value == _approx(exp["all_pass"]), (system, area)
            assert row.lost_to_gate.value == _approx(exp["lost"]), (system, area)


def test_an_area_nobody_submitted_is_all_missing_and_unranked(built: Any) -> None:
    truth, _, lb = built
    for system in truth["verdicts"]:
        row = _row(lb.by_area, system, "tax")
        assert (row.missing, row.scored, row.rank, row.hc_pass_rate.value) == (1, 0, None, None)


def test_cost_counts_every_paid_call_and_nothing_for_reused_ones(built: Any) -> None:
    truth, spec, lb = built
    for system in truth["verdicts"]:
        row = _row(lb.systems, system)
        got = {c.vendor: c.cost_usd for c in row.cost_by_vendor if c.cost_usd}
        assert got == pytest.approx(_expected_cost(truth, spec, system)), system
        assert row.cost_usd == pytest.approx(sum(got.values()))
    reused_system = next(iter(spec.reused))[0]
    assert sum(c.reused_calls for c in _row(lb.systems, reused_system).cost_by_vendor) > 0
    # the run total also holds the preflight calls, which belong to no system
    assert lb.cost_usd == pytest.approx(sum(r.cost_usd for r in lb.systems) + sum(CALL_COST[j] for j, _, _ in JUDGES))


def test_systems_are_ranked_by_the_headline_rate(built: Any) -> None:
    _, _, lb = built
    values = [r.hc_pass_rate.value for r in lb.systems]
    assert values == sorted(values, reverse=True)
    assert lb.systems[0].rank == 1
    for a, b in zip(lb.systems, lb.systems[1:], strict=False):
        assert (b.rank == a.rank) == (b.hc_pass_rate.value == a.hc_pass_rate.value)


def test_confidence_intervals_bracket_every_rate(built: Any) -> None:
    _, _, lb = built
    for row in lb.systems + lb.by_area:
        for est in (row.hc_pass_rate, row.all_pass_rate, row.criterion_pass_rate, row.lost_to_gate):
            if est.value is not None:
                assert est.low is not None and est.high is not None
                assert est.low - 1e-9 <= est.value <= est.high + 1e-9


# -- judges and auditor ---------------------------------------------------------------------------


def _current_items(truth: dict[str, Any], spec: RunSpec) -> list[tuple[str, str, str]]:
    """(system, criterion verdict, task) of every item all three judges rated in current gradings."""
    items = []
    for system, tasks in truth["verdicts"].items():
        for t, crits in tasks.items():
            if (system, t) in spec.missing or (system, t) in spec.too_long:
                continue
            for k, (_, v) in enumerate(sorted(crits.items())):
                if (system, t) in spec.incomplete and k == 0:
                    continue  # the anthropic judge abstained on the first criterion
                items.append((system, v, t))
    return items


def test_a_panel_that_agrees_with_ground_truth_has_kappa_1_and_no_self_preference(built: Any) -> None:
    truth, spec, lb = built
    items = _current_items(truth, spec)
    assert lb.judges.n_items == len(items)
    assert lb.judges.n_items_partial == len(spec.incomplete)
    assert lb.judges.fleiss_kappa == 1.0
    assert [c.kappa for c in lb.judges.cohen] == [1.0, 1.0, 1.0]
    rate = sum(1 for _, v, _ in items if v == "pass") / len(items)
    for j in lb.judges.judges:
        assert j.pass_rate_common == pytest.approx(rate)
    anthropic = next(j for j in lb.judges.judges if j.judge == "anthropic")
    assert anthropic.abstentions == len(spec.incomplete)
    for pref in lb.judges.self_preference:
        assert pref.delta.value in (0.0, None)


def test_superseded_gradings_are_ignored_for_scores_verdicts_and_flags(built: Any) -> None:
    truth, spec, lb = built
    # the superseded gradings failed everything and had a confirmed material "old" flag
    n_old = len(spec.superseded)
    assert lb.auditor.by_status.get("confirmed", 0) == sum(
        1 for h in truth["hallucinations"]
        if (h["system"], h["task_id"]) not in spec.missing | spec.incomplete | spec.too_long
        and all(v == "pass" for v in truth["verdicts"][h["system"]][h["task_id"]].values())
    )
    assert n_old > 0
    assert lb.judges.n_items == len(_current_items(truth, spec))


def test_self_family_preference_of_a_lenient_judge_is_measured(tmp_path: Path) -> None:
    truth = _truth()
    spec = _spec(truth, lenient={"xai": "xai"})
    build_run(str(tmp_path), truth, spec)
    lb = _reduce(tmp_path)
    items = _current_items(truth, spec)
    xai_items = [v for s, v, _ in items if s.startswith("grok")]
    p = sum(1 for v in xai_items if v == "pass") / len(xai_items)
    pref = {x.judge: x for x in lb.judges.self_preference}
    # xai passes all of its own family's criteria; the other two follow the truth
    assert pref["xai"].judge_pass_rate == pytest.approx(1.0)
    assert pref["xai"].others_pass_rate == pytest.approx(p)
    assert pref["xai"].delta.value == pytest.approx(1.0 - p)
    assert pref["xai"].delta.low is not None and pref["xai"].delta.low > 0
    assert pref["xai"].control_delta.value == pytest.approx(0.0)
    assert pref["openai"].delta.value == pytest.approx(0.0)
    # Cohen's κ openai–xai from the 2×2 table built here
    table = {("pass", "pass"): 0, ("pass", "fail"): 0, ("fail", "pass"): 0, ("fail", "fail"): 0}
    for system, v, _ in items:
        table[(v, "pass" if system.startswith("grok") else v)] += 1
    n = len(items)
    po = (table[("pass", "pass")] + table[("fail", "fail")]) / n
    a_pass = (table[("pass", "pass")] + table[("pass", "fail")]) / n
    b_pass = (table[("pass", "pass")] + table[("fail", "pass")]) / n
    pe = a_pass * b_pass + (1 - a_pass) * (1 - b_pass)
    kappa = {(c.judge_a, c.judge_b): c.kappa for c in lb.judges.cohen}
    assert kappa[("openai", "xai")] == pytest.approx((po - pe) / (1 - pe))
    assert kappa[("openai", "anthropic")] == 1.0


def test_auditor_statistics_count_flags_by_origin_status_and_category(built: Any) -> None:
    truth, spec, lb = built
    excluded = spec.missing | spec.incomplete | spec.too_long
    audited = {
        (s, t) for s, tasks in truth["verdicts"].items() for t, c in tasks.items()
        if (s, t) not in excluded and all(v == "pass" for v in c.values())
    }
    confirmed = [h for h in truth["hallucinations"] if (h["system"], h["task_id"]) in audited]
    with_flags = {(h["system"], h["task_id"]) for h in confirmed}
    a = lb.auditor
    assert a.audited_submissions == len(audited)
    assert a.by_status == {k: v for k, v in {
        "confirmed": len(confirmed), "rejected": len(audited), "merged": len(with_flags)}.items() if v}
    assert a.by_origin == {k: v for k, v in {
        "auditor": len(confirmed) + len(audited), "grounding": len(with_flags)}.items() if v}
    for cat, counts in a.confirmed_by_category.items():
        assert counts["material"] == sum(1 for h in confirmed if h["category"] == cat and h["materiality"] == "material")
        assert counts["minor"] == sum(1 for h in confirmed if h["category"] == cat and h["materiality"] == "minor")


# -- rules at the edges ----------------------------------------------------------------------------


def _sub(system: str, task: str, at: float, status: str = "complete", hc: float = 1.0) -> dict[str, Any]:
    return {
        "run_id": "r", "grading_id": f"g-{system}-{task}-{at}", "submission_id": f"{system}::{task}",
        "system": system, "task_id": task, "area": task.split("/")[0], "content_hash": "c", "status": status,
        "n_criteria": 1, "task_score": hc, "criterion_pass_rate": hc, "near_pass_1": 1.0, "near_pass_2": 1.0,
        "audited": hc > 0, "hc_score": hc, "graded_at": at,
    }


def test_current_grading_is_the_latest_graded_at_whatever_its_status(tmp_path: Path) -> None:
    rows = [_sub("a", "x/t", 1.0, "complete", 1.0), _sub("a", "x/t", 2.0, "incomplete"), _sub("b", "x/t", 5.0)]
    write_shard(str(tmp_path), "p0", {"submissions": rows})
    cur = current_gradings(read_table(str(tmp_path), "submissions"))
    got = dict(zip(cur.column("submission_id").to_pylist(), cur.column("status").to_pylist(), strict=True))
    assert got == {"a::x/t": "incomplete", "b::x/t": "complete"}


def test_equal_headline_rates_share_a_rank(tmp_path: Path) -> None:
    rows = [_sub("a", "x/t1", 1), _sub("b", "x/t1", 1), _sub("c", "x/t1", 1, hc=0.0)]
    write_shard(str(tmp_path), "p0", {"submissions": rows})
    lb = reduce_tables(test_record("r"), submissions=read_table(str(tmp_path), "submissions"))
    assert [(r.system, r.rank) for r in lb.systems] == [("a", 1), ("b", 1), ("c", 3)]


def test_a_run_record_without_tasks_takes_them_from_the_submissions_and_says_so(tmp_path: Path) -> None:
    write_shard(str(tmp_path), "p0", {"submissions": [_sub("a", "x/t1", 1), _sub("a", "y/t2", 1, hc=0.0)]})
    lb = reduce_tables(test_record("r"), submissions=read_table(str(tmp_path), "submissions"))
    assert lb.n_tasks == 2 and lb.areas == ["x", "y"]
    assert any("no benchmark tasks" in n for n in lb.notes)
    assert lb.judges.n_items == 0 and lb.judges.fleiss_kappa is None
    assert lb.cost_usd == 0.0


def test_leaderboard_json_is_reproducible(built: Any, tmp_path: Path) -> None:
    truth, spec, lb = built
    build_run(str(tmp_path), truth, spec)
    assert _reduce(tmp_path).model_dump_json() == lb.model_dump_json()


def test_scores_table_flattens_rates_with_their_intervals(built: Any) -> None:
    _, _, lb = built
    table = scores_table(lb.systems)
    assert table.num_rows == len(lb.systems)
    for col in ("rank", "system", "hc_pass_rate", "hc_pass_rate_low", "hc_pass_rate_high", "lost_to_gate",
                "missing", "incomplete", "too_long", "cost_usd", "cost_usd_openai", "tokens_auditor"):
        assert col in table.column_names
    assert table.schema.field("hc_pass_rate").type == pa.float64()
    assert table.column("system").to_pylist() == [r.system for r in lb.systems]


def test_the_run_is_itemised_by_vendor_and_purpose_and_the_items_add_up_to_its_cost(built: Any) -> None:
    _, _, lb = built
    items = {(c.vendor, c.purpose): c for c in lb.cost_by_purpose}
    assert {p for _, p in items} == {"rubric", "detect", "verify", "preflight"}
    assert {v for v, p in items if p in ("detect", "verify")} == {"auditor"}
    for (vendor, _), c in items.items():
        assert c.cost_usd == pytest.approx(CALL_COST[vendor] * (c.calls - c.reused_calls))
    assert sum(c.cost_usd for c in items.values()) == pytest.approx(lb.cost_usd)
    # the run folder plants a cache write on each grading's first Anthropic call (tests/runfolder.py)
    writes = {c.vendor: c.cache_write_usd for c in lb.cost_by_vendor}
    assert writes["anthropic"] > 0 and all(usd == 0.0 for v, usd in writes.items() if v != "anthropic")
    assert lb.cache_write_usd == pytest.approx(sum(writes.values()))
    assert lb.cache_write_usd == pytest.approx(sum(c.cache_write_usd for c in items.values()))
