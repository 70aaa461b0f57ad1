"""Between the proto and the domain: requests checked and read, events written as responses."""

from __future__ import annotations

import math
from typing import Any

from voxlite.tts.v1 import tts_pb2

from ..audio.settings import AudioSettings, Encoding, InvalidAudioConfig, resolve_audio_settings
from ..call.events import (
    AudioEvent,
    ClearDoneEvent,
    Event,
    FlushDoneEvent,
    FormatEvent,
    SummaryEvent,
    TimestampsEvent,
)
from ..call.opening import CallConfig
from ..engines.engine import MAX_RATE, MIN_RATE, Voice, VoiceRequest
from ..errors import InvalidRequest

ENCODINGS = {
    tts_pb2.AUDIO_ENCODING_UNSPECIFIED: Encoding.OGG_OPUS,
    tts_pb2.AUDIO_ENCODING_OGG_OPUS: Encoding.OGG_OPUS,
    tts_pb2.AUDIO_ENCODING_OPUS: Encoding.OPUS,
    tts_pb2.AUDIO_ENCODING_PCM_S16LE: Encoding.PCM_S16LE,
    tts_pb2.AUDIO_ENCODING_MULAW: Encoding.MULAW,
    tts_pb2.AUDIO_ENCODING_ALAW: Encoding.ALAW,
}
_ENCODING_TO_PROTO = {v: k for k, v in ENCODINGS.items() if k != tts_pb2.AUDIO_ENCODING_UNSPECIFIED}
MAX_NOISE = 2.0


def _check_range(name: str, value: float, low: float, high: float) -> None:
    if math.isnan(value) or not low <= value <= high:
        raise InvalidRequest(f"{name} must be between {low:g} and {high:g}, got {value:g}")


def voice_request(config: tts_pb2.SynthesisConfig) -> VoiceRequest:
    """The voice settings of a request, each checked against its range."""
    rate = config.speaking_rate or 1.0
    _check_range("speaking_rate", rate, MIN_RATE, MAX_RATE)
    noise_scale = config.noise_scale if config.HasField("noise_scale") else None
    noise_w = config.noise_w if config.HasField("noise_w") else None
    if noise_scale is not None:
        _check_range("noise_scale", noise_scale, 0.0, MAX_NOISE)
    if noise_w is not None:
        _check_range("noise_w", noise_w, 0.0, MAX_NOISE)
    return VoiceRequest(rate, noise_scale, noise_w, config.speaker)


def audio_settings(audio: tts_pb2.AudioConfig) -> AudioSettings:
    """The output a request asks for, resolved (defaults filled in) and checked."""
    if audio.encoding not in ENCODINGS:
        raise InvalidRequest(
            f"audio.encoding {audio.encoding} is unknown: use one of "
            + ", ".join(tts_pb2.AudioEncoding.Name(e) for e in ENCODINGS if e)
        )
    try:
        return resolve_audio_settings(
            ENCODINGS[audio.encoding],
            audio.sample_rate_hz,
            audio.bitrate_bps,
            audio.frame_duration_ms,
        )
    except InvalidAudioConfig as exc:
        raise InvalidRequest(f"audio.{exc}") from exc  # names the field: audio.sample_rate_hz


class _CallConfig:
    """A SynthesisConfig as the session opener reads it (call.opening.CallConfig): the voice
    and language at once, the rest read and checked when asked for."""

    def __init__(self, config: tts_pb2.SynthesisConfig) -> None:
        self._config = config
        self.voice = config.voice
        self.language = config.language
        self.word_timestamps = config.enable_word_timestamps

    def voice_request(self) -> VoiceRequest:
        return voice_request(self._config)

    def audio_settings(self) -> AudioSettings:
        return audio_settings(self._config.audio)


def call_config(config: tts_pb2.SynthesisConfig) -> CallConfig:
    """What the session opener reads of a request's config."""
    return _CallConfig(config)


def voice_entry(voice: Voice, *, default: bool, language_default: bool) -> tts_pb2.Voice:
    """How ListVoices describes a voice."""
    info = voice.info
    return tts_pb2.Voice(
        name=info.name,
        language=info.language,
        native_sample_rate_hz=info.native_rate,
        speakers=list(info.speakers),
        quality=info.quality,
        default=default,
        gender=info.gender,
        family=info.family,
        word_timestamps=info.word_timestamps,
        language_default=language_default,
        not_recommended=info.not_recommended,
    )


def _format(event: FormatEvent) -> tts_pb2.AudioFormat:
    opus = event.settings.encoding in (Encoding.OPUS, Encoding.OGG_OPUS)
    return tts_pb2.AudioFormat(
        encoding=_ENCODING_TO_PROTO[event.settings.encoding],
        sample_rate_hz=event.settings.sample_rate_hz,
        channels=1,
        frame_duration_ms=event.settings.frame_ms if opus else 0,
        voice=event.voice,
        native_sample_rate_hz=event.native_rate,
        opus_pre_skip=event.pre_skip,
    )


def _fields(event: Event) -> dict[str, Any]:
    """The response field an event fills; both RPCs' responses have the same ones."""
    if isinstance(event, FormatEvent):
        return {"format": _format(event)}
    if isinstance(event, AudioEvent):
        return {
            "audio": tts_pb2.AudioChunk(
                audio=event.data,
                sequence=event.sequence,
                start_ms=event.start_ms,
                duration_ms=event.duration_ms,
                segment=event.segment,
            )
        }
    if isinstance(event, TimestampsEvent):
        return {
            "timestamps": tts_pb2.Timestamps(
                segment=event.segment,
                text=event.text,
                words=[
                    tts_pb2.WordTimestamp(word=w.word, start_ms=w.start_ms, end_ms=w.end_ms)
                    for w in event.words
                ],
            )
        }
    if isinstance(event, SummaryEvent):
        return {
            "summary": tts_pb2.Summary(
                audio_duration_ms=event.audio_ms,
                segments=event.segments,
                time_to_first_audio_ms=event.time_to_first_audio_ms,
                real_time_factor=event.real_time_factor,
            )
        }
    if isinstance(event, FlushDoneEvent):
        return {"flush_done": tts_pb2.FlushDone(id=event.id)}
    if isinstance(event, ClearDoneEvent):
        return {"clear_done": tts_pb2.ClearDone(id=event.id, last_sequence=event.last_sequence)}
    raise TypeError(event)


def synthesize_response(event: Event) -> tts_pb2.SynthesizeResponse:
    return tts_pb2.SynthesizeResponse(**_fields(event))


def streaming_response(event: Event) -> tts_pb2.StreamingSynthesizeResponse:
    return tts_pb2.StreamingSynthesizeResponse(**_fields(event))
