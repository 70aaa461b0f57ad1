"""A user's Piper voice in Spanish, French, Italian or Portuguese reads its text through the same
rules as Kokoro's voices of those languages (service/engines/romance): Piper's espeak-ng says
"15/03/2026" as *quince barra cero tres…* and "14h30" as *catorze agá trinta* too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from voxlite.service.engines.piper import PiperFamily, PiperVoice
from voxlite.service.engines.piper.family import embedded_voice_files
from voxlite.service.engines.piper.split_cache import SplitCache
from voxlite.service.engines.runtime import OrtSettings


def piper_voice(folder: Path, cache_dir: Path, espeak_voice: str) -> PiperVoice:
    """The embedded voice's graph under a config that names `espeak_voice`."""
    model, config = embedded_voice_files()
    (folder / "romance.onnx").symlink_to(model)
    settings = json.loads(config.read_text())
    settings["espeak"]["voice"] = espeak_voice
    (folder / "romance.onnx.json").write_text(json.dumps(settings))
    family = PiperFamily(OrtSettings(), SplitCache(cache_dir))
    return family.load(next(s for s in family.sources(folder) if s.name == "romance"))


@pytest.mark.parametrize(("espeak_voice", "written", "said"), [
    ("es", "A las 14:30, el 15/03/2026, a 5 km.",
     "A las 14 30, el 15 de marzo de 2026, a 5 kilómetros."),
    ("pt-br", "Às 14h30, 10-20 minutos.", "Às 14 e 30, 10 a 20 minutos."),
    ("fr", "Au 2e étage à 9h.", "Au 2ème étage à 9 heures."),
])  # fmt: skip
def test_times_dates_and_units_are_read_as_people_say_them(
    tmp_path: Path, cache_dir: Path, espeak_voice: str, written: str, said: str
) -> None:
    model = piper_voice(tmp_path, cache_dir, espeak_voice).model
    assert model.phonemize(written) == model.phonemize(said)


def test_latin_american_spanish_keeps_its_amounts(tmp_path: Path, cache_dir: Path) -> None:
    """es-419 writes $ for pesos and a decimal point, which Spain's rules would read as
    dollars and a thousands point; its dates and titles are Spain's."""
    model = piper_voice(tmp_path, cache_dir, "es-419").model
    assert model.phonemize("Son $25.50.") != model.phonemize("Son 25 dólares con 50.")
    assert model.phonemize("El Sr. Pérez, el 15/03.") == model.phonemize(
        "El señor Pérez, el 15 de marzo."
    )


def test_a_voice_of_another_language_leaves_a_ratings_stars_out(
    tmp_path: Path, cache_dir: Path
) -> None:
    """A language with no words here for a rating's stars (German) drops them, as it drops
    emoji: espeak-ng would name each sign ("schwarzer Stern"). A figure before them stays."""
    model = piper_voice(tmp_path, cache_dir, "de").model
    assert model.phonemize("Bewertung 4,8★, ★★★★☆ gut.") == model.phonemize("Bewertung 4,8, gut.")
