"""Close HTTP connections that send no whole request in time.

aiohttp waits for a request's head for ever: a client that connects and sends nothing, or half
a head (slowloris), holds its connection, and a file descriptor, for as long as it likes. A
thousand of them use up a soft limit of 1024 open files, and then neither port accepts a caller
(docs/reliability.md#slow-and-silent-connections)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class SlowClients:
    """Closes each connection that has had no request in a handler for `timeout` seconds since
    it was first seen or its last answer was given (a head never finished, or keep-alive left
    open). A request in a handler is the handler's to bound: it reads its body with a timeout
    (read_body) and its writes have the idle watchdog."""

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        self._busy: dict[RequestHandler, int] = {}
        """Requests of a connection now in a handler."""
        self._since: dict[RequestHandler, float] = {}
        """When each connection was first seen, or its last request left its handler."""

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        connection = request.protocol
        self._busy[connection] = self._busy.get(connection, 0) + 1
        try:
            return await handler(request)
        finally:
            left = self._busy.pop(connection) - 1
            if left:
                self._busy[connection] = left
            self._since[connection] = time.monotonic()

    def sweep(self, connections: Iterable[RequestHandler], now: float) -> None:
        """Close the connections of `connections` idle for longer than the timeout; forget
        those gone."""
        seen: dict[RequestHandler, float] = {}
        for connection in connections:
            since = seen[connection] = self._since.get(connection, now)
            if connection not in self._busy and now - since > self._timeout:
                connection.force_close()
        self._since = seen

    async def run(self, connections: Callable[[], Iterable[RequestHandler]]) -> None:
        """Sweep `connections()` a few times per timeout until cancelled."""
        every = min(max(self._timeout / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(every)
            self.sweep(connections(), time.monotonic())


async def read_body(request: web.Request, timeout: float) -> bytes | None:
    """The request's body, or None when it does not arrive within `timeout` seconds."""
    with contextlib.suppress(asyncio.TimeoutError):
        return await asyncio.wait_for(request.read(), timeout)
    return None
