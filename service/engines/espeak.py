"""espeak-ng, shared by the Piper voices and the Mandarin reader's unknown Latin words. It keeps
global state in the process and is not thread-safe: every call, from either, holds LOCK."""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

LOCK = threading.Lock()

# espeak-ng 1.52, both copies here (piper-tts's and espeakng-loader's), copies parts of a word
# into fixed stack buffers unchecked, and a request's text could overrun them and kill the
# server: a run of dotted single letters ("b.b.b", gathered as one abbreviation into 80 bytes)
# and a word stacking suffixes ("s's's'", into 200 bytes of phonemes). Upstream bounds both
# after 1.52 (espeak-ng PRs 2428 and 2495). bounded() keeps text well inside them (the lengths
# that overran each copy: docs/reliability.md; tests/test_process.py).
DOTTED_RUN = 8
"""Most dotted single letters read as one abbreviation (U.S.A., e.g.); the rest are spaced."""
LONGEST_WORD = 64
"""Characters of a word handed over whole: longer runs, past any word of these languages, are
cut. Scripts written without spaces between words (Han, kana, Thai, Lao, Tibetan, Myanmar,
Khmer), which espeak-ng reads in shorter pieces itself, are never cut."""
# Letters (each with its marks) or marks alone, each after the last with a dot between them
# among whatever espeak-ng takes for spaces (punctuation, more dots, underscores). The run
# starts at a letter, and parts side by side never take the same character: a near miss
# costs no backtracking.
_MARK = r"\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_LETTER = rf"(?:[^\W\d_][{_MARK}]*|[{_MARK}])"
_BEFORE_DOT = rf"(?:[^\w.{_MARK}]|_)*"
_AFTER_DOT = rf"(?:[^\w{_MARK}]|_)*"
_DOTTED = re.compile(rf"{_LETTER}(?:{_BEFORE_DOT}\.{_AFTER_DOT}{_LETTER}){{{DOTTED_RUN},}}")
_UNSPACED = r"\u0e00-\u109f\u1780-\u17ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_LONG_WORD = re.compile(rf"[^\s{_UNSPACED}]{{{LONGEST_WORD + 1},}}")


def bounded(text: str) -> str:
    """`text` with nothing in it that overruns espeak-ng's buffers: a long run of dotted
    letters has its dots as spaces (the letters said one by one), a long word is cut."""
    text = _DOTTED.sub(lambda run: run[0].replace(".", " "), text)
    return _LONG_WORD.sub(
        lambda word: " ".join(
            word[0][at : at + LONGEST_WORD] for at in range(0, len(word[0]), LONGEST_WORD)
        ),
        text,
    )


# espeak's US English phonemes as misaki writes them, the set Kokoro v1.0 was trained on
# (diphthongs as one letter, r as ɹ, no length marks), longer sequences first.
_TO_MISAKI = (
    ("ɜːɹ", "ɜɹ"), ("ɜː", "ɜɹ"), ("aɪ", "I"), ("aʊ", "W"), ("eɪ", "A"), ("oʊ", "O"),
    ("ɔɪ", "Y"), ("dʒ", "ʤ"), ("tʃ", "ʧ"), ("ɪə", "iə"), ("n\u0329", "ᵊn"), ("l\u0329", "ᵊl"),
    ("ɚ", "əɹ"), ("ɐ", "ə"), ("r", "ɹ"), ("x", "k"), ("ç", "k"), ("ɬ", "l"), ("ʲ", ""),
    ("ː", ""), ("e", "A"), ("o", "ɔ"),
)  # fmt: skip


@functools.cache
def _phonemizer() -> Any:
    from piper.phonemize_espeak import EspeakPhonemizer

    return EspeakPhonemizer()


@functools.lru_cache(maxsize=4096)  # a reply's names repeat
def misaki_phonemes(word: str) -> str:
    """espeak's US English reading of a word no lexicon has ("Samsung", "Kevin"), in misaki's
    phonemes."""
    with LOCK:
        sentences = _phonemizer().phonemize("en-us", bounded(word))
    said = "".join("".join(s) for s in sentences).strip()
    for espeak, misaki in _TO_MISAKI:
        said = said.replace(espeak, misaki)
    return said
