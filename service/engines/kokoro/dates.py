"""A month and a day written with a slash in Chinese and Japanese text ("12/25", "3/15"), which
the G2Ps read as a fraction (二十五分之十二, 25分の12). A slash is as often a fraction ("1/3的用户",
"1/2カップ"), so it becomes a date only where the text makes it one:

- the day of the week, a time or a part of the day after it ("3/15下午3点", "12/25の18時");
- a word for what happens on a date after it (发货, 截止, 発売, 必着) or a date's name before it
  (截止日期, 预计, 予定日, 締切), or a request to act by it (请于, 须在: 请于3/5前付款);
- a span to a later date ("12/1-12/31", "3/5〜3/10");
- a particle of time after it (之前, 起, まで, 以降) unless it reads as a small fraction (a top
  under a bottom of 12 or less: "1/3まで" is a third);
- and alone, what no one writes as a fraction: a day past the 12th in a month after January
  ("3/15", where 1/16 and 1/20 are fractions) or a month past its day ("12/5").

A score or a rating before it ("评分5/5", "評価4/5") keeps the slash, as does a measure after it
("3/16インチ", "1/20的比例"). With the year last ("12/25/2024", "25/12/2024") it is always a
date."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..written import date_span, small_fraction

_MD = r"(1[0-2]|0?[1-9])/(3[01]|[12]\d|0?[1-9])"
_ALONE = r"(?<![0-9A-Za-z/.])"
_END = r"(?![0-9/]|\.\d)"
_MONTH_DAY = re.compile(_ALONE + _MD + _END)
# With the year last ("12/25/2024" the American way, "25/12/2024" the European): a date whatever
# the words around it; a day past the 12th first is the European order, else month first.
_YEAR_LAST = re.compile(r"(?<![0-9/.])(\d{1,2})/(\d{1,2})/((?:19|20)\d{2})(?![0-9/]|\.\d)")
_SPAN = re.compile(_ALONE + _MD + r"\s?[-~～〜至到\N{EN DASH}]\s?" + _MD + _END)
# How far either side of a date the words that decide it are looked for.
_REACH = 12


@dataclass(frozen=True)
class _Cues:
    before: re.Pattern[str]  # a date's name just before: a date
    after: re.Pattern[str]  # a weekday, time or event just after: a date
    particle: re.Pattern[str]  # a particle of time just after: a date unless a small fraction
    score: re.Pattern[str]  # a score's name just before: never a date
    measure: re.Pattern[str]  # a measure just after: a fraction, unless a cue above says date
    to: str  # the word between the dates of a span


def _time(hour: str) -> str:
    """A clock time: 18:30, 6PM, or the hour with its word (点, 時)."""
    return rf"\d{{1,2}}(?:[:：]\d\d|\s?[AaPp]\.?[Mm]|{hour})"


_ZH = _Cues(
    before=re.compile(
        r"(?:日期|时间|截止|截至|有效期至?|期限|预计|预约|生日|将于|定于|已于|改到|改期到|延期到|"
        r"推迟到|延长到|[请须需应]您?[于在]|务必[于在])\s?[:：为是在于至到]?\s?$"
    ),
    after=re.compile(
        r"\s?(?:[(（](?:周|星期|礼拜)?[一二三四五六日天]|(?:的\s?)?(?:上午|下午|早上|晚上|中午|凌晨|傍晚"
        rf"|当天|当日)|(?:的\s?)?{_time('点')}|发货|送达|到货|到账|上线|开始|结束|截止|生效|到期|举行|举办"
        r"|开放|发布|发售|开售|开业|出发|入住|退房)"
    ),
    particle=re.compile(r"\s?(?:之前|以前|之后|以后|前|后|起)"),
    score=re.compile(r"(?:评分|得分|满分|打分|评价|星级|进度|第)\s?[:：为是]?\s?$"),
    measure=re.compile(r"\s?(?:英寸|秒|杯|倍|的(?:概率|几率|比例|人|用户)|比例|以上|以下|左右)"),
    to="到",
)
_JA = _Cues(
    before=re.compile(
        r"(?:日付|日程|日時|期限|締め?切り?|予定日|発売日|開催日|納期|お届け日|到着日|出荷日|発送日|"
        r"誕生日|本日|今日|明日)\s?[はがの:：]?\s?$"
    ),
    after=re.compile(
        r"\s?(?:[(（][月火水木金土日]|(?:の\s?)?(?:午前|午後|朝|昼|夕方|夜)|(?:の\s?)?"
        rf"{_time('時')}|発売|開催|開始|終了|到着|発送|出荷|入荷|必着|締め?切|〆切|当日|公開|受付|着)"
    ),
    particle=re.compile(r"\s?(?:まで|から|以降|以前|より|頃|ごろ|に)"),
    score=re.compile(r"(?:評価|スコア|点数|得点|進捗|第)\s?[はがの:：]?\s?$"),
    measure=re.compile(
        r"\s?(?:インチ|秒|カップ|杯|倍|の(?:確率|割合|縮尺|人)|以上|以下|未満|程度)"
    ),
    to="から",
)
_CUES = {"zh": _ZH, "ja": _JA}


def _is_date(text: str, start: int, end: int, month: int, day: int, cues: _Cues) -> bool:
    before, after = text[max(0, start - _REACH) : start], text[end : end + _REACH]
    if cues.score.search(before):
        return False
    if cues.before.search(before) or cues.after.match(after):
        return True
    if cues.particle.match(after):
        return not small_fraction(month, day)
    if cues.measure.match(after):
        return False
    return (month >= 2 and day >= 13) or month > day


def month_days(text: str, language: str) -> str:
    """`text` with each slashed month and day that is a date written as one (12月25日), in
    Chinese (`language` "zh") or Japanese ("ja"); spans with 到 or から between."""
    if "/" not in text:
        return text
    cues = _CUES[language]

    def span(m: re.Match[str]) -> str:
        m1, d1, m2, d2 = (int(g) for g in m.groups())
        before = text[max(0, m.start() - _REACH) : m.start()]
        if not date_span(m1, d1, m2, d2) or cues.score.search(before):
            return m.group(0)
        return f"{m1}月{d1}日{cues.to}{m2}月{d2}日"

    def one(m: re.Match[str]) -> str:
        month, day = int(m[1]), int(m[2])
        if not _is_date(m.string, m.start(), m.end(), month, day, cues):
            return m.group(0)
        return f"{month}月{day}日"

    return _MONTH_DAY.sub(one, _SPAN.sub(span, _YEAR_LAST.sub(_year_last, text)))


def _year_last(m: re.Match[str]) -> str:
    first, second, year = int(m[1]), int(m[2]), m[3]
    month, day = (second, first) if first > 12 else (first, second)
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return m.group(0)
    return f"{year}年{month}月{day}日"
