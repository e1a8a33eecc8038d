"""`tribunal purge RUN --local` removes the run's entries from the local caches: every converted
document and OCR page made from a file of its benchmark or submissions, in its named
`data_governance.cache_dir` and in its output folder's shared `_cache/` and `_ocr/`, found by the
file's SHA-256; an entry of a file the run does not hold (another run's) and the run folder stay.

The entries are made by the real conversion and OCR code (an HTML source, an HTML deliverable, a
scanned page whose recognition is stubbed: tesseract is not what is tested) and checked on disk."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalcore.benchmark import cache, documents, ocr
from evalcore.config.load import load_config
from jobs.cli.app import app
from jobs.sweep.identity import run_record
from jobs.sweep.options import SweepOptions


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _entries(folder: Path) -> set[str]:
    """The input hashes of every cache entry under ``folder``."""
    return {sha for p in folder.rglob("*") if p.is_file() and (sha := cache.entry_input(p.name)) is not None}


def test_purge_local_deletes_the_runs_entries_in_its_named_and_shared_caches_and_nothing_else(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench, out, named = tmp_path / "bench", tmp_path / "out", tmp_path / "named"
    source = b"<html><body><p>The lessee shall pay rent monthly.</p></body></html>"
    scan = b"\x89PNG not really a scan: its recognition is stubbed"
    deliverable = b"<html><body><p>Memo: the rent is payable monthly.</p></body></html>"
    other = b"<html><body><p>Another run's document.</p></body></html>"
    (bench / "tasks" / "t" / "documents").mkdir(parents=True)
    (bench / "tasks" / "t" / "documents" / "lease.html").write_bytes(source)
    (bench / "tasks" / "t" / "documents" / "scan.png").write_bytes(scan)
    (bench / "submissions" / "sys" / "t").mkdir(parents=True)
    (bench / "submissions" / "sys" / "t" / "memo.html").write_bytes(deliverable)

    config = load_config(overrides={"data_governance": {"cache_dir": str(named)}})
    run = out / "run-a"
    opts = SweepOptions(benchmark=str(bench), submissions=str(bench / "submissions"), output=str(out),
                        config=config, vendors="emulated", run_id="run-a", progress=False)
    assert run_record(opts, "run-a", [], "0" * 64).create(str(run))

    monkeypatch.setattr(ocr, "recognise", lambda image: ("Scanned rider: rent review.", 91.0))
    for root in (out / "_cache", named):  # the shared cache and the named one, each with an entry of another run
        with cache.use_root(root):
            for name, data in (("lease.html", source), ("memo.html", deliverable), ("other.html", other)):
                documents.convert(name, data)
        cache.clear_cache()
    with ocr.use_cache(str(out / "_ocr")):
        ocr.ocr_page(_sha(scan), 1, lambda: None)
        ocr.ocr_page(_sha(other), 1, lambda: None)
    ours = {_sha(source), _sha(deliverable), _sha(scan)}
    assert _entries(out / "_cache") == _entries(named) == {_sha(source), _sha(deliverable), _sha(other)}
    assert _entries(out / "_ocr") == {_sha(scan), _sha(other)}
    run_files = sorted(p.relative_to(run) for p in run.rglob("*"))

    result = CliRunner().invoke(app, ["purge", str(run), "--local"])

    assert result.exit_code == 0, result.output
    assert "deleted 5 cache entries" in result.output
    for folder in (out / "_cache", named, out / "_ocr"):
        assert _entries(folder) == {_sha(other)}, folder  # the run's entries gone, another run's kept
    assert not ours & (_entries(out / "_cache") | _entries(named) | _entries(out / "_ocr"))
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == run_files  # the run folder untouched


def test_purge_local_of_a_folder_that_is_not_a_run_says_so_and_deletes_nothing(tmp_path) -> None:
    (tmp_path / "_cache").mkdir()
    (tmp_path / "_cache" / f"{'a' * 64}.html.json").write_text("{}")
    result = CliRunner().invoke(app, ["purge", str(tmp_path / "nothing"), "--local"])
    assert result.exit_code == 1
    assert f"{tmp_path / 'nothing' / 'run.json'}: not found" in result.output
    assert (tmp_path / "_cache" / f"{'a' * 64}.html.json").exists()
