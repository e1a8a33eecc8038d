"""Lifecycle shared by the HTTP emulators (aiohttp on 127.0.0.1, port 0, in the caller's loop).

Why `handler_cancellation=True`: a client that times out hangs up, and the emulator must then stop
working on that request (as a real server does) instead of finishing a 1-hour `Hang` after the
test has ended.

Every HTTP emulator also answers `GET /_emulator/received` (not a vendor endpoint): the retention
settings of every body it received and the ids of what it still keeps, so an operator of
`tribunal emulate` can check what a sweep sent without a debugger (same key as the API).
"""

from __future__ import annotations

import json
from abc import abstractmethod
from typing import Any

from aiohttp import web

from doubles.emulators._base import EmulatorBase

MAX_BODY_BYTES = 64 * 1024 * 1024


class HttpEmulator(EmulatorBase):
    """Base of the OpenAI and Anthropic emulators: an aiohttp app around an `Engine`."""

    _runner: web.AppRunner | None = None

    # -- public surface ---------------------------------------------------------------------------

    @property
    def host(self) -> str:
        """The address it binds (127.0.0.1)."""
        return self.bind_host

    @property
    def origin(self) -> str:
        """http://host:port (no path)."""
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        """Bind and serve in the running event loop."""
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.add_routes([*self._routes(), web.get("/_emulator/received", self._received_route)])
        self.engine.open()
        runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=0.5, access_log=None)
        await runner.setup()
        # A deep accept queue: bursts of thousands of concurrent SDK calls must not see connect timeouts.
        site = web.TCPSite(runner, self.host, self._requested_port, shutdown_timeout=0.5, backlog=4096)
        await site.start()
        self._runner = runner
        self._port = int(runner.addresses[0][1])

    async def stop(self) -> None:
        """Wake hanging handlers and shut the server down."""
        self.engine.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _received_route(self, request: web.Request) -> web.StreamResponse:
        """The received log (without bodies: they hold the benchmark's text) and what is kept."""
        if not self.batches.authorized(bearer_key(request)):
            return web.json_response({"error": {"message": "invalid API key"}}, status=401)
        received = [e.model_dump(mode="json", exclude={"body"}) for e in self.received]
        return web.json_response({"vendor": self.vendor, "received": received, "retained": self.retained()})

    # -- for subclasses ---------------------------------------------------------------------------

    @abstractmethod
    def _routes(self) -> list[web.RouteDef]:
        """The vendor's endpoints."""


async def read_json(request: web.Request) -> dict[str, Any] | None:
    """The request body as a JSON object, or None if it is not one."""
    try:
        data = json.loads(await request.read())
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def bearer_key(request: web.Request) -> str | None:
    """The key from `Authorization: Bearer <key>` (or Anthropic's `x-api-key`)."""
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return request.headers.get("x-api-key") or None


def text_of(content: Any) -> str:
    """Text of a message content: a string, or a list of text parts (any vendor's spelling)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return ""


def join(parts: list[str]) -> str:
    """Messages of one role joined by blank lines (how the emulator sees "the" system/user text)."""
    return "\n\n".join(p for p in parts if p)


BROKEN_BODY = "<html><body>502 Bad Gateway (emulated broken body)</body></html"
