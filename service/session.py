"""One synthesis call: text in, events out, with flush, clear (barge-in) and backpressure."""

from __future__ import annotations

import asyncio
import functools
import time
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

import numpy as np

from .audio import AudioPipeline, AudioSettings, EncodedChunk
from .cache import CachedPhrase, PhraseCache
from .errors import Overloaded
from .scheduler import Batch, JobDropped
from .segmenter import Segmenter
from .voice import SegmentSynthesis, SynthesisParams, VocoderSchedule, Voice
from .words import WordTiming

T = TypeVar("T")


class Runner(Protocol):
    """Runs blocking work (onnxruntime, espeak) off the event loop and returns its result.
    `deadline` (time.monotonic()) is when the result is needed; None means now."""

    def __call__(self, fn: Callable[[], T], /, deadline: float | None = None) -> Awaitable[T]: ...


DEADLINE_LEAD = 0.3
"""Seconds before a listener would run out of audio that its next job is due: room for a
wait behind the jobs running (a 128-frame window takes about 75 ms on one thread) and the job
itself. At 150 ms, with 128-frame windows, 14 of 104 calls stalled at 24 callers; at 300 ms,
none (bench/capacity.py)."""


LONG_FIRST_WINDOW_LOAD = 0.5
"""Over this load (the share of the scheduler's workers busy in the last seconds), a reply
that starts from silence gets a first window twice the voice's: its first audio waits behind
other streams' jobs anyway, and the next window, which waits too, gets twice the time to
come. At 20 callers, with 8 frames (93 ms of audio) 3 of 645 calls stalled early in their
reply; with 16, none of 641 (bench/capacity.py, three 60 s levels each)."""


@dataclass(frozen=True)
class WindowJob:
    """A vocoder window that the scheduler may batch with other streams' (Scheduler.submit).
    Run alone, it goes through the vocoder's stages, which keep their outputs between
    windows; batched, the whole vocoder runs on each window with its context."""

    run: Callable[[], np.ndarray]
    batch: Batch[np.ndarray]

    def __call__(self) -> np.ndarray:
        return self.run()


@dataclass(frozen=True)
class StreamSettings:
    """A call's validated settings."""

    voice: Voice
    params: SynthesisParams
    audio: AudioSettings
    word_timestamps: bool = False


# -- events: what a session produces, in order; the API layer turns them into responses ----------


@dataclass(frozen=True)
class FormatEvent:
    settings: AudioSettings
    voice: str
    native_rate: int
    pre_skip: int


@dataclass(frozen=True)
class AudioEvent:
    data: bytes
    sequence: int
    start_ms: float
    duration_ms: float
    segment: int


@dataclass(frozen=True)
class TimestampsEvent:
    segment: int
    text: str
    words: list[WordTiming]
    """Times relative to the start of the output stream."""


@dataclass(frozen=True)
class FlushDoneEvent:
    id: int


@dataclass(frozen=True)
class ClearDoneEvent:
    id: int
    last_sequence: int


@dataclass(frozen=True)
class SummaryEvent:
    audio_ms: float
    segments: int
    time_to_first_audio_ms: float
    real_time_factor: float


Event = FormatEvent | AudioEvent | TimestampsEvent | FlushDoneEvent | ClearDoneEvent | SummaryEvent


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
class SessionLimits:
    max_buffered_chars: int = 5000
    """Text accepted but not yet synthesized; more is RESOURCE_EXHAUSTED."""
    max_queued_seconds: float = 2.0
    """Synthesized audio waiting to be sent; synthesis pauses beyond it (backpressure)."""


