"""Numbers, dates, times and money in Chinese and Japanese text, written out as they are read."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

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
    COM_QUANTIFIERS,
    RE_FRAC,
    RE_NUMBER,
    RE_PERCENTAGE,
    RE_RANGE,
    num2str,
    replace_frac,
    replace_number,
    replace_percentage,
    replace_range,
    verbalize_digit,
)
from misaki.zh_normalization.phonecode import RE_MOBILE_PHONE, phone2str, replace_mobile
from misaki.zh_normalization.quantifier import RE_TEMPERATURE, replace_temperature

from ..written import INTERNATIONAL_GROUPS, PHONE, RATIO, international_groups, phone_groups
from .dates import month_days
from .katakana import letter_names

# Full-width digits, Latin letters and the signs around numbers, as their ASCII forms: the
# rules below match ASCII, and the Latin-word splitter in g2p matches ASCII letters.
_HALF_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F) if chr(c) not in "，！？；：（）"}
# "1,250" and "12,500,000": the comma groups thousands; elsewhere it separates clauses.
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])")
# The sign or code, the amount, and the unit written after it as well ("¥1299元", "$5美元",
# "¥1,000円"), which is not read again; and an amount before its code ("100 USD").
_CODES = "USD|RMB|CNY|EUR|GBP|JPY|HKD|INR"
# A currency's sign, which may stand before an amount or after it ("$5", "5€").
_SIGN = r"(?:HK\$|US\$|[¥￥$€£₹])"
_MONEY_BEFORE = re.compile(
    rf"({_SIGN}|(?<![A-Za-z])(?:{_CODES})(?=\s?\d))\s?(\d+(?:\.\d+)?)"
    r"(\s?(?:元|美元|欧元|英镑|港币|日元|卢比|円|米ドル|ドル|ユーロ|ポンド|ルピー|人民元))?"
)
# An amount with its scale after the sign ("¥5.5万", "$1.2亿"): the scale before the currency
# (五点五万元), not 五元五角 then 万.
_SCALED_MONEY = re.compile(rf"({_SIGN})\s?(\d+(?:\.\d+)?)\s?(千万|百万|[千万亿])")
# A salary or a budget in thousands ("月薪15k-20k", "年终奖2.5K"): 一万五千, 两千五百. Only after a
# word for pay (_PAY) or in a span of them: "4K电视" is a screen, "5K跑" a race.
_K = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)[kK](?![A-Za-z])")
_K_SPAN = re.compile(
    r"(?<![A-Za-z0-9.])\d+(?:\.\d+)?[kK]\s?[-~～到至]\s?\d+(?:\.\d+)?[kK](?![A-Za-z])"
)
_PAY = re.compile(r"(?:薪|工资|收入|待遇|报酬|奖|预算|底薪|税前|税后|补贴|[¥￥]|元)")
# An extension after a phone number ("010-12345678转8001", "95588转0"): its digits one by one.
_EXTENSION = re.compile(r"(?<=[\d零幺一二三四五六七八九])(\s?转\s?)(\d{1,6})(?![0-9])")
# An amount before its code or sign ("100 USD", "5€", "12.50 $", as much of Europe writes it).
_MONEY_AFTER = re.compile(
    rf"(?<![\d.])(\d+(?:\.\d+)?)\s?((?:{_CODES})(?![A-Za-z])|[¥￥$€£₹](?!\s?\d))"
)
_DIGIT_COLON = re.compile(r"(?<=\d)：(?=\d)")
_YUAN_AFTER = re.compile(r"(?:(?<![\d.])(-))?(\d+)\.(\d{1,2})\s?元")  # -15.30元: 负
# A span up to such a price ("10-15.5元"): 到, not a minus the reader leaves unsaid.
_YUAN_SPAN = re.compile(r"(?<=\d)\s?[-~～]\s?(?=\d+\.\d{1,2}\s?元)")
# A fixed line with its area code ("010-12345678"); 7 or 8 bare digits may be an amount.
_LANDLINE = re.compile(r"(?<!\d)0\d{2,3}-\d{7,8}(?!\d)")
# The area code in brackets ("(021)12345678", "（010）8888 6666"): both parts one by one, a
# pause between, not 零二幺 then 一千二百三十四万….
_BRACKETED_AREA = re.compile(r"[(（](0\d{2,3})[)）]\s?(\d{3,4}\s?\d{4})(?!\d)")
# A country's calling code standing apart from the number, in brackets or after its label
# ("(+86)", "国际区号+86", "国番号：+81"): a plus and its digits one by one (加八六), not 八十六
# or the plus dropped. Its plus may already be the word symbols.py writes for it.
_COUNTRY_CODE = re.compile(
    r"(?:(?<=[(（])|(?<=区号)|(?<=区号[:：])|(?<=国番号)|(?<=国番号[:：は]))"
    r"(?:\+|加|プラス)(\d{1,3})(?![\d.])"
)

# Digits that name something rather than count it are read one by one, as a listener hears a
# phone number or a code read out ("验证码385912" is 三八五九幺二, not 三十八万...; "尾号0371"
# keeps its zero). First, what follows a word that introduces a number, a code or an ID:
_CODE_WORDS = (
    "号码|编号|单号|账号|帐号|卡号|尾号|工号|学号|房号|房间|车次|航班|车牌|型号|批号|分机|"
    "热线|电话|手机|邮编|密码|验证码|校验码|取件码|取餐码|优惠码|兑换码|邀请码|错误码|错误代码|状态码|识别码|"
    "序列号|证号|拨打|拨|致电|呼叫|回拨|客服|投诉|举报|报警|急救|火警|端口|代码|"
    # the last or first few digits of a number ("后四位是1234", "末6位")
    "(?:[前后末]|最后)(?:[一二三四五六七八九十]|\\d{1,2})位(?:数字|数)?"
)
# ... unless a measure word follows it ("手机1500元" is an amount), but not a word that starts
# with one ("尾号8888本期账单": 本期 is this month's, no 8888 books).
_NO_MEASURE = "(?!本[期月次人店周日年单笔轮届]|手机)"
_AFTER_CODE_WORD = re.compile(
    rf"((?:{_CODE_WORDS})(?:号码|号)?)((?:是|为|：|:|\s)*)"
    r"(\+?[0-9A-Za-z]+(?:-[0-9A-Za-z]+| \d+)*)(?![0-9A-Za-z]|\.\d)"
    rf"(?!\s?{_NO_MEASURE}{COM_QUANTIFIERS})"
)
# A stock's or a fund's six-digit code in brackets after its name ("贵州茅台(600519)").
_LISTED_CODE = re.compile(r"(?<=[\u4e00-\u9fff])([(（])(\d{6})(?=[)）])")
# A building, its unit and its room, joined by hyphens ("8-2-301", "3-2-1101室"): each said
# with 杠 between, the room digit by digit, as an address is read out; not a date (2024-12-06).
_BUILDING_ROOM = re.compile(
    r"(?<![\d.-])(\d{1,3})-(\d{1,2})-(?!(?:19|20)\d\d(?!\d))(\d{3,4})(?![\d-])"
    r"|(?:(?<=号楼)|(?<=[栋幢座]))()(\d{1,2})-(\d{3,4})(?![\d-])"  # 3号楼2-301: unit and room
)
# The numbers every Chinese listener knows as numbers to call, read as they are dialled: the
# companies' and banks' lines (10086, 10010, 95588), the public hotlines (12306, 12315, 12345),
# and after 或/和 an emergency number (拨打110或120). Not before a measure word (12306人).
_SERVICE_NUMBER = re.compile(
    r"(?<![\dA-Za-z.·-])(?:100(?:86|10|00|01)|95\d{3}|123\d{2}|(?<=[或和、])(?:110|119|120|122))"
    rf"(?![\d%％℃]|\.\d|\s?{COM_QUANTIFIERS})"
)
# A room number, read digit by digit: 501室 is 五零幺室, 1203房间 幺二零三房间, and so is one after
# a building and its entrance (5号楼301, 2单元301, A座1201).
_ROOM = re.compile(
    rf"(?<![0-9.])\d{{3,4}}(?=室|房间|房|号房)|(?:(?<=单元)|(?<=号楼)|(?<=[座栋幢]))\d{{3,4}}(?![0-9]|\.\d|\s?(?:平|{COM_QUANTIFIERS}))"
)
# "1.2w", "10W+" in internet writing: 万 (一点二万, 十万多); an upper-case W alone is watts.
_WAN = re.compile(r"(?<=\d)(?:w|W(?=\+))(?![A-Za-z])")
# "100+" is a hundred and more: 一百多, "1万+" 一万多 (after a round number only: "5+年" is no
# 五多年).
_AND_MORE = re.compile(r"(?:(?<=\d0)|(?<=\d[十百千万亿]))\+(?![0-9])")
# Digits right after a letter: a model, a flight, a plate, a tracking number (CA1234, 京A12345,
# RTX4090). One or two digits stay a number (iOS17, Win10); four or more after a name in
# capitals and a space too (RTX 4090, ISO 9001).
_AFTER_LETTERS = re.compile(r"(?:(?<=[A-Za-z])\d{3,}|(?<=[A-Z]{2} )\d{4,})(?![0-9]|\.\d)")
# A hyphen between a letter and a digit joins a name and its number (COVID-19, A-1栋, 京A-12345),
# never a minus: it goes, and the rule above reads the digits; so does a plate's dot (沪A·12345).
_LETTER_HYPHEN = re.compile(r"(?<=[A-Za-z])[-·](?=\d)")
# Blood pressure ("血压120/80"): the two numbers with a pause, not 一百二十八十 run together; in
# Japanese with の between (血圧120/80 is 120の80).
_PRESSURE = re.compile(r"((?:血压|血圧|BP)[^\d]{0,6}?)(\d{2,3})/(\d{2,3})(?![\d/])")
# A leading zero ("0371", "000000"), or ten digits and more with no measure word: no one counts
# those. Before a date's or a time's unit ("05月") the zero is the writer's padding.
_NOT_COUNTED = re.compile(
    rf"(?<![0-9.])(?:0\d+|\d{{10,}})(?![0-9]|\.\d|[月日号点时分秒]|\s?{COM_QUANTIFIERS})"
)
# Three or more numbers joined by dots: a version or an IP address, its parts read with 点.
_DOTTED = re.compile(r"(?<![0-9.])\d+(?:\.\d+){2,}(?![0-9]|\.\d)")
_NO = re.compile(r"(?<![A-Za-z])(?:No|NO)\.\s?(\d+)")
# A tilde between numbers, percentages, amounts or counted things is a span ("10%~20%",
# "¥50~100", "14時〜16時"): the G2Ps drop it between two numbers they have written out.
_TILDE = re.compile(
    r"(?:(?<=[\d%℃円元])|(?<=\d[\u4e00-\u9fff])|(?<=\d[\u4e00-\u9fff]{2}))"
    rf"\s?[~～〜]\s?(?=-?{_SIGN}?\d)"
)
# A hyphen between two numbers that each carry their unit or sign ("10%-20%", "20℃-25℃",
# "3天-5天", "¥100-¥200"), or before an amount with its sign or code after it ("5-10€",
# "5-10 USD"), is a span; the G2Ps read it as a minus (十负百分之二十) or drop it.
_UNIT_SPAN = re.compile(
    r"(?:(?<=\d[%℃元円])|(?<=\d°C)|(?<=\d[\u4e00-\u9fff])|(?<=\d[\u4e00-\u9fff]{2}))"
    rf"\s?[-\N{{EN DASH}}]\s?(?=\d)|(?<=\d)\s?[-\N{{EN DASH}}]\s?(?={_SIGN}\d"
    rf"|\d[\d,]*(?:\.\d+)?\s?(?:[¥￥$€£₹]|(?:{_CODES})(?![A-Za-z])))"
)
# A span whose sign is written once, before its first amount ("$5-10", "¥50~100"): the sign
# is given to the second as well, so that both are read as money (五美元到十美元), not the
# second as a minus number (五美元负十).
_SIGN_SPAN = re.compile(rf"({_SIGN})(\s?\d[\d,]*(?:\.\d+)?\s?[-\N{{EN DASH}}~～〜]\s?)(?=\d)")
# A span of weekdays ("周一-周五", "星期一~星期五", "月〜金", "月曜日～金曜日"): the G2Ps drop
# the sign or pause at it, and OpenJTalk reads a lone 月 as ツキ.
_ZH_WEEKDAYS = re.compile(
    r"((?:周|星期|礼拜)[一二三四五六日天])\s?[-~～〜\N{EN DASH}\N{EM DASH}]\s?"
    r"(?=(?:周|星期|礼拜)?[一二三四五六日天])"
)
# Weekdays listed by their first kanji ("月/水/金", "月・水・金曜日"): each with its 曜.
_JA_WEEKDAY_LIST = re.compile(
    r"(?:(?<![\d\u4e00-\u9fff])|(?<=週))([月火水木金土日](?:[/・、][月火水木金土日])+)(曜日?)?"
    r"(?![\u4e00-\u9fff])"
)
_JA_WEEKDAYS = re.compile(
    r"(?<!\d)[(（]?([月火水木金土日])(曜日?)?[)）]?\s?[-~～〜]\s?[(（]?([月火水木金土日])(曜日?)?"
    r"(?:[)）]|(?<=曜|日)|(?![\u4e00-\u9fff]))"
)
# A tilde between two kanji is a span too: 東京〜大阪, 今月〜来月 (after kana it draws out the
# word: よろしくね〜; in Chinese it softens one: 好的~我知道了).
_JA_WORD_TILDE = re.compile(r"(?<=[\u4e00-\u9fff])\s?[~～〜]\s?(?=[\u4e00-\u9fff])")
# A game's score with a hyphen ("比分3-2", "以3-2击败", "3-2で勝利"): said with 比 or 対, not as
# a span (三到二) or two numbers.
_SCORE = r"(\d{1,3})\s?[-\N{EN DASH}]\s?(\d{1,3})(?![\d.])"
_ZH_SCORE = re.compile(
    rf"(?<=比分){_SCORE}|(?<=比分[是为]){_SCORE}"
    rf"|{_SCORE}(?=\s?(?:击败|战胜|获胜|取胜|赢|胜|负|输|落败|告负|的比分))"
)
_JA_SCORE = re.compile(
    rf"(?<=スコア[はがで]){_SCORE}|{_SCORE}(?=\s?(?:で(?:勝|負|敗|引き分け)|の(?:勝利|敗北|引き分け)))"
)
# "满300-50" in a shop's offer: spend 300, take 50 off (满三百减五十), no span.
_OFFER = re.compile(r"(?<=满)(\d+)\s?[-\N{EN DASH}]\s?(?=\d)")
# A shopping festival named by its date: 618 (六一八), 818, 1111 (双11 reads itself).
_FESTIVAL = re.compile(
    r"(?<![\d.])(618|818|1111|1212)(?=\s?(?:大促|购物节|活动|狂欢节|年中大促|期间|当天))"
)
# Months and days with a dot after a word that names a date ("活动时间12.6-12.8", "档期：3.1~3.15")
# or before a word of an occasion ("12.12当天", "6.18大促"): dates, and a span of them, not
# decimals (十二点六到十二点八).
_MONTH_DAY = r"(1[0-2]|0?[1-9])\.(0?[1-9]|[12]\d|3[01])"
_NOT_A_DATE = rf"(?![\d.%]|\s?(?:{COM_QUANTIFIERS}|折|倍|版|分))"
_DOTTED_DATES = re.compile(
    r"(?:(?<=活动时间)|(?<=日期)|(?<=活动)|(?<=期间)|(?<=档期))([为是：:\s]*)(?<![\d.])"
    rf"{_MONTH_DAY}(?:\s?[-~～至到]\s?{_MONTH_DAY}{_NOT_A_DATE}|(?!\s?[-~～至到]\s?\d){_NOT_A_DATE})"
)
_OCCASION_DATE = re.compile(
    rf"(?<![\d.]){_MONTH_DAY}(?=\s?(?:当天|当日|期间|大促|活动|零点|开始|截止))"
)
# A month and day before 号, the day's spoken suffix ("12.6号"): 十二月六号, not 十二点六号;
# not a line, a building, a battery or a gate (号线, 号楼…).
_DOTTED_DAY = re.compile(rf"(?<![\d.]){_MONTH_DAY}(?=号(?!线|楼|电池|口))")
# A month and day with a dot after a word that sets a deadline or a start ("截止到12.31",
# "有效期至6.30"): the date, not a decimal.
_DOTTED_DATE = re.compile(
    r"((?:截止|截至|有效期|至|到|从|于)\s?)(1[0-2]|0?[1-9])\.(0[1-9]|[12]\d|3[01])"
    r"(?![\d.%]|\s?(?:元|块|万|亿|倍|米|公里|斤|克|千克|度|版))"
)
# A date with one-digit months or days ("2024/3/5", "2024.3.5"): misaki's date pattern wants
# two digits, and its fraction reads "2024/3" as 三分之两千零二十四.
_SHORT_YMD = re.compile(
    r"(?<![A-Za-z\d.])((?:19|20)\d{2})([/.-])(1[0-2]|0?[1-9])\2(3[01]|[12]\d|0?[1-9])(?![\d.]|/\d)"
)
# A colon between numbers that cannot be a clock time ("112:108", a basketball score), or any
# before a word of winning or losing: 比. misaki's clock has no edges: it finds the 12:10
# inside 112:108 (一十二点十分八).
_COLON_SCORE = re.compile(
    r"(?<![\d:])(\d+):(\d+)(?![\d:])"
    r"(?=\s?(击败|战胜|获胜|取胜|赢|胜|负|输|落败|告负|的比分))?"
)
# A length of time written as a clock after a word that says so ("通话时长05:32", "倒计时00:30",
# "视频时长1:23:45"): minutes and seconds, or hours first with three parts, not a time of day
# (五点三十二分).
_DURATION = re.compile(
    r"((?:时长|用时|耗时|倒计时|计时|通话时间|播放时间|剩余时间|通話時間|再生時間|録音時間|残り時間)"
    r"(?:为|是|は|：|:|\s)*)(\d{1,2}):([0-5]\d)(?::([0-5]\d))?(?![\d:])"
)
# Midnight at the end of a day ("营业至24:00", "10:00-24:00"), where misaki's clock (hours up to
# 23) finds 4:00: 二十四点, and a span up to it with 到, not a minus.
_MIDNIGHT = re.compile(r"(?:\s?[-~～至到]\s?)?(?<![\d:])24:00(?![\d:])")
# Minutes written with their zero after 点 ("3点05分"): 零五分, as a clock's 3:05 is read.
_ZERO_MINUTE = re.compile(r"(?<=\d点)0(?=\d分)")
# A tilde after an amount with no number after it: from that amount up (¥5,999〜 is 5999円から).
_JA_FROM = re.compile(r"(?<=[\d円%])\s?[~～〜](?!\s?[-¥￥$€£]?\d)")
# Two numbers with a slash and the first not the smaller are no fraction: "24/7", "50/50" are
# said one after the other.
_SLASHED = re.compile(r"(?<![\d/.])(\d+)/(\d+)(?![\d/]|\.\d)")
# A hyphen between two fractions ("1/3-1/2") is a span, which misaki reads as a minus.
_FRACTION_SPAN = re.compile(r"(?<![\d/.])(\d+/\d+)\s?[-\N{EN DASH}]\s?(?=\d+/\d+(?![\d/]))")
# One of a count, not a fraction: "第2/5页" is 第二页，共五页 (not 第五分之二页), "步骤1/3"
# 步骤一，共三步.
_OF_TOTAL = re.compile(r"(第|步骤|问题|题目)(\d{1,3})/(\d{1,3})([页步题章节集部张]?)(?![\d/])")
# A decimal over a number ("评分4.5/5"): the fraction misaki reads only for whole numbers.
_DECIMAL_FRACTION = re.compile(r"(?<![\d/.])(\d+\.\d+)/(\d+)(?![\d/]|\.\d)")


def _dotted_dates(match: re.Match[str]) -> str:
    said = f"{match[1]}{int(match[2])}月{int(match[3])}日"
    return said + (f"到{int(match[4])}月{int(match[5])}日" if match[4] else "")


def _pair(match: re.Match[str], said: Callable[[str, str], str]) -> str:
    top, bottom = match.group(1), match.group(2)
    return match.group(0) if int(top) < int(bottom) else said(top, bottom)


# Two of something is 两, not 二: "2个人" is 两个人, "2小时" 两小时, "2点" (two o'clock) 两点. Only
# before a measure word that counts: 2月 (February), 2号, 2楼 and 2年级 keep 二.
_COUNTED = (
    "个|位|次|天|本|件|张|只|条|台|辆|家|份|瓶|杯|碗|块|种|双|对|部|把|间|小时|分钟|周|星期|岁|"
    "斤|公斤|公里|升|毫升|米|厘米|克|元|点|倍|名|人|万|千|亿|晚|夜|套|盒|袋|箱|包|支|颗|粒|场|趟|遍|顿|桌|节|秒|年(?!级|代)|个月|"
    "成|步|片|口|声|句|室|厅|卫|站|GB|TB|MB|笔|项|封|门|道|页|毛|角|分钱|单(?!元|位|号|价)|"
    "美元|欧元|英镑|港币|日元|"
    # a size in G, T or M before what it measures (2G内存, 2T硬盘); 2G网络 is a generation: 二G
    "[GTM](?=内存|运存|显存|存储|空间|硬盘|容量|流量)"
)
_TWO_COUNTED = re.compile(rf"(?<![\d./第])2(?=\s?(?:{_COUNTED}))")
# ... and the first of a span of them ("2-3天" is 两到三天).
_TWO_TO = re.compile(rf"(?<![\d./第])2\s?[-~到至]\s?(?=\d+\s?(?:{_COUNTED}))")
# A number that starts with two thousands or more: 两千, 两万, 两亿 (2000 is 两千 as it is said).
_TWO_LEADING = re.compile(r"(?<![零一二三四五六七八九十百千万亿两点第])二(?=[千万亿])")
# A span written with a hyphen or a tilde before a percent or a temperature: the sign (and the
# unit) said on both ends, 百分之十到百分之二十, 二十度到二十五度: misaki's single-number rules
# read the hyphen as the second number's minus (二十零下二十五度).
_SIGNED_SPAN = re.compile(
    r"(?<![\d.:/-])(-?\d+(?:\.\d+)?)\s?[-~到至]\s?(-?\d+(?:\.\d+)?)\s?(%|℃|°C|摄氏度|度)"
)
# A span before a measure word that counts ("1-2小时", "1.5-2小时"): 到, so that its second
# number may be 两.
_COUNTED_SPAN = re.compile(rf"(?<![\d.:/-])(\d+(?:\.\d+)?)\s?[-~]\s?(?=\d+\s?(?:{_COUNTED}))")
# A ratio that a mixing word follows or leverage precedes ("1:10稀释", "以1:30的比例兑水",
# "杠杆1:10"): 一比十, not the time 一点十分.
_MIX_RATIO = re.compile(
    r"(?<![\d:])(\d+):(\d+)(?![\d:])(?=\s?(?:稀释|兑|的比例|比例|混合|调配|配比))"
    r"|(?<=杠杆)(\d+):(\d+)(?![\d:])"
)
# A discount is said digit by digit: 9.5折 is 九五折, 8.8折 八八折.
_DISCOUNT = re.compile(r"(?<![\d.])(\d)\.(\d)(?=\s?折)")
# A generation is named by its two digits: 80后 is 八零后, 00后 零零后 (born in the 1980s, 2000s).
_GENERATION = re.compile(r"(?<![\d.:/点时分号第-])([05-9][05]|10)(?=后)")
# Names said digit by digit: a year's quarter (2024Q1 二零二四), Women's Day (38节 三八节), a
# disinfectant (84消毒液 八四), an HTTP status (404错误 四零四).
_NAMED_DIGITS = re.compile(
    r"(?<![\d.])(?:(?:19|20)\d\d(?=\s?Q[1-4])|38(?=节)|84(?=消毒)|[1-5]\d\d(?=\s?(?:错误|报错)))"
)
# A time with AM or PM ("3PM", "3:00 p.m."): 下午3点, 上午9点; after 下午 and the like only the
# letters go.
_MERIDIEM = re.compile(
    r"(上午|下午|早上|晚上|中午|凌晨)?\s?(?<![0-9:])(\d{1,2})(:[0-5]\d)?\s?([AaPp])\.?[Mm]\.?(?![A-Za-z])"
)
# AM or PM written before a clock time ("AM9:00", "PM 6:30"), moved after it for the rules that
# read it (9:00AM); with its minutes only: PM2.5 and PM10 are what the air holds. A hyphen
# between two such times is a span: 到.
_MERIDIEM_FIRST = re.compile(r"(?<![A-Za-z])([AaPp])\.?([Mm])\.?\s?(\d{1,2}:[0-5]\d)(?![\d:])")
_MERIDIEM_SPAN = re.compile(r"(?<=[\d点])\s?[-\N{EN DASH}]\s?(?=(?:上午|下午|凌晨|中午)\d)")
# "Ver.2.0" is 版本二点零; a period after another Latin word is no decimal point (vol.3).
_VERSION = re.compile(r"(?i)(?:版本\s?)?(?<![A-Za-z])ver\.\s?(?=\d)")
_LATIN_PERIOD = re.compile(r"(?<=[A-Za-z])(?<!No)(?<!NO)\.(?=\d)")
# A degree sign alone after a number (90°, 北纬30°) is 度; the G2P drops it. ‰ is 千分之.
_DEGREE_SIGN = re.compile(r"(?<=\d)\s?°(?![CF])")
# Fahrenheit ("72°F", "-4℉"): 华氏七十二度, 華氏72度 (the G2Ps read the F as a letter, or drop it).
_FAHRENHEIT = re.compile(r"(-?\d+(?:\.\d+)?)\s?(?:°F|℉)")
_PER_MILLE = re.compile(r"(\d+(?:\.\d+)?)‰")
# A fraction in one character (½, ¾), after a whole number or alone: 2½ is 2又二分之一.
_VULGAR = re.compile(r"(\d*)([\u00bc-\u00be\u2150-\u215e])")
# A floor: 3F is 3楼 (3階 in Japanese, where OpenJTalk leaves the F out), B1F the first
# basement, 负1楼 (地下1階).
_FLOOR = re.compile(r"(?<![0-9A-Za-z])(?<![A-Za-z] )(B?)(\d{1,3})F(?![A-Za-z])")
# ... but a seat on a train or a plane (8车12F座, 座位是12F) is a row and a letter (_floor).
# A product's model year or a school's class (2023款, 2024版, 2023届) is read digit by digit,
# as years are; a screen's resolution with 乘 (一千九百二十乘一千零八十), its lines digit by digit
# (一零八零P); a model after a hyphen (i7-13700K) is a code, not a span.
_MODEL_YEAR = re.compile(r"(?<![\d.])((?:19|20)\d\d)(?=款|版|届|级(?!别))")
_RESOLUTION = re.compile(r"(?<![\d.])(\d{3,4})\s?[xX×*]\s?(\d{3,4})(?![\d.])")
_VIDEO_LINES = re.compile(r"(?<![\d.])(\d{3,4})(?=[Pp](?![A-Za-z]))")
_MODEL_HYPHEN = re.compile(r"(?<=[A-Za-z]\d)-(\d{3,})(?![\d.])")
# A product's number after its name, digit by digit as said (Office 365 三六五, Office 2019,
# 波音737, 骁龙888; in Japanese サンロクゴー, ボーイング ナナサンナナ, where a year stays a number);
# a multiple of 50 is a count (Top 100, S&P 500, Top 250), and so is one before a measure word
# (Apple 999元).
_NAMED_MODEL = re.compile(
    rf"(?:(?<=[a-z] )|(?<=波音)|(?<=骁龙))(\d{{3,4}})(?![\d.%]|\s?(?:{COM_QUANTIFIERS}|元|万|亿))"
)
# An HTTP status before エラー (404エラー): ヨンゼロヨン, as said, not ヨンヒャクヨン.
_JA_STATUS = re.compile(r"(?<![\d.])[1-5]\d\d(?=\s?エラー)")
_JA_NAMED_MODEL = re.compile(
    r"(?:(?<=[a-z] )|(?<=ボーイング))(\d{3,4})(?![\d.%]|\s?[円人個件回位年万億])"
)
# A codec or a standard, a capital, a dot and its number (H.265, V.90): 点 and the digits.
_DOTTED_CODE = re.compile(r"(?<![A-Za-z])([A-Z])\.(\d{2,3})(?![\d.])")
# The next day's time after a span's hyphen (23:00-次日02:00): 到.
_NEXT_DAY = re.compile(r"(?<=\d)\s?[-~]\s?(?=(?:次日|翌日|第二天|隔天)\s?\d)")
# A span of years is read as years are, digit by digit (2024-2025赛季).
_YEARS = re.compile(
    r"(?<!\d)((?:19|20)\d\d)\s?[-~～至到]\s?((?:19|20)\d\d)(?=\s?(?:年|赛季|学年|财年|季))"
)
# A unit right after a number; on its own a letter is a Latin word, not a unit.
_UNITS = {
    "km": "公里", "kg": "公斤", "cm": "厘米", "mm": "毫米", "ml": "毫升", "mg": "毫克",
    "GB": "GB", "MB": "MB", "TB": "TB", "m": "米", "g": "克", "s": "秒", "h": "小时",
    "ms": "毫秒", "min": "分钟", "Hz": "赫兹", "kHz": "千赫", "MHz": "兆赫", "GHz": "G赫兹",
    "mAh": "毫安时", "kW": "千瓦", "kWh": "千瓦时", "mmHg": "毫米汞柱", "mmol/L": "毫摩尔每升",
    "mL": "毫升", "L": "升", "W": "瓦", "V": "伏", "kV": "千伏", "mV": "毫伏", "mA": "毫安",
    "kJ": "千焦", "kcal": "千卡", "μg": "微克", "ug": "微克", "mmol": "毫摩尔",
    "nm": "纳米", "dB": "分贝", "Pa": "帕", "kPa": "千帕", "hPa": "百帕", "MPa": "兆帕",
    "bar": "巴", "ft": "英尺", "lb": "磅", "lbs": "磅", "oz": "盎司", "mph": "英里每小时",
    "rpm": "转每分钟",
}  # fmt: skip
# Not before "+": "10W+" is internet writing for 十万多.
_UNIT = re.compile(
    r"(\d)\s?(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")(?![A-Za-z+])"
)

_ZH_CURRENCY = {
    "¥": "元", "￥": "元", "$": "美元", "€": "欧元", "£": "英镑", "₹": "卢比", "US$": "美元",
    "HK$": "港币", "USD": "美元", "RMB": "元", "CNY": "元", "EUR": "欧元", "GBP": "英镑",
    "JPY": "日元", "HKD": "港币", "INR": "卢比",
}  # fmt: skip
_JA_CURRENCY = {
    "¥": "円", "￥": "円", "$": "ドル", "€": "ユーロ", "£": "ポンド", "₹": "ルピー",
    "US$": "米ドル", "HK$": "香港ドル", "USD": "米ドル", "RMB": "人民元", "CNY": "人民元",
    "EUR": "ユーロ", "GBP": "ポンド", "JPY": "円", "HKD": "香港ドル", "INR": "ルピー",
}  # fmt: skip


def half_width(text: str) -> str:
    """Full-width ASCII letters, digits and signs as ASCII (CJK punctuation is kept)."""
    return text.translate(_HALF_WIDTH)


def _no_thousands(text: str) -> str:
    return _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)


def _ascii(text: str) -> str:
    """`half_width`, a full-width colon between digits as ":" (as in a time or a score), and no
    thousands separators."""
    return _no_thousands(_DIGIT_COLON.sub(":", half_width(text)))


def _yuan(integer: str, decimals: str) -> str:
    """Integer and decimal digits ("25", "50") as a price is read: 二十五元五角."""
    decimals = (decimals + "00")[:2]
    # Under one yuan the 角 and 分 are said alone: 0.5元 is 五角, not 零元五角.
    words = "" if int(integer or 0) == 0 and decimals != "00" else f"{_counted(integer)}元"
    if decimals[0] != "0":
        words += f"{_counted(decimals[0])}角"
    if decimals[1] != "0":
        words += ("零" if decimals[0] == "0" and words else "") + f"{num2str(decimals[1])}分"
    return words


def _counted(number: str) -> str:
    """A number of something: two of it is 两 (两元, 两角, 两美元), as _TWO_COUNTED says."""
    return "两" if re.fullmatch(r"2(?:\.0*)?", number) else num2str(number)


def _duration(match: re.Match[str], hours: str) -> str:
    """ "05:32" as 5分32秒, "1:23:45" as 1{hours}23分45秒; a zero part left out."""
    parts = [int(p) for p in match.groups()[1:] if p is not None]
    units = [hours, "分", "秒"][-len(parts) :]
    said = "".join(f"{n}{unit}" for n, unit in zip(parts, units, strict=True) if n)
    if hours == "小时" and said.endswith("分"):
        said += "钟"  # 五分钟: 五分 alone may be five points or five fen
    return match.group(1) + (said or "0秒")


def _colon_score(match: re.Match[str]) -> str:
    before, after = match.group(1), match.group(2)
    clock = len(before) <= 2 and len(after) == 2 and int(before) <= 24 and int(after) < 60
    return f"{before}比{after}" if match.group(3) or not clock else match.group(0)


def _paid(match: re.Match[str]) -> bool:
    """A number with k is money where a word for pay comes just before it, or in a span."""
    text, start = match.string, match.start()
    if _PAY.search(text, max(0, start - 4), start):
        return True
    return any(
        span.start() <= start < span.end()
        for span in _K_SPAN.finditer(text, max(0, start - 12), match.end() + 12)
    )


def _thousands(match: re.Match[str]) -> str:
    value = round(float(match.group(1)) * 1000, 3)
    return str(int(value)) if value == int(value) else str(value)


def _zh_money(match: re.Match[str]) -> str:
    return _zh_amount(match.group(1), match.group(2))


def _zh_amount(sign: str, amount: str) -> str:
    unit = _ZH_CURRENCY[sign]
    if unit == "元":
        integer, _, decimals = amount.partition(".")
        return _yuan(integer, decimals) if len(decimals) <= 2 else f"{num2str(amount)}元"
    return f"{_counted(amount)}{unit}"


def _vulgar(match: re.Match[str], joined: str, said: Callable[[str, str], str]) -> str:
    """A fraction character (`match` of _VULGAR) as `said(top, bottom)`, after its whole
    number and `joined` ("又", "と")."""
    top, _, bottom = unicodedata.normalize("NFKC", match.group(2)).partition("\u2044")
    whole = match.group(1)
    return (whole + joined if whole else "") + said(top, bottom)


def _number(match: re.Match[str]) -> str:
    """misaki's reading of a number, keeping the zeros that end its decimals as they are written
    (版本2.0 is 二点零, 1.50米 一点五零米: misaki drops them)."""
    said: str = replace_number(match)
    decimals = (match.group(4) or match.group(5) or "")[1:]
    zeros = len(decimals) - len(decimals.rstrip("0"))
    if zeros:
        said += ("" if decimals.rstrip("0") else "点") + "零" * zeros
    return said


def _meridiem(match: re.Match[str]) -> str:
    before, hour, minutes, letter = match.groups()
    if not before:
        before = ("凌晨" if letter in "Aa" else "中午") if hour == "12" else ""
        before = before or ("上午" if letter in "Aa" else "下午")
    return f"{before}{hour}{minutes or '点'}"


def _time(match: re.Match[str]) -> str:
    """misaki's reading of a time, with two o'clock as 两点 (2:30 is 两点半)."""
    said: str = replace_time(match)
    if "秒" in said:  # 12:30:45 is 十二点三十分四十五秒; 半 only without seconds
        said = said.replace("点半", "点三十分")
    return re.sub(r"(^|至)二点", r"\1两点", said)


def _floor(match: re.Match[str], floor: str) -> str:
    """`floor` for a floor written 3F, unless a seat is meant (座 just before or after it)."""
    near = match.string[max(0, match.start() - 4) : match.end() + 1]
    return match.group(0) if "座" in near else floor


def _models(text: str) -> str:
    """Model years, screen resolutions and model numbers in Chinese text (_MODEL_YEAR,
    _NAMED_MODEL)."""
    text = _MODEL_YEAR.sub(lambda m: verbalize_digit(m[1]), text)
    text = _RESOLUTION.sub(r"\1乘\2", text)
    text = _VIDEO_LINES.sub(lambda m: verbalize_digit(m[1]), text)
    text = _MODEL_HYPHEN.sub(lambda m: " " + verbalize_digit(m[1]), text)
    return _NAMED_MODEL.sub(lambda m: m[1] if _a_count(m[1]) else verbalize_digit(m[1]), text)


def _a_count(number: str) -> bool:
    """Whether a number after a name is a count, not the product's (Top 100, S&P 500)."""
    return int(number) % 50 == 0


