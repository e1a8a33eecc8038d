"""The bad-input corpus: copies of the sample benchmark, each with exactly one thing broken.

Each ``Case`` says what it breaks (``what``, also its row in docs/RELIABILITY.md), the issue item
it covers, and the exact outcome: every problem ``validate`` must report (the file it names,
relative to the copy, and fragments of the reason), how many tasks and submissions must still
load, and, for cases that could exhaust memory, the peak RSS allowed to the process that loads
them. Bombs and huge files are generated here at build time, never checked in.

Build the whole corpus to look at it, or to probe it by hand::

    python tests/badinputs/build.py /tmp/corpus            # every case
    python tests/badinputs/build.py /tmp/corpus --case docx-bomb-source
    tribunal validate /tmp/corpus/docx-bomb-source -s /tmp/corpus/docx-bomb-source/submissions

Adding a case: write a function that breaks the copy at ``root`` (helpers below), and append a
``Case`` to ``CASES`` with the outcome it must have. ``tests/badinputs/test_corpus.py`` runs every
case through ``tribunal validate``'s loader in-process (``isolate=True``: in a subprocess, with its
peak memory measured); a case for another runner (the CLI, a sweep) sets ``runner`` and gets a
runner in that module.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import sys
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "sample"
SAMPLE_TASKS = 8
SAMPLE_SYSTEMS = ("claude-average", "fluent-hallucinator", "gpt-strong", "grok-weak")
SAMPLE_SUBMISSIONS = SAMPLE_TASKS * len(SAMPLE_SYSTEMS)
MB = 2**20

# Where the cases break things (paths relative to a copy of the sample).
MSA = "tasks/commercial-contracts/msa-renewal"
MSA_ID = "commercial-contracts/msa-renewal"
MSA_DOCX = f"{MSA}/documents/DataHarbor_MSA.docx"
MSA_XLSX = f"{MSA}/documents/Uptime_and_Invoices_2025.xlsx"
LEASE_ID = "real-estate/lease-abstract"
ABSTRACT = f"submissions/gpt-strong/{LEASE_ID}/abstract.md"


@dataclass(frozen=True)
class Problem:
    """One problem a case must produce: the file it names and fragments of its reason."""

    file: str
    reason: tuple[str, ...]


@dataclass(frozen=True)
class Case:
    """A copy of the sample with one thing broken, and the exact outcome it must have."""

    id: str
    item: str
    what: str
    does: str
    breaks: Callable[[Path], None]
    problems: tuple[Problem, ...] = ()
    left_out: str | None = None
    """A task left out of the benchmark: each system's submission of it is rejected, pointing at it."""
    submissions: int | None = None
    """Submissions that must still load (default: all but those of ``left_out``)."""
    limits: dict[str, int] = field(default_factory=dict)
    """``input_limits`` for this case (the defaults when empty)."""
    submissions_uri: str = "submissions"
    isolate: bool = False
    """Load in a subprocess and measure its peak RSS (cases that could exhaust memory)."""
    peak_mb: int = 700
    runner: str = "validate"

    def expected_tasks(self) -> int:
        return SAMPLE_TASKS - (1 if self.left_out else 0)

    def expected_submissions(self) -> int:
        if self.submissions is not None:
            return self.submissions
        return SAMPLE_SUBMISSIONS - (len(SAMPLE_SYSTEMS) if self.left_out else 0)

    def expected_problems(self) -> list[Problem]:
        """The case's own problems, plus one rejection per submission of a left-out task."""
        out = list(self.problems)
        if self.left_out:
            out += [
                Problem(f"{self.submissions_uri}/{system}/{self.left_out}", ("was left out of the benchmark",))
                for system in SAMPLE_SYSTEMS
            ]
        return out


# --------------------------------------------------------------------------------------------
# Generators: bombs, huge and odd files (all built at test time)
# --------------------------------------------------------------------------------------------


def office_with(template: Path, member: str, chunks: Callable[[], Any], out: Path, level: int = 1) -> None:
    """A copy of an Office file (a zip) whose ``member`` is replaced by the streamed ``chunks``."""
    with zipfile.ZipFile(template) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as dst:
        for info in src.infolist():
            if info.filename != member:
                dst.writestr(info.filename, src.read(info.filename))
        with dst.open(member, "w", force_zip64=True) as stream:
            for chunk in chunks():
                stream.write(chunk)


def docx_xml(paragraphs: Callable[[], Any]) -> Callable[[], Any]:
    """document.xml streamed around the given paragraph chunks."""
    head = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
    )

    def chunks() -> Any:
        yield head
        yield from paragraphs()
        yield b"</w:body></w:document>"

    return chunks


