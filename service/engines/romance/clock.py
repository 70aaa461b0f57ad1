"""Times and dates in Spanish, French, Italian and Portuguese text, written as people say them
before espeak-ng reads them: it says "14:30" as two numbers with a colon's pause between them,
"9:00" as *nueve cero cero*, the h of "14h30" and "9 h" as the letter (*quatorze hache trente*,
*nove agá*) and "15/03/2026" with the slash (*quince barra cero tres barra…*)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class _Language:
    months: tuple[str, ...]
    of: str
    """Between a date's day, month and year ("de" in Spanish and Portuguese)."""
    first: str
    """The first of the month as it is said ("1" uno de marzo, "1er" premier mars)."""
    feminine: dict[int, str]
    """Hours said as a feminine noun's count (hora, heure, ora): "1" is *una*, not *uno*."""
    time: Callable[[str, int, bool], str]
    """A time: (the hour as said, the minutes, whether an h was written after it)."""
    hours: tuple[str, str]
    """One hour as said, and the word for hours after a number ("9 h")."""
    time_words: frozenset[str]
    """Words after which "9.30" is a time (Spanish and Italian write times with a point)."""


def _es(hour: str, minutes: int, h: bool) -> str:
    # A clock time is said hour then minutes (catorce treinta); "y" before a single digit
    # (nueve y cinco, not nueve cinco); "horas" only where the text writes the h.
    said = hour if not minutes else f"{hour} y {minutes}" if minutes < 10 else f"{hour} {minutes}"
    return f"{said} {'hora' if hour == 'una' else 'horas'}" if h else said


def _fr(hour: str, minutes: int, h: bool) -> str:
    word = "heure" if hour == "une" else "heures"
    return f"{hour} {word} {minutes}" if minutes else f"{hour} {word}"


def _it(hour: str, minutes: int, h: bool) -> str:
    return f"{hour} e {minutes}" if minutes else hour


def _pt(hour: str, minutes: int, h: bool) -> str:
    # Brazilian Portuguese: "às 9h" nove horas, "às 14:30" catorze e trinta.
    if minutes:
        return f"{hour} e {minutes}"
    return f"{hour} {'hora' if hour == 'uma' else 'horas'}"


_LANGUAGES = {
    "es": _Language(
        ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
         "septiembre", "octubre", "noviembre", "diciembre"),
        "de", "1", {1: "una", 21: "veintiuna"}, _es, ("una hora", "horas"),
        frozenset({"las", "la"}),
    ),
    "fr": _Language(
        ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
         "septembre", "octobre", "novembre", "décembre"),
        "", "1er", {1: "une", 21: "vingt et une"}, _fr, ("une heure", "heures"), frozenset(),
    ),
    "it": _Language(
        ("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto",
         "settembre", "ottobre", "novembre", "dicembre"),
        "", "1º", {1: "una"}, _it, ("un'ora", "ore"),
        frozenset({"alle", "le", "ore", "dalle", "delle", "verso", "entro"}),
    ),
    "pt": _Language(
        ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto",
         "setembro", "outubro", "novembro", "dezembro"),
        "de", "1º", {1: "uma", 2: "duas", 21: "vinte e uma", 22: "vinte e duas"}, _pt,
        ("uma hora", "horas"), frozenset({"às", "as", "das", "até"}),
    ),
}  # fmt: skip

_NOT_AFTER = r"(?<![\w:.,/-])"
_NOT_AFTER_RANGE = r"(?<![\w:.,/])"  # 9:00-18:00, 9h-18h: the second time too
_HOUR = r"(?P<hour>[01]?\d|2[0-3])"
# 14:30, 9:00, 14h30, 14 h 30, 18:00 h; not 14:30:15 (a duration or a timestamp), not "2 h 30
# min" (a duration: its hours are left to the bare-hour rule).
_TIME = re.compile(
    rf"{_NOT_AFTER_RANGE}{_HOUR}(?::|\s?h\s?)(?P<minutes>[0-5]\d)(?![\d:]|\s?min)(?P<h>\s?h(?!\w))?"
)
# Two times joined by a dash or an en dash ("9h-18h", "9:00-18:00"): the dash is a span's
# word, which espeak-ng, after "heures" or "horas", dropped (*neuf heures dix-huit heures*).
_TIME_SPAN = re.compile(
    rf"{_NOT_AFTER_RANGE}((?:[01]?\d|2[0-3])(?:(?::|h)[0-5]\d|h)?)\s?[-\u2013]\s?"
    r"(?=(?:[01]?\d|2[0-3])(?::[0-5]\d|\s?h(?!\w)|h[0-5]\d))"
)
_SPAN_WORDS = {"es": "a", "fr": "à", "it": "a", "pt": "às"}
_DOTTED_TIME = re.compile(rf"(?<!\w)(?P<word>\w+)\s{_HOUR}\.(?P<minutes>[0-5]\d)(?!\d|[.,]\d)")
# 9 h, 9h, 24 h, 1,5 h: a time or a number of hours, said alike.
_BARE_HOURS = re.compile(rf"{_NOT_AFTER_RANGE}(?P<count>\d{{1,3}}(?:,\d+)?)\s?h(?!\w)")
_DAY = r"(?P<day>0?[1-9]|[12]\d|3[01])"
_MONTH = r"(?P<month>0?[1-9]|1[0-2])"
# 15/03/2026, 15-03-2026, 15.03.2026, 15/03/26; 15/03 and 1/03 with the month in two digits
# (1/2 and 24/7 are not dates).
_DATE = re.compile(
    rf"{_NOT_AFTER}{_DAY}(?P<sep>[/.-]){_MONTH}(?P=sep)(?P<year>\d{{4}}|\d{{2}})(?![\w/-]|[.,]\d)"
)
_SHORT_DATE = re.compile(rf"{_NOT_AFTER}{_DAY}/(?P<month>0[1-9]|1[0-2])(?![\w/]|[.,]\d)")
_ISO_DATE = re.compile(
    rf"{_NOT_AFTER}(?P<year>\d{{4}})-(?P<month>0[1-9]|1[0-2])-(?P<day>0[1-9]|[12]\d|3[01])"
    r"(?![\w-])"
)


