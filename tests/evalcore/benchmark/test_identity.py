"""The benchmark's name and version: benchmark.json at its root, or its folder's name and no version."""

from __future__ import annotations

from pathlib import Path

from evalcore.benchmark.identity import BenchmarkIdentity
from evalcore.benchmark.loader import load_benchmark
from tests.conftest import BenchBuilder


def test_benchmark_json_names_the_benchmark_and_its_version(tmp_path: Path) -> None:
    BenchBuilder.write(tmp_path / "tasks", "real-estate/psa")
    (tmp_path / "benchmark.json").write_text('{"name": "legal-bench", "version": "2.1"}')
    loaded = load_benchmark(str(tmp_path))
    assert loaded.identity == BenchmarkIdentity(name="legal-bench", version="2.1") and loaded.ok


def test_without_benchmark_json_the_folder_names_it_and_it_has_no_version(tmp_path: Path) -> None:
    root = tmp_path / "my-bench"
    BenchBuilder.write(root / "tasks", "real-estate/psa")
    assert load_benchmark(str(root)).identity == BenchmarkIdentity(name="my-bench", version=None)


def test_a_damaged_benchmark_json_is_a_problem_naming_the_file_not_another_name(tmp_path: Path) -> None:
    BenchBuilder.write(tmp_path / "tasks", "real-estate/psa")
    (tmp_path / "benchmark.json").write_text('{"name": "legal-bench", "versoin": "2.1"}')
    loaded = load_benchmark(str(tmp_path))
    assert loaded.identity is None and len(loaded.tasks) == 1
    assert [(p.file, p.reason.split(" (")[0]) for p in loaded.problems] == [
        (str(tmp_path / "benchmark.json"), "not a benchmark identity")]


def test_the_sample_is_tribunal_sample_1_0() -> None:
    sample = Path(__file__).resolve().parents[3] / "examples" / "sample"
    assert load_benchmark(str(sample)).identity == BenchmarkIdentity(name="tribunal-sample", version="1.0")
