"""Kokoro's text side: numbers and Latin words in Chinese, Japanese readings, pieces, CJK
segments."""

from __future__ import annotations

import itertools
import random
import re
import unicodedata
import warnings

import pytest

pytest.importorskip("misaki", reason="Kokoro is not installed (VOXLITE_LANGUAGES=en)")

from voxlite.service.call.opening import segments_of
from voxlite.service.call.segmenter import Segmenter
from voxlite.service.engines.kokoro import numbers, symbols
from voxlite.service.engines.kokoro.as_written import as_written
from voxlite.service.engines.kokoro.dates import month_days
from voxlite.service.engines.kokoro.english import Lexicon
from voxlite.service.engines.kokoro.g2p import (
    G2P,
    G2P_CHARS,
    JapaneseG2P,
    MandarinG2P,
    Word,
    in_words,
)
from voxlite.service.engines.kokoro.tokens import (
    CUT_SIDE_TOKENS,
    Piece,
    cut_pieces,
    load_vocab,
)
from voxlite.service.errors import InvalidRequest


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return Lexicon()


@pytest.fixture(scope="module")
def mandarin(lexicon: Lexicon) -> MandarinG2P:
    return MandarinG2P(lexicon)


@pytest.fixture(scope="module")
def japanese() -> JapaneseG2P:
    return JapaneseG2P()


def texts(words: list[Word]) -> list[str]:
    return [w.text for w in words if w.text]


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("2024年3月5日", "二零二四年三月五日"),
        ("2024-03-05开会", "二零二四年三月五日开会"),
        ("于2024/3/5发货", "于二零二四年三月五日发货"),
        ("2024.3.15到期", "二零二四年三月十五日到期"),
        ("圆周率是3.14。", "圆周率是三点一四。"),
        ("价格是¥25.50", "价格是二十五元五角"),
        ("￥25.05", "二十五元零五分"),
        ("25.5元", "二十五元五角"),
        ("余额为-15.30元", "余额为负十五元三角"),
        ("10-15.5元", "十到十五元五角"),
        ("评分4.5/5", "评分五分之四点五"),
        ("$3.99", "三点九九美元"),
        ("共1,250人", "共一千二百五十人"),
        ("会议在3:30开始", "会议在三点半开始"),
        ("有50%的人", "有百分之五十的人"),
        ("电话13812345678", "电话幺三八幺二三四五六七八"),
        ("气温-3°C", "气温零下三度"),
        ("重2kg", "重两公斤"),
        ("iPhone 15", "iPhone 十五"),
        ("ｉＰｈｏｎｅ１５", "iPhone十五"),
        (
            "120Hz，5000mAh，65W快充，延迟50ms",
            "一百二十赫兹，五千毫安时，六十五瓦快充，延迟五十毫秒",
        ),
        ("2L水，10W+阅读", "两升水，十万多阅读"),
        ("能量2000kJ，约478kcal", "能量两千千焦，约四百七十八千卡"),
        # Bug: these units were spelled in English letters (七N M芯片, 三十五D B).
        (
            "7nm芯片，噪音35dB，胎压2.4bar，2.5MPa，1013hPa，5ft，3lbs，8oz，60mph，3000rpm",
            "七纳米芯片，噪音三十五分贝，胎压二点四巴，二点五兆帕，一千零一十三百帕，五英尺，"
            "三磅，八盎司，六十英里每小时，三千转每分钟",
        ),
        # one of a count, not a fraction (第五分之二页)
        ("第2/5页，步骤1/3，约1/3的人", "第二页，共五页，步骤一，共三步，约三分之一的人"),
        ("100 USD，RMB 300元，HK$100，₹200", "一百美元，三百元，一百港币，二百卢比"),
        ("$5美元，€10欧元", "五美元，十欧元"),
        ("1/2杯，2½小时，90°角，3‰", "二分之一杯，二又二分之一小时，九十度角，千分之三"),
        # a hyphen between a letter and a digit is no minus sign
        ("COVID-19疫苗，A-1栋，京A-12345", "COVID十九疫苗，A一栋，京A幺二三四五"),
        ("比分是3-2，湖人以110-98击败勇士", "比分是三比二，湖人以一百一十比九十八击败勇士"),
        ("618大促，截止到12.31，12.31元", "六一八大促，截止到十二月三十一日，十二元三角一分"),
        ("220V，500mA，打2成，走2步", "二百二十伏，五百毫安，打两成，走两步"),
        ("下午3点05分，12点30分", "下午三点零五分，十二点三十分"),
    ],
)
def test_chinese_numbers_are_written_as_they_are_read(text: str, spoken: str) -> None:
    assert numbers.chinese(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("请拨打400-820-8820。", "请拨打四零零，八二零，八八二零。"),
        ("手机138-0013-8000", "手机幺三八，零零幺三，八零零零"),
        ("+86 138 0013 8000", "加八六，幺三八，零零幺三，八零零零"),
        ("请拨+44 7911 123456联系", "请拨加四四，七九幺幺，幺二三四五六联系"),
        ("电话（010）8888-6666", "电话零幺零，八八八八，六六六六"),
        ("您的验证码是385912", "您的验证码是三八五九幺二"),
        ("尾号0371的卡", "尾号零三七幺的卡"),
        ("尾号8888本期账单", "尾号八八八八本期账单"),
        ("火警请拨119，急救请拨120", "火警请拨幺幺九，急救请拨幺二零"),
        ("身份证号后四位是1234吗？", "身份证号后四位是幺二三四吗？"),
        ("卡号末6位为802315", "卡号末六位为八零二三幺五"),
        ("密码是000000", "密码是零零零零零零"),
        ("分机号8021", "分机号八零二幺"),
        ("订单号：AB12345", "订单号：AB幺二三四五"),
        ("单号SF1234567890", "单号SF幺二三四五六七八九零"),
        ("航班CA1234", "航班CA幺二三四"),
        ("IP是192.168.1.1", "IP是幺九二点幺六八点一点一"),
        ("版本10.15.7", "版本十点十五点七"),
        ("比分3:2", "比分三比二"),
        ("比分3：2", "比分三比二"),
        ("No.5香水", "五号香水"),
        ("2024-2025赛季", "二零二四到二零二五赛季"),
        ("¥1,299.50元", "一千二百九十九元五角"),
        ("24/7客服", "二十四七客服"),
        ("3单元501室，1203房间", "三单元五零幺室，幺二零三房间"),
        ("5号楼2单元301，A座1201", "五号楼二单元三零幺，A座幺二零幺"),
        ("请拨打12345", "请拨打幺二三四五"),
        ("RTX 4090显卡，ISO 9001认证", "RTX 四零九零显卡，ISO 九零零幺认证"),
        ("2023款MacBook，2024版，2023届", "二零二三款MacBook，二零二四版，二零二三届"),
        ("i7-13700K，1920x1080，1080P", "i七 一三七零零K，一千九百二十乘一千零八十，一零八零P"),
        ("8车12F座，座位是12F，会议在12F", "八车十二F座，座位是十二F，会议在十二楼"),
        ("Office 365和Office 2019，波音737", "Office 三六五和Office 二零一九，波音七三七"),
        ("豆瓣Top 250，Apple 999元", "豆瓣Top 二百五十，Apple 九百九十九元"),
    ],
)
def test_chinese_digits_that_name_something_are_read_one_by_one(text: str, spoken: str) -> None:
    """Bug: a phone number was read as a range with a minus sign (400-820-8820 as 四百到八百二十
    负八千八百二十), a code as an amount (三十八万五千九百一十二), and 尾号0371 lost its zero.
    A model year was an amount (2023款 两千零二十三款), i7-13700K a span (i七到一万三千七百K),
    a train seat a floor (12F座 十二楼座), a product's number after its name an amount (Office 365
    三百六十五), the last digits before 本期 a count of books (八千八百八十八本), and an emergency
    number after 拨 an amount (一百一十九)."""
    assert numbers.chinese(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("手机1500元", "手机一千五百元"),
        ("2000-3000元", "两千到三千元"),
        ("共1500人", "共一千五百人"),
        ("iOS17", "iOS十七"),
        ("2026年05月", "二零二六年五月"),
        ("电话3个", "电话三个"),
        ("10 20 30", "十 二十 三十"),
    ],
)
def test_numbers_that_count_stay_numbers(text: str, spoken: str) -> None:
    assert numbers.chinese(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("2个人，2小时，2-3天", "两个人，两小时，两到三天"),
        ("下午2点，会议在2:30", "下午两点，会议在两点半"),
        ("2000人，20000元", "两千人，两万元"),
        # 二 where it names or orders: February, the 2nd, the second floor, second grade.
        ("2月2号在2楼", "二月二号在二楼"),
        ("2年级，第2000名，12个", "二年级，第二千名，十二个"),
        ("3天2晚，2年，第2个，第2天", "三天两晚，两年，第二个，第二天"),
        ("¥2，2.5元，$2.00，€2，0.2元", "两元，两元五角，两美元，两欧元，两角"),
        ("您有2笔待还款，2单，2项，2封邮件", "您有两笔待还款，两单，两项，两封邮件"),
        ("¥2.02，2单元，22元", "两元零二分，二单元，二十二元"),
    ],
)
def test_two_of_something_is_liang(text: str, spoken: str) -> None:
    """Bug: "2个人" was read 二个人 and "2:30" 二点半, which no Mandarin speaker says; so were
    two yuan, dollars or euros (¥2 二元) and two payments or orders (2笔, 2单)."""
    assert numbers.chinese(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("气温20-25℃", "气温二十度到二十五度"),
        ("体温36.5~37.2℃", "体温三十六点五度到三十七点二度"),
        ("-5~5℃", "零下五度到五度"),
        ("增长10-20%", "增长百分之十到百分之二十"),
        ("需要1-2小时", "需要一到两小时"),
        ("会员9.5折，全场8.8折", "会员九五折，全场八八折"),
        ("80后和00后", "八零后和零零后"),
        ("3天后", "三天后"),
        ("只要0.5元", "只要五角"),
        ("¥0.05", "五分"),
        ("10%-20%，3天-5天，¥100-¥200", "百分之十到百分之二十，三天到五天，一百元到二百元"),
        ("100+用户", "一百多用户"),
        ("3PM开会，10:30 a.m.到", "下午三点开会，上午十点半到"),
        ("下午3:00PM", "下午三点"),
        ("12/24（周二）发货", "十二月二十四日（周二）发货"),
        (
            "Ver.2.0版，版本Ver.3，评分5.0分，1.50米",
            "版本二点零版，版本三，评分五点零分，一点五零米",
        ),
    ],
)
def test_chinese_spans_discounts_and_generations(text: str, spoken: str) -> None:
    """Bug: the hyphen of a span was read as the second number's minus (20-25℃ as 二十零下
    二十五度, 10-20% as 十负百分之二十), 1-2小时 as 一-两小时, 9.5折 as 九点五折, 80后 as
    八十后, 0.5元 as 零元五角, 3PM as 三PM, 12/24 before 周二 as a fraction, and 2.0 lost its zero
    (Ver.2.0 was Ver零点二)."""
    assert numbers.chinese(text) == spoken


