"""Word timings written as they arrive: JSON lines, SubRip (.srt) or WebVTT (.vtt)."""

from __future__ import annotations

import json
import math
import os
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from ._events import AudioChunk, StreamEvent, Timestamps, WordTimestamp
from ._writer import FileWriter

WORDS_PER_CUE = 7
"""A subtitle cue holds the words of one segment, at most this many (about one subtitle line)."""
WIDE_CHARS_PER_CUE = 16
"""A segment of Chinese or Japanese text (written without spaces between words) longer than
this many characters, one subtitle line of those scripts, is cut into cues of about equal
length, each cut falling between two words."""


def _wide(char: str) -> bool:
    """A character of a script written without spaces between words (Han, kana, full-width)."""
    return unicodedata.east_asian_width(char) in ("W", "F")


def _joined(words: list[str]) -> str:
    """Words as the script writes them: spaces between Latin words, none beside Han or kana."""
    text = ""
    for word in words:
        if text and word and not (_wide(text[-1]) or _wide(word[0])):
            text += " "
        text += word
    return text


def _cues(words: tuple[WordTimestamp, ...]) -> list[tuple[WordTimestamp, ...]]:
    """One segment's words in cues, each cut between two words: WORDS_PER_CUE words, or for
    text without spaces WIDE_CHARS_PER_CUE characters, in cues of about equal length."""
    if not any(_wide(c) for w in words for c in w.word):
        return [words[i : i + WORDS_PER_CUE] for i in range(0, len(words), WORDS_PER_CUE)]
    total = sum(len(w.word) for w in words)
    count = math.ceil(total / WIDE_CHARS_PER_CUE)
    cues: list[tuple[WordTimestamp, ...]] = []
    start, written = 0, 0
    for i, word in enumerate(words):
        before = written
        written += len(word.word)
        # Cut before this word when that lands nearer the next cue's share than after it.
        target = total * (len(cues) + 1) / count
        if i > start and len(cues) < count - 1 and abs(before - target) < abs(written - target):
            cues.append(words[start:i])
            start = i
    cues.append(words[start:])
    return cues


def _clock(ms: float, separator: str) -> str:
    total = max(0, round(ms))
    hours, rest = divmod(total, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}{separator}{millis:03d}"


class TimestampsWriter(FileWriter[str]):
    """Writes the Timestamps events of a call to a file, one segment at a time.

    The format comes from the extension: ".srt" (SubRip) and ".vtt" (WebVTT) get one cue per
    group of up to WORDS_PER_CUE consecutive words of a segment (Chinese and Japanese: about
    WIDE_CHARS_PER_CUE characters, written without spaces, never cut inside a word), from the
    first word's start to the last word's end, its text as the segment writes it (with its
    punctuation); anything else gets JSON lines, one object per word:
    {"word": ..., "start_ms": ..., "end_ms": ..., "segment": ...}. Other events are ignored.

    With `with_audio`, pass the call's audio events too: the words are written once the audio
    they time has come (each segment's come before its audio), and at close, after a call cut
    short, only those the audio reached, their times within it."""

    def __init__(
        self,
        file: str | os.PathLike[str] | TextIO,
        *,
        format: str | None = None,
        with_audio: bool = False,
    ):
        if format is None:
            suffix = Path(file).suffix.lower() if isinstance(file, str | os.PathLike) else ""
            format = suffix.removeprefix(".") if suffix in (".srt", ".vtt") else "jsonl"
        if format not in ("srt", "vtt", "jsonl"):
            raise ValueError(f"unknown timestamps format {format!r}: use srt, vtt or jsonl")
        self.format = format
        super().__init__(file, mode="w", encoding="utf-8")
        self._cues = 0
        self._with_audio = with_audio
        self._heard_ms = 0.0
        self._waiting: list[Timestamps] = []
        self._said: tuple[int, int] = (-1, 0)
        """The segment last written and where in its text its words got to."""
        if format == "vtt":
            self._file.write("WEBVTT\n\n")

    def write(self, event: StreamEvent) -> None:
        if isinstance(event, AudioChunk) and self._with_audio:
            self._heard_ms += event.duration_ms
            self._release()
        elif isinstance(event, Timestamps) and event.words:
            self._waiting.append(event)
            self._release()

    def _release(self, *, ended: bool = False) -> None:
        """Write the words waiting whose audio has come (all of them without `with_audio`);
        `ended`: the call is over, and the rest are cut to the audio it sent."""
        while self._waiting:
            event = self._waiting[0]
            if self._with_audio and event.words[-1].end_ms > self._heard_ms:
                if not ended:
                    return
                heard = self._heard_ms
                words = tuple(
                    replace(w, end_ms=min(w.end_ms, heard))
                    for w in event.words
                    if w.start_ms < heard
                )
                event = replace(event, words=words)
            del self._waiting[0]
            if event.words:
                self._write(event)

    def _finish(self) -> None:
        self._release(ended=True)

    def _write(self, event: Timestamps) -> None:
        if self.format == "jsonl":
            for w in event.words:
                record = {
                    "word": w.word,
                    "start_ms": w.start_ms,
                    "end_ms": w.end_ms,
                    "segment": event.segment,
                }
                self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            segment, at = self._said
            cues = _cues(event.words)
            texts, at = _as_written(event.text, cues, at if segment == event.segment else 0)
            self._said = (event.segment, at)
            for cue, text in zip(cues, texts, strict=True):
                self._cue(cue, text)
        self._file.flush()

    def _cue(self, words: tuple[WordTimestamp, ...], text: str) -> None:
        self._cues += 1
        separator = "," if self.format == "srt" else "."
        start, end = _clock(words[0].start_ms, separator), _clock(words[-1].end_ms, separator)
        number = f"{self._cues}\n" if self.format == "srt" else ""
        self._file.write(f"{number}{start} --> {end}\n{text}\n\n")


def _as_written(text: str, cues: list[tuple[WordTimestamp, ...]], at: int) -> tuple[list[str], int]:
    """Each cue's text as the segment's `text` writes it, from `at`: from its first word to
    the next cue's, with the marks between and after its words (a Chinese clause with its
    comma); the words joined where a word is not found in the text. Returns them and where the
    last ends."""
    starts: list[int] = []
    position = at
    for words in cues:
        found = text.find(words[0].word, position) if words[0].word else -1
        starts.append(found)
        for word in words:
            where = text.find(word.word, max(position, found)) if word.word else -1
            if where < 0:
                return [_joined([w.word for w in c]) for c in cues], at
            position = where + len(word.word)
    while position < len(text) and not text[position].isalnum():
        position += 1  # the marks after the last word (a segment's words may come in parts)
    ends = [*starts[1:], position]
    texts = [" ".join(text[a:b].split()) for a, b in zip(starts, ends, strict=True)]
    return texts, position
