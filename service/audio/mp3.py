"""MP3 through LAME: the HTTP API's mp3 bodies and the client's .mp3 files."""

from __future__ import annotations

import lameenc

MP3_KBPS = 64
"""Constant bitrate for one voice, not music (LAME's own default, 128, is for stereo music)."""
MP3_QUALITY = 5
"""LAME's effort (2 best, 7 fastest): every stream's mp3 is encoded on the event loop, beside
the model on the same cores, and 5 is LAME's own standard for speech at this bitrate."""


class Mp3Encoder:
    """16-bit mono PCM at `rate` Hz to MPEG Layer III frames, each call's whole frames at once
    (LAME holds the rest of a frame for the next call, and `finish()` pads out the last)."""

    def __init__(self, rate: int) -> None:
        self._lame = lameenc.Encoder()
        self._lame.set_bit_rate(MP3_KBPS)
        self._lame.set_in_sample_rate(rate)
        self._lame.set_channels(1)
        self._lame.set_quality(MP3_QUALITY)

    def encode(self, pcm: bytes) -> bytes:
        return bytes(self._lame.encode(pcm)) if pcm else b""

    def finish(self) -> bytes:
        return bytes(self._lame.flush())
