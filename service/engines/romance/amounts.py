"""Numbers that espeak-ng misreads in Spanish, French, Italian and Portuguese text, written as
words and digits it reads: a price with its currency after the amount and its cents after a
joining word ("25,50 €" veinticinco euros con cincuenta, not "veinticinco, cincuenta euro"),
a thousands point ("1.250" is one number, not "uno. doscientos cincuenta"), a decimal comma
said as the word people say ("3,5" tres coma cinco, not a pause between two numbers), a unit
said as its word ("5 km" cinco kilómetros, not *ka eme*), an ordinal ("2.ª" segunda, "3e"
troisième), "n.º 5" as número, a span or score ("10-20", "3-2") with its joining word, not
Portuguese's *menos*, a minus sign, which espeak-ng drops ("-25,30 €" *menos veinticinco…*),
"2x1" with *por*, a number in its noun's gender ("1 noche" una noche, "2 pessoas" duas
pessoas, "1 día" un día), the degree sign written for an ordinal ("1° piano") and digits with
a leading zero one by one (a postal code, 08001) and a phone number by its digits (_phone).
Dates, times and hours are clock.py's."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..written import (
    INTERNATIONAL_GROUPS,
    PHONE,
    POWER,
    international_groups,
    one_of_a_count,
    phone_groups,
    power_of,
)


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
    to: str
    """Between the two numbers of a span or a score ("10-20" diez a veinte, "3-2" tres a dos)."""
    number: str
    """"n.º", "n°": the word for number."""
    minus: str
    """A minus sign before a number, which espeak-ng drops ("-25,30 €" a debt, "-5 °C")."""
    by: str
    """The x of "2x1" and "20x30" ("" where it is left as written)."""
    units: dict[str, tuple[str, str]]
    """A unit's symbol: one of it as said ("un kilómetro"), and its plural after a number."""
    forms: tuple[tuple[str, str], ...] = ()
    """Other written forms espeak-ng misreads, ordinals mostly: (a pattern, its replacement)."""
    per: tuple[str, dict[str, str]] = ("", {})
    """The word for a slash after an amount ("9,99 €/mes", "20 €/persona"), which espeak-ng
    reads as *barra* or drops: its usual form, and the words that take another (al mes)."""


# A phone number ("(11) 98765-4321", "+39 06 1234 5678", "01 23 45 67 89", "0 800 123 456"):
# espeak-ng reads its groups as amounts, in French one amount of them all (*zéro milliard huit
# cents millions…*). Digit by digit, a pause between the groups; in French each pair or group as
# its number, as France says them. Only where it cannot be an amount: a country or area code
# set apart, a group starting with 0, a hyphen, or French pairs.
_PLUS = {"es": "más", "fr": "plus", "it": "più", "pt": "mais"}
# Brazil's numbers, their area code in brackets perhaps: (11) 98765-4321, 4004-0001.
_BR_PHONE = re.compile(r"(?<![\w.+-])(?:\((\d{2})\)\s?)?(\d{4,5})-(\d{4})(?![\w-]|\.\d)")


def _phone(found: re.Match[str], language: str) -> str:
    groups = phone_groups(found)
    text = found.group()
    if groups is None or not (
        found.group(1)
        or found.group(2)
        or groups[0].startswith("0")
        or "-" in text
        or (language == "fr" and all(len(g) == 2 for g in groups))
    ):
        return text
    plus = f"{_PLUS[language]} " if text.startswith("+") else ""
    if language == "fr":
        return plus + ", ".join(g if len(g) < 2 or g[0] != "0" else f"0 {g[1:]}" for g in groups)
    return plus + ", ".join(" ".join(g) for g in groups)


