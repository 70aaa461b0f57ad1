"""The Markdown and emoji a language model writes around its words, and the tags of SSML or HTML,
taken out before a voice reads them: espeak-ng reads "**Sure!**" as "asterisk asterisk sure
exclamation asterisk asterisk", "<speak>Hello</speak>" as "speak hello slash speak", and "👍" as
"thumbs up"."""

from __future__ import annotations

import html
import re
import unicodedata

# Emphasis and bullets: a run of asterisks not between two spaces or digits ("2 * 3", "5*3",
# "press *69" keep theirs). Backticks around code. A heading's hashes at a line's start.
# A phone's star key is no emphasis ("*を押してください", "请按*号键").
_KEY_AFTER = r"(?!\s?(?:を押|キー|ボタン|号?键))"
_ASTERISKS = re.compile(rf"(?<![\d\s])\*+{_KEY_AFTER}|\*+(?![\d\s]){_KEY_AFTER}")
_BACKTICKS = re.compile(r"`+")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+", re.MULTILINE)
# A table's rows: the bars between cells are pauses, the bars at a row's ends and the rule
# under its header ("|---|:---:|") are nothing.
_TABLE_RULE = re.compile(
    r"^[ \t]*\|?(?:[ \t]*:?-+:?[ \t]*\|)+[ \t]*(?::?-+:?[ \t]*)?$", re.MULTILINE
)
_ROW_END = re.compile(r"^([ \t]*)\|[ \t]*|[ \t]*\|[ \t]*$", re.MULTILINE)
_CELL_BAR = re.compile(r"[ \t]*\|[ \t]*")
_ROW_START = re.compile(r"^[ \t]*\|", re.MULTILINE)  # "a | b" and "x || y" are no table
# A link is read as its text: [the docs](https://example.com) → the docs.
_LINK = re.compile(r"\[([^\]\n]+)\]\([^)\s]+\)")
# An XML or HTML tag with its attributes: SSML's <speak> and <break time="1s"/>, or <b>. "a < b"
# and "x > 3" are no tags: a tag's name follows its "<" at once.
_TAG = re.compile(
    r"</?[A-Za-z][\w:.-]*(?:\s+[\w:.-]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'>]+))?)*\s*/?>"
)
# Emoji a language model adds to its words ("Sure! 😊"): espeak names each ("smiling face with
# smiling eyes"), and the Kokoro G2Ps drop them. The pictograph blocks (faces, hands, flags, skin
# tones), the miscellaneous symbols and dingbats (☀ ✅ ❤ ✔), the stars and squares beside them,
# and the joiners and selectors that build a sequence (a keycap "1️⃣" keeps its digit).
_EMOJI = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b50\u2b55\u2b1b\u2b1c\u2b06\u2b07\u2b05\u27a1"
    "\ufe0f\u200d\u20e3\U000e0020-\U000e007f]+"
)
# A chat's emoticons, which every voice said sign by sign ("colon D", "less than three", 小于三,
# ショーナリサン): nothing, as an emoji. A face stands apart from the words (after a space, or
# after Chinese or Japanese, written without spaces: "哈哈xD"), or, one closed by a bracket or
# of carets, right after a word ("thanks:)", "yay^^"); a heart ends the text ("love it <3"),
# or, after Chinese or Japanese, a phrase ("爱你<3 哈哈"): "<3 days", "if x <3." and "<3度" are
# comparisons.
_CJK = r"\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef"
_APART = rf"(?<![^\s{_CJK}])"
_EMOTICON = re.compile(
    rf"{_APART}(?:[:;=]-?[DPp]|[xX]D+|<3+(?=(?:[\s!\uff01]|<3)*$))(?!\w)"
    rf"|(?<=[{_CJK}])<3+(?=[\s!\uff01]|$)"
    r"|(?:(?<!\S)|(?<=[^\W\d_]))(?:[:;=]'?-?[()]+|\^_?\^)(?!\w)"
)
# A tilde or wave dash after a word and before no word or figure: a chat's playful tone
# ("thanks~", "好的~", "ありがとう〜"), which English said as "tilde". Between words or
# figures it is a range ("5~6", "東京〜大阪"), said as one.
_TILDES = "~\uff5e\u301c"  # the tilde, its full-width form and the wave dash
_TONE_TILDE = re.compile(rf"(?<=[^\W\d_])[{_TILDES}]+(?![\w{_TILDES}])")
# Stars that are a rating stay for the voice to say: one after a figure ("4.8★", "5 ⭐"), or a
# row of two to five ("★★★★☆", "⭐⭐⭐⭐⭐", emoji selectors aside); a longer row or a star alone
# is decoration.
_RATING_ROW = re.compile("[★⭐][★⭐☆]{1,4}")
_AFTER_FIGURE = re.compile(r"\d\s?$")
# A web address's scheme, which every voice spells ("H T T P S colon slash slash"): the address
# is read from its host.
_SCHEME = re.compile(r"(?<![A-Za-z])https?://(?=\w)")
# A character reference: &amp; &lt; &#39; &nbsp;
_REFERENCE = re.compile(r"&(?:[A-Za-z]+|#\d+|#x[0-9A-Fa-f]+);")
# Letters and digits written in another form of the plain ones: full-width Latin (common in
# Chinese and Japanese text), the styled letters of the mathematical block (bold, italic) and
# circled or bracketed numbers and letters (① ⑴ Ⓐ) and the degree signs with their letter
# (℃ ℉), which espeak-ng reads as their code points or not at all; and the decimal digits of
# any script (Arabic-Indic, Devanagari, styled), on which the Chinese and Japanese number
# readers fail.
_FORMS = re.compile(
    "[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\u2460-\u24ff\u3251-\u325f\u32b1-\u32bf\u2103\u2109"
    "\U0001d400-\U0001d7ff]|(?![0-9])\\d"
)


