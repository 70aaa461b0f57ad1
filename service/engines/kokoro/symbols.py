"""Letters and numbers that the Mandarin and Japanese G2Ps leave out unread, written as words
they read: Greek letters by name (β受体, β受容体), units written with them (5Ω, 3μm), circled,
parenthesized and superscript numbers (①, ⑵, H₂O), and Latin letters with accents (café)."""

from __future__ import annotations

import re
import unicodedata

# The Greek letters by the names Chinese and Japanese readers give them (阿尔法狗 is AlphaGo;
# mu as English says it: 缪 alone is read móu).
_GREEK = {
    "ALPHA": ("阿尔法", "アルファ"), "BETA": ("贝塔", "ベータ"), "GAMMA": ("伽马", "ガンマ"),
    "DELTA": ("德尔塔", "デルタ"), "EPSILON": ("艾普西隆", "イプシロン"),
    "ZETA": ("泽塔", "ゼータ"), "ETA": ("伊塔", "イータ"), "THETA": ("西塔", "シータ"),
    "IOTA": ("约塔", "イオタ"), "KAPPA": ("卡帕", "カッパ"), "LAMDA": ("兰布达", "ラムダ"),
    "MU": ("mu", "ミュー"), "NU": ("纽", "ニュー"), "XI": ("克西", "クサイ"),
    "OMICRON": ("奥密克戎", "オミクロン"), "PI": ("派", "パイ"), "RHO": ("柔", "ロー"),
    "SIGMA": ("西格玛", "シグマ"), "TAU": ("陶", "タウ"), "UPSILON": ("宇普西隆", "ウプシロン"),
    "PHI": ("斐", "ファイ"), "CHI": ("希", "カイ"), "PSI": ("普西", "プサイ"),
    "OMEGA": ("欧米伽", "オメガ"),
}  # fmt: skip
# Units written with a Greek letter, right after a number: 5Ω is five ohms, not five omegas.
_UNITS = {
    "Ω": ("欧姆", "オーム"), "μm": ("微米", "マイクロメートル"), "μs": ("微秒", "マイクロ秒"),
    "μg": ("微克", "マイクログラム"), "μl": ("微升", "マイクロリットル"),
    "μA": ("微安", "マイクロアンペア"), "μF": ("微法", "マイクロファラド"),
}  # fmt: skip
_UNIT = re.compile(r"(?<=\d)\s?(" + "|".join(_UNITS) + r")(?![A-Za-z])")
# OHM SIGN and MICRO SIGN are their Greek letters (NFKC), as writers mix them.
_SIGNS = str.maketrans({"\u2126": "Ω", "\u00b5": "μ"})
# Latin letters that do not decompose into a letter and an accent.
_LATIN = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe",
                        "Œ": "OE", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ı": "i"})  # fmt: skip


def _greek(ch: str, language: int) -> str:
    """A Greek letter's name in the language (0: Mandarin, 1: Japanese), else the letter."""
    name = unicodedata.name(ch, "")
    letter = name.partition(" LETTER ")[2].partition(" WITH ")[0].split()
    names = _GREEK.get(letter[-1]) if letter else None  # FINAL SIGMA is a sigma
    return ch if names is None else names[language]


def _number(ch: str) -> str:
    """A circled, parenthesized, dotted or superscript digit as its digits: ① → 1, ⒛ → 20, ² → 2."""
    digits = unicodedata.normalize("NFKC", ch).strip("().")
    return digits if digits.isdigit() and digits.isascii() else ch


def _unaccented(ch: str) -> str:
    """A Latin letter with an accent as the letter: é → e, ß → ss."""
    base = unicodedata.normalize("NFKD", ch.translate(_LATIN))
    return "".join(c for c in base if not unicodedata.combining(c))


def _readable_character(ch: str, language: int) -> str:
    if "\u0370" <= ch <= "\u03ff":
        return _greek(ch, language)
    category = unicodedata.category(ch)
    if category == "No":
        return _number(ch)
    # Latin-1 to Latin Extended-B, and Latin Extended Additional (ạ, ế: Vietnamese).
    if category[0] == "L" and (ch < "\u0250" or "\u1e00" <= ch <= "\u1eff"):
        return _unaccented(ch)
    return ch


def _readable(text: str, language: int) -> str:
    text = text.translate(_SIGNS)
    text = _UNIT.sub(lambda m: " " + _UNITS[m.group(1)][language], text)
    if text.isascii():
        return text
    return "".join(ch if ch.isascii() else _readable_character(ch, language) for ch in text)


def chinese(text: str) -> str:
    """`text` with what the Mandarin G2P leaves out written as words it reads."""
    return _readable(text, 0)


def japanese(text: str) -> str:
    """`text` with what the Japanese G2P leaves out written as words it reads."""
    return _readable(text, 1)
