"""Disk cache entries check themselves: a damaged, foreign or edited entry is discarded and rebuilt,
with one warning naming the entry file, and its text is never used.

The tester's cases: a converted-PDF entry that is not valid JSON (was a ValidationError traceback in
validate and sweep), and an entry replaced by valid JSON with other text (was used silently).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.benchmark import cache, documents, ocr
from evalcore.benchmark.documents import convert
from evalcore.benchmark.validate import validate
from evalcore.schema import sha256_bytes

WARNING = "damaged cache entry discarded and rebuilt from its input"


@pytest.fixture
def disk_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty disk cache for this test, and an empty memory cache (every read goes to disk)."""
    root = tmp_path / "cache"
    monkeypatch.setenv("TRIBUNAL_CACHE_DIR", str(root))
    monkeypatch.delenv("TRIBUNAL_OCR_CACHE", raising=False)
    monkeypatch.setattr(cache, "_warned", set())
    cache.clear_cache()
    yield root
    cache.clear_cache()


def _entry(data: bytes, kind: str) -> Path:
    folder = documents.documents_dir()
    assert folder is not None
    return cache.entry_file(folder, sha256_bytes(data), kind)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "evalcore.benchmark.cache"]


def _envelope(entry: bytes, **changes: object) -> bytes:
    """The entry with some envelope fields changed (its content hash left as it was)."""
    return json.dumps({**json.loads(entry), **changes}).encode()


def test_an_entry_is_an_envelope_with_both_hashes_and_round_trips(docs, disk_cache) -> None:
    data = docs.pdf("Closing date: 1 May 2024.")
    first = convert("a.pdf", data)
    envelope = json.loads(_entry(data, "pdf").read_bytes())
    assert envelope["input_sha256"] == sha256_bytes(data) and envelope["key"] == "docs/v2/pdf"
    assert envelope["content_sha256"] == sha256_bytes(envelope["content"].encode())
    cache.clear_cache()
    assert convert("a.pdf", data) == first
    assert cache.cache_stats() == {"hits": 1, "misses": 0}


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda entry, other: b"{not json at all", "not valid JSON"),
        (lambda entry, other: b"", "not valid JSON"),
        (lambda entry, other: entry[:-10], "not valid JSON (truncated"),
        (lambda entry, other: json.loads(entry)["content"].encode(), "not a format-1 Tribunal cache entry"),
        (lambda entry, other: _envelope(entry, content='{"pages": [{"number": 1, "text": "Closing date: 9 May 2031."}]}'),
         "its content does not match the hash in it"),
        (lambda entry, other: other, "made from another input"),
        (lambda entry, other: cache.seal(json.loads(entry)["input_sha256"], "docs/v2/pdf", '{"pages": "not a list"}'),
         "its content is not valid"),
        (lambda entry, other: _envelope(entry, key="docs/v2/docx"), "holds 'docs/v2/docx', expected 'docs/v2/pdf'"),
    ],
    ids=["not-json", "empty", "truncated", "bare-paged-text", "other-text-same-hash", "another-inputs-entry",
         "not-paged-text", "other-kind"],
)
def test_a_damaged_converted_document_entry_is_rebuilt_with_one_warning_naming_it(
    docs, disk_cache, caplog, damage, reason
) -> None:
    data = docs.pdf("Closing date: 1 May 2024.", "Deposit: $150,000.")
    other = docs.pdf("Another document entirely.")
    good = convert("a.pdf", data)
    convert("b.pdf", other)
    path = _entry(data, "pdf")
    path.write_bytes(damage(path.read_bytes(), _entry(other, "pdf").read_bytes()))
    cache.clear_cache()
    with caplog.at_level(logging.WARNING, logger="evalcore.benchmark.cache"):
        again = convert("a.pdf", data)
        cache.clear_cache()
        convert("a.pdf", data)  # the rebuilt entry is served: no second warning
    assert again == good
    warned = _warnings(caplog)
    assert len(warned) == 1 and warned[0].startswith(f"{path}: {WARNING}") and reason in warned[0]
    assert cache.unseal(path.read_bytes(), sha256_bytes(data), "docs/v2/pdf")  # rewritten whole


