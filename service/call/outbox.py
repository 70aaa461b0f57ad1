"""What a session has produced and not yet sent: audio bounded (backpressure), cut on clear."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engines.engine import WordTiming


@dataclass
class Pcm:
    generation: int
    segment: int
    samples: np.ndarray


@dataclass
class Words:
    generation: int
    segment: int
    text: str
    words: list[WordTiming]


@dataclass
class Flush:
    id: int


@dataclass
class Clear:
    id: int


@dataclass
class End:
    pass


Item = Pcm | Words | Flush | Clear | End


class Outbox:
    """Items on their way to the client, in order. Audio is bounded: a producer that puts
    more than `limit` samples waits (backpressure) until the consumer takes some."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._items: deque[Item] = deque()
        self.queued_samples = 0
        self.paused = False
        """The producer waits for the client to read: the bound is reached."""
        self._added = asyncio.Event()
        self._taken = asyncio.Event()

    async def put(self, item: Item, stale: Callable[[], bool] = lambda: False) -> bool:
        """Queue `item`, waiting while the bound is reached if it is audio; False, and not
        queued, if it went `stale` meanwhile (a clear)."""
        while isinstance(item, Pcm) and self.queued_samples >= self._limit:
            self._taken.clear()
            self.paused = True
            try:
                await self._taken.wait()
            finally:
                self.paused = False
        if stale():
            return False
        if isinstance(item, Pcm):
            self.queued_samples += item.samples.size
        self._items.append(item)
        self._added.set()
        return True

    def clear(self, then: list[Item]) -> None:
        """Barge-in: unsent audio and words go; `then` (acknowledgements) follow what stays."""
        self._items = deque(i for i in self._items if not isinstance(i, (Pcm, Words)))
        self._items.extend(then)
        self.queued_samples = 0
        self._added.set()
        self._taken.set()

    def wake(self) -> None:
        """Wake the consumer (to see an error)."""
        self._added.set()

    async def take(self, producer: asyncio.Future[None], failed: Callable[[], bool]) -> Item | None:
        """The next item, once there is one; None as soon as `failed()` (the caller raises).
        Re-raises the producer's exception if it died."""
        while not self._items and not failed():
            if producer.done():
                producer.result()  # re-raise a synthesis failure
            self._added.clear()
            waiter: asyncio.Future[Any] = asyncio.ensure_future(self._added.wait())
            try:
                await asyncio.wait([waiter, producer], return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
        if failed():
            return None
        item = self._items.popleft()
        if isinstance(item, Pcm):
            self.queued_samples -= item.samples.size
            self._taken.set()
        return item
