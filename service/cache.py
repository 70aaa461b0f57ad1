"""A bounded LRU of synthesized phrases, for what an agent says again and again."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .voice import SynthesisParams
from .words import WordTiming

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class CachedPhrase:
    """A segment's samples (native rate, before gain) and, when they were asked for, its words."""

    samples: np.ndarray
    words: tuple[WordTiming, ...] | None


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    bytes: int = 0
    entries: int = 0


class PhraseCache:
    """Synthesized PCM by voice, normalised segment text and synthesis settings, bounded in
    bytes, least recently used evicted first. Thread-safe."""

    def __init__(
        self,
        max_bytes: int,
        *,
        on_hit: Callable[[], None] | None = None,
        on_miss: Callable[[], None] | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self._on_hit = on_hit or (lambda: None)
        self._on_miss = on_miss or (lambda: None)
        self.stats = CacheStats()
        self._entries: OrderedDict[tuple[object, ...], CachedPhrase] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(voice: str, text: str, params: SynthesisParams) -> tuple[object, ...]:
        """Whitespace is normalised; case and punctuation are kept (they change the speech)."""
        return (voice, _SPACES.sub(" ", text.strip()), params)

    def get(self, key: tuple[object, ...], *, need_words: bool) -> CachedPhrase | None:
        with self._lock:
            phrase = self._entries.get(key)
            if phrase is None or (need_words and phrase.words is None):
                self.stats.misses += 1
                self._on_miss()
                return None
            self._entries.move_to_end(key)
            self.stats.hits += 1
        self._on_hit()
        return phrase

    def put(self, key: tuple[object, ...], phrase: CachedPhrase) -> None:
        size = phrase.samples.nbytes
        if size > self.max_bytes // 4:  # one long text must not flush every greeting out
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.stats.bytes -= old.samples.nbytes
            self._entries[key] = phrase
            self.stats.bytes += size
            while self.stats.bytes > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self.stats.bytes -= evicted.samples.nbytes
            self.stats.entries = len(self._entries)
