"""A 32-task lab graded offline and reduced: its planted spread reaches the leaderboard's tiers.

Issue 43: at lab size every system was tier 1 with rank range 1-4, because every planted system
passed all (or none) of its tasks. Graded with the offline vendor in plain asyncio (no Ray), the
default spread (`doubles.synth.lab.LAB_SYSTEMS`) must give at least two tiers at 32 tasks.
About 45 s on 2 cores: 128 submissions of 44-90 criteria x 3 offline judges are the point.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

from doubles.synth.lab import LAB_SYSTEMS, generate_lab
from evalcore import grade_submission
from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.config.models import VendorMode
from evalcore.grading.grade import GradeResult
from evalcore.results.leaderboard import ALL_AREAS
from evalcore.results.reduce import reduce_tables
from evalcore.schema import Submission
from evalcore.storage.store import read_table, write_shard
from evalcore.submissions.loader import load_submissions
from tests.runfolder import test_record

TASKS = 32


def test_a_32_task_lab_graded_offline_spreads_over_at_least_two_tiers(tmp_path: Path) -> None:
    generate_lab(tmp_path / "lab", tasks=TASKS, seed=1, scale=0.02)
    tasks = load_benchmark(str(tmp_path / "lab")).task_map()
    subs = load_submissions(str(tmp_path / "lab" / "submissions"), tasks).submissions
    assert len(subs) == TASKS * len(LAB_SYSTEMS)
    cfg = load_config(vendors=VendorMode.OFFLINE)

    async def grade() -> list[GradeResult]:
        # Four at a time, as a sweep's worker grades a few: with all 128 interleaved, every
        # offline call would miss the grounding's and the offline judge's small caches.
        gate = asyncio.Semaphore(4)

        async def one(s: Submission) -> GradeResult:
            async with gate:
                return await grade_submission(tasks[s.task_id], s, cfg)

        return list(await asyncio.gather(*(one(s) for s in subs)))

    results = asyncio.run(grade())
    run = tmp_path / "run"
    write_shard(str(run), "p0", {
        "submissions": [r.submission.model_dump() for r in results],
        "verdicts": [v.model_dump() for r in results for v in r.verdicts],
        "flags": [f.model_dump() for r in results for f in r.flags],
    })
    lb = reduce_tables(test_record("adhoc", cfg), submissions=read_table(str(run), "submissions"),
                       verdicts=read_table(str(run), "verdicts"), flags=read_table(str(run), "flags"))
    rows = {r.system: r for r in lb.systems if r.area == ALL_AREAS}
    assert set(rows) == {s.name for s in LAB_SYSTEMS}
    # The leaderboard's all-pass rates follow the configured spread. Not to the task: the offline
    # rubric judge passes some memos that omit one key term (a party's name is an optional element
    # of its PASS clause), so the measured rate is at or above the planted one, by up to 4 tasks.
    rate = {name: r.all_pass_rate.value for name, r in rows.items()}
    for planted in LAB_SYSTEMS:
        want = math.floor(planted.all_pass * TASKS + 0.5) / TASKS
        assert want <= rate[planted.name] <= want + 4 / TASKS, (planted.name, want, rate)
    assert rate["lab-weak"] < rate["lab-average"] < min(rate["lab-strong"], rate["lab-fluent"])
    assert len({round(r.hc_pass_rate.value, 6) for r in rows.values()}) == len(LAB_SYSTEMS)
    assert len({r.tier for r in rows.values()}) >= 2, {s: (r.tier, r.rank_low, r.rank_high) for s, r in rows.items()}
    assert rows["lab-strong"].tier == 1 and rows["lab-weak"].tier != 1
    audited = sum(r.submission.audited for r in results)
    assert audited >= TASKS  # the audit is exercised: every all-pass memo, far more than 3 of 32
    assert any(r.submission.gated for r in results if r.submission.system == "lab-fluent")
