"""Per-stream audio pipeline: gain, streaming resampler, then one Opus/Ogg/PCM/G.711 encoder."""

from __future__ import annotations

import enum
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import opuslib
import opuslib.api.encoder
import soxr

from .ogg import OggOpusWriter

# audioop left the stdlib in 3.13 (audioop-lts provides it there); 3.11/3.12 warn on import, and
# our test config turns warnings into errors, so silence exactly that one warning.
with warnings.catch_warnings():
    warnings.filterwarnings(
        "ignore", message=r"'audioop' is deprecated", category=DeprecationWarning
    )
    import audioop

__all__ = [
    "AudioPipeline",
    "AudioSettings",
    "EncodedChunk",
    "Encoding",
    "InvalidAudioConfig",
    "resolve_audio_settings",
]

Int16Array = npt.NDArray[np.int16]
Float32Array = npt.NDArray[np.float32]


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
speech mode (hybrid) at any complexity; at 5 it costs half of 10 for a PESQ score within 0.05
(bench/opus.py, README)."""
DEFAULT_PCM_RATE = 24000
PCM_MIN_RATE = 8000
PCM_MAX_RATE = 48000
G711_RATE = 8000

_OPUS_ENCODINGS = (Encoding.OGG_OPUS, Encoding.OPUS)
# Ogg Opus granules always count 48 kHz samples (RFC 7845 4).
_OGG_RATE = 48000
# libopus' recommended output buffer; the opuslib class would cap packets at the PCM input size,
# which silently lowers high bitrates at short frames and low rates.
_MAX_PACKET_BYTES = 4000
# Symmetric full scale: +1.0 -> 32767 and -1.0 -> -32767, so no value can overflow int16.
_INT16_SCALE = 32767.0


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

    if encoding in _OPUS_ENCODINGS:
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


@dataclass(frozen=True)
class EncodedChunk:
    """Encoded bytes to send now, placed on the stream's output timeline.

    The output timeline counts output-rate samples of the audio a client plays, from 0:
    every sample that reached the encoder (real audio, plus the silence flush() pads in) once,
    in order. Chunks are contiguous: each start_sample is the previous start + num_samples,
    and the sum of num_samples is the decoded duration.

    - PCM_S16LE, MULAW, ALAW: data holds exactly samples [start_sample, start_sample +
      num_samples) (2 bytes each for PCM, 1 for G.711).
    - OPUS (one raw packet per chunk) and OGG_OPUS (whole pages): num_samples is how much of
      the timeline becomes decodable with this chunk, i.e. the decoder output it adds after
      dropping the first pre_skip samples of the stream and (at finish) the end padding.
      Because of the encoder look-ahead this is the packets' duration shifted by pre_skip:
      the first chunk carries pre_skip fewer samples, the last one carries the rest. Raw Opus
      clients apply the same trimming using AudioPipeline.pre_skip and num_samples.
    """

    data: bytes
    start_sample: int
    num_samples: int


class _Encoder:
    """One encoder of int16 samples at the output rate."""

    pre_skip = 0

    def encode(self, pcm: Int16Array) -> list[EncodedChunk]:
        raise NotImplementedError

    def flush(self, pcm: Int16Array) -> list[EncodedChunk]:
        """Encode pcm and whatever is buffered, so all of it is decodable."""
        raise NotImplementedError

    def finish(self, pcm: Int16Array) -> list[EncodedChunk]:
        raise NotImplementedError

    def discard(self) -> None:
        raise NotImplementedError


class _SampleEncoder(_Encoder):
    """PCM and G.711: sample-by-sample formats, so nothing is ever buffered."""

    def __init__(self, encoding: Encoding) -> None:
        self._encoding = encoding
        self._position = 0

    def _convert(self, pcm: Int16Array) -> bytes:
        if self._encoding is Encoding.PCM_S16LE:
            return pcm.astype("<i2", copy=False).tobytes()
        # audioop takes native-endian 16-bit samples.
        native = pcm.astype("=i2", copy=False).tobytes()
        if self._encoding is Encoding.MULAW:
            return audioop.lin2ulaw(native, 2)
        return audioop.lin2alaw(native, 2)

    def encode(self, pcm: Int16Array) -> list[EncodedChunk]:
        if pcm.size == 0:
            return []
        chunk = EncodedChunk(self._convert(pcm), self._position, int(pcm.size))
        self._position += int(pcm.size)
        return [chunk]

    def flush(self, pcm: Int16Array) -> list[EncodedChunk]:
        return self.encode(pcm)

    def finish(self, pcm: Int16Array) -> list[EncodedChunk]:
        return self.encode(pcm)

    def discard(self) -> None:
        pass


class _OpusEncoder(_Encoder):
    """Raw Opus (one packet per chunk) or Ogg Opus (one chunk of whole pages per call).

    Timeline bookkeeping: packet k (0-based, F samples each) decodes to input samples
    [k*F - L, (k+1)*F - L) because of the encoder look-ahead L, so after frames f the timeline
    is decodable up to f*F - L. Every real sample must be followed by L more fed samples before
    it can be heard, which is why flush/finish encode extra silence.
    """

    def __init__(self, settings: AudioSettings, *, ogg: bool) -> None:
        self._rate = settings.sample_rate_hz
        self._frame = settings.sample_rate_hz * settings.frame_ms // 1000
        self._encoder = opuslib.Encoder(self._rate, 1, opuslib.APPLICATION_AUDIO)
        self._encoder.bitrate = settings.bitrate_bps
        self._encoder.complexity = OPUS_COMPLEXITY
        self._encoder.signal = opuslib.SIGNAL_VOICE
        # Read after configuration: the look-ahead is what the decoder must skip.
        self.pre_skip = int(self._encoder.lookahead)
        self._pending: Int16Array = np.zeros(0, dtype=np.int16)  # less than one frame
        self._frames = 0  # frames encoded so far
        self._real_end = 0  # timeline end of audio pushed (flush padding before it counts)
        self._reported = 0  # timeline end covered by chunks returned so far
        self._ogg: OggOpusWriter | None = None
        if ogg:
            self._granule_scale = _OGG_RATE // self._rate  # exact for every Opus rate
            self._ogg = OggOpusWriter(
                pre_skip=self.pre_skip * self._granule_scale, input_sample_rate=self._rate
            )

    def _encode_frames(self, samples: Int16Array) -> list[bytes]:
        frame = self._frame
        packets = []
        for start in range(0, samples.size, frame):
            pcm = np.ascontiguousarray(samples[start : start + frame]).tobytes()
            packets.append(
                bytes(
                    opuslib.api.encoder.encode(
                        self._encoder.encoder_state, pcm, frame, _MAX_PACKET_BYTES
                    )
                )
            )
        self._frames += len(packets)
        return packets

    def _chunks(self, packets: list[bytes], end: int | None = None) -> list[EncodedChunk]:
        """Wrap the packets just encoded; end is the timeline end at finish (None otherwise)."""
        if not packets:
            return []
        first = self._frames - len(packets)

        def covered(frames: int) -> int:
            reach = max(frames * self._frame - self.pre_skip, 0)
            return reach if end is None else min(reach, end)

        if self._ogg is None:
            chunks = []
            for i, packet in enumerate(packets):
                stop = covered(first + i + 1)
                chunks.append(EncodedChunk(packet, self._reported, stop - self._reported))
                self._reported = stop
            return chunks

        stop = covered(self._frames)
        if end is None:
            data = self._ogg.write(packets)
        else:
            # Final granule = pre-skip + real samples, so the decoder drops the padding.
            data = self._ogg.write(
                packets,
                end_of_stream=True,
                end_granule=(self.pre_skip + end) * self._granule_scale,
            )
        chunk = EncodedChunk(data, self._reported, stop - self._reported)
        self._reported = stop
        return [chunk]

    def _padded(self, pcm: Int16Array, end: int, *, min_frames: int = 0) -> Int16Array:
        """pending + pcm, padded with silence until the timeline is decodable up to end."""
        samples = np.concatenate((self._pending, pcm)) if pcm.size else self._pending
        self._pending = np.zeros(0, dtype=np.int16)
        if end <= max(self._frames * self._frame - self.pre_skip, 0):
            frames = 0  # already decodable (also: nothing pushed yet)
        else:
            frames = -(-(end + self.pre_skip) // self._frame) - self._frames
        total = max(frames, min_frames) * self._frame
        if total > samples.size:
            samples = np.concatenate((samples, np.zeros(total - samples.size, dtype=np.int16)))
        return samples

    def encode(self, pcm: Int16Array) -> list[EncodedChunk]:
        if pcm.size == 0:
            return []
        samples = np.concatenate((self._pending, pcm))
        whole = samples.size - samples.size % self._frame
        # Copy so the small remainder does not keep the whole push alive.
        self._pending = samples[whole:].copy()
        packets = self._encode_frames(samples[:whole])
        self._real_end = self._frames * self._frame + self._pending.size
        return self._chunks(packets)

    def flush(self, pcm: Int16Array) -> list[EncodedChunk]:
        if pcm.size:
            self._real_end = self._frames * self._frame + self._pending.size + pcm.size
        # Pad only as far as the real audio needs, so repeated flushes add no more silence.
        return self._chunks(self._encode_frames(self._padded(pcm, self._real_end)))

    def finish(self, pcm: Int16Array) -> list[EncodedChunk]:
        # Everything fed counts here, flush padding included: chunks already reported it, and
        # ending after it keeps the last page's trim shorter than its audio (RFC 7845 4.5),
        # since at least one packet always follows.
        end = self._frames * self._frame + self._pending.size + pcm.size
        # An Ogg stream needs a last page to carry EOS even when no audio was ever pushed.
        samples = self._padded(pcm, end, min_frames=1 if self._ogg is not None else 0)
        return self._chunks(self._encode_frames(samples), end)

    def discard(self) -> None:
        # Only the partial frame is dropped; audio already in the encoder's look-ahead was part
        # of sent frames and will come out with the next packet.
        self._pending = np.zeros(0, dtype=np.int16)
        self._real_end = min(self._real_end, self._frames * self._frame)


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
        self._encoder: _Encoder
        if encoding in _OPUS_ENCODINGS:
            self._encoder = _OpusEncoder(self.settings, ogg=encoding is Encoding.OGG_OPUS)
        else:
            self._encoder = _SampleEncoder(encoding)
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