def _codecs_and_next_days(text: str) -> str:
    """H.265 as H点二六五, and 23:00-次日02:00 with 到, before the rules for times and dots."""
    text = _DOTTED_CODE.sub(lambda m: f"{m[1]}点{verbalize_digit(m[2])}", text)
    return _NEXT_DAY.sub("到", text)


def _digits(text: str) -> str:
    """Each digit as its word, 1 as 幺 (as a phone number is read); anything else kept."""
    return re.sub(r"\d+", lambda m: verbalize_digit(m.group(0), alt_one=True), text)


def _code(match: re.Match[str]) -> str:
    code = match.group(3)
    if not re.search(r"\d", code):
        return match.group(0)
    spoken = "，".join(_digits(group) for group in re.split(r"[- ]", code.lstrip("+")))
    return match.group(1) + match.group(2) + ("加" if code.startswith("+") else "") + spoken


def _phone(match: re.Match[str]) -> str:
    """A phone number's groups digit by digit, a pause between them; a span as it is."""
    groups = phone_groups(match)
    if groups is None:
        return match.group(0)
    return ("加" if match.group(0).startswith("+") else "") + "，".join(map(_digits, groups))


def _dotted(match: re.Match[str]) -> str:
    """A version's or an address's parts: one or two digits as a number, more one by one."""
    parts = match.group(0).split(".")
    return "点".join(
        num2str(p) if len(p) <= 2 and not (len(p) > 1 and p[0] == "0") else _digits(p)
        for p in parts
    )