@pytest.mark.parametrize(
    ("text", "chinese", "japanese"),
    [
        (
            "价格5€，12.50 €，5$，1,000€",
            "价格五欧元，十二点五欧元，五美元，一千欧元",
            "价格5ユーロ，12.50ユーロ，5ドル，1000ユーロ",
        ),
        (
            "$5-10，¥50~100，HK$5-10",
            "五美元到十美元，五十元到一百元，五港币到十港币",
            "5ドルから10ドル，50円から100円，5香港ドルから10香港ドル",
        ),
        ("5-10€，5-10 USD", "五到十欧元，五到十美元", "5から10ユーロ，5から10米ドル"),
    ],
)
def test_money_with_its_sign_after_or_once_for_a_span(
    text: str, chinese: str, japanese: str
) -> None:
    """Bug: a sign after its amount was dropped (价格5€ was 价格五, 5$ 五), the second amount of
    a span with one sign read as a minus number ($5-10 was 五美元负十, ¥5-10 in Japanese
    5円マイナス10) and a hyphen before an amount with its sign after it unread (5-10€ was
    五十欧元, and in Japanese 5-10 was read digit by digit)."""
    assert numbers.chinese(text) == chinese
    assert numbers.japanese(text) == japanese


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("您的验证码是：483920，5分钟内有效。", "四八三九二零"),
        (
            "感谢您的耐心等待，这是您本次办理业务需要使用的验证码：483920，请勿泄露给他人。",
            "四八三九二零",
        ),
        ("房间号：1208，早餐在2楼。", "幺二零八"),
        ("客服热线：95588", "九五五八八"),
    ],
)
def test_a_code_after_its_label_and_a_colon_is_read_as_a_code(text: str, code: str) -> None:
    """The segments a Mandarin voice is given (its first clause ends at the first mark) each
    read by the number rules: the code keeps its label."""
    assert code in "".join(numbers.chinese(s) for s in segments_of(text))


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        (
            "移动客服10086，联通客服10010，投诉请打12315。",
            "移动客服幺零零八六，联通客服幺零零幺零，投诉请打幺二三幺五。",
        ),
        (
            "请立即拨打110或120，请拨打12306或95588",
            "请立即拨打幺幺零或幺二零，请拨打幺二三零六或九五五八八",
        ),
        (
            "共有12306人，营业额10086元，体温120或130",
            "共有一万二千三百零六人，营业额一万零八十六元，体温一百二十或一百三十",
        ),
        ("总机电话（021）12345678转8001。", "总机电话零二幺，幺二三四五六七八转八零零幺。"),
        ("2023-2024年度，2020至2024年", "二零二三到二零二四年度，二零二零到二零二四年"),
        ("新增用户1.2w，累计10W+，功率100W", "新增用户一点二万，累计十万多，功率一百瓦"),
        ("3室2厅2卫，2GB流量，住2楼，2G网络", "三室两厅两卫，两GB流量，住二楼，二G网络"),
        ("2G内存，2T硬盘，2G流量，5G网络", "两G内存，两T硬盘，两G流量，五G网络"),
        ("端口8080，端口号是443", "端口八零八零，端口号是四四三"),
        (
            "活动时间12.6-12.8，12.12当天下单，档期3.1至3.15",
            "活动时间十二月六日到十二月八日，十二月十二日当天下单，档期三月一日到三月十五日",
        ),
        ("您预约的是12.6号，坐2.5号线", "您预约的是十二月六号，坐二点五号线"),
        ("约1.5-2小时，1:10稀释，杠杆1:10", "约一点五到两小时，一比十稀释，杠杆一比十"),
        ("2024Q1营收，38节，84消毒液", "二零二四Q一营收，三八节，八四消毒液"),
        ("股票代码600519，宁德时代(300750)", "股票代码六零零五幺九，宁德时代(三零零七五零)"),
        ("幸福小区8-2-301，3号楼2-1101室", "幸福小区八杠二杠三零幺，三号楼二杠幺幺零幺室"),
        (
            "活动时间为2.5-3.5小时，活动期间1.5倍积分",
            "活动时间为二点五到三点五小时，活动期间一点五倍积分",
        ),
        (
            "营业时间AM9:00-PM6:00，9AM-6PM，PM2.5是75",
            "营业时间上午九点到下午六点，上午九点到下午六点，PM二点五是七十五",
        ),
    ],
)
def test_chinese_hotlines_years_and_internet_numbers(text: str, spoken: str) -> None:
    """Bug: the lines every listener dials were amounts (10086 一万零八十六, 95588 九万五千…, the
    120 after 或 一百二十), an area code in brackets ran into its number (零二幺 一千二百三十四万…),
    a span of years lost its 到 (两千零二十三 二零二四年度), 2厅, 2GB and 2G内存 were 二厅, 二GB
    and 二G, 1.2w and 10W+ were read with the letter, AM before a time was spelled, with no 到
    to the next time, and dates written with a dot after 活动时间 or before 当天 were decimals
    (十二点六到十二点八)."""
    assert numbers.chinese(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("联系电话(+86)13800138000", "联系电话(加八六)幺三八零零幺三八零零零"),
        ("电话：（+86）138-0013-8000", "电话：（加八六）幺三八，零零幺三，八零零零"),
        ("国际区号+86，号码13800138000", "国际区号加八六，号码幺三八零零幺三八零零零"),
        # A plus that adds stays the sign symbols.py reads.
        ("100GB流量+500分钟", "一百GB流量加五百分钟"),
    ],
)
def test_chinese_country_code_keeps_its_plus(text: str, spoken: str) -> None:
    """Bug: a calling code in brackets or after 区号 lost its plus and was a number ((+八十六))."""
    assert numbers.chinese(symbols.chinese(text)) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("月薪15k-20k，年终奖2.5K。", "月薪一万五千到两万，年终奖两千五百。"),
        ("这个岗位15k~25k，年薪约300k", "这个岗位一万五千到两万五千，年薪约三十万"),
        ("支持4K电视，参加5K跑。", "支持四K电视，参加五K跑。"),
        ("售价¥5.5万，已售1万+，10万+用户", "售价五点五万元，已售一万多，十万多用户"),
        ("电话：010-12345678转8001。", "电话：零幺零，幺二三四五六七八转八零零幺。"),
        ("请拨打95588转0。", "请拨打九五五八八转零。"),
        ("血压120/80mmHg，车牌沪A·12345", "血压一百二十，八十毫米汞柱，车牌沪A幺二三四五"),
        ("营业时间10:00-24:00，晚上24:00关门", "营业时间十点到二十四点，晚上二十四点关门"),
        ("气温72°F，夜间-4°F", "气温华氏七十二度，夜间华氏零下四度"),
        ("通话时长05:32，倒计时00:30，时长05:00", "通话时长五分三十二秒，倒计时三十秒，时长五分钟"),
        ("视频时长1:23:45，会议14:30", "视频时长一小时二十三分四十五秒，会议十四点半"),
        (
            "湖人以112:108战胜勇士，中国队2:10负于日本",
            "湖人以一百一十二比一百零八战胜勇士，中国队二比十负于日本",
        ),
        ("时间是12:30:45，会议9:05", "时间是十二点三十分四十五秒，会议九点零五分"),
    ],
)
def test_chinese_salaries_scaled_prices_and_extensions(text: str, spoken: str) -> None:
    """Bug: a salary in thousands (15k-20k) was 十五k二零零零零, "¥5.5万" 五元五角万 (a price of
    five and a half yuan, then ten thousand), "1万+" lost its 多, an extension after 转 was
    read as an amount (转八千零一), as was a plate after its dot (沪A·12345), blood pressure
    ran its two numbers together (一百二十八十), 24:00 was 二四点 (10:00-24:00 十点负二四点), a
    score with a colon a time (112:108 一十二点十分八), and 12:30:45 十二点半四十五秒."""
    assert numbers.chinese(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("请在12/25之前完成付款。", "请在十二月二十五日之前完成付款。"),
        ("活动时间：12/1-12/31。", "活动时间：十二月一日到十二月三十一日。"),
        ("活动时间：12/1~12/31。", "活动时间：十二月一日到十二月三十一日。"),
        ("3/5-3/10期间", "三月五日到三月十日期间"),
        ("您预约的是3/15下午3点。", "您预约的是三月十五日下午三点。"),
        ("预计12/3送达，1/5截止", "预计十二月三日送达，一月五日截止"),
        ("12/5发货，1/15之前有效", "十二月五日发货，一月十五日之前有效"),
        ("截止日期：1/5。", "截止日期：一月五日。"),
        ("请于3/5前付款，须在1/10之前寄回", "请于三月五日前付款，须在一月十日之前寄回"),
        ("日期12/25/2024或25/12/2024", "日期二零二四年十二月二十五日或二零二四年十二月二十五日"),
        # Fractions stay fractions: small ones, a span rising through them, a measure after one.
        ("只有1/3的用户，降到1/3后", "只有三分之一的用户，降到三分之一后"),
        ("占比1/3-1/2，1/20的概率", "占比三分之一到二分之一，二十分之一的概率"),
        ("评分5/5", "评分五五"),
        ("大于3/5，在1/3之前的用户", "大于五分之三，在三分之一之前的用户"),
    ],
)
def test_chinese_slashed_month_and_day_is_a_date(text: str, spoken: str) -> None:
    """Bug: a month and day with a slash was read as a fraction ("12/25之前" as 二十五分之十二,
    "3/15下午3点" as 十五分之三), and a span of them as a fraction with a minus (12/1-12/31 as
    十二一负三十一分之十二); a span of fractions (1/3-1/2) had the minus too, and a date to
    act by (请于3/5前) was a fraction."""
    assert numbers.chinese(text) == spoken


