"""Letters, numbers and signs that the Mandarin and Japanese G2Ps leave out unread, written as
words they read: Greek letters by name (β受体, β受容体), units written with them or in one
character (5Ω, 3μm, 5㎏, 20㎡), circled, parenthesized and superscript numbers (①, ⑵, H₂O),
Latin letters with accents (café), arithmetic between numbers (1+1=2, 5÷2), and the @ and dots
of an address (bob@qq.com)."""

from __future__ import annotations

import re
import unicodedata

from ..written import (
    ADDRESS,
    KEY_WORDS,
    PHONE,
    POWER,
    SUPERSCRIPTS,
    UNSAYABLE_FOUR,
    address_of,
    ordinal_suffix,
    phone_groups,
    power_of,
    roman_value,
    spoken_stars,
    spoken_timestamps,
)
from .katakana import letter_names

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
# Brands written in pinyin or their own Latin name, by the name a Chinese or Japanese listener
# knows them by (the English lexicon has no Chinese one and would spell HUAWEI letter by letter;
# e2k makes Xiaomi キシャミ, Toyota トイオタ, Uber ユーバー, and UNIQLO in capitals is spelled);
# "" keeps the Latin word, for the lexicon (Mandarin) or OpenJTalk and e2k (Japanese) to read.
_BRANDS = {
    "huawei": ("华为", "ファーウェイ"), "xiaomi": ("小米", "シャオミ"),
    "taobao": ("淘宝", "タオバオ"), "tmall": ("天猫", ""), "alipay": ("支付宝", ""),
    "wechat": ("微信", ""), "weixin": ("微信", ""), "douyin": ("抖音", ""), "meituan": ("美团", ""),
    "baidu": ("百度", "バイドゥ"), "weibo": ("微博", "ウェイボー"), "zhihu": ("知乎", ""),
    "pinduoduo": ("拼多多", ""), "jingdong": ("京东", ""), "alibaba": ("阿里巴巴", "アリババ"),
    "tencent": ("腾讯", "テンセント"), "haier": ("海尔", "ハイアール"),
    "lenovo": ("联想", "レノボ"), "ctrip": ("携程", ""), "xiaohongshu": ("小红书", ""),
    "bilibili": ("哔哩哔哩", "ビリビリ"), "didi": ("滴滴", ""),
    "toyota": ("丰田", "トヨタ"), "toshiba": ("东芝", "トウシバ"), "hitachi": ("日立", "ヒタチ"),
    "fujitsu": ("", "フジツウ"), "shiseido": ("", "シセイドウ"), "uniqlo": ("", "ユニクロ"),
    "muji": ("无印良品", "ムジ"), "uber": ("优步", "ウーバー"),
    "airbnb": ("爱彼迎", "エアビーアンドビー"), "nvidia": ("英伟达", "エヌビディア"),
    "nike": ("耐克", "ナイキ"), "pokemon": ("宝可梦", "ポケモン"), "pepsi": ("百事", "ペプシ"),
    "python": ("", "パイソン"), "gmail": ("", "ジーメール"),
    "whatsapp": ("", "ワッツアップ"), "siri": ("", "シリ"), "tiktok": ("", "ティックトック"),
    "kubernetes": ("", "クバネティス"), "canva": ("", "キャンバ"),
    "app store": ("", "アップストア"),  # not katakana.py's app アプリ
    # Brands a Chinese listener knows by their Chinese names, which a Mandarin voice reading
    # the English word garbles (its Nike sounds like 拿地, its Tesla like 奠死),
    # and those e2k gets wrong in Japanese (Porsche ポースシュ, Audi オーディ):
    "samsung": ("三星", ""), "sony": ("索尼", ""), "microsoft": ("微软", ""),
    "google": ("谷歌", ""), "amazon": ("亚马逊", ""), "starbucks": ("星巴克", ""),
    "mcdonald's": ("麦当劳", ""), "mcdonalds": ("麦当劳", ""), "tesla": ("特斯拉", ""),
    "ikea": ("宜家", ""), "walmart": ("沃尔玛", ""), "adidas": ("阿迪达斯", ""),
    "coca-cola": ("可口可乐", ""), "disney": ("迪士尼", ""), "honda": ("本田", ""),
    "nissan": ("日产", ""), "canon": ("佳能", ""), "panasonic": ("松下", ""),
    "nintendo": ("任天堂", ""), "intel": ("英特尔", ""), "qualcomm": ("高通", ""),
    "twitter": ("推特", ""), "mercedes-benz": ("奔驰", ""), "mercedes": ("奔驰", ""),
    "audi": ("奥迪", "アウディ"), "volkswagen": ("大众", "フォルクスワーゲン"),
    "porsche": ("保时捷", "ポルシェ"), "ferrari": ("法拉利", "フェラーリ"), "boeing": ("波音", ""),
    "airbus": ("空客", ""),
    "mastercard": ("万事达", ""),
}  # fmt: skip
_BRAND = re.compile(rf"(?<![A-Za-z])(?i:{'|'.join(_BRANDS)})(?![A-Za-z])")
# Units written with a Greek letter, right after a number: 5Ω is five ohms, not five omegas.
_UNITS = {
    "Ω": ("欧姆", "オーム"), "μm": ("微米", "マイクロメートル"), "μs": ("微秒", "マイクロ秒"),
    "μg": ("微克", "マイクログラム"), "μl": ("微升", "マイクロリットル"),
    "μA": ("微安", "マイクロアンペア"), "μF": ("微法", "マイクロファラド"),
}  # fmt: skip
_UNITS |= {
    "km²": ("平方公里", "平方キロメートル"), "cm²": ("平方厘米", "平方センチメートル"),
    "mm²": ("平方毫米", "平方ミリメートル"), "cm³": ("立方厘米", "立方センチメートル"),
    "m²": ("平方米", "平方メートル"),
    "㎡": ("平方米", "平方メートル"), "m³": ("立方米", "立方メートル"),
    "㎥": ("立方米", "立方メートル"), "/h": ("每小时", "毎時"), "/s": ("每秒", "毎秒"),
}  # fmt: skip
_UNIT = re.compile(r"(?<=[\dA-Za-z])\s?(" + "|".join(_UNITS) + r")(?![A-Za-z])")
# Arithmetic between two numbers or letters (3×4=12, x > 3): the G2Ps drop the signs.
_OPERATORS = {
    "×": ("乘", "かける"), "*": ("乘", "かける"), "÷": ("除以", "わる"), "+": ("加", "たす"),
    "=": ("等于", "イコール"), "\u2212": ("减", "ひく"), ">": ("大于", "ダイナリ"),
    "<": ("小于", "ショーナリ"), "≥": ("大于等于", "ダイナリイコール"),
    "≤": ("小于等于", "ショーナリイコール"),
}  # fmt: skip
_OPERATOR = re.compile(
    r"(?<=[\dA-Za-z)）²³π])\s*([×*÷+=\u2212><≥≤])\s*(?=[-\u2212]?[\dA-Za-z(（π√¥￥$€£])"
)
# A comparison or a tolerance before a figure, after a word or alone (血糖<7.0, 年龄≥18岁,
# 25±2℃, ≈1.414, a≠b): the G2Ps drop the sign, and with it what the figure means.
_COMPARISONS = {
    "<": ("小于", "ショーナリ"), ">": ("大于", "ダイナリ"), "\uff1c": ("小于", "ショーナリ"),
    "\uff1e": ("大于", "ダイナリ"), "≤": ("小于等于", "ショーナリイコール"),
    "≥": ("大于等于", "ダイナリイコール"), "≦": ("小于等于", "ショーナリイコール"),
    "≧": ("大于等于", "ダイナリイコール"), "±": ("正负", "プラスマイナス"),
    "≈": ("约等于", "ニアリーイコール"), "≒": ("约等于", "ニアリーイコール"),
    "≠": ("不等于", "ノットイコール"),
}  # fmt: skip
_COMPARISON = re.compile(r"\s*([<>\uff1c\uff1e≤≥≦≧±≈≒≠])\s*(?=[-\u2212]?[\dA-Za-z¥￥$€£])")
# An arrow beside a figure says which way it went ("同比↑12%", "成本↓5%"): the G2Ps drop it.
_ARROWS = {"\N{UPWARDS ARROW}": ("上升", "上昇"), "\N{DOWNWARDS ARROW}": ("下降", "下降")}
_ARROW = re.compile("[\N{UPWARDS ARROW}\N{DOWNWARDS ARROW}]")
# A plus between a word and a number in Chinese ("100GB流量+500分钟") joins two things: 加 (the
# G2P drops it). Not "1万+用户" (一万多: numbers.py), which a word follows, nor a sign before a
# percentage ("增长+15%").
_ZH_PLUS = re.compile(r"(?<=[\u4e00-\u9fff])\s?\+\s?(?=\d)(?!\d+(?:\.\d+)?\s?[%％])")
# An ellipsis between words in Japanese ("えっと…少々", "そうですね...では").
_JA_ELLIPSIS = re.compile(r"(?<=\w)\s*(?:\.{3,}|\N{HORIZONTAL ELLIPSIS}+)\s*(?=\w)")
# An item's count after its name ("可乐×2", "大床房×1", "经验×2"): 乘, as a receipt or a game is
# read; the G2P dropped the sign (可乐二).
_ZH_COUNT_TIMES = re.compile(r"(?<=[\u4e00-\u9fff])\s?×\s?(?=\d)")
# A square root (√16), which the G2Ps drop (powers: written.POWER).
_ROOT = re.compile(r"√\s?(?=[\d(（A-Za-z])")
# Two releases of a product with a slash after its name ("Windows 10/11", "iPhone 14/15"): 10
# and 11, not the fraction 11分之10. One after the other; "Rated 4/5" and 9/10 are scores.
_RELEASES = re.compile(r"(?<=[A-Za-z] )(\d{1,2})/(\d{1,2})(?![\d/]|\.\d)")
_SCORED_OUT_OF = frozenset((2, 3, 4, 5, 10))
# A menu path between words, not numbers or single letters ("设置 > 账户", "設定 → アカウント",
# and unspaced between Han or kana words, or between them and a Latin one: 设置>通用,
# 設定＞Wi-Fi＞詳細, which was ダイナリ): a pause.
_CJK = "\u3041-\u30ff\u4e00-\u9fff"  # Han and kana
_MENU_STEP = re.compile(
    rf"(?<=[^\W\d]{{2}})\s+[>＞]\s+(?=[^\W\d]{{2}})|(?<=[{_CJK}])\s*[>＞]\s*(?=[{_CJK}A-Za-z])"
    rf"|(?<=[A-Za-z])\s*[>＞]\s*(?=[{_CJK}])"
    r"|(?<=\w)\s*[\N{RIGHTWARDS ARROW}\N{RIGHTWARDS DOUBLE ARROW}]\s*(?=\w)"
)
# A hyphen is a minus only with spaces around it ("5 - 3"); unspaced, it joins a range or a
# phone number.
_MINUS = re.compile(r"(?<=\d) - (?=\d)")
# An address's signs by name and its digits one by one (163.com is 幺六三点com, not 一百六十三).
_ADDRESS_SIGNS = {
    "@": ("艾特", "アット"), ".": ("点", "ドット"), "-": ("杠", "ハイフン"),
    "/": ("斜杠", "スラッシュ"), "_": ("下划线", "アンダーバー"),
}  # fmt: skip
# A part of an address that is no word, spelled (e2k made abc アブ, xyz キシズ; espeak-ng, for
# the Mandarin lexicon's unknown words, icbc "ikbk"): two letters (co.jp, ne.jp), three that
# are not a syllable (bob, com and net are), four with three consonants in a row.
_SPELLED_PART = re.compile(
    r"(?i)(?<![a-z])(?:[a-z]{2}|(?![b-df-hj-np-tv-z][aeiou][b-df-hj-np-tv-z])[a-z]{3}"
    rf"|{UNSAYABLE_FOUR})(?![a-z])"
)
# OHM SIGN and MICRO SIGN are their Greek letters (NFKC), as writers mix them.
_SIGNS = str.maketrans(
    {"\u2126": "Ω", "\u00b5": "μ"}
    # The Roman numerals of one character (Ⅱ型糖尿病, Ⅲ期, ⅳ): the G2Ps drop them.
    | {
        chr(c): str(int(unicodedata.numeric(chr(c))))
        for c in [*range(0x2160, 0x216C), *range(0x2170, 0x217C)]
    }
)
# Latin Roman numerals before what they number in Chinese (II型, III期, IV级): letters, else.
_ZH_ROMAN = re.compile(r"(?<![A-Za-z])([IVX]{1,4})(?=[型期级类度代])")
# A phone's keys: # and * before 键 (请按#号键: 井号键) or before を押す, キー, ボタン (シャープ).
_KEYS = re.compile(r"[#＃*＊](?=号?键|\s?(?:を押|キー|ボタン))")
_KEY_NAMES = {"#": ("井号", "シャープ"), "*": ("星号", "アスタリスク")}
# A number sign after a building's number (3#楼, 5#301, 1#、2#楼) is 号, which the G2P drops.
_ZH_BUILDING = re.compile(r"(?<=\d)#(?=[楼栋座幢、，\d])")
# A key combination (Ctrl+C, Cmd+Shift+4): the keys' names said in full, as they are spoken
# (OpenJTalk spells Ctrl), and in Japanese the plus プラス (not たす, as in sums).
_KEY_COMBO = re.compile(
    r"(?<![A-Za-z])(?:Ctrl|Cmd|Alt|Shift|Opt|Fn|Win|Control|Command|Option)"
    r"(?:\s?\+\s?(?:[A-Za-z]+|[0-9]{1,2}|F[0-9]{1,2}))+(?![A-Za-z0-9])"
)
# An English ordinal (the 1st album, 10th anniversary): ファースト in Japanese to the tenth, past
# it 第 and the number; 第 and the number in Chinese. Each G2P read "st" as a unit or letters.
_ORDINAL = re.compile(r"(?<![A-Za-z0-9.第])(\d{1,3})(st|nd|rd|th)(?![A-Za-z])(\s(?=[A-Za-z]))?")
_JA_ORDINALS = ("ファースト", "セカンド", "サード", "フォース", "フィフス", "シックスス",
                "セブンス", "エイス", "ナインス", "テンス")  # fmt: skip
