"""espeak-ng, shared by the Piper voices and the Mandarin reader's unknown Latin words. It keeps
global state in the process and is not thread-safe: every call, from either, holds LOCK."""

from __future__ import annotations

import functools
import threading
from typing import Any

LOCK = threading.Lock()

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
        sentences = _phonemizer().phonemize("en-us", word)
    said = "".join("".join(s) for s in sentences).strip()
    for espeak, misaki in _TO_MISAKI:
        said = said.replace(espeak, misaki)
    return said