def docx_bomb(template: Path, out: Path, unpacked: int) -> None:
    """A real decompression bomb: a docx whose document.xml inflates to ``unpacked`` bytes."""
    para = b"<w:p><w:r><w:t>The Tenant shall pay Rent.</w:t></w:r></w:p>" * 16384

    def paragraphs() -> Any:
        for _ in range(unpacked // len(para) + 1):
            yield para

    office_with(template, "word/document.xml", docx_xml(paragraphs), out)


def docx_text_node(template: Path, out: Path, size: int) -> None:
    """A docx with one text run of ``size`` characters (libxml2 refuses text nodes over 10 MB)."""

    def paragraphs() -> Any:
        yield b"<w:p><w:r><w:t>"
        for _ in range(size // MB):
            yield b"A" * MB
        yield b"</w:t></w:r></w:p>"

    office_with(template, "word/document.xml", docx_xml(paragraphs), out)


def xlsx_rows(template: Path, out: Path, rows: int, columns: int = 2) -> None:
    """A workbook whose first sheet has ``rows`` rows of ``columns`` numbers (streamed sheet XML)."""

    def chunks() -> Any:
        yield (
            b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet '
            b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        )
        batch: list[bytes] = []
        for r in range(1, rows + 1):
            cells = b"".join(b"<c><v>%d</v></c>" % (r * 10 + c) for c in range(columns))
            batch.append(b'<row r="%d">%s</row>' % (r, cells))
            if len(batch) == 10_000:
                yield b"".join(batch)
                batch.clear()
        yield b"".join(batch)
        yield b"</sheetData></worksheet>"

    office_with(template, "xl/worksheets/sheet1.xml", chunks, out)


def with_extra_parts(template: Path, out: Path, n: int) -> None:
    """An Office file with ``n`` extra (tiny) parts."""
    shutil.copyfile(template, out)
    with zipfile.ZipFile(out, "a") as archive:
        for i in range(n):
            archive.writestr(f"customXml/extra{i}.xml", b"<x/>")


def with_lying_size(template: Path, out: Path, member: str) -> None:
    """An Office file whose ``member`` declares a smaller uncompressed size than it inflates to:
    the directory says 1 KB, the data says more (a bomb trying to pass a size check)."""
    data = bytearray(template.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo(member)
    # Central directory entry: signature, then uncompressed size at offset 24.
    name = member.encode()
    pos = data.find(b"PK\x01\x02")
    while pos != -1:
        name_len = int.from_bytes(data[pos + 28 : pos + 30], "little")
        if data[pos + 46 : pos + 46 + name_len] == name:
            data[pos + 24 : pos + 28] = (1024).to_bytes(4, "little")
        pos = data.find(b"PK\x01\x02", pos + 4)
    local = info.header_offset
    data[local + 22 : local + 26] = (1024).to_bytes(4, "little")
    out.write_bytes(bytes(data))


def random_text_bytes(n: int, seed: int = 11) -> bytes:
    """``n`` random bytes with no NUL (binary data that a NUL sniff lets through)."""
    rng = random.Random(seed)
    return bytes(rng.randrange(1, 256) for _ in range(n))


def pdf_bytes(text: str, *, user_password: str | None = None, algorithm: str = "AES-256") -> bytes:
    """A one-page PDF with a text layer; encrypted (owner password set) when ``user_password`` is given."""
    from fpdf import FPDF
    from pypdf import PdfReader, PdfWriter

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(0, 8, text)
    data = bytes(pdf.output())
    if user_password is None:
        return data
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def pdf_file(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (numbered from 1; object 1 is the catalog) with its cross-reference table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, obj))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % offset for offset in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def pdf_stream(body: bytes, entries: bytes = b"", *, deflated: bytes | None = None) -> bytes:
    """A stream object: ``body`` deflated (or ``deflated``, already compressed), with ``entries``."""
    data = deflated if deflated is not None else zlib.compress(body, 9)
    return b"<< /Length %d /Filter /FlateDecode %s>>\nstream\n%s\nendstream" % (len(data), entries, data)


HELVETICA = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def pdf_pages(contents: list[list[bytes]], font: bytes = HELVETICA, xobjects: dict[bytes, bytes] | None = None) -> bytes:
    """A PDF whose page n draws the content streams ``contents[n]`` (objects), with font /F1 and the
    form XObjects ``xobjects`` (name -> stream object) in every page's resources."""
    forms = list((xobjects or {}).items())
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"", font]
    form_refs = b" ".join(b"/%s %d 0 R" % (name, 4 + i) for i, (name, _) in enumerate(forms))
    objects += [stream for _, stream in forms]
    kids = []
    for streams in contents:
        page_number = len(objects) + 1
        kids.append(b"%d 0 R" % page_number)
        refs = b" ".join(b"%d 0 R" % (page_number + 1 + i) for i in range(len(streams)))
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> "
            b"/XObject << %s >> >> /Contents [%s] >>" % (form_refs, refs)
        )
        objects += streams
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(kids))
    return pdf_file(objects)