@pytest.mark.parametrize("language", ["zh", "ja"])
def test_slashes_and_digits_in_any_order_are_rewritten(language: str) -> None:
    """Slashes, digits, spans and the words that make a date, in every order, and a run of them
    as long as a request may carry: the rules return text, every date they write is a real one
    (the alphabet has no 月 or 日 of its own), and a second pass finds nothing more to write."""
    rng = random.Random(language)
    alphabet = "0123456789/////-~〜到的之前后下午点時まで（周二火)评分第 "
    written = numbers.chinese if language == "zh" else numbers.japanese
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40)))
        assert isinstance(written(text), str)
        dated = month_days(text, language)
        for month, day in re.findall(r"(\d+)月(\d+)日", dated):
            assert 1 <= int(month) <= 12, (text, dated)
            assert 1 <= int(day) <= 31, (text, dated)
        assert month_days(dated, language) == dated, text
    long = ("12/1-12/31，3/15下午3点，1/3-1/2，评分5/5，12/25の18時 " * 200)[:5000]
    assert "/" not in written(long).replace("5/5", "")


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("ご予約は12/25の18時30分からです。", "ご予約は12月25日の18時30分からです。"),
        ("12/5までにお支払いください。", "12月5日までにお支払いください。"),
        ("締切は1/10です。3/15発売。", "締切は1月10日です。3月15日発売。"),
        ("セール期間は12/1〜12/31です。", "セール期間は12月1日から12月31日です。"),
        ("1/3まで減らします。", "3分の1まで減らします。"),
        ("小さじ1/2と3/16インチ", "小さじ2分の1と16分の3インチ"),
        ("評価4/5の商品", "評価5分の4の商品"),
    ],
)
def test_japanese_slashed_month_and_day_is_a_date(
    japanese: JapaneseG2P, text: str, written: str
) -> None:
    """Bug: "12/25の18時" was 25分の12 (a fraction), and a span 12/1〜12/31 two fractions."""
    assert said(japanese, text) == said(japanese, written)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (
            "お電話番号は090-1234-5678です。",
            "お電話番号はゼロキューゼロのイチニーサンヨンのゴーロクナナハチです。",
        ),
        ("TEL: 03-1234-5678まで", "TEL: ゼロサンのイチニーサンヨンのゴーロクナナハチまで"),
        ("+81 90-1234-5678へ", "プラスハチイチのキューゼロのイチニーサンヨンのゴーロクナナハチへ"),
        ("(03)1234-5678まで", "ゼロサンのイチニーサンヨンのゴーロクナナハチまで"),
        # A calling code in brackets or after 国番号 (OpenJTalk read (+81) as a number).
        ("(+81)90-1234-5678へ", "(プラスハチイチ)キューゼロのイチニーサンヨンのゴーロクナナハチへ"),
        ("国番号は+81です", "国番号はプラスハチイチです"),
        # A one-digit area code after the calling code (Tokyo's 3): the plus was a word first.
        (
            "お問い合わせは+81 3-1234-5678まで",
            "お問い合わせはプラスハチイチのサンのイチニーサンヨンのゴーロクナナハチまで",
        ),
        # Not phone numbers: a span of amounts, a date.
        ("2000-3000円です。", "2000から3000円です。"),
        ("2026-12-05に発送", "2026年12月5日に発送"),
    ],
)
def test_japanese_phone_numbers_are_read_in_their_groups(
    japanese: JapaneseG2P, text: str, written: str
) -> None:
    """Bug: OpenJTalk dropped a phone number's hyphens, so 090-1234-5678 ran on as eleven digits
    with no break between the groups a listener writes down."""
    assert said(japanese, text) == said(japanese, written)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("会議は午前9:30からです。", "会議は午前9時30分からです。"),
        ("営業時間は9:00-18:00です。", "営業時間は9時から18時です。"),
        ("営業時間は10:00〜24:00です。", "営業時間は10時から24時です。"),
        ("気温は72°Fです。", "気温は華氏72度です。"),
        ("通話時間は05:32です。", "通話時間は5分32秒です。"),
        ("2026/12/05に発送します。", "2026年12月5日に発送します。"),
        ("3-5日でお届けします。", "3から5日でお届けします。"),
        ("スコアは3:2でした。", "スコアは3対2でした。"),
        ("認証コードは385912です。", "認証コードはサンハチゴーキューイチニーです。"),
        ("バージョン10.15.7です。", "バージョン十点十五点七です。"),
    ],
)
def test_japanese_times_dates_spans_and_codes(
    japanese: JapaneseG2P, text: str, written: str
) -> None:
    """Bug: OpenJTalk said 9:30 as 9 and 30, a date with slashes as three numbers, 3-5日 as
    3 and the fifth, and a code after コード as an amount."""
    assert said(japanese, text) == said(japanese, written)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("Teamsで会議します。", "チームズで会議します。"),
        ("meetingの時間です。", "ミーティングの時間です。"),
        ("ChatGPTを使います。", "チャットジーピーティーを使います。"),
        ("GitHubで公開します。", "ギットハブで公開します。"),
        # a hyphen joins a word's parts without the pause OpenJTalk puts there
        ("check-inは15時です。", "チェックインは15時です。"),
        ("e-mailで送ります。", "イーメールで送ります。"),
        ("JR-Eastの駅です。", "ジェイアールイーストの駅です。"),
        # what the split at a capital or the model gets wrong
        ("SaaSとLinkedInとMcDonald's", "サースとリンクトインとマクドナルド"),
        ("ToyotaとUNIQLOとUberのapp", "トヨタとユニクロとウーバーのアプリ"),
    ],
)
def test_latin_words_openjtalk_does_not_know_are_said_in_katakana(
    japanese: JapaneseG2P, text: str, written: str
) -> None:
    """Bug: OpenJTalk spelled an English word it does not know letter by letter ("Teams" as
    ティーイーエーエムエス), and cut "check-in" with a pause, then spelled it; "SaaS" was
    サーエス, "LinkedIn" リンケッドイン, "Toyota" トイオタ, "UNIQLO" spelled, "app" アップ."""
    assert said(japanese, text) == said(japanese, written)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("Googleで検索", "グーグルで検索"),
        ("USBケーブル", "ユーエスビーケーブル"),
        ("iPhoneの設定", "アイフォンの設定"),
        ("OKです", "オーケイです"),
        (
            "iPhoneとAndroid、InstagramとBluetooth",
            "アイフォンとアンドロイド、インスタグラムとブルートゥース",
        ),
    ],
)
def test_latin_words_openjtalk_knows_keep_its_reading(
    japanese: JapaneseG2P, text: str, written: str
) -> None:
    """A word in OpenJTalk's dictionary keeps its reading, wherever it stands; an acronym stays
    spelled. Bug: before と, OpenJTalk took iPhone, Instagram and Bluetooth for the filler it
    spells (アイピーエイチオーエヌイー)."""
    assert said(japanese, text) == said(japanese, written)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("3×4=12，5 - 3 = 2。", "三乘四等于十二，五减三等于二。"),
        ("重5㎏，时速10km/h。", "重五公斤，时速十公里每小时。"),
        ("邮箱bob@qq.com。", "邮箱bob艾特qq点com。"),
        ("请访问www.qq.com。", "请访问www点qq点com。"),
        (
            "写信给kf-2@163.com或访问abc.cn/help。",
            "写信给kf杠二艾特幺六三点com或访问abc点cn斜杠help。",
        ),
        ("增长了10%~20%。", "增长了百分之十到百分之二十。"),
        ("请到3F服务台，B1F停车场。", "请到三楼服务台，负一楼停车场。"),
        # Bug: 设置>通用 (no spaces) ran on with no pause, H.265 was H 二百六十五, the span
        # into the next day lost its hyphen.
        ("打开设置>通用，H.265编码", "打开设置、通用，H点二六五编码"),
        ("今晚23:00-次日02:00维护", "今晚二十三点到次日两点维护"),
        ("点击 设置 > 账户 > 安全，a > b。", "点击 设置、账户、安全，a大于b。"),
        # A step to a Latin word (设置大于Wi-Fi), two releases (十一分之十), a comparison.
        (
            "设置＞Wi-Fi>高级，Windows 10/11，温度>30度",
            "设置、Wi-Fi、高级，Windows 10和11，温度大于30度",
        ),
        ("周一-周五，星期一~星期五营业。", "周一到周五，星期一到星期五营业。"),
        (
            "【重要】苹果/香蕉，A&B、第1名&第2名，满300-50",
            "“重要”苹果、香蕉，A and B、第一名和第二名，满三百减五十",
        ),
        ("会员¥99/月，白菜5元/斤，半天1/2天", "会员九十九元每月，白菜五元每斤，半天二分之一天"),
        ("门票12€/人，会员5$/月", "门票十二欧元每人，会员五美元每月"),
        # Bug: a square or cubic centimetre was C and then square metres (五C平方米).
        (
            "面积30cm²，体积500cm³，截面2.5mm²",
            "面积三十平方厘米，体积五百立方厘米，截面二点五平方毫米",
        ),
        ("心率72次/分，呼吸18次/分钟", "心率七十二次每分，呼吸十八次每分钟"),
        ("单价5.8万/㎡，牛肉45元/kg", "单价五点八万每平方米，牛肉四十五元每公斤"),
        ("血糖6.1mmol/L，流量5元/GB", "血糖六点一毫摩尔每升，流量五元每GB"),
        ("出现404错误，有404个错误", "出现四零四错误，有四百零四个错误"),
        ("含100GB流量+500分钟通话，增长+15%", "含一百GB流量加五百分钟通话，增长百分之十五"),
        ("方程x²+2x+1=0的解是x=-1。", "方程x的平方加二x加一等于零的解是x等于负一。"),
        ("S=πr²，√16=4，2^10=1024", "S等于派r的平方，根号十六等于四，二的十次方等于一千零二十四"),
        (
            "销售额同比↑12%，成本↓5%，¥99×2=¥198",
            "销售额同比上升百分之十二，成本下降百分之五，九十九元乘二等于一百九十八元",
        ),
        # An address keeps its dots and its @ (a brand's word inside it is still said so); a
        # Roman numeral and a building's # are said (the G2P dropped them).
        (
            "访问www.taobao.com或写信给service@huawei.com",
            "访问www点淘宝点com或写信给service艾特华为点com",
        ),
        ("Ⅱ型糖尿病，III期，3#楼", "二型糖尿病，三期，三号楼"),
        # Brands a Mandarin voice garbles in English, by their Chinese names (Nike heard as 拿地).
        ("在Nike和IKEA买的，开Tesla去McDonald's", "在耐克和宜家买的，开特斯拉去麦当劳"),
        ("请按#号键确认，按*键返回", "请按井号键确认，按星号键返回"),
        # Keys by their names; an English ordinal (st was read as its letters).
        ("按Ctrl+C复制，1st专辑", "按Control加C复制，第一专辑"),
        # An item's count: the sign was dropped (可乐二).
        ("可乐×2，汉堡×1", "可乐乘二，汉堡乘一"),
        # Stars as a rating (dropped unread).
        ("评分4.8★，好评★★★★☆，差评☆☆☆", "评分四点八星，好评四星，差评零星"),
        # A 2 between capitals is "to" (B二B).
        ("做B2B和O2O业务", "做B to B和O to O业务"),
        ("水是H2O，不是H2S", "水是H二O，不是H二S"),
        # An address's part that is no word, spelled (espeak-ng read icbc as "ikbk").
        ("登录www.icbc.com.cn", "登录www点ICBC点com点cn"),
        # A timestamp: its T and Z were letters.
        ("2026-12-05T14:30:00+08:00开始", "二零二六年十二月五日 十四点半 UTC加八开始"),
        # Per a unit or a measure word (the slash was unread or a pause; g/cm³ was 立方米).
        (
            "25mg/kg，1.2g/cm³，5L/min，每kg，1片/次，60公里/小时",
            "二十五毫克每公斤，一点二克每立方厘米，五升每分钟，每公斤，一片每次，六十公里每小时",
        ),
        # A comparison or a tolerance after a word, which the G2P dropped (血糖七).
        (
            "空腹血糖<7.0，年龄≥18岁，>60岁老人，25±2℃，√2≈1.414",
            "空腹血糖小于七点零，年龄大于等于十八岁，大于六十岁老人，二十五正负二度，根号二约等于一点四一四",
        ),
    ],
)
def test_mandarin_signs_and_units_are_read(mandarin: MandarinG2P, text: str, written: str) -> None:
    """Bug: the Mandarin G2P dropped the signs of arithmetic, @, ~ and ㎏ unread (three times
    four equals twelve was 三四十二), read a floor's F as a letter (3F), said a price per
    month (99元/月, 12€/人) with a pause for the slash, not 每, and read x² as x二 (x²+2x+1 was
    x二二x加一).
    """
    assert said(mandarin, text) == said(mandarin, written)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("プランAとプランBです。", "プランエーとプランビーです。"),
        ("誤差は±0.5、血糖値<7.0です。", "誤差はプラスマイナス0.5、血糖値ショーナリ7.0です。"),
        # A unit per a unit (kg after the slash was ク), and micrograms (spelled).
        ("25mg/kg、110mg/dL、2mcg", "25mgパーキログラム、110mgパーデシリットル、2マイクログラム"),
        # Per a time, 毎 (パー時間 before).
        ("時速60km/h、風速5m/s、5L/min", "時速60km毎時、風速5m毎秒、5リットル毎分"),
        ("血糖値6.1mmol/L、5円/GB", "血糖値6.1ミリモルパーリットル、1ギガバイトあたり5円"),
        ("404エラー、ポート8080", "ヨンゼロヨンエラー、ポートハチゼロハチゼロ"),
        ("30s待って、10s以内", "30秒待って、10秒以内"),
        (
            "海外は+44 7911 123456へ",
            "海外はプラスヨンヨンのナナキューイチイチのイチニーサンヨンゴーロクへ",
        ),
        ("ビタミンCが多い。", "ビタミンシーが多い。"),
        ("重さは5kgで容量は3Lです。", "重さは5キログラムで容量は3リットルです。"),
        (
            "面積は30cm²、体積は500cm³です。",
            "面積は30 平方センチメートル、体積は500 立方センチメートルです。",
        ),
        (
            "2.5MPaで5ms、5ftと3lbs、1galです。",
            "2.5メガパスカルで5ミリ秒、5フィートと3ポンド、1ガロンです。",
        ),
        ("電池は5000mAhです。", "電池は5000ミリアンペアアワーです。"),
        ("1+1=2です。", "1たす1イコール2です。"),
        ("1/3と10%~20%です。", "3分の1と10%から20%です。"),
        ("24/7です。", "24 7です。"),
        ("50%オフです。", "50パーセントオフです。"),
        ("www.example.comへ", "wwwドットexampleドットcomへ"),
        ("3Fの会議室、B1Fの駐車場", "3階の会議室、地下1階の駐車場"),
        ("3:00PMと9amです。", "午後3時と午前9時です。"),
        ("12/24(火)に届きます。", "12月24日(火)に届きます。"),
        ("Ver.2.0とvol.3と#1です。", "バージョン2.0とボリューム3とナンバー1です。"),
        ("¥5,999〜、12,580pt、-3℃〜5℃", "5999円から、12580ポイント、マイナス3度から5度"),
        ("1,000円〜2,000円です。", "1000円から2000円です。"),
        ("100 USDとRMB 300です。", "100米ドルと300人民元です。"),
        ("¥1,000円と$5ドルです。", "1000円と5ドルです。"),
        ("½カップと2½時間です。", "2分の1カップと2と2分の1時間です。"),
        ("設定 > アカウントです。", "設定、アカウントです。"),
        ("月〜金の14時〜16時", "月曜から金曜の14時から16時"),
        ("3-2で勝ちました。", "3対2で勝ちました。"),
        ("月/水/金に営業", "月曜、水曜、金曜に営業"),
        ("月曜日～金曜日、東京〜大阪、ね〜", "月曜日から金曜日、東京から大阪、ね〜"),
        ("毎週月・水・金の10時から", "毎週月曜、水曜、金曜の10時から"),
        ("営業時間はAM9:00〜PM6:00です。", "営業時間は午前9時から午後6時です。"),
        ("前年比↑12%、経費↓5%", "前年比上昇12%、経費下降5%"),
        ("月額980円/月、年額12,000円/年", "月額980円、年額12000円"),
        ("バージョン2.0.1です。", "バージョン二点ゼロ点一です。"),
        # Bug: ＋ was たす and ▲ (an account's minus) nothing, (月)〜(金) lost its から, WIFI
        # was spelled.
        ("＋500円、▲300円", "プラス500円、マイナス300円"),
        ("営業は(月)〜(金)、WIFIあり", "営業は月曜から金曜、ワイファイあり"),
    ],
)
def test_japanese_letters_units_and_signs_are_read(
    japanese: JapaneseG2P, text: str, written: str
) -> None:
    """Bug: a letter alone was left out ("プランB" was プラン, "ビタミンC" ビタミン), a unit
    after a number dropped or spelled ("3L" was 3, "5kg" ゴケージー), +, =, / and ~ unread,
    "50%オフ" was 50 off, "3F" (the third floor) lost its F, 3:00PM was 3時ピーエム, 12/24(火)
    24分の12, Ver.2.0 バー、2.0, a tilde after ℃ or 円 or after a price (from) a pause,
    "pt" spelled, "cm²" シー and then square metres, and MPa, ms, ft, lbs and gal spelled."""
    assert said(japanese, text) == said(japanese, written)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("2人です。", "フタリです。"),
        ("10000円です。", "イチマンエンです。"),
        ("気温は-5℃です。", "気温はマイナスゴドです。"),
        ("気温は25°Cです。", "気温はニジューゴドです。"),
    ],
)
def test_openjtalk_reads_japanese_numbers_in_their_context(
    japanese: JapaneseG2P, text: str, written: str
) -> None:
    """Bug: the romanizer wrote each run of digits in kanji alone before OpenJTalk saw the
    words around it: "2人" was ニ ヒト, "10000円" イチ マンマル, "1.5倍" lost its point; and
    "-5℃" lost its minus and its degrees."""

    def flat(text: str) -> str:
        return said(japanese, text).replace(" ", "")

    assert flat(text) == flat(written)


