"""Kokoro's decoding shortcuts judged against its own whole decode: Whisper base CER, DNSMOS
(speechmos), SNR, seams at the joins, first audio and total work (docs/kokoro.md)."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import soxr
from voxlite.service.call.opening import segments_of
from voxlite.service.engines.kokoro import KokoroFamily
from voxlite.service.engines.kokoro.decode import HOP, SAMPLE_RATE, WINDOWS, ChunkSchedule
from voxlite.service.engines.kokoro.voice import KokoroParams, KokoroVoice

from tests.whisper import judge

from . import _common
from .kokoro_corpus import REPLIES_JA, REPLIES_ZH
from .seeds import SENTENCES

warnings.filterwarnings("ignore", "open_text is deprecated", DeprecationWarning)

REFERENCE = "Kokoro's whole decode, pads whole (reference)"
PADS_CUT = "pads cut, pieces whole (the server's decoding)"
WINDOWED = "pads cut, windows when late (WINDOWS, an option)"
# Each way: the voice's options and the listener it decodes for (what it has in hand).
SCHEDULES: dict[str, dict[str, Any]] = {
    PADS_CUT: {"late": None},
    WINDOWED: {"late": WINDOWS},
    "pads cut, windows when late, first 12, context 8": {
        "late": ChunkSchedule(first=12, largest=96, context=8, overlap=4)
    },
    "pads cut, windows when late, first 12, context 24": {
        "late": ChunkSchedule(first=12, largest=96, context=24, overlap=4)
    },
    "pads cut, every piece in windows (nothing ever in hand)": {"chunks": WINDOWS},
}
# The listener of the rows above: one stream on a machine that decodes at this real-time
# factor (seconds of one thread per second of audio, about Kokoro's here), so that the audio
# in hand, and with it the choice of windows, is the same on any machine.
PACE = 0.5


@dataclass
class Spoken:
    """One text through one way of decoding."""

    audio: np.ndarray
    joins: list[int]
    """Sample index of each join between two windows of a piece."""
    first: float
    """Thread seconds from the text to its first audio (G2P, encoder, first decoder run)."""
    work: float
    """Thread seconds for all of it."""


def segments(text: str, voice: KokoroVoice) -> list[str]:
    """`text` cut as the server cuts it for `voice` (the first clause alone, then sentences)."""
    return segments_of(text, voice.first_clause_chars)


def speak(voice: KokoroVoice, text: str) -> Spoken:
    """`text` through the segmenter and the voice's segments on this thread (one ORT thread),
    to a listener who starts with nothing and has in hand what was made, less what a decode
    at PACE took to make it."""
    started = time.thread_time()
    first: float | None = None
    parts: list[np.ndarray] = []
    joins: list[int] = []
    made = spent = 0.0
    for text_segment in segments(text, voice):
        segment = voice.segment(text_segment, KokoroParams(1.0), word_timestamps=False)
        done = sum(p.size for p in parts)
        # wide: as an idle server runs it, where a piece late for its listener goes in windows.
        while (window := segment.next_window(max(0.0, made - spent), wide=True)) is not None:
            first = time.thread_time() - started if first is None else first
            parts.append(window)
            made += window.size / SAMPLE_RATE
            spent += PACE * window.size / SAMPLE_RATE
        joins += [done + j for j in segment.joins]
    assert first is not None
    return Spoken(np.concatenate(parts), joins, first, time.thread_time() - started)


def reference(voice: KokoroVoice, text: str) -> Spoken:
    """Each segment's pieces as the model gives them, pads whole, each decoded whole."""
    started = time.thread_time()
    parts, first = [], None
    for text_segment in segments(text, voice):
        for piece in voice.pieces(text_segment):
            ids, style = piece.ids, voice.style(len(piece.ids))
            parts.append(voice.decode(voice.model.encode(ids, style, 1.0, lead=1 << 20)))
            first = time.thread_time() - started if first is None else first
    assert first is not None
    return Spoken(np.concatenate(parts), [], first, time.thread_time() - started)


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


# DNSMOS scores 9 s windows and repeats a shorter clip end to end to fill one, so a short
# sentence sent with 50 ms of silence before its first word is scored as speech with no pause
# between the repeats, and one with its whole pads scores higher for the silence alone.
# `edges_alike` scores every decoding with its edge silence trimmed and EDGE_SILENCE put back
# on each side: the sound of the speech, not how much silence leads it (docs/kokoro.md,
# "DNSMOS of a short sentence depends on the silence around it").
EDGE_SILENCE = 0.3
# Edge frames quieter than this under the clip's loudest frame (10 ms frames) are silence;
# EDGE_KEPT frames of them stay next to the speech, for a soft onset or release.
EDGE_DB = 40.0
EDGE_KEPT = 5


def edges_alike(audio: np.ndarray) -> np.ndarray:
    """`audio` with its leading and closing silence trimmed to EDGE_KEPT frames and
    EDGE_SILENCE seconds of zeros put on each side."""
    frame = SAMPLE_RATE // 100
    n = audio.size // frame
    rms = np.sqrt(np.mean(audio[: n * frame].reshape(n, frame) ** 2, axis=1, dtype=np.float64))
    loud = np.nonzero(rms > rms.max() * 10 ** (-EDGE_DB / 20))[0] if n else np.zeros(0, int)
    if loud.size:
        audio = audio[max(0, loud[0] - EDGE_KEPT) * frame : (loud[-1] + 1 + EDGE_KEPT) * frame]
    pad = np.zeros(int(EDGE_SILENCE * SAMPLE_RATE), dtype=audio.dtype)
    return np.concatenate([pad, audio, pad])