def _international_groups(text: str, language: int = 0) -> str:
    """+44 7911 123456 in Mandarin (`language` 0: 加四四 and a pause between groups) or
    Japanese (1: プラスヨンヨンの…)."""
    plus, pause, digits = (("加", "，", _digits), ("プラス", "の", _ja_digits))[language]
    return INTERNATIONAL_GROUPS.sub(
        lambda m: plus + pause.join(map(digits, international_groups(m))), text
    )


def _slashes_and_fractions(text: str) -> str:
    """A fraction in one character (2½), one of a count (第2/5页), a month and a day with a
    slash, and a span of fractions (1/3-1/2), before the other rules read the slashes."""
    if any("\u00bc" <= c <= "\u00be" or "\u2150" <= c <= "\u215e" for c in text):
        text = _VULGAR.sub(lambda m: _vulgar(m, "又", lambda a, b: f"{b}分之{a}"), text)
    if "/" in text:
        text = _OF_TOTAL.sub(_of_total, text)
    return _FRACTION_SPAN.sub(r"\1到", month_days(text, "zh"))


def chinese(text: str) -> str:
    """Arabic numerals and their signs in Chinese text as Chinese words: dates, times, money,
    phone numbers, percentages, fractions, units and plain numbers."""
    text = _codecs_and_next_days(_ascii(text))
    text = _ZH_WEEKDAYS.sub(r"\1到", _SIGN_SPAN.sub(r"\1\2\1", text))
    text = _TILDE.sub("到", _UNIT_SPAN.sub("到", text))
    if "w" in text or "W" in text:
        text = _WAN.sub("万", text)
    text = _ZERO_MINUTE.sub("零", _OFFER.sub(r"\1减", text))
    text = _FESTIVAL.sub(lambda m: verbalize_digit(m[1]), text)
    if "." in text:
        text = _DOTTED_DATES.sub(_dotted_dates, text)
        text = _OCCASION_DATE.sub(lambda m: f"{int(m[1])}月{int(m[2])}日", text)
        text = _DOTTED_DAY.sub(lambda m: f"{int(m[1])}月{int(m[2])}", text)
    text = _DOTTED_DATE.sub(lambda m: f"{m[1]}{int(m[2])}月{int(m[3])}日", text)
    text = _SHORT_YMD.sub(lambda m: f"{m[1]}年{int(m[3])}月{int(m[4])}日", text)
    text = _slashes_and_fractions(text)
    if "M" in text or "m" in text:
        text = _MERIDIEM_FIRST.sub(r"\3\1\2", text)
    text = _MERIDIEM_SPAN.sub("到", _MERIDIEM.sub(_meridiem, text))
    text = _LATIN_PERIOD.sub(" ", _VERSION.sub("版本", text))
    if "k" in text or "K" in text:
        text = _K.sub(lambda m: _thousands(m) if _paid(m) else m.group(0), text)
    text = _SCALED_MONEY.sub(lambda m: m[2] + m[3] + _ZH_CURRENCY[m[1]], text)
    text = _MONEY_BEFORE.sub(_zh_money, text)
    text = _MONEY_AFTER.sub(lambda m: _zh_amount(m.group(2), m.group(1)), text)
    text = _YUAN_SPAN.sub("到", text)
    text = _YUAN_AFTER.sub(lambda m: ("负" if m[1] else "") + _yuan(m[2], m[3]), text)
    # A span of years before misaki's dates, which read the second year alone (2024年).
    text = _YEARS.sub(lambda m: f"{_digits(m.group(1))}到{_digits(m.group(2))}", text)
    text = RE_DATE.sub(replace_date, text)
    text = RE_DATE2.sub(replace_date2, text)
    text = _DURATION.sub(lambda m: _duration(m, "小时"), text)
    text = _COLON_SCORE.sub(_colon_score, text)
    if "24:00" in text:
        text = _MIDNIGHT.sub(lambda m: ("到" if m.group(0)[0] != "2" else "") + "24点", text)
    if ":" in text:
        text = _MIX_RATIO.sub(lambda m: f"{num2str(m[1] or m[3])}比{num2str(m[2] or m[4])}", text)
    text = RE_TIME_RANGE.sub(_time, text)
    text = RE_TIME.sub(_time, text)
    text = _SIGNED_SPAN.sub(lambda m: f"{m[1]}{m[3]}到{m[2]}{m[3]}", text)
    text = RE_TEMPERATURE.sub(replace_temperature, text)
    text = _FAHRENHEIT.sub(lambda m: f"华氏{'零下' + m[1][1:] if m[1][0] == '-' else m[1]}度", text)
    text = _DEGREE_SIGN.sub("度", _PER_MILLE.sub(r"千分之\1", text))
    if "+" in text or "加" in text:
        text = _COUNTRY_CODE.sub(lambda m: "加" + _digits(m[1]), _international_groups(text))
    text = _BRACKETED_AREA.sub(lambda m: f"{_digits(m[1])}，{_digits(m[2].replace(' ', ''))}", text)
    text = _AFTER_CODE_WORD.sub(_code, text)
    text = _LISTED_CODE.sub(lambda m: m[1] + _digits(m[2]), text)
    if "-" in text:
        text = _BUILDING_ROOM.sub(_building_room, text)
    text = _SERVICE_NUMBER.sub(lambda m: _digits(m.group(0)), text)
    text = _EXTENSION.sub(lambda m: m[1] + _digits(m[2]), text)
    text = PHONE.sub(_phone, text)
    text = RE_MOBILE_PHONE.sub(replace_mobile, text)
    text = _LANDLINE.sub(lambda m: phone2str(m.group(0), mobile=False), text)
    text = _DOTTED.sub(_dotted, text)
    text = _AFTER_LETTERS.sub(lambda m: _digits(m.group(0)), _LETTER_HYPHEN.sub("", _models(text)))
    text = _ROOM.sub(lambda m: _digits(m.group(0)), text)
    text = _AND_MORE.sub("多", text)
    text = _NOT_COUNTED.sub(lambda m: _digits(m.group(0)), text)
    text = _NO.sub(lambda m: num2str(m.group(1)) + "号", text)
    text = _UNIT.sub(lambda m: m.group(1) + _UNITS[m.group(2)], text)
    text = _FLOOR.sub(lambda m: _floor(m, ("负" if m[1] else "") + m[2] + "楼"), text)
    text = _GENERATION.sub(lambda m: verbalize_digit(m[1]), text)
    text = _NAMED_DIGITS.sub(lambda m: verbalize_digit(m[0]), text)
    text = _DISCOUNT.sub(lambda m: verbalize_digit(m[1] + m[2]), text)
    text = _COUNTED_SPAN.sub(r"\1到", text)
    text = _TWO_COUNTED.sub("两", _TWO_TO.sub("两到", text))
    text = _PRESSURE.sub(r"\1\2，\3", text)
    text = _SLASHED.sub(lambda m: _pair(m, lambda a, b: num2str(a) + num2str(b)), text)
    text = _DECIMAL_FRACTION.sub(lambda m: f"{num2str(m[2])}分之{num2str(m[1])}", text)
    text = RE_FRAC.sub(replace_frac, text)
    text = RE_PERCENTAGE.sub(replace_percentage, text)
    text = RATIO.sub(lambda m: f"{num2str(m.group(1))}比{num2str(m.group(2))}", text)
    text = _ZH_SCORE.sub(lambda m: "比".join(num2str(g) for g in m.groups() if g), text)
    text = RE_RANGE.sub(replace_range, text)
    spoken: str = RE_NUMBER.sub(_number, text)
    return _TWO_LEADING.sub("两", spoken)


