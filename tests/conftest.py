"""Shared test fixtures. Sections: environment isolation, local S3 (moto), document factories.

Keep each section small; fixtures other suites need go here, suite-specific ones stay in the suite.
"""

from __future__ import annotations

import io
import json
import logging
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from tests.browser import browser  # noqa: F401 (the module-scoped Chromium fixture, for every test module)

# --------------------------------------------------------------------------------------------
# Environment isolation
# --------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True, scope="session")
def _isolated_doc_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Converted-document cache in a temp folder, never the developer's ~/.cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRIBUNAL_CACHE_DIR", str(tmp_path_factory.mktemp("tribunal-cache")))
        yield


@pytest.fixture(autouse=True, scope="session")
def _patient_ray_env() -> Iterator[None]:
    """Ray's start-up waits lengthened (`tests/ray_start.py`) for every Ray this session starts:
    in this process and in every subprocess given a copy of its environment (CLI sweeps)."""
    from tests.ray_start import PATIENT_ENV

    with pytest.MonkeyPatch.context() as mp:
        for name, value in PATIENT_ENV.items():
            mp.setenv(name, value)
        yield


# --------------------------------------------------------------------------------------------
# Parallel workers (`make test`: pytest-xdist, `-n 3 --dist loadfile --no-loadscope-reorder`)
# --------------------------------------------------------------------------------------------


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker, the modules that run Ray first: xdist hands out whole modules in this
    order, and the Ray modules are the long ones (one started last would be the run's tail).

    Each worker that runs a test on the session's Ray starts its own (`ray_local` is per process);
    a module stays on one worker, so its module-scoped fixtures are built once. A serial run keeps
    pytest's order.
    """
    if not hasattr(config, "workerinput"):
        return

    def module(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    ray_modules = {
        module(item) for item in items
        if "ray_local" in getattr(item, "fixturenames", ()) or item.get_closest_marker("ray") is not None
    }
    items.sort(key=lambda item: module(item) not in ray_modules)  # stable: pytest's order otherwise


# --------------------------------------------------------------------------------------------
# Local S3: moto's server on 127.0.0.1 (a real S3 protocol endpoint, no AWS)
# --------------------------------------------------------------------------------------------


class _AtomicWrites:
    """Serve moto's writes one at a time, as S3 commits them: atomically.

    moto checks a conditional PUT's precondition (``If-None-Match: *``) and then stores the object,
    two steps its threaded server can interleave: two racing creates of one key both succeeded (the
    run-lock race test, beside two CPU burners in CI), where S3 refuses the second with 412. Reads
    stay concurrent."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("REQUEST_METHOD") in {"GET", "HEAD"}:
            return self.app(environ, start_response)
        with self.lock:
            return list(self.app(environ, start_response))  # the whole response inside the lock


def _atomic_writes_moto_server(**kw: Any) -> Any:
    """moto's ThreadedMotoServer with its application wrapped in `_AtomicWrites`."""
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from moto.server import ThreadedMotoServer
    from werkzeug.serving import make_server

    class Server(ThreadedMotoServer):
        def _server_entry(self) -> None:  # as moto's, with the application wrapped
            app = _AtomicWrites(DomainDispatcherApplication(create_backend_app))
            self._server = make_server(self._ip_address, self._port, app, True, request_handler=MotoRequestHandler)
            self._server_ready_event.set()
            self._server.serve_forever()

    return Server(**kw)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """Start moto's S3 server on 127.0.0.1 (free port) for the session; yields its endpoint URL.

    Dummy credentials, a region and ``AWS_EC2_METADATA_DISABLED`` are set for the session so no
    SDK probes instance metadata or real AWS. ``AWS_ENDPOINT_URL`` is *not* set: tests pass the
    endpoint explicitly, which is what the code under test must support.
    """
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_ACCESS_KEY_ID", "testing")
        mp.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        mp.setenv("AWS_SESSION_TOKEN", "testing")
        mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
        mp.setenv("AWS_REGION", "us-east-1")
        mp.setenv("AWS_EC2_METADATA_DISABLED", "true")
        server = _atomic_writes_moto_server(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        try:
            yield f"http://{host}:{port}"
        finally:
            server.stop()


def s3_client(endpoint: str) -> Any:
    """A boto3 S3 client for the local server."""
    import boto3

    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")


def create_bucket(endpoint: str, name: str | None = None) -> str:
    """Create a bucket on the local S3 server (a unique name by default) and return its name."""
    name = name or f"test-{uuid.uuid4().hex[:12]}"
    s3_client(endpoint).create_bucket(Bucket=name)
    return name


def upload_tree(endpoint: str, local_dir: Path, bucket: str, prefix: str = "") -> int:
    """Upload every file under ``local_dir`` to ``s3://bucket/prefix/...``; returns the file count."""
    client = s3_client(endpoint)
    count = 0
    for path in sorted(local_dir.rglob("*")):
        if path.is_file():
            key = "/".join(p for p in (prefix.strip("/"), path.relative_to(local_dir).as_posix()) if p)
            client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
            count += 1
    return count


@pytest.fixture
def s3_bucket(s3_server: str) -> str:
    """A fresh, empty bucket on the session's S3 server."""
    return create_bucket(s3_server)


# --------------------------------------------------------------------------------------------
# Document factories: tiny real files in every supported format
# --------------------------------------------------------------------------------------------


class DocFactory:
    """Builds small real documents as bytes (python-docx, openpyxl, python-pptx, fpdf2, email)."""

    @staticmethod
    def docx(paragraphs: Sequence[str] = ("Memo",), table: Sequence[Sequence[str]] | None = None) -> bytes:
        import docx

        document = docx.Document()
        for text in paragraphs:
            document.add_paragraph(text)
        if table:
            t = document.add_table(rows=len(table), cols=len(table[0]))
            for r, row in enumerate(table):
                for c, value in enumerate(row):
                    t.cell(r, c).text = value
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()

    @staticmethod
    def xlsx(sheets: Mapping[str, Sequence[Sequence[Any]]]) -> bytes:
        import openpyxl

        workbook = openpyxl.Workbook()
        workbook.remove(workbook.active)
        for title, rows in sheets.items():
            sheet = workbook.create_sheet(title)
            for row in rows:
                sheet.append(list(row))
        out = io.BytesIO()
        workbook.save(out)
        return out.getvalue()

    @staticmethod
    def pptx(slides: Sequence[tuple[str, Sequence[Sequence[str]] | None]]) -> bytes:
        """Each slide: (title text, optional table rows)."""
        import pptx
        from pptx.util import Inches

        presentation = pptx.Presentation()
        for title, table in slides:
            slide = presentation.slides.add_slide(presentation.slide_layouts[5])
            slide.shapes.title.text = title
            if table:
                shape = slide.shapes.add_table(
                    len(table), len(table[0]), Inches(1), Inches(2), Inches(6), Inches(1)
                )
                for r, row in enumerate(table):
                    for c, value in enumerate(row):
                        shape.table.cell(r, c).text = value
        out = io.BytesIO()
        presentation.save(out)
        return out.getvalue()

    @staticmethod
    def eml(
        body: str = "Please see attached.",
        *,
        subject: str = "PSA draft",
        sender: str = "seller@example.com",
        to: str = "buyer@example.com",
        cc: str | None = None,
        html: str | None = None,
        attachments: Sequence[str] = (),
        plain: bool = True,
    ) -> bytes:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = sender, to, subject
        message["Date"] = "Tue, 02 Jan 2024 09:30:00 +0000"
        if cc:
            message["Cc"] = cc
        if plain:
            message.set_content(body)
            if html:
                message.add_alternative(html, subtype="html")
        else:
            message.set_content(html or f"<p>{body}</p>", subtype="html")
        for name in attachments:
            message.add_attachment(
                b"%PDF-1.4 stub", maintype="application", subtype="octet-stream", filename=name
            )
        return message.as_bytes()

    @staticmethod
    def pdf(*pages: str) -> bytes:
        from fpdf import FPDF

        document = FPDF()
        document.set_font("helvetica", size=11)
        for text in pages or ("Closing date: 1 May 2024.",):
            document.add_page()
            document.multi_cell(0, 6, text)
        return bytes(document.output())

    @staticmethod
    def scanned_pdf() -> bytes:
        """A page with only a drawn rectangle: what a scan without OCR looks like to a parser."""
        from fpdf import FPDF

        document = FPDF()
        document.add_page()
        document.rect(20, 20, 120, 80, style="F")
        return bytes(document.output())


@pytest.fixture
def docs() -> type[DocFactory]:
    """The document factory (``docs.docx(...)``, ``docs.scanned_pdf()``, ...)."""
    return DocFactory


# --------------------------------------------------------------------------------------------
# Benchmark builder: a task folder in the public layout
# --------------------------------------------------------------------------------------------


class BenchBuilder:
    """Writes task folders in the public layout ``tasks/<area>/<task>[/<scenario>]/``."""

    @staticmethod
    def task_json(**overrides: Any) -> dict[str, Any]:
        """A task.json in the public format: deliverables as a map, criteria with optional deliverables."""
        task: dict[str, Any] = {
            "title": "Extract key terms from the purchase and sale agreement",
            "instructions": "Read the PSA and the emails. Write a memo and a key-terms table.",
            "work_type": "extraction",
            "tags": ["real-estate", "psa"],
            "deliverables": {"memo": "memo.docx", "terms": "terms.xlsx"},
            "criteria": [
                {
                    "id": "C-001",
                    "title": "Purchase price",
                    "match_criteria": "PASS if the memo states the purchase price of $4,250,000. FAIL otherwise.",
                    "deliverables": ["memo"],
                },
                {
                    "id": "C-002",
                    "title": "Closing date",
                    "match_criteria": "PASS if the closing date 1 May 2024 is given. FAIL if another date is given.",
                },
            ],
        }
        task.update(overrides)
        return task

    @staticmethod
    def write(
        tasks_root: Path,
        task_id: str,
        task: Mapping[str, Any] | str | None = None,
        documents: Mapping[str, bytes] | None = None,
    ) -> Path:
        """Write ``<tasks_root>/<task_id>/task.json`` (a dict, or raw text) and its documents.

        ``documents=None`` writes one small text document; ``{}`` writes no documents folder.
        """
        folder = tasks_root / task_id
        folder.mkdir(parents=True, exist_ok=True)
        if isinstance(task, str):
            body = task
        else:
            body = json.dumps(task if task is not None else BenchBuilder.task_json(), indent=2)
        (folder / "task.json").write_text(body, encoding="utf-8")
        if documents is None:
            documents = {"psa.txt": b"Purchase price: $4,250,000. Closing date: 1 May 2024."}
        for name, data in documents.items():
            path = folder / "documents" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return folder


@pytest.fixture
def bench() -> type[BenchBuilder]:
    """The benchmark builder (``bench.task_json(...)``, ``bench.write(tasks_root, id, ...)``)."""
    return BenchBuilder


# --------------------------------------------------------------------------------------------
# Many connections in one process (the emulators' and the adapters' tests)
# --------------------------------------------------------------------------------------------


@pytest.fixture
def enough_files() -> None:
    """Raise the open-file limit for a test holding thousands of connections open in one process.

    Both ends of every connection live in the test's process (the real SDK client and our emulator),
    so 2,000 open requests need about 4,500 descriptors; skipped only where the hard limit forbids it."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 8_192 if hard == resource.RLIM_INFINITY else min(8_192, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 4_500:
        pytest.skip("needs about 4,500 file descriptors")
