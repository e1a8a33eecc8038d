"""Preflight: one minimal structured call per configured vendor before a sweep starts.

Why: a wrong key, model name or endpoint should stop a run in seconds with a message naming
the vendor, the model and the cause — not after the first thousand submissions were queued.
The check uses each vendor's real adapter (so the real client, schema path and auth are
exercised) with a short retry policy: a preflight must not wait out a long rate-limit storm.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from evalcore.config.models import VendorConfig
from evalcore.errors import ConfigError, PreflightError, VendorError
from evalcore.schema import CallRow, PreflightAnswer
from evalcore.vendors.protocol import Vendor
from evalcore.vendors.registry import create_vendor

if TYPE_CHECKING:  # evalcore.grading.calls imports the vendor base, whose package imports this module
    from evalcore.grading.calls import GradingContext

PREFLIGHT_MAX_ATTEMPTS = 3
PREFLIGHT_DEADLINE_S = 60.0
UNKNOWN_MODEL = "unknown_model"
"""The kind of a preflight whose vendor answered that it has no such model (HTTP 404, gRPC NOT_FOUND)."""
_NOT_FOUND = ("HTTP 404 ", "gRPC NOT_FOUND")
"""How the adapters' causes start for those answers (`_stainless.StainlessErrors.describe`, the xAI adapter's)."""


def _unknown_model(cfg: VendorConfig, err: VendorError) -> str | None:
    """The message for a preflight the vendor refused with not-found, or None for any other failure.

    Why its own message: the one request a preflight sends names nothing else that could be missing,
    so a 404 means the configured model id does not exist at the vendor (or this key may not use
    it): the fix is the entry's `model`, and the SDK's list says what the vendor is known to serve.
    """
    if not err.cause.startswith(_NOT_FOUND):
        return None
    from evalcore.config.model_ids import known_models

    known = known_models(cfg.adapter)
    listed = "" if known is None or cfg.model in known.ids else f" (not in {known.sdk} {known.version}'s model list either)"
    return (
        f"the vendor has no model {cfg.model!r} for this key{listed}: set {cfg.name}'s model to an id the vendor "
        f"serves ({err.cause})"
    )


class PreflightResult(BaseModel):
    """One vendor's preflight: ok, or the classified cause (never the key)."""

    vendor: str
    model: str
    adapter: str
    ok: bool
    kind: str | None = None
    cause: str | None = None
    attempts: int = 0
    latency_s: float | None = None
    request_id: str | None = None
    offline: bool = False
    call: CallRow | None = None
    """The call's `calls` row (purpose preflight, no submission): a preflight is paid like any
    call, so the run's tables must count it for the summary and the tables to agree."""

    def describe(self) -> str:
        """One line for the user."""
        if self.ok:
            return f"{self.vendor} ({self.model}): ok in {self.latency_s or 0:.2f}s"
        return f"{self.vendor} ({self.model}): {self.kind}: {self.cause}"


def _short_policy(cfg: VendorConfig) -> VendorConfig:
    retry = cfg.retry.model_copy(
        update={
            "max_attempts": min(cfg.retry.max_attempts, PREFLIGHT_MAX_ATTEMPTS),
            "deadline_s": min(cfg.retry.deadline_s, PREFLIGHT_DEADLINE_S),
        }
    )
    return cfg.model_copy(update={"retry": retry, "timeout_s": min(cfg.timeout_s, PREFLIGHT_DEADLINE_S)})


async def _one(
    cfg: VendorConfig, vendor: Vendor | None, kwargs: Mapping[str, Any], ctx: GradingContext
) -> PreflightResult:
    from evalcore.grading.calls import call_row
    from evalcore.prompts import render_preflight

    request = render_preflight().request_for(cfg)
    owned = vendor is None
    live = vendor if vendor is not None else create_vendor(_short_policy(cfg), **kwargs)
    base: dict[str, Any] = {"vendor": cfg.name, "model": cfg.model, "adapter": cfg.adapter}
    started = time.time()
    try:
        reply = await live.complete(request, PreflightAnswer)
    except VendorError as err:
        unknown = _unknown_model(cfg, err)
        return PreflightResult(**base, ok=False, kind=UNKNOWN_MODEL if unknown else err.kind.value,
                               cause=unknown or err.cause, attempts=err.attempts,
                               call=call_row(ctx, cfg, request, err, started_at=started))
    finally:
        if owned:
            await live.aclose()
    row = call_row(ctx, cfg, request, reply, started_at=started)
    if not reply.output.ok:
        return PreflightResult(
            **base,
            ok=False,
            kind="bad_output",
            cause='the vendor answered {"ok": false}',
            attempts=reply.attempts,
            call=row,
        )
    return PreflightResult(
        **base,
        ok=True,
        attempts=reply.attempts,
        latency_s=reply.latency_s,
        request_id=reply.request_id,
        offline=reply.offline,
        call=row,
    )


async def preflight(
    cfgs: list[VendorConfig], *, vendors: Mapping[str, Vendor] | None = None, run_id: str = "", **kwargs: Any
) -> list[PreflightResult]:
    """Check every vendor concurrently; results in the order of `cfgs` (never raises VendorError).

    `vendors` lets a caller check the live vendors it will use (by config name); otherwise a
    vendor is created with a short retry policy and closed afterwards. `kwargs` go to
    `create_vendor`. Each result carries its call row, stamped with `run_id` and no submission.
    """
    from evalcore.grading.calls import GradingContext

    live = vendors or {}
    ctx = GradingContext(run_id=run_id, grading_id="preflight", submission_id="", system="", task_id="", area="")
    return list(await asyncio.gather(*(_one(c, live.get(c.name), kwargs, ctx) for c in cfgs)))


def require_keys(cfgs: list[VendorConfig]) -> None:
    """Refuse, before anything starts, a vendor whose adapter needs a key that is not set.

    Why here and not at the first call: a sweep would otherwise start Ray (tens of seconds) and
    write a run folder only to fail its preflight. Names the vendor, the model and the variable
    to set, never a value.
    """
    from evalcore.vendors.registry import needs_key

    missing: dict[str, list[str]] = {}
    for cfg in cfgs:
        if needs_key(cfg.adapter) and cfg.api_key() is None:
            missing.setdefault(cfg.api_key_env or "", []).append(f"{cfg.name} ({cfg.model})")
    if not missing:
        return
    parts = [
        f"{', '.join(users)}: no API key: set the environment variable {env}" if env
        else f"{', '.join(users)}: no API key: set api_key_env in the vendor's configuration"
        for env, users in missing.items()
    ]
    raise ConfigError("; ".join(parts))


def raise_if_failed(results: list[PreflightResult]) -> None:
    """Raise `PreflightError` naming every failed vendor, its model and the cause."""
    failed = [r for r in results if not r.ok]
    if failed:
        lines = "; ".join(r.describe() for r in failed)
        raise PreflightError(f"preflight failed for {len(failed)} of {len(results)} vendor(s): {lines}")
