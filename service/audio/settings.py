"""A stream's output settings: encoding, rate, Opus bitrate and frame, checked and resolved."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Encoding(enum.Enum):
    """Output encodings a stream can ask for."""

    OGG_OPUS = enum.auto()
    OPUS = enum.auto()
    PCM_S16LE = enum.auto()
    MULAW = enum.auto()
    ALAW = enum.auto()


class InvalidAudioConfig(ValueError):
    """The requested audio settings cannot be served; the message starts with the AudioConfig
    field at fault (its name in the API) and says what to change."""


OPUS_SAMPLE_RATES = (8000, 12000, 16000, 24000, 48000)
OPUS_FRAME_MS = (10, 20, 40, 60)
OPUS_MIN_BITRATE = 6000
OPUS_MAX_BITRATE = 510000
DEFAULT_OPUS_RATE = 24000
DEFAULT_OPUS_BITRATE = 32000
DEFAULT_OPUS_FRAME_MS = 20
OPUS_COMPLEXITY = 5
"""The encoder's effort (libopus: 0 to 10, default 10). Every live stream is encoded on the
event loop, beside the model on the same cores. Told that its input is speech, libopus keeps its
speech mode (hybrid) at any complexity, so a lower one costs much less for nearly the same
quality; bench/opus.py chose 5 (docs/benchmarks.md#opus-encoder)."""
DEFAULT_PCM_RATE = 24000
PCM_MIN_RATE = 8000
PCM_MAX_RATE = 48000
G711_RATE = 8000

OPUS_ENCODINGS = (Encoding.OGG_OPUS, Encoding.OPUS)
# Ogg Opus granules always count 48 kHz samples (RFC 7845 4).
OGG_RATE = 48000
# libopus' recommended output buffer; the opuslib class would cap packets at the PCM input size,
# which silently lowers high bitrates at short frames and low rates.
MAX_PACKET_BYTES = 4000


def _choices(values: tuple[int, ...]) -> str:
    return ", ".join(str(v) for v in values[:-1]) + f" or {values[-1]}"


@dataclass(frozen=True)
class AudioSettings:
    """Resolved output settings of one stream (build with resolve_audio_settings)."""

    encoding: Encoding
    sample_rate_hz: int  # output rate
    bitrate_bps: int  # Opus only; 0 otherwise
    frame_ms: int  # Opus only; 0 otherwise


def _check_int(field: str, value: object) -> int:
    # bool is an int subclass, but True as a sample rate is surely a caller bug.
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidAudioConfig(f"{field} {value!r} must be an integer (0 for the default)")
    return value


def resolve_audio_settings(
    encoding: Encoding, sample_rate_hz: int = 0, bitrate_bps: int = 0, frame_ms: int = 0
) -> AudioSettings:
    """Fill in defaults (0 means default) and validate; raises InvalidAudioConfig."""
    if not isinstance(encoding, Encoding):
        raise InvalidAudioConfig(
            f"encoding {encoding!r} is not supported: use " + ", ".join(e.name for e in Encoding)
        )
    rate = _check_int("sample_rate_hz", sample_rate_hz)
    bitrate = _check_int("bitrate_bps", bitrate_bps)
    frame = _check_int("frame_duration_ms", frame_ms)
    name = encoding.name

    if encoding in OPUS_ENCODINGS:
        rate = rate or DEFAULT_OPUS_RATE
        if rate not in OPUS_SAMPLE_RATES:
            raise InvalidAudioConfig(
                f"sample_rate_hz {rate} cannot be carried by Opus: use "
                f"{_choices(OPUS_SAMPLE_RATES)} (or 0 for {DEFAULT_OPUS_RATE})"
            )
        bitrate = bitrate or DEFAULT_OPUS_BITRATE
        if not OPUS_MIN_BITRATE <= bitrate <= OPUS_MAX_BITRATE:
            raise InvalidAudioConfig(
                f"bitrate_bps {bitrate} is out of range for Opus: use "
                f"{OPUS_MIN_BITRATE}..{OPUS_MAX_BITRATE} (or 0 for {DEFAULT_OPUS_BITRATE})"
            )
        frame = frame or DEFAULT_OPUS_FRAME_MS
        if frame not in OPUS_FRAME_MS:
            raise InvalidAudioConfig(
                f"frame_duration_ms {frame} is not an Opus frame duration: use "
                f"{_choices(OPUS_FRAME_MS)} (or 0 for {DEFAULT_OPUS_FRAME_MS})"
            )
        return AudioSettings(encoding, rate, bitrate, frame)

    # bitrate and frame duration mean nothing for sample formats; a value there is a mistake.
    if bitrate:
        raise InvalidAudioConfig(
            f"bitrate_bps {bitrate} applies only to OGG_OPUS and OPUS: use 0 for {name}"
        )
    if frame:
        raise InvalidAudioConfig(
            f"frame_duration_ms {frame} applies only to OGG_OPUS and OPUS: use 0 for {name}"
        )
    if encoding is Encoding.PCM_S16LE:
        rate = rate or DEFAULT_PCM_RATE
        if not PCM_MIN_RATE <= rate <= PCM_MAX_RATE:
            raise InvalidAudioConfig(
                f"sample_rate_hz {rate} is out of range for {name}: use "
                f"{PCM_MIN_RATE}..{PCM_MAX_RATE} (or 0 for {DEFAULT_PCM_RATE})"
            )
        return AudioSettings(encoding, rate, 0, 0)

    # G.711 (MULAW, ALAW) is defined at 8 kHz only.
    rate = rate or G711_RATE
    if rate != G711_RATE:
        raise InvalidAudioConfig(
            f"sample_rate_hz {rate} cannot be carried by {name}: use {G711_RATE} (or 0)"
        )
    return AudioSettings(encoding, rate, 0, 0)