_LANGUAGES = {
    "es": _Language(
        "coma", "un", "con",
        {"€": ("euro", "euros"), "$": ("dólar", "dólares"), "US$": ("dólar", "dólares"),
         "£": ("libra", "libras")},
        "a", "número", "menos", "por",
        {"km/h": ("un kilómetro por hora", "kilómetros por hora"),
         "km": ("un kilómetro", "kilómetros"), "m": ("un metro", "metros"),
         "cm": ("un centímetro", "centímetros"), "mm": ("un milímetro", "milímetros"),
         "m²": ("un metro cuadrado", "metros cuadrados"),
         "m³": ("un metro cúbico", "metros cúbicos"), "kg": ("un kilo", "kilos"),
         "g": ("un gramo", "gramos"), "mg": ("un miligramo", "miligramos"),
         "l": ("un litro", "litros"), "ml": ("un mililitro", "mililitros"),
         "min": ("un minuto", "minutos"), "s": ("un segundo", "segundos"),
         "seg": ("un segundo", "segundos"), "°C": ("un grado", "grados"),
         "GB": ("un giga", "gigas"), "MB": ("un mega", "megas"), "TB": ("un tera", "teras"),
         "°F": ("un grado Fahrenheit", "grados Fahrenheit"), "‰": ("uno por mil", "por mil")},
        # 2.º and 1.ª: espeak-ng reads the ordinal letter alone, and the point as a pause.
        ((r"(\d)\.(?=[ºª])", r"\1"), (r"(?<!\d)1\.?er\b", "primer"),
         (r"(?<!\d)3\.?er\b", "tercer")),
        ("por", {"mes": "al", "día": "al", "año": "al", "semana": "a la", "hora": "a la"}),
    ),
    "fr": _Language(
        "virgule", "un", "",
        {"€": ("euro", "euros"), "$": ("dollar", "dollars"), "US$": ("dollar", "dollars"),
         "£": ("livre", "livres")},
        "à", "numéro", "moins", "",
        {"km/h": ("un kilomètre à l'heure", "kilomètres à l'heure"),
         "km": ("un kilomètre", "kilomètres"), "m": ("un mètre", "mètres"),
         "cm": ("un centimètre", "centimètres"), "mm": ("un millimètre", "millimètres"),
         "m²": ("un mètre carré", "mètres carrés"), "m³": ("un mètre cube", "mètres cubes"),
         "kg": ("un kilo", "kilos"),
         "g": ("un gramme", "grammes"), "mg": ("un milligramme", "milligrammes"),
         "l": ("un litre", "litres"), "ml": ("un millilitre", "millilitres"),
         "min": ("une minute", "minutes"), "s": ("une seconde", "secondes"),
         "Go": ("un giga", "gigas"), "Mo": ("un méga", "mégas"), "To": ("un téra", "téras"),
         "GB": ("un giga", "gigas"), "MB": ("un méga", "mégas"), "TB": ("un téra", "téras"),
         "°C": ("un degré", "degrés"),
         "°F": ("un degré Fahrenheit", "degrés Fahrenheit"), "‰": ("un pour mille", "pour mille")},
        # 2e, 3ème, 1re: espeak-ng says the letters (deux e); it reads 2ème and 1ère.
        ((r"(?<!\d)1(?:re|ʳᵉ)(?!\w)", "1ère"), (r"(?<!\d)1ᵉʳ(?!\w)", "1er"),
         (r"(?<!\d)2(?:nde)(?!\w)", "seconde"), (r"(?<!\d)2(?:nd)(?!\w)", "second"),
         (r"(?<![\d,.])(\d+)(?:e|è|ᵉ)(?!\w)", r"\1ème")),
        ("par", {}),
    ),
    "it": _Language(
        "virgola", "un", "e",
        {"€": ("euro", "euro"), "$": ("dollaro", "dollari"), "US$": ("dollaro", "dollari"),
         "£": ("sterlina", "sterline")},
        "a", "numero", "meno", "per",
        {"km/h": ("un chilometro orario", "chilometri orari"),
         "km": ("un chilometro", "chilometri"), "m": ("un metro", "metri"),
         "cm": ("un centimetro", "centimetri"), "mm": ("un millimetro", "millimetri"),
         "m²": ("un metro quadrato", "metri quadrati"), "m³": ("un metro cubo", "metri cubi"),
         "kg": ("un chilo", "chili"),
         "g": ("un grammo", "grammi"), "mg": ("un milligrammo", "milligrammi"),
         "l": ("un litro", "litri"), "ml": ("un millilitro", "millilitri"),
         "min": ("un minuto", "minuti"), "s": ("un secondo", "secondi"),
         "GB": ("un giga", "giga"), "MB": ("un mega", "mega"), "TB": ("un tera", "tera"),
         "°C": ("un grado", "gradi"),
         "°F": ("un grado Fahrenheit", "gradi Fahrenheit"), "‰": ("uno per mille", "per mille")},
        # The article elided before 8 and 11 ("tra l'8 e l'11", "dall'8"): espeak-ng says the
        # l as a letter (*elle otto*); written with the number's word, it is *lotto*.
        ((r"(?<!\w)((?i:l|dall|all|nell|sull|dell))['\u2019]8(?![\d:.,]?\d)", r"\1'otto"),
         (r"(?<!\w)((?i:l|dall|all|nell|sull|dell))['\u2019]11(?![\d:.,]?\d)", r"\1'undici")),
        per=("a", {"mese": "al", "giorno": "al", "anno": "all'", "ora": "all'",
                   "settimana": "alla"}),
    ),
    "pt": _Language(
        "vírgula", "um", "e",
        {"€": ("euro", "euros"), "$": ("dólar", "dólares"), "US$": ("dólar", "dólares"),
         "R$": ("real", "reais"), "£": ("libra", "libras")},
        "a", "número", "menos", "por",
        {"km/h": ("um quilômetro por hora", "quilômetros por hora"),
         "km": ("um quilômetro", "quilômetros"), "m": ("um metro", "metros"),
         "cm": ("um centímetro", "centímetros"), "mm": ("um milímetro", "milímetros"),
         "m²": ("um metro quadrado", "metros quadrados"),
         "m³": ("um metro cúbico", "metros cúbicos"), "kg": ("um quilo", "quilos"),
         "g": ("um grama", "gramas"), "mg": ("um miligrama", "miligramas"),
         "l": ("um litro", "litros"), "ml": ("um mililitro", "mililitros"),
         "min": ("um minuto", "minutos"), "s": ("um segundo", "segundos"),
         "GB": ("um giga", "gigas"), "MB": ("um mega", "megas"), "TB": ("um tera", "teras"),
         "°C": ("um grau", "graus"),
         "°F": ("um grau Fahrenheit", "graus Fahrenheit"), "‰": ("um por mil", "por mil")},
        # "em 3x sem juros": three instalments, said "três vezes".
        ((r"(\d)\.(?=[ºª])", r"\1"),
         (r"(?<![\w.,])(\d+)x(?=\s|$|[.,;])(?!\s*[-+=<>])", r"\1 vezes")),
        ("por", {}),
    ),
}  # fmt: skip

