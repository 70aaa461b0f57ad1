"""One synthesis call: text in, events out, with flush, clear (barge-in) and backpressure."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from ..audio.settings import AudioSettings
from ..engines.engine import Segment, Voice
from ..errors import InvalidRequest, Overloaded
from ..jobs import Batch, JobDropped, Runner, Work
from . import markup
from .events import Event, SummaryEvent
from .outbox import Clear, End, Flush, Outbox, Pcm, Words
from .output import Output
from .pacing import Pacer, PacingPolicy
from .segmenter import Segmenter

T = TypeVar("T")


@dataclass(frozen=True)
class SessionPolicy:
    """A session's tuned figures; `python -m bench.capacity` chose long_first_window_load and
    docs/benchmarks.md ("Capacity: live voices") has its runs."""

    long_first_window_load: float = 0.5
    """Over this load (the share of the workers busy lately), or while another stream's job is
    due and still waits for a worker (a crowd of calls arriving together, before the load over
    seconds shows them), a reply that starts from silence gets a longer first window: its first
    audio waits behind other streams' jobs anyway, and the next window, which waits too, gets
    more time to come (`bench.capacity --levels 20`, and `--levels 12+2` for the crowd). A
    Kokoro voice beside Piper streams reads no load (opening.first_window_load)."""
    quiet_recheck: float = 0.1
    """Seconds between two looks at a quiet stream still speaking (Session.end_when_quiet): a
    poll, not a tuned figure; short beside the drain's quiet seconds."""
    pacing: PacingPolicy = field(default_factory=PacingPolicy)
    """When the session's jobs are due (its Pacer's)."""


@dataclass(frozen=True)
class StreamSettings:
    """A call's validated settings."""

    voice: Voice
    params: Hashable
    audio: AudioSettings
    word_timestamps: bool = False
    by_text: bool = False
    """The voice was picked by the script of the text's start: the config named neither voice
    nor language."""


@dataclass
class SessionLimits:
    max_buffered_chars: int = 5000
    """Text accepted but not yet synthesized; more is RESOURCE_EXHAUSTED."""
    max_queued_seconds: float = 2.0
    """Synthesized audio waiting to be sent; synthesis pauses beyond it (backpressure)."""


@dataclass
class _Segment:
    generation: int
    text: str


_Work = _Segment | Flush | End