def test_an_entry_that_cannot_be_rebuilt_warns_once_per_process_not_once_per_read(docs, disk_cache, caplog) -> None:
    data = docs.docx(["Memo"])
    convert("memo.docx", data)
    path = _entry(data, "docx")
    with caplog.at_level(logging.WARNING, logger="evalcore.benchmark.cache"):
        for _ in range(3):
            path.write_bytes(b"garbage")  # as if the rewrite kept failing
            cache.clear_cache()
            assert convert("memo.docx", data).text == "Memo"
    assert len(_warnings(caplog)) == 1


def test_validate_with_a_damaged_shared_cache_entry_reports_no_problem_and_no_traceback(
    tmp_path, bench, docs, disk_cache, caplog
) -> None:
    pdf = docs.pdf("Exhibit B. Monthly uptime commitment: 99.9 percent.")
    root = tmp_path / "bench"
    bench.write(root / "tasks", "area/task", documents={"sla.pdf": pdf})
    assert validate(str(root)).ok
    path = _entry(pdf, "pdf")
    path.write_bytes(b"not json")  # what the tester did to the shared default cache
    cache.clear_cache()
    with caplog.at_level(logging.WARNING, logger="evalcore.benchmark.cache"):
        report = validate(str(root))
    assert report.ok and report.n_tasks == 1
    assert [w.split(":")[0] for w in _warnings(caplog)] == [str(path)]


def test_a_damaged_ocr_page_entry_is_recognised_again_with_one_warning(disk_cache, caplog) -> None:
    from examples.sample_gen.scans import scanned_pdf

    data, _ = scanned_pdf()
    sha = sha256_bytes(data)
    first = ocr.ocr_document_pages("pdf", data, [1])[0]
    assert ocr.cached_page(sha, 1) == first
    path = next(disk_cache.rglob(f"{sha}-p00001{cache.ENTRY_SUFFIX}"))
    entry = path.read_bytes()
    page_two = cache.seal(sha, ocr._entry_key(1), first.model_copy(update={"number": 2}).model_dump_json())
    cases = {
        first.model_dump_json().encode(): "not a format-1 Tribunal cache entry",
        _envelope(entry, key="ocr/elsewhere"): "holds 'ocr/elsewhere'",
        _envelope(entry, content=first.model_copy(update={"text": "forged"}).model_dump_json()): "does not match the hash",
        page_two: "it holds page 2",
        cache.seal(sha, ocr._entry_key(1), '{"number": "one"}'): "its content is not an OCR page",
    }
    with caplog.at_level(logging.WARNING, logger="evalcore.benchmark.cache"):
        for damaged, reason in cases.items():
            cache._warned.clear()
            path.write_bytes(damaged)
            assert ocr.cached_page(sha, 1) is None
            assert reason in _warnings(caplog)[-1] and _warnings(caplog)[-1].startswith(str(path))
        caplog.clear()
        cache._warned.clear()
        before = ocr.engine_pages()
        assert ocr.ocr_document_pages("pdf", data, [1])[0] == first
    assert ocr.engine_pages() == before + 1  # recognised again, and the entry rewritten
    assert ocr.cached_page(sha, 1) == first
    assert len(_warnings(caplog)) == 1


@given(data=st.binary(max_size=64), kind=st.sampled_from(sorted(set(documents._KIND_BY_EXTENSION.values()))),
       page=st.integers(min_value=1, max_value=99_999), other=st.text(max_size=80))
def test_an_entry_file_name_gives_back_the_hash_of_its_input_and_no_other_name_gives_one(
    data: bytes, kind: str, page: int, other: str
) -> None:
    sha = sha256_bytes(data)
    assert cache.entry_input(cache.entry_file(Path("/c"), sha, kind).name) == sha
    assert cache.entry_input(Path(ocr._cache_file("/c", sha, page)).name) == sha
    assert cache.entry_input(f".{sha}.{kind}.tmp") is None  # a write in progress is no entry
    found = cache.entry_input(other)
    assert found is None or (other.startswith(found) and other.endswith(cache.ENTRY_SUFFIX))
