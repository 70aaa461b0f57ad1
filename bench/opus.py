"""Opus encoder settings: CPU per second of audio and quality (PESQ, wideband), on the default
voice's speech.

The server encodes every stream on its event loop, so the encoder's cost is paid once per live
voice and competes with the model for the cores. Baseline: libopus's defaults (complexity 10,
signal type chosen by its own analysis).
"""

from __future__ import annotations

import collections
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import opuslib
import soxr
from pesq import pesq
from voxlite.service.audio.settings import DEFAULT_OPUS_BITRATE, DEFAULT_OPUS_RATE, OPUS_COMPLEXITY
from voxlite.service.engines.runtime import OrtSettings

from . import _common
from .corpus import REPLIES
from .engine import load_voxlite, windows

FRAME = DEFAULT_OPUS_RATE * 20 // 1000
PESQ_RATE = 16000  # wideband PESQ reads 16 kHz
SETTINGS = [  # (complexity, tell the encoder its input is speech)
    (10, False),  # libopus's defaults: the baseline
    (10, True),
    (7, False),
    (6, True),
    (OPUS_COMPLEXITY, True),  # voxlite
    (3, True),
    (6, False),
    (4, False),
]
MODES = {range(0, 12): "SILK", range(12, 16): "hybrid", range(16, 32): "CELT"}


def speech(replies: Sequence[str]) -> np.ndarray:
    """The replies spoken by the default voice, at the server's Opus rate, as int16."""
    voice = load_voxlite(OrtSettings())
    pcm = np.concatenate([w for text in replies for w in windows(voice, text)])
    audio: np.ndarray = soxr.resample(pcm * voice.gain, voice.info.native_rate, DEFAULT_OPUS_RATE)
    return np.asarray(np.clip(audio, -1.0, 1.0) * 32767, dtype=np.int16)


@dataclass(frozen=True)
class Result:
    ms_per_audio_s: float
    """Encoding time per second of audio (the best of the rounds)."""
    pesq: float
    """Wideband PESQ of the decoded audio against the input (MOS-LQO, up to about 4.6)."""
    kbps: float
    mode: str
    """The coding mode of most packets (from the TOC byte, RFC 6716 3.1)."""


def measure(pcm: np.ndarray, complexity: int, voice: bool, rounds: int) -> Result:
    frames = [pcm[i : i + FRAME].tobytes() for i in range(0, pcm.size - FRAME + 1, FRAME)]
    seconds = len(frames) * FRAME / DEFAULT_OPUS_RATE
    best = float("inf")
    packets: list[bytes] = []
    for _ in range(rounds):
        encoder = opuslib.Encoder(DEFAULT_OPUS_RATE, 1, opuslib.APPLICATION_AUDIO)
        encoder.bitrate = DEFAULT_OPUS_BITRATE
        encoder.complexity = complexity
        if voice:
            encoder.signal = opuslib.SIGNAL_VOICE
        start = time.perf_counter()
        packets = [encoder.encode(frame, FRAME) for frame in frames]
        best = min(best, time.perf_counter() - start)
    decoder = opuslib.Decoder(DEFAULT_OPUS_RATE, 1)
    decoded = np.frombuffer(b"".join(decoder.decode(p, FRAME) for p in packets), np.int16)
    skip = int(encoder.lookahead)  # the decoder's output lags the input by the look-ahead
    n = decoded.size - skip
    ref, out = (
        soxr.resample(x / 32768, DEFAULT_OPUS_RATE, PESQ_RATE) for x in (pcm[:n], decoded[skip:])
    )
    score = pesq(PESQ_RATE, ref, out, "wb")
    kbps = sum(len(p) for p in packets) * 8 / seconds / 1000
    modes = collections.Counter(
        name for p in packets for r, name in MODES.items() if p[0] >> 3 in r
    )
    return Result(best / seconds * 1000, float(score), kbps, modes.most_common(1)[0][0])


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="three replies, one round")
    args = p.parse_args(argv)
    pcm = speech(REPLIES[:3] if args.quick else REPLIES)
    rounds = 1 if args.quick else 3
    results = {s: measure(pcm, *s, rounds) for s in SETTINGS}
    base = results[SETTINGS[0]]
    rows: list[list[object]] = []
    for (complexity, voice), r in results.items():
        label = f"{complexity}, " + ("voice" if voice else "auto")
        label += " (libopus default)" if (complexity, voice) == SETTINGS[0] else ""
        label += " (voxlite)" if (complexity, voice) == (OPUS_COMPLEXITY, True) else ""
        ratio = _common.ratio(base.ms_per_audio_s, r.ms_per_audio_s)
        rows.append([label, r.mode, r.ms_per_audio_s, ratio, r.pesq, r.kbps])
    seconds = pcm.size / DEFAULT_OPUS_RATE
    title = (
        f"Opus encoder, {DEFAULT_OPUS_RATE // 1000} kHz mono, {DEFAULT_OPUS_BITRATE // 1000} kb/s, "
        f"20 ms frames, {seconds:.0f} s of speech"
    )
    header = ["complexity, signal", "mode", "ms per audio s", "x cheaper", "PESQ wb", "kb/s"]
    print(_common.table(title, header, rows))
    figures = [{"complexity": c, "voice": v, **asdict(r)} for (c, v), r in results.items()]
    _common.write_json(args.json, {"benchmark": "opus", "results": figures})


if __name__ == "__main__":
    main()
