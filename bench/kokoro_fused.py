"""Kokoro's fused decoder operators (service/engines/kokoro/fused.py) judged and timed: the
decoder with and without them on the same pieces, and Whisper base CER and DNSMOS of the same
replies spoken both ways (each piece decoded whole), beside the noise of those judges: the
decoder without them, its input features moved by one part in a million (an inaudible change,
which moves 8-bit codes as the fused operators do).

    python -m bench.kokoro_fused [--quick] [--json out.json]
    python -m bench.kokoro_fused --profile   # where the fused decoder's time goes on this CPU
    python -m bench.kokoro_fused --sums      # what the residual blocks' fused sums save
    python -m bench.kokoro_fused --against OTHER.so   # this build's operators against another

`--profile` times the server's decoder alone on the seeds' Mandarin sentences (bench.seeds)
in onnxruntime's profiler: each operator's share of the time, and how many 8-bit
multiply-adds the matrix products do a second of audio and at what rate. Those products are
work no operator fusion removes: their rate against the CPU's 8-bit peak says how much
faster the decoder can still get on it.

`--sums` times the server's decoder against the same without the ResidualSum operators (each
residual block's closing sum left to onnxruntime's Transpose, Add, Cast, Mul and Add), piece by
piece in turn so that the host's drift falls on both, and gives the largest difference between
their audio. `--against` times the same way the server's decoder with this install's
operator library against the same graph with another build of it (say, main's
`_fused_ops*.so`, copied aside before a change to fused_ops.c is installed).
"""

from __future__ import annotations

import collections
import json
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from voxlite.service.engines.kokoro import KokoroFamily
from voxlite.service.engines.kokoro.decode import SAMPLE_RATE, Encoded
from voxlite.service.engines.kokoro.graph import ASR, ENERGY, F0, PHASE, SplitCache, fused_form
from voxlite.service.engines.kokoro.voice import KokoroParams, KokoroVoice
from voxlite.service.engines.runtime import OrtSettings

from tests.whisper import judge

from . import _common
from .kokoro_chunks import dnsmos, reference
from .kokoro_corpus import REPLIES_JA, REPLIES_ZH
from .seeds import SENTENCES

warnings.filterwarnings("ignore", "open_text is deprecated", DeprecationWarning)

VOICES = {
    "zh": ("zf_xiaoxiao", (*REPLIES_ZH, "你好，欢迎使用语音合成服务。")),
    "ja": ("jf_alpha", (*REPLIES_JA, "今日はいい天気ですね。駅まで歩いて十分ぐらいです。")),
}
# Relative size of the input perturbation that gives the judges' noise: far below anything
# audible, and enough to move the decoder's 8-bit codes as a different rounding does.
NUDGE = 1e-6
PLAIN = "matrix products, operators as exported"
FUSED = "matrix products and fused operators (voxlite)"


class _Nudged:
    """A decoder session whose input features are each moved by a random NUDGE."""

    def __init__(self, session: Any, seed: int) -> None:
        self._session = session
        self._rng = np.random.default_rng(seed)

    def run(self, outputs: Any, feed: dict[str, np.ndarray], *args: Any) -> Any:
        asr = feed[ASR]
        moved = asr * (1 + NUDGE * self._rng.standard_normal(asr.shape))
        return self._session.run(outputs, {**feed, ASR: moved.astype(np.float32)}, *args)


@dataclass
class Verdict:
    cer: float
    ovrl: float


def judged(voice: KokoroVoice, language: str, texts: Sequence[str]) -> Verdict:
    """Mean CER and DNSMOS OVRL of `texts` spoken by `voice`, each piece decoded whole: the
    same decoding plan for every decoder (the server's windows depend on timing)."""
    whisper, mos = judge(), dnsmos()
    cers, scores = [], []
    for text in texts:
        audio = reference(voice, text).audio * voice.gain
        cers.append(whisper.cer(audio, SAMPLE_RATE, language, text))
        scores.append(mos(audio)[0])
    return Verdict(float(np.mean(cers)), float(np.mean(scores)))