# Digits one by one as OpenJTalk itself reads a phone number (ゼロサン、イチニーサンヨン).
_JA_DIGITS = dict(
    zip(
        "0123456789",
        ("ゼロ", "イチ", "ニー", "サン", "ヨン", "ゴー", "ロク", "ナナ", "ハチ", "キュー"),
        strict=True,
    )
)
_JA_DATE = re.compile(r"(?<![0-9])(\d{4})([/.-])(\d{1,2})\2(\d{1,2})(?![0-9])")
# Up to 24:59: a shop open till 24:00 closes at 24時, not at a score (24対00).
_JA_TIME = r"(?:[01]?\d|2[0-4]):[0-5]\d(?::[0-5]\d)?"
_JA_TIMES = re.compile(rf"(?<![0-9:])({_JA_TIME})(?:\s?[-~〜～]\s?({_JA_TIME}))?(?![0-9:])")
# A time with AM or PM ("3:00PM", "9am"): 午後3時, 午前9時 (OpenJTalk spells the letters).
_JA_MERIDIEM = re.compile(rf"(?<![0-9:])({_JA_TIME}|1[0-2]|0?\d)\s?([AaPp])\.?[Mm]\.?(?![A-Za-z])")
# Short forms before a number that OpenJTalk reads as words cut at the period (Ver. バー、).
_JA_SHORT = {"ver": "バージョン", "vol": "ボリューム", "#": "ナンバー"}
_JA_SHORT_FORM = re.compile(
    r"(?i)(?<![A-Za-z])(ver|vol)\.\s?(?=\d)|(?<![0-9A-Za-z&])(#)(?=[A-Za-z]?\d)"
)
# A number sign after 番号 and its particle says what 番号 says ("注文番号は#12345"): dropped,
# so that the code after it is read digit by digit (_JA_CODE), not as an amount.
_JA_CODE_SIGN = re.compile(r"(?<=番号)((?:は|：|:)?\s?)#(?=[A-Za-z]?\d)")
# A span of numbers ("3-5日", "10～20人"), only before a counter: "3-5" alone may be an address.
_JA_SPAN = re.compile(
    r"(?<![0-9.-])([1-9]\d*(?:\.\d+)?)\s?[-~〜～]\s?(\d+(?:\.\d+)?)"
    r"(?=[日時分秒年月個人回件枚本円%歳週倍度点位名台冊杯錠滴包粒泊階代軒社品箱袋章節話巻問行頁]|か月"
    r"|ヶ月|カ月|ページ|営業日|週間|時間|分間|(?:mg|mL|ml|kg|km|cm|mm|g|m|L|GB|MB)(?![A-Za-z]))"
)
# A street address's block, lot and number ("六本木6-10-1"): の between them, as it is said;
# OpenJTalk drops the hyphens and runs them into one number.
_JA_ADDRESS = re.compile(r"(?<![\d.-])(\d{1,2})-(\d{1,3})-(\d{1,4})(?![\d-])")
# Two numbers joined by a hyphen right after a place's name ("千代田1-1", "1丁目2-3") are its
# block and lot, said with の like three (_JA_ADDRESS); OpenJTalk ran them together. Taken after
# the spans, so that what is left is no span ("第1-3章" is one).
_JA_BLOCK = re.compile(r"(?<=[\u4e00-\u9fff々ヶ])(?<!第)(\d{1,2})-(\d{1,4})(?![\d.-])")
# A seat's letter after its row ("23A席", "座席は23A") and a size's ("2Lサイズ"): the letter
# by its name, not a unit (アンペア, リットル), and a seat's F not a floor.
_JA_SEAT = re.compile(
    r"(?<=\d)([A-Z])(?=\s?(?:席|サイズ))|((?:座席|お席|席)(?:番号)?(?:は|：|:)?\s?\d{1,2})([A-K])(?![A-Za-z])"
)
# The units OpenJTalk does not read after a number, in katakana: it leaves out "L" and the "h"
# of "mAh", spells "kB" and "pt" (points), and reads 2GB to 6GB as the network 5G and a B
# (ファイブジービー). (It reads km, kg, MB, Hz and the rest itself.)
_JA_UNITS = {
    "L": "リットル", "kB": "キロバイト", "mAh": "ミリアンペアアワー", "pt": "ポイント",
    "mmHg": "ミリエイチジー", "mcg": "マイクログラム", "GB": "ギガバイト", "mmol": "ミリモル",
    "MPa": "メガパスカル", "ms": "ミリ秒", "ft": "フィート", "lbs": "ポンド", "gal": "ガロン",
}  # fmt: skip
_JA_UNIT = re.compile(
    r"(?<=\d)\s?(" + "|".join(sorted(_JA_UNITS, key=len, reverse=True)) + r")(?![A-Za-z])"
    # seconds before Japanese words ("30s待って": OpenJTalk said セカンド), not a model (5s)
    r"|(?<![A-Za-z] \d)(?<![A-Za-z] \d\d)(?<=\d)(s)(?=[\u3040-\u30ff\u4e00-\u9fff])"
)
# Degrees after a number: NFKC makes ℃ "°C", of which OpenJTalk reads the C alone.
_JA_DEGREES = re.compile(r"(?<=\d)\s?(?:℃|°C|°)")
# A minus before a number, which OpenJTalk reads as a pause (-5度 as 5度), and the triangle
# accounts write for one (▲500円); not a hyphen after a digit or a letter (3-5日, 03-1234).
_JA_MINUS = re.compile(
    r"(?<![0-9A-Za-z)])[-\u2212\N{BLACK UP-POINTING TRIANGLE}\N{WHITE UP-POINTING TRIANGLE}](?=\d)"
)
# ... and a plus before an amount or a score (＋500円, +3点), which OpenJTalk reads タス.
_JA_PLUS = re.compile(r"(?<![0-9A-Za-z)])\+(?=\d[\d,.]*\s?(?:円|%|点|度|ポイント|pt|倍))")
# The postal mark after its own name ("郵便番号は〒150-0001"), which OpenJTalk reads as the name
# again.
_POSTAL_MARK = re.compile(r"(?<=郵便番号)([はがの:：\s]*)〒")
# A postal code, digit by digit with の: OpenJTalk read 100 after 〒 as イチマルマル and 0001 as
# ゼロゼロゼロイチ, two ways in one code.
_POSTAL_CODE = re.compile(r"(〒\s?|郵便番号[はがの:：\s]*)(\d{3})-(\d{4})(?!\d)")
# A fraction (after dates, which have slashes too): 1/3 is 3分の1.
_JA_FRACTION = re.compile(r"(?<![\d/])(\d+)/(\d+)(?![\d/])")
# A code after its name: OpenJTalk reads digits one by one right after 番号, but not after the
# others, nor after "番号は、" or "下4桁は". Its letters are spelled and its hyphens said (ABC-1:
# エービーシーハイフンイチ), as a code is read back to the one who must type it.
_JA_CODE = re.compile(
    r"(コード|パスワード|(?<!郵便)番号|PIN|ID|内線|ポート|下[\d一二三四五六]桁)((?:は|、|，|：|:|\s)*)"
    r"([A-Za-z0-9-]*\d[A-Za-z0-9-]*)(?![A-Za-z0-9])"
)


