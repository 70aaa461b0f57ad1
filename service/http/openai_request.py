"""The HTTP API's request body, read and checked in OpenAI's field names; its voice names."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..audio.settings import AudioSettings
from ..call.markup import spoken
from ..call.textlang import has_words
from ..engines.engine import MAX_RATE, MIN_RATE, VoiceRequest
from ..errors import InvalidRequest
from .openai_audio import FORMATS, UNSERVED_FORMATS, Format

OPENAI_VOICES = (
    *("alloy", "ash", "ballad", "coral", "echo", "fable", "nova"),
    *("onyx", "sage", "shimmer", "verse", "marin", "cedar"),
)
"""OpenAI's voice names: each means the default voice of the request's language."""
MODELS = ("voxlite", "tts-1", "tts-1-hd", "gpt-4o-mini-tts")
"""What GET /v1/models lists. `model` chooses nothing here (the voice decides the engine), so
any name is taken: a tool set up for OpenAI or another server works unchanged."""
FIELDS = (
    *("model", "input", "voice", "response_format", "speed", "instructions", "stream_format"),
    *("language", "stream"),
)
"""OpenAI's fields, voxlite's `language`, and `stream` (Kokoro-FastAPI's: the body always
streams here)."""


class BadField(InvalidRequest):
    """A field of the body that cannot be served (400); `param` names it."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param


@dataclass(frozen=True)
class Speech:
    """A checked POST /v1/audio/speech body."""

    input: str
    voice: str
    """A voxlite voice name, or "" for the language's default (OpenAI's names come here so)."""
    language: str
    """As asked for; "" with no voice either: the script of the input's first segment picks
    the voice, as for a Synthesize call."""
    format: Format
    speed: float
    events: bool = False
    """stream_format "sse": the audio goes as OpenAI's server-sent events (speech.audio.delta,
    speech.audio.done), each chunk base64 in JSON, rather than as the body itself."""

    # What the session opener reads of it (call.opening.CallConfig), as a gRPC caller's
    # SynthesisConfig for the same speech would give it.

    @property
    def word_timestamps(self) -> bool:
        return False  # OpenAI's speech body has no word times

    def voice_request(self) -> VoiceRequest:
        """The speed as the gRPC API's 32-bit float carries it, so that a speed asked for at
        either edge is one phrase-cache key."""
        return VoiceRequest(float(np.float32(self.speed)))

    def audio_settings(self) -> AudioSettings:
        return self.format.audio


def _text(body: dict[str, object], name: str, default: str = "") -> str:
    value = body.get(name, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise BadField(name, f"{name} must be a string, got {type(value).__name__}")
    return value


def read_speech(body: object, max_chars: int) -> Speech:
    """The body of POST /v1/audio/speech, checked field by field; raises BadField."""
    if not isinstance(body, dict):
        raise BadField("", 'the body must be a JSON object: {"input": ..., "voice": ...}')
    unknown = [k for k in body if k not in FIELDS]
    if unknown:
        raise BadField(
            unknown[0], f"unknown field {unknown[0][:40]!r}: the fields are {', '.join(FIELDS)}"
        )
    _text(body, "model")  # any name: see MODELS
    _text(body, "instructions")  # no voice here takes instructions: accepted, unused
    text = _text(body, "input")
    if "input" not in body:
        raise BadField("input", "input is missing: put the text to speak in input")
    if not text.strip():
        raise BadField("input", "input is empty: put the text to speak in input")
    lone = next((i for i, c in enumerate(text) if "\ud800" <= c <= "\udfff"), None)
    if lone is not None:  # JSON's \ud800 escape alone: no text, and no voice reads it
        raise BadField(
            "input",
            f"input has an unpaired surrogate (\\u{ord(text[lone]):04x}) at character {lone}: "
            "escape a character beyond U+FFFF as its pair of surrogates, or send it as UTF-8",
        )
    if not has_words(spoken(text)):
        raise BadField(
            "input",
            "input has nothing to speak, only punctuation, spaces, markup, emoji or invisible "
            "characters: put the text to speak in input",
        )
    if len(text) > max_chars:
        raise BadField(
            "input",
            f"input has {len(text)} characters, over this server's limit of {max_chars} "
            "(--max-text-chars): split it into several requests",
        )
    voice = body.get("voice")
    if isinstance(voice, dict):  # OpenAI's custom voices come as {"id": ...}
        voice = voice.get("id")
        if not isinstance(voice, str):
            raise BadField("voice", "voice must be a name, or an object whose id is a name")
    voice = _text({"voice": voice}, "voice").strip()
    language = _text(body, "language").strip()
    if voice.lower() in OPENAI_VOICES:
        voice = ""
    return Speech(text, voice, language, _format(body), _speed(body), _events(body))


def _format(body: dict[str, object]) -> Format:
    name = _text(body, "response_format", "mp3") or "mp3"
    served = ", ".join(FORMATS)
    if name in UNSERVED_FORMATS:
        raise BadField(
            "response_format",
            f"response_format {name} is not served here (no streaming {name} encoder): use "
            f"one of {served}",
        )
    if name not in FORMATS:
        raise BadField(
            "response_format", f"response_format {name[:20]!r} is unknown: use one of {served}"
        )
    return FORMATS[name]


def _events(body: dict[str, object]) -> bool:
    """Whether the audio goes as server-sent events (stream_format "sse") or as the body."""
    stream_format = _text(body, "stream_format", "audio") or "audio"
    if stream_format not in ("audio", "sse"):
        raise BadField(
            "stream_format",
            f"stream_format {stream_format[:20]!r} is unknown: use audio (the body is the audio, "
            "streamed as it is made) or sse (OpenAI's server-sent events, the audio in base64)",
        )
    stream = body.get("stream", True)
    if not isinstance(stream, bool):
        raise BadField("stream", "stream must be true or false (the body streams either way)")
    return stream_format == "sse"


def _speed(body: dict[str, object]) -> float:
    speed = body.get("speed", 1.0)
    if speed is None:
        return 1.0
    if isinstance(speed, bool) or not isinstance(speed, (int, float)):
        raise BadField("speed", f"speed must be a number from {MIN_RATE:g} to {MAX_RATE:g}")
    try:
        value = float(speed)
    except OverflowError:  # an integer of hundreds of digits
        value = math.inf
    if not (math.isfinite(value) and MIN_RATE <= value <= MAX_RATE):
        raise BadField(
            "speed", f"speed must be between {MIN_RATE:g} and {MAX_RATE:g}, got {value:g}"
        )
    return value