# Thousands grouped by a point or a (narrow) no-break or plain space; cents after a comma (or
# the point of a price written the English way, $25.99).
_INTEGER = r"\d{1,3}(?:[. \u00a0\u202f]\d{3})+(?!\d)|\d+"
_SIGN = r"US\$|R\$|[$€£]"
_CENTS = r"(?:[,.](?P<{}>\d{{1,2}})(?!\d))?"
# A span of prices with the sign before the first ("$5-10", "€5-€10"): the sign before the
# second as well and the span's word between, or espeak-ng says "cinco dólares diez".
_SIGN_SPAN = re.compile(
    rf"(?<![\w.,])({_SIGN})\s?((?:{_INTEGER})(?:,\d{{1,2}})?)\s?[-\u2013]\s?(?:{_SIGN})?\s?(?=\d)"
)
_PRICE = re.compile(
    rf"(?<![\w.,])(?:(?P<before>{_SIGN})\s?(?P<a>{_INTEGER}){_CENTS.format('ac')}(?![,.]?\d)"
    rf"|(?P<b>{_INTEGER}){_CENTS.format('bc')}\s?(?P<after>{_SIGN})(?!\w))"
)
# A number and a unit: the units of two letters or more may follow the number unspaced (5km);
# a one-letter unit (m, g, l, s) must be spaced, so that "80s" or "5g" (a network) stay words.
_AMOUNT = rf"(?P<amount>(?:{_INTEGER})(?:,\d+)?)"
_UNIT = re.compile(
    rf"(?<![\w.,:/]){_AMOUNT}(?:\s?(?P<unit>km/h|km|cm|mm|m²|m³|kg|mg|ml|min|seg|[°º][CF]|‰"
    r"|[GMT]B|[GMT]o)"
    r"|\s(?P<letter>[mgls]))(?![\w/²³])"
)
_MINUS = re.compile(r"(?<![\w.,)\]])[-\u2212](?=\d)")
# One of a count after the word it counts ("Paso 1/3", "Étape 2/5"): "1 de 3", not a fraction
# or *uno barra tres*.
_OF_TOTAL = {
    language: one_of_a_count(words)
    for language, words in {
        "es": "paso|página|pregunta|parte|capítulo|episodio|nivel|etapa|día",
        "fr": "étape|page|question|partie|chapitre|épisode|niveau|jour",
        "it": "passo|passaggio|pagina|domanda|parte|capitolo|episodio|livello|fase|giorno",
        "pt": "passo|página|pergunta|parte|capítulo|episódio|nível|etapa|dia",
    }.items()
}
_OF = {"es": "de", "fr": "sur", "it": "di", "pt": "de"}
# A slash after an amount, a currency or a count before a word or a unit: per it.
_PER = re.compile(
    r"(?:(?<=[\d€$£%])|(?<=euro)|(?<=euros)|(?<=reais)|(?<=dólares)|(?<=dollars)|(?<=dollari)"
    r"|(?<=veces)|(?<=vezes)|(?<=volte)|(?<=fois))\s?/\s?([^\W\d_]{2,}|m²)(?![\w/²])"
)
_BY = re.compile(r"(?<![\w.,])(\d+(?:,\d+)?)\s?[x\u00d7]\s?(?=\d)")
_NUMBER_SIGN = re.compile(r"\b[nN](?:\.\s?)?[º°](?:\s?(?=\d)|\s(?=[^\W\d]))|\b[nN]\.\s(?=\d)")
# A run of digits with a leading zero (a postal code, 01310-100 or 08001; a customer number):
# espeak-ng reads it with a *punto* every three digits. Digit by digit.
_LEADING_ZERO = re.compile(r"(?<![\w.,:])0\d+(?![\w]|[.,]\d)")
# The degree sign written for the ordinal one before a word ("1° piano", "3° piso").
_DEGREE_ORDINAL = re.compile(r"(?<![\d.,])(\d{1,2})°(?=\s[^\W\dCF])")
# A number of something feminine, or (Spanish, Italian) one of something masculine: espeak-ng
# reads the digits in the masculine, or as the bare number ("1 noche" *uno noche*, "2 pessoas"
# *dois pessoas*, "1 día" *uno día*). The words an agent counts most, singular and plural.
_FEMININE = {
    "es": r"noches?|semanas?|horas?|personas?|vez|veces|habitaci[óo]n(?:es)?|citas?|llamadas?"
    r"|facturas?|tarjetas?|cuotas?|unidades|unidad|opci[óo]n(?:es)?|botellas?|mesas?|entradas?"
    r"|p[áa]ginas?|plazas?|maletas?|reservas?|camas?|cuentas?|copias?|l[íi]neas?|cajas?"
    r"|sesi[óo]n(?:es)?|consultas?|clases?|tiendas?|plantas?|estrellas?",
    "fr": r"nuits?|semaines?|heures?|personnes?|fois|chambres?|minutes?|secondes?|cartes?"
    r"|factures?|places?|tables?|bouteilles?|commandes?|pages?|valises?|réservations?|options?"
    r"|séances?|lignes?|étoiles?|boîtes?|unités?",
    "it": r"nott[ei]|settiman[ae]|or[ae]|person[ae]|volt[ae]|camer[ae]|chiamat[ae]|fattur[ae]"
    r"|cart[ae]|rat[ae]|unità|opzion[ei]|bottigli[ae]|pagin[ae]|valigi[ae]|valigie"
    r"|prenotazion[ei]|session[ei]|lezion[ei]|stell[ae]",
    "pt": r"noites?|semanas?|horas?|pessoas?|vez|vezes|parcelas?|di[áa]rias?|unidades?"
    r"|mesas?|reservas?|entregas?|op[çc][ãa]o|op[çc][õo]es|camas?|contas?|mensage(?:m|ns)"
    r"|liga[çc][ãa]o|liga[çc][õo]es|passage(?:m|ns)|cadeiras?|garrafas?|faturas?|c[óo]pias?"
    r"|p[áa]ginas?|tentativas?|etapas?|vagas?|sess[ãa]o|sess[õo]es|consultas?|aulas?"
    r"|malas?|linhas?|caixas?|estrelas?",
}
_MASCULINE = {
    "es": r"d[íi]as?|mes(?:es)?|años?|minutos?|segundos?|momentos?|productos?|pedidos?"
    r"|art[íi]culos?|paquetes?|clientes?|mensajes?|billetes?|asientos?|adultos?|niños?"
    r"|kilos?|litros?|metros?",
    "it": r"giorn[oi]|mes[ei]|ann[oi]|minut[oi]|second[oi]|moment[oi]|prodott[oi]|ordin[ei]"
    r"|articol[oi]|pacc(?:o|hi)|client[ei]|tavol[oi]|messagg(?:io|i)|bigliett[oi]|post[oi]|adult[oi]"
    r"|bambin[oi]|chil[oi]|litr[oi]|metr[oi]",
}
_FEMININES = {lang: re.compile(words, re.IGNORECASE) for lang, words in _FEMININE.items()}
_MASCULINES = {lang: re.compile(words, re.IGNORECASE) for lang, words in _MASCULINE.items()}
_COUNT = re.compile(r"(?<![\w.,:/-])(\d{1,3}) (?=([^\W\d]+))")
# Spanish and Portuguese hundreds agree with a feminine noun (doscientas personas).
_HUNDREDS_FEMININE = {
    "es": ("", "ciento", "doscientas", "trescientas", "cuatrocientas", "quinientas",
           "seiscientas", "setecientas", "ochocientas", "novecientas"),
    "pt": ("", "cento", "duzentas", "trezentas", "quatrocentas", "quinhentas", "seiscentas",
           "setecentas", "oitocentas", "novecentas"),
}  # fmt: skip
# Two numbers of at most three digits joined by a hyphen or dash (10-20, 3-2); longer groups
# are a phone number or a code (91234-5678), said as groups with a pause between.
_SPAN = re.compile(r"(?<![\w.,:/-])(\d{1,3})\s?[-\u2013]\s?(\d{1,3})(?![\w-]|[.,:]\d)")
_GROUPS = re.compile(r"(?<=\d)-(?=\d)")
LANGUAGES = frozenset(_LANGUAGES)
"""The primary subtags whose text is rewritten (the other modules' tables name the same)."""

