"""One Piper voice: text to phonemes to latent frames, then the vocoder window by window."""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from .errors import InvalidRequest, ModelError
from .graph import SplitCache, SplitGraph
from .words import SentenceFrames, WordTiming, align_words, phoneme_words

# Frames of context the vocoder needs on each side of a window for its output to equal a one-shot
# run. HiFi-GAN's receptive field in Piper's medium voices is about 13 latent frames a side;
# measured here: margins of 10 and more give max |diff| < 1e-6, 8 gives 1.4e-3 (audible seams).
DEFAULT_MARGIN = 13
# Calibration (Voice.exact_margin) picks the smallest exact margin for each voice within this.
MIN_MARGIN, MAX_MARGIN = 8, 20
# The same for the flow: four coupling layers of four kernel-5 convolutions, 32 frames a side.
# Measured on en_US-joe-medium, max |diff| of the latent frames: 24 frames 8e-5, 28: 3e-6.
FLOW_MARGIN = 32
# The flow runs ahead of the vocoder in growing chunks: the first covers only what the first
# window needs (the first audio waits for nothing else), each later one this many times more...
FLOW_GROWTH = 4
# ...and at least this many times the frames of audio the listener has in hand. One thread
# runs the flow about 90 times faster than real time, so this costs under a tenth of the time
# in hand, and a sentence mostly gets one flow run: each chunk recomputes FLOW_MARGIN frames
# (small chunks alone made the flow cost 38% more than one run per sentence).
FLOW_AHEAD = 8
# The vocoder's head (when the vocoder is cut, SplitGraph.vocoder_head) runs ahead of its tail
# the same way, each chunk this many times the last, up to HEAD_LARGEST frames (its output
# takes 4 KB a frame in Piper's medium voices): fewer runs, each with 10 frames of context a
# side, where it used to run once per window.
HEAD_GROWTH, HEAD_LARGEST = 4, 128


_CONTROL_TO_SPACE = {c: " " for c in [*range(0x20), *range(0x7F, 0xA0)] if chr(c) not in "\t\n\r"}


@dataclass(frozen=True)
class VocoderSchedule:
    """Sizes of the vocoder's windows, in latent frames (about 11.6 ms each at 22050 Hz)."""

    first: int = 8
    """The first window when the listener has no audio in hand: small, so that its audio exists
    as soon as possible."""
    growth: float = 2.0
    """Each later window is this many times the previous one (fourfold, 8, 32, 128, ran 4%
    fewer vocoder frames, but past capacity, at 24 callers, 1 to 15 of about 120 calls
    stuttered in five runs against 0 in three with doubling: bench/capacity.py)..."""
    largest: int = 128
    """...up to this size. Larger windows waste less on their margins (20 frames of context:
    31% extra work around 64 frames, 16% around 128), smaller ones keep each job short, so
    that no stream waits long behind another's window, and react sooner to a clear. On 2
    cores (bench/capacity.py, README): with one worker of two threads, 128 stalled streams
    that 64 did not; with two workers of one thread, and jobs due 300 ms before their
    listener runs dry, 128 carried 20 callers on less CPU (85% against 91%)."""
    margin: int = DEFAULT_MARGIN
    """Context frames on each side of a window."""

    def __post_init__(self) -> None:
        if self.first < 1 or self.largest < self.first or self.growth < 1 or self.margin < 0:
            raise ValueError(f"invalid vocoder schedule {self}")

    def next_size(self, previous: int, ahead: int = 0) -> int:
        """The next window's size after one of `previous` frames (0: none yet), when the
        listener has `ahead` frames of audio in hand: never smaller than the usual growth, and
        as large as the audio in hand allows, which is time the window may take."""
        grown = self.first if previous == 0 else max(previous + 1, int(previous * self.growth))
        return min(self.largest, max(grown, ahead))

    def windows(self, frames: int) -> Iterator[tuple[int, int]]:
        """(start, end) frame ranges that tile [0, frames), with nothing in hand."""
        start, size = 0, 0
        while start < frames:
            size = self.next_size(size)
            end = min(frames, start + size)
            yield start, end
            start = end


@dataclass(frozen=True)
class VoiceInfo:
    """What ListVoices reports about a voice, read from its .onnx.json."""

    name: str
    language: str
    native_rate: int
    speakers: tuple[str, ...]
    quality: str
    model_path: Path
    config_path: Path


