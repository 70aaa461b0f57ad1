"""Numbers that espeak-ng misreads in Spanish, French, Italian and Portuguese text, written as
words and digits it reads: a price with its currency after the amount and its cents after a
joining word ("25,50 €" veinticinco euros con cincuenta, not "veinticinco, cincuenta euro"),
a thousands point ("1.250" is one number, not "uno. doscientos cincuenta") and a decimal comma
said as the word people say ("3,5" tres coma cinco, not a pause between two numbers)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class _Language:
    comma: str
    """The decimal comma's word."""
    one: str
    """"One" before a masculine noun (un euro)."""
    joiner: str
    """Between a price's units and its cents ("" in French: vingt-cinq euros cinquante)."""
    currencies: dict[str, tuple[str, str]]
    """A currency sign's name, singular and plural."""


_LANGUAGES = {
    "es": _Language(
        "coma", "un", "con",
        {"€": ("euro", "euros"), "$": ("dólar", "dólares"), "US$": ("dólar", "dólares"),
         "£": ("libra", "libras")},
    ),
    "fr": _Language(
        "virgule", "un", "",
        {"€": ("euro", "euros"), "$": ("dollar", "dollars"), "US$": ("dollar", "dollars"),
         "£": ("livre", "livres")},
    ),
    "it": _Language(
        "virgola", "un", "e",
        {"€": ("euro", "euro"), "$": ("dollaro", "dollari"), "US$": ("dollaro", "dollari"),
         "£": ("sterlina", "sterline")},
    ),
    "pt": _Language(
        "vírgula", "um", "e",
        {"€": ("euro", "euros"), "$": ("dólar", "dólares"), "US$": ("dólar", "dólares"),
         "R$": ("real", "reais"), "£": ("libra", "libras")},
    ),
}  # fmt: skip

# Thousands grouped by a point or a (narrow) no-break or plain space; cents after a comma (or
# the point of a price written the English way, $25.99).
_INTEGER = r"\d{1,3}(?:[. \u00a0\u202f]\d{3})+(?!\d)|\d+"
_SIGN = r"US\$|R\$|[$€£]"
_CENTS = r"(?:[,.](?P<{}>\d{{1,2}})(?!\d))?"
_PRICE = re.compile(
    rf"(?<![\w.,])(?:(?P<before>{_SIGN})\s?(?P<a>{_INTEGER}){_CENTS.format('ac')}(?![,.]?\d)"
    rf"|(?P<b>{_INTEGER}){_CENTS.format('bc')}\s?(?P<after>{_SIGN})(?!\w))"
)
_THOUSANDS = re.compile(r"(?<![\d.,/])\d{1,3}(?:\.\d{3})+(?![\d,]|\.\d)")
_DECIMAL = re.compile(r"(?<![\d,])(\d+),(\d+)(?![\d,])")


def spoken(text: str, language: str) -> str:
    """`text` with its prices, thousands points and decimal commas written as espeak-ng should
    read them, for `language`'s primary subtag ("es"); other languages' text unchanged."""
    rules = _LANGUAGES.get(language)
    if rules is None or not any(c.isdigit() for c in text):
        return text
    text = _PRICE.sub(lambda m: _price(m, rules), text)
    text = _THOUSANDS.sub(lambda m: m.group().replace(".", ""), text)
    return _DECIMAL.sub(rf"\1 {rules.comma} \2", text)


def _price(found: re.Match[str], rules: _Language) -> str:
    sign = found.group("before") or found.group("after")
    units = re.sub(r"\D", "", found.group("a") or found.group("b"))
    cents = found.group("ac") or found.group("bc") or ""
    singular, plural = rules.currencies.get(sign, ("", ""))
    if not singular:  # a sign this language names no currency for: as written
        return found.group()
    said = f"{rules.one} {singular}" if int(units) == 1 else f"{int(units)} {plural}"
    if cents.rstrip("0"):
        cents = cents.ljust(2, "0")  # 25,5 € is 25 euros 50
        said += f" {rules.joiner} {int(cents)}" if rules.joiner else f" {int(cents)}"
    return said