# Latin letters that do not decompose into a letter and an accent.
# A 2 between two capitals is "to" (B2B, O2O, P2P), as both languages say it, not 二 or ニ; but
# a formula's 2 is a count: H二O in Chinese, エイチツーオー in Japanese.
_TO = re.compile(r"(?<![A-Za-z0-9])([A-Z])2([A-Z])(?![A-Za-z0-9])")
_FORMULAS = ("H2O", "H2S", "N2O")
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


def _key(match: re.Match[str], language: int) -> str:
    name = _KEY_NAMES[unicodedata.normalize("NFKC", match.group())][language]
    # 井号 before 号键 would say 号 twice.
    return name[:-1] if language == 0 and match.string.startswith("号", match.end()) else name


def _plus_word(plus: re.Match[str]) -> str:
    phone = PHONE.match(plus.string, plus.start())
    return "+" if phone and phone_groups(phone) else "プラス"


def _readable_character(ch: str, language: int) -> str:
    if "\u0370" <= ch <= "\u03ff":
        return _greek(ch, language)
    if "\u3380" <= ch <= "\u33ff":  # a unit in one square character (㎏ is kg)
        return unicodedata.normalize("NFKC", ch)
    category = unicodedata.category(ch)
    if category == "No":
        return _number(ch)
    # Latin-1 to Latin Extended-B, and Latin Extended Additional (ạ, ế: Vietnamese).
    if category[0] == "L" and (ch < "\u0250" or "\u1e00" <= ch <= "\u1eff"):
        return _unaccented(ch)
    return ch


