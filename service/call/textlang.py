"""The language a text is written in, told by its script (Han, kana, Cyrillic, ...), and what a
voice can read."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from ..engines.engine import language_matches


@dataclass(frozen=True)
class Script:
    """A writing system that only some languages' voices read. Latin is not one: every voice
    reads it (brand names, code, English words in any language's text)."""

    name: str
    """As a message names it."""
    readers: tuple[str, ...]
    """The language ranges whose voices read it, the one a text in it gets first."""
    symbols: bool = False
    """A letter of it with no other letter of it beside it is a symbol that any voice names
    (Greek alpha, pi or delta in English text); two or more side by side are a word of it."""


HAN = Script("Han characters (Chinese)", ("zh", "ja"))
KANA = Script("kana (Japanese)", ("ja",))
HANGUL = Script("Hangul (Korean)", ("ko",))

# The first word of a letter's Unicode name ("CYRILLIC SMALL LETTER PE") names its script. The
# readers are the languages that write it (CLDR's likely scripts), the most spoken first: a
# voice of any other language reads its letters out one by one ("Arabic letter alef").
_BY_NAME: dict[str, Script] = {
    "CJK": HAN,
    "IDEOGRAPHIC": HAN,  # 々 (IDEOGRAPHIC ITERATION MARK) and 〆 alone
    "HIRAGANA": KANA,
    "KATAKANA": KANA,
    "HANGUL": HANGUL,
    "CYRILLIC": Script(
        "Cyrillic", ("ru", "uk", "bg", "sr", "be", "mk", "kk", "ky", "tg", "mn", "tt", "ba", "cv")
    ),
    "GREEK": Script("Greek", ("el", "grc"), symbols=True),
    "ARABIC": Script("Arabic", ("ar", "fa", "ur", "ps", "ug", "sd", "ckb")),
    "HEBREW": Script("Hebrew", ("he", "yi", "iw")),
    "ARMENIAN": Script("Armenian", ("hy",)),
    "GEORGIAN": Script("Georgian", ("ka",)),
    "DEVANAGARI": Script("Devanagari", ("hi", "ne", "mr", "sa", "kok", "mai")),
    "BENGALI": Script("Bengali", ("bn", "as")),
    "GURMUKHI": Script("Gurmukhi", ("pa",)),
    "GUJARATI": Script("Gujarati", ("gu",)),
    "ORIYA": Script("Odia", ("or",)),
    "TAMIL": Script("Tamil", ("ta",)),
    "TELUGU": Script("Telugu", ("te",)),
    "KANNADA": Script("Kannada", ("kn",)),
    "MALAYALAM": Script("Malayalam", ("ml",)),
    "SINHALA": Script("Sinhala", ("si",)),
    "THAI": Script("Thai", ("th",)),
    "LAO": Script("Lao", ("lo",)),
    "KHMER": Script("Khmer", ("km",)),
    "MYANMAR": Script("Myanmar", ("my",)),
    "TIBETAN": Script("Tibetan", ("bo", "dz")),
    "ETHIOPIC": Script("Ethiopic", ("am", "ti")),
}

SCRIPTS = tuple(dict.fromkeys(_BY_NAME.values()))
"""Every script a voice may not read."""

LANGUAGES = tuple(dict.fromkeys(s.readers[0] for s in SCRIPTS))
"""The languages text_language() tells."""

# Below Greek every character is Latin, IPA, a modifier or a combining mark: Latin text never
# looks its names up.
_FIRST_OTHER = "\u0370"


@functools.lru_cache(maxsize=8192)  # a text's characters repeat; names are slow to look up
def script_of(ch: str) -> Script | None:
    """The script of a letter (or a mark of one) that only some voices read; None for Latin,
    digits, punctuation, symbols and emoji."""
    if ch < _FIRST_OTHER or unicodedata.category(ch)[0] not in "LM":
        return None
    words = unicodedata.name(ch, "").split()
    # HALFWIDTH KATAKANA LETTER A, HALFWIDTH HANGUL LETTER KIYEOK
    if words[:1] in (["HALFWIDTH"], ["FULLWIDTH"]):
        words = words[1:]
    # CJK UNIFIED IDEOGRAPH-4E00 and CJK COMPATIBILITY IDEOGRAPH-F900 are the letters of CJK;
    # the prolonged sound mark ー is KATAKANA-HIRAGANA PROLONGED SOUND MARK.
    first = words[0].split("-")[0] if words else ""
    return _BY_NAME.get(first)


def has_words(text: str) -> bool:
    """Whether `text` holds anything a voice speaks: a letter, a digit or a symbol (currency,
    math, emoji), not only punctuation, spaces and invisible characters."""
    return any(unicodedata.category(ch)[0] in "LNS" for ch in text)


def _letters(text: str) -> Iterator[tuple[str, Script]]:
    """Each character of `text` in a script only some voices read, with its script, less a
    symbol letter standing alone (Script.symbols)."""
    scripts = [script_of(ch) for ch in text]
    for i, script in enumerate(scripts):
        if script is None:
            continue
        if script.symbols and not (
            (i > 0 and scripts[i - 1] is script)
            or (i + 1 < len(scripts) and scripts[i + 1] is script)
        ):
            continue
        yield text[i], script


def text_script(text: str) -> Script | None:
    """The script that picks the voice for `text` when a call names none: kana if it has any
    (Japanese writes Han with kana), Hangul if any (Korean may too), else the script of its
    first letter that is not Latin; None for Latin text (the server's default voice)."""
    first: Script | None = None
    for _, script in _letters(text):
        if script is KANA or script is HANGUL:
            return script
        first = first or script
    return first


def text_language(text: str) -> str | None:
    """The language range of the voice for `text` when a call names none: the first reader of
    its script (text_script): "ja" for any kana, "zh" for Han without kana unless its kanji or
    marks are Japanese (han_language), "ru" for Cyrillic; None for anything else (the server's
    default voice)."""
    script = text_script(text)
    if script is HAN:
        return han_language(text) or "zh"
    return None if script is None else script.readers[0]


# Japanese and Chinese share most Han characters. Japan's simplified forms (気, 駅, 円: in
# Shift_JIS, in neither GB2312 nor Big5) and the iteration mark 々 are Japanese; China's (们,
# 这, 说: in GB2312, not in Shift_JIS) are Chinese, and so is the full-width comma, which
# Japanese does not write (it writes 、).
_ITERATION_MARK = "\N{IDEOGRAPHIC ITERATION MARK}"
_FULLWIDTH_COMMA = "\N{FULLWIDTH COMMA}"


def _encodes(ch: str, codec: str) -> bool:
    try:
        ch.encode(codec)
    except UnicodeEncodeError:
        return False
    return True


@functools.lru_cache(maxsize=8192)
def _han_writer(ch: str) -> str | None:
    """ "ja" for a kanji only Japanese writes, "zh" for a character only Chinese writes, else
    None (most of them: both write 日本, 东 is Chinese, 東 both Japanese and traditional)."""
    if ch == _ITERATION_MARK:
        return "ja"
    if ch == _FULLWIDTH_COMMA:
        return "zh"
    if script_of(ch) is not HAN:
        return None
    japanese = _encodes(ch, "shift_jis")
    if japanese and not _encodes(ch, "gb2312") and not _encodes(ch, "big5"):
        return "ja"
    if not japanese and _encodes(ch, "gb2312"):
        return "zh"
    return None


def han_language(text: str) -> str | None:
    """For text in Han characters without kana: "ja" or "zh" when its first character that
    only one of them writes tells (様々 and 気温 are Japanese, 我们 and a full-width comma
    Chinese), None when nothing tells."""
    for ch in text:
        writer = _han_writer(ch)
        if writer is not None:
            return writer
    return None


# How much Han text after a 、 leaves the language open: Japanese writes a kana within a few
# characters of one (本日、雨が), a Chinese list runs on (北京、上海、广州都有).
_OPEN_AFTER_COMMA = 8
_SENTENCE_ENDS = (
    "\N{IDEOGRAPHIC FULL STOP}\N{FULLWIDTH EXCLAMATION MARK}\N{FULLWIDTH QUESTION MARK}.!?"
)
# A first sentence of at most this many Han characters and nothing that tells leaves the
# language open too: 了解。 承知。 以上。 start Japanese replies, 好的。 明白。 Chinese ones.
_SHORT_OPENING = 4


# The marks only Chinese and Japanese write: Latin words before one ("OK" and a full-width
# comma, "Hi、") start a Chinese or Japanese reply.
_CJK_MARKS = (
    "\N{FULLWIDTH COMMA}\N{IDEOGRAPHIC COMMA}\N{IDEOGRAPHIC FULL STOP}"
    "\N{FULLWIDTH EXCLAMATION MARK}\N{FULLWIDTH QUESTION MARK}\N{FULLWIDTH COLON}"
    "\N{FULLWIDTH SEMICOLON}"
)


def undecided(text: str) -> bool:
    """Whether the start of a stream's text leaves its language open, so that its voice waits
    for more (a few characters at most):
    - Latin alone (or no letters) before a mark only Chinese and Japanese write: "OK、" starts
      "OK、承知しました", and OK with a full-width comma 我明白了;
    - ... or before a comma, semicolon or colon all scripts write, until a letter follows it:
      "OK, " starts "OK, 我们开始吧" and "OK, let's go" (in a stream that letter most often
      comes with the space, in one token);
    - Han characters alone, none that only Japanese or Chinese writes, cut at a 、 with no
      sentence end after it: "本日、" starts Japanese and Chinese sentences alike, "本日、雨が"
      is Japanese, and 好的 with a full-width comma is Chinese at once;
    - ... or in a short first sentence (_SHORT_OPENING), until the next one tells: "了解。"
      starts "了解。少々お待ちください。" and "了解。我马上处理。"; a whole next sentence
      without kana is Chinese."""
    script = text_script(text)
    if script is None:
        mark = next((i for i, c in enumerate(text) if c in _CJK_MARKS or c in ",;:"), None)
        if mark is None or len(text) - mark > 4 * _OPEN_AFTER_COMMA:
            return False
        return text[mark] in _CJK_MARKS or not any(c.isalpha() for c in text[mark:])
    if script is not HAN or han_language(text) is not None:
        return False
    _, comma, tail = text.partition("\N{IDEOGRAPHIC COMMA}")
    if not comma:
        end = next((i for i, c in enumerate(text) if c in _SENTENCE_ENDS), None)
        if end is None or sum(script_of(c) is HAN for c in text[:end]) > _SHORT_OPENING:
            return False
        tail = text[end:].lstrip(_SENTENCE_ENDS)
    return not (
        any(mark in tail for mark in _SENTENCE_ENDS)
        or len(tail) >= 4 * _OPEN_AFTER_COMMA
        or sum(script_of(c) is HAN for c in tail) >= _OPEN_AFTER_COMMA
    )


def settled(text: str, first: str) -> str:
    """The start of a whole `text` that picks its voice: its first segment `first`, or when that
    leaves the language open (undecided), up to the character that settles it, as a stream of
    it one character at a time would be decided."""
    end = len(first)
    while undecided(text[:end]) and end < len(text):
        end += 1
    return text[:end]


def unreadable(text: str, language: str) -> tuple[str, Script] | None:
    """The first character of `text` in a script that a voice of `language` (BCP-47) cannot
    read, and its script; None when it reads all of them."""
    for ch, script in _letters(text):
        if not any(language_matches(language, r) for r in script.readers):
            return ch, script
    return None