def text_line(text: str) -> bytes:
    """Content that shows one line of text in /F1."""
    return b"BT /F1 12 Tf 72 720 Td (%s) Tj ET\n" % text.encode()


def deflated_spaces(n: int) -> bytes:
    """``n`` spaces, deflated (a 70 MB run compresses to ~70 KB)."""
    packer = zlib.compressobj(9)
    chunk = b" " * MB
    parts = [packer.compress(chunk[: min(MB, n - done)]) for done in range(0, n, MB)]
    return b"".join(parts) + packer.flush()


def pdf_content_bomb(pages: int, stream_bytes: int) -> bytes:
    """A PDF whose every page shows one line of text, then draws ``stream_bytes`` of spaces (deflated
    once and repeated: the content streams of the tester's 2.7 MB PDF of 40 pages x 70 MB)."""
    spaces = deflated_spaces(stream_bytes)
    return pdf_pages([
        [pdf_stream(text_line(f"Schedule C, page {n}: rates and service credits.")), pdf_stream(b"", deflated=spaces)]
        for n in range(1, pages + 1)
    ])


def to_unicode_font(characters: int, cmap_object: int) -> tuple[bytes, bytes]:
    """(font, its ToUnicode stream, to be object ``cmap_object``) mapping character code 1 to
    ``characters`` letters A."""
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Bomb def\n"
        b"1 begincodespacerange\n<00> <FF>\nendcodespacerange\n1 beginbfchar\n<01> <%s>\nendbfchar\n"
        b"endcmap CMapName currentdict /CMap defineresource pop end end" % (b"0041" * characters)
    )
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode %d 0 R >>" % cmap_object
    return font, pdf_stream(cmap)


def pdf_text_bomb(codes: int, characters: int = 256) -> bytes:
    """A PDF of a few KB whose one Tj shows ``codes`` copies of a code its font maps to ``characters``
    letters: ``codes * characters`` characters of text (4 M codes would be 1 G characters)."""
    font, cmap = to_unicode_font(characters, cmap_object=6)
    return pdf_file([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        font,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>",
        pdf_stream(b"BT /F1 12 Tf 72 720 Td (" + b"\x01" * codes + b") Tj ET"),
        cmap,
    ])


def many_criteria(task: dict[str, Any], n: int) -> None:
    """Replace a task's criteria by ``n`` copies of its first one (distinct ids and titles)."""
    first = task["criteria"][0]
    task["criteria"] = [{**first, "id": f"C-{i:05d}", "title": f"{first['title']} ({i})"} for i in range(1, n + 1)]


def empty_docx() -> bytes:
    import docx

    out = io.BytesIO()
    document = docx.Document()
    document.add_paragraph("")
    document.save(out)
    return out.getvalue()


def edit_task(root: Path, task: str, change: Callable[[dict[str, Any]], None]) -> None:
    path = root / task / "task.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def replace_deliverable(root: Path, rel: str, new_name: str, data: bytes) -> None:
    """Replace a submitted deliverable by a file named ``new_name`` in the same folder."""
    old = root / rel
    old.unlink()
    (old.parent / new_name).write_bytes(data)


def outside(root: Path) -> Path:
    """A folder next to the copy (outside the benchmark and the submissions)."""
    path = root.parent / f"{root.name}-outside"
    path.mkdir(exist_ok=True)
    return path


# --------------------------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------------------------


def _docx_bomb_source(root: Path) -> None:
    docx_bomb(SAMPLE / MSA_DOCX, root / MSA_DOCX, 160 * MB)


def _docx_bomb_deliverable(root: Path) -> None:
    (root / ABSTRACT).unlink()
    docx_bomb(SAMPLE / MSA_DOCX, root / ABSTRACT.replace(".md", ".docx"), 160 * MB)


def _xlsx_bomb_source(root: Path) -> None:
    xlsx_rows(SAMPLE / MSA_XLSX, root / MSA_XLSX, rows=200_000, columns=4)


