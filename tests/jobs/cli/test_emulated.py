"""Emulated runs as realistic as asked: `tribunal sweep --vendors emulated` and `tribunal emulate`
take one option set (latency, limits, faults, batch timing, personas) and build the same emulators
with it, each enforcing its vendor's own bucket; a run against emulators, either way, records
`vendors: emulated`.

`tribunal emulate` runs as a real process (stopped with Ctrl+C, as a user stops it); the judges
reach it through the real SDKs.
"""

from __future__ import annotations

import inspect
import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
import yaml
from typer.main import get_command
from typer.testing import CliRunner

from doubles.emulators.serve import emulator_config_from
from evalcore.config.load import load_config
from evalcore.config.models import VendorMode
from evalcore.emulation import KEY_ENV, EmulationOptions
from evalcore.storage.store import RunRecord
from jobs.cli.app import app
from jobs.cli.common import emulation_options
from jobs.sweep.prepare import emulator_configs, vendor_mode
from tests.jobs.conftest import SAMPLE

ROOT = Path(__file__).resolve().parents[3]
TASK = SAMPLE / "tasks" / "real-estate" / "lease-abstract"
ABSTRACT = SAMPLE / "submissions" / "gpt-strong" / "real-estate" / "lease-abstract" / "abstract.md"
EMULATION_ARGS = ["--rpm", "120", "--tpm", "90000", "--latency", "0.25", "--faults", "0.08", "--seed", "7",
                  "--batch-delay", "30", "--batch-errors", "0.1"]
SHARED = list(inspect.signature(emulation_options).parameters)
DUMMY_KEYS = {env: "emulated-key-not-a-secret" for env in KEY_ENV.values()}
runner = CliRunner()


def _command(name: str) -> Any:
    """The command as typer built it (parses and type-checks its arguments without running)."""
    return get_command(app).commands[name]  # type: ignore[attr-defined]


def _emulation_of(name: str, args: list[str]) -> EmulationOptions:
    """What the command parses `args` into, converted as the command converts it."""
    ctx = _command(name).make_context(name, args)
    return emulation_options(**{k: ctx.params[k] for k in SHARED})


def test_sweep_and_emulate_share_one_option_set_that_builds_the_same_emulators() -> None:
    def options(name: str) -> dict[str, tuple[Any, ...]]:
        return {p.name: (tuple(p.opts), p.help, p.default, p.min, p.max, p.rich_help_panel)
                for p in _command(name).params if p.name in [*SHARED, "personas"]}

    assert options("sweep") == options("emulate")
    assert set(options("sweep")) == {*SHARED, "personas"}
    swept = _emulation_of("sweep", ["bench", "-s", "subs", "--vendors", "emulated", *EMULATION_ARGS])
    served = _emulation_of("emulate", EMULATION_ARGS)
    assert swept == served == EmulationOptions(
        requests_per_minute=120, tokens_per_minute=90_000, latency_s=0.25, fault_rate=0.08, seed=7,
        batch_delay_s=30, batch_errors=0.1,
    )
    built = emulator_configs(swept)  # what `--vendors emulated` starts
    assert built == emulator_config_from(served)  # what `tribunal emulate` serves
    assert {v: c.limits.burst_s for v, c in built.items()} == {"openai": 1.0, "anthropic": 60.0, "xai": 60.0}
    assert built["openai"].faults.rate_limit == pytest.approx(0.02) and built["xai"].batch.completion_s == 30


