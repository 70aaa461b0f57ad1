"""One text segment of a Piper voice, synthesized one vocoder window per call."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...jobs import Batch
from ..engine import ModelSteps, WordTiming
from .calibration import PartCosts
from .model import PiperModel, PiperParams
from .pieces import MAX_IDS
from .schedule import VocoderSchedule
from .stages import FLOW_AHEAD, Margins, Sentence
from .words import SentenceFrames, align_words

IDS_PER_CHARACTER = 2.3
"""Model ids one character of ordinary English text becomes (espeak phonemes, with Piper's
padding), measured on prose (docs/reliability.md#attacks-through-the-synthesis-calls;
bench/costly.py has the pathological kinds)."""


@dataclass(frozen=True)
class Window:
    """One vocoder run's input, and which of its output samples to keep."""

    latent: np.ndarray
    extra: dict[str, np.ndarray]
    keep_from: int
    keep_to: int
    staged: Callable[[bool], np.ndarray]
    """The same samples through the stages, each keeping its output for the next window: how
    the window runs unless the scheduler batches it with other streams' windows (which runs the
    whole vocoder on `latent`, its context included)."""

    @property
    def shape_key(self) -> tuple[int, ...]:
        """Windows with equal keys can run as one batch."""
        return (*self.latent.shape, *(v.shape[-1] for v in self.extra.values()))


