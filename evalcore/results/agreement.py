"""Inter-reviewer agreement: how often experts agree with each other, and with the judges.

Why: the judges' agreement with an expert means little without a ceiling: if two experts agree on
80 % of flags, a judge at 78 % is as good as an expert. So for the items several reviewers decided
(a campaign with k ≥ 2) this module measures

* **Cohen's κ per pair of reviewers**, on the items both decided (`stats.cohen_kappa`);
* **Krippendorff's α** (nominal) over every reviewer, and per item kind (flag, verdict, criterion),
  with a 95 % percentile bootstrap interval over items (`krippendorff.alpha`, a well-kept
  implementation: it handles any number of reviewers and missing decisions);
* per reviewer, **agreement with the machine** (the auditor's Stage 2 for a flag, the judge's
  verdict for a verdict, the panel's majority for a criterion) and its complement, the reviewer's
  **share of overturns**.

A decision's label is its call: ``upheld``, ``overturned``, ``materiality:minor``,
``materiality:material`` for a flag, ``pass`` / ``fail`` otherwise. Each reviewer counts once per
item (their latest decision); a lead's resolutions are not a reviewer's decisions and are left out.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import krippendorff
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, computed_field

from evalcore.results.adjudications import Adjudication
from evalcore.results.stats import cohen_kappa, rng_for

N_RESAMPLES = 1000
"""Bootstrap resamples of the items for α's interval (seeded: the same decisions give the same interval)."""


@dataclass(frozen=True)
class Label:
    """One reviewer's call on one item."""

    item: tuple[str, ...]
    kind: str
    reviewer: str
    label: str


class PairKappa(BaseModel):
    """Cohen's κ of two reviewers on the items both decided."""

    model_config = ConfigDict(frozen=True)

    a: str
    b: str
    n: int = Field(description="Items both decided.")
    agreed: int
    kappa: float | None


class Alpha(BaseModel):
    """Krippendorff's α over the items at least two reviewers decided, with its interval."""

    model_config = ConfigDict(frozen=True)

    kind: str = Field(description="``all`` or an item kind.")
    n_items: int = Field(description="Items at least two reviewers decided (the only ones α can use).")
    alpha: float | None
    low: float | None
    high: float | None


class VsMachine(BaseModel):
    """One reviewer against the machine's calls (the auditor, the judge, the panel)."""

    model_config = ConfigDict(frozen=True)

    reviewer: str
    n: int
    agreed: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def agreement(self) -> float | None:
        return self.agreed / self.n if self.n else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def overturn_share(self) -> float | None:
        return (self.n - self.agreed) / self.n if self.n else None


class Agreement(BaseModel):
    """Everything this module measures over a run's decisions (in `tribunal calibrate`'s JSON too)."""

    model_config = ConfigDict(frozen=True)

    pairs: list[PairKappa]
    alphas: list[Alpha]
    vs_machine: list[VsMachine]


def label_of(d: Adjudication) -> str:
    """A decision's call as one label (materiality kept: minor and material are different calls)."""
    return f"materiality:{d.materiality}" if d.decision == "materiality" else str(d.decision)


def labels(decisions: Sequence[Adjudication]) -> list[Label]:
    """Each reviewer's latest call per item (resolutions left out)."""
    latest: dict[tuple[tuple[str, ...], str], Adjudication] = {}
    for d in sorted(decisions, key=Adjudication.order):
        if not d.resolution:
            latest[(d.item, d.reviewer)] = d
    return [Label(item=i, kind=d.kind, reviewer=r, label=label_of(d)) for (i, r), d in latest.items()]


def pair_kappas(rows: Sequence[Label]) -> list[PairKappa]:
    """Cohen's κ for every pair of reviewers on the items both decided (None: no item, or κ undefined)."""
    by_reviewer: dict[str, dict[tuple[str, ...], str]] = {}
    for r in rows:
        by_reviewer.setdefault(r.reviewer, {})[r.item] = r.label
    out = []
    for a, b in itertools.combinations(sorted(by_reviewer), 2):
        shared = sorted(set(by_reviewer[a]) & set(by_reviewer[b]))
        xs = [by_reviewer[a][i] for i in shared]
        ys = [by_reviewer[b][i] for i in shared]
        out.append(PairKappa(a=a, b=b, n=len(shared), agreed=sum(x == y for x, y in zip(xs, ys, strict=True)),
                             kappa=cohen_kappa(xs, ys) if shared else None))
    return out


