"""`tribunal validate` as a user runs it (a child process, its real stderr): a document that makes a
library raise a Python warning gives exactly one ``file: reason`` line, and none of the raw
``.../PIL/Image.py:1134: UserWarning: ...`` / ``warnings.warn(`` lines the tester saw (issue 24,
item 6). The in-process side: `tests/evalcore/benchmark/test_document_warnings.py`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.badinputs.cli_cases import REPO, SAMPLE
from tests.warning_images import PALETTE_WARNING, palette_png

TASK = "commercial-contracts/msa-renewal"


def test_validate_shows_a_pil_warning_as_one_file_reason_line_and_nothing_raw_on_stderr(tmp_path: Path) -> None:
    root = tmp_path / "bench"
    shutil.copytree(SAMPLE / "tasks" / TASK, root / "tasks" / TASK)
    image = root / "tasks" / TASK / "documents" / "exhibit.png"
    image.write_bytes(palette_png())
    env = {**os.environ, "TRIBUNAL_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "400"}
    env.pop("TRIBUNAL_OCR_CACHE", None)
    done = subprocess.run([sys.executable, "-m", "jobs.cli", "validate", str(root)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    both = done.stdout + done.stderr
    assert done.returncode == 0, both[-3000:]
    naming = [line for line in both.splitlines() if str(image) in line]
    assert naming == [f"{image}: {PALETTE_WARNING} (UserWarning from PIL)"]
    assert "warnings.warn" not in both and "UserWarning:" not in both and "Image.py" not in both
    assert done.stderr == ""
