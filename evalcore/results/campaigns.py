"""Review campaigns: which items k reviewers each decide, assigned with balanced loads.

Why campaigns: a publisher's review is a team. Left to themselves, two reviewers decide the same
item while others stay undecided, and an item decided once is in force. A lead starts a campaign on
a run (the queue sections, the calibration sample's size and seed, k reviewers per item, who
reviews, blind or not); `assign` gives each item to k distinct reviewers so that loads differ by
at most one; each reviewer's decisions then carry the campaign and its k, and the decision in
force is the unanimous call of k reviewers or the lead's resolution
(`evalcore.results.adjudications.in_force`).

A campaign is one JSON object under the run's ``review_campaigns/`` folder, created only if new
(as decisions are): the assignment is a pure function of the campaign and the run's queue, so a
restarted server, or a second server on the same ``s3://`` run, computes the same assignments.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from collections.abc import Hashable, Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evalcore.errors import InputError
from evalcore.storage import fs
from evalcore.storage.run_folder import folder_of

Section = Literal["material", "split", "sample"]
SUGGESTED_K = {"material": 2, "split": 1, "sample": 1}
"""The k the page suggests per section: two independent decisions on the items that zero a task."""
K = TypeVar("K", bound=Hashable)


class Campaign(BaseModel):
    """One review campaign on one run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    campaign_id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12], pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
    run_id: str
    name: str = Field(min_length=1, max_length=200)
    created_by: str = Field(min_length=1)
    created_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC))
    sections: list[Section] = Field(min_length=1)
    sample: int = Field(default=20, ge=0, le=100_000, description="The calibration sample's size.")
    seed: int = Field(description="The calibration sample's seed.")
    k: int = Field(default=1, ge=1, le=10, description="Reviewers per item.")
    reviewers: list[str] = Field(min_length=1)
    blind: bool = Field(default=True, description="Reviewers do not see the system, nor others' decisions before theirs.")
    hide_vendors: bool = Field(default=False, description="Reviewers do not see the judges' vendor names either.")
    reservation_minutes: int = Field(default=30, ge=1, le=24 * 60,
                                     description="How long an opened item is reserved for the reviewer who opened it.")

    @model_validator(mode="after")
    def _enough_reviewers(self) -> Campaign:
        if len(set(self.reviewers)) != len(self.reviewers):
            raise ValueError("a reviewer is named twice")
        if self.k > len(self.reviewers):
            raise ValueError(f"k = {self.k} reviewers per item, but only {len(self.reviewers)} reviewer(s) named")
        return self

    def file_name(self) -> str:
        return f"{self.created_at.astimezone(dt.UTC).strftime('%Y%m%dT%H%M%S%fZ')}-{self.campaign_id}.json"


def _tie(seed: int, item: Hashable, reviewer: str) -> str:
    return hashlib.md5(f"{seed}\x1f{item!r}\x1f{reviewer}".encode()).hexdigest()


def assign(items: Sequence[K], reviewers: Sequence[str], k: int, seed: int) -> dict[K, list[str]]:
    """Each item → k distinct reviewers, loads balanced (they differ by at most one), seeded.

    Greedy in the items' order: each item goes to the k least-loaded reviewers, ties broken by a
    hash of the seed, the item and the reviewer, so the same campaign gives the same assignment on
    every machine and no reviewer is always first."""
    if k > len(reviewers):
        raise ValueError(f"k = {k} exceeds the {len(reviewers)} reviewer(s)")
    load = dict.fromkeys(reviewers, 0)
    out: dict[K, list[str]] = {}
    for item in items:
        chosen = sorted(reviewers, key=lambda r: (load[r], _tie(seed, item, r)))[:k]
        for r in chosen:
            load[r] += 1
        out[item] = sorted(chosen)
    return out


def folder(run_uri: str) -> str:
    return folder_of(run_uri).campaigns


def save(run_uri: str, campaign: Campaign, endpoint_override: str | None = None) -> str:
    """Write a new campaign (create-only); returns its URI."""
    uri = fs.join(folder(run_uri), campaign.file_name())
    if not fs.write_new(uri, campaign.model_dump_json(indent=1).encode(), endpoint_override):
        raise InputError(uri, "a campaign with this id exists already")
    return uri


def load_all(run_uri: str, endpoint_override: str | None = None) -> tuple[list[Campaign], list[str]]:
    """Every campaign of the run, oldest first, and the objects that could not be read (`file: reason`)."""
    root = folder(run_uri)
    if not fs.is_dir(root, endpoint_override):
        return [], []
    found: list[Campaign] = []
    problems: list[str] = []
    for uri in sorted(fs.list_files(root, suffix=".json", endpoint_override=endpoint_override)):
        try:
            found.append(Campaign.model_validate_json(fs.read_bytes(uri, endpoint_override)))
        except (ValidationError, ValueError, OSError) as exc:
            problems.append(f"{uri}: not a readable campaign ({str(exc).splitlines()[0]}); ignored")
    return sorted(found, key=lambda c: (c.created_at, c.campaign_id)), problems
