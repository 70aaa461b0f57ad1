"""A call's output side: audio encoded and numbered, word times on the output stream's clock."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ..audio.encoders import EncodedChunk
from ..audio.pipeline import AudioPipeline
from ..audio.settings import AudioSettings
from ..engines.engine import WordTiming
from .events import AudioEvent, ClearDoneEvent, Event, FlushDoneEvent, FormatEvent, TimestampsEvent


class Output:
    """Turns what a session produced into events, in the order it is given. Runs on the event
    loop; every method is quick (the Opus encoder's few milliseconds a second of audio)."""

    def __init__(self, settings: AudioSettings, *, voice: str, native_rate: int, gain: float):
        self.settings = settings
        self._voice = voice
        self._native = native_rate
        self._rate = settings.sample_rate_hz
        self._pipeline = AudioPipeline(settings, native_rate=native_rate, gain=gain)
        self._sequence = 0
        # Where the next audio pushed into the pipeline will start in the output stream: the
        # output at the last point where the pipeline was empty (start, flush, clear), plus
        # what was pushed since.
        self._emitted = 0
        self._base_ms = 0.0
        self._pushed_native = 0
        self._segment = 0
        self._timed_segment: int | None = None
        self._timed_from_ms = 0.0
        """Where the segment whose words came last starts in the output stream: its words
        may come in several events, the later ones after some of its audio."""
        self.samples_sent = 0
        """Output samples in the audio events so far."""
        self.first_audio_at: float | None = None
        """When the first audio event with samples was made (time.perf_counter())."""

    def format(self) -> FormatEvent:
        return FormatEvent(self.settings, self._voice, self._native, self._pipeline.pre_skip)

    def _audio(self, chunks: list[EncodedChunk]) -> list[Event]:
        events: list[Event] = []
        for chunk in chunks:
            start_ms = 1000.0 * chunk.start_sample / self._rate
            duration_ms = 1000.0 * chunk.num_samples / self._rate
            events.append(
                AudioEvent(chunk.data, self._sequence, start_ms, duration_ms, self._segment)
            )
            self._sequence += 1
            self._emitted = chunk.start_sample + chunk.num_samples
            self.samples_sent += chunk.num_samples
        # Audio heard: an Ogg stream's header pages, sent before any, carry none.
        if self.first_audio_at is None and any(chunk.num_samples for chunk in chunks):
            self.first_audio_at = time.perf_counter()
        return events

    def pcm(self, samples: np.ndarray, segment: int) -> list[Event]:
        """A window of synthesized audio (native rate, before gain)."""
        self._start(segment)
        self._segment = segment
        self._pushed_native += samples.size
        return self._audio(self._pipeline.push(samples))

    def words(self, segment: int, text: str, words: Sequence[WordTiming]) -> TimestampsEvent:
        """Word times of a segment (relative to its first sample), sent before the audio they
        time."""
        offset = self._start(segment)
        placed = [WordTiming(w.word, w.start_ms + offset, w.end_ms + offset) for w in words]
        return TimestampsEvent(segment, text, placed)

    def _start(self, segment: int) -> float:
        """Where `segment` starts in the output stream (ms): where the next audio goes when
        the segment is first seen."""
        if segment != self._timed_segment:
            self._timed_segment = segment
            self._timed_from_ms = self._base_ms + 1000.0 * self._pushed_native / self._native
        return self._timed_from_ms

    def _restart(self) -> None:
        self._pushed_native, self._base_ms = 0, 1000.0 * self._emitted / self._rate

    def flush(self, flush_id: int) -> list[Event]:
        """Everything pushed so far goes out, then the acknowledgement."""
        events = self._audio(self._pipeline.flush())
        self._restart()
        return [*events, FlushDoneEvent(flush_id)]

    def clear(self, clear_id: int) -> list[Event]:
        """Audio not yet encoded is dropped; nothing older follows the acknowledgement."""
        self._pipeline.discard()
        self._restart()
        return [ClearDoneEvent(clear_id, self._sequence - 1)]

    def finish(self) -> list[Event]:
        return self._audio(self._pipeline.finish())
