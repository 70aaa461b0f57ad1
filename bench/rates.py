"""Speaking rate as heard: how much shorter (or longer) the replies get at each `speaking_rate`,
asked straight of the model (its length scale or speed divided by the rate) and as the server
asks it (Piper through piper/model.HEARD_RATES, which this measures; Kokoro straight). The
replies' whole duration is what a listener waits through; noise is off, so each run says the
same on any machine."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from voxlite.service.call.opening import segments_of
from voxlite.service.engines.engine import Voice, VoiceRequest, VoiceSource
from voxlite.service.engines.kokoro import KokoroFamily
from voxlite.service.engines.kokoro.voice import KokoroParams
from voxlite.service.engines.piper.model import PiperParams
from voxlite.service.engines.runtime import OrtSettings

from . import _common
from .corpus import REPLIES
from .engine import load_voxlite
from .kokoro_corpus import REPLIES_BY_LANGUAGE

GRID = (0.25, 0.33, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.4, 1.6, 1.8, 2.0, 2.5, 3.0, 4.0)
"""The model rates measured, for the table a family ships."""
ASKED = (0.5, 0.75, 1.25, 1.5, 2.0)
"""The rates a caller asks for most, compared asked straight and through the table."""


def seconds(voice: Voice, texts: Sequence[str], params: object) -> float:
    """The texts spoken with `params`, segment by segment as a session cuts them: seconds."""
    samples = 0
    for text in texts:
        for part in segments_of(text, voice.first_clause_chars):
            segment = voice.segment(part, params, word_timestamps=False)
            while (window := segment.next_window(10.0)) is not None:
                samples += window.size
    return samples / voice.info.native_rate


def straight(voice: Voice, rate: float) -> object:
    """The params with the model's own rate set to `rate`: the model asked straight, with no
    table between."""
    params = voice.params(VoiceRequest(1.0, noise_scale=0.0, noise_w=0.0))
    if isinstance(params, PiperParams):
        return replace(params, length_scale=params.length_scale / rate)
    assert isinstance(params, KokoroParams), params
    return KokoroParams(speed=rate)


def main(argv: Sequence[str] | None = None) -> None:
    p = _common.parser(__doc__ or "", quick_help="three replies each")
    p.add_argument(
        "--kokoro", default="zf_xiaoxiao", help="Kokoro voices, comma-separated (none: '')"
    )
    args = p.parse_args(argv)
    count = 3 if args.quick else None
    voices: list[tuple[Voice, Sequence[str]]] = [(load_voxlite(OrtSettings()), REPLIES)]
    family = KokoroFamily(cache_dir=_common.cache_dir())
    sources = {s.name: s for s in family.sources(None)}
    for name in filter(None, args.kokoro.split(",")):
        source: VoiceSource = sources[name]
        voices.append((family.load(source), REPLIES_BY_LANGUAGE[source.language[:2]]))
    out: dict[str, object] = {"benchmark": "rates", "machine": _common.machine()}
    for voice, replies in voices:
        texts = list(replies[:count])
        base = seconds(voice, texts, straight(voice, 1.0))
        heard = {rate: base / seconds(voice, texts, straight(voice, rate)) for rate in GRID}
        rows = []
        for asked in ASKED:
            request = VoiceRequest(asked, noise_scale=0.0, noise_w=0.0)
            before = heard.get(asked) or base / seconds(voice, texts, straight(voice, asked))
            through = base / seconds(voice, texts, voice.params(request))
            rows.append((asked, round(before, 2), round(through, 2)))
        name = voice.info.name
        print(
            _common.table(
                f"{name}: heard rate (reply seconds at 1.0 / at the rate), {len(texts)} replies",
                ["asked", "model asked straight", "as the server asks"],
                rows,
            )
        )
        measured = ", ".join(f"({r:g}, {h:.3f})" for r, h in heard.items())
        print(f"{name} (model rate, heard rate): {measured}")
        out[name] = {"heard_by_model_rate": heard, "asked": rows}
    _common.write_json(args.json, out)


if __name__ == "__main__":
    main()
