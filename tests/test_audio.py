"""Tests of the audio pipeline (service/audio/settings.py) and the Ogg Opus muxer
(service/audio/ogg.py)."""

from __future__ import annotations

import itertools
import shutil
import struct
import subprocess
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import opuslib
import pytest
import soundfile as sf
import soxr
from voxlite.service.audio.encoders import EncodedChunk
from voxlite.service.audio.ogg import OggOpusWriter, ogg_crc32, opus_packet_samples_48k
from voxlite.service.audio.pipeline import AudioPipeline
from voxlite.service.audio.settings import (
    AudioSettings,
    Encoding,
    InvalidAudioConfig,
    resolve_audio_settings,
)

with warnings.catch_warnings():
    warnings.filterwarnings(
        "ignore", message=r"'audioop' is deprecated", category=DeprecationWarning
    )
    import audioop

SR = 22050
# Uneven pieces, like vocoder segments of varying length (cycled).
PIECES = (1, 300, 4410, 7, 2205, 999, 3, 1500, 6615)
OPUS_RATES = (8000, 12000, 16000, 24000, 48000)
OPUS_FRAMES = (10, 20, 40, 60)

needs_opus_tools = pytest.mark.skipif(
    shutil.which("opusinfo") is None or shutil.which("opusdec") is None,
    reason="opus-tools (opusinfo, opusdec) not installed",
)


# -- signals and helpers ---------------------------------------------------------------------------


def speech_like(seconds: float = 1.5, rate: int = SR, seed: int = 0) -> np.ndarray:
    """Voiced-sound-like mix: gliding pitch with harmonics, 'syllable' envelope, a silent gap."""
    rng = np.random.default_rng(seed)
    n = int(rate * seconds)
    t = np.arange(n) / rate
    f0 = 137.0 + 23.0 * np.sin(2 * np.pi * 0.7 * t + rng.uniform(0, 1))
    phase = 2 * np.pi * np.cumsum(f0) / rate
    voiced = sum(a * np.sin(k * phase) for k, a in ((1, 0.4), (2, 0.25), (3, 0.15), (5, 0.08)))
    formants = 0.06 * np.sin(2 * np.pi * 730 * t) + 0.04 * np.sin(2 * np.pi * 2440 * t)
    envelope = np.clip(np.sin(2 * np.pi * 2.3 * t + 0.3), 0.0, None) ** 0.7
    signal = (voiced + formants) * envelope
    signal[int(0.45 * n) : int(0.6 * n)] = 0.0  # a pause between words
    return (0.8 * signal).astype(np.float32)


def tone(freq: float, n: int, rate: int, amp: float = 0.5) -> np.ndarray:
    return (amp * np.sin(2 * np.pi * freq * np.arange(n) / rate)).astype(np.float32)


def pieces_of(x: np.ndarray, sizes: Sequence[int] = PIECES) -> Iterable[np.ndarray]:
    i = k = 0
    while i < len(x):
        n = sizes[k % len(sizes)]
        yield x[i : i + n]
        i += n
        k += 1


def push_all(
    pipe: AudioPipeline, x: np.ndarray, sizes: Sequence[int] = PIECES
) -> list[EncodedChunk]:
    chunks: list[EncodedChunk] = []
    for piece in pieces_of(x, sizes):
        chunks += pipe.push(piece)
    return chunks


def encode(
    encoding: Encoding, x: np.ndarray, *, native_rate: int = SR, **kw: int
) -> tuple[AudioPipeline, list[EncodedChunk]]:
    pipe = AudioPipeline(resolve_audio_settings(encoding, **kw), native_rate=native_rate)
    chunks = push_all(pipe, x)
    chunks += pipe.finish()
    return pipe, chunks


def assert_contiguous(chunks: Sequence[EncodedChunk], start: int = 0) -> None:
    for chunk in chunks:
        assert chunk.data, "empty chunk returned"
        assert chunk.num_samples >= 0
        assert chunk.start_sample == start, "chunks must be contiguous on the timeline"
        start += chunk.num_samples


def total_samples(chunks: Sequence[EncodedChunk]) -> int:
    return sum(c.num_samples for c in chunks)


def int16_of(x: np.ndarray) -> np.ndarray:
    return np.rint(np.clip(x.astype(np.float64), -1, 1) * 32767).astype(np.int16)


def snr_db(ref: np.ndarray, y: np.ndarray) -> float:
    n = min(len(ref), len(y))
    ref, y = ref[:n].astype(np.float64), y[:n].astype(np.float64)
    return float(10 * np.log10(np.sum(ref**2) / max(np.sum((ref - y) ** 2), 1e-20)))