_DEGREE_DAYS = {
    language: re.compile(rf"(?<![\w.,])(\d{{1,2}})°(?=\s+(?:de\s+)?(?i:{'|'.join(rules.months)}))")
    for language, rules in _LANGUAGES.items()
}
"""The first of the month written with a degree sign ("1° maggio", "1° de maio"), which
espeak-ng reads as degrees: the ordinal sign it reads as primo, primeiro."""


# A month's short name after a day ("5 déc.", "12 de dic."): espeak-ng reads the letters
# (*dek*) and ends a sentence at the point. The point stays where it also ends the sentence.
_SHORT_MONTHS = {
    "es": ("ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sept|sep|set", "oct", "nov",
           "dic"),
    "fr": ("janv", "févr|fév", "mars", "avr", "mai", "juin", "juil", "août", "sept", "oct",
           "nov", "déc"),
    "it": ("gen", "feb", "mar", "apr", "mag", "giu", "lug", "ago", "set", "ott", "nov", "dic"),
    "pt": ("jan", "fev", "mar", "abr", "mai", "jun", "jul", "ago", "set", "out", "nov", "dez"),
}  # fmt: skip
_SHORT_MONTH = {
    language: re.compile(
        r"(?<![\w.,])(\d{1,2}\s+(?:de\s+)?)(?i:("
        + "|".join(f"(?P<m{n}>{names})" for n, names in enumerate(months))
        + r"))\.(?!\w)"
    )
    for language, months in _SHORT_MONTHS.items()
}


# Days of the week by their short names, joined by a dash ("lun-ven", "lun.-vie."): espeak-ng
# ran them into one word (*lunven*). Said as the span they are, with the language's words.
_WEEKDAYS = {
    "es": (("lun", "lunes"), ("mar", "martes"), ("mié|mie", "miércoles"), ("jue", "jueves"),
           ("vie", "viernes"), ("sáb|sab", "sábado"), ("dom", "domingo")),
    "fr": (("lun", "lundi"), ("mar", "mardi"), ("mer", "mercredi"), ("jeu", "jeudi"),
           ("ven", "vendredi"), ("sam", "samedi"), ("dim", "dimanche")),
    "it": (("lun", "lunedì"), ("mar", "martedì"), ("mer", "mercoledì"), ("gio", "giovedì"),
           ("ven", "venerdì"), ("sab", "sabato"), ("dom", "domenica")),
    "pt": (("seg", "segunda"), ("ter", "terça"), ("qua", "quarta"), ("qui", "quinta"),
           ("sex", "sexta"), ("sáb|sab", "sábado"), ("dom", "domingo")),
}  # fmt: skip
_WEEKDAY_SPAN = {
    language: re.compile(
        r"(?i)(?<![\w.])(?:(de|du|dal|da)\s)?("
        + "|".join(short for short, _ in days)
        + r")\.?\s?[-\u2013]\s?("
        + "|".join(short for short, _ in days)
        + r")(\.?)(?!\w)"
    )
    for language, days in _WEEKDAYS.items()
}
# ... and one alone with its point before a time ("sáb. 10:00-14:00") or after a word that
# leads to a day ("du lun. au ven.", "de lun. a vie.").
_WEEKDAY_ALONE = {
    language: re.compile(
        r"(?i)(?<![\w.])(" + "|".join(short for short, _ in days) + r")\.(?=\s\d|([\s,;:]|$))"
    )
    for language, days in _WEEKDAYS.items()
}
_TO_A_DAY = re.compile(r"(?i)\b(?:de|du|au|al|dal|da|à|a|el|le|il|la|o)\s$")
# Short names that are words too, taken as days only before a time: "al mar." is the sea, "la
# mer.", "un jeu.", "vai ter." and "um dom." are no days.
_WORDS_TOO = {"es": {"mar", "ven"}, "fr": {"mer", "jeu"}, "it": {"mar"}, "pt": {"ter", "dom"}}
# from ... to: (before the first, before the second; the second's before a feminine day)
_FROM_TO = {
    "es": ("de", "a", "a"), "fr": ("du", "au", "au"), "it": ("dal", "al", "alla"),
    "pt": ("de", "a", "a"),
}  # fmt: skip


