"""The encoders a stream's audio goes through: Opus, Ogg Opus, PCM and G.711."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import opuslib
import opuslib.api.encoder

from .ogg import OggOpusWriter
from .settings import MAX_PACKET_BYTES, OGG_RATE, OPUS_COMPLEXITY, AudioSettings, Encoding

# audioop left the stdlib in 3.13 (audioop-lts provides it there); 3.11/3.12 warn on import, and
# our test config turns warnings into errors, so silence exactly that one warning.
with warnings.catch_warnings():
    warnings.filterwarnings(
        "ignore", message=r"'audioop' is deprecated", category=DeprecationWarning
    )
    import audioop

Int16Array = npt.NDArray[np.int16]


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


class StreamEncoder:
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


class SampleEncoder(StreamEncoder):
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


class OpusEncoder(StreamEncoder):
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
            self._granule_scale = OGG_RATE // self._rate  # exact for every Opus rate
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
                        self._encoder.encoder_state, pcm, frame, MAX_PACKET_BYTES
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