@dataclass
class _Stats:
    first_text_at: float | None = None
    first_audio_at: float | None = None
    busy_seconds: float = 0.0
    segments: int = 0
    audio_samples: int = 0


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
        run: Runner,
        *,
        limits: SessionLimits | None = None,
        schedule: VocoderSchedule | None = None,
        segmenter: Segmenter | None = None,
        cache: PhraseCache | None = None,
        load: Callable[[], float] = lambda: 0.0,
    ) -> None:
        self.settings = settings
        self._run = run
        self._load = load
        """The scheduler's load (Scheduler.load): how busy its workers were lately."""
        self._cache = cache
        self.closers: list[Callable[[], None]] = []
        """Called once the call is over (the runner's thread, for instance)."""
        self._step: asyncio.Future[Any] | None = None
        # When the listener will have heard all audio produced so far (time.monotonic()): the
        # deadline of the next model job. Nothing produced yet: due now.
        self._heard_by = 0.0
        self._limits = limits or SessionLimits()
        self._schedule = schedule or settings.voice.schedule
        self._segmenter = segmenter or Segmenter()
        self._pipeline = AudioPipeline(
            settings.audio, native_rate=settings.voice.info.native_rate, gain=settings.voice.gain
        )
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

    async def _job(self, fn: Callable[[], T], generation: int) -> T | None:
        """Run `fn` on the scheduler, due when the listener runs out of audio. None if a clear
        dropped it (or made its result stale)."""
        stats = self._stats

        def timed() -> T:
            start = time.perf_counter()
            try:
                return fn()
            finally:
                stats.busy_seconds += time.perf_counter() - start

        # Keep a batchable window batchable (a batch's time is not counted in this stream's RTF).
        timed.batch = getattr(fn, "batch", None)  # type: ignore[attr-defined]

        # Due a little before the listener runs dry, so that the job is done by then, and so
        # that a stream about to stall goes before a new stream's first audio. A listener with
        # no audio in hand waits already: due now (None).
        heard = self._heard_by > time.monotonic()
        deadline = self._heard_by - DEADLINE_LEAD if heard else None
        step = asyncio.ensure_future(self._run(timed, deadline))
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
            await self._work_added.wait()
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
            gen = item.generation
            index = self._stats.segments
            self._stats.segments += 1
            text = item.text.strip()
            key = None
            if self._cache is not None:
                key = self._cache.key(settings.voice.info.name, text, settings.params)
                cached = self._cache.get(key, need_words=settings.word_timestamps)
                if cached is not None:
                    await self._replay(cached, gen, index, text)
                    continue
            schedule = self._schedule
            if self._heard_by <= time.monotonic() and self._load() > LONG_FIRST_WINDOW_LOAD:
                first = min(schedule.largest, 2 * schedule.first)
                schedule = replace(schedule, first=first)
            synth: SegmentSynthesis = settings.voice.segment(
                text, settings.params, schedule, word_timestamps=settings.word_timestamps
            )
            # The first job runs the acoustic model and the first window together: the first
            # audio of a segment never waits for a second turn at the scheduler.
            produced: list[np.ndarray] = []
            while gen == self._generation:
                samples = await self._job(self._window_job(synth), gen)
                if gen != self._generation:
                    break
                stamps = _Words(gen, index, text, synth.words)
                if not produced and synth.words and not await self._put(stamps, gen):
                    break
                if samples is None:
                    if self._cache is not None and key is not None:
                        words = tuple(synth.words) if settings.word_timestamps else None
                        whole = np.concatenate(produced) if produced else np.zeros(0, np.float32)
                        self._cache.put(key, CachedPhrase(whole, words))
                    break
                produced.append(samples)
                self._heard(samples.size)
                if not await self._put(_Pcm(gen, index, samples), gen):
                    break

    def _window_job(self, synth: SegmentSynthesis) -> Callable[[], np.ndarray | None]:
        """The next window as a job: one the scheduler may batch with other streams' windows
        when only the vocoder is left to run, else a plain one (acoustic part, flow)."""
        voice = self.settings.voice
        # Frames of audio the listener has in hand: time the next window may take.
        ahead = int(
            max(0.0, self._heard_by - time.monotonic()) * voice.info.native_rate / voice.hop
        )
        window = synth.ready_window(ahead)
        if window is None:
            return functools.partial(synth.next_window, ahead)
        return WindowJob(
            window.staged,
            Batch((voice.info.name, window.shape_key), window, voice.vocode_windows),
        )

    async def _replay(self, cached: CachedPhrase, gen: int, index: int, text: str) -> None:
        """A cached phrase goes out like a synthesized one: words first, then audio in the
        vocoder's window sizes, through the same queue and pipeline (no model runs). Its
        words go out only when this call asked for them (and there are some), as in _produce."""
        words = cached.words if self.settings.word_timestamps else None
        if words and not await self._put(_Words(gen, index, text, list(words)), gen):
            return
        hop = self.settings.voice.hop
        for start, end in self._schedule.windows(cached.samples.size // hop):
            samples = cached.samples[start * hop : end * hop]
            self._heard(samples.size)
            if not await self._put(_Pcm(gen, index, samples), gen):
                return

    # -- sending (the consumer) ---------------------------------------------------------------

    async def events(self) -> AsyncGenerator[Event, None]:
        """Everything to send, in order; raises the error given to fail()."""
        pipeline = self._pipeline
        audio = self.settings.audio
        rate = audio.sample_rate_hz
        yield FormatEvent(
            audio,
            self.settings.voice.info.name,
            self.settings.voice.info.native_rate,
            pipeline.pre_skip,
        )
        producer = self._producer = asyncio.ensure_future(self._produce())
        sequence = 0
        # Where the next audio pushed into the pipeline will start in the output stream: the
        # output at the last point where the pipeline was empty (start, flush, clear), plus what
        # was pushed since.
        emitted_samples = 0
        base_ms = 0.0
        pushed_native = 0
        current_segment = 0

        def chunks_to_events(chunks: list[EncodedChunk]) -> list[AudioEvent]:
            nonlocal sequence, emitted_samples
            result = []
            for chunk in chunks:
                result.append(
                    AudioEvent(
                        chunk.data,
                        sequence,
                        1000.0 * chunk.start_sample / rate,
                        1000.0 * chunk.num_samples / rate,
                        current_segment,
                    )
                )
                sequence += 1
                emitted_samples = chunk.start_sample + chunk.num_samples
            return result

        try:
            while True:
                while not self._out and self._error is None:
                    if producer.done():
                        producer.result()  # re-raise a synthesis failure
                    self._out_added.clear()
                    waiter = asyncio.ensure_future(self._out_added.wait())
                    try:
                        await asyncio.wait([waiter, producer], return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        waiter.cancel()
                if self._error is not None:
                    raise self._error
                item = self._out.popleft()
                out_events: list[Event] = []
                if isinstance(item, _Pcm):
                    self._queued_samples -= item.samples.size
                    self._out_taken.set()
                    current_segment = item.segment
                    pushed_native += item.samples.size
                    out_events += chunks_to_events(pipeline.push(item.samples))
                elif isinstance(item, _Words):
                    native = self.settings.voice.info.native_rate
                    offset = base_ms + 1000.0 * pushed_native / native
                    words = [
                        WordTiming(w.word, w.start_ms + offset, w.end_ms + offset)
                        for w in item.words
                    ]
                    out_events.append(TimestampsEvent(item.segment, item.text, words))
                elif isinstance(item, _Flush):
                    out_events += chunks_to_events(pipeline.flush())
                    pushed_native, base_ms = 0, 1000.0 * emitted_samples / rate
                    out_events.append(FlushDoneEvent(item.id))
                elif isinstance(item, _Clear):
                    pipeline.discard()
                    pushed_native, base_ms = 0, 1000.0 * emitted_samples / rate
                    out_events.append(ClearDoneEvent(item.id, sequence - 1))
                else:
                    out_events += chunks_to_events(pipeline.finish())
                for event in out_events:
                    if isinstance(event, AudioEvent):
                        self._stats.audio_samples += round(event.duration_ms * rate / 1000.0)
                        if self._stats.first_audio_at is None:
                            self._stats.first_audio_at = time.perf_counter()
                    yield event
                if isinstance(item, _End):
                    yield self._summary(rate)
                    return
        finally:
            producer.cancel()
            for close in self.closers:
                close()

    def _summary(self, rate: int) -> SummaryEvent:
        s = self._stats
        audio_ms = 1000.0 * s.audio_samples / rate
        ttfa = 0.0
        if s.first_audio_at is not None and s.first_text_at is not None:
            ttfa = 1000.0 * (s.first_audio_at - s.first_text_at)
        rtf = s.busy_seconds * 1000.0 / audio_ms if audio_ms else 0.0
        return SummaryEvent(audio_ms, s.segments, ttfa, rtf)