def _of_total(match: re.Match[str]) -> str:
    before, number, total, counted = match.groups()
    counted = counted or {"步骤": "步", "问题": "题", "题目": "题"}.get(before, "")
    return f"{before}{number}{counted if before == '第' else ''}，共{total}{counted}"


def _building_room(match: re.Match[str]) -> str:
    parts = [p for p in match.groups() if p]
    return "杠".join([*map(num2str, parts[:-1]), _digits(parts[-1])])


def _ja_digits(digits: str) -> str:
    return "".join(_JA_DIGITS[d] for d in digits)


def _ja_named_model(match: re.Match[str]) -> str:
    """Office 365 サンロクゴー; a count (Top 100) and a year (Office 2019) stay numbers."""
    number = match.group(1)
    if _a_count(number) or re.fullmatch(r"(?:19|20)\d\d", number):
        return number
    return _ja_digits(number)


def digits_one_by_one(text: str, language: int) -> str:
    """Each run of digits in `text` said digit by digit, as a phone number is: in Mandarin
    (`language` 0, 1 as 幺) or Japanese (1)."""
    if language == 0:
        return _digits(text)
    return re.sub(r"\d+", lambda m: _ja_digits(m.group(0)), text)


def _ja_phone(match: re.Match[str]) -> str:
    """A phone number's groups digit by digit with の between them, as it is said aloud
    (ゼロキューゼロのイチニーサンヨン…): OpenJTalk reads the digits but drops the hyphens, which
    runs the groups together; a span stays."""
    groups = phone_groups(match)
    if groups is None:
        return match.group(0)
    plus = "プラス" if match.group(0).startswith("+") else ""
    return plus + "の".join(map(_ja_digits, groups))


