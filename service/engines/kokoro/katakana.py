"""Latin words in Japanese text that OpenJTalk does not know, written in katakana as Japanese
says them: OpenJTalk spells such a word letter by letter ("Teams" as ティーイーエーエムエス,
"meeting" as エムイーイーティーアイエヌジー). e2k's character model (PyPI `e2k`, public domain,
trained on Wiktionary and JMdict) gives チームズ and ミーティング. A word in capitals is an
acronym (GPT), spelled by its letters' names, as is a letter alone (プランB). A unit after a
number (5kg) is left to OpenJTalk, which reads it. (e2k's own check of what is a word costs
start-up time: docs/kokoro.md.)"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

# A Latin word, not a unit after a number (5kg, 10 km), and the parts of a camel-case one
# ("ChatGPT" → Chat, GPT; "GitHub" → Git, Hub).
# A hyphen joins the parts of one word (Wi-Fi, e-mail, check-in), which OpenJTalk would
# otherwise cut with a pause.
_WORD = re.compile(r"(?<![0-9A-Za-z])(?<![0-9] )[A-Za-z]+(?:'[a-z]+)?(?:-[A-Za-z]+)*")
_PART = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z']+|[A-Z]")
# OpenJTalk's parts of speech for what it spells: an unknown word is a filler read letter by
# letter, a lone letter an alphabet symbol.
_SPELLED = ("フィラー", "アルファベット")
# The Latin letters' names as Japanese says them.
_LETTERS = dict(
    zip(
        "abcdefghijklmnopqrstuvwxyz",
        (
            "エー", "ビー", "シー", "ディー", "イー", "エフ", "ジー", "エイチ", "アイ", "ジェー",
            "ケー", "エル", "エム", "エヌ", "オー", "ピー", "キュー", "アール", "エス", "ティー",
            "ユー", "ブイ", "ダブリュー", "エックス", "ワイ", "ゼット",
        ),
        strict=True,
    )
)  # fmt: skip


def letter_names(letters: str) -> str:
    """Latin letters by their names (ABC: エービーシー)."""
    return "".join(_LETTERS[c] for c in letters.lower())


# Words the model or the camel-case split gets wrong, as Japanese says them: the split makes
# SaaS サーエス (Saa + S), the model LinkedIn リンケッドイン, McDonald's ムクドナルズ, app アップ
# (up), retry リトリー. (Brands are symbols.py's: read before this, in either language.)
_SAID = {
    "saas": "サース", "paas": "パース", "iaas": "イアース", "linkedin": "リンクトイン",
    "mcdonald's": "マクドナルド", "mcdonalds": "マクドナルド", "wifi": "ワイファイ",
    "app": "アプリ", "apps": "アプリ", "webhook": "ウェブフック", "retry": "リトライ",
    "receipt": "レシート", "issue": "イシュー",
}  # fmt: skip
# Distinct words remembered: a reply's words repeat, and one model run costs a few ms.
_CACHED_WORDS = 4096


class Katakana:
    """Writes the Latin words OpenJTalk would spell out in katakana. Not thread-safe: call it
    under the lock that guards OpenJTalk (`frontend` runs OpenJTalk's analysis)."""

    def __init__(self, frontend: Callable[[str], Sequence[Mapping[str, Any]]]) -> None:
        from e2k import C2K

        self._frontend = frontend
        self._model = C2K()
        self._said = functools.lru_cache(maxsize=_CACHED_WORDS)(self._word)

    def __call__(self, text: str) -> str:
        if not any("A" <= c <= "z" for c in text):
            return text
        return _WORD.sub(lambda m: self._said(m.group(0)), text)

    def _reading(self, word: str) -> str | None:
        """OpenJTalk's katakana for `word` when it knows it as one word, else None."""
        nodes = self._frontend(word)
        if len(nodes) != 1 or nodes[0]["pos"] in _SPELLED or nodes[0]["pos_group1"] in _SPELLED:
            return None
        return str(nodes[0]["pron"]).replace("\u2019", "")  # without its accent mark

    def _word(self, word: str) -> str:
        if word.lower() in _SAID:
            return _SAID[word.lower()]
        reading = self._reading(word)
        if reading is not None:
            # Its katakana, not the word: in some places OpenJTalk takes a word it knows for the
            # filler it spells ("iPhoneとAndroid": アイピーエイチオーエヌイー).
            return reading
        if "-" in word:
            # In katakana, every part: a known part left as Latin letters would join the
            # next into one unknown word.
            return "".join(self._reading(p) or self._said(p) for p in word.split("-"))
        parts = [word] if word.islower() else _PART.findall(word)
        if len(parts) == 1:
            return self._unknown(word)
        # Each part by its own reading: joined again as Latin letters, the parts would be one
        # unknown word to OpenJTalk once more.
        return "".join(self._reading(p) or self._unknown(p) for p in parts)

    def _unknown(self, part: str) -> str:
        letters = part.lower().replace("'", "")
        if len(letters) > 1 and not part.isupper():
            said: str = self._model(letters)
            return said
        # A letter alone, or an acronym: by the letters' names. Within Japanese text OpenJTalk
        # leaves out a lone letter it would name alone ("プランB" as プラン).
        return letter_names(letters)