@dataclass(frozen=True)
class SynthesisParams:
    """Per-request model settings, already validated and resolved against the voice's defaults."""

    length_scale: float
    noise_scale: float
    noise_w: float
    speaker_id: int | None = None


@dataclass(frozen=True)
class OrtSettings:
    """onnxruntime session options (bench/ort_options.py and bench/engine.py measure them)."""

    intra_op_threads: int = 1
    """Threads inside one model run when runs share the machine (one per scheduler worker).
    Measured on 2 cores (bench/engine.py, README): two workers of one thread synthesize 28
    seconds of audio per second, one worker with two threads 18: a run's small operators and
    the Python between runs leave the second thread idle much of the time."""
    wide_threads: int = field(default_factory=lambda: min(2, os.cpu_count() or 1))
    """Threads of a vocoder run that has the machine to itself (scheduler: an urgent job, such
    as a stream's first audio, with no other job running or queued): 28 against 44 ms for a
    90-frame window (bench/ort_options.py), the first audio 1.5 ms sooner (bench/engine.py). Only
    the vocoder gets wide sessions: a wide flow would hold 35 MB more, a wide acoustic part
    50. Equal to intra_op_threads: none."""
    optimization: str = "all"
    """Graph optimisation level: "basic", "extended" or "all"."""
    cpu_arena: bool = True
    """onnxruntime's memory arena: faster reruns of varying shapes for some resident memory."""

    @property
    def wide(self) -> bool:
        return self.wide_threads > self.intra_op_threads

    def session_options(self, threads: int | None = None) -> ort.SessionOptions:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or self.intra_op_threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = {
            "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
            "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
            "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        }[self.optimization]
        opts.enable_cpu_mem_arena = self.cpu_arena
        # No memory patterns: with them each run takes one block for all its intermediate
        # tensors, a block per shape of input, which the shared arena then keeps. 100 s soaks
        # with 8 callers: 203 MB idle and 291 at most against 219 and 306, at the same speed.
        opts.enable_mem_pattern = False
        # Idle threads must not spin: several sessions share two cores.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if self.cpu_arena:
            # One arena for every session of the process (all parts of all voices, narrow
            # and wide) instead of one each: it holds what the runs at once need, not the
            # sum of each session's largest. bench/soak.py, 8 callers: 294 MB against 323.
            _register_shared_arena()
            opts.add_session_config_entry("session.use_env_allocators", "1")
        opts.log_severity_level = 3
        return opts


_thread = threading.local()
_arena_lock = threading.Lock()
_arena_registered = False


def _register_shared_arena() -> None:
    """Register onnxruntime's process-wide CPU arena (once), for sessions that opt in."""
    global _arena_registered
    with _arena_lock:
        if not _arena_registered:
            cpu = ort.OrtMemoryInfo(
                "Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT
            )
            # Its default growth (next power of two); growing by what is asked held more.
            ort.create_and_register_allocator(cpu, ort.OrtArenaCfg({}))
            _arena_registered = True


@contextmanager
def wide_runs() -> Iterator[None]:
    """Model runs made on this thread inside the block use OrtSettings.wide_threads. The
    scheduler enters it for a job that has the machine to itself."""
    _thread.wide = True
    try:
        yield
    finally:
        _thread.wide = False


def _running_wide() -> bool:
    return getattr(_thread, "wide", False)


def read_voice_info(
    model_path: Path, config_path: Path | None = None
) -> tuple[VoiceInfo, dict[str, Any]]:
    """Read and check a voice's .onnx.json; the name is the model file's stem."""
    config_path = config_path or model_path.with_name(model_path.name + ".json")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelError(config_path, f"cannot read the voice config ({exc.strerror})") from exc
    except ValueError as exc:
        raise ModelError(config_path, f"the voice config is not valid JSON ({exc})") from exc
    if not isinstance(config, dict):
        raise ModelError(config_path, "the voice config is not a JSON object")
    missing = [k for k in ("audio", "num_speakers", "phoneme_id_map") if k not in config]
    if missing:
        raise ModelError(config_path, f"not a Piper voice config: missing {', '.join(missing)}")
    try:
        rate = int(config["audio"]["sample_rate"])
        speaker_map = config.get("speaker_id_map") or {}
        speakers = tuple(sorted(speaker_map, key=lambda s: speaker_map[s]))
        language = config.get("language", {}).get("code") or config.get("espeak", {}).get(
            "voice", ""
        )
        quality = str(config["audio"].get("quality", ""))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelError(config_path, f"not a Piper voice config ({exc!r})") from exc
    name = model_path.name.removesuffix(".onnx")
    info = VoiceInfo(name, str(language), rate, speakers, quality, model_path, config_path)
    return info, config


class Voice:
    """A loaded voice. Thread-safe: sessions may run concurrently; espeak runs under a lock."""

    def __init__(
        self,
        info: VoiceInfo,
        config: dict[str, Any],
        split: SplitGraph,
        ort_settings: OrtSettings,
        espeak_lock: threading.Lock,
    ) -> None:
        from piper import PiperVoice
        from piper.config import PiperConfig

        self.info = info
        self._espeak_lock = espeak_lock
        try:
            self._piper_config = PiperConfig.from_dict(config)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelError(info.config_path, f"not a Piper voice config ({exc!r})") from exc
        # Only phonemize() and phonemes_to_ids() are used: they never touch the session.
        self._phonemizer = PiperVoice(session=None, config=self._piper_config)
        self.hop = self._piper_config.hop_length

        def session(part: bytes, threads: int, *, vocoder: bool = False) -> ort.InferenceSession:
            # The blocked (NCHWc) kernels the vocoder's 2-D convolutions get run it faster on
            # one thread but slower on two (36 against 26 ms for 84 frames).
            disabled = ["NchwcTransformer"] if vocoder and threads > 1 else []
            made = ort.InferenceSession(
                part,
                ort_settings.session_options(threads),
                providers=["CPUExecutionProvider"],
                disabled_optimizers=disabled,
            )
            # onnxruntime's Python session keeps the serialized model to rebuild itself on a
            # fallback to another provider, which CPU-only sessions never do: 60 MB held for
            # nothing (bench/startup.py).
            made._model_bytes = None
            return made

        narrow, wide = ort_settings.intra_op_threads, ort_settings.wide_threads
        # The flow and the vocoder as the stages the split cut them into, else whole.
        flow = list(split.flow_stages) or ([] if split.flow is None else [split.flow])
        flow_reads = ["", *split.flow_cuts] if split.flow_stages else [""]
        vocoder = [split.vocoder] if split.vocoder_head is None else [split.vocoder_head]
        if split.vocoder_tail is not None:
            vocoder.append(split.vocoder_tail)
        head_reads = split.latent if flow else ""
        vocoder_reads = [head_reads, *([] if len(vocoder) == 1 else [split.vocoder_cut])]
        ups = [1] * len(flow) + (
            [self.hop]
            if len(vocoder) == 1
            else [split.vocoder_stride, self.hop // split.vocoder_stride]
        )
        try:
            self._acoustic = session(split.acoustic, narrow)
            self._stages: list[_Stage] = []
            for i, part in enumerate(flow + vocoder):
                is_vocoder = i >= len(flow)
                made = session(part, narrow, vocoder=is_vocoder)
                # Wide runs for the vocoder's last stage only (its tail, four fifths of its
                # work, or the whole vocoder), the part that gains most from threads for the
                # least memory: a second flow session held 35 MB more for no gain, and the
                # head's weights are most of the vocoder's.
                wide_made = made
                if i == len(flow) + len(vocoder) - 1 and ort_settings.wide:
                    wide_made = session(part, wide, vocoder=True)
                reads = (flow_reads + vocoder_reads)[i]
                sides = tuple(n.name for n in made.get_inputs() if n.name != reads)
                self._stages.append(_Stage(made, wide_made, reads, sides, ups[i]))
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ModelError(info.model_path, f"onnxruntime cannot load the graph ({exc})") from exc
        self._flow_count = len(flow)
        """Stages before the vocoder's: _stages[_flow_count - 1] makes the latent frames."""
        self._rates = [int(np.prod(ups[:i])) for i in range(len(ups))]
        """Each stage's input samples per latent frame."""
        self._split = split.names_only()  # the sessions hold what they need
        self._acoustic_inputs = {i.name for i in self._acoustic.get_inputs()}
        self._acoustic_outputs = [o.name for o in self._acoustic.get_outputs()]
        self.vocoder_extra_inputs = split.vocoder_extra_inputs
        self.id_map = self._piper_config.phoneme_id_map
        self.gain = 1.0
        """Fixed output gain set by calibrate(): a stream cannot know its peak in advance."""
        self.schedule = VocoderSchedule()
        """The vocoder's windows for this voice; calibrate() sets its margin."""
        self.stride = split.vocoder_stride
        """Samples of the vocoder head's output per latent frame; 0 if the vocoder is whole."""
        self.tail_margin = self.stride * MAX_MARGIN
        """Head samples of context a side the vocoder's tail needs; calibrate() measures it."""
        self.flow_margins = [FLOW_MARGIN] * self._flow_count
        """Frames of context a side each flow stage needs; calibrate() measures them."""

    def margins(self, vocoder_margin: int) -> list[int]:
        """Input samples of context a side for each stage, the vocoder's first (its head, or
        the whole vocoder) getting `vocoder_margin` frames."""
        return [*self.flow_margins, vocoder_margin, *([self.tail_margin] if self.stride else [])]

    def stage_work(self) -> list[StageWork]:
        """What each stage has run so far, the flow's first, the vocoder's last (a copy)."""
        return [replace(stage.work) for stage in self._stages]

    @classmethod
    def load(
        cls,
        model_path: Path,
        config_path: Path | None,
        cache: SplitCache,
        ort_settings: OrtSettings,
        espeak_lock: threading.Lock,
    ) -> Voice:
        info, config = read_voice_info(model_path, config_path)
        return cls(info, config, cache.load(model_path), ort_settings, espeak_lock)

    # -- parameters ---------------------------------------------------------------------------

    def params(
        self,
        *,
        speaking_rate: float = 1.0,
        noise_scale: float | None = None,
        noise_w: float | None = None,
        speaker: str = "",
    ) -> SynthesisParams:
        """Resolve a request's settings against this voice's defaults."""
        cfg = self._piper_config
        return SynthesisParams(
            length_scale=cfg.length_scale / speaking_rate,
            noise_scale=cfg.noise_scale if noise_scale is None else noise_scale,
            noise_w=cfg.noise_w_scale if noise_w is None else noise_w,
            speaker_id=self.speaker_id(speaker),
        )

    def speaker_id(self, speaker: str) -> int | None:
        """The model's speaker id for a speaker name or number; None on single-speaker voices."""
        cfg = self._piper_config
        if cfg.num_speakers <= 1:
            if speaker:
                raise InvalidRequest(
                    f"voice '{self.info.name}' has a single speaker: leave speaker empty"
                )
            return None
        if not speaker:
            return cfg.default_speaker_id
        if speaker in cfg.speaker_id_map:
            return cfg.speaker_id_map[speaker]
        if speaker.isdigit() and int(speaker) < cfg.num_speakers:
            return int(speaker)
        raise InvalidRequest(
            f"voice '{self.info.name}' has no speaker '{speaker}': use a name from ListVoices "
            f"or a number from 0 to {cfg.num_speakers - 1}"
        )

    # -- text ---------------------------------------------------------------------------------

    def phonemize(self, text: str) -> list[list[str]]:
        """Phonemes of each sentence espeak finds in `text` (empty sentences dropped)."""
        # espeak-ng takes a C string: a NUL would end the text there (Python refuses it), and
        # other control characters carry nothing to speak.
        text = text.translate(_CONTROL_TO_SPACE)
        with self._espeak_lock:
            return [s for s in self._phonemizer.phonemize(text) if s]

    def phoneme_ids(self, phonemes: Sequence[str]) -> list[int]:
        """Model input ids, exactly as Piper makes them."""
        return self._phonemizer.phonemes_to_ids(list(phonemes))

    def count_phoneme_words(self, word: str) -> tuple[int, int]:
        """How many espeak words, and spoken phonemes, one text word becomes on its own."""
        groups = [g for s in self.phonemize(word) for g in phoneme_words(s)]
        return len(groups), sum(len(g) for g in groups)

    # -- models -------------------------------------------------------------------------------

    def acoustic(self, ids: Sequence[int], params: SynthesisParams) -> Sentence:
        """Run the acoustic part on one sentence's ids: durations, and the flow's inputs."""
        feed: dict[str, np.ndarray] = {
            "input": np.asarray([ids], dtype=np.int64),
            "input_lengths": np.asarray([len(ids)], dtype=np.int64),
            "scales": np.asarray(
                [params.noise_scale, params.length_scale, params.noise_w], dtype=np.float32
            ),
        }
        if params.speaker_id is not None:
            feed["sid"] = np.asarray([params.speaker_id], dtype=np.int64)
        feed = {k: v for k, v in feed.items() if k in self._acoustic_inputs}
        outputs = self._acoustic.run(self._acoustic_outputs, feed)
        # Graph inputs the later parts read (the speaker id) travel with the acoustic outputs.
        tensors = {**feed, **dict(zip(self._acoustic_outputs, outputs, strict=True))}
        return Sentence(self, tensors)

    def run_head(self, latent: np.ndarray, extra: dict[str, np.ndarray]) -> np.ndarray:
        """The vocoder head's output [n, C, stride * t] of latent frames [n, C, t]."""
        assert self.stride
        head = self._stages[self._flow_count]
        return head.run(
            {**{n: extra[n] for n in head.sides if n in extra}, self._split.latent: latent}
        )

    def run_tail(self, head: np.ndarray) -> np.ndarray:
        """Waveform [n, stride * t * (hop / stride)] of the head's output [n, C, stride * t]."""
        tail = self._stages[-1]
        return tail.run({tail.reads: head}).reshape(head.shape[0], -1)

    def _vocode(self, latent: np.ndarray, extra: dict[str, np.ndarray]) -> np.ndarray:
        """Waveform [n, t * hop] of latent frames [n, C, t], in one run of the vocoder."""
        if self.stride:
            return self.run_tail(self.run_head(latent, extra))
        whole = self._stages[-1]
        feed = {**{n: extra[n] for n in whole.sides if n in extra}, self._split.latent: latent}
        return whole.run(feed).reshape(latent.shape[0], -1)

    def vocode(self, latent: np.ndarray, extra: dict[str, np.ndarray]) -> np.ndarray:
        """Waveform (float32, native rate) of latent frames [1, C, t]: t * hop samples."""
        return self._vocode(latent, extra).reshape(-1)

    def vocode_windows(self, windows: list[Window]) -> list[np.ndarray]:
        """The kept samples of each window; windows of one shape_key run as one batch."""
        latent = np.concatenate([w.latent for w in windows])
        extra = {
            name: np.concatenate([w.extra[name] for w in windows]) for name in windows[0].extra
        }
        flat = self._vocode(latent, extra)
        return [flat[i, w.keep_from : w.keep_to] for i, w in enumerate(windows)]

    # -- synthesis ----------------------------------------------------------------------------

    def segment(
        self,
        text: str,
        params: SynthesisParams,
        schedule: VocoderSchedule | None = None,
        *,
        word_timestamps: bool = False,
    ) -> SegmentSynthesis:
        """A text segment ready to be synthesized window by window (nothing runs yet)."""
        return SegmentSynthesis(self, text, params, schedule or self.schedule, word_timestamps)

    def synthesize(
        self,
        text: str,
        params: SynthesisParams,
        schedule: VocoderSchedule | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[np.ndarray]:
        """Samples of `text` (native rate, before gain), one vocoder window at a time.

        `cancel` is checked between windows: once it is set, no further window runs.
        """
        segment = self.segment(text, params, schedule)
        while cancel is None or not cancel.is_set():
            samples = segment.next_window()
            if samples is None:
                return
            yield samples

    def calibrate(self, text: str, target_peak: float = 0.8) -> float:
        """Measure this voice once on `text` (noise 0): set `schedule` to the smallest vocoder
        margin that is exact, and `gain` so that the text peaks at `target_peak`; returns the
        gain.

        Piper normalises each sentence to peak 1.0, which a stream cannot do before its first
        chunk; one fixed gain per voice keeps loudness steady from chunk to chunk.
        """
        params = self.params(noise_scale=0.0, noise_w=0.0)
        reaches = self.reaches(text, params)
        self.flow_margins = [FLOW_MARGIN if r is None else r for r in reaches[: self._flow_count]]
        if self.stride:
            self.tail_margin = self.stride * MAX_MARGIN if reaches[-1] is None else reaches[-1]
        self.schedule = replace(self.schedule, margin=self.exact_margin(text, params))
        peak = max(
            (float(np.abs(s).max()) for s in self.synthesize(text, params) if s.size), default=0.0
        )
        self.gain = float(np.clip(target_peak / peak, 0.25, 4.0)) if peak > 1e-4 else 1.0
        return self.gain

    def exact_margin(self, text: str, params: SynthesisParams) -> int:
        """The fewest context frames a side with which small vocoder windows equal one run
        over the whole sentence (max |diff| under 1e-5 of full scale). HiFi-GAN's receptive
        field differs between voices; every frame of margin is work on every window."""
        sentence = self.acoustic(self.phoneme_ids(self.phonemize(text)[0]), params)
        latent, extra = sentence.latent(), sentence.extra
        whole = self.vocode(latent, extra)
        frames, hop, window = latent.shape[-1], self.hop, 16
        for margin in range(MIN_MARGIN, MAX_MARGIN + 1):
            worst = 0.0
            for start in range(0, frames, window):
                end = min(frames, start + window)
                lo, hi = max(0, start - margin), min(frames, end + margin)
                part = self.vocode(latent[..., lo:hi], extra)
                got = part[(start - lo) * hop : (end - lo) * hop]
                worst = max(worst, float(np.abs(got - whole[start * hop : end * hop]).max()))
            if worst < 1e-5:
                return margin
        return MAX_MARGIN

    def reaches(self, text: str, params: SynthesisParams) -> list[int | None]:
        """Input samples of context a side each stage needs to equal one run: how far a change
        to one input sample spreads in its output (its receptive field), measured in the
        middle of `text`'s first sentence; None where the spread reaches an end of it, and
        for the vocoder's first stage, which gets the smaller margin that is exact in practice
        (exact_margin: its receptive field is wider than what changes its output)."""
        sentence = self.acoustic(self.phoneme_ids(self.phonemize(text)[0]), params)
        frames, x = sentence.frames, np.empty(0, dtype=np.float32)
        reaches: list[int | None] = []
        for k, stage in enumerate(self._stages):
            feed = {n: sentence.tensors[n] for n in stage.sides}
            if k:
                feed[stage.reads] = x
                moved = [stage.reads]
            else:  # the first stage reads frames from the acoustic part
                moved = [n for n, t in feed.items() if t.ndim == 3 and t.shape[-1] == frames]
            out = stage.run(feed)
            x = out
            if k == self._flow_count:  # the vocoder's first stage: exact_margin() measures it
                reaches.append(None)
                continue
            length = feed[moved[0]].shape[-1]
            at, up = length // 2, stage.up
            changed = dict(feed)
            for name in moved:
                changed[name] = feed[name].copy()
                changed[name][..., at] += 1.0
            along = tuple(range(out.ndim - 1))
            spread = np.flatnonzero(np.any(stage.run(changed) != out, axis=along))
            if spread.size == 0 or spread[0] == 0 or spread[-1] == length * up - 1:
                reaches.append(None)
            else:
                before = max(0, at * up - int(spread[0]))
                after = max(0, int(spread[-1]) - (at * up + up - 1))
                reaches.append(max(-(-before // up), -(-after // up)))
        return reaches


class Sentence:
    """One sentence after the acoustic part: computes its latent frames and waveform on
    demand, window by window, through the voice's stages (the flow's, the vocoder's).

    Each stage keeps the output it computed that a later window still needs, and runs only
    on what is missing plus its own context a side (Voice.margins): a stage's context is its
    own receptive field, not the whole chain's. The flow's last stage runs ahead of the
    vocoder in growing chunks (FLOW_GROWTH, FLOW_AHEAD)."""

    def __init__(self, voice: Voice, tensors: dict[str, np.ndarray]) -> None:
        split = voice._split
        self._voice = voice
        self.tensors = tensors
        """The acoustic part's outputs (and the graph inputs later parts read)."""
        self.durations = tensors[split.durations].reshape(-1)
        self.extra = {n: tensors[n] for n in split.vocoder_extra_inputs}
        """What else the vocoder reads (a speaker embedding)."""
        first = voice._stages[0]
        self.frames = max(int(tensors[n].shape[-1]) for n in first.sides if tensors[n].ndim == 3)
        self._kept: list[np.ndarray | None] = [None] * len(voice._stages)
        """Each stage's output kept for later windows: samples from _kept_from on."""
        self._kept_from = [0] * len(voice._stages)
        self._chunk = 0
        """Frames of the flow's last chunk."""
        self._head_chunk = 0
        """Frames of the vocoder head's last chunk."""

    def _run(self, k: int, lo: int, hi: int, margins: list[int], ahead: int = 0) -> np.ndarray:
        """Stage k's output samples [lo, hi). Requests to a stage only move forward: what is
        kept before `lo` is dropped (asking for earlier samples recomputes them)."""
        voice = self._voice
        stage, rate = voice._stages[k], voice._rates[k]
        up, n_in = stage.up, self.frames * rate
        out, first = self._kept[k], self._kept_from[k]
        if out is not None and first <= lo <= first + out.shape[-1]:
            a = (first + out.shape[-1]) // up  # first input sample not run yet
        else:
            out, a = None, lo // up
        b = -(-hi // up)
        if k == voice._flow_count - 1 and b > a:  # the latent frames: run ahead
            self._chunk = max(b - a, FLOW_GROWTH * self._chunk, FLOW_AHEAD * ahead)
            b = min(n_in, a + self._chunk)
        elif k == voice._flow_count and voice.stride and b > a:  # the vocoder's head: too
            self._head_chunk = max(b - a, min(HEAD_LARGEST, HEAD_GROWTH * self._head_chunk))
            b = min(n_in, a + self._head_chunk)
        if b > a:
            in_lo, in_hi = max(0, a - margins[k]), min(n_in, b + margins[k])
            feed = {n: self._side(self.tensors[n], rate, in_lo, in_hi) for n in stage.sides}
            if k:
                feed[stage.reads] = self._run(k - 1, in_lo, in_hi, margins, ahead)
            new = stage.run(feed)[..., (a - in_lo) * up : (b - in_lo) * up]
            if out is None:
                out, first = new, a * up
            else:
                out, first = np.concatenate([out[..., lo - first :], new], -1), lo
        assert out is not None
        out = out[..., lo - first :]
        if k < len(voice._stages) - 1:  # the waveform is not kept
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
        voice = self._voice
        if not voice._flow_count:
            return self.tensors[voice._split.latent]
        return self._run(voice._flow_count - 1, 0, self.frames, voice.margins(0))

    def window(
        self, start: int, end: int, margin: int, *, run_flow: bool = True, ahead: int = 0
    ) -> Window | None:
        """The vocoder's input for frames [start, end) with `margin` frames of context a side;
        None if that needs the flow and `run_flow` is False. `ahead`: frames of audio the
        listener has in hand."""
        voice = self._voice
        lo, hi = max(0, start - margin), min(self.frames, end + margin)
        if not voice._flow_count:
            latent = self.tensors[voice._split.latent][..., lo:hi]
        else:
            k = voice._flow_count - 1
            kept, kept_from = self._kept[k], self._kept_from[k]
            ready = kept is not None and kept_from <= lo and hi <= kept_from + kept.shape[-1]
            if not ready and not run_flow:
                return None
            latent = self._run(k, lo, hi, voice.margins(margin), ahead)
        hop = voice.hop
        staged = functools.partial(self.samples, start, end, margin, ahead)
        return Window(latent, self.extra, (start - lo) * hop, (end - lo) * hop, staged)

    def samples(self, start: int, end: int, margin: int, ahead: int = 0) -> np.ndarray:
        """Waveform of frames [start, end), the vocoder's first stage run with `margin`
        frames of context a side."""
        voice = self._voice
        margins = voice.margins(margin)
        hop = voice.hop
        return self._run(len(margins) - 1, start * hop, end * hop, margins, ahead).reshape(-1)


@dataclass
class StageWork:
    """What one stage has run: the input samples include the context each run recomputes.
    Counted without a lock (benchmarks and tests read it with one worker or none busy)."""

    runs: int = 0
    samples: int = 0
    """Input samples along time, over every run and batch row."""


@dataclass(frozen=True)
class _Stage:
    """One model part on the way from the acoustic part's outputs to the waveform: a stage of
    the flow, the vocoder's head or tail, or a flow or vocoder that could not be cut."""

    narrow: ort.InferenceSession
    wide: ort.InferenceSession
    """The session for wide runs (wide_runs): the vocoder's get two threads."""
    reads: str
    """The tensor it reads from the stage before it ("" for the first stage)."""
    sides: tuple[str, ...]
    """Its other inputs: acoustic outputs or graph inputs (flow inputs, speaker embedding)."""
    up: int
    """Its output samples per input sample."""
    work: StageWork = field(default_factory=StageWork)

    def run(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        session = self.wide if _running_wide() else self.narrow
        along = max((v.shape[0] * v.shape[-1] for v in feed.values() if v.ndim >= 3), default=0)
        self.work.runs += 1
        self.work.samples += along
        return np.asarray(session.run(None, feed)[0], dtype=np.float32)


@dataclass(frozen=True)
class Window:
    """One vocoder run's input, and which of its output samples to keep."""

    latent: np.ndarray
    extra: dict[str, np.ndarray]
    keep_from: int
    keep_to: int
    staged: Callable[[], np.ndarray]
    """The same samples through the stages, each keeping its output for the next window: how
    the window runs unless the scheduler batches it with other streams' windows (which runs
    the whole vocoder on `latent`, its context included, at every stage)."""

    @property
    def shape_key(self) -> tuple[int, ...]:
        """Windows with equal keys can run as one batch."""
        return (*self.latent.shape, *(v.shape[-1] for v in self.extra.values()))


@dataclass
class SegmentSynthesis:
    """One text segment: acoustic model on the first call, then one vocoder window per call.

    Each call is a short, bounded piece of blocking work, so a caller can run them on worker
    threads and stop between any two (barge-in, cancellation).
    """

    voice: Voice
    text: str
    params: SynthesisParams
    schedule: VocoderSchedule
    word_timestamps: bool
    words: list[WordTiming] = field(default_factory=list)
    """Word timings relative to the segment's first sample; filled by the first next_window()."""
    frames: int = 0
    """Latent frames in the whole segment; known after the first next_window()."""
    _sentences: list[Sentence] | None = None
    _position: int = 0
    """Next frame to vocode in the first sentence of _sentences."""
    _size: int = 0
    """Size of the last window, 0 before the first."""

    @property
    def num_samples(self) -> int:
        return self.frames * self.voice.hop

    def prepare(self) -> None:
        """Phonemize and run the acoustic model on every sentence of the segment."""
        if self._sentences is not None:
            return
        voice = self.voice
        self._sentences = []
        frames_info = []
        for phonemes in voice.phonemize(self.text):
            sentence = voice.acoustic(voice.phoneme_ids(phonemes), self.params)
            self._sentences.append(sentence)
            frames_info.append(SentenceFrames(phonemes, sentence.durations, self.frames))
            self.frames += sentence.frames
        if self.word_timestamps:
            frame_ms = 1000.0 * voice.hop / voice.info.native_rate
            self.words = align_words(
                self.text, frames_info, voice.id_map, frame_ms, voice.count_phoneme_words
            )

    def _next_range(self, ahead: int) -> tuple[Sentence, int, int] | None:
        """The next window: its sentence and frame range (not yet taken)."""
        assert self._sentences is not None
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

    def next_window(self, ahead: int = 0) -> np.ndarray | None:
        """Samples of the next vocoder window, or None when the segment is done. `ahead`:
        frames of audio the listener has in hand (lets the window be larger)."""
        self.prepare()
        found = self._next_range(ahead)
        if found is None:
            return None
        sentence, start, end = found
        self._take(start, end)
        return sentence.samples(start, end, self.schedule.margin, ahead)

    def ready_window(self, ahead: int = 0) -> Window | None:
        """The next window's input if it needs no model run but the vocoder's (the acoustic
        part and the flow are done for it); it is then taken. None otherwise: use
        next_window(). Lets the scheduler batch the vocoder runs of several streams."""
        if self._sentences is None:
            return None
        found = self._next_range(ahead)
        if found is None:
            return None
        sentence, start, end = found
        window = sentence.window(start, end, self.schedule.margin, run_flow=False)
        if window is not None:
            self._take(start, end)
        return window