def test_a_japanese_decimal_keeps_its_point(japanese: JapaneseG2P) -> None:
    assert said(japanese, "1.5倍").replace(" ", "").startswith("iʔteɴɡo")
    assert said(japanese, "0.5秒").replace(" ", "").startswith("ɾeːteɴɡo")


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("ご質問はQ&Aページへ", "ご質問はキューアンドエーページへ"),
        ("研究&開発、R&D", "研究アンド開発、アールアンドディー"),
        ("3×4は12、8÷2は4", "3カケル4は12、8ワル2は4"),
        ("月額980円+税、送料無料+ポイント", "月額980円プラス税、送料無料プラスポイント"),
        # Keys by their names, joined by プラス (not たす); English ordinals.
        ("Ctrl+CとAlt+F4", "コントロールプラスシーとオルトプラスエフヨン"),
        ("1stアルバム、25th Anniversary", "ファーストアルバム、ダイニジューゴ・アニバーサリー"),
        # An address's signs by name, and a part that is no word spelled (e2k: abc アブ).
        (
            "bob@abc.comか、support@xyz.co.jpまで",
            "bobアットエービーシードットcomか、supportアットエックスワイゼットドットシーオードットジェーピーまで",
        ),
        # Stars as a rating (dropped unread); a word before them keeps its own ほし.
        ("評価4.8★、レビュー★★★★☆", "評価・ホシ4.8、レビュー・ホシヨッツ"),
        ("2026-12-05T10:00Zに開始", "2026年12月5日10時ユーティーシーに開始"),
        ("B2BとB2Cのビジネス", "ビートゥービーとビートゥーシーのビジネス"),
        ("水はH2Oです", "水はエイチツーオーです"),
        ("App Storeのアプリ", "アップストアのアプリ"),
        ("PorscheとAudi", "ポルシェとアウディ"),
        ("郵便番号は〒150-0001です。", "郵便番号は150-0001です。"),
    ],
)
def test_japanese_symbols_openjtalk_says_as_words_are_said(
    japanese: JapaneseG2P, text: str, written: str
) -> None:
    """Bug: a symbol OpenJTalk reads as a word (the ampersand as アンド, the times sign as
    カケル) was passed on as the mark itself, which the romanizer drops: "Q&A" was キュー エー.
    (Compared without the spaces between words, which follow OpenJTalk's word cuts.)"""
    assert said(japanese, text).replace(" ", "") == said(japanese, written).replace(" ", "")


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (
            "ご注文番号はSF1234567890です。",
            "ご注文番号はエスエフイチニーサンヨンゴーロクナナハチキューゼロです。",
        ),
        ("便名はCA1234です。", "便名はCAイチニーサンヨンです。"),
        # The number sign after 番号 is dropped: 番号 says it (ナンバー before a number else).
        ("予約番号は#A1234です。", "予約番号はAイチニーサンヨンです。"),
        ("パスワードはabc12345です。", "パスワードはエービーシーイチニーサンヨンゴーです。"),
        ("クーポンコードはSAVE-20です。", "クーポンコードはエスエーブイイーハイフンニーゼロです。"),
        ("IDは3つあります。", "IDは3つあります。"),
        ("認証コードは、483920です。", "認証コードは、ヨンハチサンキューニーゼロです。"),
        ("ご注文番号は：12345678です。", "ご注文番号は：イチニーサンヨンゴーロクナナハチです。"),
        ("電話番号の下4桁は5678ですか。", "電話番号の下4桁はゴーロクナナハチですか。"),
        # A product's number after its name; a count and a year stay numbers.
        ("Office 365とボーイング737", "Office サンロクゴーとボーイングナナサンナナ"),
        ("Office 2019、Top 100", "Office 2019、Top 100"),
    ],
)
def test_japanese_codes_with_letters_are_read_one_by_one(
    japanese: JapaneseG2P, text: str, written: str
) -> None:
    """Bug: digits after a letter were one number (SF1234567890 as twelve billion and more,
    CA1234 as one thousand two hundred…), a password's letters read as a word (abc12345 as アブ
    and ten thousand…), and # before a letter left out."""
    assert said(japanese, text) == said(japanese, written)


