"""Written forms that every language reads the same way, whatever its words: a phone number's
digit groups, a ratio, an e-mail or web address, a power, a span of dates, a rating in stars, a
timestamp. Each language's rules (kokoro/numbers.py, kokoro/dates.py and kokoro/symbols.py for
Mandarin and Japanese, piper/english.py for English, romance/ for Spanish, French, Italian and
Portuguese) say them in its own words."""

from __future__ import annotations

import re
from collections.abc import Callable

# Digits grouped by hyphens, dots or spaces, the country code or the area code perhaps set apart
# ("400-820-8820", "+86 138 0013 8000", "(010) 8888-6666", "555.123.4567"; brackets full width
# too).
PHONE = re.compile(
    r"(?<![0-9A-Za-z.+-])(\+\d{1,3}[ .-]?)?([(\uff08]\d{2,4}[)\uff09][ .-]?)?"
    r"\d{1,4}(?:[ .-]\d{2,4}){1,4}(?![0-9A-Za-z-]|\.\d)"
)
# Fewer digits are an amount or a span, not a phone number.
_PHONE_DIGITS = 7
# A number in international form written in groups that PHONE leaves ("+44 7911 123456": a
# group of six), eight digits or more; its plus perhaps already a word (加, プラス). Every voice
# read the groups as amounts (forty-four, seven thousand…; 四十四).
INTERNATIONAL_GROUPS = re.compile(
    r"(?<![0-9A-Za-z+])(?:\+|加|プラス)(?=(?:\d[ -]?){8})(\d{1,3}(?:[ -]\d{1,6}){2,5})"
    r"(?![0-9A-Za-z%-]|[.,]\d)"
)
# An e-mail or a web address with a top-level domain every reader knows (bob@qq.com, www.qq.com,
# abc-123.cn/help), read with its signs by name and its digits one by one; its scheme
# (https://), which no one reads out, is group 1.
_TLD = "com|cn|net|org|edu|gov|io|jp|co|me|ai|app|dev|info|tv|hk|tw|uk|us|de|es|fr|it|pt|br|eu"
ADDRESS = re.compile(
    r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"
    r"|(?<![\w@.])((?i:https?)://)?"
    rf"(?:www\.)?(?:[A-Za-z0-9-]+\.)+(?:{_TLD})\b(?:/[A-Za-z0-9._/-]*)?",
    re.ASCII,
)


def address_of(match: re.Match[str]) -> str:
    """The address ADDRESS found, without its scheme."""
    return match.group(0)[len(match.group(1) or "") :]


def ordinal_suffix(n: int) -> str:
    """English's suffix for the ordinal n: st, nd, rd or th (11th, 21st, 112th)."""
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


# Keys' short names as they are said, in a key combination (Ctrl+C, Cmd+Shift+4) or alone
# (PgDn): espeak, OpenJTalk and the lexicon spell them.
KEY_WORDS = {"Ctrl": "Control", "Cmd": "Command", "Opt": "Option", "Del": "Delete",
             "Esc": "Escape", "PgUp": "Page Up", "PgDn": "Page Down"}  # fmt: skip


# Stars as a rating, which markup.spoken keeps (one after a figure, a row of two to five):
# "4.8★", "★★★★☆". espeak names the sign ("black star"); the CJK G2Ps drop it.
_STARS = re.compile(r"(?:(\d+(?:[.,]\d+)?)\s?)?([★⭐]+)(☆*)|(☆+)")