@dataclass
class PiperSegment(ModelSteps):
    """A text segment (engine.Segment): the acoustic part with the first window, then one
    vocoder window per call; each call is short, bounded, blocking work."""

    model: PiperModel
    margins: Margins
    costs: PartCosts
    schedule: VocoderSchedule
    text: str
    params: PiperParams
    word_timestamps: bool
    _words: list[WordTiming] = field(default_factory=list)
    _pending: list[list[str]] | None = None
    """Phonemes of the pieces the acoustic part has yet to run (None: not phonemized)."""
    _ran: list[SentenceFrames] = field(default_factory=list)
    """The pieces run so far, for word timings."""
    _frames: int = 0
    """Frames of the pieces run so far."""
    _sentences: list[Sentence] = field(default_factory=list)
    """Pieces run and not yet vocoded to their end; the first is being vocoded."""
    _position: int = 0
    """Next frame to vocode in _sentences[0]."""
    _size: int = 0
    """Size of the last window, 0 before the first."""

    @property
    def total_samples(self) -> int | None:
        done = self._pending is not None and not self._pending
        return self._frames * self.model.hop if done else None

    @property
    def finished(self) -> bool:
        return self._pending == [] and self._next_range(0) is None

    def _frames_ahead(self, ahead: float) -> int:
        return int(max(0.0, ahead) * self.model.info.native_rate / self.model.hop)

    def _run_next_piece(self) -> None:
        """The acoustic part on the next piece (a bounded run: voice.MAX_IDS)."""
        model = self.model
        assert self._pending
        phonemes = self._pending.pop(0)
        sentence = model.sentence(model.phoneme_ids(phonemes), self.params, self.margins)
        self._sentences.append(sentence)
        durations = sentence.tensors[model.durations].reshape(-1)
        self._ran.append(SentenceFrames(phonemes, durations, self._frames))
        self._frames += sentence.frames
        if self.word_timestamps and not self._pending:
            frame_ms = 1000.0 * model.hop / model.info.native_rate
            self._words = align_words(
                self.text, self._ran, model.id_map, frame_ms, model.count_phoneme_words
            )

    def prepare(self) -> None:
        """Phonemize and run the acoustic part on every piece (tests; the server runs them one
        per call of next_window)."""
        if self._pending is None:
            self._pending = self.model.sentences(self.text)
        while self._pending:
            self._run_next_piece()

    def _next_range(self, ahead: int) -> tuple[Sentence, int, int] | None:
        """The next window: its sentence and frame range (not yet taken); None when the pieces
        run so far are vocoded to their end."""
        while self._sentences and self._position >= self._sentences[0].frames:
            self._sentences.pop(0)
            self._position = 0
        if not self._sentences:
            return None
        sentence = self._sentences[0]
        size = self.schedule.next_size(self._size, ahead)
        return sentence, self._position, min(sentence.frames, self._position + size)

    def _take(self, start: int, end: int) -> None:
        self._position, self._size = end, end - start

    def next_cost(self, ahead: float) -> float:
        """Worker seconds the next step is likely to take: its piece's acoustic part if it
        runs one, the flow's chunk if the window's latent frames are not computed yet, and the
        window through the vocoder (from the calibration's part costs)."""
        costs = self.costs
        frames_ahead = self._frames_ahead(ahead)
        found = self._next_range(frames_ahead)
        seconds = 0.0
        if self._pending is None:
            # Not phonemized yet (espeak runs on the worker): go by the text's length.
            ids = min(MAX_IDS, int(IDS_PER_CHARACTER * len(self.text)))
            seconds += costs.acoustic_per_id * ids
        elif self._pending and (found is None or self.word_timestamps):
            seconds += costs.acoustic_per_id * len(self.model.phoneme_ids(self._pending[0]))
            if self.word_timestamps and len(self._pending) > 1:
                return seconds  # a step with no audio yet
        size = self.schedule.next_size(self._size, frames_ahead)
        if found is None or not found[0].latent_ready(found[1], found[2]):
            seconds += costs.flow_per_frame * max(size, FLOW_AHEAD * frames_ahead)
        return seconds + costs.vocoder_per_frame * (size + 2 * self.margins.vocoder)

    def next_window(self, ahead: float, *, wide: bool = False) -> np.ndarray | None:
        """One bounded step: the next vocoder window, with the acoustic part of its piece
        first if it has not run. Word timings need every piece's durations before the first
        audio, so with them each step runs one piece and returns no samples until all have."""
        if self._pending is None:
            self._pending = self.model.sentences(self.text)
        frames_ahead = self._frames_ahead(ahead)
        found = self._next_range(frames_ahead)
        if self._pending and (found is None or self.word_timestamps):
            self._run_next_piece()
            if self.word_timestamps and self._pending:
                return np.zeros(0, np.float32)
            found = self._next_range(frames_ahead)
        if found is None:
            return None
        sentence, start, end = found
        self._take(start, end)
        return sentence.samples(start, end, frames_ahead, wide)

    def batch(self, ahead: float) -> Batch[np.ndarray] | None:
        """The next window as a batchable job when only the vocoder is left to run for it (the
        acoustic part and the flow are done); it is then taken."""
        if self._pending is None or (self.word_timestamps and self._pending):
            return None
        frames_ahead = self._frames_ahead(ahead)
        found = self._next_range(frames_ahead)
        if found is None:
            return None
        sentence, start, end = found
        hop, margin = self.model.hop, self.margins.vocoder
        lo, hi = max(0, start - margin), min(sentence.frames, end + margin)
        if not sentence.latent_ready(lo, hi):
            return None
        self._take(start, end)
        staged = functools.partial(sentence.samples, start, end, frames_ahead)
        window = Window(
            sentence.latent_window(lo, hi),
            sentence.extra,
            (start - lo) * hop,
            (end - lo) * hop,
            staged,
        )
        key = (self.model.info.name, window.shape_key)
        return Batch(key, window, self._vocode_windows, alone=window.staged)

    def _vocode_windows(self, windows: list[Window], wide: bool) -> list[np.ndarray]:
        """The kept samples of each window, the windows (of one voice and shape) in one run."""
        latent = np.concatenate([w.latent for w in windows])
        extra = {
            name: np.concatenate([w.extra[name] for w in windows]) for name in windows[0].extra
        }
        flat = self.model.stages.vocode(latent, extra, wide=wide)
        return [flat[i, w.keep_from : w.keep_to] for i, w in enumerate(windows)]