def test_a_japanese_price_with_its_scale_after_the_sign(japanese: JapaneseG2P) -> None:
    """Bug: "¥5.5万" was 5.5円 and then 万."""
    assert said(japanese, "価格は¥5.5万です。") == said(japanese, "価格は5.5万円です。")


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("料金は980円/月です。", "料金は月980円です。"),
        ("5GBのプラン、20GB/月です。", "5ギガバイトのプラン、月20ギガバイトです。"),
        ("1泊10,000円/人です。", "1泊1人10000円です。"),
        ("会費は12€/人です。", "会費は1人12ユーロです。"),
        ("2錠/回を服用。", "1回2錠を服用。"),
        ("心拍数は72回/分です。", "心拍数は1分あたり72回です。"),
        ("牛肉は500円/kg、3,000円/m²です。", "牛肉は1kgあたり500円、1m²あたり3000円です。"),
        ("血圧は120/80mmHgです。", "血圧は120の80ミリエイチジーです。"),
        ("月/水/金、3/月曜日", "月曜、水曜、金曜、3/月曜日"),
    ],
)
def test_japanese_price_per_month_says_what_it_is_counted_by_first(
    japanese: JapaneseG2P, text: str, written: str
) -> None:
    """Bug: "980円/月" was 980円、ツキ (a pause, then the moon), "72回/分" 72回、ワケ, blood
    pressure ran its numbers together with mmHg spelled, and 5GB was the network 5G and a B."""
    assert said(japanese, text) == said(japanese, written)


def test_japanese_formulas_are_read(japanese: JapaneseG2P) -> None:
    """Bug: x² was エックス and a symbol dropped, "=" before a minus and ^ and √ unread."""
    assert said(japanese, "x²+2x+1=0の解はx=-1、√16=4、2^10") == said(
        japanese, "xの2乗たす2xたす1イコール0の解はxイコールマイナス1、ルート16イコール4、2の10乗"
    )


def test_the_japanese_postal_mark_is_said_once(japanese: JapaneseG2P) -> None:
    """〒 is ユービンバンゴー, which was left out; after 郵便番号 it is not said twice."""
    assert said(japanese, "〒150-0001です。").startswith("jɯːbʲimbaŋɡoː")
    assert said(japanese, "郵便番号は〒150-0001です。").count("baŋɡoː") == 1


def test_japanese_postal_codes_and_addresses_are_read_out_with_no(
    japanese: JapaneseG2P,
) -> None:
    """A postal code digit by digit with の at its hyphen: OpenJTalk read 100 as イチマルマル
    and 0001 as ゼロゼロゼロイチ in one code. An address's block, lot and number it read digit
    by digit with the hyphens dropped (ロク イチゼロ イチ), and two of them as one run (千代田1-1,
    イチ イチ): they are said with の (ろくのじゅうのいち). What is left of a span is no address."""
    assert numbers.japanese("郵便番号100-0001") == "郵便番号イチゼロゼロのゼロゼロゼロイチ"
    assert numbers.japanese("〒150-0001です。") == "〒イチゴーゼロのゼロゼロゼロイチです。"
    assert numbers.japanese("六本木6-10-1") == "六本木6の10の1"
    assert numbers.japanese("千代田1-1、1丁目2-3") == "千代田1の1、1丁目2の3"
    assert numbers.japanese("第1-3章、1-2ページ") == "第1から3章、1から2ページ"
    assert said(japanese, "千代田1-1").replace(" ", "").endswith("iʨinoiʨi")


def test_latin_letters_next_to_a_number_are_not_units() -> None:
    """A regression of misaki's text normalizer, which turned "iPhone" into "iP小时one"."""
    assert numbers.chinese("iPhone的电池") == "iPhone的电池"


def test_plain_chinese_is_what_kokoro_was_trained_with(mandarin: MandarinG2P) -> None:
    """Without numbers or Latin words, the phonemes are misaki's ZHG2P (no version: v1.0's)."""
    from misaki.zh import ZHG2P

    text = "您好，欢迎致电客服中心。今天天气很好！我们去公园吧？"
    ours = "".join(w.phonemes for w in mandarin(text))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ours == ZHG2P()(text)[0]


