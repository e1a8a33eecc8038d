"""What an emulator received, with the settings that decide what the vendor keeps of it.

Why: every request copies a private benchmark's tasks and deliverables to a vendor, and what stays
there is decided per request (OpenAI `store` and `prompt_cache_retention`, xAI `store_messages`)
or by deleting files and batches afterwards. The emulators keep what the vendor would keep (stored
responses retrievable by id, files until deleted or expired, message batches until deleted), and
log every body they receive -- online or inside a batch, at submission -- with those settings
resolved the vendor's way (an absent OpenAI `store` means true), so a test checks a client's
retention behaviour through the real SDKs instead of trusting what the client says it sent.
"""

from __future__ import annotations

import time
from typing import Any, TypeVar

from pydantic import BaseModel, Field

V = TypeVar("V")


class Received(BaseModel):
    """One request body as received (a batch line counts as one, logged when the batch is submitted)."""

    vendor: str
    api: str = Field(
        description='What was called: "responses", "chat.completions", "messages", "chat.GetCompletion", '
        'or a management call such as "files.create", "files.delete", "batches.create", '
        '"messages.batches.delete", "chat.DeleteStoredCompletion".'
    )
    settings: dict[str, Any] = Field(
        default_factory=dict,
        description="The retention-relevant settings as the vendor reads them, defaults filled in "
        '(e.g. {"store": True, "prompt_cache_retention": None}).',
    )
    model: str = ""
    batch_id: str | None = Field(default=None, description="Set for a request that arrived inside a batch.")
    custom_id: str | None = Field(default=None, description="The batch line's custom_id / batch_request_id.")
    object_id: str | None = Field(
        default=None,
        description="The id of what the call created, stored, read or deleted (a response kept by "
        "`store`, a file, a batch); None when the vendor kept nothing addressable.",
    )
    received_at: float = Field(default_factory=time.time, description="Wall clock at arrival.")
    body: dict[str, Any] = Field(default_factory=dict, repr=False)


class ReceivedLog:
    """One emulator's log of `Received` entries, bounded like its request log (`max_recorded`)."""

    def __init__(self, vendor: str, max_recorded: int | None) -> None:
        self.vendor = vendor
        self.max_recorded = max_recorded
        self.entries: list[Received] = []

    def add(
        self,
        api: str,
        settings: dict[str, Any] | None = None,
        body: dict[str, Any] | None = None,
        *,
        model: str = "",
        batch_id: str | None = None,
        custom_id: str | None = None,
        object_id: str | None = None,
    ) -> Received:
        """Log one received body (returned, so a handler can fill in `object_id` once it knows it)."""
        entry = Received(
            vendor=self.vendor,
            api=api,
            settings=settings or {},
            model=model,
            batch_id=batch_id,
            custom_id=custom_id,
            object_id=object_id,
            body=body or {},
        )
        self.entries.append(entry)
        cap = self.max_recorded
        if cap is not None and len(self.entries) >= 2 * cap:
            del self.entries[: len(self.entries) - cap]
        return entry


def keep(store: dict[str, V], key: str, value: V, cap: int | None) -> None:
    """Store `value` under `key`; with a cap (`max_recorded`), forget the oldest in amortised steps.

    The vendors keep stored objects for weeks; a long-running emulator (`tribunal emulate`, the
    benchmarks) bounds its memory with the same knob that bounds its request log.
    """
    store[key] = value
    if cap is not None and len(store) >= 2 * cap:
        for old in list(store)[: len(store) - cap]:
            del store[old]