def _unit(unit: str, language: int) -> str:
    """A unit's name, after a space that keeps it from running into a Latin word before it
    (5 Ω); "per hour" joins its unit (km/h)."""
    return ("" if unit.startswith("/") else " ") + _UNITS[unit][language]


def _spelled_part(part: str, language: int) -> str:
    if language == 1:
        return letter_names(part)
    # The Mandarin lexicon spells a short unknown word itself, and any word in capitals.
    return part.upper() if len(part) == 4 else part


def _address(address: str, language: int) -> str:
    """An address's signs by their names and its digits one by one, its letters as they are
    (a trailing slash, or dot, is the sentence's)."""
    # Here, not at the top: numbers imports misaki, which an English-only install lacks, and
    # the family (through g2p, which imports this module) must import there to find no voices.
    from .numbers import digits_one_by_one

    address, end = (address[:-1], address[-1]) if address[-1] in "./" else (address, "")
    address = _SPELLED_PART.sub(lambda m: _spelled_part(m.group(0), language), address)
    said = "".join(_ADDRESS_SIGNS[c][language] if c in _ADDRESS_SIGNS else c for c in address)
    return digits_one_by_one(said, language) + end


# A slash between two words written in Han or kana is a pause, as 、 ("苹果/香蕉", "月/水/金");
# an ampersand is "and": between Latin letters in English (Q&A), else 和 (OpenJTalk says
# アンド itself).
# A slash after an amount before what it is counted by ("99元/月", "¥35/人", "5€/月") is 每 in
# Chinese: read as a pause between words (below), it would say "99元、月".
# In Japanese, what it is counted by goes first: "980円/月" is 月980円, "3回/日" 1日3回,
# "10,000円/人" 1人10,000円 (a pause for the slash would say "980円、ツキ", the moon). Not before a
# kanji that makes another word (月曜, 人数).
_JA_PER = re.compile(
    r"(?<![\d.,])((?:[¥￥$€£]\s?)?\d[\d,]*(?:\.\d+)?\s?"
    r"(?:[\u4e00-\u9fff\u30a1-\u30fa\u30fc]{1,4}|%|[KMGT]B|[¥￥$€£₹])?)"
    r"\s?/\s?(月|年|週|日|人|名|泊|回|時間|分|秒|個|枚|本|台|杯|部屋|室|錠|kg|km|ml|m²|㎡|GB|MB|g|m|L)"
    r"(?![\u4e00-\u9fffA-Za-z0-9²])"
)
# A unit per a unit (25mg/kg, 110mg/dL, 5L/min): パー and the second in katakana, which the
# romanizer read as a word (kg ク, mL エムエル) after a slash left unread; per a time, 毎 as
# units are read (60km/h キロメートル毎時, 5m/s メートル毎秒, not パー時間).
_JA_PER_UNITS = {
    "kg": "パーキログラム", "g": "パーグラム", "L": "パーリットル", "mL": "パーミリリットル",
    "ml": "パーミリリットル", "dL": "パーデシリットル", "min": "毎分", "h": "毎時", "s": "毎秒",
    "m": "パーメートル",
}  # fmt: skip
_JA_UNIT_PER = re.compile(r"(?<=[A-Za-zμ])\s?/\s?(kg|g|L|mL|ml|dL|min|h|s|m)(?![A-Za-z])")
_JA_PER_WORDS = {"月": "月", "年": "年", "週": "週", "分": "1分あたり", "秒": "1秒あたり"}
_ZH_PER = re.compile(
    r"(?<=[\d元块次万千¥￥$€£₹])\s?/\s?(?:(?=(?:月|年|天|日|晚|夜|次|人|位|小时|分钟|周|星期|个|件|斤|公斤|千克"
    r"|克|瓶|盒|张|份|台|间|套|吨|升|平米|平方米|米|公里|页|节|杯|课时|人次|分(?!钟)|秒))"
    r"|(kg|km|ml|mL|m²|m2|㎡|GB|MB|TB|g|m|L|l|t)(?![A-Za-z0-9²]))"
)
_ZH_PER_UNITS = {
    "kg": "公斤", "km": "公里", "ml": "毫升", "mL": "毫升", "m²": "平方米", "m2": "平方米",
    "㎡": "平方米", "g": "克", "m": "米", "L": "升", "l": "升", "t": "吨", "cm³": "立方厘米",
    "m³": "立方米", "min": "分钟", "h": "小时", "s": "秒", "dL": "分升", "GB": "GB", "MB": "MB",
    "TB": "TB",
}  # fmt: skip
# A slash or 每 after a unit, or after a number's measure word: per the next one ("25mg/kg",
# "5L/min", "10mg/次", "1片/次", "2人/间", "60公里/小时", "每kg"), where a slash between two
# words is an "or" (苹果/香蕉: a pause). Not before a number (1号/2号).
_ZH_UNIT_PER = re.compile(
    rf"(?:(?<=[A-Za-zμ²³])|(?<=\d[{_CJK}])|(?<=\d[{_CJK}]{{2}}))\s?/\s?"
    r"(?:(cm³|m³|kg|km|mL|ml|dL|min|g|L|h|s|m)(?![A-Za-z0-9²³])|(?=[\u4e00-\u9fff]))"
    r"|每\s?(cm³|m³|kg|km|mL|ml|min|g|L|h|m)(?![A-Za-z0-9²³])"
)
_WORD_SLASH = re.compile(rf"(?<=[{_CJK}])\s?/\s?(?=[{_CJK}])")
_LATIN_AND = re.compile(r"(?<=[A-Za-z])\s?&\s?(?=[A-Za-z])")