@pytest.mark.parametrize(
    ("text", "word", "pinyin"),
    [
        ("请按时还款。", "还款", "huan2 kuan3"),
        ("请长按图标。", "长按", "chang2 an4"),
        ("点击重置密码。", "重置", "chong2 zhi4"),
        ("请点击重试。", "重试", "chong2 shi4"),
        ("重新下载。", "下载", "xia4 zai4"),  # the standard reading, which pypinyin has
        ("页面会弹出窗口。", "弹出", "tan2 chu1"),
        ("把音量调高。", "调高", "tiao2 gao1"),
        ("您得先登录。", "得", "dei3"),
        ("时间比较长。", "长", "chang2"),
        ("请您认真地填写。", "地", "de5"),
        ("他跑得很快。", "得", "de5"),
        ("您说得对。", "说得对", "shuo1 de5 dui4"),
        ("天气变得越来越冷了。", "变得", "bian4 de5"),
        ("您都得排队。", "得", "dei3"),
        ("你得多喝水。", "得", "dei3"),
        ("这个得多少钱？", "得", "dei3"),
        ("请把音量调到最大。", "调", "tiao2"),
        ("请调到静音模式。", "请调", "qing3 tiao2"),
        ("请把头发吹干。", "吹干", "chui1 gan1"),
        ("用毛巾把手机擦干。", "干", "gan1"),
        ("请系好安全带。", "系好", "ji4 hao3"),
        ("晚上睡不着。", "睡不着", "shui4 bu5 zhao2"),
        ("包裹已到达漯河，下一站长治。", "漯河", "luo4 he2"),
        ("包裹已到达漯河，下一站长治。", "长治", "chang2 zhi4"),
        ("曾先生您好，单女士请稍等。", "曾", "zeng1"),
        ("曾先生您好，单女士请稍等。", "单", "shan4"),
        ("仇先生您好。", "仇先生", "qiu2 xian1 sheng1"),
        ("我姓单。", "单", "shan4"),
        ("请您数一下现金。", "数一下", "shu3 yi1 xia4"),
        ("请把位置空出来。", "空", "kong4"),
        ("帮我盛一碗饭。", "盛", "cheng2"),
        ("请切换到英文。", "切换", "qie1 huan4"),
        ("老师教我们唱歌。", "教", "jiao1"),
        ("衣服脏了，地板也脏。", "脏", "zang1"),
        ("这只猫很可爱。", "只", "zhi1"),
        ("请看第二行。", "第二行", "di4 er4 hang2"),
        ("这是一行代码。", "一行", "yi1 hang2"),
        ("具体金额以实际到账为准。", "为准", "wei2 zhun3"),
        ("您的余额为一百元。", "为", "wei2"),
        ("额度已调整为五万元。", "为", "wei2"),
        ("逾期视为放弃。", "视为", "shi4 wei2"),
        ("喂，您好。", "喂", "wei2"),
        ("您本期应还两千元，已还一千元。", "应还", "ying1 huan2"),
        ("您本期应还两千元，已还一千元。", "已还", "yi3 huan2"),
        ("请按时还钱。", "还钱", "huan2 qian2"),
        ("请到附近支行办理跨行转账。", "支行", "zhi1 hang2"),
        ("请到附近支行办理跨行转账。", "跨行", "kua4 hang2"),
        ("本月通话时长五小时。", "时长", "shi2 chang2"),
        ("请先量一下体温。", "量一下", "liang2 yi1 xia4"),
        ("到朝阳公园门口。", "朝阳", "chao2 yang2"),
        ("我们会尽快地为您处理。", "地为", "de5 wei4"),
        ("默默地支持您。", "默默地", "mo4 mo4 de5"),
        ("这个得付多少钱？", "得付", "dei3 fu4"),
        ("得花三天时间。", "得花", "dei3 hua1"),
        ("那得看情况。", "那得", "na4 dei3"),
        # and where pypinyin was right, it stays so
        ("这是为您准备的。", "为", "wei4"),
        ("为保障您的安全，请勿外传。", "为", "wei4"),
        ("专门为老人设计。", "为", "wei4"),
        ("他得了第一名。", "得", "de2"),
        ("他长大了。", "长大", "zhang3 da4"),
        ("这个包裹很重。", "重", "zhong4"),
        ("这是一块地。", "地", "di4"),
        ("各地都有网点，目的地为上海。", "各地", "ge4 di4"),
        ("还有问题吗？还好。", "还有", "hai2 you3"),
        ("你得多少分？", "得", "de2"),
        ("考试得一百分。", "得", "de2"),
        ("他获得很高的评价。", "获得", "huo4 de2"),
        ("他被调到北京工作。", "调到", "diao4 dao4"),
        ("这活我来干。", "干", "gan4"),
        ("这只是建议。", "只是", "zhi3 shi4"),
        ("一行人到了。", "一行", "yi1 xing2"),
        ("他的心脏很好。", "心脏", "xin1 zang4"),
        ("他喂猫。", "喂", "wei4"),
        ("请您一切放心。", "一切", "yi1 qie4"),
        ("我曾经去过。", "曾经", "ceng2 jing1"),
        ("请下单，单价五元。", "单价", "dan1 jia4"),
    ],
)
def test_mandarin_words_with_two_readings_are_read_as_meant(
    mandarin: MandarinG2P, text: str, word: str, pinyin: str
) -> None:
    """Bug: pypinyin read 还款 (repay) hái kuǎn, 长按 (long-press) zhǎng àn, 重置 (reset) zhòng
    zhì, 弹出 dàn chū, and 得 in 您得先登录 dé: what an app's support agent says all day, heard
    as other words. And 得 was dé wherever it joins a verb to its result (您说得对, 跑得很快),
    调到最大 diào, 吹干 gàn, 系好 xì (jieba cut 请系|好), 睡不着 zhe, 切换 (switch) qiè, 教 (teach)
    jiào, 脏 (dirty) zàng, 这只猫 zhǐ, 第二行 xíng, and 为 (be, as) in 以到账为准 and 余额为 wèi;
    应还 (due) hái, 支行 (branch) xíng, 通话时长 zhǎng, 量体温 (take) liàng, 朝阳 zhāo, 地 (-ly)
    dì where jieba joined it to the next word (尽快|地为|您), 得 (it takes) dé in 得付 and 那得."""
    from misaki.zh import ZHG2P

    found = next(w for w in mandarin(text) if w.text == word)
    expected = "".join(ZHG2P.py2ipa(p) for p in pinyin.split()).replace("\u032f", "")
    assert found.phonemes == expected


def test_latin_words_in_chinese_are_read_as_english(
    mandarin: MandarinG2P, lexicon: Lexicon
) -> None:
    words = mandarin("请打开WiFi设置")
    assert texts(words) == ["请", "打开", "WiFi", "设置"]
    wifi = next(w for w in words if w.text == "WiFi")
    # "WiFi" is not in the lexicon, "Wi-Fi" is: the camel-case parts joined by a hyphen.
    assert wifi.phonemes == lexicon.phonemes("Wi-Fi") == "wˈIfˌI"
    # Bug: WIFI in capitals, as Chinese text often writes it, was spelled W-I-F-I, and VS
    # (湖人VS勇士) was read as the word "viz".
    assert lexicon.phonemes("WIFI") == wifi.phonemes
    assert lexicon.phonemes("VS") == lexicon.spell("VS")
    # Bug: capitals before a code's digits were read as a word: a flight's MU5101 as "mew".
    flight = next(w for w in mandarin("您的航班MU5101已登机") if w.text == "MU")
    assert flight.phonemes == lexicon.spell("MU") != lexicon.phonemes("MU")
    # Bug: id, vip and app, which Mandarin spells, were read as the English words.
    for word in ("id", "vip", "APP"):
        [found] = [w for w in mandarin(f"请输入{word}号") if w.text == word]
        assert found.phonemes == lexicon.spell(word) != lexicon.phonemes(word)
    iphone = mandarin("iPhone 15")
    assert texts(iphone) == ["iPhone", "十五"]
    assert iphone[0].phonemes == "ˈI fˈOn"  # "eye phone", not the letters i-P-h-o-n-e


def test_unknown_acronyms_are_spelled(lexicon: Lexicon) -> None:
    assert lexicon.phonemes("USB") == lexicon.spell("USB") == "jˈuˈɛsbˈi"
    assert lexicon.phonemes("ChatGPT") == "ʧˈæt ʤˈipˈitˈi"


def test_plurals_and_names_the_lexicon_lacks_are_read_not_spelled(lexicon: Lexicon) -> None:
    """Bug: "apps", "tickets", "emails" (only their singulars are in the lexicon) and names it
    lacks (Samsung, Kevin, Spotify) were spelled letter by letter in Chinese text."""
    from voxlite.service.engines.kokoro.tokens import load_vocab

    assert lexicon.phonemes("apps") == lexicon.phonemes("app") + "s"
    assert lexicon.phonemes("emails") == lexicon.phonemes("email") + "z"
    assert lexicon.phonemes("boxes") == lexicon.phonemes("box") + "ᵻz"
    vocab = load_vocab()
    for name in ("Samsung", "Kevin", "Spotify", "Starbucks"):
        said = lexicon.phonemes(name)
        assert said != lexicon.spell(name)
        assert set(said) <= set(vocab), name
    assert lexicon.phonemes("Samsung") == "sˈæmsʌŋ"
    # a word in capitals that no dictionary has is still spelled: KFC, ZTE
    assert lexicon.phonemes("KFC") == lexicon.spell("KFC")


def test_chinese_brands_in_latin_letters_are_said_by_their_chinese_names(
    mandarin: MandarinG2P, japanese: JapaneseG2P
) -> None:
    """Bug: "HUAWEI Mate 60" spelled H-U-A-W-E-I; Xiaomi was キシャミ in Japanese."""
    assert said(mandarin, "HUAWEI Mate 60和Xiaomi 14，用Alipay支付") == said(
        mandarin, "华为 Mate 60和小米 14，用支付宝支付"
    )
    assert next(w for w in mandarin("华为") if w.text == "华为").phonemes == said(mandarin, "滑围")
    assert said(japanese, "Xiaomiのスマホ") == said(japanese, "シャオミのスマホ")


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        ("担当の方にお繋ぎします。", "担当のかたにお繋ぎします。"),
        ("初めての方、ご予約の方はこちら。", "初めてのかた、ご予約のかたはこちら。"),
        ("こちらの方が安いです。", "こちらのほうが安いです。"),
        ("このカレーは辛いですか。", "このカレーはからいですか。"),
        ("仕事が辛いです。", "仕事がつらいです。"),
        ("お手数ですが、ご確認ください。", "おてすうですが、ご確認ください。"),
        ("本人確認を行っております。", "本人確認をおこなっております。"),
        ("19時〜21時の間にお届けします。", "19時から21時のあいだにお届けします。"),
        ("明日は晴れのち曇りです。", "明日ははれのち曇りです。"),
        ("金利は年0.5%、今年3月から。", "金利はねん0.5%、今年3月から。"),
        ("月末までにお振込みください。", "げつまつまでにお振込みください。"),
        ("20歳未満の方、120歳", "ハタチ未満のかた、120歳"),
        # After は or a colon too: はたち there was read as the particle は and たち.
        ("参加条件は20歳以上です。対象：20歳", "参加条件はハタチ以上です。対象：ハタチ"),
        ("3-5営業日以内に発送します。", "3から5営業日以内に発送します。"),
        # A span before a dose, a unit or an age (OpenJTalk dropped the hyphen: 12錠).
        ("1回1-2錠、100-200ml、20-30代", "1回1から2錠、100から200ml、20から30代"),
        # An address's block, lot and number; a seat's and a size's letter; a phone's keys; a
        # number sign after 番号.
        ("六本木6-10-1、座席は23A、2Lサイズ", "六本木6の10の1、座席は23エー、2エルサイズ"),
        (
            "#を押して、*キー、注文番号は#12345",
            "シャープを押して、アスタリスクキー、注文番号は12345",
        ),
        # A table in a document; the front stays おもて.
        ("下の表と表1を参照。表と裏", "下のヒョーとヒョー1を参照。表と裏"),
        # A long press, not a lintel (なげし); a menu's steps, not ダイナリ; two releases.
        ("10秒間長押しして、設定＞Wi-Fi＞詳細", "10秒間ナガオシして、設定、Wi-Fi、詳細"),
        ("Windows 10/11に対応", "Windows 10と11に対応"),
        # An ellipsis between words: its pause (the romanizer dropped it, えっと少々 ran on).
        ("えっと…少々、そうですね...では", "えっと、少々、そうですね、では"),
    ],
)
def test_japanese_words_are_read_in_the_sense_meant(
    japanese: JapaneseG2P, text: str, meant: str
) -> None:
    """Bug: 担当の方 (the person in charge) was タントーノホー (the side), カレーは辛い
    ツライ (painful), お手数ですが オテカズ, 手続きを行って イッテ (go), 19時の間 ジュートキノマ
    (the hour lost), 晴れのち ハレレノチ, 年0.5% トシ, 月末 ツキマツ, 3-5営業日 サン ゴ."""
    assert said(japanese, text) == said(japanese, meant)


