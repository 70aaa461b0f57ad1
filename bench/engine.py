"""Time to first PCM and real-time factor: voxlite's engine against PiperVoice.synthesize."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from piper import PiperVoice
from voxlite.service.graph import SplitCache
from voxlite.service.registry import VoiceRegistry, embedded_voice_files
from voxlite.service.segmenter import Segmenter
from voxlite.service.voice import OrtSettings, SynthesisParams, VocoderSchedule, Voice

from . import _common
from .corpus import REPLIES


@dataclass(frozen=True)
class Run:
    """One reply spoken once: seconds to the first audio, total seconds, seconds of audio."""

    first: float
    total: float
    audio: float


@dataclass
class Engine:
    name: str
    speak: Callable[[str], Run]
    runs: list[Run] = field(default_factory=list)


def voxlite_engine(name: str, voice: Voice) -> Engine:
    """The server's path: segmenter, then each segment window by window, in order."""
    params: SynthesisParams = voice.params()  # the voice's own noise settings
    schedule = VocoderSchedule()
    rate = voice.info.native_rate

    def speak(text: str) -> Run:
        start = time.perf_counter()
        first: float | None = None
        samples = 0
        segmenter = Segmenter()
        for segment in [*segmenter.push(text), *segmenter.flush()]:
            if not segment.strip():
                continue
            synth = voice.segment(segment.strip(), params, schedule)
            while (window := synth.next_window()) is not None:
                if first is None:
                    first = time.perf_counter()
                samples += window.size
        end = time.perf_counter()
        if first is None:
            raise RuntimeError(f"no audio for {text!r}")
        return Run(first - start, end - start, samples / rate)

    return Engine(name, speak)


def piper_engine(name: str, voice: PiperVoice) -> Engine:
    """Piper's own API: one AudioChunk per sentence, with its default settings."""

    def speak(text: str) -> Run:
        start = time.perf_counter()
        first: float | None = None
        seconds = 0.0
        for chunk in voice.synthesize(text):
            if first is None:
                first = time.perf_counter()
            seconds += len(chunk.audio_float_array) / chunk.sample_rate
        end = time.perf_counter()
        if first is None:
            raise RuntimeError(f"no audio for {text!r}")
        return Run(first - start, end - start, seconds)

    return Engine(name, speak)


def load_voxlite(threads: int) -> Voice:
    registry = VoiceRegistry(
        voices_dir=None,
        cache=SplitCache(_common.cache_dir()),
        ort_settings=OrtSettings(intra_op_threads=threads),
    )
    registry.load()  # also calibrates, which runs every vocoder window size once
    return registry.default


def measure(engines: Sequence[Engine], texts: Sequence[str], rounds: int, warmup: int) -> None:
    """Interleave the engines reply by reply (rotating who goes first) so drift hits all alike."""
    for i, text in enumerate(texts[:warmup]):
        for k in range(len(engines)):
            engines[(i + k) % len(engines)].speak(text)
    turn = 0
    for _ in range(rounds):
        for text in texts:
            for k in range(len(engines)):
                engine = engines[(turn + k) % len(engines)]
                engine.runs.append(engine.speak(text))
            turn += 1


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="one round of the corpus instead of five")
    p.add_argument("--rounds", type=int, help="rounds of the 10-reply corpus (default 5, quick 1)")
    args = p.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 5)
    warmup = 3 if args.quick else len(REPLIES)

    model, _ = embedded_voice_files()
    default = OrtSettings().intra_op_threads
    engines = [
        voxlite_engine(
            f"voxlite, 1 intra-op thread{' (default)' * (default == 1)}", load_voxlite(1)
        ),
        voxlite_engine(
            f"voxlite, 2 intra-op threads{' (default)' * (default == 2)}", load_voxlite(2)
        ),
        piper_engine(
            "piper PiperVoice.synthesize (ort default: all cores)", PiperVoice.load(model)
        ),
    ]
    measure(engines, REPLIES, rounds, warmup)

    first = {e.name: _common.Stats.of([1000 * r.first for r in e.runs]) for e in engines}
    rtf = {e.name: _common.Stats.of([r.total / r.audio for r in e.runs]) for e in engines}
    rows: list[list[object]] = [
        [
            e.name,
            first[e.name].n,
            first[e.name].p50,
            first[e.name].p95,
            rtf[e.name].p50,
            rtf[e.name].p95,
        ]
        for e in engines
    ]
    piper = engines[-1].name
    ratios: dict[str, dict[str, float]] = {}
    for e in engines[:-1]:
        r = {
            "first_pcm_p50": _common.ratio(first[piper].p50, first[e.name].p50),
            "first_pcm_p95": _common.ratio(first[piper].p95, first[e.name].p95),
            "rtf_p50": _common.ratio(rtf[piper].p50, rtf[e.name].p50),
            "rtf_p95": _common.ratio(rtf[piper].p95, rtf[e.name].p95),
        }
        ratios[e.name] = r
        label = "ratio piper / " + e.name.split(" (")[0]
        rows.append([label, "", r["first_pcm_p50"], r["first_pcm_p95"], r["rtf_p50"], r["rtf_p95"]])
    header = ["engine", "n", "first PCM p50 ms", "p95 ms", "RTF p50", "RTF p95"]
    audio = sum(r.audio for r in engines[0].runs)
    print(
        _common.table(
            f"engine: {len(REPLIES)} replies x {rounds} round(s), {audio:.0f} s of audio per "
            "engine (RTF = wall time / audio time; ratio > 1: voxlite sooner/faster)",
            header,
            rows,
        )
    )
    _common.write_json(
        args.json,
        {
            "benchmark": "engine",
            "rounds": rounds,
            "replies": len(REPLIES),
            "engines": {
                e.name: {
                    "first_pcm_ms": first[e.name].as_dict(),
                    "rtf": rtf[e.name].as_dict(),
                    "audio_seconds": sum(r.audio for r in e.runs),
                }
                for e in engines
            },
            "ratios_piper_over_voxlite": ratios,
        },
    )


if __name__ == "__main__":
    main()
