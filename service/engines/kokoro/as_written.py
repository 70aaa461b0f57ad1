"""Which part of a text, as written, each word the G2P read stands for.

The text rules write numbers, dates, symbols and Latin words as they are said before a G2P
reads them ("25元" as 二十五元, "12/25" as 十二月二十五日, "3時" as サンジ); word timestamps name
the words as the caller wrote them, so that a transcript or a conversation's record holds the
caller's text ("25元"), not the rules' ("二十五元")."""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher


def as_written(text: str, said: Sequence[str], *, spaced: bool = False) -> list[str]:
    """For each of `said` (pieces of the text as rewritten, in order: a word, a mark, a space),
    the part of `text` it stands for, without the punctuation and spaces at its ends. `spaced`:
    `text` is in a language that writes spaces between words, and a word of it said as several
    pieces ("25,50": 25 euros con 50) goes whole to the first, the others getting "".

    The two are aligned character by character: what the rules left as it was maps one to
    one, and a stretch they rewrote goes whole to the piece that begins it ("12/25" to 十二月,
    "" to the 二十五日 after it, which says the same date). Text the rules dropped goes with
    the piece after it (the "R$" of "R$ 1.234,56", said after the amount)."""
    starts = []
    position = 0
    for piece in said:
        starts.append(position)
        position += len(piece)
    rewritten = "".join(said)
    # Where each position of the rewritten text falls in `text`: the same place inside what
    # is unchanged; inside a stretch that was rewritten, that stretch's end, so that only the
    # piece that begins it takes it.
    where = [0] * (len(rewritten) + 1)
    dropped: int | None = None
    matcher = SequenceMatcher(None, text, rewritten, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if j1 == j2:
            dropped = i1  # the piece that begins the next block takes it
            continue
        where[j1] = i1 if dropped is None else dropped
        dropped = None
        for j in range(j1 + 1, j2):
            where[j] = i1 + (j - j1) if tag == "equal" else i2
    where[len(rewritten)] = len(text)
    ends = [*starts[1:], len(rewritten)][: len(starts)]  # none when nothing was said
    spans = [
        (where[a], where[b]) if b > a else (where[a], where[a])
        for a, b in zip(starts, ends, strict=True)
    ]
    for k in range(1, len(spans)):
        start, end = spans[k]
        if not said[k].strip() and any(_said(c) for c in text[start:end]):
            # A space the rules put inside a rewritten stretch ("12/03": 12 de marzo) takes
            # none of it: the word before does.
            spans[k - 1], spans[k] = (spans[k - 1][0], end), (end, end)
    spans = [_bare(text, start, end) for start, end in spans]
    if spaced:
        named = None  # the last piece with a name
        for k, (start, end) in enumerate(spans):
            if start == end:
                continue
            if named is not None and not any(c.isspace() for c in text[spans[named][1] : start]):
                spans[named], spans[k] = (spans[named][0], end), (end, end)
            else:
                named = k
    return [text[start:end] for start, end in spans]


# Marks a word does not say, left to the text between words: a clause's or sentence's end,
# brackets and quotes. Signs that are said (% & # / -) stay with their word.
_UNSAID = frozenset(",.!?;:…¿¡、，。．！？；：\"'“”‘’«»()（）[]【】「」『』《》〈〉〔〕")


def _said(character: str) -> bool:
    return not (character.isspace() or character in _UNSAID)


def _bare(text: str, start: int, end: int) -> tuple[int, int]:
    """text[start:end] without the marks it does not say and the spaces at its ends."""
    while start < end and not _said(text[start]):
        start += 1
    while end > start and not _said(text[end - 1]):
        end -= 1
    return start, end