def seconds_per_audio_second(session: ort.InferenceSession, encoded: Sequence[Encoded]) -> float:
    """Decoder wall seconds per second of audio over the pieces, one run at a time."""

    def decode(enc: Encoded) -> None:
        session.run(["audio"], {ASR: enc.asr, F0: enc.f0, ENERGY: enc.energy,
                                PHASE: enc.phase, "style": enc.style})  # fmt: skip

    decode(encoded[0])  # warm-up
    start = time.perf_counter()
    for enc in encoded:
        decode(enc)
    return (time.perf_counter() - start) / (sum(e.frames for e in encoded) * 600 / SAMPLE_RATE)


def _seed_pieces(family: KokoroFamily) -> list[Encoded]:
    voice = family.load({s.name: s for s in family.sources(None)}["zf_xiaoxiao"])
    return [
        voice.encode(piece, KokoroParams(1.0)) for text in SENTENCES for piece in voice.pieces(text)
    ]


def profile(family: KokoroFamily, rounds: int) -> dict[str, Any]:
    """The fused decoder (one thread, the server's) in onnxruntime's profiler over the seeds'
    sentences: each operator type's share of the time, and the 8-bit products' work a second
    of audio and rate."""
    assert family.fused_ops is not None
    encoded = _seed_pieces(family)
    options = OrtSettings().session_options(1)
    options.register_custom_ops_library(str(family.fused_ops))
    options.enable_profiling = True
    with tempfile.TemporaryDirectory() as folder:
        options.profile_file_prefix = f"{folder}/decoder"
        session = ort.InferenceSession(
            SplitCache(_common.cache_dir()).load(matmul_convs=True, fused=True).decoder,
            options,
            providers=["CPUExecutionProvider"],
        )
        speed = seconds_per_audio_second(session, encoded * rounds)
        with open(session.end_profiling()) as f:
            events = json.load(f)
    audio = rounds * sum(e.frames for e in encoded) * 600 / SAMPLE_RATE
    spent: collections.Counter[str] = collections.Counter()
    macs = 0
    for event in events:
        if event.get("cat") != "Node" or not event["name"].endswith("_kernel_time"):
            continue
        args = event["args"]
        op = args["op_name"]
        spent[op] += event["dur"]
        if op == "MatMulInteger":  # rows x depth, by the output's columns
            (rows_by_depth,) = args["input_type_shape"][0].values()
            (out,) = args["output_type_shape"][0].values()
            macs += int(np.prod(rows_by_depth)) * out[-1]
    total = sum(spent.values())
    products = spent["MatMulInteger"] / 1e6
    return {
        "pieces": len(encoded),
        "seconds_per_audio_second": speed,
        "share": {op: us / total for op, us in spent.most_common()},
        "product_gmac_per_audio_second": macs / 1e9 / audio,
        "product_seconds_per_audio_second": products / audio,
        "product_gops": 2 * macs / 1e9 / products,
    }


def alternated(
    sessions: dict[str, ort.InferenceSession], encoded: Sequence[Encoded], rounds: int
) -> dict[str, Any]:
    """Two decoder sessions on the same pieces, each piece decoded by one then the other (the
    order alternating, so that the host's drift falls on both), `rounds` times: seconds per
    audio second of each, and the largest difference between their audio."""
    first, second = sessions
    spent = dict.fromkeys(sessions, 0.0)
    differs = 0.0
    for r in range(rounds):
        for i, enc in enumerate(encoded):
            feed = {ASR: enc.asr, F0: enc.f0, ENERGY: enc.energy, PHASE: enc.phase,
                    "style": enc.style}  # fmt: skip
            audio = {}
            for name in sorted(sessions, reverse=(r + i) % 2 == 1):
                start = time.perf_counter()
                audio[name] = sessions[name].run(["audio"], feed)[0]
                spent[name] += time.perf_counter() - start
            differs = max(differs, float(np.abs(audio[first] - audio[second]).max()))
    seconds = rounds * sum(e.frames for e in encoded) * 600 / SAMPLE_RATE
    return {
        "pieces": len(encoded),
        "rounds": rounds,
        "seconds_per_audio_second": {k: v / seconds for k, v in spent.items()},
        "largest_audio_difference": differs,
    }


