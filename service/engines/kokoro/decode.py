"""Kokoro's model parts as onnxruntime sessions, shared by every Kokoro voice of a server:
encoding a piece of tokens, then decoding its frames whole or window by window."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import onnxruntime as ort

from ...errors import ModelError
from ..runtime import OrtSettings
from .graph import ASR, DURATIONS, ENERGY, F0, PHASE, SplitCache, model_files

SAMPLE_RATE = 24000
HOP = 600
"""Samples per encoder frame (25 ms)."""


# The encoder gives a piece a long leading pad of silence whatever the text. The decoder gets
# only its last LEAD_DECODED: fewer frames to decode before a clause's first word, and no loss
# of it (with none, the first syllable goes: docs/kokoro.md#the-leading-pause).
LEAD_DECODED = 4
# Of a piece's closing pause, the decoder gets what the piece emits and PAUSE_DECODED frames
# more, cut before it like the leading pad: the rest, as long as a short clause's words, was
# decoded only to be thrown away. The fewest with which a short piece's words stay clear
# (docs/kokoro.md#the-closing-pause).
PAUSE_DECODED = 8
# Of those, a piece emits the last LEAD_KEPT, leading into its first word: a reply starts
# with a breath, not a pause, and a cut inside a long segment is no gap.
LEAD_KEPT = 2
# A piece that goes on from a cut between words emits only its last frame of lead: the phrase
# runs on, but with none its first consonant is lost (三家 heard as 丹加, 合成 as 对诚;
# docs/kokoro.md#first-pieces, python -m bench.kokoro_chunks --seeds).
LEAD_AFTER_WORD = 1


@dataclass(frozen=True)
class Pauses:
    """Of a piece's closing pause (its last mark's frames and the end pad: Kokoro ends every
    piece as if the text ended there, 500 ms and more even after a comma), the most frames a piece
    emits after a sentence's end and after a clause's: what Kokoro gives at those marks inside
    a whole text of the language (docs/kokoro.md#how-a-segment-is-spoken, bench.kokoro --pauses)."""

    sentence: int
    clause: int

    word: int = 0
    """After a word with no mark (a long clause cut for its first audio, or at the token
    budget): none, the next piece's breath is the gap between the two words."""


PAUSES = Pauses(sentence=14, clause=6)
"""Japanese (and any language without its own row): Kokoro's whole text pauses about as long
at a 。 as an English voice does at a full stop."""
PAUSES_BY_LANGUAGE = {
    "zh": Pauses(sentence=4, clause=0),
    "fr": Pauses(sentence=8, clause=2),
    "it": Pauses(sentence=2, clause=0),
    "pt": Pauses(sentence=14, clause=2),
}
"""Mandarin: Kokoro's whole text pauses briefly at a 。 and often not at all at a ，. French,
Italian and Portuguese pause less than Japanese (Kokoro often runs an Italian sentence into the
next, and a Portuguese first clause into the rest): the longest that keep every pause within
100 ms of Kokoro's own in its whole text (bench.kokoro --pauses; docs/kokoro.md)."""


def pauses_of(language: str) -> Pauses:
    """The pauses kept for a voice of `language` (BCP-47: zh-CN)."""
    return PAUSES_BY_LANGUAGE.get(language.split("-")[0].lower(), PAUSES)


# The encoder's predicted log energy of a frame under which it is a pause: speech frames
# are above 3, pauses below -4 (the closing pause's frames: Encoded.closing_pause).
SILENT_ENERGY = 0.0


@dataclass(frozen=True)
class Encoded:
    """One piece after the encoder (and the sine source), ready to decode in any windows."""

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

    @property
    def closing_pause(self) -> int:
        """Frames of silence that end the piece (its last mark's pause and the end pad), by the
        encoder's predicted energy."""
        return _closing_pause(self.energy)


def _closing_pause(energy: np.ndarray) -> int:
    """Encoded.closing_pause of the encoder's energy (two values a frame)."""
    per_frame = energy.reshape(-1, 2).mean(axis=1)
    loud = np.flatnonzero(per_frame >= SILENT_ENERGY)
    frames = int(per_frame.size)
    return frames - 1 - int(loud[-1]) if loud.size else frames


class KokoroModel:
    """The encoder, source and decoder sessions (narrow: one worker's threads; the decoder
    also wide, for a run that has the machine to itself). Thread-safe: onnxruntime sessions
    may run concurrently."""

    def __init__(
        self,
        cache: SplitCache,
        settings: OrtSettings,
        *,
        matmul_convs: bool = False,
        fused_ops: Path | None = None,
    ) -> None:
        """`matmul_convs`: the encoder's and decoder's convolutions as 8-bit matrix products
        (convs.py); `fused_ops`: the library of fused.py's operators, for a decoder that uses
        them (with `matmul_convs`)."""
        graph = cache.load(matmul_convs=matmul_convs, fused=fused_ops is not None)

        def session(part: bytes, threads: int) -> ort.InferenceSession:
            options = settings.session_options(threads)
            if fused_ops is not None:
                options.register_custom_ops_library(str(fused_ops))
            made = ort.InferenceSession(part, options, providers=["CPUExecutionProvider"])
            # The serialized model kept for a provider fallback CPU sessions never make
            # (docs/benchmarks.md, "Start-up and memory").
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

    def encode(
        self,
        ids: tuple[int, ...],
        style: np.ndarray,
        speed: float,
        *,
        lead: int = LEAD_DECODED,
        pause: int | None = None,
    ) -> Encoded:
        """Durations, features and pitch of one piece (`ids` without the pads), its leading pad
        cut to `lead` frames (the benchmarks' reference keeps all: a large `lead`) and its
        closing pause to `pause` (None: all of it); `style`: [1, 256]."""
        asr, f0, energy, durations = self._encoder.run(
            [ASR, F0, ENERGY, DURATIONS],
            {
                "tokens": np.asarray([[0, *ids, 0]], dtype=np.int64),
                "style": style,
                "speed": np.asarray([speed], dtype=np.float32),
            },
        )
        durations = np.asarray(durations, dtype=np.float32).reshape(-1)
        cut = max(0, int(durations[0]) - lead)
        if cut:
            asr, f0, energy = asr[..., cut:], f0[..., 2 * cut :], energy[..., 2 * cut :]
            durations = durations.copy()
            durations[0] -= cut
        if pause is not None:
            asr, f0, energy, durations = _without_closing(asr, f0, energy, durations, pause)
        return Encoded(asr, f0, energy, self.source(f0), style, durations)

    def source(self, f0: np.ndarray) -> np.ndarray:
        """The sine source's running phase of a pitch curve (PHASE): cheap, pointwise but for
        its cumulative sum."""
        (phase,) = self._source.run([PHASE], {F0: f0})
        return np.asarray(phase, dtype=np.float32)

    def decode(
        self, enc: Encoded, lo: int = 0, hi: int | None = None, *, wide: bool = False
    ) -> np.ndarray:
        """Audio of frames [lo, hi) decoded alone (the whole piece by default): exact for the
        whole piece. A window is not: the decoder's instance norms average over the frames it
        sees, and a piece's closing pause weighs in them. So a window is decoded with its share
        of that pause appended after it (stats_tail()), and only its own frames' audio
        returned."""
        hi = enc.frames if hi is None else hi
        tail = 0 if (lo, hi) == (0, enc.frames) else stats_tail(enc, hi - lo)
        frames = np.r_[lo:hi, enc.frames - tail : enc.frames]
        halves = np.stack([2 * frames, 2 * frames + 1], axis=1).reshape(-1)
        session = self._wide if wide else self._decoder
        self.decoder_runs += 1
        (audio,) = session.run(
            ["audio"],
            {
                ASR: enc.asr[..., frames],
                F0: enc.f0[..., halves],
                ENERGY: enc.energy[..., halves],
                PHASE: enc.phase[:, halves],
                "style": enc.style,
            },
        )
        return np.asarray(audio, dtype=np.float32).reshape(-1)[: (hi - lo) * HOP]


def _without_closing(
    asr: np.ndarray, f0: np.ndarray, energy: np.ndarray, durations: np.ndarray, keep: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The encoder's outputs with the closing pause (Encoded.closing_pause) cut to `keep`
    frames, the frames taken off the last tokens' durations (the end pad's first)."""
    frames = int(asr.shape[-1])
    cut = min(frames - 1, max(0, _closing_pause(energy) - keep))
    if not cut:
        return asr, f0, energy, durations
    left = frames - cut
    durations = durations.copy()
    for k in range(durations.size - 1, -1, -1):
        taken = min(cut, int(durations[k]))
        durations[k] -= taken
        cut -= taken
        if not cut:
            break
    return asr[..., :left], f0[..., : 2 * left], energy[..., : 2 * left], durations


def stats_tail(enc: Encoded, frames: int) -> int:
    """Frames of a piece's closing pause that a window of `frames` is decoded with: as many, to
    its own frames, as the pause is to the rest of the piece: the norms then average over what a
    whole decode's do, and the window's level and words match it (docs/kokoro.md#streaming)."""
    pause = enc.closing_pause
    rest = enc.frames - pause
    return min(pause, round(pause * frames / rest)) if rest > 0 else 0


@dataclass(frozen=True)
class ChunkSchedule:
    """Windows of a piece decoded one at a time (frames of 25 ms). Not exact: each window's
    instance norms average over its own frames and context, not the whole piece's
    (bench/kokoro_chunks.py measures what that costs)."""

    first: int = 16
    """The first window: small, so that its audio exists soon."""
    largest: int = 96
    """The most a window has: a window is one job, and a job holds a worker until it ends, so
    this bounds how long a Kokoro job keeps a worker from the streams (docs/kokoro.md#streaming)."""
    context: int = 16
    """Frames decoded on each side of a window and thrown away."""
    overlap: int = 4
    """Frames of the right context kept and crossfaded into the next window's start."""

    def __post_init__(self) -> None:
        if not 1 <= self.first <= self.largest:
            raise ValueError(f"invalid chunk schedule {self}")
        if not 0 <= self.overlap <= self.context:
            raise ValueError(f"overlap must be 0 to context frames: {self}")

    def next_size(self, previous: int, decodable: int = 0) -> int:
        """The next window after one of `previous` frames (0: none yet, `first`): as many
        frames as the decoder makes, its context included, in the time the audio in hand
        lasts (`decodable` frames), within `first` and `largest`. Windows are never smaller
        than the last: each one's context is overhead."""
        if previous == 0:
            return self.first
        fits = decodable - 2 * self.context
        return max(previous, min(self.largest, fits))


# A piece that cannot be decoded whole before the listener's audio runs out goes window by
# window: 16 frames (400 ms) first, then as large as the audio in hand lets the decoder make
# (up to 96), each with 16 frames of context a side and its join crossfaded over 4; once the
# audio in hand covers the rest of the piece, the rest is one window. The smallest first window
# and context whose DNSMOS and Whisper CER stay within the quality judge's bounds of a whole
# decode (docs/kokoro.md#streaming, bench.kokoro_chunks).
WINDOWS = ChunkSchedule(first=16, largest=96, context=16, overlap=4)


class Decoder(Protocol):
    """What decodes a window of frames (KokoroModel; bench/kokoro_chunks.py's variants)."""

    def decode(
        self, enc: Encoded, lo: int = 0, hi: int | None = None, *, wide: bool = False
    ) -> np.ndarray: ...


class WindowedDecode:
    """One encoded piece decoded window by window, each joined to the last by a crossfade."""

    def __init__(
        self,
        model: Decoder,
        enc: Encoded,
        schedule: ChunkSchedule,
        start: int = 0,
        stop: int | None = None,
    ) -> None:
        """Frames [`start`, `stop`) are emitted (the others are only context)."""
        self._model, self._enc, self._schedule = model, enc, schedule
        self._position = start
        self._stop = enc.frames if stop is None else stop
        self._size = 0
        self._tail = np.zeros(0, dtype=np.float32)
        """The last window's decoded samples past its end, to fade out under the next one."""

    @property
    def done(self) -> bool:
        return self._position >= self._stop

    def _span(self, size: int) -> tuple[int, int, int]:
        """(end, lo, hi) of the next window of `size` frames: where it ends, and the frames it
        decodes with its context."""
        enc, schedule, start, stop = self._enc, self._schedule, self._position, self._stop
        end = min(stop, start + size)
        if stop - end < schedule.first:  # no sliver of a window at the end
            end = stop
        return end, max(0, start - schedule.context), min(enc.frames, end + schedule.context)

    def next_frames(self, decodable: int = 0) -> int:
        """Frames the next window will decode, its context included (the scheduler's guess of
        its cost); `decodable`: see ChunkSchedule.next_size."""
        _, lo, hi = self._span(self._schedule.next_size(self._size, decodable))
        return hi - lo

    def next_window(self, decodable: int = 0, *, wide: bool = False) -> np.ndarray:
        enc, schedule = self._enc, self._schedule
        start = self._position
        self._size = schedule.next_size(self._size, decodable)
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
