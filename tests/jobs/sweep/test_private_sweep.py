"""A sweep under the private preset keeps the benchmark's text where the operator says, on a real
local Ray cluster with the real SDKs against the emulators: a sentinel phrase planted in a source
document and in a deliverable is found, after the sweep, in no file outside the run folder and the
named cache -- the disk is searched ($HOME, /tmp, Ray's session folder with its spill folder, the
working directory) for every file written since the sweep started -- and the named cache is
private (folders 0700, files 0600).

The sweep grades a copy of the small sample (`small_sample` in `tests/jobs/conftest.py`: two tasks
with documents of every kind, 8 submissions): where the text goes is the same for 8 submissions as
for 32, and the task the sentinel is planted in is one of its two."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import stat
import time
from pathlib import Path

import docx
import pytest

from doubles.emulators import OfflineResponder
from doubles.emulators._set import start_in_thread
from evalcore.config.models import TribunalConfig
from jobs.sweep.driver import run_sweep
from jobs.sweep.options import SweepOptions
from tests.jobs.conftest import SMALL_SUBMISSIONS, emulated_config

pytestmark = [pytest.mark.ray]
SOURCE = Path("tasks/commercial-contracts/msa-renewal/documents/DataHarbor_MSA.docx")
CHUNK = 1 << 20


def _plant(bench: Path, sentinel: str) -> None:
    """The sentinel in a source document (a .docx: converted, so cached) and in a deliverable."""
    doc = docx.Document(str(bench / SOURCE))
    doc.add_paragraph(f"Schedule 9. The parties acknowledge the {sentinel} escrow arrangement.")
    doc.save(str(bench / SOURCE))
    deliverable = sorted((bench / "submissions").glob("*/commercial-contracts/msa-renewal/*.md"))[0]
    with deliverable.open("a", encoding="utf-8") as f:
        f.write(f"\n\nNote: the {sentinel} escrow arrangement survives termination.\n")


def _holding(roots: list[Path], needle: bytes, since: float, skip: list[Path]) -> list[str]:
    """Every regular file under ``roots`` written since ``since`` (outside ``skip``) holding ``needle``.

    Walked with `os.scandir`, one `stat` per file and none per folder: symbolic links are never
    followed, so a folder's path under a resolved root is already its real path (a root under
    another root, such as Ray's session folder under /tmp, is walked once). /tmp on a machine that
    keeps old clones holds hundreds of thousands of files; resolving every folder's path made
    this walk the slowest part of the test."""
    skipped = {os.path.realpath(p) for p in skip}
    found: list[str] = []
    seen: set[str] = set()
    pending = [os.path.realpath(root) for root in roots]
    while pending:
        folder = pending.pop()
        if folder in skipped or folder in seen:
            continue
        seen.add(folder)
        try:
            entries = list(os.scandir(folder))
        except OSError:  # gone, or not readable: nothing this test can see
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                    continue
                st = entry.stat(follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode) or max(st.st_mtime, st.st_ctime) < since:
                    continue
                if _holds(entry.path, needle):
                    found.append(entry.path)
            except OSError:  # gone, or not readable: not a copy this test can see
                continue
    return found


def _holds(path: str, needle: bytes) -> bool:
    """Whether the file holds ``needle``, read a chunk at a time (a needle across two chunks too)."""
    with open(path, "rb") as f:
        tail = b""
        while chunk := f.read(CHUNK):
            if needle in tail + chunk:
                return True
            tail = chunk[-len(needle):]
    return False


def test_a_private_sweep_leaves_the_benchmarks_text_only_in_the_run_folder_and_the_named_cache(
    ray_local, small_sample, tmp_path
) -> None:
    import ray

    sentinel = f"Quillmarrow{secrets.token_hex(6)}"
    bench = tmp_path / "bench"
    shutil.copytree(small_sample, bench)
    _plant(bench, sentinel)
    cache, out = tmp_path / "named-cache", tmp_path / "out"
    started = time.time() - 1
    with start_in_thread(responder=OfflineResponder()) as emus:
        data = emulated_config(emus.endpoints).public_dict()
        data["data_governance"] = {"preset": "private", "cache_dir": str(cache)}
        for entry in (*data["judges"], data["auditor"]):  # the default gpt-6-sol accepts only a day of
            if entry["adapter"] == "openai":               # prompt caching, which private refuses
                entry["model"] = "gpt-5.4"
        cfg = TribunalConfig.model_validate(data)
        summary = run_sweep(SweepOptions(
            benchmark=str(bench), submissions=str(bench / "submissions"), output=str(out), config=cfg,
            vendors="emulated", run_id="private", progress=False, shard_size=8, max_in_flight=4,
        ))
        sent = "".join(json.dumps(r.body) for v in ("openai", "anthropic", "xai") for r in emus.received(v))
        retention = {r.settings.get("prompt_cache_retention") for r in emus.received("openai") if r.api == "responses"}
    assert retention == {"in_memory"}  # no request asked OpenAI to keep the prompts a day
    assert summary.complete == SMALL_SUBMISSIONS and not summary.failed_shards
    assert sentinel in sent  # the judges were sent the planted text: there was something to copy

    run = out / "private"
    needle = sentinel.encode()
    assert _holding([cache], needle, started, skip=[])  # the search finds the copies it may find
    session = Path(ray._private.worker._global_node.get_session_dir_path())
    roots = [Path.home(), Path("/tmp"), session, Path.cwd()]
    stray = _holding(roots, needle, started, skip=[bench, run, cache])
    assert stray == [], f"copies of the benchmark's text outside the run folder and the named cache: {stray}"
    assert not (out / "_cache").exists() and not (out / "_ocr").exists()

    for folder, _, files in os.walk(cache):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder
        for name in files:
            assert stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o600, name


def test_a_private_sweep_with_no_named_cache_keeps_converted_text_and_ocr_in_memory_only(
    ray_local, small_sample, tmp_path
) -> None:
    """No `cache_dir`: the converted documents stay in the driver's memory and the OCR tasks send
    their pages back through Ray, so nothing of the benchmark is left beside the run folder (it
    was: `<output>/_cache/docs/…`, which deleting the run leaves)."""
    import ray

    sentinel = f"Quillmarrow{secrets.token_hex(6)}"
    bench = tmp_path / "bench"
    shutil.copytree(small_sample, bench)
    _plant(bench, sentinel)
    out = tmp_path / "out"
    started = time.time() - 1
    with start_in_thread(responder=OfflineResponder()) as emus:
        data = emulated_config(emus.endpoints).public_dict()
        data["data_governance"] = {"preset": "private"}
        for entry in (*data["judges"], data["auditor"]):
            if entry["adapter"] == "openai":
                entry["model"] = "gpt-5.4"
        summary = run_sweep(SweepOptions(
            benchmark=str(bench), submissions=str(bench / "submissions"), output=str(out),
            config=TribunalConfig.model_validate(data), vendors="emulated", run_id="private", progress=False,
            shard_size=8, max_in_flight=4,
        ))
        sent = "".join(json.dumps(r.body) for v in ("openai", "anthropic", "xai") for r in emus.received(v))
    assert summary.complete == SMALL_SUBMISSIONS and not summary.failed_shards
    assert sentinel in sent
    assert summary.ocr["cache_uri"] is None  # the OCR step wrote no cache: its pages stay in memory

    run = out / "private"
    assert sorted(p.name for p in out.iterdir()) == ["private"]  # no _cache, no _ocr beside the run
    session = Path(ray._private.worker._global_node.get_session_dir_path())
    roots = [Path.home(), Path("/tmp"), session, Path.cwd()]
    stray = _holding(roots, sentinel.encode(), started, skip=[bench, run])
    assert stray == [], f"copies of the benchmark's text outside the run folder: {stray}"