@dataclass
class _Stats:
    first_text_at: float | None = None
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
        behind: Callable[[], bool] = lambda: False,
        policy: SessionPolicy | None = None,
    ) -> None:
        self.settings = settings
        self.policy = policy or SessionPolicy()
        self._load = load
        """How busy the workers were lately (Scheduler.load; a Kokoro voice beside Piper
        streams reads none: opening.first_window_load)."""
        self._behind = behind
        """Whether another stream's job is due and waits for a worker now (opening.behind):
        how busy they are this moment, which the load over seconds shows only later."""
        self.closers: list[Callable[[], None]] = []
        """Called once the call is over."""
        self._step: asyncio.Future[Any] | None = None
        self._pacer = Pacer(runner, settings.voice.info.native_rate, self.policy.pacing)
        self._limits = limits or SessionLimits()
        self._segmenter = segmenter or Segmenter(
            first_clause_chars=settings.voice.first_clause_chars
        )
        self._generation = 0
        self._work: deque[_Work] = deque()
        self._queued_chars = 0
        rate = settings.voice.info.native_rate
        self._out = Outbox(int(self._limits.max_queued_seconds * rate))
        self._work_added = asyncio.Event()
        self._ended = False
        self._waiting_for_text = False
        self._error: BaseException | None = None
        self._stats = _Stats()
        self._producer: asyncio.Future[None] | None = None
        self._output: Output | None = None
        self._last_input = time.monotonic()
        self._idle_since = self._last_input
        """When the producer last ran out of work."""
        self._quiet_check: asyncio.TimerHandle | None = None
        self._whole: str | None = None
        """The text of a whole-text call (speak_whole), which must come out as some audio."""

    # -- input side --------------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def finished(self) -> bool:
        """Synthesis is over for good: the producer has returned or was cancelled."""
        return self._producer is not None and self._producer.done()

    @property
    def paused(self) -> bool:
        """Synthesis waits for the client to read: max_queued_seconds of audio are unsent."""
        return self._out.paused

    @property
    def working(self) -> bool:
        """The server is producing for the call: it has text to speak and is not waiting for
        the client to read (its queue of unsent audio is not full)."""
        return not self._waiting_for_text and not self.paused and not self.finished

    @property
    def unread(self) -> bool:
        """Output waits for the client to read it: audio is queued, or synthesis is paused or
        over (and what remains is in the transport's hands) rather than waiting for text."""
        return not self._waiting_for_text or self._out.queued_samples > 0

    @property
    def spoken_seconds(self) -> float:
        """Audio sent to the client so far."""
        out = self._output
        return 0.0 if out is None else out.samples_sent / out.settings.sample_rate_hz

    @property
    def first_audio_ms(self) -> float | None:
        """Milliseconds from the call's first text to its first audio event (the Summary's
        time_to_first_audio_ms); None until both. Read too when a call is cut before its
        Summary: a barge-in's cancel is the common end of a voice agent's stream."""
        out, first_text = self._output, self._stats.first_text_at
        if out is None or out.first_audio_at is None or first_text is None:
            return None
        return 1000.0 * (out.first_audio_at - first_text)

    @property
    def queued_seconds(self) -> float:
        """Audio synthesized and not yet sent."""
        return self._out.queued_samples / self.settings.voice.info.native_rate

    def quiet_for(self) -> float:
        """Seconds the stream has had nothing to speak: no segment to synthesize, no audio
        unsent, no input (text may wait in the segmenter for the rest of its sentence); 0
        while it has."""
        if self._ended or not self._waiting_for_text or self._work or self._out.queued_samples:
            return 0.0
        return time.monotonic() - max(self._last_input, self._idle_since)

    def push_text(self, text: str) -> int:
        """Append a piece of text; complete segments go to synthesis at once. Returns how many
        it completed."""
        if self._ended:
            return 0
        self._last_input = time.monotonic()
        held = self._segmenter.buffered_chars + self._queued_chars + len(text)
        if held > self._limits.max_buffered_chars:
            raise Overloaded(
                f"the stream holds {held} characters not yet spoken, over the limit of "
                f"{self._limits.max_buffered_chars}: send text no faster than it can be spoken, "
                "or flush and wait for flush_done"
            )
        segments = self._segmenter.push(text)
        for segment in segments:
            self._add_segment(segment)
        return len(segments)

    def flush(self, flush_id: int) -> None:
        """Speak everything buffered now; FlushDone(flush_id) follows its audio."""
        if self._ended:
            return
        self._last_input = time.monotonic()
        for segment in self._segmenter.flush():
            self._add_segment(segment)
        self._add_work(Flush(flush_id))

    def clear(self, clear_id: int) -> None:
        """Barge-in: drop buffered text and unsent audio, stop the segment in flight."""
        if self._ended:
            return
        self._last_input = time.monotonic()
        self._generation += 1
        self._segmenter.clear()
        if self._step is not None:
            self._step.cancel()  # a job still queued never runs; one running is ignored
        # Pending flushes are acknowledged (their text is dropped) before the clear.
        acks = [item for item in self._work if isinstance(item, Flush)]
        self._work = deque(item for item in self._work if not isinstance(item, (_Segment, Flush)))
        self._queued_chars = 0
        self._out.clear([*acks, Clear(clear_id)])

    def speak_whole(self, text: str) -> None:
        """A whole text's call (Synthesize, HTTP): `text`, then end(). If the voice says
        nothing of it (a sign it does not read, alone), the call fails with INVALID_ARGUMENT
        instead of ending with no audio."""
        self._whole = text
        self.push_text(text)
        self.end()

    def end(self) -> None:
        """No more input: speak what is buffered, then finish with a summary. Idempotent."""
        if self._ended:
            return
        for segment in self._segmenter.flush():
            self._add_segment(segment)
        self._add_work(End())
        self._ended = True

    def end_when_quiet(self, quiet: float) -> None:
        """end() once the stream has nothing left to speak and no input came for `quiet`
        seconds (the server drains: a stream between two replies ends, one mid-reply goes on
        until its client half-closes)."""
        if self._ended:
            return
        if self._quiet_check is not None:
            self._quiet_check.cancel()
        waited = time.monotonic() - self._last_input
        if waited >= quiet and not self._work and self._waiting_for_text:
            self.end()
            return
        again = max(quiet - waited, self.policy.quiet_recheck)
        loop = asyncio.get_running_loop()
        self._quiet_check = loop.call_later(again, self.end_when_quiet, quiet)

    def fail(self, error: BaseException) -> None:
        """End the call with `error` as soon as possible (raised from events())."""
        if self._error is None:
            self._error = error
        self._ended = True
        self._out.wake()

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
        self,
        fn: Work[T] | None,
        generation: int,
        batch: Batch[T] | None = None,
        cost: float = 0.0,
    ) -> T | None:
        """Run `fn` (or `batch`, expected to take `cost` seconds) by the listener's clock. None
        if a clear dropped it (or made its result stale)."""
        step = asyncio.ensure_future(self._pacer.run(fn, batch, cost))
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

    async def _next_work(self) -> _Work:
        while not self._work:
            self._work_added.clear()
            self._waiting_for_text = True
            self._idle_since = time.monotonic()
            try:
                await self._work_added.wait()
            finally:
                self._waiting_for_text = False
        return self._work.popleft()

    async def _put(self, item: Pcm | Words, generation: int) -> bool:
        """Queue audio or words for sending (waiting while too much audio is unsent); False if a
        clear made them stale meanwhile."""
        return await self._out.put(item, lambda: generation != self._generation)

    async def _produce(self) -> None:
        settings = self.settings
        while True:
            item = await self._next_work()
            if isinstance(item, (Flush, End)):
                await self._out.put(item)
                if isinstance(item, End):
                    return
                continue
            self._queued_chars -= len(item.text)
            text = markup.spoken(item.text).strip()
            if item.generation != self._generation or not text:
                continue
            index = self._stats.segments
            self._stats.segments += 1
            busy = not self._pacer.ahead() and (
                self._behind() or self._load() > self.policy.long_first_window_load
            )
            segment = settings.voice.segment(
                text, settings.params, word_timestamps=settings.word_timestamps, long_first=busy
            )
            await self._speak(segment, item.generation, index, text)

    async def _speak(self, segment: Segment, gen: int, index: int, text: str) -> None:
        """A segment window by window, its words (when asked for) before the audio they time:
        those known when a window is made go out ahead of it (engine.Segment.words), so a
        segment's first audio waits for no words of its later pieces. The first job runs the
        model's first part with the first window: a segment's first audio does not wait for
        a second turn at the scheduler. A step may bring no samples (a long segment's
        acoustic part in bounded pieces)."""
        sent = 0  # words already sent
        while gen == self._generation:
            samples = await self._window(segment, gen)
            if gen != self._generation:
                return
            if self.settings.word_timestamps and (samples is None or samples.size):
                words = segment.words
                if len(words) > sent:
                    new, sent = list(words[sent:]), len(words)
                    if not await self._put(Words(gen, index, text, new), gen):
                        return
            if samples is None:
                return
            if samples.size:
                self._pacer.heard(samples.size)
                if not await self._put(Pcm(gen, index, samples), gen):
                    return

    async def _window(self, segment: Segment, gen: int) -> np.ndarray | None:
        """The segment's next window: taken at once when it needs no model run, else as a job
        (one the scheduler may batch with other streams' when the segment offers it)."""
        ahead = self._pacer.ahead()
        if segment.instant:
            return segment.next_window(ahead)
        cost = segment.next_cost(ahead)
        batch = segment.batch(ahead)
        if batch is not None:
            return await self._job(None, gen, batch, cost)
        return await self._job(lambda wide: segment.next_window(ahead, wide=wide), gen, cost=cost)

    # -- sending (the consumer) ---------------------------------------------------------------

    async def events(self) -> AsyncGenerator[Event, None]:
        """Everything to send, in order; raises the error given to fail()."""
        voice = self.settings.voice
        out = self._output = Output(
            self.settings.audio,
            voice=voice.info.name,
            native_rate=voice.info.native_rate,
            gain=voice.gain,
        )
        producer: asyncio.Future[None] | None = None
        said = False  # any audio from the voice (the encoder may hold a short one until the end)
        # The format's yield is inside: a call that ends while it is being sent (the client
        # gone, the first text refused) must still run the closers below.
        try:
            yield out.format()
            producer = self._producer = asyncio.ensure_future(self._produce())
            while True:
                item = await self._out.take(producer, lambda: self._error is not None)
                if item is None:
                    assert self._error is not None
                    raise self._error
                events: list[Event]
                if isinstance(item, Pcm):
                    said = said or bool(item.samples.size)
                    events = out.pcm(item.samples, item.segment)
                elif isinstance(item, Words):
                    events = [out.words(item.segment, item.text, item.words)]
                elif isinstance(item, Flush):
                    events = out.flush(item.id)
                elif isinstance(item, Clear):
                    events = out.clear(item.id)
                else:
                    if self._whole is not None and not said:
                        raise InvalidRequest(
                            f"voice '{voice.info.name}' says nothing for the text "
                            f"{_quoted(self._whole)}: write it in words"
                        )
                    events = out.finish()
                for event in events:
                    yield event
                if isinstance(item, End):
                    yield self._summary(out)
                    return
        finally:
            if producer is not None:
                producer.cancel()
            if self._quiet_check is not None:
                self._quiet_check.cancel()
            for close in self.closers:
                close()

    def _summary(self, out: Output) -> SummaryEvent:
        audio_ms = 1000.0 * out.samples_sent / out.settings.sample_rate_hz
        rtf = self._pacer.busy_seconds * 1000.0 / audio_ms if audio_ms else 0.0
        return SummaryEvent(audio_ms, self._stats.segments, self.first_audio_ms or 0.0, rtf)


def _quoted(text: str, most: int = 40) -> str:
    """`text` in quotes for a message, cut to `most` characters."""
    text = " ".join(text.split())
    return f"'{text}'" if len(text) <= most else f"'{text[: most - 3]}...'"
