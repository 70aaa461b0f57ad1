"""The language a text is written in, told by its script (Han, kana), and what a voice can read."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from ..engines.engine import language_matches


@dataclass(frozen=True)
class Script:
    """A writing system that only some languages' voices read."""

    name: str
    """As a message names it."""
    readers: tuple[str, ...]
    """The language ranges whose voices read it, the one a text in it gets first."""


HAN = Script("Han characters (Chinese)", ("zh", "ja"))
KANA = Script("kana (Japanese)", ("ja",))

LANGUAGES = ("zh", "ja")
"""The languages text_language() tells."""

# Below the CJK radicals no character is Han or kana: Latin text never looks its names up.
_FIRST_CJK = "\u2e80"


def script_of(ch: str) -> Script | None:
    """Han or kana for a character of them, else None (Latin, digits, CJK punctuation)."""
    if ch < _FIRST_CJK:
        return None
    name = unicodedata.name(ch, "")
    # Kana names: HIRAGANA LETTER A, KATAKANA LETTER KA, HALFWIDTH KATAKANA LETTER A, and the
    # prolonged sound mark (KATAKANA-HIRAGANA PROLONGED SOUND MARK).
    if name.startswith(("HIRAGANA", "KATAKANA", "HALFWIDTH KATAKANA")):
        return KANA
    if name.startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH")):
        return HAN
    return None


def text_language(text: str) -> str | None:
    """The language range of the voice for `text` when a call names none: "ja" for any kana
    (Japanese writes Han with kana), "zh" for Han without kana, None for anything else (the
    server's default voice)."""
    han = False
    for ch in text:
        script = script_of(ch)
        if script is KANA:
            return "ja"
        han = han or script is HAN
    return "zh" if han else None


def unreadable(text: str, language: str) -> tuple[str, Script] | None:
    """The first character of `text` in a script that a voice of `language` (BCP-47) cannot
    read, and its script; None when it reads all of them."""
    for ch in text:
        script = script_of(ch)
        if script is not None and not any(language_matches(language, r) for r in script.readers):
            return ch, script
    return None
