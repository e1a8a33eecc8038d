"""A 32-task lab graded offline and reduced: its planted spread reaches the leaderboard's tiers.

Issue 43: at lab size every system was tier 1 with rank range 1-4, because every planted system
passed all (or none) of its tasks. Graded with the offline vendor in plain asyncio (no Ray), the
default spread (`doubles.synth.lab.LAB_SYSTEMS`) must give at least two tiers at 32 tasks.
About 45 s on 2 cores: 128 submissions of 44-90 criteria x 3 offline judges are the point.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

from doubles.synth.lab import LAB_SYSTEMS, generate_lab
from evalcore import grade_submission
from evalcore.benchmark.loader import load_benchmark
from evalcore.config.load import load_config
from evalcore.config.models import TribunalConfig, VendorMode
from evalcore.grading.grade import GradeResult
from evalcore.results.leaderboard import ALL_AREAS
from evalcore.results.reduce import reduce_tables
from evalcore.schema import Submission, Task
from evalcore.storage.store import read_table, write_shard
from evalcore.submissions.loader import load_submissions
from tests.runfolder import test_record

TASKS = 32


def _grade_four_at_a_time(tasks: dict[str, Task], subs: list[Submission], cfg: TribunalConfig) -> list[GradeResult]:
    """Every submission graded in plain asyncio, four at a time and task by task, as a sweep's worker
    grades a shard (`jobs.sweep.intake`: task-major shards): with all of a lab's submissions
    interleaved, every offline call would miss the grounding's and the offline judge's small caches,
    and in the loader's order (system by system) each submission rebuilt its task's source index."""
    subs = sorted(subs, key=lambda s: (s.task_id, s.system))

    async def grade() -> list[GradeResult]:
        gate = asyncio.Semaphore(4)

        async def one(s: Submission) -> GradeResult:
            async with gate:
                return await grade_submission(tasks[s.task_id], s, cfg)

        return list(await asyncio.gather(*(one(s) for s in subs)))

    return asyncio.run(grade())


def test_a_32_task_lab_graded_offline_spreads_over_at_least_two_tiers(tmp_path: Path) -> None:
    generate_lab(tmp_path / "lab", tasks=TASKS, seed=1, scale=0.02)
    tasks = load_benchmark(str(tmp_path / "lab")).task_map()
    subs = load_submissions(str(tmp_path / "lab" / "submissions"), tasks).submissions
    assert len(subs) == TASKS * len(LAB_SYSTEMS)
    cfg = load_config(vendors=VendorMode.OFFLINE)

    results = _grade_four_at_a_time(tasks, subs, cfg)
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


EMULATED_TASKS = 4


def test_a_4_task_lab_graded_by_the_demo_personas_through_the_emulators_audits_each_planted_all_pass_memo(
    tmp_path: Path,
) -> None:
    """Under `--personas demo` the planted spread survives the panel's noise at lab size: the demo
    personas' rates are stated for the sample's rubric and memo lengths (`Persona.noise_criteria`,
    `false_flag_sentences`), so most memos planted all-pass are passed by at least one judge and
    audited, and the all-pass rates keep the planted order. Before, per-verdict noise compounding over 44-90
    criteria left every system near 0 % all-pass and audited 5 of 32 submissions (issue 43).
    Graded in plain asyncio against the emulators (the real SDK clients, no Ray): about 20 s on 2
    cores; with the rates per verdict it audits 4 of the 8 planted all-pass memos (5 of 16 at 8 tasks)."""
    from jobs.sweep.prepare import load_personas, remember_family, vendor_mode

    generate_lab(tmp_path / "lab", tasks=EMULATED_TASKS, seed=1, scale=0.02)
    truth = json.loads((tmp_path / "lab" / "ground_truth.json").read_text())
    tasks = load_benchmark(str(tmp_path / "lab")).task_map()
    subs = load_submissions(str(tmp_path / "lab" / "submissions"), tasks).submissions
    cfg = load_config(vendors=VendorMode.EMULATED)
    panel = load_personas("demo", cfg)
    for s in subs:
        remember_family(panel, cfg, s, tasks[s.task_id])
    assert set(panel.rubric_sizes.values()) == {len(t.criteria) for t in tasks.values()}

    with vendor_mode(cfg, VendorMode.EMULATED, panel) as run_cfg:
        results = _grade_four_at_a_time(tasks, subs, run_cfg)
    planted = {(system, task) for system, by_task in truth["verdicts"].items() for task, verdicts in by_task.items()
               if all(v == "pass" for v in verdicts.values())}
    audited = {(r.submission.system, r.submission.task_id) for r in results if r.submission.audited}
    # A planted all-pass memo keeps its all-pass with the xAI judge with 0.9^15 ~ 0.21 and with the
    # others with ~0.63 (0.97^15), so at least one judge passes it with ~0.89: per verdict it was ~0.36.
    assert len(audited & planted) >= 0.75 * len(planted), (len(audited & planted), len(planted))
    rate = {s.name: sum(r.submission.task_score or 0.0 for r in results if r.submission.system == s.name)
            / EMULATED_TASKS for s in LAB_SYSTEMS}
    assert rate["lab-weak"] < rate["lab-average"] < min(rate["lab-strong"], rate["lab-fluent"]), rate
