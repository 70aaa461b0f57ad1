"""Word timings of a Piper voice from its acoustic model's per-phoneme frame counts."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..engine import WordTiming

# Piper's id layout (piper.phoneme_ids.phonemes_to_ids): BOS, PAD, then each known phoneme's ids
# followed by PAD, then EOS. Unknown phonemes are dropped.
_BOS, _PAD = "^", "_"
_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True)
class SentenceFrames:
    """One espeak sentence of a segment after the acoustic model."""

    phonemes: Sequence[str]
    frames_per_id: np.ndarray
    """Output of the Ceil node: frames for each phoneme id, summing to the sentence's frames."""
    first_frame: int
    """Where the sentence starts within the segment, in frames."""


def is_spoken(phoneme: str) -> bool:
    """False for word gaps and punctuation, which espeak passes through as phonemes."""
    return not phoneme.isspace() and not unicodedata.category(phoneme[0]).startswith("P")


def text_words(text: str) -> list[str]:
    """Whitespace tokens that are not only punctuation, with their outer punctuation cut."""
    words = []
    for token in _TOKEN.findall(text):
        if all(unicodedata.category(c).startswith("P") for c in token):
            continue
        start, end = 0, len(token)
        while unicodedata.category(token[start]).startswith("P"):
            start += 1
        while unicodedata.category(token[end - 1]).startswith("P"):
            end -= 1
        words.append(token[start:end])
    return words


def phoneme_words(phonemes: Sequence[str]) -> list[list[int]]:
    """Indices of the spoken phonemes of each espeak word (words are separated by spaces)."""
    groups: list[list[int]] = [[]]
    for i, p in enumerate(phonemes):
        if p == " ":
            groups.append([])
        elif is_spoken(p):
            groups[-1].append(i)
    return [g for g in groups if g]


def phoneme_spans(
    phonemes: Sequence[str], id_map: Mapping[str, Sequence[int]], frames_per_id: np.ndarray
) -> list[tuple[int, int]]:
    """(start, end) frame of each phoneme, its trailing PAD included, within its sentence."""
    ends = np.concatenate([[0], np.cumsum(frames_per_id)]).astype(np.int64)
    pad = len(id_map.get(_PAD, ()))
    pos = len(id_map.get(_BOS, ())) + pad
    spans = []
    for p in phonemes:
        width = len(id_map[p]) + pad if p in id_map else 0
        end = min(pos + width, len(ends) - 1)
        spans.append((int(ends[min(pos, len(ends) - 1)]), int(ends[end])))
        pos += width
    return spans


def align_words(
    text: str,
    sentences: Sequence[SentenceFrames],
    id_map: Mapping[str, Sequence[int]],
    frame_ms: float,
    count_phoneme_words: Callable[[str], tuple[int, int]],
) -> list[WordTiming]:
    """Times of each word of `text`, spoken as `sentences`.

    espeak does not say which text word produced which phonemes, and it splits and joins words
    ("72" is two words, "of the" can be one). So each text word is phonemized alone
    (`count_phoneme_words` gives its espeak word count and spoken-phoneme count): when the word
    counts add up, espeak words are assigned to text words exactly; otherwise the spoken phonemes
    are shared out in proportion to each word's phoneme count.
    """
    words = text_words(text)
    if not words:
        return []
    # Every spoken phoneme of the segment as a (start, end) frame pair, grouped by espeak word.
    groups: list[list[tuple[int, int]]] = []
    for sentence in sentences:
        spans = phoneme_spans(sentence.phonemes, id_map, sentence.frames_per_id)
        for group in phoneme_words(sentence.phonemes):
            groups.append(
                [
                    (s + sentence.first_frame, e + sentence.first_frame)
                    for s, e in (spans[i] for i in group)
                ]
            )
    if not groups:
        return []
    counts = [count_phoneme_words(w) for w in words]
    per_word: list[list[tuple[int, int]]]
    if sum(n for n, _ in counts) == len(groups):
        per_word, i = [], 0
        for n, _ in counts:
            per_word.append([span for g in groups[i : i + n] for span in g])
            i += n
    else:
        flat = [span for g in groups for span in g]
        weights = np.cumsum([0] + [max(1, m) for _, m in counts])
        cuts = (weights * len(flat)) // weights[-1]
        per_word = [flat[cuts[k] : cuts[k + 1]] for k in range(len(words))]

    timings = []
    last_end = 0
    for word, spans in zip(words, per_word, strict=True):
        # A word that got no phonemes (more words than phonemes) sits at the previous end.
        start = spans[0][0] if spans else last_end
        end = spans[-1][1] if spans else last_end
        timings.append(WordTiming(word, start * frame_ms, end * frame_ms))
        last_end = end
    return timings