# A formula's powers (x², r³, 2^10: espeak-ng says *x dos*, *dos diez*) and, in French, its "="
# (dropped): the square, the cube, a power's words, and "=" where espeak-ng leaves it out.
_POWERS = {
    "es": ("al cuadrado", "al cubo", "elevado a", ""),
    "fr": ("au carré", "au cube", "puissance", "égale"),
    "it": ("al quadrato", "al cubo", "elevato alla", ""),
    "pt": ("ao quadrado", "ao cubo", "elevado a", ""),
}
_EQUALS = re.compile(r"(?<=[\w)²³])\s?=\s?(?=[-\w(])")
_THOUSANDS = re.compile(r"(?<![\d.,/])\d{1,3}(?:\.\d{3})+(?![\d,]|\.\d)")
_DECIMAL = re.compile(r"(?<![\d,])(\d+),(\d+)(?![\d,])")
# A point between numbers left after the thousands (a section, a version, a price written the
# English way: 4.2, 2.1.3, 12.99 euros): the language's word for it, where espeak-ng makes the
# point a full stop (*doce. noventa y nueve*).
_POINTED = re.compile(r"(?<![\w.,/])\d+(?:\.\d+)+(?!\w|[.,]\d)")
_POINT = {"es": "punto", "fr": "point", "it": "punto", "pt": "ponto"}
# Cents alone ("0,50 €"): their own word, not *cero euros con cincuenta*.
_CENTS_WORDS = {
    "es": {"€": "céntimos", "$": "centavos", "US$": "centavos"},
    "fr": {"€": "centimes", "$": "cents", "US$": "cents"},
    "it": {"€": "centesimi", "$": "centesimi", "US$": "centesimi"},
    "pt": {"€": "cêntimos", "$": "centavos", "US$": "centavos", "R$": "centavos"},
}


