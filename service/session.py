"""One synthesis call: text in, events out, with flush, clear (barge-in) and backpressure."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from .audio import AudioSettings
from .engine import Segment, Voice, WordTiming
from .errors import Overloaded
from .events import Event, SummaryEvent
from .jobs import Batch, JobDropped, Runner, Work
from .output import Output
from .segmenter import Segmenter

T = TypeVar("T")

DEADLINE_LEAD = 0.3
"""Seconds before a listener would run out of audio that its next job is due: room for a wait
behind the jobs running (a 128-frame window takes about 75 ms on one thread) and the job itself
(bench/capacity.py chose it: at 150 ms calls stalled at 24 callers)."""
LONG_FIRST_WINDOW_LOAD = 0.5
"""Over this load (the share of the workers busy lately), a reply that starts from silence gets
a longer first window: its first audio waits behind other streams' jobs anyway, and the next
window, which waits too, gets more time to come (bench/capacity.py, 20 callers)."""


@dataclass(frozen=True)
class StreamSettings:
    """A call's validated settings."""

    voice: Voice
    params: Hashable
    audio: AudioSettings
    word_timestamps: bool = False


@dataclass
class SessionLimits:
    max_buffered_chars: int = 5000
    """Text accepted but not yet synthesized; more is RESOURCE_EXHAUSTED."""
    max_queued_seconds: float = 2.0
    """Synthesized audio waiting to be sent; synthesis pauses beyond it (backpressure)."""


# -- internal queue items ------------------------------------------------------------------------


@dataclass
class _Segment:
    generation: int
    text: str


@dataclass
class _Pcm:
    generation: int
    segment: int
    samples: np.ndarray


@dataclass
class _Words:
    generation: int
    segment: int
    text: str
    words: list[WordTiming]


@dataclass
class _Flush:
    id: int


@dataclass
class _Clear:
    id: int


@dataclass
class _End:
    pass


_Work = _Segment | _Flush | _End
_Out = _Pcm | _Words | _Flush | _Clear | _End


@dataclass
class _Stats:
    first_text_at: float | None = None
    busy_seconds: float = 0.0
    segments: int = 0


