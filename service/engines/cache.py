"""The phrase cache: a voice wrapper that answers phrases said again from what it kept."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..jobs import Batch
from .engine import Segment, Voice, VoiceInfo, VoiceRequest, WordTiming

_SPACES = re.compile(r"\s+")
Key = tuple[Hashable, ...]


@dataclass(frozen=True)
class CachedPhrase:
    """A segment's windows as synthesized (native rate, before gain) and, when they were asked
    for, its words."""

    windows: tuple[np.ndarray, ...]
    words: tuple[WordTiming, ...] | None

    @property
    def nbytes(self) -> int:
        return sum(w.nbytes for w in self.windows)


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    bytes: int = 0
    entries: int = 0


class PhraseCache:
    """Synthesized segments by voice, normalised text and settings, bounded in bytes, least
    recently used evicted first. Thread-safe."""

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
        self._entries: OrderedDict[Key, CachedPhrase] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(voice: str, text: str, params: Hashable, scope: str | None = None) -> Key:
        """Whitespace is normalised; case and punctuation are kept (they change the speech).
        `scope`: whose entry it is (a tenant's); None: everyone's."""
        return (scope, voice, _SPACES.sub(" ", text.strip()), params)

    def get(self, key: Key, *, need_words: bool) -> CachedPhrase | None:
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

    def has(self, key: Key, *, need_words: bool) -> bool:
        """Whether get() would answer now; counts no hit or miss and keeps the order."""
        with self._lock:
            phrase = self._entries.get(key)
        return phrase is not None and not (need_words and phrase.words is None)

    def put(self, key: Key, phrase: CachedPhrase) -> None:
        size = phrase.nbytes
        if size > self.max_bytes // 4:  # one long text must not flush every greeting out
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.stats.bytes -= old.nbytes
            self._entries[key] = phrase
            self.stats.bytes += size
            while self.stats.bytes > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self.stats.bytes -= evicted.nbytes
            self.stats.entries = len(self._entries)


class CachedVoice:
    """A voice (engine.Voice) whose segments come from the cache when it has them, else from
    the voice, kept as they are made."""

    def __init__(self, voice: Voice, cache: PhraseCache, scope: str | None = None) -> None:
        """`scope`: the tenant whose entries these are, so that no tenant hears (or times) a
        hit on what another said; None: one cache for every caller."""
        self.voice = voice
        self._cache = cache
        self._scope = scope

    @property
    def info(self) -> VoiceInfo:
        return self.voice.info

    @property
    def gain(self) -> float:
        return self.voice.gain

    @property
    def cost(self) -> float:
        return self.voice.cost

    @property
    def long_jobs(self) -> bool:
        return self.voice.long_jobs

    @property
    def first_clause_chars(self) -> int:
        return self.voice.first_clause_chars

    def params(self, request: VoiceRequest) -> Hashable:
        return self.voice.params(request)

    def no_reading(self, text: str) -> str | None:
        return self.voice.no_reading(text)

    def cached(self, text: str, params: Hashable, *, word_timestamps: bool) -> bool:
        """Whether segment() would replay `text` now, with no model run."""
        key = self._cache.key(self.info.name, text, params, self._scope)
        return self._cache.has(key, need_words=word_timestamps)

    def segment(
        self, text: str, params: Hashable, *, word_timestamps: bool, long_first: bool = False
    ) -> Segment:
        key = self._cache.key(self.info.name, text, params, self._scope)
        phrase = self._cache.get(key, need_words=word_timestamps)
        if phrase is not None:
            return Replay(phrase, word_timestamps)
        inner = self.voice.segment(
            text, params, word_timestamps=word_timestamps, long_first=long_first
        )
        return Recording(inner, lambda done: self._cache.put(key, done), word_timestamps)


@dataclass
class Replay:
    """A cached segment (engine.Segment): the same windows and words, with no model run."""

    phrase: CachedPhrase
    word_timestamps: bool
    _next: int = 0

    @property
    def instant(self) -> bool:
        return True

    @property
    def words(self) -> Sequence[WordTiming]:
        return (self.phrase.words or ()) if self.word_timestamps else ()

    @property
    def total_samples(self) -> int | None:
        return sum(w.size for w in self.phrase.windows)

    def next_cost(self, ahead: float) -> float:
        return 0.0

    def next_window(self, ahead: float, *, wide: bool = False) -> np.ndarray | None:
        if self._next >= len(self.phrase.windows):
            return None
        self._next += 1
        return self.phrase.windows[self._next - 1]

    def batch(self, ahead: float) -> Batch[np.ndarray] | None:
        return None


@dataclass
class Recording:
    """A segment being synthesized (engine.Segment) whose windows are kept: once it is done,
    whole, the phrase goes to the cache."""

    inner: Segment
    keep: Callable[[CachedPhrase], None]
    word_timestamps: bool
    _windows: list[np.ndarray] = field(default_factory=list)

    @property
    def instant(self) -> bool:
        return self.inner.instant

    @property
    def words(self) -> Sequence[WordTiming]:
        return self.inner.words

    @property
    def total_samples(self) -> int | None:
        return self.inner.total_samples

    def _record(self, window: np.ndarray | None) -> np.ndarray | None:
        if window is None:
            kept = tuple(self.inner.words) if self.word_timestamps else None
            self.keep(CachedPhrase(tuple(w for w in self._windows if w.size), kept))
        elif window.size:  # a step with no samples yet (engine.Segment.next_window)
            self._windows.append(window)
        return window

    def next_cost(self, ahead: float) -> float:
        return self.inner.next_cost(ahead)

    def next_window(self, ahead: float, *, wide: bool = False) -> np.ndarray | None:
        return self._record(self.inner.next_window(ahead, wide=wide))

    def batch(self, ahead: float) -> Batch[np.ndarray] | None:
        inner = self.inner.batch(ahead)
        if inner is None:
            return None
        alone = inner.alone

        def run(items: list[Any], wide: bool) -> list[np.ndarray]:
            # Each item carries the recording it belongs to: the batch mixes streams.
            results = inner.run([item for item, _ in items], wide)
            for (_, recording), result in zip(items, results, strict=True):
                recording._record(result)
            return results

        def run_alone(wide: bool) -> np.ndarray:
            result = alone(wide) if alone else inner.run([inner.item], wide)[0]
            self._record(result)
            return result

        return Batch(inner.key, (inner.item, self), run, alone=run_alone)
