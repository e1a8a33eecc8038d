"""All three emulators together, in the caller's event loop or in a background thread.

Why a thread variant: Ray tests, the demo and `tribunal sweep --vendors emulated` are synchronous
drivers; they need the emulators served by their own loop while the driver blocks on Ray, and then
only the endpoints (plain strings that pickle to any worker).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Literal, TypeVar

from doubles.emulators._batches import BatchStore
from doubles.emulators._config import Behaviour, EmulatorConfig
from doubles.emulators._engine import EmulatorStats, RecordedRequest
from doubles.emulators._retention import Received
from doubles.emulators.anthropic_server import AnthropicEmulator
from doubles.emulators.openai_server import OpenAIEmulator
from doubles.emulators.responders import Responder
from doubles.emulators.xai_server import XAIEmulator

VendorKey = Literal["openai", "anthropic", "xai"]
VENDORS: tuple[VendorKey, ...] = ("openai", "anthropic", "xai")
Emulator = OpenAIEmulator | AnthropicEmulator | XAIEmulator
R = TypeVar("R")


class EmulatorSet:
    """OpenAI, Anthropic and xAI emulators started and stopped together.

    `config` applies to all three unless a vendor has its own; each emulator gets its own engine
    (its own copy of the script, RNG, limits and prompt cache).
    """

    def __init__(
        self,
        config: EmulatorConfig | None = None,
        *,
        openai: EmulatorConfig | None = None,
        anthropic: EmulatorConfig | None = None,
        xai: EmulatorConfig | None = None,
        responder: Responder | None = None,
        host: str = "127.0.0.1",
        ports: Mapping[str, int] | None = None,
    ) -> None:
        ports = ports or {}
        self.openai = OpenAIEmulator(
            openai or config, responder=responder, host=host, port=ports.get("openai", 0)
        )
        self.anthropic = AnthropicEmulator(
            anthropic or config, responder=responder, host=host, port=ports.get("anthropic", 0)
        )
        self.xai = XAIEmulator(xai or config, responder=responder, host=host, port=ports.get("xai", 0))
        # one condition for the three batch stores, so a test can wait on all of them at once
        self.changed = threading.Condition()
        for emu in self.by_vendor().values():
            emu.batches.changed = self.changed

    def by_vendor(self) -> dict[VendorKey, Emulator]:
        """The three emulators keyed like `VendorConfig.adapter`."""
        return {"openai": self.openai, "anthropic": self.anthropic, "xai": self.xai}

    def endpoints(self) -> dict[str, str]:
        """{openai: "http://127.0.0.1:P/v1", anthropic: "http://127.0.0.1:P", xai: "127.0.0.1:P"}."""
        return {"openai": self.openai.base_url, "anthropic": self.anthropic.base_url, "xai": self.xai.host}

    def stats(self) -> dict[str, EmulatorStats]:
        """Counters per vendor."""
        return {name: emu.stats for name, emu in self.by_vendor().items()}

    async def start(self) -> None:
        """Start all three (stopping the ones already started if one fails)."""
        started: list[Emulator] = []
        try:
            for emu in self.by_vendor().values():
                await emu.start()
                started.append(emu)
        except BaseException:
            for emu in reversed(started):
                await emu.stop()
            raise

    async def stop(self) -> None:
        """Stop all three."""
        for emu in self.by_vendor().values():
            await emu.stop()

    async def __aenter__(self) -> EmulatorSet:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()


class EmulatorThread:
    """An `EmulatorSet` served by its own event loop in a daemon thread (see `start_in_thread`)."""

    def __init__(self, emulators: EmulatorSet) -> None:
        self.emulators = emulators
        self.endpoints: dict[str, str] = {}
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="tribunal-emulators", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._main())
        finally:
            self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        try:
            async with self.emulators:
                self.endpoints = self.emulators.endpoints()
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # surfaced to the starting thread
            self._error = exc
            self._ready.set()

    def start(self, timeout_s: float = 30.0) -> EmulatorThread:
        """Start the thread and wait until the servers listen (raises what startup raised)."""
        self._thread.start()
        if not self._ready.wait(timeout_s):
            raise RuntimeError(f"emulators did not start within {timeout_s} s")
        if self._error is not None:
            raise RuntimeError(f"emulators failed to start: {self._error}") from self._error
        return self

    def call(self, fn: Callable[[], Awaitable[R]], timeout_s: float = 30.0) -> R:
        """Run `fn()` on the emulators' loop and return its result (thread-safe access)."""
        return asyncio.run_coroutine_threadsafe(_await(fn), self._loop).result(timeout_s)

    def push(self, vendor: VendorKey, *behaviours: Behaviour) -> None:
        """Append scripted behaviours to one emulator, from any thread."""
        emu = self.emulators.by_vendor()[vendor]
        self._loop.call_soon_threadsafe(emu.push, *behaviours)

    def stats(self) -> dict[str, EmulatorStats]:
        """A consistent copy of every emulator's counters."""

        async def snap() -> dict[str, EmulatorStats]:
            return {k: v.model_copy() for k, v in self.emulators.stats().items()}

        return self.call(snap)

    def requests(self, vendor: VendorKey) -> list[RecordedRequest]:
        """A copy of one emulator's recorded requests."""

        async def snap() -> list[RecordedRequest]:
            return list(self.emulators.by_vendor()[vendor].requests)

        return self.call(snap)

    def received(self, vendor: VendorKey) -> list[Received]:
        """A copy of one emulator's received log: every body with its retention settings."""

        async def snap() -> list[Received]:
            return list(self.emulators.by_vendor()[vendor].received)

        return self.call(snap)

    def retained(self, vendor: VendorKey) -> dict[str, list[str]]:
        """Ids of what one emulator still keeps, by kind, at its clock (see `EmulatorBase.retained`)."""

        async def snap() -> dict[str, list[str]]:
            return self.emulators.by_vendor()[vendor].retained()

        return self.call(snap)

    def advance(self, seconds: float) -> None:
        """Move every emulator's clock forward (batches, file expiry, batch retention; thread-safe)."""
        for emu in self.emulators.by_vendor().values():
            self._loop.call_soon_threadsafe(emu.advance, seconds)

    def batch_stores(self) -> dict[VendorKey, BatchStore]:
        """Each emulator's batch store (read its counters after `wait_batches`)."""
        return {name: emu.batches for name, emu in self.emulators.by_vendor().items()}

    def wait_batches(self, predicate: Callable[[dict[VendorKey, BatchStore]], bool], timeout_s: float) -> bool:
        """Block until `predicate(stores)` holds (True) or `timeout_s` passes (False); no polling."""
        stores = self.batch_stores()
        deadline = time.monotonic() + timeout_s
        with self.emulators.changed:
            return self.emulators.changed.wait_for(lambda: predicate(stores), max(deadline - time.monotonic(), 0))

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the servers and the thread (idempotent)."""
        if self._thread.is_alive() and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(timeout_s)

    def __enter__(self) -> EmulatorThread:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


async def _await(fn: Callable[[], Awaitable[R]]) -> R:
    return await fn()


def start_in_thread(
    configs: EmulatorConfig | Mapping[str, EmulatorConfig] | None = None,
    *,
    responder: Responder | None = None,
    ports: Mapping[str, int] | None = None,
    timeout_s: float = 30.0,
) -> EmulatorThread:
    """Start all three emulators in a background thread; returns once they listen.

    `configs` is one config for all three or a mapping {openai|anthropic|xai: config}.
    Use as `with start_in_thread() as emus: emus.endpoints` or call `.stop()` yourself.
    """
    if configs is None or isinstance(configs, EmulatorConfig):
        emulators = EmulatorSet(configs, responder=responder, ports=ports)
    else:
        unknown = set(configs) - set(VENDORS)
        if unknown:
            raise ValueError(f"unknown emulator vendor(s) {sorted(unknown)}; expected {list(VENDORS)}")
        emulators = EmulatorSet(
            openai=configs.get("openai"),
            anthropic=configs.get("anthropic"),
            xai=configs.get("xai"),
            responder=responder,
            ports=ports,
        )
    return EmulatorThread(emulators).start(timeout_s)