def test_sweep_emulated_mode_enforces_each_vendors_bucket_and_budgets_at_the_emulators_limits() -> None:
    opts = EmulationOptions(requests_per_minute=600)
    with vendor_mode(load_config(vendors=VendorMode.REAL), VendorMode.EMULATED, emulation=opts) as cfg:
        by_adapter = {v.adapter: v for v in cfg.vendors()}
        with openai.OpenAI(api_key="k", base_url=by_adapter["openai"].endpoint, max_retries=0) as oc:
            raw = oc.responses.with_raw_response.create(model="gpt-6-sol", input="hi")
        with anthropic.Anthropic(api_key="k", base_url=by_adapter["anthropic"].endpoint, max_retries=0) as ac:
            araw = ac.messages.with_raw_response.create(
                model="claude-opus-5-5", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    # OpenAI: 600/min held as one second's slice (10); Anthropic: the whole minute's bucket
    assert raw.headers["x-ratelimit-limit-requests"] == "600"
    assert int(raw.headers["x-ratelimit-remaining-requests"]) <= 10
    assert int(araw.headers["anthropic-ratelimit-requests-remaining"]) >= 590
    assert {v.limits.requests_per_minute for v in cfg.vendors()} == {600}  # the budget matches the servers
    assert {v.limits.burst_s for v in cfg.vendors()} == {None}  # ... in each vendor's own bucket


def test_emulation_options_with_real_or_offline_vendors_are_refused_naming_them(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    result = runner.invoke(app, ["sweep", str(SAMPLE), "-s", str(SAMPLE / "submissions"), "-o", str(out),
                                 "--vendors", "offline", "--latency", "1", "--rpm", "60", "--no-progress"])
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "--rpm, --latency" in text and "use --vendors emulated" in text
    assert not out.exists()


# ---------------------------------------------------------------------------------------------
# `tribunal emulate` as a process
# ---------------------------------------------------------------------------------------------


@dataclass
class Served:
    """A running `tribunal emulate` and the configuration it wrote."""

    proc: subprocess.Popen[str]
    config: Path
    output: str


@pytest.fixture(scope="module")
def emulate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`tribunal emulate --personas FILE --write-config ...` until the module is done (then Ctrl+C)."""
    root = tmp_path_factory.mktemp("emulate")
    personas = root / "personas.yaml"
    personas.write_text(yaml.safe_dump({"seed": 5, "personas": {"openai": {"leniency": 0.6}, "xai": {"noise": 0.4}}}))
    written = root / "emulated.yaml"
    # Ctrl+C's default handler installed first: a child inherits an ignored SIGINT (the suite run
    # as a background job of a non-interactive shell, e.g. `make test &`), and Python then leaves
    # it ignored, so the SIGINT below would never stop the emulators (seen: a 60 s teardown timeout)
    child = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); from jobs.cli.app import app; app()"
    proc = subprocess.Popen(
        [sys.executable, "-c", child, "emulate", "--rpm", "3000",
         "--personas", str(personas), "--write-config", str(written)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    while (line := proc.stdout.readline()) and "Press Ctrl+C" not in line:  # blocks until it listens
        lines.append(line)
    assert proc.poll() is None, "".join(lines) + (proc.stderr.read() if proc.stderr else "")
    try:
        yield Served(proc, written, "".join(lines))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)


def _panel(args: list[str]) -> dict[str, dict[str, str]]:
    """criterion -> judge -> verdict of `tribunal grade ... --json`."""
    result = runner.invoke(app, ["grade", str(TASK), "-d", str(ABSTRACT), "--json", *args], env=DUMMY_KEYS)
    assert result.exit_code == 0, result.output
    panel: dict[str, dict[str, str]] = {}
    for v in json.loads(result.stdout)["verdicts"]:
        panel.setdefault(v["criterion_id"], {})[v["judge"]] = v["verdict"]
    return panel


def test_emulate_serves_openai_in_one_second_slices_and_writes_a_config_marked_emulated(emulate: Served) -> None:
    cfg = load_config(emulate.config)
    assert {v.api_key_env for v in cfg.vendors()} == set(KEY_ENV.values())  # the emulated mark
    assert "vendors: emulated" in emulate.config.read_text() and "vendors: emulated" in emulate.output
    openai_endpoint = {v.adapter: v.endpoint for v in cfg.vendors()}["openai"]
    with openai.OpenAI(api_key="k", base_url=openai_endpoint, max_retries=0) as oc:
        raw = oc.responses.with_raw_response.create(model="gpt-6-sol", input="hi")
    assert raw.headers["x-ratelimit-limit-requests"] == "3000"
    assert int(raw.headers["x-ratelimit-remaining-requests"]) <= 50  # one second of 3000/min
    assert {v.limits.requests_per_minute for v in cfg.vendors()} == {3000}


def test_emulate_with_personas_makes_the_judges_disagree(emulate: Served) -> None:
    plain = _panel(["--vendors", "emulated"])  # the offline heuristics: one answer for every judge
    bent = _panel(["--vendors", "real", "--config", str(emulate.config)])
    assert plain.keys() == bent.keys() and len(plain) > 3
    assert all(len(set(judges.values())) == 1 for judges in plain.values())
    assert any(len(set(judges.values())) > 1 for judges in bent.values())  # the panel disagrees
    assert bent != plain


@pytest.mark.ray
def test_runs_against_emulators_record_vendors_emulated_either_way(
    ray_local: None, emulate: Served, small_sample: Path, tmp_path: Path
) -> None:
    subs = tmp_path / "subs"  # one system's submissions of the small sample's tasks: what a run is made of
    shutil.copytree(small_sample / "submissions" / "gpt-strong", subs / "gpt-strong")
    out = tmp_path / "runs"
    common = ["sweep", str(small_sample), "-s", str(subs), "-o", str(out), "--no-progress"]
    direct = runner.invoke(app, [*common, "--run-id", "direct", "--vendors", "emulated", "--latency", "0.01",
                                 "--rpm", "3000"], env={"COLUMNS": "200"})
    assert direct.exit_code == 0, direct.output
    served = runner.invoke(app, [*common, "--run-id", "served", "--vendors", "real", "--config", str(emulate.config)],
                           env={"COLUMNS": "200", **DUMMY_KEYS})
    assert served.exit_code == 0, served.output
    assert "recorded as vendors: emulated" in " ".join(served.output.split())
    for run_id in ("direct", "served"):
        record = RunRecord.read(str(out / run_id))
        assert record.vendors == VendorMode.EMULATED
        assert {v.limits.requests_per_minute for v in record.config.vendors()} == {3000}
        assert json.loads((out / run_id / "leaderboard.json").read_text())["vendors"] == "emulated"
        report = runner.invoke(app, ["report", str(out / run_id)])
        assert report.exit_code == 0, report.output
        assert "vendors: emulated" in (out / run_id / "report.html").read_text()
