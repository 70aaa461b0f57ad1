"""E-mail and web addresses in Spanish, French, Italian and Portuguese text, their signs said by
name as people read them out (*info arroba empresa punto es*): espeak-ng keeps an address's dots
as full stops, which the voice says as a sentence's end in the middle of the address."""

from __future__ import annotations

import re

from ..written import ADDRESS, address_of

_SIGNS = {
    "es": {"@": "arroba", ".": "punto", "-": "guion", "/": "barra", "_": "guion bajo"},
    "fr": {"@": "arobase", ".": "point", "-": "tiret", "/": "slash", "_": "tiret bas"},
    "it": {"@": "chiocciola", ".": "punto", "-": "trattino", "/": "slash",
           "_": "trattino basso"},
    "pt": {"@": "arroba", ".": "ponto", "-": "hífen", "/": "barra", "_": "underline"},
}  # fmt: skip
_SIGN = re.compile(r"[@./_-]")


def spoken(text: str, language: str) -> str:
    """`text` with its addresses' signs as `language`'s words; other languages' text
    unchanged."""
    signs = _SIGNS.get(language)
    if signs is None or "." not in text:
        return text
    return ADDRESS.sub(lambda m: _said(address_of(m), signs), text)


def _said(address: str, signs: dict[str, str]) -> str:
    # A trailing dot or slash is the sentence's, not the address's.
    address, end = (address[:-1], address[-1]) if address[-1] in "./" else (address, "")
    said = _SIGN.sub(lambda m: f" {signs[m.group()]} ", address)
    return " ".join(said.split()) + end
