"""What every vendor emulator is, whatever its transport: an `Engine` behind a local server.

Why a base: the HTTP emulators (aiohttp) and the xAI one (gRPC) differ only in how they serve;
the engine, the record of requests, the counters, the script, the bound port and the async
context manager are the same.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from types import TracebackType
from typing import ClassVar, Self

from doubles.emulators._batches import BatchStore
from doubles.emulators._config import Behaviour, EmulatorConfig
from doubles.emulators._engine import EmulatorStats, Engine, RecordedRequest
from doubles.emulators._limits import Clock
from doubles.emulators._retention import Received, ReceivedLog
from doubles.emulators.responders import Responder


class EmulatorBase(ABC):
    """An emulator on `bind_host` (127.0.0.1) and a port (0 = any free one), in the caller's loop."""

    vendor: ClassVar[str]
    id_prefix: ClassVar[str] = ""

    def __init__(
        self,
        config: EmulatorConfig | None = None,
        *,
        responder: Responder | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        limits_clock: Clock = time.monotonic,
    ) -> None:
        """`limits_clock` drives the rate-limit buckets (a test freezes it to send a burst "within
        one second" without depending on how fast the machine sends it)."""
        self.config = config or EmulatorConfig()
        self.engine = Engine(self.vendor, self.config, responder, self.id_prefix, limits_clock)
        self.batches = BatchStore(self.engine, self.config.batch)
        self.log = ReceivedLog(self.vendor, self.config.max_recorded)
        self.bind_host = host
        self._requested_port = port
        self._port: int | None = None

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in arrival order."""
        return self.engine.requests

    @property
    def received(self) -> list[Received]:
        """Every body received (online, batch lines at submission, management calls) with the
        retention settings the vendor reads from it, in arrival order."""
        return self.log.entries

    def retained(self) -> dict[str, list[str]]:
        """Ids of what the vendor still keeps, by kind ("responses", "files", "batches", ...).

        Brought up to the emulator's clock first (expired files are gone). What a purge must leave
        empty, apart from the kinds the vendor offers no way to delete (OpenAI and xAI batches).
        """
        return {"batches": list(self.batches.batches)}

    @property
    def stats(self) -> EmulatorStats:
        """Counters by outcome and token totals."""
        return self.engine.stats

    @property
    def port(self) -> int:
        """The bound port (only after start)."""
        if self._port is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return self._port

    @property
    @abstractmethod
    def base_url(self) -> str:
        """What to give the SDK to reach this emulator."""

    def push(self, *behaviours: Behaviour) -> None:
        """Append behaviours to the script (consumed in order, one per request)."""
        self.engine.push(*behaviours)

    def advance(self, seconds: float) -> None:
        """Move the emulator's clock forward: batches due by then end, and files and batch results
        past their retention are deleted, when next looked at."""
        self.batches.advance(seconds)

    @abstractmethod
    async def start(self) -> None:
        """Bind and serve in the running event loop (sets `_port`, opens the engine)."""

    @abstractmethod
    async def stop(self) -> None:
        """Wake hanging requests (close the engine) and shut the server down."""

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()
