"""The compatibility rule: which run.json keys must agree for runs to be ranked together."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.errors import InputError
from evalcore.release.compatibility import KEYS, compare, compatibility, run_facts
from evalcore.storage.store import ModelRef, RunRecord
from tests.runfolder import test_record

TASKS = [{"id": "employment/a", "area": "employment", "n_criteria": 3},
         {"id": "litigation/b", "area": "litigation", "n_criteria": 4}]


def _record(run_id: str, **update: object) -> RunRecord:
    base = test_record(run_id, tasks=TASKS)
    base = base.model_copy(update={"prompt_hashes": {"rubric.v1": "a" * 64, "system.v1": "b" * 64},
                                   "benchmark": base.benchmark.model_copy(update={"name": "legal", "version": "2.0"})})
    return base.model_copy(update=update)


def test_two_runs_of_one_benchmark_version_graded_months_apart_agree() -> None:
    a = _record("run-a", created_at=1_750_000_000.0, code_version="abc")
    b = _record("run-b", created_at=1_765_000_000.0, code_version="def", submissions_uri="elsewhere/")
    assert compatibility([a, b]).ok


def test_another_prompt_hash_judge_model_or_benchmark_version_is_refused_naming_the_key() -> None:
    a = _record("run-a")
    prompts = _record("run-p", prompt_hashes={"rubric.v1": "c" * 64, "system.v1": "b" * 64})
    judges = [j.model_copy(update={"model": "gpt-7"}) if j.name == "openai" else j for j in a.judges]
    judge = _record("run-j", judges=judges)
    version = _record("run-v", benchmark=a.benchmark.model_copy(update={"version": "2.1"}))
    for other, key, shown in ((prompts, "prompt_hashes", "c" * 64), (judge, "judges", "openai=gpt-7"),
                              (version, "benchmark.version", "2.1")):
        result = compatibility([a, other])
        assert [d.key for d in result.refused] == [key]
        text = result.refusal()
        assert key in text and shown in text and f"--allow {key}" in text and other.run_id in text


def test_an_allowed_difference_is_accepted_and_recorded_with_each_runs_value() -> None:
    a = _record("run-a")
    b = _record("run-b", auditor=ModelRef(name="auditor", model="gpt-7-audit"))
    result = compatibility([a, b], allow=["auditor"])
    assert result.ok and [d.key for d in result.allowed] == ["auditor"]
    assert "gpt-7-audit" in result.allowed[0].values["run-b"]


def test_an_unknown_allow_key_is_refused_listing_the_keys() -> None:
    with pytest.raises(InputError, match="unknown key.*judge_models.*the keys are benchmark.name"):
        compatibility([_record("run-a")], allow=["judge_models"])


def test_what_does_not_change_a_verdict_is_not_compared() -> None:
    a = _record("run-a")
    b = _record("run-b", created_at=5.0, code_version="x", reuse=["run-a"], submissions_uri="s3://x/y",
                config_fingerprint="0" * 64)
    assert run_facts(a) == run_facts(b)


FACTS = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(["x", "y", "z"]), min_size=len(KEYS), max_size=len(KEYS))


@given(runs=st.dictionaries(st.sampled_from(["r1", "r2", "r3", "r4"]), FACTS, min_size=1, max_size=4),
       allow=st.sets(st.sampled_from(KEYS)))
def test_every_key_on_which_any_two_runs_differ_is_named_once_and_only_those(
    runs: dict[str, dict[str, str]], allow: set[str]
) -> None:
    result = compare(runs, allow)
    differing = {k for k in KEYS if len({f[k] for f in runs.values()}) > 1}
    assert {d.key for d in result.refused} == differing - allow
    assert {d.key for d in result.allowed} == differing & allow
    for d in [*result.refused, *result.allowed]:
        assert d.values == {r: runs[r][d.key] for r in sorted(runs)}  # every run's value, named by run
    assert result.ok == (differing <= allow)
    # the order the runs are given in changes nothing
    assert compare(dict(reversed(list(runs.items()))), allow) == result
