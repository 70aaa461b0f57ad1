"""Spanish, French, Italian and Portuguese text written as people say it before espeak-ng reads
it, for any voice that reads these languages through espeak-ng (Kokoro's and Piper's)."""

from __future__ import annotations

from . import abbreviations, addresses, amounts, clock, codes

LANGUAGES = amounts.LANGUAGES
"""The primary subtags whose text is rewritten: es, fr, it, pt."""


def spoken(text: str, language: str, *, amounts_too: bool = True) -> str:
    """`text` with its addresses, codes, abbreviations, dates, times, prices, units and numbers
    written as a speaker of `language` (a primary subtag: "es") says them; other languages'
    text unchanged. `amounts_too=False` leaves prices, units and numbers as written (Latin
    American Spanish, whose $ and decimal point are not Spain's)."""
    text = codes.spoken(addresses.spoken(text, language), language)
    text = clock.spoken(abbreviations.spoken(text, language), language)
    return amounts.spoken(text, language) if amounts_too else text