def best_lag(ref: np.ndarray, y: np.ndarray, max_lag: int = 600) -> int:
    """Lag (samples) at which y best matches ref; 0 means aligned."""
    n = min(len(ref), len(y)) - 2 * max_lag
    r = ref[max_lag : max_lag + n].astype(np.float64)
    scores = [
        np.dot(r, y[max_lag + lag : max_lag + lag + n]) for lag in range(-max_lag, max_lag + 1)
    ]
    return int(np.argmax(scores)) - max_lag


def resampled(x: np.ndarray, rate: int) -> np.ndarray:
    return np.asarray(soxr.resample(x, SR, rate), dtype=np.float32) if rate != SR else x


# -- an Ogg reader written for the tests, independent of service/audio/ogg.py ----------------------


def bitwise_ogg_crc(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
            crc &= 0xFFFFFFFF
    return crc


@dataclass
class Page:
    flags: int
    granule: int
    serial: int
    sequence: int
    lacing: tuple[int, ...]
    body: bytes

    @property
    def bos(self) -> bool:
        return bool(self.flags & 2)

    @property
    def eos(self) -> bool:
        return bool(self.flags & 4)

    @property
    def continued(self) -> bool:
        return bool(self.flags & 1)


def parse_pages(data: bytes) -> list[Page]:
    """Whole pages only: fails on anything else or on a bad CRC."""
    pages = []
    pos = 0
    while pos < len(data):
        assert data[pos : pos + 4] == b"OggS", f"no Ogg page at byte {pos}"
        assert data[pos + 4] == 0, "Ogg version must be 0"
        flags = data[pos + 5]
        granule, serial, sequence, crc = struct.unpack_from("<qIII", data, pos + 6)
        nseg = data[pos + 26]
        lacing = tuple(data[pos + 27 : pos + 27 + nseg])
        body_start = pos + 27 + nseg
        end = body_start + sum(lacing)
        assert len(lacing) == nseg, f"truncated segment table at byte {pos}"
        assert end <= len(data), f"truncated page at byte {pos}"
        raw = bytearray(data[pos:end])
        raw[22:26] = bytes(4)
        assert bitwise_ogg_crc(bytes(raw)) == crc, f"bad CRC on page {sequence}"
        pages.append(Page(flags, granule, serial, sequence, lacing, data[body_start:end]))
        pos = end
    return pages


def packets_of(pages: Sequence[Page]) -> list[bytes]:
    packets, current = [], b""
    for page in pages:
        offset = 0
        for value in page.lacing:
            current += page.body[offset : offset + value]
            offset += value
            if value < 255:
                packets.append(current)
                current = b""
    assert current == b"", "last packet unfinished"
    return packets


def write_opus(tmp_path: Path, chunks: Sequence[EncodedChunk], name: str = "out.opus") -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(c.data for c in chunks))
    return path