def test_a_web_address_is_read_without_its_scheme(mandarin: MandarinG2P) -> None:
    """Bug: "https://" was spelled and its slashes said (艾其题题皮艾斯 斜杠斜杠)."""
    assert said(mandarin, "访问 https://help.example.com/refund") == said(
        mandarin, "访问 help.example.com/refund"
    )


def test_a_word_in_capitals_the_lexicon_reads_as_a_name_is_spelled(lexicon: Lexicon) -> None:
    """Bug: "IT部门" was read "it", "ID" as "id"; OK, NASA and SIM stay words."""
    assert lexicon.phonemes("IT") == lexicon.spell("IT")
    assert lexicon.phonemes("ID") == lexicon.spell("ID")
    assert lexicon.phonemes("It") == lexicon.phonemes("it") == "ɪt"
    assert lexicon.phonemes("OK") == "ˌOkˈA"
    assert lexicon.phonemes("NASA") == "nˈæsə"


def test_chinese_words_keep_their_text(mandarin: MandarinG2P) -> None:
    words = mandarin("iPhone 15的价格是¥25.50。")
    assert texts(words) == ["iPhone", "十五", "的", "价格", "是", "二十五元", "五角"]
    assert words[-1].phonemes == "."


def test_a_han_character_with_no_mandarin_reading_is_named_not_a_crash(
    mandarin: MandarinG2P,
) -> None:
    """Bug: 你好㐂世界。 failed Synthesize with UNKNOWN and a traceback in the server's log:
    misaki's word2ipa raises on a Han character pypinyin has no reading for."""
    assert mandarin.no_reading("你好㐂世界。") == "㐂"
    assert mandarin.no_reading("桛") == "桛"  # made in Japan: no Mandarin reading
    assert mandarin.no_reading("你好，世界。iPhone 15") is None
    with pytest.raises(InvalidRequest, match=r"'㐂' \(U\+3402\), a Han character with no"):
        mandarin("你好㐂世界。")


def test_han_characters_beyond_the_first_plane_are_read(mandarin: MandarinG2P) -> None:
    """Bug: a character of extension B or later was left out unread: 𨭎 (xǐ, seaborgium), as a
    chemistry text writes it, came out as nothing."""
    words = mandarin("𨭎是一种元素。")
    assert texts(words)[0] == "𨭎"
    assert words[0].phonemes == mandarin("洗")[0].phonemes  # also xǐ
    assert mandarin.no_reading("𨭎") is None


def said(g2p: G2P, text: str) -> str:
    return "".join(w.phonemes for w in g2p(text))


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("β受体阻滞剂", "贝塔受体阻滞剂"),
        ("γ射线和ΔT", "伽马射线和德尔塔T"),
        ("电阻为5Ω，延迟3µs。", "电阻为5欧姆，延迟3微秒。"),
        ("①首先，⑵其次", "1首先，2其次"),
        ("我喝了café。", "我喝了cafe。"),
    ],
)
def test_what_the_mandarin_g2p_left_out_is_read(
    mandarin: MandarinG2P, text: str, written: str
) -> None:
    """Bug: β受体阻滞剂 was spoken as 受体阻滞剂; Greek letters, circled numbers, units written
    with Ω or µ, and accented letters (é) were left out unread."""
    assert said(mandarin, text) == said(mandarin, written)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("β受容体", "ベータ受容体"),
        ("抵抗は5Ωです。", "抵抗は5オームです。"),
        ("カフェはcaféです。", "カフェはcafeです。"),
    ],
)
def test_what_the_japanese_g2p_left_out_is_read(
    japanese: JapaneseG2P, text: str, written: str
) -> None:
    """Bug: OpenJTalk left out β and Ω, and spelled café as C, A, F."""
    assert said(japanese, text) == said(japanese, written)


def test_japanese_money_and_thousands(japanese: JapaneseG2P) -> None:
    """pyopenjtalk reads "2,500" as two numbers and drops "¥": both are rewritten first."""

    def said(text: str) -> str:
        return "".join(w.phonemes for w in japanese(text))

    assert said("価格は¥2,500です。") == said("価格は2500円です。")
    assert numbers.japanese("¥2,500") == "2500円"


def test_a_kanji_openjtalk_lacks_does_not_fail(japanese: JapaneseG2P) -> None:
    """A regression: pyopenjtalk-plus asks Sudachi to read a kanji its dictionary lacks, and
    Sudachi's dictionary is not installed (ModuleNotFoundError); OpenJTalk alone skips it."""
    assert "".join(w.phonemes for w in japanese("龘です。")) == "desɨ."


def test_japanese_words_are_phrases_with_only_a_written_name(japanese: JapaneseG2P) -> None:
    """The romanizer names no words of its own: a phrase has no text (pieces are cut at the
    spaces between phrases, tokens.py), only the part of the text it reads."""
    words = japanese("お電話ありがとうございます。")
    assert japanese.words
    assert texts(words) == []
    assert "".join(w.phonemes for w in words) == "o deɴβa aɾʲiɡatoː ɡoʣaimasɨ."
    assert names(words) == ["お電話", "ありがとうございます"]


def test_pieces_stay_within_the_budget_and_cut_at_punctuation(mandarin: MandarinG2P) -> None:
    vocab = load_vocab()
    text = (
        "您好，欢迎致电客服中心。请问有什么可以帮您的吗？我们今天的营业时间是上午九点到下午六点。"
    )
    words = mandarin(text)
    pieces = cut_pieces(words, vocab, 48)
    assert len(pieces) > 1
    assert all(0 < len(p.ids) <= 48 for p in pieces)
    # Every word is spoken once, in order.
    assert [w.text for p in pieces for w in p.words if w.text] == texts(words)
    # The first piece ends at punctuation, which keeps it at least half full.
    assert pieces[0].words[-1].is_break
    for piece in pieces:
        assert [b - a for a, b in piece.spans] == [
            len([c for c in w.phonemes if c in vocab]) for w in piece.words
        ]


def test_a_word_longer_than_a_piece_is_cut_inside(mandarin: MandarinG2P) -> None:
    pieces = cut_pieces(mandarin("营业时间"), load_vocab(), 4)
    assert all(len(p.ids) <= 4 for p in pieces)
    assert [w.text for p in pieces for w in p.words if w.text] == ["营业时间"]


def spoken_tokens(pieces: list[Piece]) -> int:
    space = load_vocab()[" "]
    return sum(1 for p in pieces for i in p.ids if i != space)


def test_soft_budgets_cut_the_first_pieces_shorter_at_words(mandarin: MandarinG2P) -> None:
    """Issue 27: a segment's first pieces, when its listener has little audio in hand, are cut
    to smaller budgets, each at a gap between words with at least CUT_SIDE_TOKENS (and half its
    budget) on either side up to the next mark; a word alone over its soft budget goes whole,
    and the hard budget still holds."""
    vocab = load_vocab()
    words = mandarin("我帮您查到了三家附近的川菜馆，最近的一家步行大约五分钟，晚上十点关门。")
    soft = (12, 24)
    pieces = cut_pieces(words, vocab, 64, soft=soft)
    assert [w.text for p in pieces for w in p.words if w.text] == texts(words)
    assert len(pieces[0].ids) < len(cut_pieces(words, vocab, 64)[0].ids)
    assert all(len(p.ids) <= 64 for p in pieces)
    for k, limit in enumerate(soft):
        if not pieces[k].words[-1].is_break:  # cut between words
            least = max(limit / 2, CUT_SIDE_TOKENS)
            assert spoken_tokens(pieces[k : k + 1]) >= least
            rest = itertools.takewhile(lambda p: not p.words[-1].is_break, pieces[k + 1 :])
            to_mark = [*rest, next(p for p in pieces[k + 1 :] if p.words[-1].is_break)]
            assert spoken_tokens(to_mark) >= least
    # Never inside a word: each piece ends with one, a space after one, or a mark.
    assert all(p.words[-1].text or p.words[-1].phonemes.strip(" ,.") == "" for p in pieces)
    # A piece that goes on from a cut between words says so (it emits less of its lead).
    assert not pieces[0].after_word
    assert [p.after_word for p in pieces[1:]] == [
        not before.words[-1].is_break for before in pieces[:-1]
    ]
    assert any(p.after_word for p in pieces)
    assert cut_pieces(words, vocab, 64) == cut_pieces(words, vocab, 64, soft=(64,))
    (whole,) = cut_pieces(mandarin("营业时间"), vocab, 64, soft=(4,))
    assert [w.text for w in whole.words] == ["营业时间"]