def _weekday(short: str, language: str) -> str:
    return next(name for abbr, name in _WEEKDAYS[language] if re.fullmatch(abbr, short, re.I))


def _weekday_alone(found: re.Match[str], language: str) -> str:
    if found[2] is not None and (
        found[1].lower() in _WORDS_TOO[language]
        or not _TO_A_DAY.search(found.string, 0, found.start())
    ):
        return found[0]
    return _weekday(found[1], language) + ("." if _ends_sentence(found) else "")


def _ends_sentence(found: re.Match[str]) -> bool:
    """Whether the point at the end of `found` also ends its sentence."""
    rest = found.string[found.end() :]
    return not rest.strip() or re.match(r"\s+[A-ZÀ-Ý]", rest) is not None


def _weekday_span(found: re.Match[str], language: str) -> str:
    first, last = _weekday(found[2], language), _weekday(found[3], language)
    before, to, to_feminine = _FROM_TO[language]
    to = to_feminine if last == "domenica" else to
    # The point stays where it also ends the sentence (as a month's does).
    ends = found[4] and _ends_sentence(found)
    return f"{found[1] or before} {first} {to} {last}" + ("." if ends else "")


def spoken(text: str, language: str) -> str:
    """`text` with its dates, times and hours written as people say them, for `language`'s
    primary subtag ("es"); other languages' text unchanged."""
    rules = _LANGUAGES.get(language)
    if rules is None:
        return text
    if "-" in text or "\u2013" in text:
        text = _WEEKDAY_SPAN[language].sub(lambda m: _weekday_span(m, language), text)
    if "." in text:
        text = _WEEKDAY_ALONE[language].sub(lambda m: _weekday_alone(m, language), text)
    if not any(c.isdigit() for c in text):
        return text
    text = _SHORT_MONTH[language].sub(lambda m: _month_named(m, rules), text)
    text = _DEGREE_DAYS[language].sub(r"\1º", text)
    text = _ISO_DATE.sub(lambda m: _date(m, rules), text)
    text = _DATE.sub(lambda m: _date(m, rules), text)
    text = _SHORT_DATE.sub(lambda m: _date(m, rules), text)
    if "-" in text or "\u2013" in text:
        text = _TIME_SPAN.sub(rf"\1 {_SPAN_WORDS[language]} ", text)
    text = _DOTTED_TIME.sub(lambda m: _dotted(m, rules), text)
    text = _TIME.sub(lambda m: _time(m, rules), text)
    return _BARE_HOURS.sub(lambda m: _hours(m.group("count"), rules), text)


def _month_named(found: re.Match[str], rules: _Language) -> str:
    month = next(int(name[1:]) for name, value in found.groupdict().items() if value)
    return found.group(1) + rules.months[month] + ("." if _ends_sentence(found) else "")


def _hour(hour: int, rules: _Language) -> str:
    return rules.feminine.get(hour, str(hour))


def _time(found: re.Match[str], rules: _Language) -> str:
    hour = _hour(int(found.group("hour")), rules)
    return rules.time(hour, int(found.group("minutes")), bool(found.group("h")))


def _dotted(found: re.Match[str], rules: _Language) -> str:
    if found.group("word").casefold() not in rules.time_words:
        return found.group()
    hour = _hour(int(found.group("hour")), rules)
    return f"{found.group('word')} {rules.time(hour, int(found.group('minutes')), False)}"


def _hours(count: str, rules: _Language) -> str:
    one, many = rules.hours
    if "," in count:  # 1,5 h: amounts.py says the decimal comma
        return f"{count} {many}"
    return one if count == "1" else f"{_hour(int(count), rules)} {many}"


def _date(found: re.Match[str], rules: _Language) -> str:
    day = int(found.group("day"))
    month = rules.months[int(found.group("month")) - 1]
    said = [rules.first if day == 1 else str(day), month]
    if year := found.groupdict().get("year"):
        said.append(year)
    return f" {rules.of} ".join(said) if rules.of else " ".join(said)