def _ja_code(match: re.Match[str]) -> str:
    code = match.group(3)
    if sum(c.isalnum() for c in code) < 3:
        return match.group(0)
    said = "".join(
        _ja_digits(c) if c.isdigit() else "ハイフン" if c == "-" else letter_names(c) for c in code
    )
    return match.group(1) + match.group(2) + said


def _ja_time(time: str) -> str:
    hours, minutes, *seconds = (int(part) for part in time.split(":"))
    said = f"{hours}時" + (f"{minutes}分" if minutes else "")
    return said + (f"{seconds[0]}秒" if seconds and seconds[0] else "")


def _ja_meridiem(match: re.Match[str]) -> str:
    time = match.group(1)
    said = _ja_time(time) if ":" in time else f"{int(time)}時"
    return ("午前" if match.group(2) in "Aa" else "午後") + said


def _ja_times(match: re.Match[str]) -> str:
    first, last = match.group(1), match.group(2)
    return _ja_time(first) + (f"から{_ja_time(last)}" if last else "")


def _ja_dotted(match: re.Match[str]) -> str:
    """As `_dotted`; a short part in kanji numerals, as OpenJTalk reads digits after 点 one by
    one (10.15 is ジュッテンイチゴー), and a zero as ゼロ (OpenJTalk says 零 as レー)."""
    return "点".join(
        "ゼロ"
        if p == "0"
        else num2str(p)
        if len(p) <= 2 and not (len(p) > 1 and p[0] == "0")
        else _ja_digits(p)
        for p in match.group(0).split(".")
    )