def assert_opusinfo_ok(path: Path) -> str:
    result = subprocess.run(["opusinfo", str(path)], capture_output=True, text=True, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    lowered = output.lower()
    assert "warning" not in lowered, output
    assert "error" not in lowered, output
    return output


def read_audio(path: Path) -> tuple[np.ndarray, int]:
    data, rate = sf.read(str(path), dtype="float32")
    return np.asarray(data), int(rate)


def decode_raw(chunks: Sequence[EncodedChunk], rate: int) -> np.ndarray:
    decoder = opuslib.Decoder(rate, 1)
    pcm = [np.frombuffer(decoder.decode(c.data, rate * 120 // 1000), np.int16) for c in chunks]
    return np.concatenate(pcm).astype(np.float32) / 32767 if pcm else np.zeros(0, np.float32)


# -- settings --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [
        (Encoding.OGG_OPUS, AudioSettings(Encoding.OGG_OPUS, 24000, 32000, 20)),
        (Encoding.OPUS, AudioSettings(Encoding.OPUS, 24000, 32000, 20)),
        (Encoding.PCM_S16LE, AudioSettings(Encoding.PCM_S16LE, 24000, 0, 0)),
        (Encoding.MULAW, AudioSettings(Encoding.MULAW, 8000, 0, 0)),
        (Encoding.ALAW, AudioSettings(Encoding.ALAW, 8000, 0, 0)),
    ],
)
def test_defaults(encoding: Encoding, expected: AudioSettings) -> None:
    assert resolve_audio_settings(encoding) == expected


@pytest.mark.parametrize("encoding", [Encoding.OGG_OPUS, Encoding.OPUS])
def test_every_allowed_opus_value_resolves(encoding: Encoding) -> None:
    for rate in OPUS_RATES:
        for frame in OPUS_FRAMES:
            for bitrate in (6000, 64000, 510000):
                got = resolve_audio_settings(encoding, rate, bitrate, frame)
                assert got == AudioSettings(encoding, rate, bitrate, frame)


def test_pcm_rates_in_range_resolve() -> None:
    for rate in (8000, 11025, 16000, 22050, 44100, 48000):
        assert resolve_audio_settings(Encoding.PCM_S16LE, rate).sample_rate_hz == rate


@pytest.mark.parametrize(
    ("args", "field", "value", "allowed"),
    [
        (
            (Encoding.OGG_OPUS, 22050),
            "sample_rate_hz",
            "22050",
            "8000, 12000, 16000, 24000 or 48000",
        ),
        ((Encoding.OPUS, 44100), "sample_rate_hz", "44100", "8000, 12000, 16000, 24000 or 48000"),
        ((Encoding.OPUS, -8000), "sample_rate_hz", "-8000", "8000, 12000, 16000, 24000 or 48000"),
        ((Encoding.OPUS, 0, 5999), "bitrate_bps", "5999", "6000..510000"),
        ((Encoding.OGG_OPUS, 0, 510001), "bitrate_bps", "510001", "6000..510000"),
        ((Encoding.OPUS, 0, -32000), "bitrate_bps", "-32000", "6000..510000"),
        ((Encoding.OPUS, 0, 0, 5), "frame_duration_ms", "5", "10, 20, 40 or 60"),
        ((Encoding.OGG_OPUS, 0, 0, 25), "frame_duration_ms", "25", "10, 20, 40 or 60"),
        ((Encoding.OGG_OPUS, 0, 0, 120), "frame_duration_ms", "120", "10, 20, 40 or 60"),
        ((Encoding.PCM_S16LE, 7999), "sample_rate_hz", "7999", "8000..48000"),
        ((Encoding.PCM_S16LE, 96000), "sample_rate_hz", "96000", "8000..48000"),
        ((Encoding.PCM_S16LE, 24000, 32000), "bitrate_bps", "32000", "use 0"),
        ((Encoding.PCM_S16LE, 24000, 0, 20), "frame_duration_ms", "20", "use 0"),
        ((Encoding.MULAW, 16000), "sample_rate_hz", "16000", "use 8000"),
        ((Encoding.ALAW, 8001), "sample_rate_hz", "8001", "use 8000"),
        ((Encoding.MULAW, 8000, 64000), "bitrate_bps", "64000", "use 0"),
        ((Encoding.ALAW, 0, 0, 20), "frame_duration_ms", "20", "use 0"),
        ((Encoding.OPUS, 24000.0), "sample_rate_hz", "24000.0", "integer"),
        ((Encoding.OPUS, True), "sample_rate_hz", "True", "integer"),
        (("OPUS",), "encoding", "'OPUS'", "OGG_OPUS, OPUS, PCM_S16LE, MULAW, ALAW"),
    ],
)
def test_invalid_settings_name_field_value_and_allowed(
    args: tuple[object, ...], field: str, value: str, allowed: str
) -> None:
    with pytest.raises(InvalidAudioConfig) as info:
        resolve_audio_settings(*args)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith(f"{field} {value} "), message
    assert allowed in message
    assert isinstance(info.value, ValueError)


def test_pipeline_validates_hand_built_settings_and_arguments() -> None:
    with pytest.raises(InvalidAudioConfig, match="sample_rate_hz 22050"):
        AudioPipeline(AudioSettings(Encoding.OPUS, 22050, 32000, 20), native_rate=SR)
    with pytest.raises(InvalidAudioConfig, match="native_rate"):
        AudioPipeline(resolve_audio_settings(Encoding.OPUS), native_rate=0)
    with pytest.raises(InvalidAudioConfig, match="gain"):
        AudioPipeline(resolve_audio_settings(Encoding.OPUS), native_rate=SR, gain=float("nan"))
    # 0 in hand-built settings means default, as in resolve_audio_settings.
    pipe = AudioPipeline(AudioSettings(Encoding.OGG_OPUS, 0, 0, 0), native_rate=SR)
    assert pipe.settings == resolve_audio_settings(Encoding.OGG_OPUS)


# -- PCM -------------------------------------------------------------------------------------------


def pcm_of(chunks: Sequence[EncodedChunk]) -> np.ndarray:
    return np.frombuffer(b"".join(c.data for c in chunks), dtype="<i2")


def test_pcm_same_rate_is_exact_with_one_chunk_per_push() -> None:
    x = speech_like()
    pipe = AudioPipeline(resolve_audio_settings(Encoding.PCM_S16LE, SR), native_rate=SR)
    chunks = []
    for piece in pieces_of(x):
        got = pipe.push(piece)
        assert len(got) == 1
        assert got[0].num_samples == len(piece)
        chunks += got
    assert pipe.finish() == []
    assert_contiguous(chunks)
    np.testing.assert_array_equal(pcm_of(chunks), int16_of(x))
    assert total_samples(chunks) == len(x)


def test_pcm_rounds_clips_and_applies_gain() -> None:
    values = np.array([0.4, 0.6, -0.6, -0.4, 1.5, -2.0, 1.0, -1.0], dtype=np.float32)
    values[:4] /= 32767
    pipe = AudioPipeline(resolve_audio_settings(Encoding.PCM_S16LE, SR), native_rate=SR)
    (chunk,) = pipe.push(values)
    assert pcm_of([chunk]).tolist() == [0, 1, -1, 0, 32767, -32767, 32767, -32767]

    x = speech_like(0.3)
    pipe = AudioPipeline(resolve_audio_settings(Encoding.PCM_S16LE, SR), native_rate=SR, gain=2.5)
    out = pcm_of(push_all(pipe, x))
    np.testing.assert_array_equal(out, int16_of(x * np.float32(2.5)))
    assert out.max() == 32767  # gain 2.5 drives the loudest parts into clipping


def test_pcm_does_not_modify_input() -> None:
    x = speech_like(0.2) * 3
    before = x.copy()
    pipe = AudioPipeline(resolve_audio_settings(Encoding.PCM_S16LE), native_rate=SR, gain=2.0)
    pipe.push(x)
    np.testing.assert_array_equal(x, before)


def test_pcm_resampled_matches_one_shot_soxr() -> None:
    x = speech_like()
    _, chunks = encode(Encoding.PCM_S16LE, x)
    assert_contiguous(chunks)
    out = pcm_of(chunks).astype(np.float32) / 32767
    ref = resampled(x, 24000)
    assert abs(len(out) - len(x) * 24000 / SR) <= 2
    assert total_samples(chunks) == len(out)
    assert snr_db(ref, out) > 60  # only int16 quantisation apart


def test_pcm_chunk_boundaries_lose_or_double_nothing() -> None:
    """Uneven pieces give the same samples as one big push, at both rates."""
    x = speech_like()
    for rate in (SR, 24000, 16000):
        _, pieces = encode(Encoding.PCM_S16LE, x, sample_rate_hz=rate)
        whole = AudioPipeline(resolve_audio_settings(Encoding.PCM_S16LE, rate), native_rate=SR)
        one_shot = pcm_of(whole.push(x) + whole.finish())
        a, b = pcm_of(pieces), one_shot
        assert len(a) == len(b)
        assert int(np.max(np.abs(a.astype(np.int32) - b))) <= 1


def test_pcm_flush_mid_stream_then_more() -> None:
    first, second = speech_like(0.7, seed=1), speech_like(0.9, seed=2)
    pipe = AudioPipeline(resolve_audio_settings(Encoding.PCM_S16LE), native_rate=SR)
    part1 = push_all(pipe, first) + pipe.flush()
    assert pipe.flush() == []  # nothing left to flush
    part2 = push_all(pipe, second) + pipe.finish()
    assert_contiguous(part1 + part2)
    out1, out2 = pcm_of(part1) / 32767, pcm_of(part2) / 32767
    assert abs(len(out1) - len(first) * 24000 / SR) <= 2
    assert abs(len(out2) - len(second) * 24000 / SR) <= 2
    assert snr_db(resampled(first, 24000), out1) > 60
    assert snr_db(resampled(second, 24000), out2) > 60


def test_pcm_discard_drops_resampler_buffer() -> None:
    first, dropped, after = speech_like(0.3, seed=1), tone(3000, 500, SR), speech_like(0.4, seed=3)
    pipe = AudioPipeline(resolve_audio_settings(Encoding.PCM_S16LE), native_rate=SR)
    chunks = push_all(pipe, first) + pipe.flush()
    before = len(pcm_of(chunks))
    chunks += pipe.push(dropped)
    emitted_of_dropped = len(pcm_of(chunks)) - before
    assert emitted_of_dropped < len(dropped) * 24000 / SR - 2  # soxr was holding some back
    pipe.discard()
    tail = pipe.push(after) + pipe.finish()
    assert_contiguous(chunks + tail)
    out = pcm_of(tail) / 32767
    assert abs(len(out) - len(after) * 24000 / SR) <= 2
    assert snr_db(resampled(after, 24000), out) > 60


# -- Ogg Opus --------------------------------------------------------------------------------------


@needs_opus_tools
def test_ogg_opus_is_valid_and_decodes_close_to_input(tmp_path: Path) -> None:
    x = speech_like()
    _, chunks = encode(Encoding.OGG_OPUS, x)
    path = write_opus(tmp_path, chunks)
    info = assert_opusinfo_ok(path)
    assert "Pre-skip: 312" in info  # 156 samples at 24 kHz
    y, rate = read_audio(path)
    assert rate == 24000
    expected = len(x) * 24000 / SR
    assert abs(len(y) - expected) <= 24000 * 20 // 1000
    assert total_samples(chunks) == len(y)
    ref = resampled(x, 24000)
    assert best_lag(ref, y) in range(-4, 5)  # pre-skip applied correctly: no shift
    assert snr_db(ref, y) > 12


def test_ogg_chunks_are_whole_pages_with_headers_first() -> None:
    x = speech_like()
    pipe = AudioPipeline(resolve_audio_settings(Encoding.OGG_OPUS), native_rate=SR)
    chunks: list[EncodedChunk] = []
    for piece in pieces_of(x):
        got = pipe.push(piece)
        assert len(got) <= 1, "one chunk per push"
        chunks += got
    chunks += pipe.finish()
    assert_contiguous(chunks)

    all_pages = []
    for i, chunk in enumerate(chunks):
        pages = parse_pages(chunk.data)  # whole pages, CRCs checked
        if i == 0:
            assert pages[0].body.startswith(b"OpusHead")
            assert pages[0].bos
            assert pages[1].body.startswith(b"OpusTags")
            assert not pages[1].bos
            assert pages[0].granule == pages[1].granule == 0
            assert len(pages) > 2, "the first chunk carries audio too"
        else:
            assert not any(p.body.startswith((b"OpusHead", b"OpusTags")) for p in pages)
        all_pages += pages

    assert [p.sequence for p in all_pages] == list(range(len(all_pages)))
    assert len({p.serial for p in all_pages}) == 1
    assert [p.bos for p in all_pages] == [True] + [False] * (len(all_pages) - 1)
    assert [p.eos for p in all_pages] == [False] * (len(all_pages) - 1) + [True]
    head = all_pages[0].body
    version, channels, pre_skip, in_rate, gain, family = struct.unpack("<BBHIhB", head[8:19])
    assert (version, channels, pre_skip, in_rate, gain, family) == (1, 1, 312, 24000, 0, 0)
    assert pipe.pre_skip * 2 == pre_skip
    tags = all_pages[1].body
    assert tags == b"OpusTags" + struct.pack("<I", 7) + b"voxlite" + struct.pack("<I", 0)

    audio = all_pages[2:]
    granules = [p.granule for p in audio]
    assert all(a < b for a, b in itertools.pairwise(granules))
    # Intermediate granules count every packet sample (pre-skip included, RFC 7845 4).
    packet_total = 0
    for page in audio[:-1]:
        packet_total += sum(opus_packet_samples_48k(p) for p in packets_of([page]))
        assert page.granule == packet_total
    last_audio = sum(opus_packet_samples_48k(p) for p in packets_of([audio[-1]]))
    # End trimming: final granule = pre-skip + real samples, trim shorter than the last page.
    assert audio[-1].granule == pre_skip + 2 * total_samples(chunks)
    assert 0 <= packet_total + last_audio - audio[-1].granule < last_audio
    # Each chunk's num_samples matches the granules of its pages.
    end = 0
    for chunk in chunks:
        last = parse_pages(chunk.data)[-1]
        end += chunk.num_samples
        assert max(last.granule - pre_skip, 0) == 2 * end


@needs_opus_tools
@pytest.mark.parametrize("frame_ms", OPUS_FRAMES)
@pytest.mark.parametrize("rate", OPUS_RATES)
def test_ogg_every_rate_and_frame_is_valid(tmp_path: Path, rate: int, frame_ms: int) -> None:
    x = speech_like(0.35, seed=rate + frame_ms)
    _, chunks = encode(Encoding.OGG_OPUS, x, sample_rate_hz=rate, frame_ms=frame_ms)
    assert_contiguous(chunks)
    path = write_opus(tmp_path, chunks)
    info = assert_opusinfo_ok(path)
    assert f"Packet duration:   {frame_ms}.0ms (max)" in info
    y, got_rate = read_audio(path)
    assert got_rate == rate
    assert total_samples(chunks) == len(y)
    assert abs(len(y) - len(x) * rate / SR) <= rate * frame_ms // 1000
    assert best_lag(resampled(x, rate), y, max_lag=rate // 100) in range(-4, 5)


@needs_opus_tools
def test_opusdec_decodes_to_wav(tmp_path: Path) -> None:
    x = speech_like()
    _, chunks = encode(Encoding.OGG_OPUS, x, sample_rate_hz=16000, frame_ms=40)
    path = write_opus(tmp_path, chunks)
    wav = tmp_path / "out.wav"
    result = subprocess.run(
        ["opusdec", "--quiet", "--rate", "16000", str(path), str(wav)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    y, rate = read_audio(wav)
    assert rate == 16000
    assert len(y) == total_samples(chunks)
    assert snr_db(resampled(x, 16000), y) > 12


@needs_opus_tools
def test_ogg_packets_over_255_bytes(tmp_path: Path) -> None:
    x = speech_like(1.0)
    _, chunks = encode(Encoding.OGG_OPUS, x, sample_rate_hz=48000, bitrate_bps=510000, frame_ms=60)
    pages = parse_pages(b"".join(c.data for c in chunks))
    assert any(len(p) >= 255 for p in packets_of(pages[2:]))
    assert any(255 in p.lacing for p in pages)
    path = write_opus(tmp_path, chunks)
    assert_opusinfo_ok(path)
    y, _ = read_audio(path)
    assert snr_db(resampled(x, 48000), y) > 20


@needs_opus_tools
def test_ogg_flush_mid_stream_keeps_stream_valid(tmp_path: Path) -> None:
    first, second = speech_like(0.6, seed=4), speech_like(0.5, seed=5)
    pipe = AudioPipeline(resolve_audio_settings(Encoding.OGG_OPUS), native_rate=SR)
    chunks = push_all(pipe, first) + pipe.flush()
    assert pipe.flush() == []
    flushed_to = total_samples(chunks)
    ref1 = resampled(first, 24000)
    assert flushed_to >= len(ref1), "flush must make all pushed audio decodable"
    chunks += push_all(pipe, second) + pipe.finish()
    assert_contiguous(chunks)
    path = write_opus(tmp_path, chunks)
    assert_opusinfo_ok(path)
    y, _ = read_audio(path)
    assert len(y) == total_samples(chunks)
    # The flush padding (silence) sits between the two parts on the timeline.
    fed_at_flush = flushed_to + pipe.pre_skip
    ref = np.concatenate(
        (ref1, np.zeros(fed_at_flush - len(ref1), np.float32), resampled(second, 24000))
    )
    assert abs(len(ref) - len(y)) <= 2
    assert snr_db(ref, y) > 12


@needs_opus_tools
def test_ogg_empty_stream_is_valid(tmp_path: Path) -> None:
    pipe = AudioPipeline(resolve_audio_settings(Encoding.OGG_OPUS), native_rate=SR)
    assert pipe.push(np.zeros(0, np.float32)) == []
    assert pipe.flush() == []
    chunks = pipe.finish()
    assert len(chunks) == 1
    assert chunks[0].num_samples == 0
    pages = parse_pages(chunks[0].data)
    assert pages[-1].eos
    assert pages[-1].granule == 312
    assert_opusinfo_ok(write_opus(tmp_path, chunks))


# -- discard (barge-in) ----------------------------------------------------------------------------


@needs_opus_tools
@pytest.mark.parametrize("encoding", [Encoding.OGG_OPUS, Encoding.OPUS])
def test_discard_drops_partial_frame(tmp_path: Path, encoding: Encoding) -> None:
    rate, frame = 24000, 480
    before = speech_like(0.4, rate=rate, seed=6)[: 20 * frame]  # whole frames only
    barge = tone(3000, frame // 2, rate, amp=0.9)  # stays in the partial frame
    after = speech_like(0.5, rate=rate, seed=7)
    pipe = AudioPipeline(resolve_audio_settings(encoding), native_rate=rate)
    chunks = push_all(pipe, before)
    assert pipe.push(barge) == []
    pipe.discard()
    chunks += push_all(pipe, after) + pipe.finish()
    assert_contiguous(chunks)
    assert total_samples(chunks) == len(before) + len(after)
    if encoding is Encoding.OGG_OPUS:
        path = write_opus(tmp_path, chunks)
        assert_opusinfo_ok(path)
        y, _ = read_audio(path)
    else:
        y = decode_raw(chunks, rate)[pipe.pre_skip : pipe.pre_skip + total_samples(chunks)]
    assert len(y) == len(before) + len(after)
    assert snr_db(np.concatenate((before, after)), y) > 12


@needs_opus_tools
def test_discard_drops_resampler_and_partial_frame_ogg(tmp_path: Path) -> None:
    first, barge, after = (
        speech_like(0.5, seed=8),
        tone(3000, 200, SR, 0.9),
        speech_like(0.5, seed=9),
    )
    pipe = AudioPipeline(resolve_audio_settings(Encoding.OGG_OPUS), native_rate=SR)
    chunks = push_all(pipe, first) + pipe.flush()
    fed_at_flush = total_samples(chunks) + pipe.pre_skip
    assert pipe.push(barge) == []  # under one frame: nothing to emit yet
    pipe.discard()
    chunks += push_all(pipe, after) + pipe.finish()
    assert_contiguous(chunks)
    path = write_opus(tmp_path, chunks)
    assert_opusinfo_ok(path)
    y, _ = read_audio(path)
    ref1 = resampled(first, 24000)
    ref = np.concatenate(
        (ref1, np.zeros(fed_at_flush - len(ref1), np.float32), resampled(after, 24000))
    )
    assert abs(len(y) - len(ref)) <= 2
    assert snr_db(ref, y) > 12


def test_discard_after_finish_is_harmless_and_push_after_finish_fails() -> None:
    pipe = AudioPipeline(resolve_audio_settings(Encoding.OGG_OPUS), native_rate=SR)
    pipe.push(speech_like(0.1))
    pipe.finish()
    pipe.discard()
    with pytest.raises(RuntimeError, match="finished"):
        pipe.push(np.zeros(10, np.float32))
    with pytest.raises(RuntimeError, match="finished"):
        pipe.flush()
    with pytest.raises(RuntimeError, match="finished"):
        pipe.finish()


# -- raw Opus --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("rate", "frame_ms"), [(24000, 20), (8000, 10), (48000, 60), (16000, 40)])
def test_raw_opus_one_packet_per_chunk_decodes_close_to_input(rate: int, frame_ms: int) -> None:
    x = speech_like()
    pipe, chunks = encode(Encoding.OPUS, x, sample_rate_hz=rate, frame_ms=frame_ms)
    assert_contiguous(chunks)
    frame = rate * frame_ms // 1000
    decoder = opuslib.Decoder(rate, 1)
    decoded = []
    for chunk in chunks:
        assert opus_packet_samples_48k(chunk.data) == 48 * frame_ms
        pcm = np.frombuffer(decoder.decode(chunk.data, rate * 120 // 1000), np.int16)
        assert len(pcm) == frame  # exactly one packet
        decoded.append(pcm)
    y = np.concatenate(decoded).astype(np.float32) / 32767
    total = total_samples(chunks)
    # Every packet is needed: the audio ends in the last packet's decoded output.
    assert len(y) - frame < pipe.pre_skip + total <= len(y)
    assert chunks[0].num_samples == frame - pipe.pre_skip
    assert all(c.num_samples == frame for c in chunks[1:-1])
    assert abs(total - len(x) * rate / SR) <= 2
    y = y[pipe.pre_skip : pipe.pre_skip + total]
    ref = resampled(x, rate)
    assert best_lag(ref, y, max_lag=rate // 100) in range(-4, 5)
    assert snr_db(ref, y) > 12


def test_raw_opus_flush_makes_pushed_audio_decodable() -> None:
    x = speech_like(0.6)
    pipe = AudioPipeline(resolve_audio_settings(Encoding.OPUS), native_rate=SR)
    chunks = push_all(pipe, x) + pipe.flush()
    assert pipe.flush() == [], "a second flush must not add silence"
    ref = resampled(x, 24000)
    assert total_samples(chunks) >= len(ref)
    y = decode_raw(chunks, 24000)[pipe.pre_skip :]
    assert len(y) >= len(ref)
    assert snr_db(ref, y[: len(ref)]) > 12
    # The tail really is there: its last 10 ms decode with the right energy.
    tail_ref, tail = ref[-240:], y[len(ref) - 240 : len(ref)]
    assert np.sqrt(np.mean(tail**2)) > 0.5 * np.sqrt(np.mean(tail_ref**2))


def test_raw_opus_empty_stream_gives_nothing() -> None:
    pipe = AudioPipeline(resolve_audio_settings(Encoding.OPUS), native_rate=SR)
    assert pipe.pre_skip == 156
    assert pipe.flush() == []
    assert pipe.finish() == []


# -- G.711 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "decode", "other"),
    [
        (Encoding.MULAW, audioop.ulaw2lin, audioop.alaw2lin),
        (Encoding.ALAW, audioop.alaw2lin, audioop.ulaw2lin),
    ],
)
def test_g711_round_trip(encoding: Encoding, decode: object, other: object) -> None:
    x = speech_like()
    pipe, chunks = encode(encoding, x)
    assert pipe.pre_skip == 0
    assert_contiguous(chunks)
    data = b"".join(c.data for c in chunks)
    assert len(data) == total_samples(chunks)
    assert abs(len(data) - len(x) * 8000 / SR) <= 2
    ref = resampled(x, 8000)
    y = np.frombuffer(decode(data, 2), np.int16) / 32767  # type: ignore[operator]
    assert snr_db(ref, y) > 25
    wrong = np.frombuffer(other(data, 2), np.int16) / 32767  # type: ignore[operator]
    assert snr_db(ref, wrong) < 10  # the companding law really is the one asked for


# -- all encodings ---------------------------------------------------------------------------------


def decoded_length(
    encoding: Encoding, pipe: AudioPipeline, chunks: Sequence[EncodedChunk], tmp: Path
) -> int:
    data = b"".join(c.data for c in chunks)
    rate = pipe.settings.sample_rate_hz
    if encoding is Encoding.PCM_S16LE:
        return len(data) // 2
    if encoding in (Encoding.MULAW, Encoding.ALAW):
        return len(data)
    if encoding is Encoding.OPUS:
        # The raw decoder output minus pre-skip and the final packet's padding.
        decoded = len(decode_raw(chunks, rate)) - pipe.pre_skip
        padding = decoded - total_samples(chunks)
        assert 0 <= padding < rate * pipe.settings.frame_ms // 1000
        return decoded - padding
    path = tmp / "len.opus"
    path.write_bytes(data)
    return len(read_audio(path)[0])


@pytest.mark.parametrize("encoding", list(Encoding))
def test_bookkeeping_is_contiguous_and_sums_to_decoded_duration(
    tmp_path: Path, encoding: Encoding
) -> None:
    x = speech_like(0.8)
    pipe = AudioPipeline(resolve_audio_settings(encoding), native_rate=SR)
    chunks = push_all(pipe, x[:9000], sizes=(1, 777, 13, 4410))
    chunks += pipe.flush()
    chunks += push_all(pipe, x[9000:12000], sizes=(300, 7))
    pipe.discard()
    chunks += push_all(pipe, x[12000:], sizes=(2205, 1))
    chunks += pipe.finish()
    assert_contiguous(chunks)
    assert total_samples(chunks) == decoded_length(encoding, pipe, chunks, tmp_path)


@pytest.mark.parametrize("encoding", list(Encoding))
def test_bad_input_is_rejected(encoding: Encoding) -> None:
    pipe = AudioPipeline(resolve_audio_settings(encoding), native_rate=SR)
    assert pipe.push(np.zeros(0, np.float32)) == []
    with pytest.raises(ValueError, match="1-D"):
        pipe.push(np.zeros((10, 2), np.float32))
    with pytest.raises(TypeError, match="floating"):
        pipe.push(np.zeros(10, np.int16))
    # NaN or inf from a misbehaving vocoder must not break the stream.
    bad = np.array([np.nan, np.inf, -np.inf, 0.1] * 100, np.float32)
    chunks = pipe.push(bad) + pipe.finish()
    assert_contiguous(chunks)


# -- the Ogg muxer on its own ----------------------------------------------------------------------


def test_ogg_crc_matches_the_ogg_definition() -> None:
    assert ogg_crc32(b"") == 0
    # CRC-32 with polynomial 0x04C11DB7, init 0, unreflected, no final xor ("123456789").
    assert ogg_crc32(b"123456789") == 0x89A1897F == bitwise_ogg_crc(b"123456789")
    data = np.random.default_rng(3).integers(0, 256, 3000, dtype=np.uint8).tobytes()
    assert ogg_crc32(data) == bitwise_ogg_crc(data)


@pytest.mark.parametrize(
    ("packet", "samples"),
    [
        (bytes([0xFC]), 960),  # CELT 20 ms, one frame
        (bytes([0xF8 | 1]), 1920),  # CELT 20 ms, two frames
        (bytes([0x10 | 3, 3]), 5760),  # SILK 40 ms (config 2), three frames (code 3)
        (bytes([0x60]), 480),  # hybrid 10 ms (config 12)
        (bytes([0x68 | 2]), 1920),  # hybrid 20 ms (config 13), two frames (code 2)
        (bytes([0x80]), 120),  # CELT 2.5 ms
        (bytes([0x18]), 2880),  # SILK 60 ms
    ],
)
def test_opus_packet_duration_from_toc(packet: bytes, samples: int) -> None:
    assert opus_packet_samples_48k(packet + b"\0" * 4) == samples


def test_writer_splits_pages_and_continues_packets() -> None:
    writer = OggOpusWriter(pre_skip=312, input_sample_rate=24000, serial=0x1234)
    huge = bytes([0xFC]) + bytes(range(256)) * 300  # 76801 bytes: needs two pages
    # 300 packets: more lacing values than one page holds.
    small = [bytes([0xFC, i % 256]) for i in range(300)]
    data = writer.write([small[0]]) + writer.write([huge, *small[1:]], end_of_stream=True)
    pages = parse_pages(data)
    assert all(p.serial == 0x1234 for p in pages)
    assert [p.sequence for p in pages] == list(range(len(pages)))
    assert all(len(p.lacing) <= 255 for p in pages)
    assert packets_of(pages[2:]) == [small[0], huge, *small[1:]]
    continued = [p for p in pages if p.continued]
    assert continued, "the huge packet continues on a following page"
    assert any(p.granule == -1 for p in pages), "a page where no packet ends has granule -1"
    assert pages[-1].eos
    assert pages[-1].granule == 960 * 301 == writer.granule_position
    with pytest.raises(RuntimeError):
        writer.write([small[0]])


def test_writer_refuses_trimming_more_than_the_last_page() -> None:
    writer = OggOpusWriter(pre_skip=312, input_sample_rate=48000)
    writer.write([bytes([0xFC, 0])] * 3)  # granule 2880
    with pytest.raises(ValueError, match="trim"):
        writer.write([bytes([0xFC, 0])], end_of_stream=True, end_granule=2880)
    pages = parse_pages(writer.write([bytes([0xFC, 0])], end_of_stream=True, end_granule=2881))
    assert pages[-1].eos
    assert pages[-1].granule == 2881