def _pptx_parts_deliverable(root: Path) -> None:
    import pptx

    template = root.parent / f"{root.name}-template.pptx"
    deck = pptx.Presentation()
    deck.slides.add_slide(deck.slide_layouts[1]).shapes.title.text = "Lease abstract"
    deck.save(str(template))
    (root / ABSTRACT).unlink()
    with_extra_parts(template, root / ABSTRACT.replace(".md", ".pptx"), 300)


def _text_node(root: Path) -> None:
    docx_text_node(SAMPLE / MSA_DOCX, root / MSA_DOCX, 12 * MB)


def _lying_size(root: Path) -> None:
    with_lying_size(SAMPLE / MSA_DOCX, root / MSA_DOCX, "word/styles.xml")


def _big_source_file(root: Path) -> None:
    (root / MSA / "documents" / "Ledger_export.txt").write_bytes(b"2025-01-01 invoice paid\n" * (90_000))


def _huge_deliverable_file(root: Path) -> None:
    with (root / ABSTRACT).open("wb") as f:
        line = b"The Tenant shall pay Base Rent monthly in advance.\n" * 20_000
        while f.tell() < 70 * MB:
            f.write(line)


def _symlink_passwd(root: Path) -> None:
    (root / MSA / "documents" / "passwd.txt").symlink_to("/etc/passwd")


def _symlinked_folder(root: Path) -> None:
    elsewhere = outside(root) / "private"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("Privileged: settlement authority is $2.1m.")
    (root / MSA / "documents" / "linked").symlink_to(elsewhere, target_is_directory=True)


def _symlink_inside(root: Path) -> None:
    other = root / "tasks/real-estate/lease-abstract/documents"
    target = next(p for p in sorted(other.iterdir()) if p.suffix == ".txt" or p.suffix == ".pdf")
    (root / MSA / "documents" / f"shared_{target.name}").symlink_to(target)


def _million_rows(root: Path) -> None:
    xlsx_rows(SAMPLE / MSA_XLSX, root / MSA_XLSX, rows=1_000_000, columns=2)


def _cells(root: Path) -> None:
    xlsx_rows(SAMPLE / MSA_XLSX, root / MSA_XLSX, rows=100, columns=30)


def _rows_deliverable(root: Path) -> None:
    (root / ABSTRACT).unlink()
    xlsx_rows(SAMPLE / MSA_XLSX, root / ABSTRACT.replace(".md", ".xlsx"), rows=5_000)


def _long_source(root: Path) -> None:
    (root / MSA / "documents" / "Call_transcript.txt").write_text("The vendor confirmed uptime. " * 90_000)


def _aes_pdf(root: Path) -> None:
    (root / MSA / "documents" / "Exhibit_B_SLA.pdf").write_bytes(
        pdf_bytes("Exhibit B. Monthly uptime commitment: 99.9 percent.", user_password="")
    )


def _password_pdf(root: Path) -> None:
    (root / MSA / "documents" / "Exhibit_B_SLA.pdf").write_bytes(
        pdf_bytes("Exhibit B. Monthly uptime commitment: 99.9 percent.", user_password="s3cret")
    )


def _hidden_system(root: Path) -> None:
    (root / "submissions" / "grok-weak").rename(root / "submissions" / ".grok-weak")