def _power(match: re.Match[str], language: int) -> str:
    power = power_of(match)
    if language == 1:
        return f"の{power}乗"
    return {2: "的平方", 3: "的立方"}.get(power, f"的{power}次方")


def _ja_per(match: re.Match[str]) -> str:
    amount, per = match.group(1), match.group(2)
    if match.string[: match.start()].endswith(per + "額"):
        return amount  # 月額980円/月: 月額 says the month already
    if per in _JA_PER_WORDS:
        return _JA_PER_WORDS[per] + amount
    # A unit in Latin letters takes あたり: "1kg500円" would read its digits as a code.
    kanji = "\u4e00" <= per[0] <= "\u9fff"
    return f"1{per}{'' if kanji else 'あたり'}{amount}"


def _brand(written: str, language: int) -> str:
    return _BRANDS[written.lower()][language] or written


def _key_combo(match: re.Match[str], language: int) -> str:
    keys = re.split(r"\s?\+\s?", match.group(0))
    if language == 1:  # OpenJTalk spells Alt; a key is オルト (ALT alone is its letters)
        keys = ["オルト" if k == "Alt" else k for k in keys]
    return ("加", "プラス")[language].join(KEY_WORDS.get(k, k) for k in keys)


def _ordinal(match: re.Match[str], language: int) -> str:
    n = int(match.group(1))
    if n == 0 or match.group(2) != ordinal_suffix(n):
        return match.group(0)  # not an ordinal as written ("3th")
    space = match.group(3) or ""
    if language == 1 and n <= len(_JA_ORDINALS):
        return _JA_ORDINALS[n - 1] + space
    # A Latin word after a number and a space is left to OpenJTalk as a unit (5 km), which
    # spells a word ("25th Anniversary"): a middle dot keeps it a word.
    return f"第{n}" + ("・" if space and language == 1 else space)


