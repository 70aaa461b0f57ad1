"""Mandarin words whose reading pypinyin gets wrong in what a voice agent says, and the
dictionary's reading (现代汉语词典) a listener expects: pypinyin reads 还款 hái kuǎn ("still
money"), 长按 zhǎng àn, 重置 zhòng zhì, 弹出 dàn chū. It reads a word it has no entry for
character by character, each by its first reading; these words are given whole to jieba (so
that it cuts them out) and to pypinyin (which then reads them so). Words it reads right (下载
xià zài) are not here. A character whose reading depends on the words beside it (得 in 跑得快
and 您得先登录, 只 in 这只猫, a surname in 曾先生) is read by in_context."""

from __future__ import annotations

from collections.abc import Callable

READINGS = {
    # 还 huán (give back), in repaying and returning
    "还款": "huán kuǎn", "应还": "yīng huán", "已还": "yǐ huán", "待还": "dài huán",
    "未还": "wèi huán", "还钱": "huán qián", "还上": "huán shàng", "还车": "huán chē",
    "还回": "huán huí", "还贷": "huán dài",
    # 行 háng (a bank), in its branches and between banks
    "支行": "zhī háng", "总行": "zǒng háng", "跨行": "kuà háng", "我行": "wǒ háng",
    "他行卡": "tā háng kǎ", "行内转账": "háng nèi zhuǎn zhàng", "联行号": "lián háng hào",
    "行号": "háng hào",
    # 长 cháng: how long a call or a use lasts; places (长宁区, 长海医院)
    "时长": "shí cháng", "长宁": "cháng níng", "长海": "cháng hǎi", "长阳": "cháng yáng",
    # 量 liáng (measure), a verb before what is measured
    "量一下": "liáng yī xià", "量血压": "liáng xuè yā", "量体温": "liáng tǐ wēn",
    "量尺寸": "liáng chǐ cùn",
    # 朝阳, Beijing's district and its roads, is Cháoyáng; 大夫 (doctor) dàifu; 中签 zhòng
    "朝阳": "cháo yáng", "大夫": "dài fu", "中签": "zhòng qiān",
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
    # 干 gān (dry), made dry
    "晒干": "shài gān", "擦干": "cā gān", "吹干": "chuī gān", "拧干": "nǐng gān",
    # 系 jì (tie, fasten); pypinyin has 系好 but jieba cut 请系|好
    "系好": "jì hǎo", "系上": "jì shàng",
    # 着 zháo (reach a result)
    "睡不着": "shuì bu zháo", "找不着": "zhǎo bu zháo", "用不着": "yòng bu zháo",
    "用得着": "yòng de zháo",
    # 数 shǔ (count)
    "数一下": "shǔ yī xià", "数一数": "shǔ yī shǔ",
    # 切 qiē (cut; switch), 杠 gàng (bar), 教 jiāo (teach)
    "切换": "qiē huàn", "切开": "qiē kāi", "切成": "qiē chéng", "切块": "qiē kuài",
    "切碎": "qiē suì", "斜杠": "xié gàng", "教得": "jiāo de",
    # names: 华为 (symbols.py writes HUAWEI so) is Huáwéi; places a parcel goes to, by the
    # reading their people give them (长治 Chángzhì, 漯河 Luòhé: pypinyin reads Zhǎngzhì, Tàhé)
    "华为": "huá wéi", "长治": "cháng zhì", "漯河": "luò hé", "珲春": "hún chūn",
    "涡阳": "guō yáng", "阆中": "làng zhōng", "华阴": "huà yīn", "单县": "shàn xiàn",
    "浚县": "xùn xiàn", "洪洞": "hóng tóng", "会稽": "kuài jī", "解州": "xiè zhōu",
    # 为 wéi (be, as): what a thing is or becomes (以到账为准, 视为放弃, 被评为优秀)
    "为准": "wéi zhǔn", "为例": "wéi lì", "视为": "shì wéi", "评为": "píng wéi",
    "定为": "dìng wéi", "变为": "biàn wéi", "列为": "liè wéi", "名为": "míng wéi",
    # 得 de, the particle of a verb's result: pypinyin reads these words dé
    "舍不得": "shě bu de", "怪不得": "guài bu de", "恨不得": "hèn bu de",
    "巴不得": "bā bu de", "顾不得": "gù bu de",
    # 得 děi (must, it takes) where jieba joins it to 那: 那得看情况
    "那得": "nà děi",
}  # fmt: skip

