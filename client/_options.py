"""The synthesis options both clients, the CLI and the plugins take, declared once."""

from __future__ import annotations

from collections.abc import Mapping

# Not typing's TypedDict: keyword arguments typed by one (Unpack, PEP 692) are Python 3.12's;
# typing_extensions gives both to 3.10 and 3.11.
from typing_extensions import TypedDict

from ._events import Encoding


class VoiceOptions(TypedDict, total=False):
    """How to speak. An option left out, or None, leaves the choice to the server."""

    voice: str | None
    """Voice name as `voices()` lists it ("en_US-joe-medium", "zf_xiaoxiao"); None: the
    default voice of `language`, else the server's default voice."""
    language: str | None
    """BCP-47 language range of the text ("en-US", "zh": any Chinese voice). With no voice the
    server picks that language's default voice; a voice that does not speak it, or a language
    no voice speaks, is `VoiceNotFound`."""
    speaker: str | None
    """Speaker name or id of a multi-speaker voice (`Voice.speakers`); None: its default."""
    speaking_rate: float | None
    """Pace from 0.25 to 4: 1.0 (also None) is the voice's normal pace, 2.0 twice as fast (a
    Piper voice up to about 2; a Kokoro voice's pace moves in steps: the proto's speaking_rate)."""
    noise_scale: float | None
    """Timbre variation from run to run, 0 to 2; None: the voice's default. 0 with noise_w 0
    makes the audio deterministic. Piper voices only."""
    noise_w: float | None
    """Variation of phoneme durations from run to run, 0 to 2; None: the voice's default.
    Piper voices only."""


class FileOptions(VoiceOptions, total=False):
    """`VoiceOptions` and the audio settings a file leaves open (its format sets the encoding)."""

    sample_rate_hz: int | None
    """Output sample rate in Hz; None: the encoding's default (24000; 8000 for G.711)."""
    bitrate_bps: int | None
    """Opus bitrate, 6000 to 510000; None: 32000. Other encodings take None only (the server
    refuses a value with `InvalidRequest`)."""
    frame_duration_ms: int | None
    """Opus frame duration: 10, 20, 40 or 60; None: 20. Other encodings take None only (the
    server refuses a value with `InvalidRequest`)."""


class SynthesisOptions(FileOptions, total=False):
    """Everything a call's config says: `FileOptions`, the encoding and word timestamps."""

    encoding: Encoding | str
    """The audio encoding; default `Encoding.OGG_OPUS`."""
    word_timestamps: bool
    """Send `Timestamps` events (a segment's words, before their audio), for voices that can
    tell; default False."""


def check(options: Mapping[str, object], allowed: type) -> None:
    """Refuse a name that `allowed` (a TypedDict) does not declare, as Python refuses an
    unexpected keyword argument: `**options` alone would take a misspelt one silently."""
    declared: frozenset[str] = getattr(allowed, "__optional_keys__", frozenset())
    unknown = sorted(set(options) - declared)
    if unknown:
        raise TypeError(
            f"unexpected option {unknown[0]!r}: the options are {', '.join(sorted(declared))}"
        )