def sums(family: KokoroFamily, rounds: int) -> dict[str, Any]:
    """The server's fused decoder against the same without the residual blocks' fused sums,
    one thread, over the seeds' sentences, alternated."""
    assert family.fused_ops is not None
    cache = SplitCache(_common.cache_dir())
    forms = {
        "with ResidualSum": cache.load(matmul_convs=True, fused=True).decoder,
        "without ResidualSum": fused_form(cache.load(matmul_convs=True).decoder, sums=False),
    }
    options = OrtSettings().session_options(1)
    options.register_custom_ops_library(str(family.fused_ops))
    sessions = {
        name: ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        for name, graph in forms.items()
    }
    return alternated(sessions, _seed_pieces(family), rounds)


def against(family: KokoroFamily, other: Path, rounds: int) -> dict[str, Any]:
    """The server's fused decoder with this install's operator library against the same graph
    with another build of it (another commit's fused_ops.c), one thread, over the seeds'
    sentences, alternated."""
    assert family.fused_ops is not None
    graph = SplitCache(_common.cache_dir()).load(matmul_convs=True, fused=True).decoder
    sessions = {}
    for name, built in (("this build", family.fused_ops), (str(other), other)):
        options = OrtSettings().session_options(1)
        options.register_custom_ops_library(str(built))
        sessions[name] = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    return alternated(sessions, _seed_pieces(family), rounds)


def _print_alternated(found: dict[str, Any], what: str, baseline: str) -> None:
    speed = found["seconds_per_audio_second"]
    print(
        _common.table(
            f"the fused decoder, 1 thread: {found['pieces']} pieces of the seeds' sentences "
            f"x {found['rounds']}, alternated",
            [what, "s per audio s", f"x {baseline}"],
            [[k, f"{v:.3f}", f"{v / speed[baseline]:.3f}"] for k, v in speed.items()],
        )
    )
    print(f"largest difference between the two audios: {found['largest_audio_difference']:.1e}")