# 长 standing alone is cháng (long) after a word of degree: 时间比较长, 队伍有点长.
_DEGREE = frozenset(
    ("比较", "非常", "特别", "有点", "有些", "这么", "那么", "相当", "真", "挺", "更", "够")
)


# 地 standing alone after a word of two characters or more is the particle de that makes it an
# adverb (认真地填写, 耐心地等待), unless that word measures land (一块地).
_LAND_MEASURES = frozenset("块片亩")


# A lone 得 has three readings; pypinyin gives it dé (get) everywhere.
# - děi (must) before these words: 您得先登录, 还得等一下;
_MUST_BEFORE = frozenset(
    ("先", "要", "等", "去", "马上", "赶紧", "赶快", "尽快", "重新", "提前", "自己", "亲自")
)
# - dé where it gets something: before these words or a number (他得了第一名, 每人得一份);
_GOT_BEFORE = frozenset(("了", "过", "着", "到", "的"))
_NUMERALS = frozenset("一二两三四五六七八九十百千万零几第")
# - děi again after an adverb or a time (都得排队, 还得多少天, 明天得早点出发), after a person
#   (您得找人工客服), and before 多少 (这个得多少钱) unless a person asks how much was got
#   (你得多少分);
_MUST_AFTER = frozenset(
    ("还", "就", "都", "也", "又", "可", "总", "那就", "一定", "肯定", "必须", "还是",
     "现在", "今天", "明天", "后天", "今晚", "明早", "晚上", "早上", "上午", "下午", "以后",
     "之后", "然后", "回头", "待会儿", "一会儿", "马上", "这", "那", "这个", "那个")
)  # fmt: skip
_PERSONS = frozenset(
    ("我", "你", "您", "他", "她", "它", "我们", "你们", "他们", "她们", "咱们", "大家")
)
# What a thing takes, after 得多少: money or time.
_COSTS = frozenset(("钱", "天", "时间", "小时", "分钟", "年", "个月", "周", "块", "元"))
# - de, the particle that joins a verb to its result or degree, before a word that starts
#   one: 跑得很快, 写得太小, 做得不错, 来得早, 打扫得干净.
_RESULT_START = frozenset(
    "很太非特真挺好不更越十有比这那多最怎蛮相极还快慢早晚对清干高低远近大小满乱漂明仔舒热冷累饱够准稳精完"
)
# A character standing alone whose first reading in pypinyin is the one only its compounds
# have (亲切 qiè, 教育 jiào, 心脏 zàng): alone, or after a person, it is the verb or adjective.
_ALONE = {"切": "qie1", "教": "jiao1", "脏": "zang1", "杠": "gang4"}
_PERSONS_HEAD = frozenset("我你您他她")
# 只 and 行 counted are measure words, zhī (a cat) and háng (a line of text): after a
# number, 第, 每 and (for 只) a demonstrative. 一行 is also yì xíng (a party of people: 一行人,
# 一行三人, 代表团一行).
_MEASURES = {"只": "zhi1", "行": "hang2"}
_COUNTING = {"只": frozenset("一二两三四五六七八九十百千几第每这那哪"),
             "行": frozenset("一二两三四五六七八九十百千几第每")}  # fmt: skip