@pytest.mark.parametrize(
    "text", ["欢迎使用语音合成服务。", "请问有什么可以帮您？", "图书馆晚上十点闭馆。"]
)
def test_a_short_sentence_is_not_cut_between_words(mandarin: MandarinG2P, text: str) -> None:
    """Bug: the first piece's soft budget cut short sentences as 欢迎使用语音 | 合成服务 and
    请问有什么 | 可以帮您: each side is spoken as a sentence of its own, and Whisper heard
    语言对诚服务 (bench.kokoro_chunks --seeds). A clause with under twice CUT_SIDE_TOKENS goes
    whole."""
    (whole,) = cut_pieces(mandarin(text), load_vocab(), 64, soft=(24, 40))
    assert "".join(w.text for w in whole.words) == text.rstrip("。？")


def test_japanese_pieces_are_cut_between_phrases(japanese: JapaneseG2P) -> None:
    """Particles and endings stay with the word before them, honorific prefixes with the
    word after: a piece cut for the first audio ends at a phrase, not inside one."""

    def phrases(text: str) -> list[str]:
        return [w.phonemes for w in japanese(text) if w.phonemes != " "]

    groups = phrases("猫が魚を食べました。お届けします。")
    assert groups == ["neko ɡa", "sakana o", "tabe maɕita.", "o todoke ɕi masɨ."]
    groups = phrases("明後日にはご注文をお届けします。")
    assert groups[1:] == ["ɡo ʨɨːmoɴ o", "o todoke ɕi masɨ."]


def test_a_bad_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="token budget"):
        cut_pieces([], load_vocab(), 511)
    with pytest.raises(ValueError, match="token budget"):
        cut_pieces([], load_vocab(), 64, soft=(0,))


def segments(text: str) -> list[str]:
    segmenter = Segmenter()
    return [*segmenter.push(text), *segmenter.flush()]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # No spaces: 。！？ cut at once; the first clause goes alone at ，.
        (
            "您好，欢迎致电客服中心。请问有什么可以帮您的吗？好的！",
            ["您好，", "欢迎致电客服中心。", "请问有什么可以帮您的吗？", "好的！"],
        ),
        (
            "お電話ありがとうございます。少々お待ちください。",
            ["お電話ありがとうございます。", "少々お待ちください。"],
        ),
        # Mixed scripts: Latin words and decimals inside do not cut.
        (
            "请打开WiFi设置。iPhone 15的价格是¥25.50。",
            ["请打开WiFi设置。", "iPhone 15的价格是¥25.50。"],
        ),
        ("第一：报名。", ["第一：", "报名。"]),
    ],
)
def test_cjk_segments(text: str, expected: list[str]) -> None:
    assert segments(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("好的。今天营业；明天休息。", ["好的。", "今天营业；", "明天休息。"]),
        ("请稍等…我帮您查一下。", ["请稍等…", "我帮您查一下。"]),
    ],
)
def test_cjk_segments_at_semicolon_and_ellipsis(text: str, expected: list[str]) -> None:
    assert segments(text) == expected


class _Recorded:
    """A G2P that remembers how much text it was given at a time."""

    def __init__(self, g2p: G2P) -> None:
        self._g2p = g2p
        self.words = g2p.words
        self.sizes: list[int] = []

    def __call__(self, text: str) -> list[Word]:
        self.sizes.append(len(text))
        return self._g2p(text)

    def no_reading(self, text: str) -> str | None:
        return self._g2p.no_reading(text)


def test_a_long_text_goes_through_g2p_a_clause_at_a_time(japanese: JapaneseG2P) -> None:
    """Bug: 5,000 characters of kanji and amounts in yen, with no punctuation, went to the
    Japanese romanizer at once, whose time grows with the square of its input: minutes of a
    worker. G2P sees at most G2P_CHARS characters at a time; a short text goes whole."""
    recorded = _Recorded(japanese)
    text = "価格は1234567円です" * 60
    words = in_words(recorded, text)
    assert max(recorded.sizes) <= G2P_CHARS
    assert sum(recorded.sizes) == len(text)
    assert len(recorded.sizes) > 1
    assert "".join(w.phonemes for w in words).count("eɴ") >= 60  # every 円 is read
    recorded.sizes.clear()
    short = "今日はいい天気ですね。"
    assert in_words(recorded, short) == japanese(short)
    assert recorded.sizes == [len(short)]


def test_g2p_calls_end_at_a_clause_and_never_inside_a_number(mandarin: MandarinG2P) -> None:
    """A long Mandarin text cut for G2P reads the same as it read whole, where it has
    punctuation; without any, a number or Latin word is never split across two G2P calls."""
    sentence = "今天天气很好，我们去公园散步吧。"
    text = sentence * 20
    assert [w.text for w in in_words(mandarin, text)] == [w.text for w in mandarin(text)]
    recorded = _Recorded(mandarin)
    amounts = "金额12345678元和" * 40  # no mark, no space: only the numbers to avoid
    in_words(recorded, amounts)
    assert max(recorded.sizes) <= G2P_CHARS
    assert len(recorded.sizes) > 1
    for end in list(itertools.accumulate(recorded.sizes))[:-1]:
        assert not (amounts[end - 1].isdigit() and amounts[end].isdigit()), end


def _bare(text: str) -> str:
    """`text` without punctuation and spaces."""
    return "".join(c for c in text if not (c.isspace() or unicodedata.category(c)[0] == "P"))


def names(words: list[Word]) -> list[str]:
    """What word timestamps call the words ("" for the rest of the word before)."""
    return [name for w in words if (name := w.name) is not None]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("价格是25元，请在12/25之前付款。",
         ["价格", "是", "25元", "请", "在", "12/25", "", "之前", "付款"]),
        ("我用iPhone 15 Pro。", ["我用", "iPhone", "15", "Pro"]),
        ("3月15日（周五）下午3:30开会", ["3月", "15日", "周五", "下午", "3:30", "", "开会"]),
        ("成功率达99.9%", ["成功率", "达", "99.9%", ""]),
        ("温度在20～25℃之间", ["温度", "在", "20～25℃", "", "", "", "之间"]),
        ("电话：400-800-8888", ["电话", "400-800-8888", "", "", "", "", ""]),
        ("今天天气很好，我们一起去公园散步吧。",
         ["今天天气", "很", "好", "我们", "一起", "去", "公园", "散步", "吧"]),
    ],
)  # fmt: skip
def test_mandarin_words_are_named_as_written(
    mandarin: MandarinG2P, text: str, named: list[str]
) -> None:
    """Bug: word timestamps named the words as the text rules wrote them (二十五元, 十二月
    二十五日), so a transcript, subtitles or a Pipecat context held text the caller never
    wrote. Each word is named by the part of the text it reads; a word that says the rest of
    a rewritten one (二十五日 of "12/25") is "", its time going to the word before."""
    assert names(mandarin(text)) == named


@pytest.mark.parametrize("text", ["+", "©", "→", "±"])
def test_a_sign_read_as_nothing_has_no_words(
    mandarin: MandarinG2P, japanese: JapaneseG2P, text: str
) -> None:
    """Bug: a segment the G2P reads as nothing ("你好。+") failed the call with UNKNOWN: the
    names of no words were looked for in the text."""
    assert as_written(text, []) == []
    assert texts(mandarin(text)) == []
    assert [w.name for w in japanese(text) if w.name] in ([], [text])  # "+": purasu


@pytest.mark.parametrize(
    "text",
    [
        "お電話ありがとうございます。ご用件をお伺いします。",
        "東京に行きます。明日は晴れです。",
        "価格は2,980円です。12/25の18時に届きます。",
        "SaaSのQ&Aはこちら、ちょっと待ってください！",
        "電話番号は090-1234-5678です。",
        "パスワードはabc12345です。",
        "お問い合わせはこちらまで、よろしくお願いいたします。",
    ],
)
def test_japanese_words_are_phrases_named_as_written(japanese: JapaneseG2P, text: str) -> None:
    """Japanese words were unnamed (no word timestamps): each phrase of the romanizer (a word
    with its particles and endings) is now named by the part of the text it reads, so that the
    names, in order, give back the whole text but its punctuation, the phonemes unchanged."""
    words = japanese(text)
    named = names(words)
    assert _bare("".join(named)) == _bare(text)
    assert sum(1 for name in named if name) > 1
    spoken = [w for w in words if w.phonemes.strip(" ,.!?;:…—“”")]
    assert all(w.name is not None for w in spoken)
    assert japanese.words


def test_japanese_phrases_are_the_texts_own() -> None:
    """A phrase is named by the text it reads: 東京に, 行きます (not the romanizer's own words,
    nor their readings)."""
    words = JapaneseG2P()("東京に行きます。明日は晴れです。")
    assert names(words) == ["東京に", "行きます", "明日は", "晴れです"]


@pytest.mark.parametrize(
    ("text", "read_as"),
    [
        ("すごーぃね。", "すごーいね。"),  # after a long vowel mark: a KeyError, the call lost
        ("すごーィね。", "すごーいね。"),
        ("コンャ", "コンヤ"),  # after ン: the same
        ("Aァ", "Aア"),  # a Latin letter, read in katakana, ends in ー
        ("ぁ", "あ"),  # alone
    ],
)
def test_a_small_kana_that_joins_no_kana_is_read_as_its_vowel(
    japanese: JapaneseG2P, text: str, read_as: str
) -> None:
    """The same sounds (OpenJTalk may cut the phrases elsewhere)."""
    assert said(japanese, text).replace(" ", "") == said(japanese, read_as).replace(" ", "")


def test_small_kana_still_join_the_kana_before_them(japanese: JapaneseG2P) -> None:
    assert said(japanese, "きょう") == "kʲoː"
    assert said(japanese, "ファイル") == "ɸaiɾɯ"
    assert said(japanese, "ヴァイオリン") == "vaioɾʲiɴ"
