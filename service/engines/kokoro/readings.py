"""Mandarin words whose reading pypinyin gets wrong in what a voice agent says, and the
dictionary's reading (现代汉语词典) a listener expects: pypinyin reads 还款 hái kuǎn ("still
money"), 长按 zhǎng àn, 重置 zhòng zhì, 弹出 dàn chū. It reads a word it has no entry for
character by character, each by its first reading; these words are given whole to jieba (so
that it cuts them out) and to pypinyin (which then reads them so). Words it reads right (下载
xià zài) are not here."""

from __future__ import annotations

READINGS = {
    # 还 huán (give back), in repaying
    "还款": "huán kuǎn",
    # 弹 tán (spring out)
    "弹出": "tán chū", "弹窗": "tán chuāng",
    # 长 cháng (long): a long press, and after a word of degree
    "长按": "cháng àn", "很长": "hěn cháng", "太长": "tài cháng", "多长": "duō cháng",
    "较长": "jiào cháng", "更长": "gèng cháng", "最长": "zuì cháng", "挺长": "tǐng cháng",
    "不长": "bù cháng", "好长": "hǎo cháng", "长时间": "cháng shí jiān",
    "时间长": "shí jiān cháng", "长达": "cháng dá",
    # 重 chóng (again), before a verb
    "重置": "chóng zhì", "重试": "chóng shì", "重发": "chóng fā", "重装": "chóng zhuāng",
    "重连": "chóng lián", "重拨": "chóng bō", "重填": "chóng tián", "重输": "chóng shū",
    "重开": "chóng kāi", "重做": "chóng zuò", "重办": "chóng bàn", "重刷": "chóng shuā",
    "重设": "chóng shè", "重签": "chóng qiān", "重录": "chóng lù", "重写": "chóng xiě",
    "重排": "chóng pái", "重来": "chóng lái", "重登": "chóng dēng",
    # 调 tiáo (adjust), toward a level (调到 and 调回 are also diào: moved to a post)
    "调低": "tiáo dī", "调高": "tiáo gāo", "调成": "tiáo chéng", "调小": "tiáo xiǎo",
    "调大": "tiáo dà",
    # 血 xuè, 露 lòu (show)
    "流血": "liú xuè", "出血": "chū xuè", "露出": "lòu chū",
}  # fmt: skip

# 得 is děi (must) before these words: 您得先登录, 还得等一下 (before anything else it is de or
# dé: 他得了第一名, 跑得快, 说得再好).
_MUST_BEFORE = frozenset(
    ("先", "要", "等", "去", "马上", "赶紧", "赶快", "尽快", "重新", "提前", "自己", "亲自")
)
# 长 standing alone is cháng (long) after a word of degree: 时间比较长, 队伍有点长.
_DEGREE = frozenset(
    ("比较", "非常", "特别", "有点", "有些", "这么", "那么", "相当", "真", "挺", "更", "够")
)


# 地 standing alone after a word of two characters or more is the particle de that makes it an
# adverb (认真地填写, 耐心地等待), unless that word measures land (一块地).
_LAND_MEASURES = frozenset("块片亩")


def in_context(word: str, before: str, after: str) -> str | None:
    """The reading (pinyin with a tone number) of a one-character word that depends on the
    words beside it, where pypinyin's own is wrong; None where it is right."""
    if word == "得" and after in _MUST_BEFORE:
        return "dei3"
    if word == "长" and before in _DEGREE:
        return "chang2"
    if word == "地" and len(before) > 1 and before[-1] not in _LAND_MEASURES and after:
        return "de5"
    return None


def load() -> None:
    """Gives the words to jieba and pypinyin (both keep them process-wide)."""
    import jieba
    from pypinyin import load_phrases_dict

    for word in READINGS:
        jieba.add_word(word)
    load_phrases_dict({word: [[s] for s in said.split()] for word, said in READINGS.items()})
