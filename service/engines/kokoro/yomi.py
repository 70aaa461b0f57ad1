"""Japanese words OpenJTalk reads in the wrong sense, written in kana before it reads them:
方 after a word for people is かた (the person: 担当の方, ご家族の方, 初めての方), where
OpenJTalk says ほう (the side: こちらの方が安い); 辛い said of food is からい (hot), not つらい
(painful); お手数 (the trouble asked of someone) is おてすう, not おてかず (a count of moves).
手続きを行って (carry out) is おこなって, not いって (go, say); 19時の間 is じのあいだ, not
ときのま (a moment, the hour lost); 晴れのち inside a sentence was ハレレノチ; 年0.5% (a year)
is ねん, not とし; 月末 (the month's end) げつまつ, not つきまつ; 20歳 ハタチ; 下の表 (a table)
ヒョー, not おもて; 長押し (press and hold) ながおし, not なげし. What a shop's or an office's
voice says all day."""

from __future__ import annotations

import re

# Words for people, or for what they do, before の方: the person(s) who.
_PEOPLE = (
    "担当", "家族", "係", "関係者", "責任者", "保護者", "代表者", "連れ", "同伴", "初めて",
    "該当", "一般", "年配", "会員", "利用", "予約", "購入", "来場", "参加", "応募", "申込",
    "申し込み", "契約", "加入", "希望", "お持ち", "お困り", "外国", "地元", "近所", "以上",
    "以下", "未満", "学生", "大人", "子供", "女性", "男性", "高齢", "障がい", "妊娠中",
)  # fmt: skip
_PERSON = re.compile(rf"({'|'.join(_PEOPLE)})の方")
# Food, or how hot it is, before 辛い (辛く, 辛すぎ, 辛さ): からい.
# (After a word of degree alone it may be either: とても辛かった.)
_FOOD = (
    "カレー", "ラーメン", "料理", "味", "スープ", "ソース", "キムチ", "麻婆豆腐", "担々麺",
    "唐辛子", "わさび", "メニュー", "食べ物", "タレ", "お鍋", "鍋",
)  # fmt: skip
_HOT = re.compile(rf"({'|'.join(_FOOD)})([はがもの]?)辛([いくさすかそめ])")
# Fixed words, in kana.
_AS_WRITTEN = (
    (re.compile(r"を行っ(?=[てた])"), "をおこなっ"),
    (re.compile(r"(?<=[0-9０-９〇一二三四五六七八九十])時の間"), "時のあいだ"),
    (re.compile(r"晴れのち"), "はれのち"),
    (re.compile(r"(?<![0-9\u3005\u4e00-\u9fff])年(?=[0-9])"), "ねん"),  # not 今年, 去年
    (re.compile(r"月末"), "げつまつ"),
    # 長押し (a long press) is ながおし; OpenJTalk says なげし (a lintel). In katakana, one
    # word to OpenJTalk (in hiragana it cut な|が|おし).
    (re.compile(r"長押し"), "ナガオシ"),
    # 表 pointed to in a document (下の表, 以下の表, この表, 表1, 表を参照) is ヒョー, a table;
    # OpenJTalk says おもて (the front). 表と裏, 表に出る stay おもて.
    (
        re.compile(
            r"((?<=[下上次左右別前後])の|(?<=以下|以上|前述|後述)の?|(?<=この|その))表"
            r"(?![紙面裏情現明示記彰向])|()表(?=\s?[0-9０-９]|を参照|をご覧|に示)"
        ),
        r"\1\2ヒョー",
    ),
    # 20歳以上の方: not にじゅっさい; in katakana, since OpenJTalk reads はたち after は or a
    # colon as the particle は and たち (参加条件は20歳以上: ワ ワ タチ).
    (re.compile(r"(?<![\d.０-９])(?:20|２０)歳(?!代)"), "ハタチ"),
)


def japanese(text: str) -> str:
    """`text` with the words above in the kana of the sense meant."""
    if "方" in text:
        text = _PERSON.sub(r"\1のかた", text)
    if "辛" in text:
        text = _HOT.sub(r"\1\2から\3", text)
    for written, said in _AS_WRITTEN:
        text = written.sub(said, text)
    return text.replace("お手数", "おてすう")
