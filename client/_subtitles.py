"""Word timings written as they arrive: JSON lines, SubRip (.srt) or WebVTT (.vtt)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TextIO

from ._events import StreamEvent, Timestamps, WordTimestamp

WORDS_PER_CUE = 7
"""A subtitle cue holds the words of one segment, at most this many (about one subtitle line)."""


def _clock(ms: float, separator: str) -> str:
    total = max(0, round(ms))
    hours, rest = divmod(total, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}{separator}{millis:03d}"


class TimestampsWriter:
    """Writes the Timestamps events of a call to a file, one segment at a time.

    The format comes from the extension: ".srt" (SubRip) and ".vtt" (WebVTT) get one cue per
    group of up to WORDS_PER_CUE consecutive words of a segment, from the first word's start to
    the last word's end; anything else gets JSON lines, one object per word:
    {"word": ..., "start_ms": ..., "end_ms": ..., "segment": ...}. Other events are ignored."""

    def __init__(self, file: str | os.PathLike[str] | TextIO, *, format: str | None = None):
        if format is None:
            suffix = Path(file).suffix.lower() if isinstance(file, str | os.PathLike) else ""
            format = suffix.removeprefix(".") if suffix in (".srt", ".vtt") else "jsonl"
        if format not in ("srt", "vtt", "jsonl"):
            raise ValueError(f"unknown timestamps format {format!r}: use srt, vtt or jsonl")
        self.format = format
        self._owned = isinstance(file, str | os.PathLike)
        self._file: TextIO = (
            open(file, "w", encoding="utf-8") if isinstance(file, str | os.PathLike) else file  # noqa: SIM115
        )
        self._cues = 0
        if format == "vtt":
            self._file.write("WEBVTT\n\n")

    def write(self, event: StreamEvent) -> None:
        if not isinstance(event, Timestamps):
            return
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
            words = event.words
            for i in range(0, len(words), WORDS_PER_CUE):
                self._cue(words[i : i + WORDS_PER_CUE])
        self._file.flush()

    def _cue(self, words: tuple[WordTimestamp, ...]) -> None:
        self._cues += 1
        separator = "," if self.format == "srt" else "."
        start, end = _clock(words[0].start_ms, separator), _clock(words[-1].end_ms, separator)
        number = f"{self._cues}\n" if self.format == "srt" else ""
        text = " ".join(w.word for w in words)
        self._file.write(f"{number}{start} --> {end}\n{text}\n\n")

    def close(self) -> None:
        if self._file.closed:
            return
        self._file.flush()
        if self._owned:
            self._file.close()

    def __enter__(self) -> TimestampsWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