def _matrix(rows: Sequence[Label]) -> np.ndarray:
    """Reviewers × items, label codes, NaN where a reviewer did not decide (only items ≥ 2 decided)."""
    reviewers = sorted({r.reviewer for r in rows})
    per_item: dict[tuple[str, ...], dict[str, str]] = {}
    for r in rows:
        per_item.setdefault(r.item, {})[r.reviewer] = r.label
    items = sorted(i for i, got in per_item.items() if len(got) >= 2)
    codes = {v: k for k, v in enumerate(sorted({r.label for r in rows}))}
    m = np.full((len(reviewers), len(items)), np.nan)
    for col, item in enumerate(items):
        for row, reviewer in enumerate(reviewers):
            if reviewer in per_item[item]:
                m[row, col] = codes[per_item[item][reviewer]]
    return m


def _alpha(m: np.ndarray) -> float | None:
    """Krippendorff's α (nominal); 1.0 when every pairable value is the same (perfect agreement), None
    without two pairable values."""
    values = m[~np.isnan(m)]
    if m.shape[1] == 0 or values.size < 2:
        return None
    if np.unique(values).size == 1:
        return 1.0
    return float(krippendorff.alpha(reliability_data=m, level_of_measurement="nominal"))


def alpha(rows: Sequence[Label], kind: str = "all", seed: int = 0, n_resamples: int = N_RESAMPLES) -> Alpha:
    """Krippendorff's α over `rows` with a 95 % percentile bootstrap interval over items."""
    m = _matrix(rows)
    value = _alpha(m)
    if value is None or m.shape[1] < 2:
        return Alpha(kind=kind, n_items=m.shape[1], alpha=value, low=None, high=None)
    rng = rng_for(seed, "review-agreement", kind)
    boot = []
    for _ in range(n_resamples):
        got = _alpha(m[:, rng.integers(0, m.shape[1], m.shape[1])])
        if got is not None and not np.isnan(got):
            boot.append(got)
    if not boot:
        return Alpha(kind=kind, n_items=m.shape[1], alpha=value, low=None, high=None)
    low, high = np.percentile(boot, [2.5, 97.5])
    return Alpha(kind=kind, n_items=m.shape[1], alpha=value, low=float(low), high=float(high))


def vs_machine(rows: Sequence[Label], machine: Mapping[tuple[str, ...], str]) -> list[VsMachine]:
    """Per reviewer: on the items the machine made a call on, how often the reviewer made the same call."""
    out: dict[str, list[int]] = {}
    for r in rows:
        said = machine.get(r.item)
        if said is None:
            continue
        counts = out.setdefault(r.reviewer, [0, 0])
        counts[0] += 1
        counts[1] += int(_same(r.label, said))
    return [VsMachine(reviewer=k, n=v[0], agreed=v[1]) for k, v in sorted(out.items())]


def _same(reviewer: str, machine: str) -> bool:
    """A reviewer's call agrees with the machine's: for a flag, upholding (at any materiality the
    machine gave, or unstated) agrees with a confirmed flag; otherwise the labels are equal."""
    if machine == "upheld":
        return reviewer == "upheld" or reviewer.startswith("materiality:")
    if machine.startswith("upheld:"):
        return reviewer == "upheld" or reviewer == machine.replace("upheld", "materiality", 1)
    return reviewer == machine


def agreement(decisions: Sequence[Adjudication], machine: Mapping[tuple[str, ...], str], seed: int = 0,
              n_resamples: int = N_RESAMPLES) -> Agreement:
    """Everything this module measures over a run's decisions."""
    rows = labels(decisions)
    kinds = sorted({r.kind for r in rows})
    alphas = [alpha(rows, "all", seed, n_resamples)]
    alphas += [alpha([r for r in rows if r.kind == k], k, seed, n_resamples) for k in kinds]
    return Agreement(pairs=pair_kappas(rows), alphas=alphas, vs_machine=vs_machine(rows, machine))


def machine_flag_call(status: str, materiality: str | None) -> str:
    """The auditor's call on a flag as a label: confirmed → ``upheld:<materiality>``, else ``overturned``."""
    return f"upheld:{materiality}" if status == "confirmed" and materiality else \
        ("upheld" if status == "confirmed" else "overturned")


def machine_panel_call(verdicts: Sequence[str | None]) -> str | None:
    """The panel's call on a criterion: the majority of pass/fail verdicts (None on a tie or none)."""
    passes = sum(v == "pass" for v in verdicts)
    fails = sum(v == "fail" for v in verdicts)
    return None if passes == fails else ("pass" if passes > fails else "fail")
