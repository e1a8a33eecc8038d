"""Tribunal's own exceptions: a small hierarchy whose messages tell the user what to do.

Why a hierarchy: the CLI and the sweep catch `TribunalError` and print the message; input problems
(`InputError`) are collected per file so the rest of a sweep goes on; vendor failures carry a
classification the retry policy and the abstention rule both read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal


class TribunalError(Exception):
    """Base of every error Tribunal raises on purpose."""


class ConfigError(TribunalError):
    """The configuration is invalid or incomplete (names the setting and the fix)."""


class InputError(TribunalError):
    """A benchmark or submission input is unusable; always names the file and the reason."""

    def __init__(self, file: str, reason: str) -> None:
        self.file = file
        self.reason = reason
        super().__init__(f"{file}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        # Exceptions with custom __init__ must say how to rebuild themselves to cross Ray.
        return (type(self), (self.file, self.reason))


class BenchmarkError(InputError):
    """A task folder, task.json or source document cannot be loaded."""


class SubmissionError(InputError):
    """A submission (results folder entry or manifest line) is rejected."""


class DocumentError(InputError):
    """A document cannot be converted to text (unsupported, unreadable, or a scan with no text)."""


class ErrorKind(StrEnum):
    """How a failed vendor call is classified; decides whether and how it is retried."""

    RATE_LIMITED = "rate_limited"
    TRANSIENT = "transient"
    TIMEOUT = "timeout"
    BAD_OUTPUT = "bad_output"
    FATAL = "fatal"
    COST_CAP = "cost_cap"
    """Not sent: it could have crossed the run's spending cap (evalcore.cost.cost_cap); retried by the next run."""


@dataclass(frozen=True)
class EarlierAttempt:
    """An attempt of a call before its last one that has a row of its own in the calls table.

    Two kinds (`outcome`):
    * `truncated`: a paid attempt whose answer stopped at its output-token cap and was retried
      with a larger cap (`evalcore.vendors.output_cap`);
    * `lost`: the request went out in a batch that the vendor no longer has (`evalcore.vendors.batch.queue`),
      and was sent again. If the vendor processed that batch before it was lost, the request was
      paid there too; what it cost is not known to Tribunal (the answer, with its usage, is gone),
      so its tokens and cost are 0 and `reason` names the batch to find on the vendor's bill.

    Why here: a call's reply and its final failure both carry the attempts before them (the retry
    may fail for another reason), and this is the module both are built from. `usage` is the
    attempt's `Usage` as a mapping (field name -> tokens), `cost_usd` what it was billed."""

    max_output_tokens: int
    reason: str
    usage: Mapping[str, int]
    cost_usd: float
    request_id: str | None
    started_at: float
    ended_at: float
    outcome: Literal["truncated", "lost"] = "truncated"
    batch_id: str | None = None
    """The batch the attempt went out in (batch mode)."""


class VendorError(TribunalError):
    """A judge call failed for good (after the retry policy gave up, or at once if fatal).

    The message never contains an API key: adapters build it from the vendor, model, the
    classification and a sanitised cause.
    """

    def __init__(
        self,
        vendor: str,
        model: str,
        kind: ErrorKind,
        cause: str,
        *,
        attempts: int = 1,
        rate_limited: int = 0,
        request_id: str | None = None,
        billed_tokens: tuple[int, int, int, int] = (0, 0, 0, 0),
        cost_usd: float = 0.0,
        earlier: tuple[EarlierAttempt, ...] = (),
    ) -> None:
        self.vendor = vendor
        self.earlier = earlier
        """Attempts that stopped at their output cap and were retried (their tokens and cost are in
        `billed_tokens` and `cost_usd` too; the calls table gives each its own row)."""
        self.billed_tokens = billed_tokens
        """(input, cached input, output, reasoning) tokens billed by attempts that did answer (bad output)."""
        self.cost_usd = cost_usd
        """What those billed attempts cost: a failed call can still have been paid for."""
        self.model = model
        self.kind = kind
        self.cause = cause
        self.attempts = attempts
        self.rate_limited = rate_limited
        self.request_id = request_id
        super().__init__(f"{vendor} ({model}): {kind.value} after {attempts} attempt(s): {cause}")

    def __reduce__(self) -> tuple[object, ...]:
        # Crosses Ray actor boundaries inside complete_many results: rebuild with every field.
        return (
            _rebuild_vendor_error,
            (self.vendor, self.model, self.kind.value, self.cause, self.attempts, self.rate_limited,
             self.request_id, self.billed_tokens, self.cost_usd, self.earlier),
        )


def _rebuild_vendor_error(
    vendor: str, model: str, kind: str, cause: str, attempts: int, rate_limited: int, request_id: str | None,
    billed_tokens: tuple[int, int, int, int], cost_usd: float, earlier: tuple[EarlierAttempt, ...] = (),
) -> VendorError:
    return VendorError(
        vendor, model, ErrorKind(kind), cause, attempts=attempts, rate_limited=rate_limited, request_id=request_id,
        billed_tokens=billed_tokens, cost_usd=cost_usd, earlier=earlier,
    )


class PreflightError(TribunalError):
    """A configured vendor failed its one minimal call before a sweep; the sweep is not started."""


class StorageError(TribunalError):
    """Reading or writing run output failed (names the URI)."""


class EndpointUnreachable(StorageError):
    """The S3 endpoint could not be reached at all: not a problem of one file, so it stops the
    command (a loader must not turn it into one rejection per file, or into "not found")."""

    def __init__(self, file: str, reason: str) -> None:
        self.file = file
        self.reason = reason
        super().__init__(f"{file}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.file, self.reason))