def dnsmos() -> Callable[[np.ndarray], tuple[float, float]]:
    """DNSMOS (speechmos, ONNX, offline): (OVRL, P.808) of 24 kHz audio."""
    from speechmos import dnsmos as model

    def score(audio: np.ndarray) -> tuple[float, float]:
        x = np.clip(soxr.resample(audio, SAMPLE_RATE, 16000), -1.0, 1.0)
        got = model.run(x.astype(np.float32), sr=16000)
        return float(got["ovrl_mos"]), float(got["p808_mos"])

    return score


@dataclass
class Figures:
    cer: list[float] = field(default_factory=list)
    ovrl: list[float] = field(default_factory=list)
    ovrl_alike: list[float] = field(default_factory=list)
    """OVRL of the decoding with its edge silence made alike (edges_alike)."""
    p808: list[float] = field(default_factory=list)
    snr: list[float] = field(default_factory=list)
    seam: list[float] = field(default_factory=list)
    """The same ratio measured on the whole decode at the same places comes as `seam_whole`."""
    seam_whole: list[float] = field(default_factory=list)
    first: list[float] = field(default_factory=list)
    work: list[float] = field(default_factory=list)
    audio: float = 0.0

    def row(self) -> dict[str, float | None]:
        def mid(values: list[float]) -> float | None:
            return float(np.median(values)) if values else None

        return {
            "cer_mean": float(np.mean(self.cer)),
            "dnsmos_ovrl_mean": float(np.mean(self.ovrl)),
            "dnsmos_p808_mean": float(np.mean(self.p808)),
            "dnsmos_ovrl_edges_alike_mean": float(np.mean(self.ovrl_alike)),
            "snr_db_median": mid(self.snr),
            "seam_max": float(np.nanmax(self.seam)) if self.seam else None,
            "seam_whole_max": float(np.nanmax(self.seam_whole)) if self.seam_whole else None,
            "first_ms_median": 1000 * float(np.median(self.first)),
            "work_per_audio_second": sum(self.work) / self.audio,
        }


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="three replies a language instead of eight")
    p.add_argument(
        "--seeds",
        action="store_true",
        help="Mandarin only, the 40 short sentences of bench.seeds instead of the replies",
    )
    args = p.parse_args(argv)
    count = 3 if args.quick else 8
    corpus = (
        [("zf_xiaoxiao", "zh", SENTENCES[: 12 if args.quick else None])]
        if args.seeds
        else [("zf_xiaoxiao", "zh", REPLIES_ZH[:count]), ("jf_alpha", "ja", REPLIES_JA[:count])]
    )
    family = KokoroFamily(cache_dir=_common.cache_dir())
    sources = {s.name: s for s in family.sources(None)}
    whisper, quality = judge(), dnsmos()
    results: dict[str, dict[str, Figures]] = {}
    for voice_name, language, texts in corpus:
        loaded = family.load(sources[voice_name])
        variants = {name: loaded.variant(**options) for name, options in SCHEDULES.items()}
        figures = {name: Figures() for name in [REFERENCE, *SCHEDULES]}
        for text in texts:
            cut_whole = speak(variants[PADS_CUT], text)
            for name in figures:
                if name == REFERENCE:
                    got = reference(loaded, text)
                elif name == PADS_CUT:
                    got = cut_whole
                else:
                    got = speak(variants[name], text)
                f = figures[name]
                heard = got.audio * loaded.gain
                f.cer.append(whisper.cer(heard, SAMPLE_RATE, language, text))
                ovrl, p808 = quality(heard)
                f.ovrl.append(ovrl)
                f.p808.append(p808)
                f.ovrl_alike.append(quality(edges_alike(heard))[0])
                f.first.append(got.first)
                f.work.append(got.work)
                f.audio += got.audio.size / SAMPLE_RATE
                if name not in (REFERENCE, PADS_CUT):
                    f.snr.append(snr(cut_whole.audio, got.audio))
                    f.seam.append(seam(got.audio, got.joins))
                    f.seam_whole.append(seam(cut_whole.audio, got.joins))
        results[voice_name] = figures
        base = figures[REFERENCE].row()
        rows = []
        for name, f in figures.items():
            r = f.row()
            rows.append([
                name, r["cer_mean"], r["dnsmos_ovrl_mean"],
                r["dnsmos_ovrl_mean"] - base["dnsmos_ovrl_mean"],  # type: ignore[operator]
                r["dnsmos_p808_mean"], r["dnsmos_ovrl_edges_alike_mean"],
                r["dnsmos_ovrl_edges_alike_mean"]  # type: ignore[operator]
                - base["dnsmos_ovrl_edges_alike_mean"],
                float("nan") if r["snr_db_median"] is None else r["snr_db_median"],
                float("nan") if r["seam_max"] is None else r["seam_max"],
                float("nan") if r["seam_whole_max"] is None else r["seam_whole_max"],
                r["first_ms_median"], r["work_per_audio_second"],
            ])  # fmt: skip
        print(
            _common.table(
                f"{voice_name}: {len(texts)} texts against Kokoro's own whole decode (one "
                f"thread, a listener at RTF {PACE}; SNR against the pieces whole with the pads "
                "cut; seam: largest jump at a join / 99.9th pct of jumps elsewhere)",
                ["decoding", "CER", "DNSMOS OVRL", "vs ref", "P.808", "edges alike", "vs ref",
                 "SNR dB p50", "seam max", "same spots whole", "first ms p50", "work / audio"],
                rows,
            )
        )  # fmt: skip
    _common.write_json(
        args.json,
        {
            "benchmark": "kokoro_chunks",
            "texts": "the seeds' sentences" if args.seeds else f"{count} replies a language",
            "pace": PACE,
            "hop": HOP,
            "voices": {
                voice: {name: f.row() for name, f in figures.items()}
                for voice, figures in results.items()
            },
        },
    )


if __name__ == "__main__":
    main()
