"""Kokoro's model parts as onnxruntime sessions, shared by every Kokoro voice of a server:
encoding a run of tokens, then decoding its frames whole or window by window."""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import onnxruntime as ort

from ..errors import ModelError
from ..runtime import OrtSettings
from .graph import ASR, DURATIONS, ENERGY, F0, PHASE, SplitCache, model_files

SAMPLE_RATE = 24000
HOP = 600
"""Samples per encoder frame (25 ms)."""


# The encoder gives the leading pad 17 to 19 frames (about 450 ms of silence) whatever the text.
# A run that continues a segment keeps only this many of them: else each cut in a long segment
# is a gap of the last run's final pause plus 450 ms. The decoder still gets them all: cutting
# them in the durations loses the first syllable (Whisper base: "今天天气" heard as "言天气").
LEAD_KEPT = 2
# Weight of the newest decoder run in KokoroModel.seconds_per_frame: the last few runs, so
# that the average follows the machine's load as streams come and go.
PACE_WEIGHT = 0.3


@dataclass(frozen=True)
class Encoded:
    """One run after the encoder (and the sine source), ready to decode in any windows."""

    asr: np.ndarray
    f0: np.ndarray
    energy: np.ndarray
    phase: np.ndarray
    style: np.ndarray
    durations: np.ndarray
    """Frames of each token, the two pads included."""

    @property
    def frames(self) -> int:
        return int(self.asr.shape[-1])

    @property
    def lead(self) -> int:
        """Frames of the leading pad (silence before the first token)."""
        return int(self.durations[0])


