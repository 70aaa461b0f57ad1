"""The engine interface: what a session needs from a voice, whatever model family speaks it."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from ..jobs import Batch


@dataclass(frozen=True)
class WordTiming:
    """When one word of a segment is spoken, relative to the segment's first sample."""

    word: str
    start_ms: float
    end_ms: float


def language_matches(language: str, wanted: str) -> bool:
    """Whether a voice's BCP-47 language falls in a request's range (RFC 4647 basic filtering:
    "zh" takes zh-CN and zh-TW, "en-us" en-US; case and "_" for "-" do not matter, nor a script
    subtag or a three-letter code (canonical); "" takes all)."""
    language, wanted = canonical(language), canonical(wanted)
    return not wanted or language == wanted or language.startswith(wanted + "-")


_THREE_LETTERS = {
    "cmn": "zh", "zho": "zh", "chi": "zh", "jpn": "ja", "eng": "en", "spa": "es", "fra": "fr",
    "fre": "fr", "ita": "it", "por": "pt", "deu": "de", "ger": "de", "nld": "nl", "dut": "nl",
    "rus": "ru", "ukr": "uk", "pol": "pl", "tur": "tr", "ara": "ar", "kor": "ko", "vie": "vi",
}  # fmt: skip
"""ISO 639-3 and 639-2 codes of the languages voxlite's voices and the common Piper voices
speak, as their two-letter codes (the voices' tags have those)."""


def canonical(tag: str) -> str:
    """A BCP-47 tag as the voices' tags are written, lower case: "_" as "-", a three-letter
    language code as its two letters (cmn, zho: zh), without a script subtag (zh-Hans-CN:
    zh-cn, en-Latn-US: en-us) or Mandarin's extended subtag (zh-cmn-CN): clients and
    platforms write them, and no voice's tag has one."""
    primary, *rest = tag.lower().replace("_", "-").split("-")
    rest = [
        s for i, s in enumerate(rest) if not (len(s) == 4 and s.isalpha()) and (i, s) != (0, "cmn")
    ]
    return "-".join([_THREE_LETTERS.get(primary, primary), *rest])


@dataclass(frozen=True)
class VoiceInfo:
    """What ListVoices reports about a voice."""

    name: str
    language: str
    """BCP-47 code: en-US, zh-CN, ja-JP."""
    native_rate: int
    """Sample rate the model produces, in Hz."""
    family: str
    """The engine family that speaks it: "piper", "kokoro"."""
    speakers: tuple[str, ...] = ()
    """Speaker names of a multi-speaker voice, in id order; empty for one speaker."""
    quality: str = ""
    """The voice's own quality label ("medium"), where it has one."""
    gender: str = ""
    """"female", "male", or "" where unknown."""
    word_timestamps: bool = True
    """Whether the voice can say when each word is spoken."""
    files: tuple[Path, ...] = ()
    """The files it was loaded from (errors and reloads name them)."""
    not_recommended: str = ""
    """Why callers should choose another voice ("hard to understand"); "" for a sound voice."""


MIN_RATE, MAX_RATE = 0.25, 4.0
"""The speaking rates a request may ask for, whichever edge it came by."""


def model_rate(asked: float, heard: Sequence[tuple[float, float]]) -> float:
    """The rate to ask a model for so that a listener hears `asked`. `heard` pairs a model rate
    with the rate heard at it (reply seconds at 1.0 over reply seconds at that rate, measured by
    bench.rates), both rising: a model rounds each sound's length up to whole frames, so the
    rate heard lies nearer 1.0 than the rate asked of it (docs/benchmarks.md#speaking-rate-as-
    heard). Past the table's ends, its first or last model rate."""
    models, heards = zip(*heard, strict=True)
    return float(np.interp(asked, heards, models))


@dataclass(frozen=True)
class VoiceRequest:
    """A request's voice settings as the API gives them, not yet checked against a voice."""

    speaking_rate: float = 1.0
    noise_scale: float | None = None
    """None: the voice's default."""
    noise_w: float | None = None
    """None: the voice's default."""
    speaker: str = ""
    """A speaker's name or number; empty: the voice's default speaker."""