class Session:
    """The state of one call. Input methods are called from the event loop and never block;
    `events()` runs synthesis on the runner and yields what to send, in order.

    Ordering guarantees: the format comes first and the summary last; audio keeps text order;
    a FlushDone follows all audio of the text before its flush; a ClearDone follows everything
    sent before the clear and precedes any audio of text sent after it.
    """

    def __init__(
        self,
        settings: StreamSettings,
        runner: Runner,
        *,
        limits: SessionLimits | None = None,
        segmenter: Segmenter | None = None,
        load: Callable[[], float] = lambda: 0.0,
    ) -> None:
        self.settings = settings
        self._runner = runner
        self._load = load
        """The scheduler's load (Scheduler.load): how busy its workers were lately."""
        self.closers: list[Callable[[], None]] = []
        """Called once the call is over."""
        self._step: asyncio.Future[Any] | None = None
        # When the listener will have heard all audio produced so far (time.monotonic()): the
        # deadline of the next model job. Nothing produced yet: due now.
        self._heard_by = 0.0
        self._limits = limits or SessionLimits()
        self._segmenter = segmenter or Segmenter()
        self._generation = 0
        self._work: deque[_Work] = deque()
        self._queued_chars = 0
        self._out: deque[_Out] = deque()
        self._queued_samples = 0
        self._work_added = asyncio.Event()
        self._out_added = asyncio.Event()
        self._out_taken = asyncio.Event()
        self._ended = False
        self.paused = False
        """Synthesis waits for the client to read: max_queued_seconds of audio are unsent."""
        self._waiting_for_text = False
        self._error: BaseException | None = None
        self._stats = _Stats()
        self._producer: asyncio.Future[None] | None = None

    # -- input side --------------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def finished(self) -> bool:
        """Synthesis is over for good: the producer has returned or was cancelled."""
        return self._producer is not None and self._producer.done()

    @property
    def working(self) -> bool:
        """The server is producing for the call: it has text to speak and is not waiting for
        the client to read (its queue of unsent audio is not full)."""
        return not self._waiting_for_text and not self.paused and not self.finished

    @property
    def queued_seconds(self) -> float:
        """Audio synthesized and not yet sent."""
        return self._queued_samples / self.settings.voice.info.native_rate

    def push_text(self, text: str) -> None:
        """Append a piece of text; complete segments go to synthesis at once."""
        if self._ended:
            return
        held = self._segmenter.buffered_chars + self._queued_chars + len(text)
        if held > self._limits.max_buffered_chars:
            raise Overloaded(
                f"the stream holds {held} characters not yet spoken, over the limit of "
                f"{self._limits.max_buffered_chars}: send text no faster than it can be spoken, "
                "or flush and wait for flush_done"
            )
        for segment in self._segmenter.push(text):
            self._add_segment(segment)

    def flush(self, flush_id: int) -> None:
        """Speak everything buffered now; FlushDone(flush_id) follows its audio."""
        if self._ended:
            return
        for segment in self._segmenter.flush():
            self._add_segment(segment)
        self._add_work(_Flush(flush_id))

    def clear(self, clear_id: int) -> None:
        """Barge-in: drop buffered text and unsent audio, stop the segment in flight."""
        if self._ended:
            return
        self._generation += 1
        self._segmenter.clear()
        if self._step is not None:
            self._step.cancel()  # a job still queued never runs; one running is ignored
        # Pending flushes are acknowledged (their text is dropped) before the clear.
        acks = [item for item in self._work if isinstance(item, _Flush)]
        self._work = deque(item for item in self._work if not isinstance(item, (_Segment, _Flush)))
        self._queued_chars = 0
        kept = [item for item in self._out if not isinstance(item, (_Pcm, _Words))]
        self._out = deque(kept)
        self._queued_samples = 0
        self._out.extend(acks)
        self._out.append(_Clear(clear_id))
        self._out_added.set()
        self._out_taken.set()

    def end(self) -> None:
        """No more input: speak what is buffered, then finish with a summary. Idempotent."""
        if self._ended:
            return
        for segment in self._segmenter.flush():
            self._add_segment(segment)
        self._add_work(_End())
        self._ended = True

    def fail(self, error: BaseException) -> None:
        """End the call with `error` as soon as possible (raised from events())."""
        if self._error is None:
            self._error = error
        self._ended = True
        self._out_added.set()

    def _add_segment(self, text: str) -> None:
        if not text.strip():
            return
        if self._stats.first_text_at is None:
            self._stats.first_text_at = time.perf_counter()
        self._queued_chars += len(text)
        self._add_work(_Segment(self._generation, text))

    def _add_work(self, item: _Work) -> None:
        self._work.append(item)
        self._work_added.set()

    # -- synthesis (producer task) ----------------------------------------------------------

    async def _job(
        self, fn: Work[T] | None, generation: int, batch: Batch[T] | None = None
    ) -> T | None:
        """Run `fn` (or `batch`) on the scheduler, due when the listener runs out of audio.
        None if a clear dropped it (or made its result stale)."""
        stats = self._stats
        work = fn if fn is not None else (batch.alone if batch is not None else None)

        def timed(wide: bool) -> T:
            assert work is not None
            start = time.perf_counter()
            try:
                return work(wide)
            finally:
                stats.busy_seconds += time.perf_counter() - start

        # Due a little before the listener runs dry, so that the job is done by then, and so
        # that a stream about to stall goes before a new stream's first audio. A listener with
        # no audio in hand waits already: due now (None). A batch's own run is not timed in
        # this stream's real-time factor.
        heard = self._heard_by > time.monotonic()
        deadline = self._heard_by - DEADLINE_LEAD if heard else None
        run = self._runner.run(timed if work is not None else None, deadline, batch=batch)
        step = asyncio.ensure_future(run)
        self._step = step
        try:
            await asyncio.wait([step])
        finally:
            if not step.done():
                step.cancel()  # this call is ending
            self._step = None
        if step.cancelled() or generation != self._generation:
            return None
        if isinstance(step.exception(), JobDropped):
            return None
        return step.result()

    def _heard(self, samples: int) -> None:
        """Account for audio produced: the listener will be busy with it that much longer."""
        seconds = samples / self.settings.voice.info.native_rate
        self._heard_by = max(self._heard_by, time.monotonic()) + seconds

    async def _next_work(self) -> _Work:
        while not self._work:
            self._work_added.clear()
            self._waiting_for_text = True
            try:
                await self._work_added.wait()
            finally:
                self._waiting_for_text = False
        return self._work.popleft()

    async def _put(self, item: _Out, generation: int | None = None) -> bool:
        """Queue an item for sending, waiting while too much audio is queued (backpressure).
        False if a clear made the item stale while it waited."""
        limit = self._limits.max_queued_seconds * self.settings.voice.info.native_rate
        while isinstance(item, _Pcm) and self._queued_samples >= limit:
            self._out_taken.clear()
            self.paused = True
            try:
                await self._out_taken.wait()
            finally:
                self.paused = False
        if generation is not None and generation != self._generation:
            return False
        if isinstance(item, _Pcm):
            self._queued_samples += item.samples.size
        self._out.append(item)
        self._out_added.set()
        return True

    async def _produce(self) -> None:
        settings = self.settings
        while True:
            item = await self._next_work()
            if isinstance(item, (_Flush, _End)):
                await self._put(item)
                if isinstance(item, _End):
                    return
                continue
            self._queued_chars -= len(item.text)
            if item.generation != self._generation:
                continue
            index = self._stats.segments
            self._stats.segments += 1
            text = item.text.strip()
            busy = self._heard_by <= time.monotonic() and self._load() > LONG_FIRST_WINDOW_LOAD
            segment = settings.voice.segment(
                text, settings.params, word_timestamps=settings.word_timestamps, long_first=busy
            )
            await self._speak(segment, item.generation, index, text)

    async def _speak(self, segment: Segment, gen: int, index: int, text: str) -> None:
        """A segment window by window, its words (when asked for) before its audio. The first
        job runs the model's first part and the first window together: the first audio of a
        segment never waits for a second turn at the scheduler."""
        first = True
        while gen == self._generation:
            samples = await self._window(segment, gen)
            if gen != self._generation:
                return
            words = segment.words if first and self.settings.word_timestamps else ()
            if words and not await self._put(_Words(gen, index, text, list(words)), gen):
                return
            first = False
            if samples is None:
                return
            self._heard(samples.size)
            if not await self._put(_Pcm(gen, index, samples), gen):
                return

    async def _window(self, segment: Segment, gen: int) -> np.ndarray | None:
        """The segment's next window: taken at once when it needs no model run, else as a job
        (one the scheduler may batch with other streams' when the segment offers it)."""
        ahead = max(0.0, self._heard_by - time.monotonic())
        if segment.instant:
            return segment.next_window(ahead)
        batch = segment.batch(ahead)
        if batch is not None:
            return await self._job(None, gen, batch)
        return await self._job(lambda wide: segment.next_window(ahead, wide=wide), gen)

    # -- sending (the consumer) ---------------------------------------------------------------

    async def _next_out(self, producer: asyncio.Future[None]) -> _Out:
        """The next item to send; raises the error given to fail() or the producer's."""
        while not self._out and self._error is None:
            if producer.done():
                producer.result()  # re-raise a synthesis failure
            self._out_added.clear()
            waiter: asyncio.Future[Any] = asyncio.ensure_future(self._out_added.wait())
            try:
                await asyncio.wait([waiter, producer], return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
        if self._error is not None:
            raise self._error
        return self._out.popleft()

    async def events(self) -> AsyncGenerator[Event, None]:
        """Everything to send, in order; raises the error given to fail()."""
        voice = self.settings.voice
        out = Output(
            self.settings.audio,
            voice=voice.info.name,
            native_rate=voice.info.native_rate,
            gain=voice.gain,
        )
        yield out.format()
        producer = self._producer = asyncio.ensure_future(self._produce())
        try:
            while True:
                item = await self._next_out(producer)
                events: list[Event]
                if isinstance(item, _Pcm):
                    self._queued_samples -= item.samples.size
                    self._out_taken.set()
                    events = out.pcm(item.samples, item.segment)
                elif isinstance(item, _Words):
                    events = [out.words(item.segment, item.text, item.words)]
                elif isinstance(item, _Flush):
                    events = out.flush(item.id)
                elif isinstance(item, _Clear):
                    events = out.clear(item.id)
                else:
                    events = out.finish()
                for event in events:
                    yield event
                if isinstance(item, _End):
                    yield self._summary(out)
                    return
        finally:
            producer.cancel()
            for close in self.closers:
                close()

    def _summary(self, out: Output) -> SummaryEvent:
        s = self._stats
        audio_ms = 1000.0 * out.samples_sent / out.settings.sample_rate_hz
        ttfa = 0.0
        if out.first_audio_at is not None and s.first_text_at is not None:
            ttfa = 1000.0 * (out.first_audio_at - s.first_text_at)
        rtf = s.busy_seconds * 1000.0 / audio_ms if audio_ms else 0.0
        return SummaryEvent(audio_ms, s.segments, ttfa, rtf)
