"""Emulated judges with planted biases, swept on a real local Ray cluster through the real SDKs:
the reduction, the calibration and the comparison must recover what was planted.

Run A: the Anthropic judge passes a failing criterion of its own family's work with probability
0.7, the xAI judge flips 10% of its verdicts, the OpenAI judge and the auditor are the plain offline
heuristics. Run B: the same panel (its answers reused from A, so identical) with the auditor swapped
for one that raises each of the offline auditor's flags with probability 0.4.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest
import yaml
from typer.testing import CliRunner

from evalcore.config.load import load_config
from evalcore.storage.store import read_table
from jobs.cli.app import app
from jobs.per_run.calibrate import calibrate_run
from jobs.per_run.compare import compare_runs
from jobs.per_run.reduce import reduce_run
from jobs.sweep.driver import run_sweep
from jobs.sweep.options import SweepOptions
from jobs.sweep.prepare import load_personas, remember_family, vendor_mode
from tests.jobs.conftest import SAMPLE

pytestmark = [pytest.mark.ray]

SELF_BIAS = 0.7
NOISE = 0.1
RECALL = 0.4
AUDITOR_B = "gpt-6.1-sol"  # another id the SDK lists: the emulators answer it (an unknown id is a 404)
LABELS = str(SAMPLE / "ground_truth.json")


def _sweep(cfg: Any, personas_file: Path, output: Path, run_id: str, reuse: list[str]) -> Any:
    """The whole sample, in one shard: the statistics need every submission (the self-family bias is
    bootstrapped over claude-average's 8 gradings against the 16 of the other two families, the
    auditor's recall over the labels of all four systems), and one shard starts the fewest Ray
    workers (the personas' answers hang on the content alone, never on the shard layout). The
    personas learn each submission's family during intake's one read (`on_submission`), as
    `prepare_run` wires them: the planted self-family bias is found only if they did."""
    panel = load_personas(str(personas_file), cfg)
    with vendor_mode(cfg, "emulated", panel) as run_cfg:
        return run_sweep(SweepOptions(
            benchmark=str(SAMPLE), submissions=str(SAMPLE / "submissions"), output=str(output), config=run_cfg,
            vendors="emulated", run_id=run_id, progress=False, shard_size=32, max_in_flight=1, reuse=reuse,
            on_submission=lambda s, t: remember_family(panel, cfg, s, t),
        ))


@pytest.fixture(scope="module")
def runs(ray_local: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("personas")
    personas = {"seed": 11, "personas": {"anthropic": {"self_bias": SELF_BIAS}, "xai": {"noise": NOISE}}}
    (root / "a.yaml").write_text(yaml.safe_dump(personas))
    personas["personas"][AUDITOR_B] = {"recall": RECALL}
    (root / "b.yaml").write_text(yaml.safe_dump(personas))
    cfg = load_config(vendors="real")
    a = _sweep(cfg, root / "a.yaml", root / "runs", "a", [])
    cfg_b = cfg.model_copy(update={"auditor": cfg.auditor.model_copy(update={"model": AUDITOR_B})})
    b = _sweep(cfg_b, root / "b.yaml", root / "runs", "b", ["a"])
    return {"a": a, "b": b, "root": root}


def test_self_family_preference_interval_covers_the_planted_bias_and_excludes_zero(runs: dict[str, Any]) -> None:
    lb = reduce_run(runs["a"].run_uri)
    pref = {p.judge: p for p in lb.judges.self_preference}["anthropic"]
    assert pref.systems == ["claude-average"]
    # the OpenAI judge is the plain heuristics: its pass rate on these items is the unbiased one
    v = read_table(runs["a"].run_uri, "verdicts")
    own = v.filter(pc.and_(pc.equal(v.column("system"), "claude-average"), pc.equal(v.column("judge"), "openai")))
    base_pass = pc.mean(pc.cast(pc.equal(own.column("verdict"), "pass"), "float64")).as_py()
    base_fail = 1.0 - base_pass
    # anthropic: base + S·F; others' mean: (base + xai's noisy base) / 2 = P + noise·(F − P)/2
    planted = SELF_BIAS * base_fail - NOISE * (base_fail - base_pass) / 2
    assert pref.delta.low is not None and pref.delta.high is not None
    assert pref.delta.low <= planted <= pref.delta.high
    assert pref.delta.low > 0
    # on other families' systems the Anthropic judge is unbiased: only xai's noise separates them
    assert pref.control_delta.low is not None and pref.control_delta.high is not None
    assert pref.control_delta.low <= 0 <= pref.control_delta.high


def test_a_noisy_judge_lowers_agreement_below_1(runs: dict[str, Any]) -> None:
    lb = reduce_run(runs["a"].run_uri)
    kappa = {(c.judge_a, c.judge_b): c.kappa for c in lb.judges.cohen}
    assert lb.judges.fleiss_kappa is not None and lb.judges.fleiss_kappa < 1.0
    with_xai = [k for pair, k in kappa.items() if "xai" in pair]
    without = [k for pair, k in kappa.items() if "xai" not in pair]
    assert max(k or 0 for k in with_xai) < min(k or 0 for k in without)


def test_calibration_recovers_the_planted_auditor_recall(runs: dict[str, Any]) -> None:
    cal_a = calibrate_run(runs["a"].run_uri, LABELS)
    cal_b = calibrate_run(runs["b"].run_uri, LABELS)
    assert cal_a.auditor.audited_submissions == cal_b.auditor.audited_submissions > 0
    assert cal_a.auditor.labelled == cal_b.auditor.labelled > 0
    base = cal_a.auditor.recall.value
    got = cal_b.auditor.recall
    assert base is not None and got.value is not None and got.low is not None and got.high is not None
    assert got.low <= RECALL * base <= got.high
    assert cal_b.auditor.found < cal_a.auditor.found
    assert (Path(runs["b"].run_uri) / "calibration.parquet").exists()


def test_compare_of_the_swapped_auditor_shows_flag_changes_and_no_verdict_changes(runs: dict[str, Any]) -> None:
    cmp = compare_runs(runs["a"].run_uri, runs["b"].run_uri, out=str(runs["root"] / "cmp.json"))
    assert all(j.changed == 0 for j in cmp.judges) and len(cmp.judges) == 3
    assert (cmp.flags.auditor_a, cmp.flags.auditor_b) == ("gpt-6-sol", AUDITOR_B)
    assert cmp.flags.only_b == 0 < cmp.flags.only_a
    assert cmp.flags.upheld_both + cmp.flags.only_a == cmp.flags.confirmed_a
    assert (runs["root"] / "cmp.json").exists()
    # only the swapped auditor was paid for in B (plus the preflights)
    assert runs["b"].reused_calls > 0 and runs["b"].paid_calls < runs["a"].paid_calls / 10


def test_calibrate_and_compare_commands_print_their_tables_and_report_shows_calibration(runs: dict[str, Any]) -> None:
    cli = CliRunner()
    res = cli.invoke(app, ["calibrate", runs["a"].run_uri, "--labels", LABELS])
    assert res.exit_code == 0, res.output
    assert "Judges against the experts" in res.output and "Auditor on" in res.output
    res = cli.invoke(app, ["compare", runs["a"].run_uri, runs["b"].run_uri])
    assert res.exit_code == 0, res.output
    assert "Verdicts that changed" in res.output and "Kendall" in res.output
    res = cli.invoke(app, ["report", runs["a"].run_uri])
    assert res.exit_code == 0, res.output
    html = (Path(runs["a"].run_uri) / "report.html").read_text()
    assert 'id="calibration"' in html and "Judges against the experts" in html
    res = cli.invoke(app, ["calibrate", runs["a"].run_uri, "--labels", str(runs["root"] / "missing.jsonl")])
    assert res.exit_code == 1 and "labels file not found" in " ".join(res.output.split())


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("personas: {xai: {noise: 2}}", "invalid persona at personas.xai.noise"),
        ("personas: {xai: {mood: grumpy}}", "invalid persona at personas.xai.mood"),
        ("- just a list", "a personas file is a mapping"),
    ],
)
def test_a_bad_personas_file_is_refused_naming_the_file_and_setting(tmp_path: Path, content: str, reason: str) -> None:
    from evalcore.errors import InputError

    path = tmp_path / "personas.yaml"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        load_personas(str(path), load_config(vendors="real"), str(SAMPLE), str(SAMPLE / "submissions"))
    assert str(path) in str(err.value) and reason in str(err.value)


def test_demo_personas_are_three_distinct_judges_and_recognise_each_familys_submissions() -> None:
    panel = load_personas("demo", load_config(vendors="real"), str(SAMPLE), str(SAMPLE / "submissions"))
    judges = [panel.personas[v] for v in ("openai", "xai", "anthropic")]
    assert len({j.model_dump_json() for j in judges}) == 3 and not any(j.is_neutral() for j in judges)
    # 3 of the 4 sample systems have a family (gpt-, claude-, grok-): 8 submissions each
    assert sorted(panel.families.values()).count("anthropic") == 8 and len(panel.families) == 24


def test_personas_are_refused_outside_emulated_mode() -> None:
    from doubles.emulators.responders import PersonaSet
    from evalcore.errors import ConfigError

    with pytest.raises(ConfigError, match="emulated"), vendor_mode(load_config(vendors="offline"), "offline",
                                                                    PersonaSet()):
        pass