def spoken(text: str, language: str) -> str:
    """`text` with its signs, prices, units, ordinals, spans, thousands points and decimal
    commas written as espeak-ng should read them, for `language`'s primary subtag ("es"); other
    languages' text unchanged."""
    rules = _LANGUAGES.get(language)
    if rules is None or not any(c.isdigit() for c in text):
        return text
    if "/" in text:
        text = _OF_TOTAL[language].sub(rf"\1 {_OF[language]} \2", text)
        text = _PER.sub(lambda m: _per(m, rules), text)
    text = _MINUS.sub(f"{rules.minus} ", _SIGN_SPAN.sub(rf"\1\2 {rules.to} \1", text))
    text = _PRICE.sub(lambda m: _price(m, rules, language), text)
    if language == "pt":
        text = _BR_PHONE.sub(lambda m: ", ".join(" ".join(g) for g in m.groups() if g), text)
    text = PHONE.sub(lambda m: _phone(m, language), text)
    if "+" in text:
        text = INTERNATIONAL_GROUPS.sub(
            lambda m: f"{_PLUS[language]} " + ", ".join(map(" ".join, international_groups(m))),
            text,
        )
    text = _UNIT.sub(lambda m: _unit(m, rules), text)
    if any(c in text for c in "²³^="):
        text = _formula(text, language)
    text = _NUMBER_SIGN.sub(f"{rules.number} ", text)
    if rules.by:
        text = _BY.sub(rf"\1 {rules.by} ", text)
    for pattern, replacement in rules.forms:
        text = re.sub(pattern, replacement, text)
    text = _COUNT.sub(lambda m: _counted(m, language), text)
    if language != "fr":
        text = _DEGREE_ORDINAL.sub(r"\1º", text)
    text = _SPAN.sub(rf"\1 {rules.to} \2", text)
    text = _GROUPS.sub(" ", text)
    text = _LEADING_ZERO.sub(lambda m: " ".join(m.group()), text)
    text = _THOUSANDS.sub(lambda m: m.group().replace(".", ""), text)
    text = _POINTED.sub(lambda m: m.group().replace(".", f" {_POINT[language]} "), text)
    return _DECIMAL.sub(rf"\1 {rules.comma} \2", text)


