"""What `voices()` returns: the server's voices and the voice files it could not load."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Voice:
    """A voice the server can speak with; pass its `name` as `voice=`."""

    name: str
    language: str
    native_sample_rate_hz: int
    speakers: tuple[str, ...]
    """Speaker names of a multi-speaker voice; empty for single-speaker voices."""
    quality: str
    default: bool
    """True for the voice used when a request names none."""
    language_default: bool = False
    """True for the voice a request naming its language and no voice gets."""
    not_recommended: str = ""
    """Why the server advises against this voice ("hard to understand"); "" for a sound one."""
    gender: str = ""
    """"female", "male", or "" where unknown."""
    family: str = ""
    """The engine family that speaks it: "piper" or "kokoro"."""
    word_timestamps: bool = False
    """Whether it can send word timestamps (SynthesisOptions' word_timestamps)."""


@dataclass(frozen=True)
class VoiceLoadFailure:
    """A voice file the server found but could not load."""

    path: str
    reason: str


@dataclass(frozen=True)
class VoiceList:
    """What `voices()` returns: iterate it for the voices; `failed` lists broken voice files,
    `loading` the names of voices the server is still loading (after SERVING)."""

    voices: tuple[Voice, ...]
    failed: tuple[VoiceLoadFailure, ...] = ()
    loading: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[Voice]:
        return iter(self.voices)

    def __len__(self) -> int:
        return len(self.voices)