_LINE_AFTER = frozenset("后每上下第")
# A surname's reading, which is not the character's first: 曾先生 Zēng, 单女士 Shàn, 解先生
# Xiè, 查老师 Zhā, 朴女士 Piáo (pypinyin reads céng, dān, jiě, chá, pǔ). A surname is a lone
# character before a title or after 姓 (我姓单), 老 or 小.
_SURNAMES = {
    "曾": "zeng1", "单": "shan4", "华": "hua4", "乐": "yue4", "解": "xie4", "查": "zha1",
    "区": "ou1", "仇": "qiu2", "朴": "piao2", "盖": "ge3", "翟": "zhai2", "缪": "miao4",
    "覃": "qin2", "纪": "ji3", "任": "ren2", "种": "chong2", "召": "shao4", "宓": "fu2",
    "繁": "po2", "员": "yun4", "燕": "yan1",
}  # fmt: skip
_TITLES = frozenset(
    ("先生", "女士", "小姐", "老师", "总", "经理", "医生", "大夫", "师傅", "同学", "阿姨",
     "叔叔", "老板", "主任", "律师", "教授", "太太", "总监", "警官", "工", "姐", "哥")
)  # fmt: skip
_SURNAME_BEFORE = frozenset(("姓", "老", "小"))
# A lone 为 is wéi (be, as) in what an agent reads out, after a verb that sets or changes a
# thing (调整为, 修改为, 升级为) and where it says what a thing is (余额为一百元, 状态为已发货);
# pypinyin reads it wèi (for) everywhere. It is wèi before the one it is for (为您服务, 为大家,
# 专门为老人设计) and where it starts a clause (为保障您的安全).
_SET_TO = frozenset(
    ("调整", "修改", "设置", "设", "改", "变", "升级", "降级", "更改", "更新", "更换", "替换",
     "转换", "切换", "转", "选", "划", "认定", "确定", "指定", "设定", "默认", "统一", "简化",
     "翻译", "命名", "显示", "标记", "折合", "换算", "核定", "延长", "缩短", "提升", "降低")
)  # fmt: skip
_FOR_WHOM = _PERSONS | frozenset(
    ("大家", "各位", "每位", "每个", "所有", "广大", "客户", "用户", "顾客", "老人", "孩子",
     "家人", "消费者", "患者", "乘客", "旅客", "学生", "社会", "人民", "国家")
)  # fmt: skip
_FOR_AFTER = frozenset(("是", "专门", "特地", "特意", "专", "就", "都", "也", "正", "而"))
# What 盛 (chéng) ladles out: a number of bowls, or the food (盛一碗饭, 盛饭).
_LADLED = _NUMERALS | frozenset("饭汤粥菜")
# A verb that makes a thing dry: the lone 干 after it is gān (手机擦|干 is how jieba cuts it).
_DRYING = frozenset("擦晒吹拧烘晾烤抹沥")
# 调 before 到 and a level is tiáo (turn to): 调到二十六度, 调到最大; 调到北京 is diào.
# ... or a mode (调到静音, 振动, 夜间模式, 省电模式, 飞行模式)
_LEVEL_START = _NUMERALS | frozenset("最百静振夜省飞")


def in_context(word: str, before: str, after: str, then: str = "") -> str | None:
    """The reading (pinyin with a tone number) of a word that depends on the words beside it
    (`then` comes after `after`), where pypinyin's own is wrong; None where it is right."""
    if word == "得":
        return _lone_de(before, after, then)
    if len(word) == 2 and word[0] == "得" and word not in _phrases:
        # jieba's 这个|得付|多少钱, 那|得看|情况: 得 with the verb after it.
        said = _lone_de(before, word[1], after) if before else "dei3"  # 得花三天: it takes
        return None if said is None else f"{said} {_pinyin(word[1])[0]}"
    if len(word) > 1 and "得" in word[1:] and word not in _phrases:
        # A word jieba cuts as verb + 得 (+ result) that pypinyin has no entry for, so it
        # reads the character's first reading, dé: 拍得, 变得, 过得, 说得对, 看得见.
        return " ".join("de5" if c == "得" else p for c, p in zip(word, _pinyin(word), strict=True))
    if word == "为":
        return _wei(before, after)
    if word == "喂" and not before and after in ("", "你好", "您好", "喂", "是"):
        return "wei2"  # answering the phone (喂，您好); 喂猫 (feed) is wèi
    if word == "长" and before in _DEGREE:
        return "chang2"
    if word == "地" and len(before) > 1 and before[-1] not in _LAND_MEASURES and after:
        return "de5"
    if _adverb_de(word, before):
        return " ".join("de5" if i == word.index("地") else p for i, p in enumerate(_pinyin(word)))
    if word == "干" and before[-1:] in _DRYING:
        return "gan1"
    if word in ("调", "请调") and after == "到" and then[:1] in _LEVEL_START:
        return "tiao2" if word == "调" else "qing3 tiao2"  # jieba's 请调|到|静音
    if word == "空" and after in ("出来", "出", "下来", "着"):
        return "kong4"  # 把位置空出来: left free
    if word == "盛" and after[:1] in _LADLED:
        return "cheng2"  # 盛一碗饭: ladle out
    if word in _SURNAMES and (
        after in _TITLES or before in _SURNAME_BEFORE or before.endswith("姓")
    ):
        return _SURNAMES[word]
    if word[:1] in _SURNAMES and word[1:] in _TITLES:  # jieba's 仇先生
        return " ".join([_SURNAMES[word[0]], *_pinyin(word[1:])])
    if word in _ALONE:
        return _ALONE[word]
    if len(word) == 2 and word[1] in _ALONE and word[0] in _PERSONS_HEAD:
        return _pinyin(word[0])[0] + " " + _ALONE[word[1]]  # jieba's 他教|我
    if any(c in _MEASURES for c in word):
        return _counted(word, before, after)
    return None