def _latin_word_char(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def spoken_stars(text: str, said: Callable[[str, int | None, bool], str]) -> str:
    """`text` with each rating _STARS finds as `said(figure, out_of, counted)` words it: "4.8★"
    is ("4.8", None, False), "★★★★☆" ("4", 5, True), "★★★" ("3", None, True); set apart by
    spaces from Latin letters and digits beside it."""

    def one(match: re.Match[str]) -> str:
        full, empty = len(match.group(2) or ""), len(match.group(3) or match.group(4) or "")
        figure = match.group(1)
        words = (
            said(figure, None, False)
            if figure
            else said(str(full), full + empty if empty else None, True)
        )
        start, end = match.start(), match.end()
        before = " " if start and _latin_word_char(text[start - 1]) and words else ""
        return before + words + (" " if end < len(text) and _latin_word_char(text[end]) else "")

    return _STARS.sub(one, text) if any(c in text for c in "★⭐☆") else text


# A timestamp (ISO 8601, "2026-12-05T10:00Z"): every reader says its T and Z as letters.
_TIMESTAMP = re.compile(
    r"(?<![\d-])(\d{4}-\d\d-\d\d)T(\d\d:\d\d)(?::\d\d(?:\.\d+)?)?(Z|[+-]\d\d:?\d\d)?(?![\d:])"
)


def spoken_timestamps(text: str, at: str, signs: tuple[str, str], between: str = " ") -> str:
    """`text` with each timestamp as its date, `at`, its time and its zone: Z as UTC, an offset
    after UTC with `signs` (plus, minus) and its hours ("+05:30": plus 5:30, "+08:00": plus 8),
    `between` apart. Each language then reads the date and the time as it reads them anywhere."""

    def one(match: re.Match[str]) -> str:
        date, time, zone = match.group(1), match.group(2), match.group(3)
        said = f"{date}{at}{time}"
        if not zone:
            return said
        if zone == "Z":
            return f"{said} UTC"
        hours, minutes = int(zone[1:3]), zone[-2:]
        offset = f"{hours}:{minutes}" if minutes != "00" else str(hours)
        return f"{said} UTC{between}{signs[zone[0] == '-']}{between}{offset}"

    return _TIMESTAMP.sub(one, text)


# A colon between two numbers; a time (two-digit minutes) is read before it.
RATIO = re.compile(r"(?<![0-9:])(\d+):(\d+)(?![0-9:])")


# Four letters with three consonants in a row (icbc, xyzw, abcd): a part of an address no voice
# can say as a word, spelled. For a case-insensitive pattern.
UNSAYABLE_FOUR = r"(?=[a-z]?[b-df-hj-np-tv-xz]{3})[a-z]{4}"


def one_of_a_count(words: str) -> re.Pattern[str]:
    """ "Step 1/3" after one of `words` (an alternation), one of a count and not a fraction:
    group 1 the word and its number, group 2 the count."""
    return re.compile(rf"(?i)\b((?:{words})\s\d{{1,3}})/(\d{{1,3}})\b(?![/\d])")


def international_groups(match: re.Match[str]) -> list[str]:
    """The country code and the groups of what INTERNATIONAL_GROUPS found."""
    return re.split(r"[ -]", match.group(1))


def phone_groups(match: re.Match[str]) -> list[str] | None:
    """The digit groups of what PHONE found, or None where it is no phone number: fewer than
    seven digits, or two groups with no country or area code set apart (a span: 2000-3000)."""
    groups = re.findall(r"\d+", match.group(0))
    set_apart = match.group(1) or match.group(2)
    if sum(map(len, groups)) < _PHONE_DIGITS or (len(groups) < 3 and not set_apart):
        return None
    return groups


# A power after a number, a letter or a bracket (x², r³, 2^10): espeak-ng and the CJK G2Ps read
# ² as the digit and drop ^. Each language says power_of() in its own words.
POWER = re.compile(r"(?<=[\dA-Za-z)\N{FULLWIDTH RIGHT PARENTHESIS}])(?:([²³⁴⁵⁶⁷⁸⁹])|\^\s?(\d+))")
SUPERSCRIPTS = {c: n for n, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")}


def power_of(match: re.Match[str]) -> int:
    """The power POWER found (2 for x², 10 for 2^10)."""
    sign = match.group(1)
    return SUPERSCRIPTS[sign] if sign else int(match.group(2))


def small_fraction(top: int, bottom: int) -> bool:
    """Whether top/bottom reads as a fraction people say (1/3, 3/4): a top under a bottom of 12
    or less, where a month and day are as likely."""
    return top < bottom <= 12


def date_span(m1: int, d1: int, m2: int, d2: int) -> bool:
    """Whether month/day m1/d1 to m2/d2 is a span of dates ("12/1-12/31", "12/25-1/5" over a
    year's end), not of fractions: the second is later, and the two are not small fractions
    rising ("1/3-2/3")."""
    later = (m1, d1) < (m2, d2) or (m1 == 12 and m2 == 1)
    rising = small_fraction(m1, d1) and small_fraction(m2, d2) and m1 / d1 < m2 / d2
    return later and not rising


# A Roman numeral after a name (World War II, Henry VIII, Louis XIV, Felipe II): every voice's
# espeak-ng reads it as letters or as "Roman two".
ROMAN_AFTER_NAME = re.compile(r"\b([A-Z][a-z]+) ([IVX]{2,6}|V|X)\b(?!['\w-])")
REGNAL = frozenset(
    ("Henry", "Elizabeth", "George", "Edward", "Charles", "James", "William", "Richard", "Louis",
     "John", "Paul", "Pius", "Benedict", "Leo", "Gregory", "Mary", "Philip", "Frederick",
     "Peter", "Catherine", "Alexander", "Nicholas", "Napoleon", "Ramesses", "Innocent",
     "Carlos", "Felipe", "Fernando", "Alfonso", "Isabel", "Juan", "Pedro", "Enrique", "Luis",
     "Pablo", "Henri", "François", "Philippe", "Jean", "Jacques", "Pie", "Benoît", "Carlo",
     "Vittorio", "Umberto", "Pio", "Giovanni", "Benedetto", "Leone", "Gregorio", "João",
     "Manuel", "Afonso", "Luís", "Bento")
)  # fmt: skip
"""Names whose numeral is a monarch's or a pope's ordinal (Henry the Eighth, Felipe segundo)."""
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10}


def roman_value(numeral: str) -> int | None:
    """The value of a Roman numeral written the usual way (IX, not VIIII or IIX), 1 to 39;
    None for any other run of I, V and X."""
    values = [_ROMAN_VALUES[c] for c in numeral]
    value = sum(-v if v < after else v for v, after in zip(values, [*values[1:], 0], strict=True))
    tens, units = divmod(value, 10)
    usual = "X" * tens + ("", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX")[units]
    return value if 1 <= value <= 39 and usual == numeral else None
