"""Time to first PCM and real-time factor: voxlite's engine against PiperVoice.synthesize;
then how much audio per second the machine synthesizes with every core busy, with the ways
the server could run its model work."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import piper
from voxlite.service.call.segmenter import Segmenter
from voxlite.service.engines.engine import VoiceRequest, VoiceSource
from voxlite.service.engines.piper import (
    EMBEDDED_VOICE,
    PiperFamily,
    PiperVoice,
    embedded_voice_files,
)
from voxlite.service.engines.piper.calibration import calibrate
from voxlite.service.engines.piper.config import FAMILY, read_voice_info
from voxlite.service.engines.piper.model import PiperModel
from voxlite.service.engines.piper.split import split_graph
from voxlite.service.engines.piper.split_cache import SplitCache
from voxlite.service.engines.runtime import OrtSettings

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


def windows(
    voice: PiperVoice, text: str, ahead: float = 0.0, *, wide: bool = False
) -> Iterator[np.ndarray]:
    """The server's path: segmenter, then each segment window by window, in order; yields
    each window's samples (native rate, before gain). `ahead`: seconds the listener has in
    hand (windows grow to match); `wide`: every run with the wide sessions (an idle server's)."""
    params = voice.params(VoiceRequest())  # the voice's own noise settings
    segmenter = Segmenter()
    for text_segment in [*segmenter.push(text), *segmenter.flush()]:
        if not text_segment.strip():
            continue
        segment = voice.segment(text_segment.strip(), params, word_timestamps=False)
        while (window := segment.next_window(ahead, wide=wide)) is not None:
            yield window


def speak_windows(
    voice: PiperVoice, text: str, ahead: float = 0.0, *, wide: bool = False
) -> Iterator[int]:
    """The sizes of windows()."""
    return (w.size for w in windows(voice, text, ahead, wide=wide))


UNDER_LOAD = 12.0
"""Seconds of audio in hand that make every window as large as the schedule allows, as under
load (listeners with audio in hand)."""


def voxlite_engine(name: str, voice: PiperVoice, *, wide: bool = False) -> Engine:
    """One reply at a time; `wide`: every run with the wide sessions (an idle server's)."""
    rate = voice.info.native_rate

    def speak(text: str) -> Run:
        start = time.perf_counter()
        first: float | None = None
        samples = 0
        for size in speak_windows(voice, text, wide=wide):
            if first is None:
                first = time.perf_counter()
            samples += size
        end = time.perf_counter()
        if first is None:
            raise RuntimeError(f"no audio for {text!r}")
        return Run(first - start, end - start, samples / rate)

    return Engine(name, speak)


@dataclass(frozen=True)
class Throughput:
    audio_per_second: float
    """Seconds of audio synthesized per wall-clock second."""
    cpu: float
    """Share of all cores used by this process."""


def throughput(
    voice: PiperVoice, workers: int, seconds: float, *, wide: bool = False
) -> Throughput:
    """`workers` threads each speak the corpus back to back for `seconds`, windows as large as
    under load (listeners with audio in hand), as the server's workers would with streams
    waiting; `wide`: each run with the wide sessions."""
    rate = voice.info.native_rate
    samples = [0] * workers
    stop = time.monotonic() + seconds

    def work(k: int) -> None:
        turn = k
        while time.monotonic() < stop:
            text = REPLIES[turn % len(REPLIES)]
            for size in speak_windows(voice, text, ahead=UNDER_LOAD, wide=wide):
                samples[k] += size
            turn += 1

    threads = [threading.Thread(target=work, args=(k,)) for k in range(workers)]
    start, cpu_start = time.monotonic(), os.times()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall, cpu_end = time.monotonic() - start, os.times()
    cpu = cpu_end.user - cpu_start.user + cpu_end.system - cpu_start.system
    return Throughput(sum(samples) / rate / wall, cpu / wall / (os.cpu_count() or 1))


def piper_engine(name: str, voice: piper.PiperVoice) -> Engine:
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


def load_voxlite(settings: OrtSettings) -> PiperVoice:
    """The default voice as the server loads it (calibration runs every window size once)."""
    family = PiperFamily(settings, SplitCache(_common.cache_dir()))
    return family.load(VoiceSource(EMBEDDED_VOICE, FAMILY, embedded_voice_files()))


def split_voice(settings: OrtSettings, **split_options: bool) -> PiperVoice:
    """The default voice split another way: `conv_2d=False`, without the 2-D convolutions
    (rewrite.convs_as_2d); `stages=False`, with its flow and vocoder whole, so that each window
    recomputes the whole part's context."""
    model_path, config_path = embedded_voice_files()
    info, config = read_voice_info(model_path, config_path)
    split = split_graph(model_path.read_bytes(), model_path, **split_options)
    model = PiperModel(info, config, split, settings)
    return PiperVoice(model, calibrate(model, "Sure, I can help with that."))


def cpu_per_audio_second(
    voices: dict[str, PiperVoice], ahead: float, rounds: int
) -> dict[str, float]:
    """Milliseconds of CPU (this thread's) per second of audio, speaking the corpus window by
    window with `ahead` frames in hand, the voices taking turns reply by reply."""
    cpu = dict.fromkeys(voices, 0.0)
    samples = dict.fromkeys(voices, 0)
    for _ in range(rounds):
        for text in REPLIES:
            for name, voice in voices.items():
                start = time.thread_time()
                samples[name] += sum(speak_windows(voice, text, ahead=ahead))
                cpu[name] += time.thread_time() - start
    return {
        name: 1000 * cpu[name] / (samples[name] / voice.info.native_rate)
        for name, voice in voices.items()
    }


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
    voice = load_voxlite(OrtSettings(intra_op_threads=1, wide_threads=2))
    engines = [
        voxlite_engine("voxlite, 1 thread (each worker, busy server)", voice),
        voxlite_engine("voxlite, 2 threads (wide runs, idle server)", voice, wide=True),
        piper_engine(
            "piper PiperVoice.synthesize (ort default: all cores)", piper.PiperVoice.load(model)
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
    baseline = engines[-1].name
    ratios: dict[str, dict[str, float]] = {}
    for e in engines[:-1]:
        r = {
            "first_pcm_p50": _common.ratio(first[baseline].p50, first[e.name].p50),
            "first_pcm_p95": _common.ratio(first[baseline].p95, first[e.name].p95),
            "rtf_p50": _common.ratio(rtf[baseline].p50, rtf[e.name].p50),
            "rtf_p95": _common.ratio(rtf[baseline].p95, rtf[e.name].p95),
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

    # Every core busy: what the scheduler's workers can carry, by how they run.
    seconds = 8.0 if args.quick else 20.0
    plain = split_voice(OrtSettings(intra_op_threads=1, wide_threads=1), conv_2d=False)
    ways = [
        ("2 workers x 1 thread, 2-D vocoder (the server, busy)", voice, 2, False),
        ("2 workers x 1 thread, 1-D vocoder (the plain split)", plain, 2, False),
        ("1 worker x 2 threads (wide runs back to back)", voice, 1, True),
        ("1 worker x 1 thread", voice, 1, False),
    ]
    speeds = {name: throughput(v, n, seconds, wide=wide) for name, v, n, wide in ways}
    base = speeds[ways[2][0]].audio_per_second
    print(
        _common.table(
            f"throughput: workers speaking the corpus back to back for {seconds:.0f} s, windows "
            "as under load",
            ["how", "audio s per s", "vs 1x2 threads", "cpu %"],
            [
                [name, t.audio_per_second, t.audio_per_second / base, 100 * t.cpu]
                for name, t in speeds.items()
            ],
        )
    )
    # The flow and vocoder cut into stages (each keeping its output for the next window)
    # against the same parts whole (each window with the whole part's context).
    whole = split_voice(OrtSettings(intra_op_threads=1, wide_threads=1), stages=False)
    pair = {"stages (voxlite)": voice, "whole parts": whole}
    stage_rows: list[list[object]] = []
    stage_json: dict[str, dict[str, float]] = {}
    sides = (("from silence (each reply alone)", 0.0), ("windows as under load", UNDER_LOAD))
    for label, ahead in sides:
        cost = cpu_per_audio_second(pair, ahead, max(1, rounds // 2))
        stage_json[label] = cost
        ratio = cost["whole parts"] / cost["stages (voxlite)"]
        stage_rows.append([label, cost["stages (voxlite)"], cost["whole parts"], ratio])
    print(
        _common.table(
            "model CPU per second of audio, one thread: flow and vocoder in stages or whole",
            ["windows", "stages ms", "whole parts ms", "whole / stages"],
            stage_rows,
        )
    )
    _common.write_json(
        args.json,
        {
            "benchmark": "engine",
            "stages_cpu_ms_per_audio_second": stage_json,
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
            "throughput": {
                name: {"audio_per_second": t.audio_per_second, "cpu": t.cpu}
                for name, t in speeds.items()
            },
        },
    )


if __name__ == "__main__":
    main()