def _adverb_de(word: str, before: str) -> bool:
    """地 the particle de inside a word jieba made of it: with the word after it (尽快|地为|您,
    耐心|地向), or after a doubled character (默默地, 慢慢地)."""
    if word in _phrases:
        return False
    if len(word) == 2 and word[0] == "地":
        return len(before) > 1 and before[-1] not in _LAND_MEASURES
    return len(word) == 3 and word[2] == "地" and word[0] == word[1]


def _counted(word: str, before: str, after: str) -> str | None:
    people = not after or after[0] == "人" or after[0] in _NUMERALS  # 一行人, 代表团一行
    if word == "一行" and before[-1:] not in _LINE_AFTER and people:
        return None
    # The character before each one: inside the word, or the word before for a lone measure
    # word (这|只是 is not counted).
    preceding = [
        word[i - 1] if i else (before[-1:] if len(word) == 1 else "") for i in range(len(word))
    ]
    measured = [c in _MEASURES and p in _COUNTING[c] for c, p in zip(word, preceding, strict=True)]
    if not any(measured):
        return None
    said = zip(word, _pinyin(word), measured, strict=True)
    return " ".join(_MEASURES[c] if m else p for c, p, m in said)


def _wei(before: str, after: str) -> str | None:
    if before in _SET_TO:
        return "wei2"
    if not before or before in _FOR_AFTER or after in _FOR_WHOM or after[:1] in _PERSONS_HEAD:
        return None
    return "wei2"


def _lone_de(before: str, after: str, then: str) -> str | None:
    if after in _MUST_BEFORE:
        return "dei3"
    if not after or after in _GOT_BEFORE or after[0] in _NUMERALS:
        return None
    if after == "多少":  # 这个得多少钱: děi (it takes); 你得多少分: dé (you got)
        return "dei3" if then in _COSTS or before not in _PERSONS else None
    if before in _PERSONS:
        return "dei3"
    if before in _MUST_AFTER:
        return "dei3"
    if before and after[0] in _RESULT_START:
        return "de5"
    return None


# pypinyin's phrase table and reader, set by load() (an English-only install has no pypinyin).
_phrases: dict[str, list[list[str]]] = {}
_pinyin: Callable[[str], list[str]] = lambda word: []  # noqa: E731


def load() -> None:
    """Gives the words to jieba and pypinyin (both keep them process-wide)."""
    global _phrases, _pinyin
    import jieba
    from pypinyin import Style, lazy_pinyin, load_phrases_dict
    from pypinyin.constants import PHRASES_DICT

    for word in READINGS:
        jieba.add_word(word)
    load_phrases_dict({word: [[s] for s in said.split()] for word, said in READINGS.items()})
    _phrases = PHRASES_DICT

    def _pinyin(word: str) -> list[str]:
        return lazy_pinyin(word, style=Style.TONE3, neutral_tone_with_five=True)
