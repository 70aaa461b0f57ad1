from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AudioEncoding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AUDIO_ENCODING_UNSPECIFIED: _ClassVar[AudioEncoding]
    AUDIO_ENCODING_OGG_OPUS: _ClassVar[AudioEncoding]
    AUDIO_ENCODING_OPUS: _ClassVar[AudioEncoding]
    AUDIO_ENCODING_PCM_S16LE: _ClassVar[AudioEncoding]
    AUDIO_ENCODING_MULAW: _ClassVar[AudioEncoding]
    AUDIO_ENCODING_ALAW: _ClassVar[AudioEncoding]
AUDIO_ENCODING_UNSPECIFIED: AudioEncoding
AUDIO_ENCODING_OGG_OPUS: AudioEncoding
AUDIO_ENCODING_OPUS: AudioEncoding
AUDIO_ENCODING_PCM_S16LE: AudioEncoding
AUDIO_ENCODING_MULAW: AudioEncoding
AUDIO_ENCODING_ALAW: AudioEncoding

class AudioConfig(_message.Message):
    __slots__ = ("encoding", "sample_rate_hz", "bitrate_bps", "frame_duration_ms")
    ENCODING_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_RATE_HZ_FIELD_NUMBER: _ClassVar[int]
    BITRATE_BPS_FIELD_NUMBER: _ClassVar[int]
    FRAME_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    encoding: AudioEncoding
    sample_rate_hz: int
    bitrate_bps: int
    frame_duration_ms: int
    def __init__(self, encoding: _Optional[_Union[AudioEncoding, str]] = ..., sample_rate_hz: _Optional[int] = ..., bitrate_bps: _Optional[int] = ..., frame_duration_ms: _Optional[int] = ...) -> None: ...

class SynthesisConfig(_message.Message):
    __slots__ = ("voice", "language", "speaker", "audio", "speaking_rate", "noise_scale", "noise_w", "enable_word_timestamps")
    VOICE_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    SPEAKER_FIELD_NUMBER: _ClassVar[int]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    SPEAKING_RATE_FIELD_NUMBER: _ClassVar[int]
    NOISE_SCALE_FIELD_NUMBER: _ClassVar[int]
    NOISE_W_FIELD_NUMBER: _ClassVar[int]
    ENABLE_WORD_TIMESTAMPS_FIELD_NUMBER: _ClassVar[int]
    voice: str
    language: str
    speaker: str
    audio: AudioConfig
    speaking_rate: float
    noise_scale: float
    noise_w: float
    enable_word_timestamps: bool
    def __init__(self, voice: _Optional[str] = ..., language: _Optional[str] = ..., speaker: _Optional[str] = ..., audio: _Optional[_Union[AudioConfig, _Mapping]] = ..., speaking_rate: _Optional[float] = ..., noise_scale: _Optional[float] = ..., noise_w: _Optional[float] = ..., enable_word_timestamps: _Optional[bool] = ...) -> None: ...

class StreamingSynthesizeRequest(_message.Message):
    __slots__ = ("config", "text", "flush", "clear")
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FLUSH_FIELD_NUMBER: _ClassVar[int]
    CLEAR_FIELD_NUMBER: _ClassVar[int]
    config: SynthesisConfig
    text: str
    flush: Flush
    clear: Clear
    def __init__(self, config: _Optional[_Union[SynthesisConfig, _Mapping]] = ..., text: _Optional[str] = ..., flush: _Optional[_Union[Flush, _Mapping]] = ..., clear: _Optional[_Union[Clear, _Mapping]] = ...) -> None: ...