# Characters that carry nothing to say and that a timestamp's text should not echo: control
# characters (NUL, BEL, a terminal's ESC, as a space: they may stand between words), direction
# marks and overrides, the byte-order mark and the soft hyphen (as nothing).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_INVISIBLE = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\u00ad]")


def _emoji(match: re.Match[str]) -> str:
    """Nothing for an emoji, or the stars of a rating (_RATING_ROW)."""
    stars = match.group(0).replace("\ufe0f", "").replace("\u200d", "")
    if _RATING_ROW.fullmatch(stars) or (
        stars in ("★", "⭐") and _AFTER_FIGURE.search(match.string, 0, match.start())
    ):
        return stars
    return ""


def _plain(match: re.Match[str]) -> str:
    ch = match.group(0)
    digit = unicodedata.decimal(ch, None)
    # A number with its full stop (⒈) is a list's number, not a decimal point's.
    return str(digit) if digit is not None else unicodedata.normalize("NFKC", ch).rstrip(".")


def spoken(text: str) -> str:
    """`text` (one segment) without Markdown's emphasis, strikethrough and code marks, heading
    hashes, link targets and table bars (a pause between cells), without tags (an opening one
    leaves a space, as <br> does between words), emoji (not the stars of a rating) and a web
    address's https://, with character references as their characters, and with letters and
    digits of other forms (full-width, styled, circled, another script's digits) as the plain
    ones, without control characters and invisible marks, emoticons (":)", "<3") and a tilde of
    tone ("thanks~"); anything else as it is."""
    text = _CONTROL.sub(" ", text)
    if "<" in text:
        text = _TAG.sub(lambda m: "" if m.group(0).startswith("</") else " ", text)
    if "&" in text:
        text = _REFERENCE.sub(lambda m: html.unescape(m.group(0)), text)
    if not text.isascii():
        text = _FORMS.sub(_plain, _INVISIBLE.sub("", _EMOJI.sub(_emoji, text)))
    if "://" in text:
        text = _SCHEME.sub("", text)
    text = _TONE_TILDE.sub("", _EMOTICON.sub("", text))
    if not any(c in text for c in "*`#]~|"):
        return text
    if "|" in text and _ROW_START.search(text):
        text = _ROW_END.sub(lambda m: m.group(1) or "", _TABLE_RULE.sub("", text))
        text = _CELL_BAR.sub(", ", text)
    # Strikethrough ("~~$20~~ $15"): its text is read, its tildes are not ("tilde tilde").
    text = _LINK.sub(r"\1", text).replace("~~", "")
    text = _HEADING.sub("", text)
    text = _BACKTICKS.sub("", text)
    return _ASTERISKS.sub("", text)
