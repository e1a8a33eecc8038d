"""Vendor modes: `real` (configured endpoints and keys), `emulated` (our local emulators of each
vendor's wire protocol, started here, answering with the offline heuristics), `offline` (the
in-process offline adapter, no network at all).

Why a context manager: emulated mode owns servers that must outlive the run and stop after it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from pydantic import ValidationError

from evalcore.config.models import RateLimits, TribunalConfig, VendorMode
from evalcore.errors import ConfigError, InputError

if TYPE_CHECKING:
    from evalcore.emulators.responders import PersonaSet


def server_limits(config: TribunalConfig, limits: RateLimits | None = None) -> dict[str, RateLimits]:
    """What each emulator enforces: one account's limits per vendor (the openai emulator serves
    the openai judge and the auditor, which share them, as they share one key)."""
    from evalcore.emulators.serve import EMULATED_LIMITS  # the CLI's emulated mode: imported only here

    limits = limits or EMULATED_LIMITS
    return {v.adapter: limits for v in config.vendors() if v.adapter != "offline"}


def load_personas(spec: str, config: TribunalConfig, benchmark: str, submissions: str) -> PersonaSet:
    """The emulated panel's personas: `demo` (the built-in three) or a YAML/JSON file.

    The file holds `{seed: int, personas: {<model or vendor>: {leniency, noise, self_bias, family,
    recall, false_flag_rate, upholds_false_flags, rejects_real_flags}}}`. The submissions are read
    once to fingerprint each one's deliverables with its system's family (`family_map`), which is
    how a persona with a self-family bias recognises its own family's work.
    """
    from evalcore.benchmark.loader import load_benchmark
    from evalcore.emulators.responders import DEMO_PERSONAS, PersonaSet, deliverables_fingerprint
    from evalcore.schema import Submission
    from evalcore.submissions.loader import iter_submissions

    if spec == "demo":
        data: dict[str, object] = {"seed": config.seed, "personas": DEMO_PERSONAS}
    else:
        try:
            raw = yaml.safe_load(Path(spec).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(spec, f"cannot read the personas file: {exc}") from exc
        if not isinstance(raw, dict):
            raise InputError(spec, "a personas file is a mapping {seed, personas: {model or vendor: {...}}}")
        data = {"seed": config.seed, **raw}
    bench = load_benchmark(benchmark)
    families: dict[str, str] = {}
    for item in iter_submissions(submissions, bench.task_map(), excluded=bench.excluded_task_ids()):
        if isinstance(item, Submission) and (family := config.family_of(item.system)) is not None:
            present = [(n, d.text) for n, d in item.deliverables.items() if not d.missing]
            families[deliverables_fingerprint(present)] = family
    try:
        return PersonaSet.model_validate({**data, "families": families})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise InputError(spec, f"invalid persona at {where}: {first['msg']}") from None


@contextmanager
def vendor_mode(
    config: TribunalConfig, mode: VendorMode, personas: PersonaSet | None = None
) -> Iterator[TribunalConfig]:
    """Yield the configuration to run with in `mode` (starting and stopping emulators if needed).

    `personas` (emulated mode only) bend the emulators' offline answers (`load_personas`).
    """
    if mode != VendorMode.EMULATED:
        if personas is not None:
            raise ConfigError("personas apply to emulated judges only: use --vendors emulated")
        yield config
        return
    from evalcore.emulators import EmulatorConfig, OfflineResponder, ServerLimits
    from evalcore.emulators._set import start_in_thread
    from evalcore.emulators.serve import point_at_emulators
    from evalcore.vendors.budget import VENDOR_BURST_S

    configs = {  # a bounded request log: the emulators live in the driver's process
        adapter: EmulatorConfig(
            limits=ServerLimits(
                requests_per_minute=lim.requests_per_minute,
                tokens_per_minute=lim.tokens_per_minute,
                burst_s=VENDOR_BURST_S.get(adapter, 60.0),  # each emulator enforces as its vendor does
            ),
            max_recorded=1000,
        )
        for adapter, lim in server_limits(config).items()
    }
    emus = start_in_thread(configs or None, responder=OfflineResponder(personas))
    try:
        yield point_at_emulators(config, emus.endpoints)
    finally:
        emus.stop()