class Flush(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    def __init__(self, id: _Optional[int] = ...) -> None: ...

class Clear(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    def __init__(self, id: _Optional[int] = ...) -> None: ...

class SynthesizeRequest(_message.Message):
    __slots__ = ("text", "config")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    text: str
    config: SynthesisConfig
    def __init__(self, text: _Optional[str] = ..., config: _Optional[_Union[SynthesisConfig, _Mapping]] = ...) -> None: ...

class SynthesizeResponse(_message.Message):
    __slots__ = ("format", "audio", "timestamps", "summary")
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMPS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    format: AudioFormat
    audio: AudioChunk
    timestamps: Timestamps
    summary: Summary
    def __init__(self, format: _Optional[_Union[AudioFormat, _Mapping]] = ..., audio: _Optional[_Union[AudioChunk, _Mapping]] = ..., timestamps: _Optional[_Union[Timestamps, _Mapping]] = ..., summary: _Optional[_Union[Summary, _Mapping]] = ...) -> None: ...

class StreamingSynthesizeResponse(_message.Message):
    __slots__ = ("format", "audio", "timestamps", "flush_done", "clear_done", "summary")
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMPS_FIELD_NUMBER: _ClassVar[int]
    FLUSH_DONE_FIELD_NUMBER: _ClassVar[int]
    CLEAR_DONE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    format: AudioFormat
    audio: AudioChunk
    timestamps: Timestamps
    flush_done: FlushDone
    clear_done: ClearDone
    summary: Summary
    def __init__(self, format: _Optional[_Union[AudioFormat, _Mapping]] = ..., audio: _Optional[_Union[AudioChunk, _Mapping]] = ..., timestamps: _Optional[_Union[Timestamps, _Mapping]] = ..., flush_done: _Optional[_Union[FlushDone, _Mapping]] = ..., clear_done: _Optional[_Union[ClearDone, _Mapping]] = ..., summary: _Optional[_Union[Summary, _Mapping]] = ...) -> None: ...

class AudioFormat(_message.Message):
    __slots__ = ("encoding", "sample_rate_hz", "channels", "frame_duration_ms", "voice", "native_sample_rate_hz", "opus_pre_skip")
    ENCODING_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_RATE_HZ_FIELD_NUMBER: _ClassVar[int]
    CHANNELS_FIELD_NUMBER: _ClassVar[int]
    FRAME_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    VOICE_FIELD_NUMBER: _ClassVar[int]
    NATIVE_SAMPLE_RATE_HZ_FIELD_NUMBER: _ClassVar[int]
    OPUS_PRE_SKIP_FIELD_NUMBER: _ClassVar[int]
    encoding: AudioEncoding
    sample_rate_hz: int
    channels: int
    frame_duration_ms: int
    voice: str
    native_sample_rate_hz: int
    opus_pre_skip: int
    def __init__(self, encoding: _Optional[_Union[AudioEncoding, str]] = ..., sample_rate_hz: _Optional[int] = ..., channels: _Optional[int] = ..., frame_duration_ms: _Optional[int] = ..., voice: _Optional[str] = ..., native_sample_rate_hz: _Optional[int] = ..., opus_pre_skip: _Optional[int] = ...) -> None: ...

class AudioChunk(_message.Message):
    __slots__ = ("audio", "sequence", "start_ms", "duration_ms", "segment")
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    START_MS_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    SEGMENT_FIELD_NUMBER: _ClassVar[int]
    audio: bytes
    sequence: int
    start_ms: float
    duration_ms: float
    segment: int
    def __init__(self, audio: _Optional[bytes] = ..., sequence: _Optional[int] = ..., start_ms: _Optional[float] = ..., duration_ms: _Optional[float] = ..., segment: _Optional[int] = ...) -> None: ...

class Timestamps(_message.Message):
    __slots__ = ("segment", "text", "words")
    SEGMENT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    WORDS_FIELD_NUMBER: _ClassVar[int]
    segment: int
    text: str
    words: _containers.RepeatedCompositeFieldContainer[WordTimestamp]
    def __init__(self, segment: _Optional[int] = ..., text: _Optional[str] = ..., words: _Optional[_Iterable[_Union[WordTimestamp, _Mapping]]] = ...) -> None: ...

class WordTimestamp(_message.Message):
    __slots__ = ("word", "start_ms", "end_ms")
    WORD_FIELD_NUMBER: _ClassVar[int]
    START_MS_FIELD_NUMBER: _ClassVar[int]
    END_MS_FIELD_NUMBER: _ClassVar[int]
    word: str
    start_ms: float
    end_ms: float
    def __init__(self, word: _Optional[str] = ..., start_ms: _Optional[float] = ..., end_ms: _Optional[float] = ...) -> None: ...

class FlushDone(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    def __init__(self, id: _Optional[int] = ...) -> None: ...

class ClearDone(_message.Message):
    __slots__ = ("id", "last_sequence")
    ID_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    id: int
    last_sequence: int
    def __init__(self, id: _Optional[int] = ..., last_sequence: _Optional[int] = ...) -> None: ...

class Summary(_message.Message):
    __slots__ = ("audio_duration_ms", "segments", "time_to_first_audio_ms", "real_time_factor")
    AUDIO_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    SEGMENTS_FIELD_NUMBER: _ClassVar[int]
    TIME_TO_FIRST_AUDIO_MS_FIELD_NUMBER: _ClassVar[int]
    REAL_TIME_FACTOR_FIELD_NUMBER: _ClassVar[int]
    audio_duration_ms: float
    segments: int
    time_to_first_audio_ms: float
    real_time_factor: float
    def __init__(self, audio_duration_ms: _Optional[float] = ..., segments: _Optional[int] = ..., time_to_first_audio_ms: _Optional[float] = ..., real_time_factor: _Optional[float] = ...) -> None: ...

class ListVoicesRequest(_message.Message):
    __slots__ = ("language",)
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    language: str
    def __init__(self, language: _Optional[str] = ...) -> None: ...

class ListVoicesResponse(_message.Message):
    __slots__ = ("voices", "failed", "loading")
    VOICES_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    LOADING_FIELD_NUMBER: _ClassVar[int]
    voices: _containers.RepeatedCompositeFieldContainer[Voice]
    failed: _containers.RepeatedCompositeFieldContainer[VoiceLoadError]
    loading: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, voices: _Optional[_Iterable[_Union[Voice, _Mapping]]] = ..., failed: _Optional[_Iterable[_Union[VoiceLoadError, _Mapping]]] = ..., loading: _Optional[_Iterable[str]] = ...) -> None: ...

class Voice(_message.Message):
    __slots__ = ("name", "language", "native_sample_rate_hz", "speakers", "quality", "default", "gender", "family", "word_timestamps", "language_default", "not_recommended")
    NAME_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    NATIVE_SAMPLE_RATE_HZ_FIELD_NUMBER: _ClassVar[int]
    SPEAKERS_FIELD_NUMBER: _ClassVar[int]
    QUALITY_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_FIELD_NUMBER: _ClassVar[int]
    GENDER_FIELD_NUMBER: _ClassVar[int]
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    WORD_TIMESTAMPS_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_DEFAULT_FIELD_NUMBER: _ClassVar[int]
    NOT_RECOMMENDED_FIELD_NUMBER: _ClassVar[int]
    name: str
    language: str
    native_sample_rate_hz: int
    speakers: _containers.RepeatedScalarFieldContainer[str]
    quality: str
    default: bool
    gender: str
    family: str
    word_timestamps: bool
    language_default: bool
    not_recommended: str
    def __init__(self, name: _Optional[str] = ..., language: _Optional[str] = ..., native_sample_rate_hz: _Optional[int] = ..., speakers: _Optional[_Iterable[str]] = ..., quality: _Optional[str] = ..., default: _Optional[bool] = ..., gender: _Optional[str] = ..., family: _Optional[str] = ..., word_timestamps: _Optional[bool] = ..., language_default: _Optional[bool] = ..., not_recommended: _Optional[str] = ...) -> None: ...

class VoiceLoadError(_message.Message):
    __slots__ = ("path", "reason")
    PATH_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    path: str
    reason: str
    def __init__(self, path: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...