class KokoroModel:
    """The encoder, source and decoder sessions (narrow: one worker's threads; the decoder
    also wide, for a run that has the machine to itself). Thread-safe: onnxruntime sessions
    may run concurrently."""

    def __init__(self, cache: SplitCache, settings: OrtSettings, long_slots: int = 1) -> None:
        """`long_slots`: decoder runs the scheduler runs at once (scheduler.long_slots)."""
        graph = cache.load()

        def session(part: bytes, threads: int) -> ort.InferenceSession:
            made = ort.InferenceSession(
                part, settings.session_options(threads), providers=["CPUExecutionProvider"]
            )
            # The serialized model kept for a provider fallback CPU sessions never make
            # (service/voice.py says the same for Piper): 64 MB for the decoder.
            made._model_bytes = None
            return made

        try:
            self._encoder = session(graph.encoder, settings.intra_op_threads)
            self._source = session(graph.source, settings.intra_op_threads)
            self._decoder = session(graph.decoder, settings.intra_op_threads)
            self._wide = (
                session(graph.decoder, settings.wide_threads) if settings.wide else self._decoder
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ModelError(model_files()[0], f"onnxruntime cannot load it ({exc})") from exc
        self.decoder_runs = 0
        """Decoder runs so far (counted without a lock: tests read it with no run going)."""
        self._pace: dict[bool, float] = {}
        self._pace_lock = threading.Lock()
        self.long_slots = long_slots
        self._running: dict[int, tuple[float, int, bool]] = {}
        """Decoder runs in progress: (started, frames, wide) by a key of their own."""
        self._keys = itertools.count()

    def busy_for(self) -> float:
        """Seconds a decoder run queued now likely waits for one of the scheduler's long_slots:
        0 while fewer runs are in progress, else until the one that ends first is done, by the
        recent pace."""
        now = time.perf_counter()
        with self._pace_lock:
            left = [
                frames * (self._pace.get(wide) or 0.0) - (now - started)
                for started, frames, wide in self._running.values()
            ]
        return max(0.0, min(left)) if len(left) >= self.long_slots else 0.0

    def seconds_per_frame(self, *, wide: bool = False) -> float | None:
        """Wall seconds a recent decoder run took per frame, wide runs apart (a moving average
        over every voice's runs, with whatever else the machine was doing): what the next run
        will likely take. None before the first run of the kind."""
        return self._pace.get(wide)

    def timed(self, frames: int, seconds: float, *, wide: bool = False) -> None:
        """Count a decoder run of `frames` that took `seconds` into seconds_per_frame."""
        pace = seconds / max(frames, 1)
        with self._pace_lock:
            last = self._pace.get(wide)
            self._pace[wide] = pace if last is None else last + PACE_WEIGHT * (pace - last)

    def encode(self, ids: tuple[int, ...], style: np.ndarray, speed: float) -> Encoded:
        """Durations, features and pitch of one run (`ids` without the pads); `style`: [1, 256]."""
        asr, f0, energy, durations = self._encoder.run(
            [ASR, F0, ENERGY, DURATIONS],
            {
                "tokens": np.asarray([[0, *ids, 0]], dtype=np.int64),
                "style": style,
                "speed": np.asarray([speed], dtype=np.float32),
            },
        )
        durations = np.asarray(durations, dtype=np.float32)
        return Encoded(asr, f0, energy, self.source(f0), style, durations.reshape(-1))

    def source(self, f0: np.ndarray) -> np.ndarray:
        """The sine source's running phase of a pitch curve (PHASE): cheap, pointwise but for
        its cumulative sum."""
        (phase,) = self._source.run([PHASE], {F0: f0})
        return np.asarray(phase, dtype=np.float32)

    def decode(
        self, enc: Encoded, lo: int = 0, hi: int | None = None, *, wide: bool = False
    ) -> np.ndarray:
        """Audio of frames [lo, hi) decoded alone (the whole run by default): exact for the whole
        run; a window is not (the decoder's instance norms average over the frames it sees)."""
        hi = enc.frames if hi is None else hi
        session = self._wide if wide else self._decoder
        self.decoder_runs += 1
        started = time.perf_counter()
        key = next(self._keys)
        with self._pace_lock:
            self._running[key] = (started, hi - lo, wide)
        try:
            (audio,) = session.run(
                ["audio"],
                {
                    ASR: enc.asr[..., lo:hi],
                    F0: enc.f0[..., 2 * lo : 2 * hi],
                    ENERGY: enc.energy[..., 2 * lo : 2 * hi],
                    PHASE: enc.phase[:, 2 * lo : 2 * hi],
                    "style": enc.style,
                },
            )
        finally:
            with self._pace_lock:
                del self._running[key]
        spent = time.perf_counter() - started
        self.timed(hi - lo, spent, wide=wide and self._wide is not self._decoder)
        return np.asarray(audio, dtype=np.float32).reshape(-1)


@dataclass(frozen=True)
class ChunkSchedule:
    """Windows of a run decoded one at a time (frames of 25 ms). Not exact: each window's
    instance norms average over its own frames and context, not the whole run's
    (bench/kokoro_chunks.py measures what that costs)."""

    first: int = 12
    """The first window: small, so that its audio exists soon."""
    growth: float = 2.0
    """Each later window is this many times the previous one..."""
    largest: int = 96
    """...up to this size (a window of 96 frames plus context takes about 1.5 s on one thread)."""
    context: int = 16
    """Frames decoded on each side of a window and thrown away."""
    overlap: int = 4
    """Frames of the right context kept and crossfaded into the next window's start."""
    rest_whole: bool = False
    """After the first window, the rest of the run in one window: a single join."""

    def __post_init__(self) -> None:
        if not (1 <= self.first <= self.largest and self.growth >= 1):
            raise ValueError(f"invalid chunk schedule {self}")
        if not 0 <= self.overlap <= self.context:
            raise ValueError(f"overlap must be 0 to context frames: {self}")

    def next_size(self, previous: int, ahead_frames: int = 0) -> int:
        """The next window after one of `previous` frames (0: none yet), as large as the audio
        the listener has in hand allows."""
        if previous == 0:
            return max(self.first, min(self.largest, ahead_frames))
        if self.rest_whole:
            return _WHOLE
        grown = max(previous + 1, int(previous * self.growth))
        return min(self.largest, max(grown, ahead_frames))


# The first window of a run the listener cannot wait for: 8 frames (200 ms, inside the model's
# leading pause) with 8 frames of context, about 200 ms of one thread. The rest of the run then
# goes in one window whose context reaches back to frame 0, so it sees what a whole decode sees:
# SNR 69 dB against one (bench/kokoro_chunks.py; 12 frames with 8 of context: 23 dB, 250 ms).
FIRST_WINDOW = ChunkSchedule(first=8, context=8, overlap=4, rest_whole=True)

# A schedule for the full chunked option (KokoroFamily(chunks=CHUNKS)): windows of 12 frames
# doubling to 96, 8 frames of context, joins faded over 4; every window's work is bounded (96
# frames: about a second of one thread) but the audio is not a whole decode's (SNR 8 to 9 dB,
# CER within Whisper base's noise, no seam: bench/kokoro_chunks.py).
CHUNKS = ChunkSchedule(first=12, growth=2.0, largest=96, context=8, overlap=4)

# Frames "to the end of the run": more than any run has (510 tokens of at most ~50 frames).
_WHOLE = 1 << 20


class Decoder(Protocol):
    """What decodes a window of frames (KokoroModel; bench/kokoro_chunks.py's variants)."""

    def decode(
        self, enc: Encoded, lo: int = 0, hi: int | None = None, *, wide: bool = False
    ) -> np.ndarray: ...


class ChunkedRun:
    """One encoded run decoded window by window, each joined to the last by a crossfade."""

    def __init__(
        self, model: Decoder, enc: Encoded, schedule: ChunkSchedule, start: int = 0
    ) -> None:
        """`start`: the first frame to emit (those before it are only context)."""
        self._model, self._enc, self._schedule = model, enc, schedule
        self._position = start
        self._size = 0
        self._tail = np.zeros(0, dtype=np.float32)
        """The last window's decoded samples past its end, to fade out under the next one."""

    @property
    def done(self) -> bool:
        return self._position >= self._enc.frames

    def _span(self, size: int) -> tuple[int, int, int]:
        """(end, lo, hi) of the next window of `size` frames: where it ends, and the frames it
        decodes with its context."""
        enc, schedule, start = self._enc, self._schedule, self._position
        end = min(enc.frames, start + size)
        if enc.frames - end < schedule.first:  # no sliver of a window at the end
            end = enc.frames
        return end, max(0, start - schedule.context), min(enc.frames, end + schedule.context)

    def next_frames(self, ahead_frames: int = 0) -> int:
        """Frames the next window will decode, its context included (the scheduler's guess of
        its cost)."""
        _, lo, hi = self._span(self._schedule.next_size(self._size, ahead_frames))
        return hi - lo

    def next_window(self, ahead_frames: int = 0, *, wide: bool = False) -> np.ndarray:
        enc, schedule = self._enc, self._schedule
        start = self._position
        self._size = schedule.next_size(self._size, ahead_frames)
        end, lo, hi = self._span(self._size)
        audio = self._model.decode(enc, lo, hi, wide=wide)
        keep_to = min(hi, end + schedule.overlap)
        out = audio[(start - lo) * HOP : (end - lo) * HOP].copy()
        if self._tail.size:
            n = min(self._tail.size, out.size)
            fade = np.linspace(0.0, 1.0, n + 2, dtype=np.float32)[1:-1]
            out[:n] = self._tail[:n] * (1 - fade) + out[:n] * fade
        self._tail = audio[(end - lo) * HOP : (keep_to - lo) * HOP].copy()
        self._position = end
        return out
