"""The dependency rules are import contracts (pyproject.toml [tool.importlinter]), checked here and in CI."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = {c["id"]: c for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]}


def test_every_dependency_rule_is_a_kept_import_contract() -> None:
    assert set(CONTRACTS) == {
        "evalcore-pure", "scoring-no-io", "methodology-speaks-the-vendor-protocol",
        "doubles-only-where-they-stand-in", "evalcore-tests-without-jobs", "command-line-on-top",
        "per-run-commands-without-the-engine",
    }
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in out.stdout


def test_the_library_never_imports_its_doubles() -> None:
    """The emulators, the offline judge and synth live apart (`doubles/`): evalcore, all of it, may not import them."""
    assert "doubles" in CONTRACTS["evalcore-pure"]["forbidden_modules"]
    assert CONTRACTS["evalcore-pure"]["source_modules"] == ["evalcore"]
