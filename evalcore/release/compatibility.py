"""Can these runs be ranked together? The one rule a release applies to its runs' run.json.

Why a rule of its own: a leaderboard built from several runs is a comparison of systems only if
every system was graded the same way. Two runs agree when each of the keys below holds the same
value in both run records; a release refuses runs that differ on any key, naming every difference
and each run's value, unless the publisher accepts that key (`--allow KEY`), in which case the
release records the accepted difference with the values it accepted (a reader of the release sees
exactly what was not held equal). The keys:

* `benchmark.name`, `benchmark.version`: the benchmark's identity (`benchmark.json`);
* `benchmark.content_hash`: what the judges read (the same version edited in place is refused);
* `benchmark.tasks`: the task set (ids and criteria counts): the leaderboard's denominator;
* `judges`, `auditor`: each panel entry's name, family, model and reasoning effort;
* `prompt_hashes`: the prompt templates' hashes;
* `protocol_version`: the grading protocol;
* `scoring`: the configuration the scores and intervals depend on (audit scope, grounding
  candidates, prompt budget, bootstrap samples, seed, family map);
* `vendors`: offline, emulated or real judges (an emulated run ranks with no real one).

What a run was graded *when* (`created_at`), with which code version, on which submissions folder,
at which rate limits or prices, is not a key: none of it changes a verdict's meaning.

Pure: run records in, a `Compatibility` out; `evalcore.release` applies it when a release is made.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from evalcore.errors import InputError
from evalcore.storage.store import ModelRef, RunRecord

KEYS: Final[tuple[str, ...]] = (
    "benchmark.name", "benchmark.version", "benchmark.content_hash", "benchmark.tasks",
    "judges", "auditor", "prompt_hashes", "protocol_version", "scoring", "vendors",
)
"""Every key two runs must agree on to be ranked together, in the order differences are listed."""


class Difference(BaseModel):
    """One key on which the runs disagree: each run's value (a run id -> its canonical value)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(description="One of `KEYS`.")
    values: dict[str, str] = Field(description="Run id -> that run's value of the key (canonical text).")

    def describe(self) -> str:
        """`key: run-a = x; run-b = y` — one line a publisher reads."""
        return f"{self.key}: " + "; ".join(f"{run} = {value}" for run, value in self.values.items())


class Compatibility(BaseModel):
    """The rule's answer: the differences accepted (`--allow`) and the ones that refuse the release."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    allowed: list[Difference] = Field(default_factory=list, description="Differences the publisher accepted.")
    refused: list[Difference] = Field(default_factory=list, description="Differences nobody accepted.")

    @property
    def ok(self) -> bool:
        return not self.refused

    def refusal(self) -> str:
        """Why the runs cannot be ranked together, every difference named, and what to do."""
        lines = "\n".join(f"  {d.describe()}" for d in self.refused)
        keys = " ".join(f"--allow {d.key}" for d in self.refused)
        return (f"the runs cannot be ranked together; they differ on {len(self.refused)} key(s):\n{lines}\n"
                f"grade them alike (a new run, --reuse pays only what changed), or accept each with {keys}")


def _model(ref: ModelRef) -> str:
    parts = [f"{ref.name}={ref.model}"]
    if ref.family:
        parts.append(f"family {ref.family}")
    if ref.effort:
        parts.append(f"effort {ref.effort}")
    return ", ".join(parts)


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def run_facts(record: RunRecord) -> dict[str, str]:
    """The value of every key of `KEYS` in one run record, as canonical text (equal text: equal value)."""
    cfg = record.config
    bench = record.benchmark
    tasks = sorted((t.id, t.n_criteria) for t in bench.tasks)
    scoring = {
        "audit": cfg.audit.model_dump(mode="json"), "prompt_budget": cfg.prompt_budget.model_dump(mode="json"),
        "bootstrap_samples": cfg.bootstrap_samples, "seed": cfg.seed, "family_map": cfg.family_map,
    }
    return {
        "benchmark.name": bench.name or "(unnamed)",
        "benchmark.version": bench.version or "(none)",
        "benchmark.content_hash": bench.content_hash,
        "benchmark.tasks": f"{len(tasks)} tasks " + _canonical(tasks),
        "judges": "; ".join(_model(j) for j in sorted(record.judges, key=lambda j: j.name)),
        "auditor": _model(record.auditor),
        "prompt_hashes": _canonical(record.prompt_hashes),
        "protocol_version": record.protocol_version,
        "scoring": _canonical(scoring),
        "vendors": str(record.vendors),
    }


def check_allow(allow: Iterable[str]) -> set[str]:
    """The `--allow` keys, each one of `KEYS` (a misspelt key would accept nothing and say nothing)."""
    keys = set(allow)
    unknown = sorted(keys - set(KEYS))
    if unknown:
        raise InputError("--allow", f"unknown key(s) {', '.join(unknown)}; the keys are {', '.join(KEYS)}")
    return keys


def compare(facts: Mapping[str, Mapping[str, str]], allow: Iterable[str] = ()) -> Compatibility:
    """Compare runs' facts (run id -> `run_facts`): every key on which any two differ is a
    `Difference` holding every run's value; allowed keys are accepted, the others refuse.

    Order-independent: the same runs in any order give the same answer (runs listed by id)."""
    keys = check_allow(allow)
    runs = sorted(facts)
    allowed: list[Difference] = []
    refused: list[Difference] = []
    for key in KEYS:
        values = {run: facts[run][key] for run in runs}
        if len(set(values.values())) > 1:
            (allowed if key in keys else refused).append(Difference(key=key, values=values))
    return Compatibility(allowed=allowed, refused=refused)


def compatibility(records: Iterable[RunRecord], allow: Iterable[str] = ()) -> Compatibility:
    """`compare` over run records."""
    return compare({r.run_id: run_facts(r) for r in records}, allow)
