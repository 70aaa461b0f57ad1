"""What a call sends, in order, before the API layer turns it into responses."""

from __future__ import annotations

from dataclasses import dataclass

from ..audio.settings import AudioSettings
from ..engines.engine import WordTiming


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