def _ja_weekday_list(match: re.Match[str]) -> str:
    days, day = match.group(1)[::2], match.group(2) or "曜"
    return "、".join(d + day for d in days)


def _ja_weekdays(match: re.Match[str]) -> str:
    first, first_day, last, last_day = match.groups()
    return f"{first}{first_day or '曜'}から{last}{last_day or '曜'}"


def japanese(text: str) -> str:
    """What pyopenjtalk would misread in Japanese text: thousands separators (it reads "2,500"
    as two numbers), currency signs before the amount (it drops "¥"), dates with slashes or
    hyphens and a month and day with a slash where they are dates (dates.py), phone numbers (it
    runs their groups together), times with a colon (it says "9:30" as 9 and 30), spans before a
    counter ("3-5日"), scores (3:2 → 3対2), versions and addresses with dots, codes after
    コード, パスワード, ID and the like (read one digit at a time, as after 番号), the few units
    it does not read (3L), degree signs, and a minus."""
    text = _JA_WEEKDAY_LIST.sub(_ja_weekday_list, _ascii(text))
    if "〒" in text:
        text = _POSTAL_MARK.sub(r"\1", text)
    if "〒" in text or "郵便番号" in text:
        text = _POSTAL_CODE.sub(lambda m: f"{m[1]}{_ja_digits(m[2])}の{_ja_digits(m[3])}", text)
    text = _SIGN_SPAN.sub(r"\1\2\1", _JA_WEEKDAYS.sub(_ja_weekdays, text))
    text = _UNIT_SPAN.sub("から", text)
    if any("\u00bc" <= c <= "\u00be" or "\u2150" <= c <= "\u215e" for c in text):
        text = _VULGAR.sub(lambda m: _vulgar(m, "と", lambda a, b: f"{b}分の{a}"), text)
    text = _SCALED_MONEY.sub(lambda m: m[2] + m[3] + _JA_CURRENCY[m[1]], text)
    text = _MONEY_BEFORE.sub(lambda m: m.group(2) + _JA_CURRENCY[m.group(1)], text)
    text = _MONEY_AFTER.sub(lambda m: m.group(1) + _JA_CURRENCY[m.group(2)], text)
    text = _JA_DATE.sub(lambda m: f"{m.group(1)}年{int(m.group(3))}月{int(m.group(4))}日", text)
    text = month_days(text, "ja")
    text = _DURATION.sub(lambda m: _duration(m, "時間"), text)
    if "M" in text or "m" in text:
        text = _MERIDIEM_FIRST.sub(r"\3\1\2", text)
    text = _JA_MERIDIEM.sub(_ja_meridiem, text)
    text = _JA_TIMES.sub(_ja_times, text)
    if "#" in text:
        text = _JA_CODE_SIGN.sub(r"\1", text)
    text = _JA_SHORT_FORM.sub(lambda m: _JA_SHORT[(m.group(1) or m.group(2)).lower()], text)
    text = RATIO.sub(lambda m: f"{m.group(1)}対{m.group(2)}", text)
    text = _JA_SCORE.sub(lambda m: "対".join(g for g in m.groups() if g), text)
    if "+" in text or "プラス" in text:
        text = _international_groups(text, 1)
        text = _COUNTRY_CODE.sub(lambda m: "プラス" + _ja_digits(m[1]), text)
    text = _DOTTED.sub(_ja_dotted, PHONE.sub(_ja_phone, text))
    text = _JA_CODE.sub(_ja_code, _JA_ADDRESS.sub(r"\1の\2の\3", text))
    text = _JA_SEAT.sub(lambda m: (m[2] or "") + letter_names(m[1] or m[3]), text)
    # Digits right after a letter one by one too: OpenJTalk says SF1234567890 as one number.
    text = _AFTER_LETTERS.sub(lambda m: _ja_digits(m.group(0)), text)
    text = _JA_STATUS.sub(lambda m: _ja_digits(m[0]), _JA_NAMED_MODEL.sub(_ja_named_model, text))
    text = _JA_UNIT.sub(lambda m: _JA_UNITS[m.group(1)] if m.group(1) else "秒", text)
    text = _FLOOR.sub(lambda m: _floor(m, ("地下" if m[1] else "") + m[2] + "階"), text)
    text = _PRESSURE.sub(r"\1\2の\3", text)
    text = _SLASHED.sub(lambda m: _pair(m, lambda a, b: f"{a} {b}"), text)
    text = _JA_FRACTION.sub(lambda m: f"{m.group(2)}分の{m.group(1)}", text)
    text = _JA_FROM.sub("から", _TILDE.sub("から", _JA_WORD_TILDE.sub("から", text)))
    text = _JA_DEGREES.sub("度", _FAHRENHEIT.sub(r"華氏\1度", text))
    text = _JA_PLUS.sub("プラス", _JA_MINUS.sub("マイナス", text))
    text = _JA_SPAN.sub(lambda m: f"{m.group(1)}から{m.group(2)}", text)
    return _JA_BLOCK.sub(r"\1の\2", text)
