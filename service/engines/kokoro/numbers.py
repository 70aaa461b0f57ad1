"""Numbers, dates, times and money in Chinese and Japanese text, written out as they are read."""

from __future__ import annotations

import re

from misaki.zh_normalization.chronology import (
    RE_DATE,
    RE_DATE2,
    RE_TIME,
    RE_TIME_RANGE,
    replace_date,
    replace_date2,
    replace_time,
)
from misaki.zh_normalization.num import (
    RE_FRAC,
    RE_NUMBER,
    RE_PERCENTAGE,
    RE_RANGE,
    num2str,
    replace_frac,
    replace_number,
    replace_percentage,
    replace_range,
)
from misaki.zh_normalization.phonecode import RE_MOBILE_PHONE, phone2str, replace_mobile
from misaki.zh_normalization.quantifier import RE_TEMPERATURE, replace_temperature

# Full-width digits, Latin letters and the signs around numbers, as their ASCII forms: the
# rules below match ASCII, and the Latin-word splitter in g2p matches ASCII letters.
_HALF_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F) if chr(c) not in "，！？；：（）"}
# "1,250" and "12,500,000": the comma groups thousands; elsewhere it separates clauses.
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])")
_MONEY_BEFORE = re.compile(r"([¥￥$€£])\s?(\d+(?:\.\d+)?)")
_YUAN_AFTER = re.compile(r"(\d+)\.(\d{1,2})\s?元")
# A fixed line with its area code ("010-12345678"); 7 or 8 bare digits may be an amount.
_LANDLINE = re.compile(r"(?<!\d)0\d{2,3}-\d{7,8}(?!\d)")
# A unit right after a number; on its own a letter is a Latin word, not a unit.
_UNITS = {
    "km": "公里", "kg": "公斤", "cm": "厘米", "mm": "毫米", "ml": "毫升", "mg": "毫克",
    "GB": "GB", "MB": "MB", "TB": "TB", "m": "米", "g": "克", "s": "秒", "h": "小时",
}  # fmt: skip
_UNIT = re.compile(r"(\d)\s?(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")(?![A-Za-z])")

_ZH_CURRENCY = {"¥": "元", "￥": "元", "$": "美元", "€": "欧元", "£": "英镑"}
_JA_CURRENCY = {"¥": "円", "￥": "円", "$": "ドル", "€": "ユーロ", "£": "ポンド"}


def half_width(text: str) -> str:
    """Full-width ASCII letters, digits and signs as ASCII (CJK punctuation is kept)."""
    return text.translate(_HALF_WIDTH)


def _no_thousands(text: str) -> str:
    return _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)


def _yuan(integer: str, decimals: str) -> str:
    """Integer and decimal digits ("25", "50") as a price is read: 二十五元五角."""
    decimals = (decimals + "00")[:2]
    words = f"{num2str(integer)}元"
    if decimals[0] != "0":
        words += f"{num2str(decimals[0])}角"
    if decimals[1] != "0":
        words += ("零" if decimals[0] == "0" else "") + f"{num2str(decimals[1])}分"
    return words


def _zh_money(match: re.Match[str]) -> str:
    unit, amount = _ZH_CURRENCY[match.group(1)], match.group(2)
    if unit == "元":
        integer, _, decimals = amount.partition(".")
        return _yuan(integer, decimals) if len(decimals) <= 2 else f"{num2str(amount)}元"
    return f"{num2str(amount)}{unit}"


def chinese(text: str) -> str:
    """Arabic numerals and their signs in Chinese text as Chinese words: dates, times, money,
    phone numbers, percentages, fractions, units and plain numbers."""
    text = _no_thousands(half_width(text))
    text = _MONEY_BEFORE.sub(_zh_money, text)
    text = _YUAN_AFTER.sub(lambda m: _yuan(m.group(1), m.group(2)), text)
    text = RE_DATE.sub(replace_date, text)
    text = RE_DATE2.sub(replace_date2, text)
    text = RE_TIME_RANGE.sub(replace_time, text)
    text = RE_TIME.sub(replace_time, text)
    text = RE_TEMPERATURE.sub(replace_temperature, text)
    text = RE_MOBILE_PHONE.sub(replace_mobile, text)
    text = _LANDLINE.sub(lambda m: phone2str(m.group(0), mobile=False), text)
    text = _UNIT.sub(lambda m: m.group(1) + _UNITS[m.group(2)], text)
    text = RE_FRAC.sub(replace_frac, text)
    text = RE_PERCENTAGE.sub(replace_percentage, text)
    text = RE_RANGE.sub(replace_range, text)
    spoken: str = RE_NUMBER.sub(replace_number, text)
    return spoken


def japanese(text: str) -> str:
    """What pyopenjtalk would misread in Japanese text: thousands separators (it reads "2,500"
    as two numbers) and currency signs before the amount (it drops "¥")."""
    text = _no_thousands(half_width(text))
    return _MONEY_BEFORE.sub(lambda m: m.group(2) + _JA_CURRENCY[m.group(1)], text)
