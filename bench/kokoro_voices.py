"""Whisper base CER of every shipped Kokoro voice on the agent replies (docs/kokoro.md)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from voxlite.service.engines.kokoro import KokoroFamily
from voxlite.service.engines.kokoro.decode import SAMPLE_RATE

from tests.whisper import judge

from . import _common
from .kokoro_chunks import speak
from .kokoro_corpus import REPLIES_BY_LANGUAGE

warnings.filterwarnings("ignore", "open_text is deprecated", DeprecationWarning)


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="three replies a voice instead of eight")
    p.add_argument("--voices", nargs="*", help="only these voices (default: every one)")
    args = p.parse_args(argv)
    count = 3 if args.quick else 8
    family = KokoroFamily(cache_dir=_common.cache_dir())
    whisper = judge()
    rows: list[list[object]] = []
    figures: dict[str, dict[str, float]] = {}
    for source in family.sources(None):
        if args.voices and source.name not in args.voices:
            continue
        voice = family.load(source)
        language = voice.info.language[:2]
        texts = REPLIES_BY_LANGUAGE[language][:count]
        cers = []
        for text in texts:
            audio = speak(voice, text).audio * voice.gain
            cers.append(whisper.cer(audio, SAMPLE_RATE, language, text))
        figures[source.name] = {"cer_mean": float(np.mean(cers)), "cer_max": float(max(cers))}
        rows.append(
            [source.name, voice.info.language, voice.info.gender, *figures[source.name].values()]
        )
        print(rows[-1], flush=True)
    print(
        _common.table(
            f"Whisper base CER, {count} replies a voice (Japanese on kana readings)",
            ["voice", "language", "gender", "CER mean", "CER max"],
            rows,
        )
    )
    _common.write_json(args.json, {"benchmark": "kokoro_voices", "voices": figures})


if __name__ == "__main__":
    main()
