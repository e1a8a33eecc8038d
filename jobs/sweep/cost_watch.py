"""Cost in a sweep: the estimate shown next to what is spent, and the `--max-cost` cap.

Kept out of the driver so the sweep only asks three things: start watching, is the cap reached,
and what to print. The rules themselves live in `evalcore.cost.estimate` and `evalcore.cost.cost_cap`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import ray

from evalcore.config.models import TribunalConfig
from evalcore.cost.cost_cap import CapState
from evalcore.cost.estimate import Estimate, OutputModel, combine, estimate_part, finish
from evalcore.schema import Submission, Task
from jobs.sweep.actors import CostCapActor, cap_state
from jobs.sweep.shard_work import ShardInputs

ESTIMATE_CHUNK = 64
"""Pending submissions priced per Ray task (`price_pending`): a real-size submission takes ~11 ms
to price, so a chunk is under a second of one core, and 256 submissions are already four tasks."""


@ray.remote(num_cpus=1, max_retries=2)
def estimate_chunk(config_json: dict[str, Any], task_refs: dict[str, Any], submissions: list[Submission],
                   model: OutputModel | None = None) -> Estimate:
    """The fast estimate of one chunk of a sweep's pending submissions, priced on the cluster."""
    tasks = ShardInputs.fetch(task_refs)  # a worker keeps the last chunk's tasks for the next one
    return estimate_part(tasks, submissions, TribunalConfig.model_validate(config_json), model, fast=True)


def price_pending(
    config: TribunalConfig,
    tasks: Mapping[str, Task],
    pending: Iterable[Submission],
    *,
    task_refs: Mapping[str, Any],
    config_ref: Any,
    chunk: int = ESTIMATE_CHUNK,
    model: OutputModel | None = None,
) -> Estimate:
    """The fast estimate of the pending submissions, in one read of `pending` (the source's read).

    Why on the cluster: the estimate makes every submission's plan and replays the vendors'
    caching over its requests, ~11 ms per real-size submission, all before the first shard: 100,000
    of them were ~18 minutes of one core. Each full chunk of `chunk` submissions is priced by a Ray
    task while the read goes on, the rest here; the parts add up (`evalcore.cost.estimate.combine`)
    to what one `estimate` of them all gives. A sweep smaller than a chunk starts no task."""
    refs: list[Any] = []
    part: list[Submission] = []
    for submission in pending:
        part.append(submission)
        if len(part) == chunk:
            named = {s.task_id for s in part}
            refs.append(estimate_chunk.remote(config_ref, {t: r for t, r in task_refs.items() if t in named}, part,
                                              model))
            part = []
    parts = [estimate_part(tasks, part, config, model, fast=True)]
    parts.extend(ray.get(refs))
    return finish(combine(parts), config)


def ledger_name_for(max_cost_usd: float | None) -> str | None:
    """The name of a sweep's cost-cap ledger actor (None without a cap): chosen before the vendor
    actors start, which look it up by name when they first reserve (`RemoteLedger`)."""
    return f"tribunal-cost-cap-{uuid.uuid4().hex}" if max_cost_usd is not None else None


def start_ledger(name: str | None, max_cost_usd: float | None) -> Any:
    """The cap's ledger actor under `name` (None without a cap).

    Started before the vendor actors: the preflight is sent through them as they start
    (`jobs.sweep.startup.start_preflight`), and its calls reserve from the ledger, which they look up
    by name (a named actor is registered by the time `.remote()` returns)."""
    if name is None:
        return None
    return CostCapActor.options(name=name).remote(max_cost_usd)  # type: ignore[attr-defined]


@dataclass
class CostWatch:
    """The pending submissions' estimated cost (fast: without grounding checks) and the cap's ledger."""

    estimated_usd: float
    pending: int
    ledger: Any = None
    max_cost_usd: float | None = None
    ledger_name: str | None = None
    """The ledger actor's name: what the vendor actors are given (`jobs.sweep.actors.RemoteLedger`)."""
    _capped: bool = False

    @classmethod
    def start(
        cls,
        config: TribunalConfig,
        tasks: dict[str, Task],
        pending: Iterable[Submission],
        max_cost_usd: float | None,
        *,
        task_refs: Mapping[str, Any],
        config_ref: Any,
        ledger_name: str | None = None,
        model: OutputModel | None = None,
        ledger: Any = None,
    ) -> CostWatch:
        """Price the pending submissions (`price_pending`: `task_refs` and `config_ref` are the
        sweep's tasks and configuration in the object store) and watch the cap's ledger, if any:
        `ledger` (`start_ledger`), else one started now under `ledger_name` (`ledger_name_for`:
        the vendor actors, started before, were given it)."""
        est = price_pending(config, tasks, pending, task_refs=task_refs, config_ref=config_ref, model=model)
        name = ledger_name or ledger_name_for(max_cost_usd)
        if ledger is None:
            ledger = start_ledger(name, max_cost_usd)
        # priced as the sweep runs: at batch prices in batch mode (est.pricing)
        return cls(est.cost_usd.get(est.pricing, 0.0), est.submissions, ledger, max_cost_usd, name)

    def state(self) -> CapState | None:
        """The ledger's state, or None without a cap."""
        return cap_state(self.ledger) if self.ledger is not None else None

    def capped(self) -> bool:
        """True once the ledger refused a call: no new shard is started (latched: asked once after)."""
        if not self._capped:
            state = self.state()
            self._capped = state is not None and state.stopped
        return self._capped

    def progress_text(self, spent: float) -> str:
        """`$spent of ~$estimated` (and the cap) for the live view."""
        text = f"${spent:,.2f} of ~${self.estimated_usd:,.2f}"
        return text + (f" (cap ${self.max_cost_usd:,.2f})" if self.max_cost_usd is not None else "")

    def cap_message(self, spent: float, graded_complete: int) -> str:
        """What the operator reads when the cap stopped the sweep: spent, left, how to go on."""
        left = max(self.estimated_usd - spent, 0.0)
        return (
            f"cost cap reached: spent ${spent:,.2f} of the ${self.max_cost_usd or 0:,.2f} cap "
            f"(no call was sent that could cross it); {graded_complete:,} of {self.pending:,} pending "
            f"submissions completed; about ${left:,.2f} left to grade them all (estimate). Run the same "
            "command again (with a higher --max-cost) to continue: paid calls are not paid again."
        )
