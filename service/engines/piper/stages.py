"""Staged execution: the flow and vocoder window by window, each stage keeping what is needed."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import onnxruntime as ort

from ...errors import ModelError
from ..runtime import OrtSettings
from .split import SplitGraph

# The flow runs ahead of the vocoder in growing chunks: the first covers only what the first
# window needs (the first audio waits for nothing else), each later one this many times more...
FLOW_GROWTH = 4
# ...and at least this many times the frames the listener has in hand: one thread runs the flow
# about 90 times faster than real time, so a sentence mostly gets one flow run (each chunk
# recomputes its context; docs/benchmarks.md#the-piper-engine-alone).
FLOW_AHEAD = 8
# The vocoder's head runs ahead of its tail the same way, each chunk this many times the last,
# up to HEAD_LARGEST frames (its output takes 4 KB a frame in Piper's medium voices).
HEAD_GROWTH, HEAD_LARGEST = 4, 128


@dataclass
class StageWork:
    """What one stage has run: the input samples include the context each run recomputes.
    Counted without a lock (benchmarks and tests read it with one worker or none busy)."""

    runs: int = 0
    samples: int = 0
    """Input samples along time, over every run and batch row."""


@dataclass(frozen=True)
class Stage:
    """One model part on the way from the acoustic part's outputs to the waveform: a stage of
    the flow, the vocoder's head or tail, or a flow or vocoder that could not be cut."""

    narrow: ort.InferenceSession
    wide: ort.InferenceSession
    """The session for a run that has the machine to itself (the narrow one where the stage
    has no wide session)."""
    reads: str
    """The tensor it reads from the stage before it ("" for the first stage)."""
    sides: tuple[str, ...]
    """Its other inputs: acoustic outputs or graph inputs (flow inputs, speaker embedding)."""
    up: int
    """Its output samples per input sample."""
    work: StageWork = field(default_factory=StageWork)

    def run(self, feed: dict[str, np.ndarray], *, wide: bool = False) -> np.ndarray:
        session = self.wide if wide else self.narrow
        along = max((v.shape[0] * v.shape[-1] for v in feed.values() if v.ndim >= 3), default=0)
        self.work.runs += 1
        self.work.samples += along
        return np.asarray(session.run(None, feed)[0], dtype=np.float32)


@dataclass(frozen=True)
class Margins:
    """Context each stage needs on each side of what it computes for its output to equal one
    run over the whole sentence (calibration measures them per voice)."""

    flow: tuple[int, ...]
    """Frames a side for each flow stage."""
    vocoder: int
    """Frames a side for the vocoder's first stage (its head, or the whole vocoder)."""
    tail: int = 0
    """Head samples a side for the vocoder's tail (0 when the vocoder is whole)."""

    def per_stage(self, stride: int) -> list[int]:
        return [*self.flow, self.vocoder, *([self.tail] if stride else [])]