class Segment(Protocol):
    """One text segment being synthesized: PCM windows on request, each one short, bounded,
    blocking work that runs on a scheduler worker, so that a caller can stop between any two
    (barge-in, cancellation, a deadline)."""

    @property
    def instant(self) -> bool:
        """Its next window needs no model run (a cached phrase, or a segment whose model work
        is done): the session takes it on the event loop instead of queueing it for a
        worker."""
        ...

    @property
    def words(self) -> Sequence[WordTiming]:
        """When each word is spoken, relative to the segment's first sample, in order: the
        words of every window produced so far are there (later ones may be too), all of them
        once the segment is done; the list only grows (empty if not asked for, or none)."""
        ...

    @property
    def total_samples(self) -> int | None:
        """The segment's length at the native rate once known (None before)."""
        ...

    def next_window(self, ahead: float, *, wide: bool = False) -> np.ndarray | None:
        """The next PCM window (float32, native rate, before gain), possibly empty (a step of
        model work with no audio yet); None when the segment is done. Each call is bounded
        work whatever the text. `ahead`: seconds of audio the listener has in hand, time the
        window may take.
        `wide`: the run has the machine to itself (the scheduler says so), so it may use
        more threads (OrtSettings.wide_threads)."""
        ...

    def next_cost(self, ahead: float) -> float:
        """Worker seconds the next next_window() call is likely to take on one thread (0 when
        there is nothing to go by): the scheduler makes it due that much sooner, so that a
        long sentence's first step is done before the audio in hand runs out."""
        ...

    def batch(self, ahead: float) -> Batch[np.ndarray] | None:
        """The next window as a job the scheduler may run together with other streams' (it is
        then taken), or None: run next_window() instead. Families that cannot batch always
        answer None."""
        ...


class ModelSteps:
    """What every segment whose steps are model work shares (both families' segments): a
    window is instant only once the model work is done, and its word timings are what its
    steps have found."""

    _words: list[WordTiming]

    @property
    def finished(self) -> bool:
        """Every window has been made: the next call returns None."""
        raise NotImplementedError

    @property
    def instant(self) -> bool:
        # The call that finds nothing left must not queue for a worker: on a busy machine it
        # would wait behind other streams' jobs (a Kokoro piece holds a worker for up to a
        # second) before the next segment's first job could queue, and the listener would
        # hear a gap (docs/benchmarks.md, "Capacity: live voices").
        return self.finished

    @property
    def words(self) -> Sequence[WordTiming]:
        return self._words


@dataclass(frozen=True)
class Calibration:
    """What a voice measures once at load, in every family."""

    gain: float
    """Fixed output gain: a stream cannot know its peak before its first window, and one gain
    per voice keeps loudness steady from window to window."""
    cost: float
    """Worker seconds per second of audio on one thread (Voice.cost)."""


class Calibrated:
    """A voice whose gain and cost are its calibration's (engine.Voice's properties)."""

    calibration: Calibration

    @property
    def gain(self) -> float:
        return self.calibration.gain

    @property
    def cost(self) -> float:
        return self.calibration.cost


class Voice(Protocol):
    """A loaded voice of any family. Thread-safe: sessions on worker threads share it."""

    @property
    def info(self) -> VoiceInfo: ...

    @property
    def gain(self) -> float:
        """Fixed output gain (a stream cannot know its peak before its first window)."""
        ...

    @property
    def cost(self) -> float:
        """Worker seconds one second of its audio takes on one thread, measured at load:
        admission and the scheduler weigh a stream by it (a Kokoro stream costs about ten
        Piper streams)."""
        ...

    @property
    def long_jobs(self) -> bool:
        """Its jobs may each hold a worker for seconds (a Kokoro piece is decoded in one go), so
        admission budgets its streams (AdmissionPolicy.heavy_share); Piper's windows are short."""
        ...

    @property
    def first_clause_chars(self) -> int:
        """The fewest characters a reply's first clause needs to be spoken on its own, for the
        sooner first audio; a shorter one goes on with the next clause (call.Segmenter)."""
        ...

    def params(self, request: VoiceRequest) -> Hashable:
        """The request's settings resolved against this voice (frozen: a phrase-cache key);
        raises InvalidRequest naming the field at fault."""
        ...

    def no_reading(self, text: str) -> str | None:
        """The first character of `text` in a script it reads that it has no reading for and
        could only leave out (a rare Han character to a Mandarin voice); None for none."""
        ...

    def segment(
        self, text: str, params: Hashable, *, word_timestamps: bool, long_first: bool = False
    ) -> Segment:
        """`text` ready to be synthesized window by window (nothing runs yet). `long_first`:
        the workers are busy, so a longer first window costs the listener nothing."""
        ...


@dataclass(frozen=True)
class VoiceSource:
    """A voice a family found, before it is loaded."""

    name: str
    family: str
    files: tuple[Path, ...]
    """What it is loaded from; a change to any of them (size, time) means a reload."""
    language: str = ""
    """Its BCP-47 language when the family knows it before loading ("": only once loaded)."""


class Family(Protocol):
    """One engine family: finds its voices and loads them. One object per server, which may
    hold what its voices share (a model, a lock)."""

    name: str

    @property
    def default_voices(self) -> Mapping[str, str]:
        """The voice the family suggests for each of its languages ("zh-CN": "zf_xiaoxiao"),
        when a request names a language and no voice; the server's --language-voices win."""
        ...

    def sources(self, folder: Path | None) -> list[VoiceSource]:
        """The voices it ships (registry packages) and those it finds in `folder`."""
        ...

    def load(self, source: VoiceSource) -> Voice:
        """Load and calibrate one voice (blocking; seconds). Raises ModelError naming the file
        at fault."""
        ...
