"""A sweep's estimate (`jobs.sweep.cost_watch`): the pending submissions priced in chunks on the cluster add up
to the estimate of them all, made in one process."""

from __future__ import annotations

from typing import Any

import pytest
import ray

from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.cost import estimate as estimate_module
from evalcore.submissions.loader import load_submissions
from jobs.sweep import cost_watch as cost
from jobs.sweep.shard_work import put_config
from tests.jobs.conftest import SAMPLE


@pytest.mark.usefixtures("ray_local")
def test_pending_submissions_priced_in_chunks_on_the_cluster_cost_what_one_estimate_of_them_all_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tasks = load_benchmark(str(SAMPLE)).task_map()
    subs = load_submissions(str(SAMPLE / "submissions"), tasks).submissions
    config = load_config(vendors="emulated")
    whole = estimate_module.estimate(tasks, subs, config, fast=True)
    here: list[int] = []  # the submissions priced in this process (the workers have their own module)
    real_part = cost.estimate_part

    def counted(tasks_: Any, submissions: Any, *args: Any, **kwargs: Any) -> Any:
        submissions = list(submissions)
        here.append(len(submissions))
        return real_part(tasks_, submissions, *args, **kwargs)

    monkeypatch.setattr(cost, "estimate_part", counted)
    task_refs = {tid: ray.put(t) for tid, t in tasks.items()}
    est = cost.price_pending(config, tasks, iter(subs), task_refs=task_refs, config_ref=put_config(config),
                             chunk=5)
    assert here == [len(subs) % 5]  # every full chunk went to a Ray task
    assert (est.submissions, est.too_long) == (whole.submissions, whole.too_long) == (len(subs), 0)
    assert est.cost_usd == pytest.approx(whole.cost_usd)
    assert est.min_wall_s == pytest.approx(whole.min_wall_s)
    assert [v.calls for v in est.vendors] == pytest.approx([v.calls for v in whole.vendors])