class Stages:
    """The voice's model parts after the acoustic one, as sessions in the order they run."""

    def __init__(self, split: SplitGraph, hop: int, ort_settings: OrtSettings) -> None:
        narrow, wide = ort_settings.intra_op_threads, ort_settings.wide_threads
        # The flow and the vocoder as the stages the split cut them into, else whole.
        flow = list(split.flow_stages) or ([] if split.flow is None else [split.flow])
        flow_reads = ["", *split.flow_cuts] if split.flow_stages else [""]
        vocoder = [split.vocoder] if split.vocoder_head is None else [split.vocoder_head]
        if split.vocoder_tail is not None:
            vocoder.append(split.vocoder_tail)
        head_reads = split.latent if flow else ""
        vocoder_reads = [head_reads, *([] if len(vocoder) == 1 else [split.vocoder_cut])]
        stride = split.vocoder_stride
        ups = [1] * len(flow) + ([hop] if len(vocoder) == 1 else [stride, hop // stride])

        def session(part: bytes, threads: int, *, is_vocoder: bool) -> ort.InferenceSession:
            # The blocked (NCHWc) kernels the vocoder's 2-D convolutions get run it faster on
            # one thread but slower on two (bench/ort_options.py;
            # docs/benchmarks.md#onnxruntime-options).
            disabled = ["NchwcTransformer"] if is_vocoder and threads > 1 else []
            return ort_settings.session(part, threads, disabled=disabled)

        stages: list[Stage] = []
        for i, part in enumerate(flow + vocoder):
            is_vocoder = i >= len(flow)
            made = session(part, narrow, is_vocoder=is_vocoder)
            # Wide runs for the vocoder's last stage only (its tail, four fifths of its work,
            # or the whole vocoder): it gains most from threads for the least memory (a wide
            # flow session held more memory for no gain; docs/benchmarks.md#start-up-and-memory).
            wide_made = made
            if i == len(flow) + len(vocoder) - 1 and ort_settings.wide:
                wide_made = session(part, wide, is_vocoder=True)
            reads = (flow_reads + vocoder_reads)[i]
            sides = tuple(n.name for n in made.get_inputs() if n.name != reads)
            stages.append(Stage(made, wide_made, reads, sides, ups[i]))
        self.chain = tuple(stages)
        self.flow_count = len(flow)
        """Stages before the vocoder's: chain[flow_count - 1] makes the latent frames."""
        self.rates = tuple(int(np.prod(ups[:i])) for i in range(len(ups)))
        """Each stage's input samples per latent frame."""
        self.hop = hop
        self.stride = stride
        """Samples of the vocoder head's output per latent frame; 0 if the vocoder is whole."""
        self.latent = split.latent
        """The latent frames' tensor: the flow's output (or the acoustic part's)."""
        self.extra_inputs = split.vocoder_extra_inputs
        """What else the vocoder reads (a speaker embedding)."""

    def work(self) -> list[StageWork]:
        """What each stage has run so far, the flow's first, the vocoder's last (a copy)."""
        return [replace(stage.work) for stage in self.chain]

    def vocode(
        self, latent: np.ndarray, extra: dict[str, np.ndarray], *, wide: bool = False
    ) -> np.ndarray:
        """Waveform [n, t * hop] of latent frames [n, C, t], in one run of the vocoder."""
        first = self.chain[self.flow_count]
        feed = {**{n: extra[n] for n in first.sides if n in extra}, self.latent: latent}
        out = first.run(feed, wide=wide)
        if self.stride:
            tail = self.chain[-1]
            out = tail.run({tail.reads: out}, wide=wide)
        return out.reshape(latent.shape[0], -1)


def load_stages(split: SplitGraph, hop: int, ort_settings: OrtSettings, path: object) -> Stages:
    """Stages, or a ModelError naming `path` if onnxruntime refuses a part."""
    try:
        return Stages(split, hop, ort_settings)
    except Exception as exc:  # onnxruntime raises its own untyped errors
        raise ModelError(path, f"onnxruntime cannot load the graph ({exc})") from exc


class Sentence:
    """One sentence after the acoustic part: computes its latent frames and waveform on demand,
    window by window, through the stages.

    Each stage keeps the output it computed that a later window still needs, and runs only on
    what is missing plus its own context a side (Margins): a stage's context is its own
    receptive field, not the whole chain's. The flow's last stage and the vocoder's head run
    ahead of what the window needs in growing chunks (FLOW_GROWTH, HEAD_GROWTH)."""

    def __init__(self, stages: Stages, tensors: dict[str, np.ndarray], margins: Margins) -> None:
        self._stages = stages
        self._margins = margins.per_stage(stages.stride)
        self.tensors = tensors
        """The acoustic part's outputs (and the graph inputs later parts read)."""
        self.extra = {n: tensors[n] for n in stages.extra_inputs}
        first = stages.chain[0]
        self.frames = max(int(tensors[n].shape[-1]) for n in first.sides if tensors[n].ndim == 3)
        self._kept: list[np.ndarray | None] = [None] * len(stages.chain)
        """Each stage's output kept for later windows: samples from _kept_from on."""
        self._kept_from = [0] * len(stages.chain)
        self._chunk = 0
        """Frames of the flow's last chunk."""
        self._head_chunk = 0
        """Frames of the vocoder head's last chunk."""

    def _run(self, k: int, lo: int, hi: int, ahead: int, wide: bool) -> np.ndarray:
        """Stage k's output samples [lo, hi). Requests to a stage only move forward: what is
        kept before `lo` is dropped (asking for earlier samples recomputes them)."""
        stages = self._stages
        stage, rate = stages.chain[k], stages.rates[k]
        up, n_in = stage.up, self.frames * rate
        out, first = self._kept[k], self._kept_from[k]
        if out is not None and first <= lo <= first + out.shape[-1]:
            a = (first + out.shape[-1]) // up  # first input sample not run yet
        else:
            out, a = None, lo // up
        b = -(-hi // up)
        if k == stages.flow_count - 1 and b > a:  # the latent frames: run ahead
            self._chunk = max(b - a, FLOW_GROWTH * self._chunk, FLOW_AHEAD * ahead)
            b = min(n_in, a + self._chunk)
        elif k == stages.flow_count and stages.stride and b > a:  # the vocoder's head: too
            self._head_chunk = max(b - a, min(HEAD_LARGEST, HEAD_GROWTH * self._head_chunk))
            b = min(n_in, a + self._head_chunk)
        if b > a:
            margin = self._margins[k]
            in_lo, in_hi = max(0, a - margin), min(n_in, b + margin)
            feed = {n: self._side(self.tensors[n], rate, in_lo, in_hi) for n in stage.sides}
            if k:
                feed[stage.reads] = self._run(k - 1, in_lo, in_hi, ahead, wide)
            new = stage.run(feed, wide=wide)[..., (a - in_lo) * up : (b - in_lo) * up]
            if out is None:
                out, first = new, a * up
            else:
                out, first = np.concatenate([out[..., lo - first :], new], -1), lo
        assert out is not None
        out = out[..., lo - first :]
        if k < len(stages.chain) - 1:  # the waveform is not kept
            # A copy, so that the kept part does not hold on to the whole run's output.
            self._kept[k], self._kept_from[k] = out.copy(), lo
        return out[..., : hi - lo]

    def _side(self, tensor: np.ndarray, rate: int, lo: int, hi: int) -> np.ndarray:
        """A stage's other input, cut to its window if it runs along the frames."""
        if rate == 1 and tensor.ndim == 3 and tensor.shape[-1] == self.frames:
            return tensor[..., lo:hi]
        return tensor

    def latent(self) -> np.ndarray:
        """All latent frames [1, C, T] (runs the rest of the flow)."""
        stages = self._stages
        if not stages.flow_count:
            return self.tensors[stages.latent]
        return self._run(stages.flow_count - 1, 0, self.frames, 0, False)

    def latent_ready(self, lo: int, hi: int) -> bool:
        """Whether latent frames [lo, hi) are computed (no flow run needed for them)."""
        k = self._stages.flow_count - 1
        if k < 0:
            return True
        kept, kept_from = self._kept[k], self._kept_from[k]
        return kept is not None and kept_from <= lo and hi <= kept_from + kept.shape[-1]

    def latent_window(self, lo: int, hi: int) -> np.ndarray:
        """Latent frames [lo, hi), running the flow where they are not computed yet."""
        stages = self._stages
        if not stages.flow_count:
            return self.tensors[stages.latent][..., lo:hi]
        return self._run(stages.flow_count - 1, lo, hi, 0, False)

    def samples(self, start: int, end: int, ahead: int = 0, wide: bool = False) -> np.ndarray:
        """Waveform of frames [start, end) through the stages. `ahead`: frames of audio the
        listener has in hand (the flow and head chunks grow with it)."""
        hop = self._stages.hop
        last = len(self._stages.chain) - 1
        return self._run(last, start * hop, end * hop, ahead, wide).reshape(-1)
