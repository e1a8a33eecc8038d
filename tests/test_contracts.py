"""The dependency rules are import contracts (pyproject.toml [tool.importlinter]), checked here and in CI."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import evalcore

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = {c["id"]: c for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]}


def test_every_dependency_rule_is_a_kept_import_contract() -> None:
    assert set(CONTRACTS) == {
        "evalcore-pure", "scoring-no-io", "methodology-speaks-the-vendor-protocol",
        "emulators-only-in-emulated-mode", "evalcore-tests-without-jobs", "command-line-on-top",
        "per-run-commands-without-the-engine",
    }
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in out.stdout


def test_the_emulator_contract_covers_every_evalcore_module_but_the_emulators() -> None:
    """A new module of evalcore is covered too: the contract lists them one by one."""
    modules = {f"evalcore.{m.name}" for m in pkgutil.iter_modules(evalcore.__path__)} - {"evalcore.emulators"}
    sources = set(CONTRACTS["emulators-only-in-emulated-mode"]["source_modules"])
    assert modules <= sources, sorted(modules - sources)