def _stars(figure: str, counted: bool, language: int) -> str:
    """A rating in stars (written.spoken_stars), which both G2Ps leave out: 4.8★ 4.8星 and
    星4.8, ★★★★☆ 4星 and 星4つ (a middle dot keeps 評価 from joining 星 as ぼし)."""
    if language == 0:
        return figure + "星"
    return f"・星{figure}" + ("つ" if counted and len(figure) == 1 else "")


def _two(match: re.Match[str], language: int) -> str:
    """B2B's 2 as "to" (B to B, ビートゥービー); a formula's as a count (H2O, エイチツーオー)."""
    if match[0] in _FORMULAS:
        return match[0] if language == 0 else f"{match[1]}ツー{match[2]}"
    return f"{match[1]} to {match[2]}" if language == 0 else f"{match[1]}トゥー{match[2]}"


def _releases(match: re.Match[str], language: int) -> str:
    first, then = int(match[1]), int(match[2])
    if then != first + 1 or then in _SCORED_OUT_OF:
        return match[0]
    return match[1] + ("和", "と")[language] + match[2]


def _readable(text: str, language: int) -> str:
    text = text.translate(_SIGNS)
    if "T" in text:
        text = spoken_timestamps(text, " ", (("加", "减"), ("プラス", "マイナス"))[language], "")
    if "+" in text:
        text = _KEY_COMBO.sub(lambda m: _key_combo(m, language), text)
    text = _ORDINAL.sub(lambda m: _ordinal(m, language), text)
    if "2" in text:
        text = _TO.sub(lambda m: _two(m, language), text)
    text = spoken_stars(text, lambda figure, _, counted: _stars(figure, counted, language))
    if any(c in text for c in "#＃*＊"):
        text = _KEYS.sub(lambda m: _key(m, language), text)
    if language == 0:
        text = _ZH_ROMAN.sub(lambda m: str(roman_value(m[1]) or m[1]), text)
        if "#" in text:
            text = _ZH_BUILDING.sub("号", text)
    if "@" in text or "." in text:
        # Before the brands, which would leave no address to find: www.taobao.com is read
        # with its dots by name, and its taobao as the brand (said alike).
        text = ADDRESS.sub(lambda m: _address(address_of(m), language), text)
    text = _BRAND.sub(lambda m: _brand(m.group(0), language), text)
    if language == 0 and ("/" in text or "每" in text):
        text = _ZH_PER.sub(lambda m: "每" + _ZH_PER_UNITS.get(m[1] or "", ""), text)
        text = _ZH_UNIT_PER.sub(lambda m: "每" + _ZH_PER_UNITS.get(m[1] or m[2] or "", ""), text)
    if "/" in text:
        text = _RELEASES.sub(lambda m: _releases(m, language), text)
        if language == 1:
            text = _JA_PER.sub(_ja_per, text)
            text = _JA_UNIT_PER.sub(lambda m: _JA_PER_UNITS[m[1]], text)
        text = _WORD_SLASH.sub("\N{IDEOGRAPHIC COMMA}", text)
    if "&" in text and language == 0:
        text = _LATIN_AND.sub(" and ", text).replace("&", "和")
    text = _UNIT.sub(lambda m: _unit(m.group(1), language), text)
    text = _MINUS.sub(" \u2212 ", text)
    if any(c in text for c in ">＞\N{RIGHTWARDS ARROW}\N{RIGHTWARDS DOUBLE ARROW}"):
        text = _MENU_STEP.sub("\N{IDEOGRAPHIC COMMA}", text)
    text = _OPERATOR.sub(lambda m: _OPERATORS[m.group(1)][language], text)
    if any(c in text for c in _COMPARISONS):
        text = _COMPARISON.sub(lambda m: _COMPARISONS[m.group(1)][language], text)
    if "\N{UPWARDS ARROW}" in text or "\N{DOWNWARDS ARROW}" in text:
        text = _ARROW.sub(lambda m: _ARROWS[m.group(0)][language], text)
    if language == 0 and "+" in text:
        text = _ZH_PLUS.sub("加", text)
    if language == 0 and "×" in text:
        text = _ZH_COUNT_TIMES.sub("乘", text)
    elif language == 1 and "+" in text:
        # Any plus left is not arithmetic ("980円+税", "送料無料+ポイント"): プラス, where
        # OpenJTalk would say たす. One before a phone number stays for numbers.py, which reads
        # the country's code digit by digit (+81 3-1234-5678: プラスハチイチの…).
        text = re.sub(r"\+", _plus_word, text)
    if "^" in text or "√" in text or any(c in SUPERSCRIPTS for c in text):
        text = POWER.sub(lambda m: _power(m, language), text)
        text = _ROOT.sub(("根号", "ルート")[language], text)
    if text.isascii():
        return text
    return "".join(ch if ch.isascii() else _readable_character(ch, language) for ch in text)


def chinese(text: str) -> str:
    """`text` with what the Mandarin G2P leaves out written as words it reads."""
    return _readable(text, 0)


def japanese(text: str) -> str:
    """`text` with what the Japanese G2P leaves out written as words it reads, and an
    ellipsis between words as 、 (the romanizer dropped it and its pause: えっと…少々 ran on)."""
    return _JA_ELLIPSIS.sub("、", _readable(text, 1))
