"""Between the generated protobuf messages and the client's own types."""

from __future__ import annotations

from typing import Any

from typing_extensions import Unpack
from voxlite.tts.v1 import tts_pb2

from ._errors import VoxliteError
from ._events import (
    AudioChunk,
    AudioFormat,
    ClearDone,
    Encoding,
    FlushDone,
    StreamEvent,
    Summary,
    SynthesisEvent,
    Timestamps,
    WordTimestamp,
)
from ._options import SynthesisOptions, check
from ._voices import Voice, VoiceList, VoiceLoadFailure

_TO_PROTO = {
    Encoding.OGG_OPUS: tts_pb2.AUDIO_ENCODING_OGG_OPUS,
    Encoding.OPUS: tts_pb2.AUDIO_ENCODING_OPUS,
    Encoding.PCM_S16LE: tts_pb2.AUDIO_ENCODING_PCM_S16LE,
    Encoding.MULAW: tts_pb2.AUDIO_ENCODING_MULAW,
    Encoding.ALAW: tts_pb2.AUDIO_ENCODING_ALAW,
}
_FROM_PROTO = {v: k for k, v in _TO_PROTO.items()}


def synthesis_config(**options: Unpack[SynthesisOptions]) -> tts_pb2.SynthesisConfig:
    """The request's SynthesisConfig; an option left out or None leaves its field unset, so the
    server's default applies."""
    check(options, SynthesisOptions)
    audio = tts_pb2.AudioConfig(
        encoding=_TO_PROTO[Encoding(options.get("encoding", Encoding.OGG_OPUS))],
        sample_rate_hz=options.get("sample_rate_hz") or 0,
        bitrate_bps=options.get("bitrate_bps") or 0,
        frame_duration_ms=options.get("frame_duration_ms") or 0,
    )
    config = tts_pb2.SynthesisConfig(
        voice=options.get("voice") or "",
        speaker=options.get("speaker") or "",
        audio=audio,
        speaking_rate=options.get("speaking_rate") or 0.0,
        enable_word_timestamps=options.get("word_timestamps", False),
        language=options.get("language") or "",
    )
    # optional fields: unset means the voice's default, which differs from an explicit 0.
    if (noise_scale := options.get("noise_scale")) is not None:
        config.noise_scale = noise_scale
    if (noise_w := options.get("noise_w")) is not None:
        config.noise_w = noise_w
    return config


def event(response: Any) -> StreamEvent:
    """The event a SynthesizeResponse or StreamingSynthesizeResponse carries."""
    kind = response.WhichOneof("response")
    if kind == "audio":
        a = response.audio
        return AudioChunk(a.audio, a.sequence, a.start_ms, a.duration_ms, a.segment)
    if kind == "format":
        f = response.format
        return AudioFormat(
            encoding=_FROM_PROTO[f.encoding],
            sample_rate_hz=f.sample_rate_hz,
            channels=f.channels,
            frame_duration_ms=f.frame_duration_ms,
            voice=f.voice,
            native_sample_rate_hz=f.native_sample_rate_hz,
            opus_pre_skip=f.opus_pre_skip,
        )
    if kind == "timestamps":
        t = response.timestamps
        words = tuple(WordTimestamp(w.word, w.start_ms, w.end_ms) for w in t.words)
        return Timestamps(t.segment, t.text, words)
    if kind == "summary":
        s = response.summary
        return Summary(
            s.audio_duration_ms, s.segments, s.time_to_first_audio_ms, s.real_time_factor
        )
    if kind == "flush_done":
        return FlushDone(response.flush_done.id)
    if kind == "clear_done":
        return ClearDone(response.clear_done.id, response.clear_done.last_sequence)
    raise ValueError(f"the server sent an unknown response kind: {kind!r}")


def synthesis_event(response: Any) -> SynthesisEvent:
    """The event a SynthesizeResponse carries."""
    result = event(response)
    if isinstance(result, FlushDone | ClearDone):
        raise ValueError(f"Synthesize does not answer with {type(result).__name__}")
    return result


def ended(summary: Summary | None) -> Summary:
    """The call's summary; a call that ended without one was broken off."""
    if summary is None:
        raise VoxliteError("the call ended without a summary: the server broke it off")
    return summary


def voice_list(response: tts_pb2.ListVoicesResponse) -> VoiceList:
    voices = tuple(
        Voice(
            name=v.name,
            language=v.language,
            native_sample_rate_hz=v.native_sample_rate_hz,
            speakers=tuple(v.speakers),
            quality=v.quality,
            default=v.default,
            language_default=v.language_default,
            not_recommended=v.not_recommended,
            gender=v.gender,
            family=v.family,
            word_timestamps=v.word_timestamps,
        )
        for v in response.voices
    )
    failed = tuple(VoiceLoadFailure(f.path, f.reason) for f in response.failed)
    return VoiceList(voices, failed, tuple(response.loading))


def text_request(text: str) -> tts_pb2.StreamingSynthesizeRequest:
    return tts_pb2.StreamingSynthesizeRequest(text=text)


def flush_request(id: int) -> tts_pb2.StreamingSynthesizeRequest:
    return tts_pb2.StreamingSynthesizeRequest(flush=tts_pb2.Flush(id=id))


def clear_request(id: int) -> tts_pb2.StreamingSynthesizeRequest:
    return tts_pb2.StreamingSynthesizeRequest(clear=tts_pb2.Clear(id=id))


def config_request(config: tts_pb2.SynthesisConfig) -> tts_pb2.StreamingSynthesizeRequest:
    return tts_pb2.StreamingSynthesizeRequest(config=config)