def _counted(found: re.Match[str], language: str) -> str:
    """A number before a noun in the noun's gender ("una noche", "duas pessoas", "veintiún
    días", "doscientas personas"), where espeak-ng would not say it so; else as written."""
    number, noun = int(found.group(1)), found.group(2)
    hundreds, rest = divmod(number, 100)
    if _FEMININES[language].fullmatch(noun):
        if not hundreds:
            said = _feminine(number, language, noun)
            return found.group() if not said else said if said.endswith("'") else f"{said} "
        if language not in _HUNDREDS_FEMININE or (hundreds == 1 and not rest):
            return found.group()  # cien, cem; French and Italian hundreds have no gender
        said = _HUNDREDS_FEMININE[language][hundreds]
        if rest:
            said += " e " if language == "pt" else " "
            said += _feminine(rest, language, noun) or str(rest)
        return f"{said} "
    if language in _MASCULINES and _MASCULINES[language].fullmatch(noun) and rest % 10 == 1:
        tens = rest // 10
        said = "un" if not tens else "veintiún" if tens == 2 else f"{10 * tens} y un"
        if language == "es" and tens != 1:
            return f"{100 * hundreds} {said} " if hundreds else f"{said} "
        if language == "it" and number == 1:
            return "un "
    return found.group()


def _feminine(number: int, language: str, noun: str) -> str | None:
    """1 to 99 in the feminine where espeak-ng says it otherwise ("veintiuna", "duas", "un'"),
    or None."""
    tens, units = divmod(number, 10)
    if language == "pt":
        if units not in (1, 2) or tens == 1:
            return None
        said = ("uma", "duas")[units - 1]
        return f"{10 * tens} e {said}" if tens else said
    if units != 1 or tens == 1 or (language == "fr" and tens > 6):
        return None
    one = {"es": "una", "fr": "une", "it": "una"}[language]
    if language == "it" and noun[0].lower() in "aeiou" and not tens:
        return "un'"  # un'ora: no space after the apostrophe
    if not tens:
        return one
    if language == "es" and tens == 2:
        return f"veinti{one}"
    joiner = {"es": "y", "fr": "et"}.get(language)
    return f"{10 * tens} {joiner} {one}" if joiner else None


