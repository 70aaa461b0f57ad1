"""The HTTP API's response formats: what each asks of the session, and its body, chunk by chunk."""

from __future__ import annotations

import base64
import json
import struct
from dataclasses import dataclass
from typing import Protocol

from ..audio.mp3 import Mp3Encoder
from ..audio.settings import AudioSettings, Encoding, resolve_audio_settings

RATE = 24000
"""Every format's sample rate: OpenAI defines `pcm` as 24 kHz, and Kokoro speaks at it."""
STREAMING_SIZE = 0xFFFFFFFF
"""The RIFF and data sizes of a WAV whose length is unknown when its header leaves (what
OpenAI's streamed WAV carries; decoders read to the end of the stream)."""


class Body(Protocol):
    """Turns the session's audio chunks into the response body's bytes."""

    def encode(self, data: bytes) -> bytes: ...

    def finish(self) -> bytes: ...


class BodyEncoder:
    """A body of the chunks as they are (PCM, and Ogg Opus pages); mp3's is audio.mp3's
    Mp3Encoder."""

    def encode(self, data: bytes) -> bytes:
        return data

    def finish(self) -> bytes:
        return b""


class WavBody(BodyEncoder):
    """16-bit mono PCM behind a header whose sizes say "to the end of the stream"."""

    def __init__(self) -> None:
        self._header_sent = False

    def encode(self, data: bytes) -> bytes:
        if self._header_sent:
            return data
        self._header_sent = True
        return wav_header() + data

    def finish(self) -> bytes:
        return self.encode(b"")  # a reply with no audio is still a WAV


def wav_header(rate: int = RATE) -> bytes:
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)  # PCM, mono, 16-bit
    return (
        b"RIFF"
        + struct.pack("<I", STREAMING_SIZE)
        + b"WAVEfmt "
        + struct.pack("<I", len(fmt))
        + fmt
        + b"data"
        + struct.pack("<I", STREAMING_SIZE)
    )


class EventsBody(BodyEncoder):
    """OpenAI's server-sent events around another format's bytes (stream_format "sse"): a
    speech.audio.delta event for each chunk, its bytes in base64, and speech.audio.done at the
    end. There are no tokens here: the usage counts the input's characters, as tts-1 bills."""

    def __init__(self, audio: Body, characters: int) -> None:
        self._audio = audio
        self._characters = characters

    def encode(self, data: bytes) -> bytes:
        return self._delta(self._audio.encode(data))

    def finish(self) -> bytes:
        n = self._characters
        usage = {"input_tokens": n, "output_tokens": 0, "total_tokens": n}
        done = event({"type": "speech.audio.done", "usage": usage})
        return self._delta(self._audio.finish()) + done

    @staticmethod
    def _delta(chunk: bytes) -> bytes:
        if not chunk:
            return b""
        return event({"type": "speech.audio.delta", "audio": base64.b64encode(chunk).decode()})


def event(data: dict[str, object]) -> bytes:
    """One server-sent event: its JSON on a data line, and the blank line that ends it."""
    return b"data: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"


EVENTS_TYPE = "text/event-stream"


@dataclass(frozen=True)
class Format:
    """One `response_format`: what the session produces for it, and how the body is made."""

    name: str
    encoding: Encoding
    media_type: str

    @property
    def audio(self) -> AudioSettings:
        return resolve_audio_settings(self.encoding, RATE)

    def body(self) -> Body:
        if self.name == "mp3":
            return Mp3Encoder(RATE)  # MPEG-2 Layer III, 24 kHz mono
        if self.name == "wav":
            return WavBody()
        return BodyEncoder()


FORMATS = {
    f.name: f
    for f in (
        Format("mp3", Encoding.PCM_S16LE, "audio/mpeg"),
        # Whole Ogg pages as the session makes them: their concatenation is a .opus file.
        Format("opus", Encoding.OGG_OPUS, "audio/ogg"),
        Format("wav", Encoding.PCM_S16LE, "audio/wav"),
        Format("pcm", Encoding.PCM_S16LE, "audio/pcm"),
    )
}
UNSERVED_FORMATS = ("aac", "flac")
"""OpenAI's formats that no streaming encoder here writes."""
