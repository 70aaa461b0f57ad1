"""A call's events and the health status, as plain frozen dataclasses free of protobuf."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TypeAlias


class _StrEnum(str, Enum):
    """A str enum whose text is its value, as `enum.StrEnum` does (Python 3.11; we run on 3.10)."""

    def __str__(self) -> str:
        return str(self.value)


class Encoding(_StrEnum):
    """How audio is encoded on the wire (AudioEncoding in the proto)."""

    OGG_OPUS = "ogg_opus"
    """Ogg Opus: each chunk holds whole Ogg pages; the chunks concatenated are a .opus file."""
    OPUS = "opus"
    """Raw Opus packets, one per chunk, for callers that do their own framing."""
    PCM_S16LE = "pcm_s16le"
    """16-bit signed little-endian mono PCM."""
    MULAW = "mulaw"
    """G.711 mu-law, 8000 Hz."""
    ALAW = "alaw"
    """G.711 A-law, 8000 Hz."""

    @classmethod
    def _missing_(cls, value: object) -> Encoding:
        """Any case, and the proto's names: "PCM_S16LE" and "AUDIO_ENCODING_PCM_S16LE" too."""
        name = str(value).lower().removeprefix("audio_encoding_")
        for member in cls:
            if member.value == name:
                return member
        raise ValueError(f"encoding {value!r} is not one of {', '.join(m.value for m in cls)}")


class HealthStatus(_StrEnum):
    """The answer of the standard gRPC health check."""

    UNKNOWN = "UNKNOWN"
    SERVING = "SERVING"
    NOT_SERVING = "NOT_SERVING"
    SERVICE_UNKNOWN = "SERVICE_UNKNOWN"


@dataclass(frozen=True)
class AudioFormat:
    """The format of the audio that follows; always the first event of a call."""

    encoding: Encoding
    sample_rate_hz: int
    channels: int
    frame_duration_ms: int
    """Opus frame duration (Opus encodings only, else 0)."""
    voice: str
    """The voice that speaks, resolved when the request named none."""
    native_sample_rate_hz: int
    opus_pre_skip: int
    """Raw Opus only: samples of encoder delay a decoder should drop."""


@dataclass(frozen=True)
class AudioChunk:
    """A chunk of encoded audio; `sequence` counts 0, 1, 2, ... without gaps."""

    audio: bytes
    sequence: int
    start_ms: float
    duration_ms: float
    segment: int
    """Index of the text segment (sentence or clause) this audio belongs to."""


@dataclass(frozen=True)
class WordTimestamp:
    """When one word is spoken, in milliseconds from the start of the output stream."""

    word: str
    start_ms: float
    end_ms: float


@dataclass(frozen=True)
class Timestamps:
    """Words of one segment with their times (asked for with `word_timestamps=True`): all of
    them, or the next of them (a long segment's may come in several events)."""

    segment: int
    text: str
    words: tuple[WordTimestamp, ...]


@dataclass(frozen=True)
class Summary:
    """Totals for the call; always the last event."""

    audio_duration_ms: float
    segments: int
    time_to_first_audio_ms: float
    """Server side, from the first speakable text to the first audio chunk."""
    real_time_factor: float
    """Processing time divided by audio duration: below 1 is faster than real time."""


@dataclass(frozen=True)
class FlushDone:
    """All audio of the text sent before the flush with this id has been sent."""

    id: int


@dataclass(frozen=True)
class ClearDone:
    """The clear with this id took effect; `last_sequence` is -1 when no audio had been sent."""

    id: int
    last_sequence: int


SynthesisEvent: TypeAlias = AudioFormat | AudioChunk | Timestamps | Summary
"""What `synthesize()` yields."""
StreamEvent: TypeAlias = AudioFormat | AudioChunk | Timestamps | Summary | FlushDone | ClearDone
"""What iterating a stream session yields."""
