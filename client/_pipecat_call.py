"""Which Pipecat audio context each part of a StreamingSynthesize call's answer is for."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field

from ._async import AsyncStreamSession
from ._events import AudioChunk, ClearDone, FlushDone, Timestamps


@dataclass
class Run:
    """Text sent in a row for one audio context; its audio and words come back in that order."""

    context_id: str
    flush_id: int | None = None
    """The flush that ends the run, once sent; its FlushDone follows the run's last audio."""
    clear_id: int | None = None
    """Set on the mark a clear leaves: what comes before its ClearDone belongs to no context."""
    dropped: bool = False
    """Its context was interrupted: the audio still coming for it is not played."""
    offset_ms: float = 0.0
    """Audio of the context that came before this run (its words are timed from the context's
    first audio)."""
    texts: list[str] = field(default_factory=list)
    """Its text, kept until the server takes the call: a call refused then is sent again."""


class Call:
    """One StreamingSynthesize call, and which audio context each part of its answer is for.

    The server answers in the order it was asked, so the answers before a flush's FlushDone
    belong to the run that the flush ended."""

    def __init__(self, session: AsyncStreamSession, *, eager: bool = False) -> None:
        self.session = session
        self.eager = eager
        """Opened before any text (when the pipeline starts), not for a turn."""
        self.taken = False
        """The server took the call (its AudioFormat came): no refusal follows."""
        self.runs: deque[Run] = deque()
        self.half_closed = False
        self.cancelled = False
        self.base_ms = 0.0
        """Where the first run's audio starts in the call's output (its words count from 0)."""
        self.end_ms = 0.0
        self.context_ms: dict[str, float] = {}
        """Audio received so far for each context."""
        self.task: asyncio.Task[None] | None = None

    def head(self) -> Run | None:
        """The run the next answers are for, unless they are to be dropped."""
        run = self.runs[0] if self.runs else None
        return None if run is None or run.dropped else run

    def pending(self, context_id: str) -> bool:
        return any(r.context_id == context_id and not r.dropped for r in self.runs)

    def live_contexts(self) -> list[str]:
        return list(dict.fromkeys(r.context_id for r in self.runs if not r.dropped))

    async def send(self, context_id: str, text: str) -> None:
        last = self.runs[-1] if self.runs else None
        if last is None or last.context_id != context_id or not self._open(last):
            if last is not None and self._open(last):
                # Another context's text follows: the flush marks where this one's audio ends.
                last.flush_id = await self.session.flush()
            offset = 0.0 if self.runs else self.context_ms.get(context_id, 0.0)
            self.runs.append(Run(context_id, offset_ms=offset))
        if not self.taken:
            self.runs[-1].texts.append(text)
        await self.session.send(text)

    def take(self) -> None:
        """The server took the call: the text kept to send again is let go."""
        self.taken = True
        for run in self.runs:
            run.texts.clear()

    async def flush(self, context_id: str) -> None:
        last = self.runs[-1] if self.runs else None
        if last is not None and last.context_id == context_id and self._open(last):
            last.flush_id = await self.session.flush()

    async def drop(self, context_id: str) -> None:
        """Play none of the context's audio still to come; stop the server's work for it when
        nothing else is pending on this call."""
        for run in self.runs:
            if run.context_id == context_id:
                run.dropped = True
        if not self.runs or not all(r.dropped for r in self.runs):
            return
        if all(r.clear_id is not None for r in self.runs):
            return  # cleared already
        if self.half_closed:
            self.cancelled = True
            await self.session.cancel()
        else:
            # Barge-in: the server drops its text and unsent audio and stops within a window.
            self.runs = deque([Run("", clear_id=await self.session.clear(), dropped=True)])

    def audio(self, chunk: AudioChunk) -> Run | None:
        self.end_ms = max(self.end_ms, chunk.start_ms + chunk.duration_ms)
        run = self.head()
        if run is not None:
            ms = self.context_ms.get(run.context_id, 0.0)
            self.context_ms[run.context_id] = ms + chunk.duration_ms
        return run

    def words(self, timestamps: Timestamps) -> tuple[Run, list[tuple[str, float]]] | None:
        """The words' start times in seconds from their context's first audio."""
        run = self.head()
        if run is None:
            return None
        shift = run.offset_ms - self.base_ms
        return run, [(w.word, (w.start_ms + shift) / 1000.0) for w in timestamps.words]

    def acknowledge(self, event: FlushDone | ClearDone) -> Run | None:
        """The run that the ack ends, if it ended one."""
        run = self.runs[0] if self.runs else None
        if isinstance(event, ClearDone):
            if run is None or run.clear_id != event.id:
                return None
        elif run is None or run.flush_id != event.id:
            return None  # a flush of text that a clear dropped: acked just before the clear
        self.runs.popleft()
        # All audio before the ack has arrived: the next run's audio starts here.
        self.base_ms = self.end_ms
        if self.runs:
            nxt = self.runs[0]
            nxt.offset_ms = self.context_ms.get(nxt.context_id, 0.0)
        return run

    @staticmethod
    def _open(run: Run) -> bool:
        return run.flush_id is None and run.clear_id is None