def _dot_git(root: Path) -> None:
    git = root / "submissions" / ".git"
    (git / "objects" / "ab").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "objects" / "ab" / "cdef").write_bytes(b"x\x9c\x01")
    (root / "submissions" / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")


def _empty_deliverable(root: Path) -> None:
    (root / ABSTRACT).write_bytes(b"")


def _blank_deliverable(root: Path) -> None:
    (root / ABSTRACT).write_text("\n   \n\t\n")


def _random_deliverable(root: Path) -> None:
    (root / ABSTRACT).write_bytes(random_text_bytes(4096))


def _nul_deliverable(root: Path) -> None:
    (root / ABSTRACT).write_bytes(b"Lease abstract\x00\x00\x00binary tail")


def _textless_docx(root: Path) -> None:
    replace_deliverable(root, ABSTRACT, "abstract.docx", empty_docx())


def _random_source(root: Path) -> None:
    (root / MSA / "documents" / "Cafeteria_Vending_Agreement.txt").write_bytes(random_text_bytes(4096, seed=5))


def _manifest(root: Path, override: dict[str, Any]) -> None:
    """Replace the results folder by a JSONL manifest of inline texts; ``override`` maps
    (system, task id) to the deliverables object of that line."""
    lines = []
    subs = root / "submissions"
    for system_dir in sorted(p for p in subs.iterdir() if p.is_dir()):
        for task_json in sorted((root / "tasks").rglob("task.json")):
            task_id = task_json.parent.relative_to(root / "tasks").as_posix()
            folder = system_dir / task_id
            files = {p.name: {"text": p.read_text()} for p in sorted(folder.glob("*")) if p.is_file()}
            files = override.get((system_dir.name, task_id), files)
            lines.append(json.dumps({"system": system_dir.name, "task_id": task_id, "deliverables": files}))
    (root / "manifest.jsonl").write_text("\n".join(lines) + "\n")


def _manifest_empty_inline(root: Path) -> None:
    _manifest(root, {("gpt-strong", LEASE_ID): {"abstract": {"text": "  \n"}}})


def _manifest_control_chars(root: Path) -> None:
    noise = "".join(chr(c) for c in random_text_bytes(600, seed=3) if c < 32 or c > 126)
    _manifest(root, {("gpt-strong", LEASE_ID): {"abstract": {"text": "Abstract " + noise}}})


def _criterion_id_list(root: Path) -> None:
    edit_task(root, MSA, lambda d: d["criteria"][0].update(id=["C-001"]))


def _criterion_title_number(root: Path) -> None:
    edit_task(root, MSA, lambda d: d["criteria"][1].update(title=42))


def _criterion_title_empty(root: Path) -> None:
    edit_task(root, MSA, lambda d: d["criteria"][0].update(title="  "))


def _criterion_id_missing(root: Path) -> None:
    edit_task(root, MSA, lambda d: d["criteria"][0].pop("id"))


def _three_mb_deliverable(root: Path) -> None:
    (root / ABSTRACT).write_text("The Tenant is Brightleaf Pharmacy Inc. Base Rent is $8,272.49 per month.\n" * 42_000)


def _pdf_bomb_source(root: Path) -> None:
    (root / PDF_BOMB).write_bytes(pdf_content_bomb(40, 70 * MB))


def _pdf_bomb_deliverable(root: Path) -> None:
    replace_deliverable(root, ABSTRACT, "abstract.pdf", pdf_content_bomb(100, 70 * MB))


def _pdf_over_file_content(root: Path) -> None:
    (root / PDF_DRAWINGS).write_bytes(pdf_content_bomb(30, 10 * MB))


def _pdf_text_bomb_deliverable(root: Path) -> None:
    replace_deliverable(root, ABSTRACT, "abstract.pdf", pdf_text_bomb(4_000_000))


def _ten_thousand_criteria(root: Path) -> None:
    edit_task(root, MSA, lambda d: many_criteria(d, 10_000))


PDF_BOMB = f"{MSA}/documents/Exhibit_C_Rate_Schedule.pdf"
PDF_DRAWINGS = f"{MSA}/documents/Exhibit_D_Site_Drawings.pdf"
PDF_ABSTRACT = ABSTRACT.replace(".md", ".pdf")
PDF_PAGE_BOMB = ("page 1's content streams inflate to more than 16.0 MB",
                 "over input_limits.max_pdf_page_content_bytes = 16.0 MB", "decompression bomb", "raise it in --config")
TASK_JSON = f"{MSA}/task.json"
BOMB = ("unpacks to", "input_limits.max_unpacked_bytes", "decompression bomb", "raise it in --config")

CASES: list[Case] = [
    # item 1: decompression bombs, as a task document and as a submitted deliverable
    Case("docx-bomb-source", "1", "a task's .docx whose document.xml inflates to 160 MB (a decompression bomb)",
         "task left out: `docx unpacks to 161.2 MB from 1.3 MB ... over input_limits.max_unpacked_bytes = 128.0 MB`; nothing inflated",
         _docx_bomb_source, (Problem(MSA_DOCX, BOMB),), left_out=MSA_ID, isolate=True),
    Case("docx-bomb-deliverable", "1", "a submitted .docx deliverable that inflates to 160 MB",
         "submission rejected (`unpacks to ...`), the other 31 load; nothing inflated",
         _docx_bomb_deliverable,
         (Problem(ABSTRACT.replace(".md", ".docx"), ("deliverable 'abstract'", *BOMB)),),
         submissions=SAMPLE_SUBMISSIONS - 1, isolate=True),
    Case("xlsx-bomb-source", "1", "a task's .xlsx whose sheet XML inflates past a lowered max_unpacked_bytes",
         "task left out, the limit named with the value to set", _xlsx_bomb_source,
         (Problem(MSA_XLSX, ("xlsx unpacks to", "xl/worksheets/sheet1.xml alone", "max_unpacked_bytes")),),
         left_out=MSA_ID, limits={"max_unpacked_bytes": 8 * MB}),
    Case("pptx-too-many-parts", "1", "a submitted .pptx with hundreds of extra archive parts (limit lowered to 100)",
         "submission rejected: `pptx archive has N parts, over input_limits.max_archive_members`",
         _pptx_parts_deliverable,
         (Problem(ABSTRACT.replace(".md", ".pptx"), ("pptx archive has", "input_limits.max_archive_members = 100")),),
         submissions=SAMPLE_SUBMISSIONS - 1, limits={"max_archive_members": 100}),
    Case("docx-12mb-text-node", "1", "a task's .docx with one 12 MB text run (libxml2: 'Text node too long')",
         "task left out, said in plain words (no parser jargon)", _text_node,
         (Problem(MSA_DOCX, ("single text run", "over 10 MB of text in one node")),), left_out=MSA_ID, isolate=True),
    Case("docx-lying-part-size", "1", "a task's .docx whose zip directory under-declares a part's size",
         "task left out as corrupt (a part never inflates past its declared size; the CRC check fails)",
         _lying_size, (Problem(MSA_DOCX, ("cannot read docx file", "word/styles.xml")),), left_out=MSA_ID),
    Case("source-over-max-file-bytes", "1", "a 2 MB .txt source with max_file_bytes lowered to 1 MB",
         "task left out: `file is larger than input_limits.max_file_bytes = 1.0 MB`; the file is not read whole",
         _big_source_file,
         (Problem(f"{MSA}/documents/Ledger_export.txt", ("larger than input_limits.max_file_bytes = 1.0 MB",)),),
         left_out=MSA_ID, limits={"max_file_bytes": 1 * MB}),
    Case("deliverable-70mb-file", "1", "a 70 MB submitted .md deliverable (over the default 64 MB)",
         "submission rejected without reading the file whole; the other 31 load", _huge_deliverable_file,
         (Problem(ABSTRACT, ("deliverable 'abstract'", "larger than input_limits.max_file_bytes = 64.0 MB")),),
         submissions=SAMPLE_SUBMISSIONS - 1, isolate=True),
    # item 2: symlinks under a task's documents/
    Case("symlink-source-etc-passwd", "2", "documents/passwd.txt -> /etc/passwd",
         "task left out: `symlink points outside the benchmark folder`; the target is never read",
         _symlink_passwd, (Problem(f"{MSA}/documents/passwd.txt", ("symlink points outside the benchmark folder",)),),
         left_out=MSA_ID),
    Case("symlinked-documents-folder", "2", "documents/linked -> a folder outside the benchmark",
         "task left out, the linked file named", _symlinked_folder,
         (Problem(f"{MSA}/documents/linked/notes.txt", ("symlink points outside the benchmark folder",)),),
         left_out=MSA_ID),
    Case("symlink-source-inside-benchmark", "2", "a source linked to another task's document (inside the benchmark)",
         "accepted: a link that stays in the benchmark is an ordinary source", _symlink_inside),
    # item 3: a deliverable far over the prompt budget
    Case("deliverable-3mb-text", "3", "a 3 MB submitted .md deliverable (over the 180k-token prompt budget)",
         "loads (it is graded `too_long`, before any grounding or call; see the sweep case)", _three_mb_deliverable),
    # item 4: large spreadsheets
    Case("xlsx-million-rows-source", "4", "a task's .xlsx with 1,000,000 rows",
         "task left out at row 100,001: `more than 100,000 rows ... input_limits.max_sheet_rows`; memory flat",
         _million_rows, (Problem(MSA_XLSX, ("more than 100,000 rows", "input_limits.max_sheet_rows")),),
         left_out=MSA_ID, isolate=True),
    Case("xlsx-cells-over-limit", "4", "a task's .xlsx with 3,000 cells, max_sheet_cells lowered to 1,000",
         "task left out, the sheet and row named", _cells,
         (Problem(MSA_XLSX, ("more than 1,000 cells", "input_limits.max_sheet_cells")),),
         left_out=MSA_ID, limits={"max_sheet_cells": 1_000}),
    Case("xlsx-rows-deliverable", "4", "a submitted .xlsx deliverable of 5,000 rows, max_sheet_rows lowered to 1,000",
         "submission rejected, the other 31 load", _rows_deliverable,
         (Problem(ABSTRACT.replace(".md", ".xlsx"), ("deliverable 'abstract'", "input_limits.max_sheet_rows")),),
         submissions=SAMPLE_SUBMISSIONS - 1, limits={"max_sheet_rows": 1_000}),
    Case("source-text-over-limit", "4", "a task's .txt source of 2.6 M characters",
         "task left out: `text after conversion is 2,609,999 characters, over input_limits.max_source_chars`",
         _long_source,
         (Problem(f"{MSA}/documents/Call_transcript.txt", ("characters, over input_limits.max_source_chars = 2,000,000",)),),
         left_out=MSA_ID),
    # item 6: encrypted PDFs
    Case("aes-pdf-empty-password", "6", "a task's PDF encrypted with AES-256 and an empty user password",
         "accepted and converted (cryptography is a runtime dependency)", _aes_pdf),
    Case("pdf-with-password", "6", "a task's PDF that needs a password",
         "task left out: `PDF is encrypted with a password; provide an unencrypted copy`", _password_pdf,
         (Problem(f"{MSA}/documents/Exhibit_B_SLA.pdf", ("encrypted with a password",)),), left_out=MSA_ID),
    # item 10: hidden system folders
    Case("hidden-system-folder", "10", "a system folder named .grok-weak",
         "rejected with a reason naming the folder (its 8 submissions would vanish); the other 24 load",
         _hidden_system,
         (Problem("submissions/.grok-weak", ("starts with '.'", "rename it", "'grok-weak'")),),
         submissions=SAMPLE_SUBMISSIONS - 8),
    Case("dot-git-and-ds-store", "10", "a .git folder and a .DS_Store file in the results folder",
         "ignored: they hold no task folders", _dot_git),
    # item 11: empty and binary deliverables
    Case("empty-deliverable", "11", "a 0-byte submitted deliverable",
         "submission rejected before any call: `deliverable 'abstract' is empty`", _empty_deliverable,
         (Problem(ABSTRACT, ("deliverable 'abstract' is empty", "leave the deliverable out")),),
         submissions=SAMPLE_SUBMISSIONS - 1),
    Case("blank-deliverable", "11", "a deliverable of blank lines only", "submission rejected", _blank_deliverable,
         (Problem(ABSTRACT, ("deliverable 'abstract' is empty",)),), submissions=SAMPLE_SUBMISSIONS - 1),
    Case("random-bytes-deliverable", "11", "4 KB of random bytes without NUL as abstract.md",
         "submission rejected: `file looks binary, not text (N% control characters or undecodable bytes)`",
         _random_deliverable, (Problem(ABSTRACT, ("deliverable 'abstract'", "looks binary")),),
         submissions=SAMPLE_SUBMISSIONS - 1),
    Case("nul-bytes-deliverable", "11", "a deliverable containing NUL bytes", "submission rejected",
         _nul_deliverable, (Problem(ABSTRACT, ("looks binary (contains NUL bytes)",)),),
         submissions=SAMPLE_SUBMISSIONS - 1),
    Case("docx-deliverable-without-text", "11", "a submitted .docx with no text",
         "submission rejected: `has no text after conversion`", _textless_docx,
         (Problem(ABSTRACT.replace(".md", ".docx"), ("has no text after conversion",)),),
         submissions=SAMPLE_SUBMISSIONS - 1),
    Case("random-bytes-source", "11", "a task's .txt source replaced by random bytes without NUL",
         "task left out: `file looks binary`", _random_source,
         (Problem(f"{MSA}/documents/Cafeteria_Vending_Agreement.txt", ("looks binary",)),), left_out=MSA_ID),
    Case("manifest-empty-inline-text", "11", "a manifest line whose inline deliverable text is blank",
         "that line rejected (`is empty`), the other 31 lines load", _manifest_empty_inline,
         (Problem("manifest.jsonl:23", ("deliverable 'abstract' is empty",)),),
         submissions=SAMPLE_SUBMISSIONS - 1, submissions_uri="manifest.jsonl"),
    Case("manifest-control-chars", "11", "a manifest line whose inline text is mostly control characters",
         "that line rejected (`inline text looks binary`)", _manifest_control_chars,
         (Problem("manifest.jsonl:23", ("inline text looks binary",)),),
         submissions=SAMPLE_SUBMISSIONS - 1, submissions_uri="manifest.jsonl"),
    # item 15 (second half): a criterion field present but of the wrong type
    Case("criterion-id-is-a-list", "15", 'criteria[0].id = ["C-001"]',
         "task left out: `criteria[0]: field 'id' must be a string, not a list ([\"C-001\"])`", _criterion_id_list,
         (Problem(TASK_JSON, ("criteria[0]: field 'id' must be a string, not a list",)),), left_out=MSA_ID),
    Case("criterion-title-is-a-number", "15", "criteria[1].title = 42",
         "task left out: `field 'title' must be a string, not a number (42)`", _criterion_title_number,
         (Problem(TASK_JSON, ("criteria[1] ('C-002'): field 'title' must be a string, not a number (42)",)),),
         left_out=MSA_ID),
    Case("criterion-title-blank", "15", "criteria[0].title is blank", "task left out: `field 'title' is empty`",
         _criterion_title_empty, (Problem(TASK_JSON, ("criteria[0] ('C-001'): field 'title' is empty",)),),
         left_out=MSA_ID),
    Case("criterion-id-absent", "15", "criteria[0] has no id", "task left out: `missing required field 'id'`",
         _criterion_id_missing, (Problem(TASK_JSON, ("criteria[0]: missing required field 'id'",)),), left_out=MSA_ID),
    # issue 24: PDF content streams and criteria per task bounded like every other input
    Case("pdf-content-bomb-source", "24",
         "a task's 2.7 MB PDF of 40 pages whose content streams inflate to 70 MB of spaces each (was 3.1 GB)",
         "task left out: `page 1's content streams inflate to more than 16.0 MB, over "
         "input_limits.max_pdf_page_content_bytes`; at most 16 MB inflated, nothing parsed",
         _pdf_bomb_source, (Problem(PDF_BOMB, PDF_PAGE_BOMB),), left_out=MSA_ID, isolate=True, peak_mb=1024),
    Case("pdf-content-bomb-deliverable", "24",
         "a submitted 6.8 MB PDF of 100 pages x 70 MB of spaces (was past 6 GiB in 49 s)",
         "submission rejected, the other 31 load; at most 16 MB inflated", _pdf_bomb_deliverable,
         (Problem(PDF_ABSTRACT, ("deliverable 'abstract'", *PDF_PAGE_BOMB)),),
         submissions=SAMPLE_SUBMISSIONS - 1, isolate=True, peak_mb=1024),
    Case("pdf-content-over-file-limit", "24",
         "a task's PDF of 30 pages x 10 MB of content (each page under its limit, 300 MB in all)",
         "task left out: `PDF content streams inflate to more than 256.0 MB (reached at page 26 ...), over "
         "input_limits.max_pdf_content_bytes`; measured page by page, nothing parsed", _pdf_over_file_content,
         (Problem(PDF_DRAWINGS, ("inflate to more than 256.0 MB (reached at page 26", "input_limits.max_pdf_content_bytes")),),
         left_out=MSA_ID, isolate=True, peak_mb=1024),
    Case("pdf-text-bomb-deliverable", "24",
         "a submitted 5 KB PDF whose font maps one code to 256 letters, shown 4 M times (1 G characters of text)",
         "submission rejected: `page 1's font /F1 turns one character code into up to 256 characters ...`, "
         "before any text is extracted", _pdf_text_bomb_deliverable,
         (Problem(PDF_ABSTRACT, ("deliverable 'abstract'", "turns one character code into up to 256 characters",
                                 "input_limits.max_pdf_page_content_bytes")),),
         submissions=SAMPLE_SUBMISSIONS - 1, isolate=True, peak_mb=1024),
    Case("task-10000-criteria", "24", "a task.json with 10,000 criteria (was 5.4 GB in a sweep, no warning)",
         "task left out: `task has 10,000 criteria, over input_limits.max_task_criteria = 1,000`; no criterion built",
         _ten_thousand_criteria,
         (Problem(TASK_JSON, ("task has 10,000 criteria, over input_limits.max_task_criteria = 1,000",
                              "raise it in --config (input_limits: {max_task_criteria: 10000})")),),
         left_out=MSA_ID, isolate=True, peak_mb=1024),
]


def build(case: Case, dest: Path) -> Path:
    """A fresh copy of the sample (tasks and submissions) at ``dest``, with the case's break applied."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copytree(SAMPLE / "tasks", dest / "tasks")
    shutil.copytree(SAMPLE / "submissions", dest / "submissions")
    case.breaks(dest)
    return dest


def by_id(case_id: str) -> Case:
    for case in CASES:
        if case.id == case_id:
            return case
    raise KeyError(f"no case {case_id!r}; cases: {', '.join(c.id for c in CASES)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to build the cases in (one subfolder each)")
    parser.add_argument("--case", action="append", help="only this case (repeatable)")
    args = parser.parse_args(argv)
    cases = [by_id(c) for c in args.case] if args.case else CASES
    for case in cases:
        path = build(case, args.out / case.id)
        limits = f" (input_limits: {case.limits})" if case.limits else ""
        print(f"{case.id}: {case.what}{limits} -> {path}", flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONPATH", str(REPO))
    sys.exit(main())
