"""A stream's audio pipeline: gain, a streaming resampler, then one encoder."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import soxr

from .encoders import EncodedChunk, Int16Array, OpusEncoder, SampleEncoder, StreamEncoder
from .settings import (
    OPUS_ENCODINGS,
    AudioSettings,
    Encoding,
    InvalidAudioConfig,
    resolve_audio_settings,
)

Float32Array = npt.NDArray[np.float32]
# Symmetric full scale: +1.0 -> 32767 and -1.0 -> -32767, so no value can overflow int16.
_INT16_SCALE = 32767.0


class AudioPipeline:
    """gain -> streaming resampler -> encoder, for one stream.

    Every method returns the chunks to send right away; nothing is held back beyond what the
    resampler's filter and a partial codec frame need.
    """

    def __init__(self, settings: AudioSettings, *, native_rate: int, gain: float = 1.0) -> None:
        # Re-resolve so hand-built settings are validated (and 0s defaulted) too.
        self.settings = resolve_audio_settings(
            settings.encoding, settings.sample_rate_hz, settings.bitrate_bps, settings.frame_ms
        )
        if isinstance(native_rate, bool) or not isinstance(native_rate, int) or native_rate <= 0:
            raise InvalidAudioConfig(f"native_rate {native_rate!r} must be a positive integer")
        if not math.isfinite(gain):
            raise InvalidAudioConfig(f"gain {gain!r} must be a finite number")
        self.native_rate = native_rate
        self.gain = float(gain)
        out_rate = self.settings.sample_rate_hz
        self._resampler: soxr.ResampleStream | None = None
        if native_rate != out_rate:
            self._resampler = soxr.ResampleStream(native_rate, out_rate, 1, dtype="float32")
        encoding = self.settings.encoding
        self._encoder: StreamEncoder
        if encoding in OPUS_ENCODINGS:
            self._encoder = OpusEncoder(self.settings, ogg=encoding is Encoding.OGG_OPUS)
        else:
            self._encoder = SampleEncoder(encoding)
        self._finished = False

    @property
    def pre_skip(self) -> int:
        """Opus encoder look-ahead in output-rate samples (0 for other encodings)."""
        return self._encoder.pre_skip

    @property
    def finished(self) -> bool:
        return self._finished

    def _check_open(self) -> None:
        if self._finished:
            raise RuntimeError("audio pipeline already finished")

    def _prepare(self, pcm: npt.ArrayLike) -> Float32Array:
        samples = np.asarray(pcm)
        if samples.ndim != 1:
            raise ValueError(f"pcm must be 1-D mono samples, got shape {samples.shape}")
        if samples.dtype.kind != "f":
            raise TypeError(f"pcm must be floating point samples, got {samples.dtype}")
        # Own float32 copy: the caller's buffer is never modified.
        x = samples.astype(np.float32)
        if self.gain != 1.0:
            x *= np.float32(self.gain)
        # Clipping before resampling keeps non-finite or huge vocoder output out of soxr.
        np.nan_to_num(x, copy=False, nan=0.0, posinf=1.0, neginf=-1.0)
        np.clip(x, -1.0, 1.0, out=x)
        return x

    @staticmethod
    def _to_int16(x: npt.NDArray[np.floating[Any]]) -> Int16Array:
        # Clip again: the resampler's filter can overshoot full scale. Round, not truncate;
        # float64 so rounding does not depend on float32 precision.
        scaled = np.clip(x.astype(np.float64), -1.0, 1.0) * _INT16_SCALE
        return np.rint(scaled).astype(np.int16)

    def _drain(self) -> Int16Array:
        if self._resampler is None:
            return np.zeros(0, dtype=np.int16)
        tail = self._resampler.resample_chunk(np.zeros(0, dtype=np.float32), last=True)
        # After last=True the stream only accepts new input once cleared.
        self._resampler.clear()
        return self._to_int16(tail)

    def push(self, pcm: npt.ArrayLike) -> list[EncodedChunk]:
        """Feed float32 mono samples at native_rate (any length); returns what is ready."""
        self._check_open()
        x = self._prepare(pcm)
        if x.size == 0:
            return []
        if self._resampler is not None:
            x = self._resampler.resample_chunk(x)
        return self._encoder.encode(self._to_int16(x))

    def flush(self) -> list[EncodedChunk]:
        """Emit everything pushed so far (padding Opus with silence); the stream goes on."""
        self._check_open()
        return self._encoder.flush(self._drain())

    def finish(self) -> list[EncodedChunk]:
        """flush() and end the stream (Ogg: end-of-stream page); nothing may follow."""
        self._check_open()
        chunks = self._encoder.finish(self._drain())
        self._finished = True
        return chunks

    def discard(self) -> None:
        """Barge-in: drop buffered audio (resampler, partial frame) unsent; the stream goes on."""
        if self._finished:
            return  # nothing is buffered after finish; a late barge-in is harmless
        if self._resampler is not None:
            self._resampler.clear()
        self._encoder.discard()
