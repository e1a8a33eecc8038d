"""No import circle in `evalcore`, `jobs` or `doubles`: a module that needs another's name imports it one way.

A circle (two modules that import each other, even inside a function) means neither can be read
or moved alone; the rooms of both packages are cut so that dependencies point one way. The graph
is grimp's (the one import-linter checks the contracts on), function-level imports included.
"""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest


def cycles(package: str) -> list[tuple[str, ...]]:
    """Every direct import `a -> b` of `package` for which `b` leads back to `a`, as the circle's path."""
    graph = grimp.build_graph(package, cache_dir=None)
    found = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if imported.split(".")[0] != package:
                continue
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                found.append((importer, *back))
    return found


@pytest.mark.parametrize("package", ["evalcore", "jobs", "doubles"])
def test_a_package_has_no_import_circle(package: str) -> None:
    assert cycles(package) == []


def test_a_circle_is_found_when_two_modules_import_each_other(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "circled"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from circled import b\n")
    (pkg / "b.py").write_text("def f():\n    from circled import a\n    return a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert ("circled.a", "circled.b", "circled.a") in cycles("circled")
