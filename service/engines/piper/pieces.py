"""Long sentences cut into pieces that keep each acoustic run bounded in time and memory."""

from __future__ import annotations

from collections.abc import Callable, Sequence

MAX_IDS = 400
"""Most model ids one acoustic run takes, so that a run lasts about as long as a large vocoder
window. Its cost grows with the square of the ids, so longer sentences are cut; bench/costly.py
chose 400 (docs/reliability.md#attacks-through-the-synthesis-calls)."""
_CLAUSE_PHONEMES = frozenset(",;:")


def cut_phonemes(
    phonemes: list[str], ids: Callable[[Sequence[str]], int], budget: int = MAX_IDS
) -> list[list[str]]:
    """`phonemes` (one espeak sentence) in pieces of at most `budget` ids by `ids`, cut at the
    last clause mark that keeps a piece at least half full, else at the last word gap, else
    where the budget ends: the listener hears a pause where the text has one if it can."""
    pieces: list[list[str]] = []
    rest = phonemes
    while ids(rest) > budget:
        fits = 1  # the longest prefix within the budget (ids grow with the prefix)
        low, high = 1, len(rest)
        while low <= high:
            mid = (low + high) // 2
            if ids(rest[:mid]) <= budget:
                fits, low = mid, mid + 1
            else:
                high = mid - 1
        spaces = [i for i in range(fits // 2, fits) if rest[i] == " "]
        clauses = [i for i in spaces if i and rest[i - 1] in _CLAUSE_PHONEMES]
        at = clauses[-1] if clauses else spaces[-1] if spaces else fits
        pieces.append(rest[:at])
        rest = rest[at:]
        while rest and rest[0] == " ":
            rest = rest[1:]
    if rest:
        pieces.append(rest)
    return pieces
