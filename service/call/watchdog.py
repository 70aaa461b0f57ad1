"""The idle watchdog: ends a call whose client has left it idle for a while."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import IdleTimeout


class Watchdog:
    """Ends a call that has neither received a request nor sent anything for `seconds` while
    the server had nothing to do for it: the client sends no text, or reads nothing. Time
    the server itself takes (a busy machine, a long window) is never the client's idleness.

    It cancels the handler's task, which is the only way to interrupt a write blocked on a
    client that stopped reading. The call ends with `error`: sent by `abort` (see watch())
    where one is given, else by the handler.
    """

    def __init__(self, seconds: float | None) -> None:
        self._seconds = seconds
        self.error: IdleTimeout | None = None
        """Set when the watchdog ended the call."""
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()
        self._working: Callable[[], bool] = lambda: False
        self._unread: Callable[[], bool] = lambda: False
        self._abort: Callable[[IdleTimeout], Awaitable[Any]] | None = None
        self._task: asyncio.Task[None] | None = None
        self._status: asyncio.Future[Any] | None = None
        """abort()'s task, held here: the event loop holds its tasks only weakly."""

    def touch(self) -> None:
        self._last = self._loop.time()

    def watch(
        self,
        working: Callable[[], bool],
        *,
        unread: Callable[[], bool] = lambda: False,
        abort: Callable[[IdleTimeout], Awaitable[Any]] | None = None,
    ) -> None:
        """Start watching the call whose handler runs this, once it has a session (a stream
        waiting for its config has a deadline of its own). `working`: whether the server is
        busy producing for the call (not idle then). `unread`: whether output waits for the
        client to read it, which decides what the error tells the client to do. `abort`: ends
        the call with a status, for a handler that cannot: a gRPC async generator waits for
        its writes in gRPC's own code, and gRPC ends a call cancelled there with no status."""
        self._working, self._unread, self._abort = working, unread, abort
        self.touch()
        if self._seconds:
            handler = asyncio.current_task()
            assert handler is not None
            self._task = asyncio.ensure_future(self._watch(handler, self._seconds))

    async def _watch(self, handler: asyncio.Task[Any], seconds: float) -> None:
        # Sleep until the deadline the latest activity set, as often as activity moves it.
        while True:
            if self._working():
                self.touch()
            remaining = self._last + seconds - self._loop.time()
            if remaining <= 0:
                break
            await asyncio.sleep(remaining)
        if self._unread():
            fix = "read the audio as it arrives"
        else:
            fix = "send text, or half-close the stream when done"
        self.error = IdleTimeout(
            f"the stream was idle for {seconds:g} s (no audio sent, and no sentence, flush or "
            "clear received) and was closed: "
            f"{fix} (server setting --idle-timeout-seconds)"
        )
        if self._abort is not None:
            # Started before the cancel, so it runs first. The status follows the responses
            # already queued: a client that reads again gets them, then this error.
            self._status = asyncio.ensure_future(self._abort(self.error))
            self._status.add_done_callback(_raised)
        handler.cancel()

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


def _raised(future: asyncio.Future[Any]) -> None:
    """Take the abort's exception (it always raises: the status was sent, or the call had
    already ended), so that asyncio does not log it as never retrieved."""
    if not future.cancelled():
        future.exception()