def _print_profile(found: dict[str, Any], json_path: Path | None) -> None:
    print(
        _common.table(
            f"the fused decoder, 1 thread: {found['pieces']} pieces of the seeds' "
            f"sentences, {found['seconds_per_audio_second']:.3f} s per audio s",
            ["operator", "share of the time"],
            [[op, f"{share:.1%}"] for op, share in list(found["share"].items())[:8]],
        )
    )
    print(
        f"8-bit matrix products: {found['product_gmac_per_audio_second']:.1f} billion "
        f"multiply-adds and {found['product_seconds_per_audio_second']:.3f} s per audio s, "
        f"{found['product_gops']:.0f} billion operations/s"
    )
    _common.write_json(json_path, {"benchmark": "kokoro_fused --profile", **found})


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="three replies a language, two noise draws")
    only = p.add_mutually_exclusive_group()
    only.add_argument(
        "--profile", action="store_true", help="only where the fused decoder's time goes"
    )
    only.add_argument(
        "--sums", action="store_true", help="only what the residual blocks' fused sums save"
    )
    only.add_argument(
        "--against",
        type=Path,
        metavar="LIBRARY",
        help="only this install's operator library against another build of it",
    )
    args = p.parse_args(argv)
    if args.against and not args.against.is_file():
        raise SystemExit(f"--against: no library at {args.against}")
    if args.sums or args.against or args.profile:
        family = KokoroFamily(cache_dir=_common.cache_dir(), fused_ops=True)
        if family.fused_ops is None:
            raise SystemExit("this CPU or install runs Kokoro's decoder without fused operators")
        if args.profile:
            _print_profile(profile(family, 1 if args.quick else 3), args.json)
            return
        rounds = 2 if args.quick else 6
        if args.sums:
            found = sums(family, rounds)
            _print_alternated(found, "residual blocks' closing sums", "without ResidualSum")
            _common.write_json(args.json, {"benchmark": "kokoro_fused --sums", **found})
        else:
            found = against(family, args.against, rounds)
            _print_alternated(found, "operator library", str(args.against))
            _common.write_json(args.json, {"benchmark": "kokoro_fused --against", **found})
        return
    draws = 2 if args.quick else 4
    count = 3 if args.quick else None
    plain_family = KokoroFamily(cache_dir=_common.cache_dir(), fused_ops=False)
    fused_family = KokoroFamily(cache_dir=_common.cache_dir(), fused_ops=True)
    if not plain_family.matmul_convs:
        raise SystemExit("this CPU keeps Kokoro's exported decoder: the fused operators are unused")
    sources = {s.name: s for s in plain_family.sources(None)}
    out: dict[str, Any] = {"benchmark": "kokoro_fused", "nudge": NUDGE}

    # Speed: the two decoders on the same pieces, one thread, one run at a time.
    cache, settings = SplitCache(_common.cache_dir()), OrtSettings()
    zh = plain_family.load(sources["zf_xiaoxiao"])
    encoded = [
        zh.encode(piece, KokoroParams(1.0))
        for text in VOICES["zh"][1][:count]
        for piece in zh.pieces(text)
    ]
    options = settings.session_options(1)
    options.register_custom_ops_library(str(fused_family.fused_ops))
    sessions = {
        PLAIN: ort.InferenceSession(
            cache.load(matmul_convs=True).decoder,
            settings.session_options(1),
            providers=["CPUExecutionProvider"],
        ),
        FUSED: ort.InferenceSession(
            cache.load(matmul_convs=True, fused=True).decoder,
            options,
            providers=["CPUExecutionProvider"],
        ),
    }
    speed = {name: seconds_per_audio_second(s, encoded) for name, s in sessions.items()}
    print(
        _common.table(
            f"the decoder, 1 thread, one run at a time: {len(encoded)} Mandarin pieces",
            ["decoder", "s per audio s", "x the operators as exported"],
            [[k, v, speed[PLAIN] / v] for k, v in speed.items()],
        )
    )
    out["seconds_per_audio_second"] = speed

    # Quality: the same replies through the server's segments, each decoder, and the noise.
    for language, (name, texts) in VOICES.items():
        texts = texts[:count]
        plain = plain_family.load(sources[name])
        fused = fused_family.load(sources[name])
        rows: dict[str, Verdict] = {PLAIN: judged(plain, language, texts)}
        for seed in range(draws):
            model = plain.model
            narrow, wide = model._decoder, model._wide
            model._decoder, model._wide = _Nudged(narrow, seed), _Nudged(wide, seed)
            try:
                rows[f"{PLAIN}, input x (1 + 1e-6 noise), draw {seed + 1}"] = judged(
                    plain, language, texts
                )
            finally:
                model._decoder, model._wide = narrow, wide
        rows[FUSED] = judged(fused, language, texts)
        # The judges' noise: what the decoder as exported scores, with and without the nudge.
        noise = [v for k, v in rows.items() if k != FUSED]
        band_cer = (min(v.cer for v in noise), max(v.cer for v in noise))
        band_ovrl = (min(v.ovrl for v in noise), max(v.ovrl for v in noise))
        print(
            _common.table(
                f"{name} ({language}): {len(texts)} replies, Whisper base CER and DNSMOS OVRL "
                f"(noise: CER {band_cer[0]:.3f} to {band_cer[1]:.3f}, "
                f"OVRL {band_ovrl[0]:.3f} to {band_ovrl[1]:.3f})",
                ["decoder", "CER", "OVRL", "OVRL - as exported"],
                [
                    [k, f"{v.cer:.3f}", f"{v.ovrl:.3f}", f"{v.ovrl - rows[PLAIN].ovrl:+.3f}"]
                    for k, v in rows.items()
                ],
            )
        )
        out[f"judged_{language}"] = {k: vars(v) for k, v in rows.items()}
    _common.write_json(args.json, out)


if __name__ == "__main__":
    main()
