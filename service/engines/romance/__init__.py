"""Spanish, French, Italian and Portuguese text written as people say it before espeak-ng reads
it, for any voice that reads these languages through espeak-ng (Kokoro's and Piper's)."""

from __future__ import annotations

from ..written import spoken_stars
from . import abbreviations, addresses, amounts, clock, codes

LANGUAGES = amounts.LANGUAGES
"""The primary subtags whose text is rewritten: es, fr, it, pt."""
# A rating in stars: a star, stars, and the word of "4 out of 5".
_STARS = {
    "es": ("estrella", "estrellas", "de"), "fr": ("étoile", "étoiles", "sur"),
    "it": ("stella", "stelle", "su"), "pt": ("estrela", "estrelas", "de"),
}  # fmt: skip


def _stars(figure: str, out_of: int | None, language: str) -> str:
    one, many, of = _STARS[language]
    if out_of:
        return f"{figure} {of} {out_of} {many}"
    return f"{figure} {one if figure == '1' else many}"


def spoken(text: str, language: str, *, amounts_too: bool = True) -> str:
    """`text` with its ratings in stars, addresses, codes, abbreviations, dates, times, prices,
    units and numbers written as a speaker of `language` (a primary subtag: "es") says them;
    other languages' text unchanged. `amounts_too=False` leaves prices, units and numbers as
    written (Latin American Spanish, whose $ and decimal point are not Spain's)."""
    if language in _STARS:
        text = spoken_stars(text, lambda figure, out_of, _: _stars(figure, out_of, language))
    text = codes.spoken(addresses.spoken(text, language), language)
    text = clock.spoken(abbreviations.spoken(text, language), language)
    return amounts.spoken(text, language) if amounts_too else text