def _formula(text: str, language: str) -> str:
    square, cube, raised, equals = _POWERS[language]

    def power(found: re.Match[str]) -> str:
        n, sign = power_of(found), found.group(1)
        named = {2: square, 3: cube}.get(n) if sign else None  # x² al cuadrado; 2^2 elevado a 2
        return f" {named or f'{raised} {n}'}"

    text = POWER.sub(power, text)
    return _EQUALS.sub(f" {equals} ", text) if equals else text


def _price(found: re.Match[str], rules: _Language, language: str) -> str:
    sign = found.group("before") or found.group("after")
    units = re.sub(r"\D", "", found.group("a") or found.group("b"))
    cents = found.group("ac") or found.group("bc") or ""
    singular, plural = rules.currencies.get(sign, ("", ""))
    if not singular:  # a sign this language names no currency for: as written
        return found.group()
    cents_word = _CENTS_WORDS[language].get(sign)
    if int(units) == 0 and cents.rstrip("0") and cents_word:
        return f"{int(cents.ljust(2, '0'))} {cents_word}"
    said = f"{rules.one} {singular}" if int(units) == 1 else f"{int(units)} {plural}"
    if cents.rstrip("0"):
        cents = cents.ljust(2, "0")  # 25,5 € is 25 euros 50
        said += f" {rules.joiner} {int(cents)}" if rules.joiner else f" {int(cents)}"
    return said


def _per(found: re.Match[str], rules: _Language) -> str:
    word = found.group(1)
    if word in rules.units:  # €/kg: per kilo, the unit's name without its article
        word = rules.units[word][0].split(" ", 1)[1]
    usual, others = rules.per
    joined = others.get(word, usual)
    return f" {joined}{word}" if joined.endswith("'") else f" {joined} {word}"


def _unit(found: re.Match[str], rules: _Language) -> str:
    unit = (found.group("unit") or found.group("letter")).replace("º", "°")
    if unit not in rules.units:  # Go, Mo, To: French's, a word elsewhere
        return found.group()
    one, many = rules.units[unit]
    amount = found.group("amount")
    return one if amount == "1" else f"{amount} {many}"
