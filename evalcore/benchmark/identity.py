"""Which benchmark this is: its name and version, from an optional `benchmark.json` at its root.

Why apart from the content hash: the hash says whether two runs saw the same bytes; the name and
version say what a publisher calls them. A release ranks runs together only when both agree
(`evalcore.release.compatibility`), and the site shows them. A benchmark without the file is named
after its folder and has no version (runs of it still rank together while their content agrees).

    {"name": "legal-bench", "version": "2.1"}
"""

from __future__ import annotations

import json
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalcore.errors import BenchmarkError
from evalcore.storage import fs

IDENTITY_FILE: Final = "benchmark.json"


class BenchmarkIdentity(BaseModel):
    """A benchmark's name and version as its publisher states them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=200, description="What the publisher calls the benchmark.")
    version: str | None = Field(default=None, max_length=100, description="The benchmark's version (free text, e.g. 2.1).")


def read_identity(root: str, endpoint_override: str | None = None) -> BenchmarkIdentity:
    """The identity in `<root>/benchmark.json`, or the root folder's name and no version without one.

    A file that exists but is not a valid identity is a `BenchmarkError` naming it: a typo must not
    silently give the benchmark another name (and so refuse, or allow, a release)."""
    uri = fs.join(root, IDENTITY_FILE)
    if not fs.is_file(uri, endpoint_override):
        return BenchmarkIdentity(name=fs.basename(root.rstrip("/")) or "benchmark")
    try:
        return BenchmarkIdentity.model_validate(json.loads(fs.read_bytes(uri, endpoint_override)))
    except (ValueError, ValidationError) as exc:
        first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise BenchmarkError(uri, f"not a benchmark identity ({first}); expected "
                             '{"name": "...", "version": "..."}') from exc
