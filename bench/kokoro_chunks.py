"""Kokoro decoded window by window against each run decoded whole: SNR, Whisper base CER, seams
at the joins, first audio and total work, for a few chunk schedules (docs/kokoro.md)."""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from voxlite.service.kokoro import KokoroFamily
from voxlite.service.kokoro.decode import CHUNKS, FIRST_WINDOW, SAMPLE_RATE, ChunkSchedule
from voxlite.service.kokoro.voice import KokoroParams, KokoroVoice
from voxlite.service.segmenter import Segmenter

from tests.whisper import judge

from . import _common
from .kokoro_corpus import REPLIES_JA, REPLIES_ZH

warnings.filterwarnings("ignore", "open_text is deprecated", DeprecationWarning)

WHOLE = "whole runs"
SCHEDULES: dict[str, dict[str, Any]] = {
    WHOLE: {"first_window": None},
    "pause first, then the run whole (default)": {
        "pause_first": True,
        "first_window": FIRST_WINDOW,
    },
    "first window 8 + rest, context 8, fade 4": {"first_window": FIRST_WINDOW},
    "first window 12 + rest, context 8, fade 4": {
        "first_window": ChunkSchedule(first=12, context=8, overlap=4, rest_whole=True)
    },
    "first window 12 + rest, context 16, fade 4": {
        "first_window": ChunkSchedule(first=12, context=16, overlap=4, rest_whole=True)
    },
    "chunks 12-96, context 8, fade 4 (decode.CHUNKS)": {"chunks": CHUNKS},
    "chunks 12-96, context 16, fade 4": {"chunks": ChunkSchedule(12, 2.0, 96, 16, 4)},
    "chunks 24-128, context 32, fade 8": {"chunks": ChunkSchedule(24, 2.0, 128, 32, 8)},
}


@dataclass
class Spoken:
    """One text through one way of decoding."""

    audio: np.ndarray
    joins: list[int]
    """Sample index of each join between two windows of a run."""
    first: float
    """Thread seconds from the text to its first audio (G2P, encoder, first decoder run)."""
    work: float
    """Thread seconds for all of it."""


def segments(text: str) -> list[str]:
    """`text` cut as the server cuts it (the first clause alone, then sentences)."""
    segmenter = Segmenter()
    return [s for s in [*segmenter.push(text), *segmenter.flush()] if s.strip()]


def speak(voice: KokoroVoice, text: str) -> Spoken:
    """`text` through the segmenter and the voice's segments on this thread (one ORT thread),
    as to a listener who has nothing in hand before the first window and, after it, always
    more audio than the next run takes (one stream on an idle machine: RTF about 0.5)."""
    started = time.thread_time()
    first: float | None = None
    parts: list[np.ndarray] = []
    joins: list[int] = []
    done = 0
    for text_segment in segments(text):
        segment = voice.segment(text_segment, KokoroParams(1.0), word_timestamps=False)
        start = len(parts)
        while (window := segment.next_window(0.0 if first is None else 1e9)) is not None:
            first = time.thread_time() - started if first is None else first
            parts.append(window)
        if segment.held_samples:  # a pause lengthened to wait for the decoder: not speech
            parts[start] = parts[start][segment.held_samples :]
        joins += [done + j for j in segment.joins]
        done = sum(p.size for p in parts)
    assert first is not None
    return Spoken(np.concatenate(parts), joins, first, time.thread_time() - started)


def snr(reference: np.ndarray, audio: np.ndarray) -> float:
    noise = float(np.sum((reference - audio) ** 2))
    return 10 * float(np.log10(float(np.sum(reference**2)) / max(noise, 1e-20)))


def seam(audio: np.ndarray, joins: Sequence[int]) -> float:
    """The largest sample-to-sample jump at a join over the 99.9th percentile of the jumps
    elsewhere: above 1, a join jumps further than nearly every step of the speech itself."""
    if not joins:
        return float("nan")
    steps = np.abs(np.diff(audio))
    at = np.asarray(joins) - 1
    inside = np.delete(steps, at)
    return float(steps[at].max() / np.percentile(inside, 99.9))


@dataclass
class Figures:
    cer: list[float] = field(default_factory=list)
    snr: list[float] = field(default_factory=list)
    seam: list[float] = field(default_factory=list)
    """The same ratio measured on the whole decode at the same places comes as `seam_whole`."""
    seam_whole: list[float] = field(default_factory=list)
    first: list[float] = field(default_factory=list)
    work: list[float] = field(default_factory=list)
    audio: float = 0.0


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="three replies a language instead of eight")
    args = p.parse_args(argv)
    count = 3 if args.quick else 8
    family = KokoroFamily(cache_dir=_common.cache_dir())
    sources = {s.name: s for s in family.sources(None)}
    whisper = judge()
    results: dict[str, dict[str, Figures]] = {}
    for voice_name, language, texts in (
        ("zf_xiaoxiao", "zh", REPLIES_ZH[:count]),
        ("jf_alpha", "ja", REPLIES_JA[:count]),
    ):
        loaded = family.load(sources[voice_name])
        variants = {name: loaded.variant(**options) for name, options in SCHEDULES.items()}
        voice = variants[WHOLE]
        figures = {name: Figures() for name in SCHEDULES}
        for text in texts:
            whole = speak(voice, text)
            for name, variant in variants.items():
                got = whole if name == WHOLE else speak(variant, text)
                f = figures[name]
                f.cer.append(whisper.cer(got.audio * voice.gain, SAMPLE_RATE, language, text))
                f.first.append(got.first)
                f.work.append(got.work)
                f.audio += got.audio.size / SAMPLE_RATE
                if name != WHOLE:
                    f.snr.append(snr(whole.audio, got.audio))
                    f.seam.append(seam(got.audio, got.joins))
                    f.seam_whole.append(seam(whole.audio, got.joins))
        results[voice_name] = figures
        rows = []
        for name, f in figures.items():
            rows.append(
                [
                    name,
                    float(np.mean(f.cer)),
                    float(np.median(f.snr)) if f.snr else float("nan"),
                    float(np.nanmax(f.seam)) if f.seam else float("nan"),
                    float(np.nanmax(f.seam_whole)) if f.seam_whole else float("nan"),
                    1000 * float(np.median(f.first)),
                    sum(f.work) / f.audio,
                ]
            )
        print(
            _common.table(
                f"{voice_name}: {len(texts)} replies, chunked against whole runs (one thread; "
                "seam: largest jump at a join / 99.9th pct of jumps elsewhere)",
                ["decoding", "CER", "SNR dB p50", "seam max", "same spots whole", "first ms p50",
                 "work / audio"],
                rows,
            )
        )  # fmt: skip
    _common.write_json(
        args.json,
        {
            "benchmark": "kokoro_chunks",
            "replies_per_language": count,
            "voices": {
                voice: {
                    name: {
                        "cer_mean": float(np.mean(f.cer)),
                        "snr_db_median": float(np.median(f.snr)) if f.snr else None,
                        "seam_max": float(np.nanmax(f.seam)) if f.seam else None,
                        "seam_whole_max": float(np.nanmax(f.seam_whole)) if f.seam_whole else None,
                        "first_ms_median": 1000 * float(np.median(f.first)),
                        "work_per_audio_second": sum(f.work) / f.audio,
                    }
                    for name, f in figures.items()
                }
                for voice, figures in results.items()
            },
        },
    )


if __name__ == "__main__":
    main()
